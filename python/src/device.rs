//! The package's functions on CUDA device and managed memory: the arguments extracted as device (or
//! managed) views, the caller's stream taken from them (rule Y21: PyTorch's current stream, CuPy's,
//! or dlspan's per-thread default stream for other producers), and the work enqueued there by
//! `dlspan::cuda::Stream`'s operations — the kernels of `Stream::add`, `mul`, `scale`, `sum`,
//! `copy_dynamic` and `cast_dynamic`. Nothing waits but `sum`, which reads its total back on that
//! stream and waits for that stream only.
//!
//! Every argument of a call lives in one space on one device: a host array among device arrays is
//! refused as `DeviceMismatch` (`TypeError`) naming the argument, arrays on two devices as
//! `DevicesDiffer` (`ValueError`). Without a CUDA driver a device argument is a `BufferError`
//! (`kind` `"LibraryMissing"`) before any memory is touched: the host bytes behind a CUDA label are
//! never read.
//!
//! The GIL stays held: the caller's stream is the caller's object (a `torch.cuda.Stream` the caller
//! may drop once other Python code runs), and launches return at once.

use crate::ops::{Op, Scalar, same_shape, total};
use dlspan::cuda::{CudaError, KernelSpace, Stream};
use dlspan::dtype::{Numeric, TensorVisitor, dispatch_tensor};
use dlspan::python::{CallerStream, InArgument, Output, PyDynView, PyDynViewMut, common_stream, extract_argument};
use dlspan::{DynMdspanMut, LayoutStrideRelaxed};
use pyo3::exceptions::{PyBufferError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// `err` as the Python exception the array API names (`kind` set to the variant's name): the
/// view errors as dlspan raises them, a missing driver or device as `BufferError` (the memory
/// cannot be reached), types without a kernel as `TypeError`, the rest as `RuntimeError`.
pub(crate) fn cuda_error(err: CudaError) -> PyErr {
    let (kind, py_err) = match &err {
        CudaError::View(view) => return (*view).into(),
        CudaError::LibraryMissing { .. } => ("LibraryMissing", PyBufferError::new_err(err.to_string())),
        CudaError::NoDevice { .. } => ("NoDevice", PyBufferError::new_err(err.to_string())),
        CudaError::Unsupported { .. } => ("Unsupported", PyTypeError::new_err(err.to_string())),
        CudaError::WrongDevice { .. } => ("WrongDevice", PyValueError::new_err(err.to_string())),
        CudaError::RankTooLarge { .. } => ("RankTooLarge", PyValueError::new_err(err.to_string())),
        CudaError::Driver { .. } => ("Driver", PyRuntimeError::new_err(err.to_string())),
        CudaError::Compile { .. } => ("Compile", PyRuntimeError::new_err(err.to_string())),
        _ => ("Cuda", PyRuntimeError::new_err(err.to_string())),
    };
    Python::attach(|py| {
        let _ = py_err.value(py).setattr("kind", kind);
    });
    py_err
}

/// The caller's stream of a call's device arguments (named, the first first; `None` for host ones,
/// which the extraction refused already): every one on one device, the first one's stream, its
/// device checked reachable (no driver, no such device: the first argument's error).
fn caller(arguments: &[(&'static str, Option<CallerStream>)]) -> PyResult<(CallerStream, &'static str)> {
    let Some(caller) = common_stream(arguments)? else {
        return Err(PyRuntimeError::new_err("a device argument has no stream"));
    };
    let first = arguments[0].0;
    // SAFETY: the stream is dropped at once, unused (made only to check the device).
    drop(unsafe { caller.stream() }.map_err(cuda_error).in_argument(first)?);
    Ok((caller, first))
}

/// The stream of [`caller`], to use at once: made after any Python code the call runs before its
/// launches (a result's allocation may run some), used only by the launches and the sum's wait
/// that follow, with the GIL held throughout, and dropped before the call runs Python code again.
fn stream((caller, first): (CallerStream, &'static str)) -> PyResult<Stream> {
    // SAFETY: as above: no Python code runs while the stream is in use, and its owner (the
    // caller's framework, or the driver for the default streams) keeps it alive meanwhile.
    unsafe { caller.stream() }.map_err(cuda_error).in_argument(first)
}

/// The stream of a call's device arguments, to use at once ([`stream`] of [`caller`]).
fn caller_stream(arguments: &[(&'static str, Option<CallerStream>)]) -> PyResult<Stream> {
    stream(caller(arguments)?)
}

/// Where a device result goes: an `out` argument, or a new tensor like the first input (in its
/// framework, on its device). Errors are noted with the argument `out`.
pub(crate) trait DeviceTarget<S: KernelSpace> {
    fn dynamic(&mut self) -> PyResult<DynMdspanMut<'_, S>>;
}

impl<S: KernelSpace> DeviceTarget<S> for PyDynViewMut<'_, S> {
    fn dynamic(&mut self) -> PyResult<DynMdspanMut<'_, S>> {
        self.view_mut().in_argument("out")
    }
}

impl<S: KernelSpace> DeviceTarget<S> for Output<'_> {
    fn dynamic(&mut self) -> PyResult<DynMdspanMut<'_, S>> {
        self.view_mut_as::<DynMdspanMut<'_, S>>().in_argument("out")
    }
}

/// A binary element-wise operation on the device.
struct Binary<'v, 'a, S: KernelSpace, O> {
    a: &'v PyDynView<'a, S>,
    b: &'v PyDynView<'a, S>,
    out: &'v mut O,
    stream: &'v Stream,
    multiply: bool,
}

impl<S: KernelSpace, O: DeviceTarget<S>> TensorVisitor for Binary<'_, '_, S, O> {
    type Output = PyResult<()>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let a = self.a.typed::<T, R, LayoutStrideRelaxed>().in_argument("a")?;
        let b = self.b.typed::<T, R, LayoutStrideRelaxed>().in_argument("b")?;
        let mut out = self.out.dynamic()?.into_typed::<T, R, LayoutStrideRelaxed>().in_argument("out")?;
        let shape = out.extents();
        same_shape("a", &a.extents(), &shape)?;
        same_shape("b", &b.extents(), &shape)?;
        let launched =
            if self.multiply { self.stream.mul(&a, &b, &mut out) } else { self.stream.add(&a, &b, &mut out) };
        launched.map_err(cuda_error)
    }
}

/// `a op b` on the device: into `out`, or into a new tensor like `a` (its dtype and shape, its
/// framework and device), returned.
pub(crate) fn binary<'py, S: KernelSpace>(
    py: Python<'py>,
    a: PyDynView<'_, S>,
    b: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    op: impl Op,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let b: PyDynView<'_, S> = extract_argument(b, "b")?;
    let (dtype, rank, multiply) = (a.dtype(), a.rank(), op.multiplies());
    match out.filter(|out| !out.is_none()) {
        Some(out) => {
            let mut out: PyDynViewMut<'_, S> = extract_argument(out, "out")?;
            let streams = [("a", a.caller_stream()), ("b", b.caller_stream()), ("out", out.caller_stream())];
            let stream = caller_stream(&streams)?;
            let visitor = Binary { a: &a, b: &b, out: &mut out, stream: &stream, multiply };
            dispatch_tensor(dtype, rank, visitor).in_argument("a")??;
            Ok(None)
        }
        None => {
            let caller = caller(&[("a", a.caller_stream()), ("b", b.caller_stream())])?;
            let shape = a.view().in_argument("a")?.shape().to_vec();
            let mut out = Output::like(py, &a, dtype, &shape)?;
            let stream = stream(caller)?;
            let visitor = Binary { a: &a, b: &b, out: &mut out, stream: &stream, multiply };
            dispatch_tensor(dtype, rank, visitor).in_argument("a")??;
            drop(stream);
            Ok(Some(out.finish()?))
        }
    }
}

