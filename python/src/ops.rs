//! Functions over tensors of any data type and rank, written once with dynamic view arguments and
//! the dtype dispatch: `add`, `mul`, `scale_`, `sum`, `arange`, `signature`; results
//! without an `out` argument are made by `Output`, in the caller's framework.
//!
//! The pattern: take `PyDynView` / `PyDynViewMut` arguments (any framework's tensor, checked and
//! borrow-registered), dispatch on the output's dtype and rank to a generic body over
//! `T: Numeric` and `const R`, make typed views there (the inputs must have the same dtype and
//! shape: `typed` and `zip2_with` say which axis or type differs), and run the kernel — with the GIL
//! released when the tensor is large.

use dlspan::dtype::{Numeric, TensorVisitor, cast, dispatch_tensor};
use dlspan::ffi::DLDataTypeCode;
use dlspan::num_complex::Complex;
use dlspan::python::{DETACH_ELEMENTS, Framework, Output, PyDynView, PyDynViewMut, dtype_from_py};
use dlspan::{DlpackError, HostMdspanMut, LayoutStrideRelaxed};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};

/// Runs `kernel`, with the GIL released for large tensors.
fn run<R: Send>(py: Python<'_>, elements: usize, kernel: impl FnOnce() -> R + Send) -> R {
    if elements >= DETACH_ELEMENTS { py.detach(kernel) } else { kernel() }
}

/// Where a result is written: an `out` argument, or a new tensor in the caller's framework.
trait Target {
    fn typed_mut<T: Numeric, const R: usize>(
        &mut self,
    ) -> Result<HostMdspanMut<'_, T, R, LayoutStrideRelaxed>, DlpackError>;
}

impl Target for PyDynViewMut<'_> {
    fn typed_mut<T: Numeric, const R: usize>(
        &mut self,
    ) -> Result<HostMdspanMut<'_, T, R, LayoutStrideRelaxed>, DlpackError> {
        PyDynViewMut::typed_mut(self)
    }
}

impl Target for Output<'_> {
    fn typed_mut<T: Numeric, const R: usize>(
        &mut self,
    ) -> Result<HostMdspanMut<'_, T, R, LayoutStrideRelaxed>, DlpackError> {
        self.view_mut_as()
    }
}

/// A binary element-wise operation into `out`.
struct Binary<'v, 'a, 'py, O, F> {
    a: &'v PyDynView<'a>,
    b: &'v PyDynView<'a>,
    out: &'v mut O,
    py: Python<'py>,
    op: F,
}

/// The operations `Binary` runs, generic over the element type.
trait Op: Copy + Send {
    fn apply<T: Numeric>(self, a: T, b: T) -> T;
}

#[derive(Clone, Copy)]
struct AddOp;
impl Op for AddOp {
    #[inline]
    fn apply<T: Numeric>(self, a: T, b: T) -> T {
        a.add(b)
    }
}

#[derive(Clone, Copy)]
struct MulOp;
impl Op for MulOp {
    #[inline]
    fn apply<T: Numeric>(self, a: T, b: T) -> T {
        a.mul(b)
    }
}

impl<O: Target, F: Op> TensorVisitor for Binary<'_, '_, '_, O, F> {
    type Output = Result<(), DlpackError>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let a = self.a.typed::<T, R, LayoutStrideRelaxed>()?;
        let b = self.b.typed::<T, R, LayoutStrideRelaxed>()?;
        let mut out = self.out.typed_mut::<T, R>()?;
        let op = self.op;
        run(self.py, out.size(), move || out.zip2_with(&a, &b, |o, &a, &b| *o = op.apply(a, b)))
    }
}

/// `a op b` into `out`, or, without `out`, into a new tensor like `a` (its dtype and shape, in
/// its framework: a NumPy array for NumPy inputs, a `torch.Tensor` for PyTorch inputs), returned.
fn binary<'py>(
    py: Python<'py>,
    a: &PyDynView<'_>,
    b: &PyDynView<'_>,
    out: Option<PyDynViewMut<'_>>,
    op: impl Op,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let rank = a.rank();
    match out {
        Some(mut out) => {
            let (dtype, rank) = (out.dtype(), out.rank());
            dispatch_tensor(dtype, rank, Binary { a, b, out: &mut out, py, op })??;
            Ok(None)
        }
        None => {
            let shape = a.view()?.shape().to_vec();
            let mut out = Output::like(py, a, a.dtype(), &shape)?;
            dispatch_tensor(a.dtype(), rank, Binary { a, b, out: &mut out, py, op })??;
            Ok(Some(out.finish()?))
        }
    }
}

