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
//! - `row_softmax(x, temperature)`: a softmax over each row, not element-wise: a
//!   `dlspan::jax::Function` with a Rust shape function and a Rust backward (`jax.grad` works),
//!   batched by `vmap` in one call;
//! - `row_argmax(x)`: each row's largest value and its index (two results of their own shape and
//!   dtypes), batched by `vmap` one call at a time;
//! - `gelu_bias_host(x, b, out)`: `gelu_bias` as a plain function over float32 NumPy vectors (what
//!   `jax.pure_callback` calls: the benchmark's peer).

use dlspan::jax::{ArrayType, Call, Function, JaxError, Param, Shapes, Vmap};
use dlspan::kernel::{Cpu, Float, Scalar};
use dlspan::pyo3::prelude::*;
use dlspan::python::{PyView, PyViewMut};
use dlspan::{HostMdspan, HostMdspanMut};

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

/// The float types the functions below compute in.
trait Real:
    Copy
    + PartialOrd
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
{
    const ZERO: Self;
    const MIN: Self;
    fn exp(self) -> Self;
    fn of(t: f64) -> Self;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const MIN: Self = f32::NEG_INFINITY;
    fn exp(self) -> Self {
        f32::exp(self)
    }
    fn of(t: f64) -> Self {
        t as f32
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const MIN: Self = f64::NEG_INFINITY;
    fn exp(self) -> Self {
        f64::exp(self)
    }
    fn of(t: f64) -> Self {
        t
    }
}

/// Whether array `name` is float64 (`false`: float32), the two dtypes the functions below take.
fn is_f64(shapes: &Shapes, name: &str) -> Result<bool, JaxError> {
    match shapes.dtype(name)?.to_string().as_str() {
        "float32" => Ok(false),
        "float64" => Ok(true),
        other => {
            Err(JaxError::Kernel(format!("argument `{name}` has dtype {other}; the function takes float32 or float64")))
        }
    }
}

/// Softmax of each row of `x` divided by `temperature` (a matrix, or a batch of them: what
/// `vmap` gives with `broadcast_all`), with its gradient by [`RowSoftmaxBackward`]: a function
/// that is not element-wise, its shape function and its backward written in Rust.
struct RowSoftmax;

impl Function for RowSoftmax {
    const NAME: &'static str = "row_softmax";
    const PARAMS: &'static [Param] = &[Param::Array("x"), Param::Float("temperature")];
    const RESULTS: &'static [&'static str] = &["y"];
    // The rows of a batch of matrices are more rows: one call for the whole batch.
    const VMAP: Vmap = Vmap::BroadcastAll;
    const BACKWARD: Option<&'static str> = Some("row_softmax_backward");

    fn results(shapes: &Shapes) -> Result<Vec<ArrayType>, JaxError> {
        is_f64(shapes, "x")?;
        let shape = shapes.shape("x")?;
        if !(2..=3).contains(&shape.len()) {
            return Err(JaxError::Kernel(format!(
                "argument `x` has shape {shape:?}; the function takes a matrix or a batch of them"
            )));
        }
        if shapes.float("temperature")?.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
            return Err(JaxError::Kernel("argument `temperature` must be positive".into()));
        }
        Ok(vec![ArrayType::new(shape, shapes.dtype("x")?)])
    }

    fn cpu(call: &Call<'_>) -> Result<(), JaxError> {
        let t = call.float("temperature")?;
        match (is_f64(call.shapes(), "x")?, call.shapes().shape("x")?.len()) {
            (false, 2) => softmax_rows::<f32>(call.input("x")?, call.output("y")?, t),
            (true, 2) => softmax_rows::<f64>(call.input("x")?, call.output("y")?, t),
            (false, _) => softmax_batch::<f32>(call.input("x")?, call.output("y")?, t),
            (true, _) => softmax_batch::<f64>(call.input("x")?, call.output("y")?, t),
        }
        Ok(())
    }
}

