//! cudarc allocations handed to DLPack consumers as managed tensors.

use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::{DLDevice, DLDeviceType};
use crate::owned::{ExportOwner, ManagedTensor, Storage, export_compact};
use core::ptr::NonNull;
use cudarc::driver::{CudaSlice, DevicePtr};

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
        // cudarc frees the memory (stream-ordered, on the allocation's stream). A failure is
        // recorded in the context, as cudarc records its own drop errors.
        let context = self.slice.context();
        context.record_err(context.bind_to_thread());
    }
}

/// Hands a cudarc allocation to DLPack consumers as a compact row-major managed tensor of `shape`
/// on its CUDA device (`kDLCUDA`, the allocation's ordinal), without copying. The tensor's deleter
/// frees the memory, from whichever thread calls it, on the allocation's stream.
///
/// Before a consumer reads it on another stream, order that stream after the work that wrote the
/// data with [`Stream::sync_for_consumer`](crate::cuda::Stream::sync_for_consumer) (DLPack's
/// producer rule).
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
    slice: CudaSlice<T>,
    shape: [usize; R],
) -> Result<ManagedTensor, DlpackError> {
    export_compact(CudaOwner { slice }, shape, 0)
}
