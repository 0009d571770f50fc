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
//!   dtype, any rank and strides), differentiable: its gradients are `gelu_bias_backward`'s, an
//!   operator too, wired into autograd when the library is loaded into Python;
//! - `gelu_bias_auto(Tensor x, Tensor b) -> Tensor`: the same GELU written once, its backward
//!   derived by `#[differentiable]` (`gelu_bias_auto_backward`);
//! - `softplus_auto(Tensor x, float beta) -> Tensor`: softplus, its backward derived;
//! - `math_auto(Tensor x, Tensor y, int which) -> Tensor`: each math function, its backward
//!   derived;
//! - `silu(Tensor x) -> Tensor`: SiLU, differentiable (`silu_backward`);
//! - `scale_(Tensor(a!) x, float s) -> ()`: `x *= s` in place;
//! - `axpy_(Tensor(a!) y, Tensor x, float a) -> ()`: `y += a * x` in place (`x` broadcast);
//! - `add_clamped(Tensor x, Tensor y, int lo) -> Tensor`: `max(x + y, lo)` over integer and float
//!   dtypes;
//! - `mul_same(Tensor x, Tensor y) -> Tensor`: `x · y` of one shape (`strict`: no broadcasting);
//! - `sincos(Tensor x) -> (Tensor, Tensor)`: two results;
//! - `reduce(Tensor x, Tensor? weight=None, str mode="sum", float? scale=None) -> Tensor`: an
//!   operator written by hand ([`Operator`]) over optional and text arguments;
//! - `exp_body`, `tanh_body`, `sigmoid_body` (`(Tensor x) -> Tensor`) and `fma_body`
//!   (`(Tensor x, Tensor y, Tensor z) -> Tensor`, `x · y + z`): the bodies the benchmark times beside
//!   `torch.exp`, `torch.tanh`, `torch.sigmoid` and `torch.addcmul`;
//! - `fails(Tensor x, bool panic) -> Tensor`: an operator written by hand ([`Operator`]): an
//!   error, or a panic (the tests' proof that both reach Python as exceptions).

use dlspan::HostMdspan;
use dlspan::kernel::{Float, FloatVisitor, Scalar, dispatch_float};
use dlspan::torch::{Call, Device, Operator, Tensor, TorchError};

dlspan::elementwise! {
    /// GELU, tanh approximation, of `x + b`.
    #[torch("dlspan_native::gelu_bias", backward = gelu_bias_backward)]
    fn gelu_bias<T: Float>(x: &T, b: &T, out: &mut T) {
        let v = *x + *b;
        *out = 0.5 * v * (1.0 + (0.7978845608028654 * (v + 0.044715 * v * v * v)).tanh());
    }
}

dlspan::elementwise! {
    /// The gradients of `gelu_bias` from the result's, `grad`: `grad · gelu'(x + b)` for `x` and
    /// for `b` (summed over the axes `b` is broadcast along).
    #[torch("dlspan_native::gelu_bias_backward")]
    fn gelu_bias_backward<T: Float>(x: &T, b: &T, grad: &T, grad_x: &mut T, grad_b: &mut T) {
        let v = *x + *b;
        let k: T = 0.7978845608028654;
        let t = (k * (v + 0.044715 * v * v * v)).tanh();
        let d = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k * (1.0 + 0.134145 * v * v);
        *grad_x = *grad * d;
        *grad_b = *grad * d;
    }
}

dlspan::elementwise! {
    /// GELU (tanh form) of `x + b`, written once: `#[differentiable]` derives its backward and
    /// its tangent (`gelu_bias_auto_backward` and `gelu_bias_auto_tangent`, operators registered
    /// with it, wired into autograd in reverse and forward mode).
    #[differentiable]
    #[torch("dlspan_native::gelu_bias_auto")]
    fn gelu_bias_auto<T: Float>(x: &T, b: &T, out: &mut T) {
        let v = *x + *b;
        *out = 0.5 * v * (1.0 + (0.7978845608028654 * (v + 0.044715 * v * v * v)).tanh());
    }
}

