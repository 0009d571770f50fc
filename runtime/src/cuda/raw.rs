//! Raw kernels on a [`Stream`]: the launch of a `kernel!` instantiation over device and managed
//! views — the configuration checked, every view on the stream's device, the module compiled once
//! per device by NVRTC, the argument block passed by value, the launch ordered with each view's
//! other uses ([rule C6](crate::rules#c6)) as element-wise launches are, and asynchronous.

use super::error::CudaError;
use super::kernel::{ModuleKey, Plan};
use super::order::{Order, run, schedule};
use super::stream::Stream;
use crate::kernel::{LaunchConfig, MAX_ARGUMENT_BYTES, RawArg, RawInstance, argument_block};
use cudarc::driver::{CudaFunction, PushKernelArg};

/// The argument block as the launch hands it to the driver: the kernel's `dl::args<N>` reads its
/// first `N` bytes (the driver copies the size the kernel declares).
#[repr(C, align(16))]
struct ArgBlock([u8; MAX_ARGUMENT_BYTES]);

// SAFETY: plain bytes, 16-aligned as `dl::args<N>`, of at least the size the kernel declares
// (`argument_layout` keeps `N` within `MAX_ARGUMENT_BYTES`).
unsafe impl cudarc::driver::DeviceRepr for ArgBlock {}

impl Stream {
    /// Launches a raw kernel's instantiation over `views` (declaration order) and `scalars`.
    ///
    /// # Errors
    ///
    /// [`CudaError::Kernel`] for a configuration CUDA refuses or arguments above
    /// [`MAX_ARGUMENT_BYTES`]; [`CudaError::WrongDevice`]; NVRTC's and the driver's errors.
    ///
    /// # Safety
    ///
    /// The kernel's body accesses only elements of its views within their extents, writes only the
    /// views it declares `&mut`, and its threads do not race but through atomics.
    pub(super) unsafe fn launch_raw(
        &self,
        instance: RawInstance,
        config: &LaunchConfig,
        views: &mut [RawArg<'_, &Stream>],
        scalars: &[&[u8]],
    ) -> Result<(), CudaError> {
        config.check()?;
        let expected = self.gpu().ordinal() as i32;
        if let Some(found) = views.iter().find_map(|v| v.extra.ordinal.filter(|&o| o != expected)) {
            return Err(CudaError::WrongDevice { expected, found });
        }
        let key = ModuleKey::raw(instance)?;
        let args = argument_block(&instance, views, scalars, |view| view.ptr.addr() as u64)?;
        let function = self.gpu().function(&key, &Plan::EMPTY)?;
        if config.blocks() == 0 {
            return Ok(());
        }
        let mut block = ArgBlock([0; MAX_ARGUMENT_BYTES]);
        block.0[..args.len()].copy_from_slice(&args);
        let orders: Vec<Order<_>> = views.iter().map(|v: &RawArg<'_, &Stream>| v.extra.order).collect();
        // SAFETY: the caller's contract covers the body's accesses; the views' memory stays
        // borrowed until the launch is enqueued and ordered with the views' other uses.
        run(&**self.cudarc(), &schedule(&orders), || unsafe { self.enqueue_raw(&function, config, &block) })
    }

    /// Enqueues `function` with the argument block.
    ///
    /// # Safety
    ///
    /// As [`launch_raw`](Self::launch_raw); `function` is the module's kernel of the instantiation
    /// that laid out `block`.
    unsafe fn enqueue_raw(
        &self,
        function: &CudaFunction,
        config: &LaunchConfig,
        block: &ArgBlock,
    ) -> Result<(), CudaError> {
        let [gx, gy, gz] = config.grid;
        let [bx, by, bz] = config.block;
        let launch = cudarc::driver::LaunchConfig {
            grid_dim: (gx, gy, gz),
            block_dim: (bx, by, bz),
            shared_mem_bytes: config.shared_bytes,
        };
        let mut builder = self.cudarc().launch_builder(function);
        builder.arg(block);
        // SAFETY: the kernel takes one `dl::args<N>` by value, the first `N` bytes of `block`; every
        // address in it is a device or managed view's first element on this stream's device with
        // its own extents and strides; the caller's contract covers the body.
        unsafe { builder.launch(launch) }?;
        Ok(())
    }
}