/// The softmax of each row of `x / t`, in the row's precision, its maximum subtracted first.
fn softmax_rows<T: Real>(x: HostMdspan<'_, T, 2>, mut y: HostMdspanMut<'_, T, 2>, t: f64) {
    let t = T::of(t);
    for (row, mut out) in x.outer_iter::<1>().zip(y.outer_iter_mut::<1>()) {
        let max = row.iter().fold(T::MIN, |m, &v| if v / t > m { v / t } else { m });
        let mut total = T::ZERO;
        for (o, &v) in out.iter_mut().zip(row.iter()) {
            *o = (v / t - max).exp();
            total = total + *o;
        }
        out.iter_mut().for_each(|o| *o = *o / total);
    }
}

fn softmax_batch<T: Real>(x: HostMdspan<'_, T, 3>, mut y: HostMdspanMut<'_, T, 3>, t: f64) {
    for (x, y) in x.outer_iter::<2>().zip(y.outer_iter_mut::<2>()) {
        softmax_rows(x, y, t);
    }
}

/// The gradient of [`RowSoftmax`]: `x_grad = y · (y_grad − Σ y_grad · y) / temperature`, row by
/// row, `y` recomputed.
struct RowSoftmaxBackward;

impl Function for RowSoftmaxBackward {
    const NAME: &'static str = "row_softmax_backward";
    const PARAMS: &'static [Param] = &[Param::Array("x"), Param::Float("temperature"), Param::Array("y_grad")];
    const RESULTS: &'static [&'static str] = &["x_grad"];
    const VMAP: Vmap = Vmap::BroadcastAll;

    fn results(shapes: &Shapes) -> Result<Vec<ArrayType>, JaxError> {
        if shapes.shape("y_grad")? != shapes.shape("x")? || shapes.dtype("y_grad")? != shapes.dtype("x")? {
            return Err(JaxError::Kernel("argument `y_grad` must have the shape and dtype of `x`".into()));
        }
        RowSoftmax::results(shapes)
    }

    fn cpu(call: &Call<'_>) -> Result<(), JaxError> {
        let t = call.float("temperature")?;
        let (x, g, dx) = ("x", "y_grad", "x_grad");
        match (is_f64(call.shapes(), x)?, call.shapes().shape(x)?.len()) {
            (false, 2) => softmax_grad_rows::<f32>(call.input(x)?, call.input(g)?, call.output(dx)?, t),
            (true, 2) => softmax_grad_rows::<f64>(call.input(x)?, call.input(g)?, call.output(dx)?, t),
            (false, _) => softmax_grad_batch::<f32>(call.input(x)?, call.input(g)?, call.output(dx)?, t),
            (true, _) => softmax_grad_batch::<f64>(call.input(x)?, call.input(g)?, call.output(dx)?, t),
        }
        Ok(())
    }
}

fn softmax_grad_rows<T: Real>(
    x: HostMdspan<'_, T, 2>,
    g: HostMdspan<'_, T, 2>,
    mut dx: HostMdspanMut<'_, T, 2>,
    t: f64,
) {
    // `dx` holds `y` first, then the gradient.
    softmax_rows(x, dx.reborrow(), t);
    let t = T::of(t);
    for (g, mut dx) in g.outer_iter::<1>().zip(dx.outer_iter_mut::<1>()) {
        let dot = g.iter().zip(dx.iter()).fold(T::ZERO, |s, (&g, &y)| s + g * y);
        for (d, &g) in dx.iter_mut().zip(g.iter()) {
            *d = *d * (g - dot) / t;
        }
    }
}

fn softmax_grad_batch<T: Real>(
    x: HostMdspan<'_, T, 3>,
    g: HostMdspan<'_, T, 3>,
    mut dx: HostMdspanMut<'_, T, 3>,
    t: f64,
) {
    for ((x, g), dx) in x.outer_iter::<2>().zip(g.outer_iter::<2>()).zip(dx.outer_iter_mut::<2>()) {
        softmax_grad_rows(x, g, dx, t);
    }
}

