//! User kernels: element-wise kernels written once, in Rust syntax, and raw CUDA C++ kernels over
//! typed views, run on the CPU and on CUDA streams.
//!
//! [`elementwise!`](crate::elementwise) takes a function over scalars: scalar parameters by value,
//! views it reads as `&T`, views it writes as `&mut T`. It gives a value of the kernel's name whose
//! `run` takes an executor and the kernel's own arguments — views of any rank and layout, inputs
//! broadcast to the shape of the first written view:
//!
//! - [`Cpu`] runs the body as Rust over host and managed views, in the output's memory order,
//!   contiguous runs as zipped slices (as fast as a hand-written `zip2_with`);
//! - `&cuda::Stream` (feature `cuda`) runs it over device and managed views: the macro translated
//!   the body to CUDA C++, which NVRTC compiles once per element types and device; the launch is
//!   planned as the built-in kernels' are (flat with vector loads when contiguous, merged axes,
//!   32-bit index arithmetic when it fits), ordered with the views' other uses, and asynchronous.
//!
//! ```
//! use dlspan::kernel::{Cpu, Scalar};
//! use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft};
//!
//! dlspan::elementwise! {
//!     /// `out = a·x + b·y`, for every scalar type.
//!     pub fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) {
//!         *out = a * *x + b * *y;
//!     }
//! }
//!
//! // x is column-major, y one row broadcast to both rows, out row-major.
//! let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
//! let y = [10.0f32, 20.0, 30.0];
//! let mut out = [0.0f32; 6];
//! axpby.run(
//!     Cpu,
//!     2.0,
//!     1.0,
//!     &HostMdspan::<f32, 2, LayoutLeft>::from_slice(&x, [2, 3])?,
//!     &HostMdspan::<f32, 1>::from_slice(&y, [3])?,
//!     &mut HostMdspanMut::<f32, 2>::from_slice(&mut out, [2, 3])?,
//! )?;
//! assert_eq!(out, [12.0, 26.0, 40.0, 14.0, 28.0, 42.0]);
//! # Ok::<(), dlspan::DlpackError>(())
//! ```
//!
//! The same kernel on a GPU, over device views of cudarc allocations:
//!
//! ```no_run
//! # #[cfg(feature = "cuda")] {
//! # use dlspan::kernel::Scalar;
//! # dlspan::elementwise! { fn axpby<T: Scalar>(a: T, b: T, x: &T, y: &T, out: &mut T) { *out = a * *x + b * *y; } }
//! use dlspan::{DeviceMdspan, DeviceMdspanMut};
//! let stream = dlspan::cuda::Gpu::new(0)?.new_stream()?;
//! let (x, y) = (stream.alloc_zeros::<f32>(6)?, stream.alloc_zeros::<f32>(3)?);
//! let mut out = stream.alloc_zeros::<f32>(6)?;
//! axpby.run(
//!     &stream,
//!     2.0f32,
//!     1.0f32,
//!     &DeviceMdspan::<f32, 2>::from_cuda(&x, [2, 3])?,
//!     &DeviceMdspan::<f32, 1>::from_cuda(&y, [3])?,
//!     &mut DeviceMdspanMut::<f32, 2>::from_cuda(&mut out, [2, 3])?,
//! )?; // enqueued: it returns before the GPU runs it
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Writing a kernel
//!
//! A body is written in a subset of Rust: `let`, assignments (`*out = e`, `*out += e`,
//! `out.field = e`), `if`/`else`, literals, arithmetic, comparisons, `&&`, `||`, `!`, `as` casts,
//! fields of derived element types, and the math methods `sqrt`, `exp`, `exp2`, `ln`, `log2`,
//! `log10`, `sin`, `cos`, `tan`, `tanh`, `floor`, `ceil`, `round`, `trunc`, `abs`, `min`, `max`,
//! `powf`, `mul_add`, `detach` ([rule K2](crate::rules#k2) lists the rest). Anything else is a compile error at
//! its token. Generic bodies bound their type parameters by what they use: [`Scalar`] for
//! arithmetic, [`Float`] for the math methods; rustc checks the body as Rust, instantiated per
//! element type (`f16`, `bf16`, `f32`, `f64`, the integers, derived types), and the GPU computes the
//! same bits for `+ - * /`, `sqrt`, `mul_add`, comparisons and casts ([rule K3](crate::rules#k3));
//! the other math functions differ by a few ulps ([rule K4](crate::rules#k4)). Integers wrap, and
//! `f16`/`bf16` compute in `f32`, rounding after each operation.
//!
//! ```
//! use dlspan::kernel::{Cpu, Float};
//! use dlspan::half::f16;
//! use dlspan::{HostMdspan, HostMdspanMut};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, dlspan::DlElement)]
//! #[repr(C)]
//! struct Rgba { r: u8, g: u8, b: u8, a: u8 }
//!
//! dlspan::elementwise! {
//!     /// A gamma curve; literals take `T` from what they meet, `as T` casts one.
//!     fn gamma<T: Float>(g: T, x: &T, out: &mut T) {
//!         *out = if *x > 0.0 as T { x.powf(g) } else { 0.0 as T };
//!     }
//! }
//!
//! dlspan::elementwise! {
//!     /// Fields of a derived type, integer arithmetic.
//!     fn luma(px: &Rgba, out: &mut u8) {
//!         *out = ((px.r as u32 * 77 + px.g as u32 * 150 + px.b as u32 * 29) / 256) as u8;
//!     }
//! }
//!
//! let pixels = [Rgba { r: 255, g: 255, b: 255, a: 255 }, Rgba { r: 0, g: 0, b: 0, a: 255 }];
//! let mut gray = [0u8; 2];
//! luma.run(Cpu, &HostMdspan::<Rgba, 1>::from_slice(&pixels, [2])?, &mut HostMdspanMut::<u8, 1>::from_slice(&mut gray, [2])?)?;
//! assert_eq!(gray, [255, 0]);
//!
//! let x = [f16::from_f32(0.25), f16::from_f32(-1.0)];
//! let mut out = [f16::ZERO; 2];
//! gamma.run(Cpu, f16::from_f32(2.0), &HostMdspan::<f16, 1>::from_slice(&x, [2])?, &mut HostMdspanMut::<f16, 1>::from_slice(&mut out, [2])?)?;
//! assert_eq!(out, [f16::from_f32(0.0625), f16::ZERO]);
//! # Ok::<(), dlspan::DlpackError>(())
//! ```
//!
//! # The rules
//!
//! Views are passed as `&view` (read) and `&mut view` (written): the same mutable view twice does
//! not compile. [`Cpu`] takes host and managed views, a stream device and managed views: a host
//! view on a stream is a compile error, a view of another device a typed error. Written views have
//! the shape of the first one; read views broadcast to it (fewer axes, or axes of extent 1), any
//! other shape is [`DlpackError::KernelShapeMismatch`](crate::DlpackError::KernelShapeMismatch),
//! naming the view, before anything is written. After a launch on managed views, host access waits for the kernel. Section
//! [K](crate::rules#k) of the rules page has every rule.
//!
//! # Derivatives
//!
//! `#[differentiable]` on a kernel derives its backward and its tangent as two more kernels, and a
//! `check_gradients` method that compares them with finite differences ([`check_gradients`],
//! [`GradientCheck`]); [`elementwise!`](crate::elementwise) shows them, section
//! [G](crate::rules#g) of the rules page has the rules.
//!
//! # Raw kernels
//!
//! [`kernel!`](crate::kernel!) declares a kernel with a Rust signature — read views `&[T; R]`,
//! written views `&mut [T; R]`, scalars — and a CUDA C++ body (a string literal or
//! `include_str!("file.cu")`). In the body each view is a `dl::view` of the shipped header
//! [`HEADER`] mirroring the view's Rust type: `x(i, j)`, `x.extent(0)`, `x.stride(1)`, `x.size()`,
//! static extents as compile-time constants, `const` elements for `&` views; type parameters are C++
//! template parameters. `__shared__`, `__syncthreads()`, atomics and dynamic shared memory
//! (`dl::shared_memory<T>()`) work. `unsafe kernel.launch(on, config, args..)` runs it with an
//! explicit [`LaunchConfig`] on [`Cpu`] (host and managed views: the host C++ compiler, blocks in
//! parallel on OS threads, a block's threads as fibers meeting at `__syncthreads()`) or on a
//! `&cuda::Stream` (device and managed views: NVRTC, asynchronous, ordered like element-wise
//! launches). The launch is `unsafe` because the body is C++ that Rust does not check.
//!
//! ```
//! use dlspan::kernel::{Cpu, LaunchConfig};
//! use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft};
//!
//! dlspan::kernel! {
//!     /// Sums each row of `x` into `sums` with one block per row and a shared-memory reduction.
//!     fn row_sums(x: &[f64; 2], sums: &mut [f64; 1]) {
//!         r#"
//!         __shared__ double part[64];
//!         double s = 0;
//!         for (dl::index_t j = threadIdx.x; j < x.extent(1); j += blockDim.x) s += x(blockIdx.x, j);
//!         part[threadIdx.x] = s;
//!         __syncthreads();
//!         if (threadIdx.x == 0) {
//!           double total = 0;
//!           for (unsigned k = 0; k < blockDim.x; ++k) total += part[k];
//!           sums(blockIdx.x) = total;
//!         }
//!         "#
//!     }
//! }
//!
//! // A column-major 3×4 matrix: the C++ view indexes it by its layout.
//! let x: Vec<f64> = (0..12).map(f64::from).collect();
//! let mut sums = [0.0; 3];
//! let x = HostMdspan::<f64, 2, LayoutLeft>::from_slice(&x, [3, 4])?;
//! // SAFETY: the body reads `x` within its extents and writes `sums(blockIdx.x)` for the 3 blocks.
//! unsafe {
//!     row_sums.launch(Cpu, LaunchConfig::new([3, 1, 1], [64, 1, 1]), &x, &mut HostMdspanMut::<f64, 1>::from_slice(&mut sums, [3])?)?;
//! }
//! assert_eq!(sums, [18.0, 22.0, 26.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Section [K](crate::rules#k) of the rules page has the raw kernels' rules (K7 to K9). Modules
//! NVRTC compiles for a stream, raw and element-wise, are kept on disk across processes
//! ([K10](crate::rules#k10)), and so are the libraries the host C++ compiler builds of raw kernels
//! for [`Cpu`] ([K9](crate::rules#k9)): both under one directory, `$DLSPAN_CACHE_DIR` ([`CACHE_ENV`];
//! `off` disables both), else `$XDG_CACHE_HOME/dlspan` or `~/.cache/dlspan` — the PTX in its
//! `kernels/`, the CPU's libraries in its `cpu/` — used only when it is the user's own
//! ([K11](crate::rules#k11)).

