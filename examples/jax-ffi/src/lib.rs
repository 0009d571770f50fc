//! JAX kernels written in Rust: element-wise kernels that are XLA FFI handlers (`#[jax]`), called
//! inside `jax.jit`, under `vmap`, and — with `#[differentiable]` — under `grad` and `jvp`, with no
//! Python written by hand. In Python:
//!
//! ```python
//! import jax, my_jax_kernels
//! y = jax.jit(my_jax_kernels.gelu_bias)(x, b)
//! g = jax.grad(lambda x, b: my_jax_kernels.gelu_bias(x, b).sum(), argnums=(0, 1))(x, b)
//! ```
//!
//! - `gelu_bias(x, b)`: GELU (tanh form) of `x + b`, `b` broadcast, differentiable;
//! - `softplus(x, beta)`: softplus with a sharpness `beta` (an attribute: static under `jit`),
//!   differentiable;
//! - `sincos(x)`: two results, differentiable;
//! - `add_clamped(x, y, lo)`: `max(x + y, lo)` over every integer and float dtype;
//! - `mul_same(x, y)`: `x · y` of one shape (`strict`: no broadcasting);
//! - `gelu_bias_host(x, b, out)`: `gelu_bias` as a plain function over float32 NumPy vectors (what
//!   `jax.pure_callback` calls: the benchmark's peer).

use dlspan::kernel::{Cpu, Float, Scalar};
use dlspan::pyo3::prelude::*;
use dlspan::python::{PyView, PyViewMut};

dlspan::elementwise! {
    /// GELU (tanh form) of `x + b`, written once: `#[differentiable]` derives its backward, which
    /// JAX calls in the derivative rule of the function `register_module` makes.
    #[differentiable]
    #[jax]
    fn gelu_bias<T: Float>(x: &T, b: &T, out: &mut T) {
        let v = *x + *b;
        *out = 0.5 * v * (1.0 + (0.7978845608028654 * (v + 0.044715 * v * v * v)).tanh());
    }
}

dlspan::elementwise! {
    /// Softplus with a sharpness `beta`, linear above a threshold as JAX's is.
    #[differentiable]
    #[jax]
    fn softplus<T: Float>(x: &T, beta: T, out: &mut T) {
        let z = *x * beta;
        if z > 20.0 {
            *out = *x;
        } else {
            *out = (1.0 + z.exp()).ln() / beta;
        }
    }
}

dlspan::elementwise! {
    /// `sin(x)` and `cos(x)`.
    #[differentiable]
    #[jax]
    fn sincos<T: Float>(x: &T, sin: &mut T, cos: &mut T) {
        *sin = x.sin();
        *cos = x.cos();
    }
}

dlspan::elementwise! {
    /// `max(x + y, lo)`, for every integer and float dtype.
    #[jax]
    fn add_clamped<T: Scalar>(x: &T, y: &T, lo: i32, out: &mut T) {
        *out = (*x + *y).max(lo as T);
    }
}

dlspan::elementwise! {
    /// `x · y`, of arrays of one shape: `strict` refuses broadcasting.
    #[jax(strict)]
    fn mul_same<T: Scalar>(x: &T, y: &T, out: &mut T) {
        *out = *x * *y;
    }
}

/// `out = gelu_bias(x, b)` over float32 vectors from NumPy (any framework): the same Rust kernel
/// as a plain Python function, what `jax.pure_callback` can call (the benchmark's peer: the way
/// into Rust from inside `jax.jit` before XLA FFI handlers).
#[pyfunction(crate = "dlspan::pyo3")]
fn gelu_bias_host(
    py: Python<'_>,
    x: PyView<'_, f32, 1>,
    b: PyView<'_, f32, 1>,
    mut out: PyViewMut<'_, f32, 1>,
) -> PyResult<()> {
    let (x, b, mut out) = (x.view(), b.view(), out.view_mut());
    py.detach(|| gelu_bias.run(Cpu, &x, &b, &mut out))?;
    Ok(())
}

/// The module: each kernel registered with XLA (target `my_jax_kernels.<name>`) and given its
/// Python function.
#[pymodule(crate = "dlspan::pyo3")]
fn my_jax_kernels(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use dlspan::jax::kernel;
    m.add_function(wrap_pyfunction!(gelu_bias_host, m)?)?;
    dlspan::jax::register_module(
        m,
        "my_jax_kernels",
        &[
            kernel::<gelu_bias>(),
            kernel::<softplus>(),
            kernel::<sincos>(),
            kernel::<add_clamped>(),
            kernel::<mul_same>(),
        ],
    )
}