/// `out = a + b`, element by element, for any dtype (the three alike) and any strides; without
/// `out`, a new tensor in `a`'s framework, returned.
#[pyfunction]
#[pyo3(signature = (a, b, out = None))]
pub(crate) fn add<'py>(
    py: Python<'py>,
    a: PyDynView<'_>,
    b: PyDynView<'_>,
    out: Option<PyDynViewMut<'_>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    binary(py, &a, &b, out, AddOp)
}

/// `out = a * b`, element by element, for any dtype and any strides; without `out`, a new tensor
/// in `a`'s framework, returned.
#[pyfunction]
#[pyo3(signature = (a, b, out = None))]
pub(crate) fn mul<'py>(
    py: Python<'py>,
    a: PyDynView<'_>,
    b: PyDynView<'_>,
    out: Option<PyDynViewMut<'_>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    binary(py, &a, &b, out, MulOp)
}

/// A Python scalar, in the widest Rust type of its kind.
#[derive(Clone, Copy)]
enum Scalar {
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(Complex<f64>),
}

/// The kind order NumPy's `same_kind` casting follows: bool < integer < float < complex.
fn rank_of_kind(code: u8) -> u8 {
    match DLDataTypeCode(code) {
        DLDataTypeCode::kDLBool => 0,
        DLDataTypeCode::kDLInt | DLDataTypeCode::kDLUInt => 1,
        DLDataTypeCode::kDLComplex => 3,
        _ => 2,
    }
}

impl Scalar {
    fn extract(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(if value.is_instance_of::<PyBool>() {
            Self::Bool(value.extract()?)
        } else if value.is_instance_of::<PyInt>() {
            Self::Int(value.extract()?)
        } else if value.is_instance_of::<PyFloat>() {
            Self::Float(value.extract()?)
        } else if value.is_instance_of::<PyComplex>() {
            let c = value.cast::<PyComplex>()?;
            Self::Complex(Complex::new(c.real(), c.imag()))
        } else if let Ok(float) = value.extract::<f64>() {
            Self::Float(float)
        } else {
            return Err(PyTypeError::new_err("alpha must be a Python number"));
        })
    }

    fn kind(self) -> u8 {
        match self {
            Self::Bool(_) => 0,
            Self::Int(_) => 1,
            Self::Float(_) => 2,
            Self::Complex(_) => 3,
        }
    }

    fn to<T: Numeric>(self) -> T {
        match self {
            Self::Bool(v) => cast(v),
            Self::Int(v) => cast(v),
            Self::Float(v) => cast(v),
            Self::Complex(v) => cast(v),
        }
    }
}

struct Scale<'v, 'x, 'py> {
    x: &'v mut PyDynViewMut<'x>,
    alpha: Scalar,
    py: Python<'py>,
}

impl TensorVisitor for Scale<'_, '_, '_> {
    type Output = Result<(), DlpackError>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let alpha: T = self.alpha.to();
        let mut x = self.x.typed_mut::<T, R, LayoutStrideRelaxed>()?;
        run(self.py, x.size(), move || x.for_each_unordered(|v| *v = v.mul(alpha)));
        Ok(())
    }
}

/// `x *= alpha` in place, for any dtype and strides. `alpha` may not be of a higher kind than `x`
/// (bool < integer < float < complex), as NumPy's `same_kind` casting says.
#[pyfunction]
#[pyo3(name = "scale_")]
pub(crate) fn scale(py: Python<'_>, mut x: PyDynViewMut<'_>, alpha: &Bound<'_, PyAny>) -> PyResult<()> {
    let alpha = Scalar::extract(alpha)?;
    let (dtype, rank) = (x.dtype(), x.rank());
    if alpha.kind() > rank_of_kind(dtype.code) {
        let err = PyTypeError::new_err(format!("cannot scale a {dtype} tensor by a scalar of a higher kind in place"));
        let _ = err.value(py).setattr("kind", "ScalarKind");
        return Err(err);
    }
    Ok(dispatch_tensor(dtype, rank, Scale { x: &mut x, alpha, py })??)
}

