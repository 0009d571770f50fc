//! Functions over tensors of any data type and rank, written once with dynamic view arguments and
//! the dtype dispatch: `add`, `mul`, `scale_`, `sum`, `arange`, `signature` (`copy` and `cast` in `convert.rs`);
//! results without an `out` argument are made by `Output`, in the caller's framework. CUDA device
//! and managed arguments (handed back in their space by `PyDynView::extract_or_device`, the tensor
//! located once) take
//! the device path of `device.rs`: the same functions on the caller's stream.
//!
//! The pattern: take the tensors as objects and extract them with `extract_argument` as
//! `PyDynView` / `PyDynViewMut` (any framework's tensor, checked and borrow-registered, named in the
//! conflicts it takes part in), dispatch on the first input's dtype and rank to a generic body over
//! `T: Numeric` and `const R`, make typed views there (each error noted with its argument by
//! `in_argument`: the inputs must have one dtype and shape), and run the kernel — with the GIL
//! released when the tensor is large. FP6 and FP4 data, packed by default, reach `visit_subbyte`,
//! which reads and writes it value by value through packed views.

use crate::device;
use dlspan::dtype::{Numeric, PlainBits, TensorVisitor, cast, dispatch_tensor};
use dlspan::ffi::DLDataTypeCode;
use dlspan::num_complex::Complex;
use dlspan::python::{
    DETACH_ELEMENTS, Framework, InArgument, OffHost, OffHostMut, Output, PyDynView, PyDynViewMut, dtype_from_py,
    extract_argument,
};
use dlspan::view::{Iter, PackedIter};
use dlspan::{DlpackError, DynMdspanMut, HostMdspanMut, LayoutStrideRelaxed};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};

/// Runs `kernel`, with the GIL released for large tensors.
pub(crate) fn run<R: Send>(py: Python<'_>, elements: usize, kernel: impl FnOnce() -> R + Send) -> R {
    if elements >= DETACH_ELEMENTS { py.detach(kernel) } else { kernel() }
}

/// Refuses `x` (argument `name`) unless its shape is `shape`: the first axis that differs, as
/// [`DlpackError::ShapeMismatch`] noted with the argument.
pub(crate) fn same_shape(name: &str, x: &[usize], shape: &[usize]) -> PyResult<()> {
    if x.len() != shape.len() {
        let found = i32::try_from(x.len()).unwrap_or(i32::MAX);
        return Err(DlpackError::RankMismatch { expected: shape.len(), found }).in_argument(name);
    }
    match (0..shape.len()).find(|&axis| x[axis] != shape[axis]) {
        Some(axis) => Err(DlpackError::ShapeMismatch { axis, expected: shape[axis], found: x[axis] }).in_argument(name),
        None => Ok(()),
    }
}

/// The values of a sub-byte argument in logical order, padded (one value per byte: a typed view)
/// or packed.
pub(crate) enum Values<'v, T, const R: usize> {
    Padded(Iter<'v, T, R>),
    Packed(PackedIter<'v, T, R>),
}

impl<T: Numeric + PlainBits, const R: usize> Iterator for Values<'_, T, R> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            Self::Padded(values) => values.next().copied(),
            Self::Packed(values) => values.next(),
        }
    }
}

/// The values of sub-byte argument `name`, after its shape is checked against `shape`.
pub(crate) fn values<'v, T: Numeric + PlainBits, const R: usize>(
    x: &'v PyDynView<'_>,
    name: &str,
    shape: &[usize],
) -> PyResult<Values<'v, T, R>> {
    let view = x.view().in_argument(name)?;
    same_shape(name, view.shape(), shape)?;
    Ok(if view.is_subbyte_padded() {
        Values::Padded(x.typed::<T, R, LayoutStrideRelaxed>().in_argument(name)?.iter())
    } else {
        Values::Packed(view.typed_packed::<T, R, LayoutStrideRelaxed>().in_argument(name)?.iter())
    })
}

/// Where a result is written: an `out` argument, or a new tensor in the caller's framework. Errors
/// are noted with the argument `out`.
pub(crate) trait Target {
    fn typed_mut<T: Numeric, const R: usize>(&mut self) -> PyResult<HostMdspanMut<'_, T, R, LayoutStrideRelaxed>>;
    fn dynamic(&mut self) -> PyResult<DynMdspanMut<'_>>;
}

