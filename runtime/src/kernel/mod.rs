//! User kernels: element-wise kernels written once, in Rust syntax, run on the CPU and on CUDA
//! streams.
//!
//! TODO: module documentation.

#[doc(hidden)]
pub mod builtin;
mod def;
mod host;
mod operand;
mod scalar;

pub use def::{Call, ElementwiseDef, Instance, MAX_VIEWS, Param, ParamKind, TypeInfo, scalar_bytes};
pub use host::Cpu;
pub use operand::{Executor, Operand, RawOperand, Read, ViewArgs, ViewRef, Write, broadcast};
#[cfg(feature = "cuda")]
pub(crate) use operand::{sealed, widen};
pub use scalar::{Cast, Compare, Float, Scalar, Unary, ops};
