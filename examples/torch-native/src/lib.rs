//! PyTorch operators written in Rust and registered with PyTorch's dispatcher through LibTorch's
//! stable C ABI: no PyO3, no Python, no torch at build time. In Python:
//!
//! ```python
//! import torch
//! torch.ops.load_library("target/debug/libdlspan_torch_native.so")
//! y = torch.ops.dlspan_native.gelu_bias(x, b)
//! ```
//!
//! - `gelu_bias(Tensor x, Tensor b) -> Tensor`: GELU (tanh form) of `x + b`, `b` a bias over the
//!   last axis of `x` (any float dtype, `x` of rank 1 to 4, any strides);
//! - `scale_(Tensor(a!) x, float s) -> ()`: `x *= s` in place;
//! - `axpy_(Tensor(a!) y, Tensor x, float a) -> ()`: `y += a * x` in place (`x` broadcast);
//! - `fails(Tensor x, bool panic) -> Tensor`: an error, or a panic (the tests' proof that both
//!   reach Python as exceptions).

use dlspan::kernel::{Cpu, Float, FloatVisitor, dispatch_float};
use dlspan::torch::{Call, Device, Operator, Tensor, TorchError};
use dlspan::{HostMdspan, HostMdspanMut, LayoutStride, LayoutStrideRelaxed};

dlspan::elementwise! {
    /// GELU, tanh approximation, of `x + b`.
    fn gelu_bias_kernel<T: Float>(x: &T, b: &T, out: &mut T) {
        let v = *x + *b;
        *out = 0.5 * v * (1.0 + (0.7978845608028654 * (v + 0.044715 * v * v * v)).tanh());
    }
}

dlspan::elementwise! {
    /// `x *= s`.
    fn scale_kernel<T: Float>(x: &mut T, s: T) {
        *x = *x * s;
    }
}

dlspan::elementwise! {
    /// `y += a * x`.
    fn axpy_kernel<T: Float>(y: &mut T, x: &T, a: T) {
        *y = *y + a * *x;
    }
}

/// The checks both kernels of `gelu_bias` make: the same dtype, `x` of rank 1 to 4, `b` a vector
/// of `x`'s last extent.
fn check_gelu_bias(x: &Tensor, b: &Tensor) -> Result<(), TorchError> {
    if x.dtype() != b.dtype() {
        return Err(TorchError::Kernel(format!(
            "argument `b` has dtype {}; argument `x` has {}: they must match",
            b.dtype().map_or_else(|| format!("code {}", b.dtype_code()), |d| d.to_string()),
            x.dtype().map_or_else(|| format!("code {}", x.dtype_code()), |d| d.to_string())
        )));
    }
    if !(1..=4).contains(&x.dim()) {
        return Err(TorchError::Kernel(format!("argument `x` has rank {}: gelu_bias takes rank 1 to 4", x.dim())));
    }
    if b.dim() != 1 || b.sizes()[0] != *x.sizes().last().unwrap_or(&0) {
        return Err(TorchError::Kernel(format!(
            "argument `b` has shape {:?}: it must be a vector of x's last extent ({:?})",
            b.sizes(),
            x.sizes().last()
        )));
    }
    if x.device() != b.device() {
        return Err(TorchError::Kernel(format!("argument `b` is on {}, `x` on {}", b.device(), x.device())));
    }
    Ok(())
}

/// `gelu_bias` over element type `T` (the rank is matched inside).
struct GeluBias<'a> {
    x: &'a Tensor,
    b: &'a Tensor,
    out: &'a mut Tensor,
}

impl GeluBias<'_> {
    fn run<T: Float, const R: usize>(self) -> Result<(), TorchError> {
        let x: HostMdspan<'_, T, R, LayoutStrideRelaxed> = self.x.view()?;
        let b: HostMdspan<'_, T, 1, LayoutStrideRelaxed> = self.b.view()?;
        let mut out: HostMdspanMut<'_, T, R> = self.out.view_mut()?;
        gelu_bias_kernel.run(Cpu, &x, &b, &mut out)?;
        Ok(())
    }
}

impl FloatVisitor for GeluBias<'_> {
    type Output = Result<(), TorchError>;
    fn visit<T: Float, const R0: usize>(self) -> Self::Output {
        match self.x.dim() {
            1 => self.run::<T, 1>(),
            2 => self.run::<T, 2>(),
            3 => self.run::<T, 3>(),
            4 => self.run::<T, 4>(),
            rank => Err(TorchError::Kernel(format!("argument `x` has rank {rank}"))),
        }
    }
}