impl Target for PyDynViewMut<'_> {
    #[inline]
    fn typed_mut<T: Numeric, const R: usize>(&mut self) -> PyResult<HostMdspanMut<'_, T, R, LayoutStrideRelaxed>> {
        PyDynViewMut::typed_mut(self).in_argument("out")
    }

    fn dynamic(&mut self) -> PyResult<DynMdspanMut<'_>> {
        self.view_mut().in_argument("out")
    }
}

impl Target for Output<'_> {
    #[inline]
    fn typed_mut<T: Numeric, const R: usize>(&mut self) -> PyResult<HostMdspanMut<'_, T, R, LayoutStrideRelaxed>> {
        Ok(self.view_mut_as()?)
    }

    fn dynamic(&mut self) -> PyResult<DynMdspanMut<'_>> {
        Ok(self.view_mut_as()?)
    }
}

/// Whether a dynamic argument holds packed sub-byte data (a `PyDynView` knows only its producer's
/// description; the view it gives decides).
pub(crate) fn packed(x: &PyDynView<'_>, name: &str) -> PyResult<bool> {
    let view = x.view().in_argument(name)?;
    Ok(view.element_bits() < 8 && !view.is_subbyte_padded())
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
pub(crate) trait Op: Copy + Send {
    fn apply<T: Numeric>(self, a: T, b: T) -> T;
    /// Whether it is the product (the device path's `Stream::mul`), not the sum (`Stream::add`).
    fn multiplies(self) -> bool;
}

#[derive(Clone, Copy)]
struct AddOp;
impl Op for AddOp {
    #[inline]
    fn apply<T: Numeric>(self, a: T, b: T) -> T {
        a.add(b)
    }

    fn multiplies(self) -> bool {
        false
    }
}

#[derive(Clone, Copy)]
struct MulOp;
impl Op for MulOp {
    #[inline]
    fn apply<T: Numeric>(self, a: T, b: T) -> T {
        a.mul(b)
    }

    fn multiplies(self) -> bool {
        true
    }
}

impl<O: Target, F: Op> TensorVisitor for Binary<'_, '_, '_, O, F> {
    type Output = PyResult<()>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let a = self.a.typed::<T, R, LayoutStrideRelaxed>().in_argument("a")?;
        let b = self.b.typed::<T, R, LayoutStrideRelaxed>().in_argument("b")?;
        let mut out = self.out.typed_mut::<T, R>()?;
        let shape = out.extents();
        same_shape("a", &a.extents(), &shape)?;
        same_shape("b", &b.extents(), &shape)?;
        let op = self.op;
        Ok(run(self.py, out.size(), move || out.zip2_with(&a, &b, |o, &a, &b| *o = op.apply(a, b)))?)
    }

    fn visit_subbyte<T: Numeric + PlainBits, const R: usize>(self) -> Self::Output {
        let out_packed = {
            let out = self.out.dynamic()?;
            out.element_bits() < 8 && !out.is_subbyte_padded()
        };
        if !packed(self.a, "a")? && !packed(self.b, "b")? && !out_packed {
            return self.visit::<T, R>();
        }
        // Packed data is read and written value by value, in logical order.
        let op = self.op;
        let out = self.out.dynamic()?;
        if out.rank() != R {
            // The dispatch took `a`'s rank.
            let found = i32::try_from(out.rank()).unwrap_or(i32::MAX);
            return Err(DlpackError::RankMismatch { expected: R, found }).in_argument("out");
        }
        let shape = out.shape().to_vec();
        let (mut a, mut b) = (values::<T, R>(self.a, "a", &shape)?, values::<T, R>(self.b, "b", &shape)?);
        let mut next = move || match (a.next(), b.next()) {
            (Some(a), Some(b)) => op.apply(a, b),
            _ => T::ZERO, // never: the three shapes are one
        };
        if out.is_subbyte_padded() {
            let mut out = out.into_typed::<T, R, LayoutStrideRelaxed>().in_argument("out")?;
            out.iter_mut().for_each(|o| *o = next());
        } else {
            let mut out = out.into_typed_packed::<T, R, LayoutStrideRelaxed>().in_argument("out")?;
            out.update(|_| next());
        }
        Ok(())
    }
}

