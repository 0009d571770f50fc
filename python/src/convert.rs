//! `copy` and `cast`: one array's values into another of any dtype and layout, on the host (the
//! dtype dispatch twice: the source's type, then the output's) and, for CUDA arguments, on the
//! caller's stream (`device.rs`).

use crate::device;
use crate::ops::{Target, packed, run, same_shape, values};
use dlspan::dtype::{
    Numeric, NumericVisitor, PlainBits, RankVisitor, TensorVisitor, cast, dispatch, dispatch_rank, dispatch_tensor,
};
use dlspan::ffi::DLDataType;
use dlspan::python::{InArgument, OffHost, Output, PyDynView, PyDynViewMut, dtype_from_py, extract_argument};
use dlspan::{DlpackError, LayoutStrideRelaxed};
use pyo3::prelude::*;

struct CopyInto<'v, 'a, 'py> {
    src: &'v PyDynView<'a>,
    out: &'v mut PyDynViewMut<'a>,
    py: Python<'py>,
}

impl TensorVisitor for CopyInto<'_, '_, '_> {
    type Output = PyResult<()>;

    fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
        let src = self.src.typed::<T, R, LayoutStrideRelaxed>().in_argument("src")?;
        let mut out = self.out.typed_mut::<T, R, LayoutStrideRelaxed>().in_argument("out")?;
        same_shape("src", &src.extents(), &out.extents())?;
        run(self.py, out.size(), move || out.copy_from(&src)).in_argument("src")
    }

    fn visit_subbyte<T: Numeric + PlainBits, const R: usize>(self) -> Self::Output {
        let out_packed = {
            let out = self.out.view_mut().in_argument("out")?;
            out.element_bits() < 8 && !out.is_subbyte_padded()
        };
        if !packed(self.src, "src")? && !out_packed {
            return self.visit::<T, R>();
        }
        // Packed data value by value, in logical order.
        let out = self.out.view_mut().in_argument("out")?;
        if out.dtype() != T::DTYPE {
            return Err(DlpackError::DtypeMismatch { expected: T::DTYPE, found: out.dtype() }).in_argument("out");
        }
        let shape = out.shape().to_vec();
        let mut values = values::<T, R>(self.src, "src", &shape)?;
        if out.is_subbyte_padded() {
            let mut out = out.into_typed::<T, R, LayoutStrideRelaxed>().in_argument("out")?;
            out.iter_mut().for_each(|o| *o = values.next().unwrap_or(T::ZERO));
        } else {
            let mut out = out.into_typed_packed::<T, R, LayoutStrideRelaxed>().in_argument("out")?;
            out.update(|_| values.next().unwrap_or(T::ZERO));
        }
        Ok(())
    }
}

/// Copies an array into another: ``out[...] = src``.
///
/// Parameters
/// ----------
/// src : array
///     An array of any framework, dtype, shape and strides, in host memory or on a CUDA device.
/// out : array
///     A writable array of the same dtype and shape in the same memory (host, or the same CUDA
///     device), of any strides (a transpose, a column-major array, a strided slice), sharing no
///     memory with ``src``.
///
/// Raises
/// ------
/// TypeError
///     The dtypes or numbers of dimensions differ, or the arrays are in different memory
///     (``kind`` is ``"DeviceMismatch"``).
/// ValueError
///     The shapes differ, ``out`` is read-only or overlaps ``src``.
/// BufferError
///     An array is on a device dlspan has no view of, or CUDA cannot be reached.
///
/// Notes
/// -----
/// On a CUDA device, enqueued on the caller's stream (as for ``add``); transposes go through
/// shared-memory tiles. Copies between host and device memory are not made here (use the
/// frameworks' own ``.to()`` / ``.get()``).
#[pyfunction]
pub(crate) fn copy(py: Python<'_>, src: &Bound<'_, PyAny>, out: &Bound<'_, PyAny>) -> PyResult<()> {
    let src = match PyDynView::extract_or_device(src, "src") {
        Ok(src) => src,
        Err(OffHost::Device(src)) => return device::copy(*src, out),
        Err(OffHost::Managed(src)) => return device::copy(*src, out),
        Err(OffHost::Failed(err)) => return Err(err),
    };
    let mut out: PyDynViewMut<'_> = extract_argument(out, "out")?;
    if src.dtype() != out.dtype() {
        return Err(DlpackError::DtypeMismatch { expected: src.dtype(), found: out.dtype() }).in_argument("out");
    }
    let (dtype, rank) = (src.dtype(), src.rank());
    dispatch_tensor(dtype, rank, CopyInto { src: &src, out: &mut out, py }).in_argument("src")?
}

