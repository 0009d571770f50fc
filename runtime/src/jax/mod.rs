//! JAX kernels in Rust (feature `jax`): element-wise kernels and functions over whole arrays as
//! XLA FFI handlers, called inside `jax.jit`, under `vmap` and `grad`, with no Python written by
//! hand.
//!
//! - `#[jax]` on an [`elementwise!`](crate::elementwise!) kernel derives its handlers: the CPU one
//!   (the body's Rust on host views) and, with feature `cuda`, the CUDA one (the body's CUDA
//!   translation on XLA's stream, no device synchronisation). XLA's buffers are dense and
//!   row-major: each becomes the kernel's typed view under dlspan's import rules, after checks
//!   that name the parameter (dtypes, NumPy broadcasting, results' shapes, no aliasing); scalars
//!   are XLA attributes of their names ([rules X1–X5](crate::rules#x1)).
//! - With feature `python`, [`register_module`] registers a module's kernels with JAX
//!   (`jax.ffi.register_ffi_target`) and adds one Python function per kernel, which calls
//!   `jax.ffi.ffi_call` with the results' shapes and dtypes derived from the declaration, and
//!   `vmap_method="expand_dims"` (the kernel broadcasts the batch axis itself; `broadcast_all`
//!   for a `strict` kernel).
//! - A kernel that is not element-wise (a reduction, a softmax, a product) is a [`Function`]:
//!   its parameters by name, a Rust shape function for its results, a CPU (and CUDA) kernel over
//!   typed views taken from the [`Call`], and optionally a backward function for `jax.grad`,
//!   registered with [`function`] ([rule X6](crate::rules#x6)).
//! - An error becomes the `XLA_FFI_Error` the handler returns, with dlspan's message (JAX raises
//!   it); a panic is caught first. Nothing unwinds into XLA.
//!
//! ```no_run
//! use dlspan::kernel::Float;
//! use dlspan::pyo3::prelude::*;
//!
//! dlspan::elementwise! {
//!     /// GELU (tanh form) of `x + b`, `b` broadcast.
//!     #[jax]
//!     fn gelu_bias<T: Float>(x: &T, b: &T, out: &mut T) {
//!         let v = *x + *b;
//!         *out = 0.5 * v * (1.0 + (0.7978845608 * (v + 0.044715 * v * v * v)).tanh());
//!     }
//! }
//!
//! // In Python: `import my_ext; jax.jit(my_ext.gelu_bias)(x, b)`.
//! #[pymodule(crate = "dlspan::pyo3")]
//! fn my_ext(m: &Bound<'_, PyModule>) -> PyResult<()> {
//!     dlspan::jax::register_module(m, "my_ext", &[dlspan::jax::kernel::<gelu_bias>()])
//! }
//! ```
#[doc(hidden)]
pub mod elementwise;
mod error;
mod ffi;
mod frame;
mod function;
#[cfg(feature = "python")]
mod python;

pub use error::JaxError;
pub use ffi::{Handler, XlaFfiCallFrame, XlaFfiError};
pub use function::{ArrayType, Call, Function, Param, Shapes, Vmap};
#[cfg(feature = "python")]
pub use python::{Registration, function, kernel, register_module};

#[cfg(test)]
mod tests;