/// `a op b` into `out`, or, without `out`, into a new tensor like `a` (its dtype and shape, in
/// its framework: a NumPy array for NumPy inputs, a `torch.Tensor` for PyTorch inputs), returned.
/// `a`'s space decides the path: host, or the device path for CUDA device and managed memory.
fn binary<'py>(
    py: Python<'py>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    op: impl Op,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let a = match PyDynView::extract_or_device(a, "a") {
        Ok(a) => a,
        Err(OffHost::Device(a)) => return device::binary(py, *a, b, out, op),
        Err(OffHost::Managed(a)) => return device::binary(py, *a, b, out, op),
        Err(OffHost::Failed(err)) => return Err(err),
    };
    let b: PyDynView<'_> = extract_argument(b, "b")?;
    // The inputs' dtype decides: an output of another dtype is the argument in error.
    let (dtype, rank) = (a.dtype(), a.rank());
    match out.filter(|out| !out.is_none()) {
        Some(out) => {
            let mut out: PyDynViewMut<'_> = extract_argument(out, "out")?;
            dispatch_tensor(dtype, rank, Binary { a: &a, b: &b, out: &mut out, py, op }).in_argument("a")??;
            Ok(None)
        }
        None => {
            let shape = a.view().in_argument("a")?.shape().to_vec();
            let mut out = Output::like(py, &a, dtype, &shape)?;
            dispatch_tensor(dtype, rank, Binary { a: &a, b: &b, out: &mut out, py, op }).in_argument("a")??;
            Ok(Some(out.finish()?))
        }
    }
}

/// Element-wise sum of two arrays: ``out = a + b``.
///
/// Parameters
/// ----------
/// a, b : array
///     NumPy arrays, PyTorch tensors, JAX arrays, CuPy arrays, ``dlspan.Tensor`` or any DLPack
///     producer, of one dtype and one shape, with any strides, all in host memory or all on one
///     CUDA device (or all in CUDA managed memory).
/// out : array, optional
///     A writable array of the same dtype and shape, in the same memory. It may not share memory
///     with ``a`` or ``b`` (unless they are interleaved without overlap, such as ``x[::2]`` and
///     ``x[1::2]``).
///
/// Returns
/// -------
/// array or None
///     Without ``out``, a new array of ``a``'s dtype and shape in ``a``'s framework and memory (a
///     NumPy array for NumPy inputs, a ``torch.Tensor`` for PyTorch inputs, a JAX array for JAX
///     inputs, otherwise a ``Tensor``); with ``out``, None.
///
/// Raises
/// ------
/// TypeError
///     The arrays' dtypes or numbers of dimensions differ, or one is in other memory than ``a``
///     (``kind`` is ``"DeviceMismatch"``).
/// ValueError
///     Their shapes differ, ``out`` is read-only or overlaps an input, or the arrays are on two
///     devices (``"DevicesDiffer"``).
/// BufferError
///     An array is on a device dlspan has no view of, or on a CUDA device of a machine without a
///     CUDA driver (``"LibraryMissing"``).
///
/// Every error names its argument in a note (``while processing 'out'``).
///
/// Notes
/// -----
/// On a CUDA device the kernel is enqueued on the caller's stream (PyTorch's current stream for
/// PyTorch tensors, CuPy's for CuPy arrays, the per-thread default stream otherwise) and the call
/// returns before it runs: the caller's next work on that stream sees the result.
#[pyfunction]
#[pyo3(signature = (a, b, out = None))]
pub(crate) fn add<'py>(
    py: Python<'py>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    binary(py, a, b, out, AddOp)
}

/// Element-wise product of two arrays: ``out = a * b``.
///
/// Parameters
/// ----------
/// a, b : array
///     Arrays of any framework, of one dtype and one shape, with any strides, all in host memory or
///     all on one CUDA device (as for ``add``).
/// out : array, optional
///     A writable array of the same dtype and shape in the same memory, sharing no memory with
///     ``a`` or ``b``.
///
/// Returns
/// -------
/// array or None
///     Without ``out``, a new array like ``a`` in its framework and memory (as for ``add``); with
///     ``out``, None.
///
/// Raises
/// ------
/// TypeError
///     The arrays' dtypes or numbers of dimensions differ, or they are in different memory.
/// ValueError
///     Their shapes differ, ``out`` is read-only or overlaps an input.
/// BufferError
///     An array is on a device dlspan has no view of, or CUDA cannot be reached.
///
/// Notes
/// -----
/// On a CUDA device, enqueued on the caller's stream (as for ``add``).
#[pyfunction]
#[pyo3(signature = (a, b, out = None))]
pub(crate) fn mul<'py>(
    py: Python<'py>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    binary(py, a, b, out, MulOp)
}

