//! [`Gpu`]: one CUDA device's primary context, with the kernel modules compiled for it.

use super::error::{CudaError, CudaLibrary};
use super::kernel::{self, FunctionTable, ModuleCache, ModuleKey, Plan};
use super::library::driver_present;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A CUDA device: its primary context and the kernel modules compiled for it (each compiled
/// once, on first use, and shared by every [`Gpu`] handle of the device in the process; the
/// context and the modules stay loaded until the process ends).
///
/// Cloning is cheap (a reference count).
///
/// ```no_run
/// use dlspan::cuda::Gpu;
/// let gpu = Gpu::new(0)?;
/// let stream = gpu.new_stream()?;
/// assert_eq!(stream.gpu().ordinal(), 0);
/// # Ok::<(), dlspan::cuda::CudaError>(())
/// ```
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<GpuInner>,
}

struct GpuInner {
    context: Arc<CudaContext>,
    /// NVRTC's virtual architecture for this device (`compute_90` for compute capability 9.0).
    arch: String,
    /// The modules compiled for this device: each compiles under its own slot's lock, so different
    /// modules compile in parallel and one module compiles once.
    modules: ModuleCache<Module>,
}

/// A loaded module and its kernels loaded so far, by shape and index width.
struct Module {
    module: Arc<CudaModule>,
    functions: FunctionTable<CudaFunction>,
}

impl core::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Gpu").field("ordinal", &self.ordinal()).field("arch", &self.inner.arch).finish()
    }
}

/// The number of CUDA devices, 0 when the driver is missing.
///
/// ```
/// println!("{} CUDA device(s)", dlspan::cuda::device_count());
/// ```
pub fn device_count() -> usize {
    if !driver_present() {
        return 0;
    }
    // `device_count` initialises the driver; no device (or a broken install) counts as none.
    CudaContext::device_count().map_or(0, |n| usize::try_from(n).unwrap_or(0))
}

impl Gpu {
    /// The device of `ordinal`, with its primary context. Every handle of one device shares the
    /// compiled kernels.
    ///
    /// # Errors
    ///
    /// [`CudaError::LibraryMissing`] without a driver (checked before any driver call: no panic);
    /// [`CudaError::NoDevice`] when the driver has no such device; [`CudaError::Driver`].
    ///
    /// ```
    /// use dlspan::cuda::{CudaError, Gpu};
    /// if let Err(err) = Gpu::new(0) {
    ///     assert!(matches!(err, CudaError::LibraryMissing { .. } | CudaError::NoDevice { .. } | CudaError::Driver { .. }));
    /// }
    /// ```
    pub fn new(ordinal: usize) -> Result<Self, CudaError> {
        CudaLibrary::Driver.require()?;
        // Each device's context and modules live for the rest of the process once made: a handle
        // made per call (a Python extension's, from the caller's stream) finds them loaded. Were
        // they released with the last handle, every call would retain the context, load its
        // modules and unload them again — milliseconds, and an unload waits for the device's
        // work, so an asynchronous call would not return before the caller's pending kernels
        // ended (seen on an H200: 1.4 ms per call). A device found here was counted when it was
        // made: the driver is not asked again (`device_count` costs about 450 ns a call).
        static DEVICES: OnceLock<Mutex<HashMap<usize, Arc<GpuInner>>>> = OnceLock::new();
        let devices = DEVICES.get_or_init(Default::default);
        let mut devices = devices.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(inner) = devices.get(&ordinal) {
            return Ok(Self { inner: Arc::clone(inner) });
        }
        let count = device_count();
        if ordinal >= count {
            return Err(CudaError::NoDevice { ordinal, count });
        }
        let context = CudaContext::new(ordinal)?;
        let (major, minor) = context.compute_capability()?;
        let inner =
            Arc::new(GpuInner { context, arch: format!("compute_{major}{minor}"), modules: ModuleCache::default() });
        devices.insert(ordinal, Arc::clone(&inner));
        Ok(Self { inner })
    }

    /// The device ordinal.
    ///
    /// ```no_run
    /// assert_eq!(dlspan::cuda::Gpu::new(0)?.ordinal(), 0);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn ordinal(&self) -> usize {
        self.inner.context.ordinal()
    }

    /// The cudarc context, for allocating and for cudarc's own operations.
    ///
    /// ```no_run
    /// let gpu = dlspan::cuda::Gpu::new(0)?;
    /// let bytes = gpu.context().total_mem()?;
    /// assert!(bytes > 0);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.context
    }

    /// NVRTC's virtual architecture for this device, such as `compute_90`.
    ///
    /// ```no_run
    /// assert!(dlspan::cuda::Gpu::new(0)?.arch().starts_with("compute_"));
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn arch(&self) -> &str {
        &self.inner.arch
    }

    /// How many modules have been compiled for this device so far (by NVRTC, or loaded from the
    /// disk cache a process before filled: `DLSPAN_CACHE_DIR`).
    ///
    /// ```no_run
    /// let gpu = dlspan::cuda::Gpu::new(0)?;
    /// println!("{} modules compiled", gpu.compiled_modules());
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    pub fn compiled_modules(&self) -> usize {
        self.inner.modules.compiled()
    }

    /// The kernel of `plan` in module `key`, compiling and loading the module on first use.
    pub(crate) fn function(&self, key: &ModuleKey, plan: &Plan) -> Result<CudaFunction, CudaError> {
        let module = self.inner.modules.get_or_compile(key, || {
            let ptx = kernel::compile(key, &self.inner.arch)?;
            let module = self.inner.context.load_module(ptx)?;
            Ok(Module { module, functions: FunctionTable::default() })
        })?;
        let function = module.functions.get_or_load(plan.shape, plan.index, || {
            Ok(module.module.load_function(&key.entry(plan.shape, plan.index))?)
        })?;
        Ok(function.clone())
    }
}