struct Scale<'v, 'x, S: KernelSpace> {
    x: &'v mut PyDynViewMut<'x, S>,
    alpha: Scalar,
    stream: &'v Stream,
}

impl<S: KernelSpace> TensorVisitor for Scale<'_, '_, S> {
    type Output = PyResult<()>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let alpha: T = self.alpha.to();
        let mut x = self.x.typed_mut::<T, R, LayoutStrideRelaxed>().in_argument("x")?;
        self.stream.scale(&mut x, alpha).map_err(cuda_error)
    }
}

/// `x *= alpha` in place on the device (`alpha`'s kind already checked against `x`'s dtype).
pub(crate) fn scale<S: KernelSpace>(mut x: PyDynViewMut<'_, S>, alpha: Scalar) -> PyResult<()> {
    let stream = caller_stream(&[("x", x.caller_stream())])?;
    let (dtype, rank) = (x.dtype(), x.rank());
    dispatch_tensor(dtype, rank, Scale { x: &mut x, alpha, stream: &stream }).in_argument("x")?
}

struct Sum<'v, 'x, 'py, S: KernelSpace> {
    x: &'v PyDynView<'x, S>,
    stream: &'v Stream,
    py: Python<'py>,
}

impl<'py, S: KernelSpace> TensorVisitor for Sum<'_, '_, 'py, S> {
    type Output = PyResult<Bound<'py, PyAny>>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let x = self.x.typed::<T, R, LayoutStrideRelaxed>().in_argument("x")?;
        let sum = self.stream.sum(&x).map_err(cuda_error).in_argument("x")?;
        total::<T>(self.py, sum)
    }
}