dlspan::elementwise! {
    /// Softplus with a sharpness `beta` (a scalar, not differentiated), linear above a threshold
    /// as PyTorch's is: `#[differentiable]` derives the backward of both branches.
    #[differentiable]
    #[torch("dlspan_native::softplus_auto")]
    fn softplus_auto<T: Float>(x: &T, beta: T, out: &mut T) {
        let z = *x * beta;
        if z > 20.0 {
            *out = *x;
        } else {
            *out = (1.0 + z.exp()).ln() / beta;
        }
    }
}

dlspan::elementwise! {
    /// One math function or operation of `x` (and `y`) by `which`, its backward derived: the
    /// tests check each against PyTorch's autograd of the same function.
    #[differentiable]
    #[torch("dlspan_native::math_auto")]
    fn math_auto<T: Float>(x: &T, y: &T, which: i64, out: &mut T) {
        if which == 0 {
            *out = x.sqrt();
        } else if which == 1 {
            *out = x.exp();
        } else if which == 2 {
            *out = x.exp2();
        } else if which == 3 {
            *out = x.ln();
        } else if which == 4 {
            *out = x.log2();
        } else if which == 5 {
            *out = x.log10();
        } else if which == 6 {
            *out = x.sin();
        } else if which == 7 {
            *out = x.cos();
        } else if which == 8 {
            *out = x.tan();
        } else if which == 9 {
            *out = x.tanh();
        } else if which == 10 {
            *out = (*x - 1.0).abs();
        } else if which == 11 {
            *out = x.min(*y);
        } else if which == 12 {
            *out = x.max(*y);
        } else if which == 13 {
            *out = x.powf(*y);
        } else if which == 14 {
            *out = x.mul_add(*y, *x);
        } else if which == 15 {
            *out = *x / *y;
        } else {
            *out = (*x * 3.0) % *y;
        }
    }
}

dlspan::elementwise! {
    /// SiLU, `x · sigmoid(x)`.
    #[torch("dlspan_native::silu", backward = silu_backward)]
    fn silu<T: Float>(x: &T, out: &mut T) {
        *out = *x / (1.0 + (-*x).exp());
    }
}

