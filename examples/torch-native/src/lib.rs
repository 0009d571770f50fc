//! PyTorch operators written in Rust and registered with PyTorch's dispatcher through LibTorch's
//! stable C ABI: no PyO3, no Python, no torch at build time. In Python:
//!
//! ```python
//! import torch
//! torch.ops.load_library("target/debug/libdlspan_torch_native.so")
//! y = torch.ops.dlspan_native.gelu_bias(x, b)
//! ```
//!
//! Element-wise kernels become operators with one attribute, `#[torch("ns::name")]`: the schema,
//! the checks, the Meta kernel (for `torch.compile`, `export` and `opcheck`) and the CPU (and,
//! with dlspan's `cuda` feature, CUDA) kernels follow from the signature.
//!
//! - `gelu_bias(Tensor x, Tensor b) -> Tensor`: GELU (tanh form) of `x + b`, broadcast (any float
//!   dtype, any rank and strides);
//! - `scale_(Tensor(a!) x, float s) -> ()`: `x *= s` in place;
//! - `axpy_(Tensor(a!) y, Tensor x, float a) -> ()`: `y += a * x` in place (`x` broadcast);
//! - `add_clamped(Tensor x, Tensor y, int lo) -> Tensor`: `max(x + y, lo)` over integer and float
//!   dtypes;
//! - `sincos(Tensor x) -> (Tensor, Tensor)`: two results;
//! - `fails(Tensor x, bool panic) -> Tensor`: an operator written by hand ([`Operator`]): an
//!   error, or a panic (the tests' proof that both reach Python as exceptions).

use dlspan::HostMdspan;
use dlspan::kernel::{Float, Scalar};
use dlspan::torch::{Call, Operator, Tensor, TorchError};

dlspan::elementwise! {
    /// GELU, tanh approximation, of `x + b`.
    #[torch("dlspan_native::gelu_bias")]
    fn gelu_bias<T: Float>(x: &T, b: &T, out: &mut T) {
        let v = *x + *b;
        *out = 0.5 * v * (1.0 + (0.7978845608028654 * (v + 0.044715 * v * v * v)).tanh());
    }
}

dlspan::elementwise! {
    /// `x *= s`, in place.
    #[torch("dlspan_native::scale_")]
    fn scale_<T: Float>(x: &mut T, s: T) {
        *x = *x * s;
    }
}

dlspan::elementwise! {
    /// `y += a * x`, in place.
    #[torch("dlspan_native::axpy_")]
    fn axpy_<T: Float>(y: &mut T, x: &T, a: T) {
        *y = *y + a * *x;
    }
}

dlspan::elementwise! {
    /// `max(x + y, lo)`, for every integer and float dtype.
    #[torch("dlspan_native::add_clamped")]
    fn add_clamped<T: Scalar>(x: &T, y: &T, lo: i32, out: &mut T) {
        *out = (*x + *y).max(lo as T);
    }
}

dlspan::elementwise! {
    /// `sin(x)` and `cos(x)`.
    #[torch("dlspan_native::sincos")]
    fn sincos<T: Float>(x: &T, sin: &mut T, cos: &mut T) {
        *sin = (*x).sin();
        *cos = (*x).cos();
    }
}

/// Fails: an error, or a panic.
pub struct FailsOp;

impl Operator for FailsOp {
    const NAME: &'static str = "dlspan_native::fails";
    const SCHEMA: &'static str = "(Tensor x, bool panic) -> Tensor";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        if call.bool("panic")? {
            panic!("a deliberate panic in the kernel");
        }
        let _: HostMdspan<'_, i64, 3> = call.tensor("x")?.view()?;
        Err("unreachable: x is never an int64 rank-3 tensor in the tests".into())
    }

    fn meta(call: &mut Call) -> Result<(), TorchError> {
        let out = Tensor::empty_like(call.tensor("x")?)?;
        call.ret(out);
        Ok(())
    }
}

dlspan::torch_library!("dlspan_native", [gelu_bias, scale_, axpy_, add_clamped, sincos, FailsOp]);