#[doc(hidden)]
pub mod builtin;
mod cachedir;
mod ctype;
pub(crate) mod cxx;
mod def;
mod dispatch;
mod gradients;
mod host;
mod math;
mod operand;
mod private;
mod raw;
mod scalar;
#[doc(hidden)]
pub mod signature;
mod stacks;
pub(crate) mod threads;
mod vectors;

pub use cachedir::CACHE_ENV;
#[doc(hidden)]
pub use cachedir::fnv1a_128;
#[cfg(feature = "cuda")]
pub(crate) use cachedir::{cache_root_in, open_cache};
pub use ctype::{ElementType, ScalarType};
#[doc(hidden)]
pub use cxx::prepare;
#[doc(hidden)]
pub use def::{Call, Declared, ElementwiseDef, Param, ParamKind, TypeInfo, scalar_bytes};
pub use def::{Instance, MAX_VIEWS};
pub use dispatch::{FloatVisitor, ScalarVisitor, dispatch_float, dispatch_scalar};
pub use gradients::{
    BackwardFn, Derivative, Functions, GradientCheck, GradientMismatch, GradientReport, TangentFn, check_gradients,
};
pub use host::Cpu;
#[cfg(feature = "cuda")]
pub(crate) use host::host_operands;
#[cfg(feature = "cuda")]
pub(crate) use operand::sealed;
pub(crate) use operand::widen;
#[doc(hidden)]
pub use operand::{Body, Bound, Element, Operand, RawOperand, ViewArgs, ViewRef, broadcast};
pub use operand::{Executor, Read, Write};
#[doc(hidden)]
pub use operand::{RawArg, argument_block};
#[cfg(feature = "cuda")]
pub(crate) use private::{publish, read_private, write_new};
pub use raw::{
    HEADER, INCLUDE_DIR, KernelError, LaunchConfig, MAX_ARGUMENT_BYTES, MAX_RAW_RANK, MAX_SHARED_BYTES, RawInstance,
    RawView, ViewType,
};
#[doc(hidden)]
pub use raw::{RawDef, RawKind, RawParam};
pub use scalar::{Cast, Compare, Float, Scalar};
#[doc(hidden)]
pub use scalar::{Unary, WideLiteral, ops};
pub use threads::{PARALLEL_ELEMENTS, THREADS_ENV, num_threads, set_num_threads};
pub use vectors::{CpuVectors, VECTORS_ENV, cpu_vectors, set_max_cpu_vectors};