struct Sum<'v, 'x, 'py> {
    x: &'v PyDynView<'x>,
    py: Python<'py>,
}

impl<'py> TensorVisitor for Sum<'_, '_, 'py> {
    type Output = PyResult<Bound<'py, PyAny>>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let x = self.x.typed::<T, R, LayoutStrideRelaxed>()?;
        let total = run(self.py, x.size(), move || x.fold_unordered(T::Acc::ZERO, |acc, &v| acc.add(v.to_acc())));
        let py = self.py;
        Ok(match rank_of_kind(T::DTYPE.code) {
            0 | 1 => cast::<T::Acc, i128>(total).into_pyobject(py)?.into_any(),
            3 => {
                let c = cast::<T::Acc, Complex<f64>>(total);
                PyComplex::from_doubles(py, c.re, c.im).into_any()
            }
            _ => cast::<T::Acc, f64>(total).into_pyobject(py)?.into_any(),
        })
    }
}

/// The sum of every element, as a Python number (summed in the dtype's accumulator: 64-bit
/// integers, `float32` for the small floats, the dtype itself otherwise).
#[pyfunction]
pub(crate) fn sum<'py>(py: Python<'py>, x: PyDynView<'_>) -> PyResult<Bound<'py, PyAny>> {
    dispatch_tensor(x.dtype(), x.rank(), Sum { x: &x, py })?
}

struct Iota<'v, 'py>(&'v mut Output<'py>);

impl TensorVisitor for Iota<'_, '_> {
    type Output = Result<(), DlpackError>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let mut x = self.0.view_mut::<T, 1>()?;
        if let Some(values) = x.as_mut_slice() {
            for (i, v) in values.iter_mut().enumerate() {
                *v = cast(i as i128);
            }
        }
        Ok(())
    }
}

/// `0, 1, …, n-1` as a tensor of `dtype` (values rounded into it); with `like`, in its framework
/// (a NumPy array, a `torch.Tensor`, a JAX array), as NumPy's `like=`.
#[pyfunction]
#[pyo3(signature = (n, dtype = None, *, like = None))]
pub(crate) fn arange<'py>(
    py: Python<'py>,
    n: usize,
    dtype: Option<&Bound<'py, PyAny>>,
    like: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let dtype = match dtype {
        Some(dtype) => dtype_from_py(dtype)?,
        None => dlspan::dtype::dtype_of::<i64>(),
    };
    let framework = match like {
        Some(like) => Framework::of(like)?,
        None => Framework::Dlspan,
    };
    let mut out = Output::new(py, framework, dtype, &[n])?;
    dispatch_tensor(dtype, 1, Iota(&mut out))??;
    out.finish()
}

/// The layout class of a signature: row-major, column-major, positive strides, anything else.
fn layout_class(shape: &[usize], strides: &[isize]) -> u64 {
    fn compact<'a>(axes: impl Iterator<Item = (&'a usize, &'a isize)>) -> bool {
        let mut next = 1usize;
        let mut ok = true;
        for (&e, &s) in axes {
            ok &= e <= 1 || usize::try_from(s) == Ok(next);
            next = next.saturating_mul(e.max(1));
        }
        ok
    }
    if compact(shape.iter().zip(strides).rev()) {
        0
    } else if compact(shape.iter().zip(strides)) {
        1
    } else if strides.iter().all(|&s| s > 0) {
        2
    } else {
        3
    }
}

/// A compact, hashable dispatch key of any tensor: one integer packing the dtype (code, bits,
/// lanes: bits 0–31), the rank (32–39), the layout class (40–41: 0 row-major, 1 column-major, 2
/// positive strides, 3 zero or negative strides), the device type (42–49) and id (50–57) and
/// read-only (58). Equal keys mean a kernel compiled for one serves the other.
#[pyfunction]
pub(crate) fn signature(x: PyDynView<'_>) -> PyResult<u64> {
    let view = x.view()?;
    let dtype = view.dtype();
    let device = x.device();
    Ok(u64::from(dtype.code)
        | u64::from(dtype.bits) << 8
        | u64::from(dtype.lanes) << 16
        | (view.rank() as u64 & 0xff) << 32
        | layout_class(view.shape(), view.strides()) << 40
        | (device.device_type.0 as u64 & 0xff) << 42
        | (device.device_id as u64 & 0xff) << 50
        | u64::from(x.is_read_only()) << 58)
}