/// The float dtype of `t`, or an error naming it.
fn float_dtype(t: &Tensor) -> Result<dlspan::ffi::DLDataType, TorchError> {
    t.dtype().ok_or_else(|| TorchError::Kernel(format!("argument `{}` has no DLPack dtype", t.name())))
}

/// GELU of `x + b`.
pub struct GeluBiasOp;

impl Operator for GeluBiasOp {
    const NAME: &'static str = "dlspan_native::gelu_bias";
    const SCHEMA: &'static str = "(Tensor x, Tensor b) -> Tensor";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        let (x, b) = (call.tensor("x")?, call.tensor("b")?);
        check_gelu_bias(x, b)?;
        let mut out = Tensor::empty_like(x)?;
        dispatch_float(float_dtype(x)?, 0, GeluBias { x, b, out: &mut out })
            .map_err(|error| TorchError::Argument { name: "x".into(), error })??;
        call.ret(out);
        Ok(())
    }

    fn meta(call: &mut Call) -> Result<(), TorchError> {
        let (x, b) = (call.tensor("x")?, call.tensor("b")?);
        check_gelu_bias(x, b)?;
        let out = Tensor::empty(x.sizes(), float_dtype(x)?, Device::Meta)?;
        call.ret(out);
        Ok(())
    }
}

/// `scale_` and `axpy_` over element type `T` and rank `R` of the written tensor.
enum InPlace<'a> {
    Scale { x: &'a mut Tensor, s: f64 },
    Axpy { y: &'a mut Tensor, x: &'a Tensor, a: f64 },
}

impl FloatVisitor for InPlace<'_> {
    type Output = Result<(), TorchError>;
    fn visit<T: Float, const R: usize>(self) -> Self::Output {
        match self {
            Self::Scale { x, s } => {
                let mut view: HostMdspanMut<'_, T, R, LayoutStride> = x.view_mut()?;
                scale_kernel.run(Cpu, &mut view, dlspan::dtype::cast::<f64, T>(s))?;
            }
            Self::Axpy { y, x, a } => {
                let x: HostMdspan<'_, T, R, LayoutStrideRelaxed> = x.view()?;
                let mut view: HostMdspanMut<'_, T, R, LayoutStride> = y.view_mut()?;
                axpy_kernel.run(Cpu, &mut view, &x, dlspan::dtype::cast::<f64, T>(a))?;
            }
        }
        Ok(())
    }
}

/// `x *= s` in place.
pub struct ScaleOp;

impl Operator for ScaleOp {
    const NAME: &'static str = "dlspan_native::scale_";
    const SCHEMA: &'static str = "(Tensor(a!) x, float s) -> ()";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        let s = call.float("s")?;
        let x = call.tensor_mut("x")?;
        let (dtype, rank) = (float_dtype(x)?, x.dim());
        dispatch_float(dtype, rank, InPlace::Scale { x, s })
            .map_err(|error| TorchError::Argument { name: "x".into(), error })?
    }

    fn meta(_: &mut Call) -> Result<(), TorchError> {
        Ok(())
    }
}

/// `y += a * x` in place.
pub struct AxpyOp;

impl Operator for AxpyOp {
    const NAME: &'static str = "dlspan_native::axpy_";
    const SCHEMA: &'static str = "(Tensor(a!) y, Tensor x, float a) -> ()";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        let a = call.float("a")?;
        // Two arguments at once: `x` is owned by the call as well; read it through a handle of
        // its own (`tensor` borrows the call shared, `tensor_mut` uniquely).
        let x = call.take("x")?;
        let y = call.tensor_mut("y")?;
        if x.dim() != y.dim() || x.dtype() != y.dtype() {
            return Err(TorchError::Kernel("argument `x` must have y's rank and dtype".into()));
        }
        let (dtype, rank) = (float_dtype(y)?, y.dim());
        dispatch_float(dtype, rank, InPlace::Axpy { y, x: &x, a })
            .map_err(|error| TorchError::Argument { name: "y".into(), error })?
    }

    fn meta(_: &mut Call) -> Result<(), TorchError> {
        Ok(())
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

dlspan::torch_library!("dlspan_native", [GeluBiasOp, ScaleOp, AxpyOp, FailsOp]);