/// The largest value of each row of a float32 matrix and its index: two results of different
/// dtypes and a shape of their own; `vmap` calls it once per batch element (the default).
struct RowArgmax;

impl Function for RowArgmax {
    const NAME: &'static str = "row_argmax";
    const PARAMS: &'static [Param] = &[Param::Array("x")];
    const RESULTS: &'static [&'static str] = &["index", "value"];
    const BACKWARD: Option<&'static str> = Some("row_argmax_backward");

    fn results(shapes: &Shapes) -> Result<Vec<ArrayType>, JaxError> {
        if shapes.dtype("x")? != dlspan::dtype::dtype_of::<f32>() {
            return Err(JaxError::Kernel(format!(
                "argument `x` has dtype {}; the function takes float32",
                shapes.dtype("x")?
            )));
        }
        match shapes.shape("x")? {
            &[rows, columns] if columns > 0 => Ok(vec![ArrayType::of::<i32>([rows]), ArrayType::of::<f32>([rows])]),
            shape => Err(JaxError::Kernel(format!(
                "argument `x` has shape {shape:?}; the function takes a matrix of at least one column"
            ))),
        }
    }

    fn cpu(call: &Call<'_>) -> Result<(), JaxError> {
        let x: HostMdspan<'_, f32, 2> = call.input("x")?;
        let mut index: HostMdspanMut<'_, i32, 1> = call.output("index")?;
        let mut value: HostMdspanMut<'_, f32, 1> = call.output("value")?;
        for ((row, i), v) in x.outer_iter::<1>().zip(index.iter_mut()).zip(value.iter_mut()) {
            let (k, max) = argmax(row);
            *i = i32::try_from(k).map_err(|_| JaxError::Kernel("a row of more than 2³¹ columns".into()))?;
            *v = max;
        }
        Ok(())
    }
}

/// The index and value of a row's largest element: the first of equal maxima, NaN the largest
/// (as `jnp.argmax`).
fn argmax(row: HostMdspan<'_, f32, 1>) -> (usize, f32) {
    let mut best = (0, f32::NEG_INFINITY);
    for (k, &x) in row.iter().enumerate() {
        if x > best.1 || (x.is_nan() && !best.1.is_nan()) {
            best = (k, x);
        }
    }
    best
}

/// The gradient of [`RowArgmax`]: each row's `value_grad` at the index of its largest value
/// (`index_grad`, the integer result's cotangent, is zeros).
struct RowArgmaxBackward;

impl Function for RowArgmaxBackward {
    const NAME: &'static str = "row_argmax_backward";
    const PARAMS: &'static [Param] = &[Param::Array("x"), Param::Array("index_grad"), Param::Array("value_grad")];
    const RESULTS: &'static [&'static str] = &["x_grad"];

    fn results(shapes: &Shapes) -> Result<Vec<ArrayType>, JaxError> {
        RowArgmax::results(shapes)?;
        Ok(vec![ArrayType::new(shapes.shape("x")?, shapes.dtype("x")?)])
    }

    fn cpu(call: &Call<'_>) -> Result<(), JaxError> {
        let x: HostMdspan<'_, f32, 2> = call.input("x")?;
        let value_grad: HostMdspan<'_, f32, 1> = call.input("value_grad")?;
        let mut x_grad: HostMdspanMut<'_, f32, 2> = call.output("x_grad")?;
        for ((row, g), mut out) in x.outer_iter::<1>().zip(value_grad.iter()).zip(x_grad.outer_iter_mut::<1>()) {
            // `x_grad` starts zeroed (results on the CPU do).
            out[[argmax(row).0]] = *g;
        }
        Ok(())
    }
}

/// The module: each kernel registered with XLA (target `my_jax_kernels.<name>`) and given its
/// Python function.
#[pymodule(crate = "dlspan::pyo3")]
fn my_jax_kernels(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use dlspan::jax::{function, kernel};
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
            function::<RowSoftmax>(),
            function::<RowSoftmaxBackward>(),
            function::<RowArgmax>(),
            function::<RowArgmaxBackward>(),
        ],
    )
}