/// The sum of every element on the device, read back on the caller's stream.
pub(crate) fn sum<'py, S: KernelSpace>(py: Python<'py>, x: PyDynView<'_, S>) -> PyResult<Bound<'py, PyAny>> {
    let stream = caller_stream(&[("x", x.caller_stream())])?;
    dispatch_tensor(x.dtype(), x.rank(), Sum { x: &x, stream: &stream, py }).in_argument("x")?
}

/// `src` into `out` on the device (one dtype and shape, any strides).
pub(crate) fn copy<S: KernelSpace>(src: PyDynView<'_, S>, out: &Bound<'_, PyAny>) -> PyResult<()> {
    let mut out: PyDynViewMut<'_, S> = extract_argument(out, "out")?;
    let stream = caller_stream(&[("src", src.caller_stream()), ("out", out.caller_stream())])?;
    let view = src.view().in_argument("src")?;
    let mut target = out.view_mut().in_argument("out")?;
    stream.copy_dynamic(&view, &mut target).map_err(cuda_error).in_argument("out")
}

/// `x` cast into `out`'s dtype on the device, or into a new tensor of `dtype` like `x`, returned.
pub(crate) fn cast<'py, S: KernelSpace>(
    py: Python<'py>,
    x: PyDynView<'_, S>,
    dtype: Option<dlspan::ffi::DLDataType>,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let view = x.view().in_argument("x")?;
    match out {
        Some(out) => {
            let mut out: PyDynViewMut<'_, S> = extract_argument(out, "out")?;
            crate::convert::check_cast_dtype(dtype, out.dtype())?;
            let stream = caller_stream(&[("x", x.caller_stream()), ("out", out.caller_stream())])?;
            let mut target = out.view_mut().in_argument("out")?;
            stream.cast_dynamic(&view, &mut target).map_err(cuda_error).in_argument("out")?;
            Ok(None)
        }
        None => {
            let caller = caller(&[("x", x.caller_stream())])?;
            let dtype = dtype.unwrap_or(x.dtype());
            let mut out = Output::like(py, &x, dtype, view.shape())?;
            let stream = stream(caller)?;
            let mut target = DeviceTarget::<S>::dynamic(&mut out)?;
            stream.cast_dynamic(&view, &mut target).map_err(cuda_error).in_argument("x")?;
            drop((target, stream));
            Ok(Some(out.finish()?))
        }
    }
}