dlspan::elementwise! {
    /// The gradient of `silu`: `grad · s · (1 + x · (1 − s))`, `s = sigmoid(x)`.
    #[torch("dlspan_native::silu_backward")]
    fn silu_backward<T: Float>(x: &T, grad: &T, grad_x: &mut T) {
        let s = 1.0 / (1.0 + (-*x).exp());
        *grad_x = *grad * s * (1.0 + *x * (1.0 - s));
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
    /// `x · y`, of tensors of one shape: `strict` refuses broadcasting.
    #[torch("dlspan_native::mul_same", strict)]
    fn mul_same<T: Scalar>(x: &T, y: &T, out: &mut T) {
        *out = *x * *y;
    }
}

dlspan::elementwise! {
    /// `x + s`: `s` is a `float` of the schema, converted exactly to the tensor's dtype (an
    /// integer tensor takes whole values in its range only).
    #[torch("dlspan_native::shift")]
    fn shift<T: Scalar>(x: &T, s: T, out: &mut T) {
        *out = *x + s;
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

/// `reduce(Tensor x, Tensor? weight=None, str mode="sum", float? scale=None) -> Tensor`: the sum
/// (`mode="sum"`) or the mean (`"mean"`) of `x`, weighted by `weight` (of `x`'s shape) when given,
/// times `scale` when given: an operator written by hand over optional and text arguments.
pub struct ReduceOp;

/// What `reduce` computes, read from its arguments (the checks of both kernels).
struct Reduction<'c> {
    x: &'c Tensor,
    weight: Option<&'c Tensor>,
    mean: bool,
    scale: f64,
}

impl<'c> Reduction<'c> {
    fn read(call: &'c Call) -> Result<Self, TorchError> {
        let x = call.tensor("x")?;
        let weight = call.optional_tensor("weight")?;
        if let Some(w) = weight.filter(|w| w.sizes() != x.sizes() || w.dtype() != x.dtype()) {
            return Err(TorchError::Kernel(format!(
                "argument `weight` has shape {:?} and dtype {:?}: it must have x's, {:?} and {:?}",
                w.sizes(),
                w.dtype(),
                x.sizes(),
                x.dtype()
            )));
        }
        let mean = match call.str("mode")? {
            "sum" => false,
            "mean" => true,
            other => return Err(TorchError::Kernel(format!("argument `mode` is {other:?}: \"sum\" or \"mean\""))),
        };
        Ok(Self { x, weight, mean, scale: call.optional_float("scale")?.unwrap_or(1.0) })
    }
}

impl FloatVisitor for &Reduction<'_> {
    type Output = Result<f64, TorchError>;
    fn visit<T: Float, const R: usize>(self) -> Self::Output {
        let x: HostMdspan<'_, T, R, dlspan::LayoutStrideRelaxed> = self.x.view()?;
        let mut total = 0.0f64;
        match self.weight {
            Some(w) => {
                let w: HostMdspan<'_, T, R, dlspan::LayoutStrideRelaxed> = w.view()?;
                for (a, b) in x.iter().zip(w.iter()) {
                    total += dlspan::dtype::cast::<T, f64>(*a) * dlspan::dtype::cast::<T, f64>(*b);
                }
            }
            None => x.iter().for_each(|a| total += dlspan::dtype::cast::<T, f64>(*a)),
        }
        if self.mean {
            total /= self.x.numel() as f64;
        }
        Ok(total * self.scale)
    }
}

/// Writes `value` into the 0-d tensor `out` of element type `T`.
struct Store<'t>(&'t mut Tensor, f64);

impl FloatVisitor for Store<'_> {
    type Output = Result<(), TorchError>;
    fn visit<T: Float, const R: usize>(self) -> Self::Output {
        let mut out: dlspan::HostMdspanMut<'_, T, 0> = self.0.view_mut()?;
        out[[]] = dlspan::dtype::cast::<f64, T>(self.1);
        Ok(())
    }
}

impl Operator for ReduceOp {
    const NAME: &'static str = "dlspan_native::reduce";
    const SCHEMA: &'static str = "(Tensor x, Tensor? weight=None, str mode=\"sum\", float? scale=None) -> Tensor";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        let reduction = Reduction::read(call)?;
        let dtype = reduction.x.dtype().ok_or("argument `x` has no DLPack dtype")?;
        let value = dispatch_float(dtype, reduction.x.dim(), &reduction)
            .map_err(|error| TorchError::Argument { name: "x".into(), error })??;
        let mut out = Tensor::empty(&[], dtype, Device::Cpu)?;
        dispatch_float(dtype, 0, Store(&mut out, value))
            .map_err(|error| TorchError::Argument { name: "x".into(), error })??;
        call.ret(out);
        Ok(())
    }

    fn meta(call: &mut Call) -> Result<(), TorchError> {
        let reduction = Reduction::read(call)?;
        let dtype = reduction.x.dtype().ok_or("argument `x` has no DLPack dtype")?;
        dispatch_float(dtype, reduction.x.dim(), FloatOnly)
            .map_err(|error| TorchError::Argument { name: "x".into(), error })?;
        let out = Tensor::empty(&[], dtype, Device::Meta)?;
        call.ret(out);
        Ok(())
    }
}

/// Checks that a dtype is a float one (the Meta kernel's share of the CPU kernel's dispatch).
struct FloatOnly;

impl FloatVisitor for FloatOnly {
    type Output = ();
    fn visit<T: Float, const R: usize>(self) {}
}

/// `conj_copy(Tensor x) -> Tensor`: a compact copy of a complex64 vector, as the kernel reads it
/// (the tests' proof that the dispatcher hands a kernel a conjugate view's values).
pub struct ConjCopyOp;

