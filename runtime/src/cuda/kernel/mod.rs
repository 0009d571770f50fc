//! How dlspan's kernels are made: CUDA C++ generated from the operation and the element types
//! ([`ModuleKey`], [`ElementType`]), planned for a launch ([`plan()`]: axes merged, a
//! [`KernelShape`] and an [`IndexWidth`] chosen, the [`Params`] block filled), and compiled by
//! NVRTC ([`compile_ptx`]) once per (operation, element types) and device.
//!
//! Not the user API (`Stream`'s operations are): this module is public, and hidden from the
//! documentation, so that the test tiers run the very steps the runtime takes (the NVRTC tier
//! compiles every module, the host-logic tier builds the generated source for the CPU and runs
//! real plans through it), and so that readers of the generated code can print it.
//!
//! Files, bottom to top (how kernels see an element type is `kernel::ctype`, below): `cast` (the
//! conversions of cast kernels), `module` ([`ModuleKey`]: which operations have kernels for which
//! types, raw kernels' modules included), `plan` (launch planning, pure arithmetic), `source` (the
//! copy and cast generator, over the device header `../include/dlspan.cuh`),
//! `elementwise` (the modules of element-wise kernels, over `elementwise.cu`), `program` (any module's
//! source, names and shapes), `compile` (NVRTC, the one place it runs), `disk` (the PTX cache shared by processes), `cache`
//! (the modules compiled in this process, by key). The launch ABI they share (operations, kernel shapes, index widths, limits, the
//! parameter block) is `cuda/abi.rs`, below the error type.

mod cache;
mod cast;
mod compile;
mod disk;
mod elementwise;
mod module;
mod plan;
mod program;
mod source;

pub use super::abi::{
    BLOCK, IndexWidth, KernelShape, MAX_OPERANDS, ParamOperand, Params, SCALAR_BYTES, ScalarArgs, TILE,
    TILE_MAX_ELEMENT,
};
pub use crate::kernel::fnv1a_128;
pub use crate::kernel::{ElementType, ScalarType};
pub use cache::{FunctionTable, KeyHasher, ModuleCache};
pub use compile::{
    CompileInput, Compiled, Origin, compile_ptx, compile_ptx_with, compile_source, elementwise_ptx, nvrtc_version,
    preamble, raw_ptx,
};
pub use disk::{CACHE_ENV, CacheKey, DiskCache};
pub use module::ModuleKey;
pub use plan::{
    MAX_GRID, Operand, Plan, SUM_BLOCKS, TILE_MIN_EXTENT, elementwise_plan, elementwise_plan_into, plan, plan_into,
    plan_with, prepare, prepare_into, sum_plans,
};

pub(crate) use compile::compile;
