//! PyTorch's current CUDA stream, where the CUDA kernels of operators launch: read through
//! `aoti_torch_get_current_cuda_stream`, which `libtorch_cuda.so` exports in every supported torch
//! (resolved as the shim is, from the library already in the process).

use super::error::TorchError;
use crate::cuda::{Gpu, Stream};
use core::ffi::c_void;
use std::sync::OnceLock;

/// `aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream)`.
type CurrentStream = unsafe extern "C" fn(i32, *mut *mut c_void) -> i32;

/// The function, resolved once (`None` in a torch without CUDA).
fn resolve() -> Option<CurrentStream> {
    static FUNCTION: OnceLock<Option<CurrentStream>> = OnceLock::new();
    *FUNCTION.get_or_init(|| {
        let symbol = c"aoti_torch_get_current_cuda_stream";
        let mut address = core::ptr::null_mut();
        for name in [c"libtorch_cuda.so", c"libtorch_cuda.dylib"] {
            // SAFETY: NUL-terminated; RTLD_NOLOAD only finds a library already in the process.
            let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
            if !handle.is_null() {
                // SAFETY: a live handle and a NUL-terminated name.
                address = unsafe { libc::dlsym(handle, symbol.as_ptr()) };
                break;
            }
        }
        if address.is_null() {
            // SAFETY: as above, in the global scope (a program linked against libtorch_cuda).
            address = unsafe { libc::dlsym(libc::RTLD_DEFAULT, symbol.as_ptr()) };
        }
        // SAFETY: the libtorch export of that name, with the prototype its header declares.
        (!address.is_null()).then(|| unsafe { core::mem::transmute::<*mut c_void, CurrentStream>(address) })
    })
}

/// PyTorch's current stream of CUDA device `index` (`torch.cuda.current_stream(index)`), as a
/// dlspan [`Stream`] that borrows it.
///
/// # Errors
///
/// [`TorchError::Kernel`] in a torch built without CUDA; the shim's error; a CUDA error getting
/// the device.
///
/// # Safety
///
/// The stream belongs to PyTorch (or to the caller that made it current, for a
/// `torch.cuda.ExternalStream`): use the returned stream only during the operator call that asked
/// for it.
pub(crate) unsafe fn current(index: i32) -> Result<Stream, TorchError> {
    let s = super::shim::shim()?;
    let function = resolve()
        .ok_or_else(|| TorchError::Kernel("this torch has no CUDA (`aoti_torch_get_current_cuda_stream`)".into()))?;
    let mut handle = core::ptr::null_mut();
    // SAFETY: the out-parameter is written with the stream's `cudaStream_t`.
    s.status("aoti_torch_get_current_cuda_stream", unsafe { function(index, &mut handle) })?;
    let ordinal = usize::try_from(index).map_err(|_| TorchError::Kernel(format!("CUDA device index {index}")))?;
    let gpu = Gpu::new(ordinal)?;
    gpu.context().bind_to_thread().map_err(crate::cuda::CudaError::from)?;
    // SAFETY: the handle is a stream of this device's primary context (PyTorch's streams are), or
    // the null stream, alive for the call (the caller's contract); dropping the wrapper destroys
    // nothing.
    let inner = unsafe { gpu.context().wrap_borrowed_stream(handle.cast()) };
    Ok(Stream::wrap(&gpu, inner)?)
}
