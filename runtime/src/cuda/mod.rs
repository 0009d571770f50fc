//! CUDA (feature `cuda`): device and managed views over cudarc memory, typed NVRTC kernels
//! generated from element types, streams and DLPack's stream rules.
//!
//! - [`Gpu`] is a device's primary context with the kernels compiled for it; [`Stream`] runs
//!   operations in order, [`Event`] orders streams.
//! - Device views borrow cudarc allocations ([`CudaMemory`]: `DeviceMdspan::from_cuda(&slice,
//!   extents)` and its strided, relaxed and mutable twins), so a view cannot outlive its
//!   allocation; managed memory (`UnifiedSlice`) gives host-indexable
//!   [`ManagedMdspan`](crate::ManagedMdspan)s.
//! - Kernels ([`Stream::copy`], [`Stream::fill`], [`Stream::add`], [`Stream::scale`],
//!   [`Stream::axpy`], [`Stream::cast`]) take views of any layout; their CUDA source is generated
//!   from the element types (the C++ type of each from its DLPack data type, size and alignment,
//!   so `#[derive(DlElement)]` types have kernels too), compiled by NVRTC once per operation and
//!   element types on each device, and launched flat with vector loads when every operand is
//!   contiguous, strided with merged axes otherwise, through shared-memory tiles for transposes.
//!   The generator, the launch planner and the compiler (`cuda/kernel/`) are not part of this
//!   API; the test tiers run them directly.
//! - Element-wise kernels of your own ([`elementwise!`](crate::elementwise), [`crate::kernel`](mod@crate::kernel))
//!   run on a stream with `kernel.run(&stream, args..)`: their bodies are translated to CUDA C++,
//!   compiled once per element types and device, and launched like the built-in operations (`fill`,
//!   `add`, `scale` and `axpy` are such kernels), under the rules of section
//!   [K](crate::rules#k).
//! - [`Stream::copy_from_host`] / [`Stream::copy_to_host`] copy between host and device views of
//!   any strides; [`export_cuda`] (or [`export_cuda_for_consumer`]) hands a `CudaSlice` to DLPack
//!   consumers as a [`ManagedTensor`](crate::ManagedTensor), and foreign CUDA tensors become device
//!   views through [`ManagedTensor::view_as`](crate::ManagedTensor::view_as).
//!
//! cudarc is loaded dynamically: nothing here needs a CUDA toolkit to build, and on a machine
//! without a driver every entry point returns [`CudaError::LibraryMissing`] (cudarc itself would
//! panic; dlspan checks first).
//!
//! Ordering is by stream, as in CUDA and DLPack: an operation runs after the work enqueued before
//! it on the same stream, and after every earlier use of its operands' cudarc allocations on other
//! streams; an allocation is freed after every use of it, on any stream
//! ([rule C6](crate::rules#c6)). Operations on managed views wait for their work before returning
//! ([rule C3](crate::rules#c3)). Device memory dlspan did not allocate (DLPack imports) is ordered
//! by the caller, with [`Event`]s and DLPack's stream rules.
//!
//! ```no_run
//! use dlspan::{DeviceMdspan, DeviceMdspanMut, HostMdspan, HostMdspanMut, LayoutStride};
//! use dlspan::cuda::Gpu;
//!
//! let stream = Gpu::new(0)?.new_stream()?;
//! let host: Vec<f32> = (0..6).map(|i| i as f32).collect();
//! let mut a = stream.alloc_zeros::<f32>(6)?;
//! let mut t = stream.alloc_zeros::<f32>(6)?;
//! stream.copy_from_host(&HostMdspan::<f32, 2>::from_slice(&host, [2, 3])?, &mut DeviceMdspanMut::<f32, 2>::from_cuda(&mut a, [2, 3])?)?;
//! // The transpose of `a`, as a strided view of `t`.
//! let a_view = DeviceMdspan::<f32, 2>::from_cuda(&a, [2, 3])?;
//! stream.copy(&a_view, &mut DeviceMdspanMut::<f32, 2, LayoutStride>::from_cuda_strided(&mut t, [2, 3], [1, 2])?)?;
//! let mut back = vec![0.0f32; 6];
//! stream.copy_to_host(&DeviceMdspan::<f32, 2>::from_cuda(&t, [3, 2])?, &mut HostMdspanMut::<f32, 2>::from_slice(&mut back, [3, 2])?)?;
//! assert_eq!(back, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod abi;
mod elementwise;
mod error;
mod export;
mod gpu;
#[doc(hidden)]
pub mod kernel;
mod launch;
mod library;
mod memory;
mod operand;
mod ops;
mod order;
mod raw;
mod reduce;
mod stream;
mod transfer;
mod translated;

pub use abi::{KernelKind, MAX_KERNEL_RANK};
pub use error::{CudaError, CudaLibrary};
pub use export::{export_cuda, export_cuda_for_consumer};
pub use gpu::{Gpu, device_count};
pub use kernel::{elementwise_ptx, raw_ptx};
pub use library::{driver_present, nvrtc_present};
pub use memory::CudaMemory;
pub use operand::{DeviceRead, DeviceWrite, KernelSpace};
#[cfg(feature = "python")]
pub(crate) use stream::order_consumer_after;
pub use stream::{DLPACK_LEGACY_STREAM, DLPACK_NO_SYNC, DLPACK_PER_THREAD_STREAM, Event, Stream};
pub use translated::HostTranslation;