/// Refuses an `out` of another dtype than the `dtype` asked for.
pub(crate) fn check_cast_dtype(dtype: Option<DLDataType>, out: DLDataType) -> PyResult<()> {
    match dtype {
        Some(expected) if expected != out => {
            Err(DlpackError::DtypeMismatch { expected, found: out }).in_argument("out")
        }
        _ => Ok(()),
    }
}

/// `len` values collected into a vector allocated up front: a refused allocation (a broadcast source
/// of more elements than memory holds) is `AllocationFailed` (`BufferError`), not an abort.
fn try_collect<T>(len: usize, values: impl Iterator<Item = T>) -> Result<Vec<T>, DlpackError> {
    let mut collected = Vec::new();
    collected.try_reserve_exact(len).map_err(|_| DlpackError::AllocationFailed {
        len,
        element_size: size_of::<T>(),
        alignment: align_of::<T>(),
    })?;
    collected.extend(values.take(len));
    Ok(collected)
}

/// The host cast's first step: the values of `x` (dtype `U`) in logical order, then converted.
struct Gather<'v, 'a, 'py, O> {
    x: &'v PyDynView<'a>,
    out: &'v mut O,
    py: Python<'py>,
}

impl<O: Target> Gather<'_, '_, '_, O> {
    fn convert<U: Numeric>(self, values: Vec<U>, rank: usize) -> PyResult<()> {
        let dtype = self.out.dynamic()?.dtype();
        let convert = Convert { values, rank, out: self.out, py: self.py };
        dispatch(dtype, convert).in_argument("out")?
    }
}

impl<O: Target> TensorVisitor for Gather<'_, '_, '_, O> {
    type Output = PyResult<()>;

    fn visit<U: Numeric, const R: usize>(self) -> Self::Output {
        let x = self.x.typed::<U, R, LayoutStrideRelaxed>().in_argument("x")?;
        let len = x.size();
        let values = run(self.py, len, move || try_collect(len, x.iter().copied())).in_argument("x")?;
        self.convert(values, R)
    }

    fn visit_subbyte<U: Numeric + PlainBits, const R: usize>(self) -> Self::Output {
        if !packed(self.x, "x")? {
            return self.visit::<U, R>();
        }
        let shape = self.x.view().in_argument("x")?.shape().to_vec();
        let len = shape.iter().product();
        let values = try_collect(len, values::<U, R>(self.x, "x", &shape)?).in_argument("x")?;
        self.convert(values, R)
    }
}

/// The host cast's second step: every value rounded into the output's dtype `T`, then written.
struct Convert<'v, 'py, U, O> {
    values: Vec<U>,
    rank: usize,
    out: &'v mut O,
    py: Python<'py>,
}

impl<'v, U: Numeric, O: Target> Convert<'v, '_, U, O> {
    fn converted<T: Numeric>(self) -> PyResult<(Vec<T>, usize, &'v mut O)> {
        let values = self.values;
        let len = values.len();
        let converted =
            run(self.py, len, move || try_collect(len, values.into_iter().map(cast::<U, T>))).in_argument("out")?;
        Ok((converted, self.rank, self.out))
    }
}

impl<U: Numeric, O: Target> NumericVisitor for Convert<'_, '_, U, O> {
    type Output = PyResult<()>;

    fn visit<T: Numeric>(self) -> Self::Output {
        let (values, rank, out) = self.converted::<T>()?;
        dispatch_rank(rank, Scatter { values, out }).in_argument("out")?
    }

    fn visit_subbyte<T: Numeric + PlainBits>(self) -> Self::Output {
        let (values, rank, out) = self.converted::<T>()?;
        let packed = {
            let out = out.dynamic()?;
            out.element_bits() < 8 && !out.is_subbyte_padded()
        };
        if packed {
            dispatch_rank(rank, ScatterPacked { values, out }).in_argument("out")?
        } else {
            dispatch_rank(rank, Scatter { values, out }).in_argument("out")?
        }
    }
}

/// The host cast's last step: the converted values written in logical order.
struct Scatter<'v, T, O> {
    values: Vec<T>,
    out: &'v mut O,
}

impl<T: Numeric, O: Target> RankVisitor for Scatter<'_, T, O> {
    type Output = PyResult<()>;

    fn visit<const R: usize>(self) -> Self::Output {
        let mut out = self.out.typed_mut::<T, R>()?;
        let values = self.values;
        out.iter_mut().zip(values).for_each(|(o, v)| *o = v);
        Ok(())
    }
}

