//! Peers of the Python benchmarks (`benches/python/exchange.py`), compiled like the `dlspan` module
//! (PyO3 0.30, abi3, release): an empty one-argument `#[pyfunction]`; the floor of a PyTorch
//! extraction — the same cached exchange-table call dlspan makes, reading `ndim` and nothing else;
//! rust-numpy's `PyReadonlyArrayDyn` extraction; dlspan's typed extraction of one tensor, of a
//! device tensor with its caller's stream, and a typed argument with an output like it (the bare
//! path of an extension function, in the caller's framework).

use core::ffi::c_void;
use dlspan::Device;
use dlspan::ffi::{DLPackExchangeAPI, DLTensor};
use dlspan::python::{CallerStream, Framework, Output, PyDeviceView, PyDynView, PyView};
use numpy::PyReadonlyArrayDyn;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCapsule;
use std::hint::black_box;

/// An empty one-argument function: the cost of a call.
#[pyfunction]
fn empty(x: &Bound<'_, PyAny>) {
    black_box(x);
}

/// `torch.Tensor`'s exchange table, looked up once.
struct Table(&'static DLPackExchangeAPI);
// SAFETY: PyTorch's table is static and immutable.
unsafe impl Send for Table {}
// SAFETY: as above.
unsafe impl Sync for Table {}

static TORCH_TABLE: PyOnceLock<Table> = PyOnceLock::new();

fn torch_table(py: Python<'_>) -> PyResult<&'static DLPackExchangeAPI> {
    let table = TORCH_TABLE.get_or_try_init(py, || -> PyResult<Table> {
        let capsule = py.import("torch")?.getattr("Tensor")?.getattr("__dlpack_c_exchange_api__")?;
        let capsule = capsule.cast_into::<PyCapsule>()?;
        let pointer = capsule.pointer_checked(Some(c"dlpack_exchange_api"))?;
        // PyTorch's table lives as long as the process; the capsule is kept alive by the class.
        std::mem::forget(capsule);
        // SAFETY: the capsule holds a static DLPackExchangeAPI (DLPack 1.3).
        Ok(Table(unsafe { pointer.cast::<DLPackExchangeAPI>().as_ref() }))
    })?;
    Ok(table.0)
}

/// The floor of a typed PyTorch extraction: the cached exchange call, reading `ndim`.
#[pyfunction]
fn torch_floor(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
    let fill = torch_table(py)?.dltensor_from_py_object_no_sync.expect("PyTorch fills DLTensors");
    let mut tensor = DLTensor::default();
    // SAFETY: `x` is a torch.Tensor (the benchmark passes one); the GIL is held.
    if unsafe { fill(x.as_ptr().cast::<c_void>(), &mut tensor) } != 0 {
        return Err(PyErr::fetch(py));
    }
    black_box(tensor.ndim);
    Ok(())
}

/// [`torch_floor`] and the table's current stream of the tensor's device: the bare calls a typed
/// device view with its caller's stream makes to PyTorch.
#[pyfunction]
fn torch_floor_stream(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
    let table = torch_table(py)?;
    let fill = table.dltensor_from_py_object_no_sync.expect("PyTorch fills DLTensors");
    let current = table.current_work_stream.expect("PyTorch names its current stream");
    let mut tensor = DLTensor::default();
    // SAFETY: `x` is a torch.Tensor (the benchmark passes one); the GIL is held.
    if unsafe { fill(x.as_ptr().cast::<c_void>(), &mut tensor) } != 0 {
        return Err(PyErr::fetch(py));
    }
    let mut stream = core::ptr::null_mut();
    // SAFETY: PyTorch's table, the GIL held, `stream` a writable slot on our stack.
    if unsafe { current(tensor.device.device_type, tensor.device.device_id, &mut stream) } != 0 {
        return Err(PyErr::fetch(py));
    }
    black_box(stream);
    Ok(())
}

/// rust-numpy's read-only extraction of a float32 array of any rank.
#[pyfunction]
fn numpy_readonly(x: PyReadonlyArrayDyn<'_, f32>) {
    black_box(x.as_array().ndim());
}

/// dlspan's typed extraction of one float32 vector (any strides), borrow-checked.
#[pyfunction]
fn dlspan_view(x: PyView<'_, f32, 1>) {
    black_box(x.view());
}

/// dlspan's typed extraction of one float32 device vector and its caller's stream (rule Y21).
#[pyfunction]
fn dlspan_device_view(x: PyDeviceView<'_, f32, 1>) {
    black_box((x.view(), x.caller_stream()));
}

/// A host argument of any type and an output like it, handed back in the caller's framework: an
/// extension function's bare path, its kernel aside.
#[pyfunction]
fn output_like<'py>(py: Python<'py>, x: PyDynView<'py>) -> PyResult<Bound<'py, PyAny>> {
    let shape = x.view()?.shape().to_vec();
    Output::like(py, &x, x.dtype(), &shape)?.finish()
}

/// [`output_like`] for a device argument: the output on its device (PyTorch's allocator for
/// PyTorch tensors).
#[pyfunction]
fn output_like_device<'py>(py: Python<'py>, x: PyDynView<'py, Device>) -> PyResult<Bound<'py, PyAny>> {
    let shape = x.view()?.shape().to_vec();
    Output::like(py, &x, x.dtype(), &shape)?.finish()
}

/// A new PyTorch tensor of `n` float32 from PyTorch's allocator, zeroed, handed back as a
/// `torch.Tensor`: an output's allocation alone, no argument read.
#[pyfunction]
fn output_new_torch(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyAny>> {
    Output::new(py, Framework::PyTorch, dlspan::dtype::dtype_of::<f32>(), &[n])?.finish()
}

/// [`output_new_torch`] on CUDA device 0 (PyTorch's caching allocator, on its current stream).
#[pyfunction]
fn output_new_torch_cuda(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyAny>> {
    let device = dlspan::ffi::DLDevice { device_type: dlspan::ffi::DLDeviceType::kDLCUDA, device_id: 0 };
    let stream = CallerStream::per_thread(device);
    Output::on_device(py, Framework::PyTorch, stream, dlspan::dtype::dtype_of::<f32>(), &[n])?.finish()
}

/// The module.
#[pymodule(name = "dlspan_bench_peers")]
fn peers(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(torch_floor, m)?)?;
    m.add_function(wrap_pyfunction!(torch_floor_stream, m)?)?;
    m.add_function(wrap_pyfunction!(numpy_readonly, m)?)?;
    m.add_function(wrap_pyfunction!(dlspan_view, m)?)?;
    m.add_function(wrap_pyfunction!(dlspan_device_view, m)?)?;
    m.add_function(wrap_pyfunction!(output_like, m)?)?;
    m.add_function(wrap_pyfunction!(output_like_device, m)?)?;
    m.add_function(wrap_pyfunction!(output_new_torch, m)?)?;
    m.add_function(wrap_pyfunction!(output_new_torch_cuda, m)?)?;
    Ok(())
}
