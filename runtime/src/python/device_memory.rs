//! dlspan's own CUDA memory for Python tensors (feature `cuda`): the outputs an extension makes for
//! callers whose framework has no allocator dlspan can call (JAX, `dlspan.Tensor`, other
//! producers), and the exchange table's CUDA allocations; and the producer's side of DLPack's
//! stream rule for such tensors ([rule Y22](crate::rules#y22)).
//!
//! The memory is allocated and zeroed on the calling thread's per-thread default stream — the
//! stream dlspan gives such callers' tensors ([`CallerStream`]), so work the extension enqueues
//! there is ordered after the allocation — or, for the legacy default stream, before it (the
//! legacy stream waits for the per-thread stream's work). When the extension hands the tensor to
//! Python, [`mark_ready`] records the point after its writes; every consumer's stream then waits
//! for it ([`order_consumer`]), never the host.

use super::stream::CallerStream;
use super::tensor::{DeviceOwner, Owner, Tensor, compact_meta};
use crate::cuda::{CudaError, Gpu, export_cuda};
use crate::ffi::{DLDataType, DLDevice, DLDeviceType};
use pyo3::prelude::*;

/// The ordinal of a `kDLCUDA` device.
fn ordinal(device: DLDevice) -> Result<usize, CudaError> {
    usize::try_from(device.device_id)
        .ok()
        .filter(|_| device.device_type == DLDeviceType::kDLCUDA)
        .ok_or(CudaError::NoDevice { ordinal: usize::MAX, count: crate::cuda::device_count() })
}

/// A zeroed, row-major tensor of `dtype` and `shape` in fresh memory of the CUDA device `device`,
/// allocated (256-byte aligned) and zeroed on the calling thread's per-thread default stream.
///
/// # Errors
///
/// As [`Tensor::zeros`] for the shape and data type; the driver's errors (no driver, no such
/// device, out of memory) as their [`CudaError`].
pub(crate) fn zeroed_on<'py>(
    py: Python<'py>,
    shape: &[i64],
    dtype: DLDataType,
    device: DLDevice,
) -> PyResult<Bound<'py, Tensor>> {
    let mut meta = compact_meta(shape, dtype, device)?;
    let gpu = Gpu::new(ordinal(device)?)?;
    // At least one byte, so that even an empty tensor has an address of its device.
    let bytes = meta.allocation_bytes(meta.span).max(1);
    let memory = gpu.per_thread_stream().alloc_zeros::<u8>(bytes)?;
    let owner = export_cuda(memory, [bytes])?;
    meta.data = owner.dl_tensor().data;
    Bound::new(py, Tensor::new(meta, Owner::Device(DeviceOwner::new(owner))))
}

/// Records, on `stream` (the stream the tensor's writer used), the point after the work enqueued
/// so far: consumers of `tensor` are ordered after it. Only the driver's default streams, which
/// live as long as the context, are recorded on (dlspan's own memory is given only to callers on
/// them); any other stream is refused.
///
/// # Errors
///
/// [`CudaError::InvalidDlpackStream`] for a stream other than the default streams; the driver's
/// errors.
pub(crate) fn mark_ready(tensor: &Bound<'_, Tensor>, stream: CallerStream) -> Result<(), CudaError> {
    let gpu = Gpu::new(ordinal(stream.device())?)?;
    let stream = match stream.handle() {
        0 | 1 => gpu.default_stream(),
        2 => gpu.per_thread_stream(),
        _ => return Err(CudaError::InvalidDlpackStream { value: stream.dlpack_stream() }),
    };
    let event = stream.record()?;
    // A second hand-over (never made: `Output::finish` consumes the output) keeps the first event.
    let _ = tensor.get().ready.set(event);
    Ok(())
}

/// DLPack's producer rule for `tensor`: the consumer's stream (`__dlpack__`'s `stream`: `None` or 1
/// the legacy default stream, 2 the per-thread default stream, a `CUstream` handle above 2, -1 no
/// synchronisation) waits for the writes [`mark_ready`] recorded. A tensor with none recorded has
/// no work of dlspan's pending.
///
/// # Errors
///
/// [`CudaError::InvalidDlpackStream`] for 0 and negative values other than -1; the driver's
/// errors.
///
/// # Safety
///
/// A value above 2 is a live `CUstream` of the tensor's device (DLPack's contract for the
/// consumer).
pub(crate) unsafe fn order_consumer(tensor: &Tensor, stream: Option<i64>) -> Result<(), CudaError> {
    match tensor.ready.get() {
        // SAFETY: forwarded (the caller's contract).
        Some(event) => unsafe { crate::cuda::order_consumer_after(event, stream) },
        None => Ok(()),
    }
}