/// The host cast's last step into packed sub-byte data.
struct ScatterPacked<'v, T, O> {
    values: Vec<T>,
    out: &'v mut O,
}

impl<T: Numeric + PlainBits, O: Target> RankVisitor for ScatterPacked<'_, T, O> {
    type Output = PyResult<()>;

    fn visit<const R: usize>(self) -> Self::Output {
        let mut out = self.out.dynamic()?.into_typed_packed::<T, R, LayoutStrideRelaxed>().in_argument("out")?;
        let mut values = self.values.into_iter();
        out.update(|_| values.next().unwrap_or(T::ZERO));
        Ok(())
    }
}

/// `x` cast into `out` on the host (shapes checked first).
fn cast_into<O: Target>(py: Python<'_>, x: &PyDynView<'_>, out: &mut O) -> PyResult<()> {
    let shape = x.view().in_argument("x")?.shape().to_vec();
    let (out_shape, out_rank) = {
        let out = out.dynamic()?;
        (out.shape().to_vec(), out.rank())
    };
    if out_rank != shape.len() {
        let found = i32::try_from(out_rank).unwrap_or(i32::MAX);
        return Err(DlpackError::RankMismatch { expected: shape.len(), found }).in_argument("out");
    }
    same_shape("out", &out_shape, &shape)?;
    dispatch_tensor(x.dtype(), x.rank(), Gather { x, out, py }).in_argument("x")?
}

/// Converts an array's elements to another dtype: a new array, or into ``out``.
///
/// Every element is rounded once into the target dtype, by the rules of ``dlspan``'s element cast
/// (round to nearest, ties to even; each FP8 format's overflow rule; NaN to the target's quiet NaN
/// with the input's sign; into integers as Rust's ``as``: saturating, NaN to 0; into ``bool``,
/// nonzero to ``True``): on a CUDA device the kernels give the CPU's results bit for bit.
///
/// Parameters
/// ----------
/// x : array
///     An array of any framework, dtype, shape and strides, in host memory or on a CUDA device
///     (there: bool, integers, real floats and FP8).
/// dtype : str, NumPy dtype or PyTorch dtype, optional
///     The target dtype (as for ``zeros``). Without it, ``out``'s dtype, else ``x``'s (a copy).
/// out : array, optional
///     A writable array of ``x``'s shape (any strides) in the same memory, of ``dtype`` if given.
///
/// Returns
/// -------
/// array or None
///     Without ``out``, a new array of ``x``'s shape in ``dtype``, in ``x``'s framework and memory
///     (a ``Tensor`` for dtypes that framework cannot hold); with ``out``, None.
///
/// Raises
/// ------
/// TypeError
///     ``dtype`` is not one dlspan holds, or differs from ``out``'s; the arrays are in different
///     memory (``kind`` is ``"DeviceMismatch"``); a dtype without a kernel on the device
///     (``"Unsupported"``).
/// ValueError
///     The shapes differ, ``out`` is read-only or overlaps ``x``.
/// BufferError
///     An array is on a device dlspan has no view of, or CUDA cannot be reached.
///
/// Notes
/// -----
/// On a CUDA device, enqueued on the caller's stream (as for ``add``).
#[pyfunction]
#[pyo3(name = "cast", signature = (x, dtype = None, *, out = None))]
pub(crate) fn cast_array<'py>(
    py: Python<'py>,
    x: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let dtype = dtype.filter(|d| !d.is_none()).map(dtype_from_py).transpose().in_argument("dtype")?;
    let out = out.filter(|out| !out.is_none());
    let x = match PyDynView::extract_or_device(x, "x") {
        Ok(x) => x,
        Err(OffHost::Device(x)) => return device::cast(py, *x, dtype, out),
        Err(OffHost::Managed(x)) => return device::cast(py, *x, dtype, out),
        Err(OffHost::Failed(err)) => return Err(err),
    };
    match out {
        Some(out) => {
            let mut out: PyDynViewMut<'_> = extract_argument(out, "out")?;
            check_cast_dtype(dtype, out.dtype())?;
            cast_into(py, &x, &mut out)?;
            Ok(None)
        }
        None => {
            let shape = x.view().in_argument("x")?.shape().to_vec();
            let mut out = Output::like(py, &x, dtype.unwrap_or(x.dtype()), &shape)?;
            cast_into(py, &x, &mut out)?;
            Ok(Some(out.finish()?))
        }
    }
}
