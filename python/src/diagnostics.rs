//! `dlspan.diagnostics`: what tests and debugging sessions ask of dlspan's Python layer — the view
//! arguments alive — and the test hook that holds a view while Python code runs.

use dlspan::kernel::LaunchConfig;
use dlspan::python::{CallerStream, Output, PyDynView, PyView, common_stream, extract_argument};
use dlspan::{Device, DeviceMdspanMut, LayoutRight};
use pyo3::prelude::*;

/// The number of view arguments alive (the borrows dlspan's registry holds).
///
/// Returns
/// -------
/// int
///     0 between calls: every call releases its arguments, whether it returns or raises.
#[pyfunction]
fn live_borrows(py: Python<'_>) -> usize {
    dlspan::python::live_borrows(py)
}

/// Test hook, not API: holds a view of ``x`` (one-axis float64) while ``callback()`` runs, then
/// returns the view's sum, as an extension that calls back into Python does.
#[pyfunction]
fn _sum_during(x: PyView<'_, f64, 1>, callback: &Bound<'_, PyAny>) -> PyResult<f64> {
    let view = x.view();
    callback.call0()?;
    Ok(view.sum())
}

/// Test hook, not API: a new array shaped and typed as the device array ``x``, on its device, in
/// its framework (``Output.like``): PyTorch's allocator for ``torch.Tensor``s, ``cupy.empty`` for
/// CuPy arrays, dlspan's device memory for JAX arrays and ``dlspan.Tensor``s.
#[pyfunction]
fn _empty_like<'py>(py: Python<'py>, x: PyDynView<'py, Device>) -> PyResult<Bound<'py, PyAny>> {
    let shape = x.view()?.shape().to_vec();
    Output::like(py, &x, x.dtype(), &shape)?.finish()
}

dlspan::kernel! {
    /// One block: its first thread waits about `cycles` clock cycles, then every thread writes
    /// `value` to its share of `out`.
    fn spin_fill(out: &mut [f32; 1], value: f32, cycles: i64) {
        r#"
        #ifndef DLSPAN_CPU
        if (threadIdx.x == 0) {
          const long long start = clock64();
          while (clock64() - start < cycles) {}
        }
        #endif
        __syncthreads();
        for (dl::index_t i = threadIdx.x; i < out.extent(0); i += blockDim.x) out(i) = value;
        "#
    }
}

/// The hook's stream on device `ordinal`, made once for the process: the first stream made on a
/// device waits for the device's pending work (`Gpu::new_stream`), which would hide what the hook
/// tests.
fn own_stream(ordinal: usize) -> PyResult<dlspan::cuda::Stream> {
    static STREAMS: std::sync::Mutex<Vec<(usize, dlspan::cuda::Stream)>> = std::sync::Mutex::new(Vec::new());
    let kept =
        |streams: &[(usize, dlspan::cuda::Stream)]| streams.iter().find(|(o, _)| *o == ordinal).map(|(_, s)| s.clone());
    let lock = || STREAMS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(stream) = kept(&lock()) {
        return Ok(stream);
    }
    // Made outside the lock: making it may wait for the device's work.
    let stream = dlspan::cuda::Gpu::new(ordinal)?.new_stream()?;
    let mut streams = lock();
    if let Some(other) = kept(&streams) {
        return Ok(other); // made meanwhile by another thread: this one is dropped
    }
    streams.push((ordinal, stream.clone()));
    Ok(stream)
}