/// `operator.index(value)`: the Python int of an int or of anything with `__index__` (NumPy and
/// PyTorch integers), through the C API.
pub(crate) fn index<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: a live object, attached; returns a new reference, or null with an exception set.
    let int = unsafe { pyo3::ffi::PyNumber_Index(value.as_ptr()) };
    // SAFETY: that new reference (or null and the exception), owned from here on.
    unsafe { Bound::from_owned_ptr_or_err(value.py(), int) }
}

/// A Python scalar, in the widest Rust type of its kind.
#[derive(Clone, Copy)]
pub(crate) enum Scalar {
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
        } else {
            return Self::extract_other(value);
        })
    }

    /// A number of another type: an array scalar (NumPy's, JAX's, a 0-d array, PyTorch tensor or
    /// `dlspan.Tensor`: anything with `ndim`, which must be 0) by its `tolist()`, the builtin number
    /// of its dtype's kind (`np.complex64(2j)` stays complex, `np.int64(2)` an integer); any other
    /// number (a `Fraction`) by the first of `__index__`, `__float__`, `__complex__` it answers.
    fn extract_other(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = value.py();
        let name = || value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        let not_a_number =
            || PyTypeError::new_err(format!("alpha must be a number (bool, int, float or complex), got {}", name()));
        if let Some(ndim) = value.getattr_opt(intern!(py, "ndim"))? {
            if ndim.extract::<i64>().ok() != Some(0) {
                return Err(PyTypeError::new_err(format!(
                    "alpha must be a number or a 0-d array, got a {} of ndim {ndim}",
                    name()
                )));
            }
            let scalar = value.call_method0(intern!(py, "tolist")).map_err(|_| not_a_number())?;
            let builtin = scalar.is_instance_of::<PyBool>()
                || scalar.is_instance_of::<PyInt>()
                || scalar.is_instance_of::<PyFloat>()
                || scalar.is_instance_of::<PyComplex>();
            return if builtin { Self::extract(&scalar) } else { Err(not_a_number()) };
        }
        let index = || -> PyResult<Self> { Ok(Self::Int(index(value)?.extract()?)) };
        let complex = || -> PyResult<Self> {
            let c = py.get_type::<PyComplex>().call1((value,))?;
            let c = c.cast::<PyComplex>()?;
            Ok(Self::Complex(Complex::new(c.real(), c.imag())))
        };
        index().or_else(|_| value.extract::<f64>().map(Self::Float)).or_else(|_| complex()).map_err(|_| not_a_number())
    }

    fn kind(self) -> u8 {
        match self {
            Self::Bool(_) => 0,
            Self::Int(_) => 1,
            Self::Float(_) => 2,
            Self::Complex(_) => 3,
        }
    }

    fn kind_name(self) -> &'static str {
        ["bool", "int", "float", "complex"][usize::from(self.kind())]
    }

    pub(crate) fn to<T: Numeric>(self) -> T {
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
    type Output = PyResult<()>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let alpha: T = self.alpha.to();
        let mut x = self.x.typed_mut::<T, R, LayoutStrideRelaxed>().in_argument("x")?;
        run(self.py, x.size(), move || x.for_each_unordered(|v| *v = v.mul(alpha)));
        Ok(())
    }

    fn visit_subbyte<T: Numeric + PlainBits, const R: usize>(self) -> Self::Output {
        if !packed(self.x, "x")? {
            return self.visit::<T, R>();
        }
        let alpha: T = self.alpha.to();
        let mut x =
            self.x.view_mut().in_argument("x")?.into_typed_packed::<T, R, LayoutStrideRelaxed>().in_argument("x")?;
        x.update(|v| v.mul(alpha));
        Ok(())
    }
}

