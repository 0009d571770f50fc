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