/// Test hook, not API: a new one-axis float32 array of ``x``'s size, on its device, in its
/// framework (``Output.like``), filled with ``value`` by a kernel on a stream of dlspan's own,
/// not the caller's, that first waits about ``cycles`` clock cycles: the output's order with the
/// caller's stream, both ways, is the output's to keep.
#[pyfunction]
fn _fill_on_own_stream<'py>(
    py: Python<'py>,
    x: PyDynView<'py, Device>,
    value: f32,
    cycles: i64,
) -> PyResult<Bound<'py, PyAny>> {
    let size = x.view()?.size();
    let caller = x.caller_stream().expect("device arguments carry their stream");
    let ordinal = usize::try_from(caller.device().device_id).unwrap_or(usize::MAX);
    let own = own_stream(ordinal)?;
    let mut out = Output::like(py, &x, dlspan::dtype::dtype_of::<f32>(), &[size])?;
    {
        let mut view = out.view_mut_as::<DeviceMdspanMut<'_, f32, 1, LayoutRight>>()?;
        let config = LaunchConfig::new([1, 1, 1], [256, 1, 1]);
        // SAFETY: one block; each thread writes the elements `i ≡ threadIdx.x (mod 256)` below the
        // extent, none twice.
        unsafe { spin_fill.launch(&own, config, &mut view, value, cycles) }?;
    }
    out.finish()
}

/// Test hook, not API: whether the work enqueued so far on the stream ``_fill_on_own_stream`` uses
/// for ``x``'s device has all run (asked of the driver, without waiting).
#[pyfunction]
fn _own_stream_idle(x: PyDynView<'_, Device>) -> PyResult<bool> {
    let caller = x.caller_stream().expect("device arguments carry their stream");
    let ordinal = usize::try_from(caller.device().device_id).unwrap_or(usize::MAX);
    Ok(own_stream(ordinal)?.record()?.is_complete()?)
}

/// A caller's stream as Python sees it: `((device_type, device_id), handle, dlpack_stream, source)`.
fn described(stream: CallerStream) -> ((i32, i32), usize, i64, String) {
    let device = stream.device();
    (
        (device.device_type.0, device.device_id),
        stream.handle(),
        stream.dlpack_stream(),
        format!("{:?}", stream.source()),
    )
}

/// The stream a device tensor argument's work goes on (rule Y21), as dlspan chose it for ``x``.
///
/// Parameters
/// ----------
/// x : array
///     A CUDA tensor: a PyTorch tensor, a CuPy or JAX array, any DLPack producer or capsule.
///
/// Returns
/// -------
/// tuple
///     ``((device_type, device_id), handle, dlpack_stream, source)``: the raw ``CUstream`` handle,
///     the value ``__dlpack__(stream=...)`` received (never 0), and who chose it:
///     ``"ExchangeTable"`` (PyTorch's current stream), ``"CuPy"`` or ``"Dlspan"`` (the per-thread
///     default stream).
///
/// Raises
/// ------
/// TypeError
///     ``x`` is not CUDA device memory (``kind`` ``"DeviceMismatch"``).
#[pyfunction]
fn caller_stream(x: PyDynView<'_, Device>) -> ((i32, i32), usize, i64, String) {
    described(x.caller_stream().expect("device arguments carry their stream"))
}

/// Test hook, not API: the one stream of two device arguments ``a`` and ``b``
/// (``dlspan::python::common_stream``); ``ValueError`` naming ``b`` when they are on different
/// devices.
#[pyfunction]
fn _common_stream(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<((i32, i32), usize, i64, String)> {
    let a: PyDynView<'_, Device> = extract_argument(a, "a")?;
    let b: PyDynView<'_, Device> = extract_argument(b, "b")?;
    let stream = common_stream(&[("a", a.caller_stream()), ("b", b.caller_stream())])?;
    Ok(described(stream.expect("device arguments carry their stream")))
}

/// The module's docstring.
pub(crate) const DOC: &str = "What tests and debugging sessions ask of dlspan: live_borrows, the number of view \
                              arguments alive; caller_stream, the stream a device argument's work goes on.";

/// Fills the `dlspan.diagnostics` module.
pub(crate) fn fill(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(live_borrows, m)?)?;
    m.add_function(wrap_pyfunction!(_sum_during, m)?)?;
    m.add_function(wrap_pyfunction!(caller_stream, m)?)?;
    m.add_function(wrap_pyfunction!(_common_stream, m)?)?;
    m.add_function(wrap_pyfunction!(_empty_like, m)?)?;
    m.add_function(wrap_pyfunction!(_fill_on_own_stream, m)?)?;
    m.add_function(wrap_pyfunction!(_own_stream_idle, m)?)?;
    Ok(())
}