/// Multiplies an array by a scalar in place: ``x *= alpha``.
///
/// Parameters
/// ----------
/// x : array
///     A writable array of any framework, in host memory or on a CUDA device, of any dtype and
///     strides (on a device: integers and IEEE-like floats).
/// alpha : bool, int, float or complex
///     The factor, rounded into ``x``'s dtype. It may not be of a higher kind than ``x``
///     (bool < integer < float < complex), as NumPy's ``same_kind`` casting says. NumPy scalars
///     and 0-d arrays or tensors count by their dtype's kind (``np.complex64(2j)`` is complex,
///     ``np.int64(2)`` an integer); other numbers by the first of ``__index__``, ``__float__``,
///     ``__complex__`` they answer.
///
/// Raises
/// ------
/// TypeError
///     ``alpha`` is not a number, or of a higher kind than ``x`` (``kind`` is ``"ScalarKind"``); a
///     dtype without a kernel on the device (``"Unsupported"``).
/// ValueError
///     ``x`` is read-only (a JAX array, for one), or a PyTorch tensor that requires grad while
///     gradients are recorded.
/// BufferError
///     ``x`` is on a device dlspan has no view of, or CUDA cannot be reached.
///
/// Notes
/// -----
/// On a CUDA device, enqueued on the caller's stream (as for ``add``).
#[pyfunction]
#[pyo3(name = "scale_")]
pub(crate) fn scale(py: Python<'_>, x: &Bound<'_, PyAny>, alpha: &Bound<'_, PyAny>) -> PyResult<()> {
    // The factor first: reading it may run Python code (a tensor's `tolist`, a subclass's
    // `__torch_function__`), which should not run while `x`'s mutable view is registered.
    let alpha = Scalar::extract(alpha).in_argument("alpha")?;
    let x = match PyDynViewMut::extract_or_device(x, "x") {
        Err(OffHostMut::Failed(err)) => return Err(err),
        x => x,
    };
    let dtype = match &x {
        Ok(x) => x.dtype(),
        Err(OffHostMut::Device(x)) => x.dtype(),
        Err(OffHostMut::Managed(x)) => x.dtype(),
        Err(OffHostMut::Failed(_)) => unreachable!("returned above"),
    };
    if alpha.kind() > rank_of_kind(dtype.code) {
        let err = PyTypeError::new_err(format!(
            "cannot scale a {dtype} array in place by a {}: alpha may not be of a higher kind than the array \
             (bool < int < float < complex)",
            alpha.kind_name()
        ));
        let _ = err.value(py).setattr("kind", "ScalarKind");
        return Err(err).in_argument("alpha");
    }
    let mut x = match x {
        Ok(x) => x,
        Err(OffHostMut::Device(x)) => return device::scale(*x, alpha),
        Err(OffHostMut::Managed(x)) => return device::scale(*x, alpha),
        Err(OffHostMut::Failed(err)) => return Err(err),
    };
    let rank = x.rank();
    dispatch_tensor(dtype, rank, Scale { x: &mut x, alpha, py }).in_argument("x")?
}

struct Sum<'v, 'x, 'py> {
    x: &'v PyDynView<'x>,
    py: Python<'py>,
}

/// A total of `T`s, in the accumulator type, as a Python number.
pub(crate) fn total<T: Numeric>(py: Python<'_>, total: T::Acc) -> PyResult<Bound<'_, PyAny>> {
    Ok(match rank_of_kind(T::DTYPE.code) {
        0 | 1 => cast::<T::Acc, i128>(total).into_pyobject(py)?.into_any(),
        3 => {
            let c = cast::<T::Acc, Complex<f64>>(total);
            PyComplex::from_doubles(py, c.re, c.im).into_any()
        }
        _ => cast::<T::Acc, f64>(total).into_pyobject(py)?.into_any(),
    })
}

impl<'py> TensorVisitor for Sum<'_, '_, 'py> {
    type Output = PyResult<Bound<'py, PyAny>>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let x = self.x.typed::<T, R, LayoutStrideRelaxed>().in_argument("x")?;
        // Pairwise, in the accumulator type (wrapping for integers), as NumPy sums; long runs'
        // halves on the CPU kernels' threads (the same bits).
        let sum = run(self.py, x.size(), move || x.par_sum_with(T::Acc::ZERO, |&v| v.to_acc(), Numeric::add));
        total::<T>(self.py, sum)
    }

    fn visit_subbyte<T: Numeric + PlainBits, const R: usize>(self) -> Self::Output {
        if !packed(self.x, "x")? {
            return self.visit::<T, R>();
        }
        let x = self.x.view().in_argument("x")?.typed_packed::<T, R, LayoutStrideRelaxed>().in_argument("x")?;
        let sum = run(self.py, x.size(), move || x.sum_with(T::Acc::ZERO, |v| v.to_acc(), Numeric::add));
        total::<T>(self.py, sum)
    }
}