impl Operator for ConjCopyOp {
    const NAME: &'static str = "dlspan_native::conj_copy";
    const SCHEMA: &'static str = "(Tensor x) -> Tensor";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        type C32 = dlspan::num_complex::Complex<f32>;
        let x: HostMdspan<'_, C32, 1, dlspan::LayoutStrideRelaxed> = call.tensor("x")?.view()?;
        let mut out = Tensor::empty_like(call.tensor("x")?)?;
        {
            let mut o: dlspan::HostMdspanMut<'_, C32, 1> = out.view_mut()?;
            for i in 0..x.extent(0) {
                o[[i]] = x[[i]];
            }
        }
        call.ret(out);
        Ok(())
    }

    fn meta(call: &mut Call) -> Result<(), TorchError> {
        let out = Tensor::empty_like(call.tensor("x")?)?;
        call.ret(out);
        Ok(())
    }
}

/// `fresh(Tensor like) -> Tensor`: a new float32 vector of `like`'s element count as a kernel first reads it,
/// after a tensor of the same size was filled and freed (libtorch's allocator hands its memory
/// back uninitialised): the tests' proof that `Tensor::empty` reads as zeros on the CPU.
pub struct FreshOp;

impl Operator for FreshOp {
    const NAME: &'static str = "dlspan_native::fresh";
    const SCHEMA: &'static str = "(Tensor like) -> Tensor";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        let n = call.tensor("like")?.sizes().iter().product::<i64>();
        let dtype = dlspan::dtype::dtype_of::<f32>();
        for _ in 0..4 {
            let mut used = Tensor::empty(&[n], dtype, Device::Cpu)?;
            let mut view: dlspan::HostMdspanMut<'_, f32, 1> = used.view_mut()?;
            view.iter_mut().for_each(|v| *v = 7.0);
        }
        let mut out = Tensor::empty(&[n], dtype, Device::Cpu)?;
        {
            // What the kernel reads before writing: each element doubled, plus one.
            let mut view: dlspan::HostMdspanMut<'_, f32, 1> = out.view_mut()?;
            view.iter_mut().for_each(|v| *v = *v * 2.0 + 1.0);
        }
        call.ret(out);
        Ok(())
    }

    fn meta(call: &mut Call) -> Result<(), TorchError> {
        let n = call.tensor("like")?.sizes().iter().product::<i64>();
        call.ret(Tensor::empty(&[n], dlspan::dtype::dtype_of::<f32>(), Device::Meta)?);
        Ok(())
    }
}

/// A tensor kept past its call by [`KeepOp`], for the tests' proof that it then gives no views.
static KEPT: std::sync::Mutex<Option<Tensor>> = std::sync::Mutex::new(None);

/// `keep(Tensor x) -> ()`: keeps its argument past the call (what a kernel must not rely on).
pub struct KeepOp;

impl Operator for KeepOp {
    const NAME: &'static str = "dlspan_native::keep";
    const SCHEMA: &'static str = "(Tensor x) -> ()";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        let x = call.take("x")?;
        *KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(x);
        Ok(())
    }

    fn meta(_: &mut Call) -> Result<(), TorchError> {
        Ok(())
    }
}

/// `view_kept(Tensor like) -> ()`: takes a view of the tensor [`KeepOp`] kept (refused).
pub struct ViewKeptOp;

impl Operator for ViewKeptOp {
    const NAME: &'static str = "dlspan_native::view_kept";
    const SCHEMA: &'static str = "(Tensor like) -> ()";

    fn cpu(_: &mut Call) -> Result<(), TorchError> {
        let kept = KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let tensor = kept.as_ref().ok_or("nothing kept")?;
        let _: dlspan::DynMdspan<'_> = tensor.view()?;
        Ok(())
    }

    fn meta(_: &mut Call) -> Result<(), TorchError> {
        Ok(())
    }
}

// The benchmarks' operators (benches/python/torch_native.py): `torch.mul(x, s)`'s work, without
// and with autograd, and the cost of one tensor argument's view.

