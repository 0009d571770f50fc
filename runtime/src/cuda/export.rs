//! cudarc allocations handed to DLPack consumers as managed tensors.

use super::error::CudaError;
use super::order::{chain, take_event};
use super::stream::{consumer_handle, order_consumer};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::{DLDevice, DLDeviceType};
use crate::owned::{ExportOwner, ManagedTensor, Storage, export_compact};
use core::ptr::NonNull;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// The owner inside a CUDA export: the allocation, freed by the managed tensor's deleter.
struct CudaOwner<T> {
    slice: CudaSlice<T>,
}

// SAFETY: the storage is the slice's device memory of `len` elements, aligned (cudarc's 256-byte
// aligned allocation of whole `T`s), owned by the slice until the owner is dropped; nothing else
// reaches the slice once it is moved in here. The device is the slice's CUDA device.
unsafe impl<T: DlElement> ExportOwner for CudaOwner<T> {
    type Elem = T;

    fn storage(&mut self) -> Storage<T> {
        let (address, record) = self.slice.device_ptr(self.slice.stream());
        drop(record);
        let ptr = NonNull::new(core::ptr::with_exposed_provenance_mut::<T>(address as usize));
        Storage { ptr: ptr.unwrap_or(NonNull::dangling()), len: self.slice.len(), writable: true }
    }

    fn device(&self) -> DLDevice {
        DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: self.slice.ordinal() as i32 }
    }
}

impl<T> Drop for CudaOwner<T> {
    fn drop(&mut self) {
        // The deleter may run on any thread: make the allocation's context current there before
        // cudarc frees the memory (stream-ordered, on the allocation's stream, after its events).
        // A failure is recorded in the context, as cudarc records its own drop errors.
        let context = self.slice.context();
        context.record_err(context.bind_to_thread());
    }
}

/// Orders the allocation's own stream after every use of its memory enqueued so far, on any
/// stream (dlspan's and cudarc's record the allocation's read or write event): the stream waits
/// for both events, and the write event is recorded again after the waits. Errors are recorded in
/// the context and returned by its next driver call.
fn settle<T>(slice: &mut CudaSlice<T>) {
    let home = Arc::clone(slice.stream());
    let (_, read) = slice.device_ptr(&home);
    if let Some(read) = take_event(read) {
        home.context().record_err(home.wait(read));
    }
    let (_, write) = slice.device_ptr_mut(&home);
    if let Some(write) = take_event(write) {
        chain(write, &home);
    }
}

/// Hands a cudarc allocation to DLPack consumers as a compact row-major managed tensor of `shape`
/// on its CUDA device (`kDLCUDA`, the allocation's ordinal), without copying. The tensor's deleter
/// frees the memory, from whichever thread calls it, on the allocation's stream.
///
/// The allocation's own stream (`slice.stream()`) is ordered here after every use of the memory
/// enqueued so far, on any stream: it is the export's producer stream. Before a consumer reads the
/// memory on its stream, order that stream after it with
/// [`Stream::sync_for_consumer`](crate::cuda::Stream::sync_for_consumer) on the allocation's
/// stream, or export with [`export_cuda_for_consumer`] (DLPack's producer rule,
/// [rule C7](crate::rules#c7)).
///
/// # Errors
///
/// [`DlpackError::LengthMismatch`] when the allocation's length differs from the number of
/// elements (the allocation is freed); [`DlpackError::SpanOverflow`].
///
/// ```no_run
/// use dlspan::{DeviceMdspan, LayoutRight};
/// let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
/// let buffer = stream.alloc_zeros::<f32>(6)?;
/// let tensor = dlspan::cuda::export_cuda(buffer, [2, 3])?;
/// assert_eq!(tensor.device().device_type, dlspan::ffi::DLDeviceType::kDLCUDA);
/// let view = tensor.view_as::<DeviceMdspan<'_, f32, 2, LayoutRight>>()?;
/// assert_eq!(view.extents(), [2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_cuda<T: DlElement, const R: usize>(
    mut slice: CudaSlice<T>,
    shape: [usize; R],
) -> Result<ManagedTensor, DlpackError> {
    settle(&mut slice);
    export_compact(CudaOwner { slice }, shape, 0)
}

/// The producer's side of `__dlpack__(stream=consumer)` for a cudarc allocation: exports it as
/// [`export_cuda`] does, then makes the consumer's stream wait for every use of the memory
/// enqueued so far, on any stream (an event of the allocation's stream, waited on there; never a
/// device-wide synchronisation). `consumer` is the consumer's stream value, as for
/// [`Stream::sync_for_consumer`](crate::cuda::Stream::sync_for_consumer): `None` or 1 for the
/// legacy default stream, 2 for the per-thread default stream, a `CUstream` handle above 2, -1 for
/// "do not synchronise".
///
/// # Errors
///
/// [`CudaError::InvalidDlpackStream`] for 0 and for negative values other than -1 (checked first);
/// [`CudaError::View`] with the errors of [`export_cuda`]; [`CudaError::Driver`]. The allocation
/// is freed on every error.
///
/// # Safety
///
/// A value above 2 is a live `CUstream` of the allocation's context (DLPack's contract for the
/// consumer).
///
/// ```no_run
/// use dlspan::cuda::{CudaError, Gpu, export_cuda_for_consumer};
/// let gpu = Gpu::new(0)?;
/// let (producer, consumer) = (gpu.new_stream()?, gpu.new_stream()?);
/// let buffer = producer.alloc_zeros::<f32>(6)?;
/// // SAFETY: the consumer's value names a live stream of this context.
/// let tensor = unsafe { export_cuda_for_consumer(buffer, [2, 3], Some(consumer.dlpack_stream())) }?;
/// // SAFETY: 0 is refused before any use.
/// let refused = unsafe { export_cuda_for_consumer(producer.alloc_zeros::<f32>(1)?, [1], Some(0)) };
/// assert!(matches!(refused, Err(CudaError::InvalidDlpackStream { value: 0 })));
/// # Ok::<(), CudaError>(())
/// ```
pub unsafe fn export_cuda_for_consumer<T: DlElement, const R: usize>(
    slice: CudaSlice<T>,
    shape: [usize; R],
    consumer: Option<i64>,
) -> Result<ManagedTensor, CudaError> {
    consumer_handle(consumer)?;
    let home = Arc::clone(slice.stream());
    let tensor = export_cuda(slice, shape)?;
    // SAFETY: forwarded: a value above 2 names a live stream of the allocation's context.
    unsafe { order_consumer(&home, consumer) }?;
    Ok(tensor)
}