/// The sum of every element of an array, as a Python number.
///
/// Pairwise summation (NumPy's algorithm: a contiguous array, or one axis of positive stride, gives
/// ``np.sum``'s result bit for bit) in the dtype's accumulator: ``float32`` for ``float32`` and the smaller floats
/// (``float16``, ``bfloat16``, FP8, FP6, FP4), ``float64`` for ``float64``, 64-bit integers for
/// integers and ``bool`` (wrapping on overflow, as NumPy's do). In host memory, the halves of a
/// long run (at least 2**17 values) are summed on the worker threads of dlspan's CPU kernels
/// (``DLSPAN_NUM_THREADS``, else the cores the process may run on), the GIL released, with the
/// same result for every number of threads.
///
/// Parameters
/// ----------
/// x : array
///     An array of any framework, of any dtype, shape and strides (packed FP4 and FP6 data
///     included), in host memory or on a CUDA device (there: bool, integers and real floats).
///
/// Returns
/// -------
/// int, float or complex
///     ``int`` for integers and ``bool``, ``complex`` for complex dtypes, ``float`` otherwise.
///
/// Notes
/// -----
/// On a CUDA device the sum runs on the caller's stream (as for ``add``), after the work already
/// there, in the same accumulators, with compensated per-thread sums added as a tree (as accurate
/// as NumPy's pairwise sum, not bit for bit); the total is read back on that stream, and the call
/// waits for that stream only.
#[pyfunction]
pub(crate) fn sum<'py>(py: Python<'py>, x: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let x = match PyDynView::extract_or_device(x, "x") {
        Ok(x) => x,
        Err(OffHost::Device(x)) => return device::sum(py, *x),
        Err(OffHost::Managed(x)) => return device::sum(py, *x),
        Err(OffHost::Failed(err)) => return Err(err),
    };
    dispatch_tensor(x.dtype(), x.rank(), Sum { x: &x, py }).in_argument("x")?
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

    fn visit_subbyte<T: Numeric + PlainBits, const R: usize>(self) -> Self::Output {
        let x = self.0.view_mut_as::<DynMdspanMut<'_>>()?;
        if x.is_subbyte_padded() {
            return self.visit::<T, R>();
        }
        // Packed sub-byte data (DLPack's default), value by value.
        let mut x = x.into_typed_packed::<T, 1, dlspan::LayoutRight>()?;
        let mut i = 0i128;
        x.update(|_| {
            i += 1;
            cast(i - 1)
        });
        Ok(())
    }
}

/// A new one-axis array of the values ``0, 1, ..., n - 1``.
///
/// Parameters
/// ----------
/// n : int
///     The number of values.
/// dtype : str, NumPy dtype or PyTorch dtype, optional
///     The data type (as for ``zeros``), ``int64`` by default. Values are rounded into it (to
///     nearest, ties to even; narrow floats saturate or overflow by their format's rule).
/// like : array, optional
///     An array whose framework the result takes (a NumPy array, a ``torch.Tensor``, a JAX array),
///     as NumPy's ``like=``; a ``Tensor`` by default, and for dtypes that framework cannot hold.
///
/// Returns
/// -------
/// Tensor or array
///
/// Raises
/// ------
/// TypeError
///     ``dtype`` is not a data type dlspan holds.
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

/// A compact, hashable dispatch key of an array: equal keys mean that a kernel compiled for one
/// array serves the other.
///
/// Parameters
/// ----------
/// x : array
///     An array of any framework, dtype and device.
///
/// Returns
/// -------
/// int
///     The dtype (DLPack's code, bits and lanes: bits 0-31), the number of axes (32-39), the layout
///     class (40-41: 0 row-major, 1 column-major, 2 positive strides, 3 zero or negative strides),
///     the device type (42-49) and id (50-57), and whether it is read-only (58).
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