dlspan::elementwise! {
    /// `x · s`.
    #[torch("dlspan_native::mul")]
    fn mul<T: Float>(x: &T, s: T, out: &mut T) {
        *out = *x * s;
    }
}

dlspan::elementwise! {
    /// `exp(x)`, beside `torch.exp` in the benchmark.
    #[torch("dlspan_native::exp_body")]
    fn exp_body<T: Float>(x: &T, out: &mut T) {
        *out = x.exp();
    }
}

dlspan::elementwise! {
    /// `tanh(x)`, beside `torch.tanh`.
    #[torch("dlspan_native::tanh_body")]
    fn tanh_body<T: Float>(x: &T, out: &mut T) {
        *out = x.tanh();
    }
}

dlspan::elementwise! {
    /// The logistic sigmoid, beside `torch.sigmoid`.
    #[torch("dlspan_native::sigmoid_body")]
    fn sigmoid_body<T: Float>(x: &T, out: &mut T) {
        *out = 1.0 / (1.0 + (-*x).exp());
    }
}

dlspan::elementwise! {
    /// `x · y + z`, beside `torch.addcmul(z, x, y)`.
    #[torch("dlspan_native::fma_body")]
    fn fma_body<T: Float>(x: &T, y: &T, z: &T, out: &mut T) {
        *out = *x * *y + *z;
    }
}

dlspan::elementwise! {
    /// `x · s`, for the benchmark's floor of a Python autograd kernel (one that only redispatches).
    #[torch("dlspan_native::mul_floor")]
    fn mul_floor<T: Float>(x: &T, s: T, out: &mut T) {
        *out = *x * s;
    }
}

dlspan::elementwise! {
    /// `x · s`, differentiable.
    #[torch("dlspan_native::mul_ad", backward = mul_ad_backward)]
    fn mul_ad<T: Float>(x: &T, s: T, out: &mut T) {
        *out = *x * s;
    }
}

dlspan::elementwise! {
    /// The gradient of `mul_ad`.
    #[torch("dlspan_native::mul_ad_backward")]
    fn mul_ad_backward<T: Float>(x: &T, s: T, grad: &T, grad_x: &mut T) {
        *grad_x = *grad * s;
    }
}

/// `n` times what a kernel does with a tensor argument: with `handles`, a new handle to it (the
/// dispatcher makes one per argument), its metadata read, a typed view, the handle deleted;
/// without, the typed view alone (the DLPack checks).
pub struct ViewCostOp;

impl Operator for ViewCostOp {
    const NAME: &'static str = "dlspan_native::view_cost";
    const SCHEMA: &'static str = "(Tensor x, int n, bool handles) -> ()";

    fn cpu(call: &mut Call) -> Result<(), TorchError> {
        let x = call.tensor("x")?;
        let handles = call.bool("handles")?;
        for _ in 0..call.int("n")? {
            if handles {
                let handle = x.new_reference("x")?;
                let view: HostMdspan<'_, f32, 1, dlspan::LayoutStrideRelaxed> = handle.view()?;
                std::hint::black_box(&view);
            } else {
                let view: HostMdspan<'_, f32, 1, dlspan::LayoutStrideRelaxed> = x.view()?;
                std::hint::black_box(&view);
            }
        }
        Ok(())
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

dlspan::torch_library!(
    "dlspan_native",
    [
        gelu_bias,
        gelu_bias_backward,
        gelu_bias_auto,
        softplus_auto,
        math_auto,
        silu,
        silu_backward,
        scale_,
        axpy_,
        add_clamped,
        mul_same,
        shift,
        sincos,
        FailsOp,
        ReduceOp,
        ConjCopyOp,
        FreshOp,
        KeepOp,
        ViewKeptOp,
        mul,
        exp_body,
        tanh_body,
        sigmoid_body,
        fma_body,
        mul_floor,
        mul_ad,
        mul_ad_backward,
        ViewCostOp,
    ]
);
