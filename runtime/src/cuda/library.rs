//! The CUDA libraries, loaded at run time: checked before any cudarc call.
//!
//! cudarc loads `libcuda` and `libnvrtc` on first use and panics when they are missing; dlspan asks
//! first, once per process, and answers
//! [`CudaError::LibraryMissing`](crate::cuda::CudaError::LibraryMissing) instead.
//!
//! A leaf (it uses nothing of the crate): managed tensors ask it too, below the `cuda` module.

use std::sync::OnceLock;

/// Whether the CUDA driver library can be loaded (a driver is installed). Says nothing about
/// devices: a machine may have the library and no GPU.
///
/// ```
/// let present = dlspan::cuda::driver_present();
/// println!("CUDA driver present: {present}");
/// ```
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: `is_culib_present` only tries to open the library by its candidate names (dlopen),
    // running its initialisers, as any later use would.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// Whether NVRTC can be loaded (from the system toolkit, or a `nvidia-cuda-nvrtc` wheel's
/// `lib` folder on `LD_LIBRARY_PATH`). NVRTC needs no GPU.
///
/// ```
/// let present = dlspan::cuda::nvrtc_present();
/// println!("NVRTC present: {present}");
/// ```
pub fn nvrtc_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: as for the driver: only opens the library.
    *PRESENT.get_or_init(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
}

/// The primary context of device `ordinal`, retained once for the process and shared by every
/// user: [`Gpu`](crate::cuda::Gpu)'s handles and the events of managed tensors' device views.
/// Retaining a primary context is a handful of driver calls (microseconds); a handle made per call
/// (a Python extension's) finds it here. `None` without a driver or when the driver refuses the
/// ordinal (the caller reports the error it needs: [`Gpu::new`](crate::cuda::Gpu::new) asks the
/// driver again for its code).
pub(crate) fn primary_context(ordinal: usize) -> Option<std::sync::Arc<cudarc::driver::CudaContext>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    static CONTEXTS: OnceLock<Mutex<HashMap<usize, Arc<cudarc::driver::CudaContext>>>> = OnceLock::new();
    if !driver_present() {
        return None;
    }
    let contexts = CONTEXTS.get_or_init(Default::default);
    let mut contexts = contexts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(context) = contexts.get(&ordinal) {
        return Some(Arc::clone(context));
    }
    // An ordinal the driver has no device for is an error here, never a panic (the driver is
    // present: checked above).
    let context = cudarc::driver::CudaContext::new(ordinal).ok()?;
    contexts.insert(ordinal, Arc::clone(&context));
    Some(context)
}
