//! Lanes regrouped ([rule V9](crate::rules#v9)): the last axis of a view as the lanes of one element
//! (an `H×W×3` `float32` image as `H×W` pixels of `float32x3`, a `#[derive(DlElement)]` `Rgb`), and
//! each element's lanes as a new last axis, back. Both describe the same bytes as a `DLTensor` of
//! the new type and run the typed import on it, so the result meets every rule of its type, layout
//! and extents (the data type, alignment, the layout's strides, `bool` bytes) as an import would.

use super::export::{DlpackTensor, to_dlpack_tensor};
use super::import::{ImportOptions, import};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLTensor};
use crate::index::{Extents, Layout, Mapping};
use crate::space::MemorySpace;
use crate::view::{Mdspan, MdspanMut};
use core::ptr::NonNull;

/// The parts of a view of the same bytes with other axes and another data type: the first element,
/// its mapping and device, as the typed import finds them in a `DLTensor` built from `source`'s
/// export with `shape`, `strides` and `dtype`.
///
/// # Safety
///
/// `shape` and `strides` describe elements of `dtype` that lie exactly on the bytes of `source`'s
/// elements (the callers regroup lanes, moving no byte), so the view the import returns reaches
/// the source view's memory only.
unsafe fn reshaped<U: DlElement, const Q: usize, E: Extents<Q>, L: Layout, S: MemorySpace>(
    source: &DLTensor,
    dtype: DLDataType,
    shape: &[i64; Q],
    strides: &[i64; Q],
    unique: bool,
) -> Result<(NonNull<U>, Mapping<Q, E, L>), DlpackError> {
    let tensor = DLTensor {
        ndim: Q as i32,
        dtype,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.as_ptr().cast_mut(),
        ..*source
    };
    // SAFETY: `shape` and `strides` hold `Q` entries and outlive the call.
    let (ptr, map, _) = unsafe { import::<U, Q, E, L, S>(&tensor, ImportOptions::CURRENT, unique) }?;
    Ok((ptr, map))
}

/// The axes of `T` elements whose last axis of `lanes` values becomes one element: every other
/// stride in whole groups. [`DlpackError::LanesNotGroupable`] names the axis that is not.
fn grouped_axes<T: DlElement, U: DlElement, const R: usize, const Q: usize>(
    shape: &[i64; R],
    strides: &[i64; R],
) -> Result<([i64; Q], [i64; Q], u16), DlpackError> {
    let (last, lanes) = (R - 1, shape[R - 1]);
    let refuse = |axis: usize| DlpackError::LanesNotGroupable { axis, stride: strides[axis], lanes: lanes as usize };
    // A count of lanes DLPack can state: no element has 0 lanes, nor more than 65535 (`U`'s data
    // type, compared with the source's with `count` times its lanes, then says which).
    let count = u16::try_from(lanes).unwrap_or(u16::MAX);
    if count == 0 || i64::from(count) != lanes {
        return Err(DlpackError::DtypeMismatch {
            expected: U::DTYPE,
            found: DLDataType { lanes: T::DTYPE.lanes.saturating_mul(count), ..T::DTYPE },
        });
    }
    // The group's values adjacent (any stride for a group of one).
    if lanes > 1 && strides[last] != 1 {
        return Err(refuse(last));
    }
    let (mut out_shape, mut out_strides) = ([0i64; Q], [0i64; Q]);
    for axis in 0..Q {
        out_shape[axis] = shape[axis];
        // An axis of one index steps nowhere: its stride, rounded, only has to suit the layout.
        if shape[axis] > 1 && strides[axis] % lanes != 0 {
            return Err(refuse(axis));
        }
        out_strides[axis] = strides[axis].div_euclid(lanes);
    }
    Ok((out_shape, out_strides, count))
}

/// `T`'s data type with `count` times its lanes; `None` beyond DLPack's 16-bit lanes count.
fn with_lanes<T: DlElement>(count: u16) -> Option<DLDataType> {
    let lanes = T::DTYPE.lanes.checked_mul(count)?;
    Some(DLDataType { lanes, ..T::DTYPE })
}

/// The parts of the view of `U` elements whose lanes are the last axis of `source`, an export of a
/// view of `T` elements (mutable when `unique`).
fn grouped<T: DlElement, U: DlElement, const R: usize, const Q: usize, E: Extents<Q>, L: Layout, S: MemorySpace>(
    source: &DlpackTensor<'_, R>,
    unique: bool,
) -> Result<(NonNull<U>, Mapping<Q, E, L>), DlpackError> {
    let (shape, strides, count) = grouped_axes::<T, U, R, Q>(source.shape(), source.strides())?;
    let dtype = with_lanes::<T>(count).ok_or(DlpackError::DtypeMismatch { expected: U::DTYPE, found: T::DTYPE })?;
    // SAFETY: the groups are the last axis's adjacent values, each group's first value on an
    // element of the source and every step a whole number of groups: the same bytes.
    unsafe { reshaped::<U, Q, E, L, S>(&source.get(), dtype, &shape, &strides, unique) }
}

/// The parts of the view of `T2` values, a new last axis, that are the lanes of the `T` elements of
/// `source`, an export of a view (mutable when `unique`).
fn split<T: DlElement, T2: DlElement, const R: usize, const R2: usize, E: Extents<R2>, L: Layout, S: MemorySpace>(
    source: &DlpackTensor<'_, R>,
    unique: bool,
) -> Result<(NonNull<T2>, Mapping<R2, E, L>), DlpackError> {
    let (shape, strides) = split_axes::<T, T2, R, R2>(source.shape(), source.strides())?;
    // SAFETY: each element's lanes, in order, are the new axis's adjacent values: the same bytes.
    unsafe { reshaped::<T2, R2, E, L, S>(&source.get(), T2::DTYPE, &shape, &strides, unique) }
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, T, R, E, L, S> {
    /// The view with its last axis as the lanes of one element of `U` ([rule V9](crate::rules#v9)):
    /// an `H×W×3` `float32` image as `H×W` pixels of a `#[derive(DlElement)]` struct of three
    /// `f32` (`float32x3`), zero-copy. The result's rank `Q` is one less (a compile error
    /// otherwise); its extents `E2` and layout `L2` are checked as an import checks them, so name
    /// them in the result's type (`LayoutStride` takes any positive strides; `LayoutRight` a
    /// row-major image).
    ///
    /// # Errors
    ///
    /// - [`DlpackError::LanesNotGroupable`] when the last axis's values are not adjacent (its stride
    ///   is not 1) or another axis's stride is not a whole number of groups, naming the axis;
    /// - [`DlpackError::DtypeMismatch`] when `U` is not `T` with as many lanes as the last axis has
    ///   values (the count of lanes found in `found`);
    /// - the rules of section [I](crate::rules#i) for `U`, `E2` and `L2`: alignment for `U`
    ///   ([`DlpackError::Misaligned`]), the layout's strides, static extents, `bool` bytes.
    ///
    /// ```
    /// use dlspan::{DlElement, HostMdspan, LayoutStride};
    ///
    /// #[derive(Clone, Copy, Debug, PartialEq, DlElement)]
    /// #[repr(C)]
    /// struct Rgb { r: f32, g: f32, b: f32 }
    ///
    /// // A 2×2 image, channels last (as C, NumPy and PyTorch lay images out).
    /// let data: Vec<f32> = (0..12).map(|v| v as f32).collect();
    /// let image = HostMdspan::<f32, 3>::from_slice(&data, [2, 2, 3])?;
    /// let pixels: HostMdspan<Rgb, 2> = image.group_lanes()?;
    /// assert_eq!(pixels[[1, 0]], Rgb { r: 6.0, g: 7.0, b: 8.0 });
    /// // A column of the image is a strided view: its pixels too.
    /// let column = image.subview((.., 1..2, ..));
    /// let column: HostMdspan<Rgb, 2, LayoutStride> = column.group_lanes()?;
    /// assert_eq!(column[[1, 0]].b, 11.0);
    /// // Two channels of three are no pixel.
    /// let two = image.subview((.., .., 0..2));
    /// assert!(two.group_lanes::<Rgb, 2, dlspan::Dims<2>, LayoutStride>().is_err());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn group_lanes<U: DlElement, const Q: usize, E2: Extents<Q>, L2: Layout>(
        &self,
    ) -> Result<Mdspan<'a, U, Q, E2, L2, S>, DlpackError> {
        const { assert!(Q + 1 == R, "group_lanes gives a view of one axis fewer") };
        let (ptr, map) = grouped::<T, U, R, Q, E2, L2, S>(&to_dlpack_tensor(self)?, false)?;
        // SAFETY: a validated view of `self`'s bytes, valid for reads for `'a` (`self`'s invariant),
        // with `self`'s origin (its device and ordering event).
        Ok(unsafe { Mdspan::from_parts_unchecked(ptr, map, self.origin()) })
    }

    /// The view with each element's lanes as a new last axis, of values of `T2`
    /// ([rule V9](crate::rules#v9)): `H×W` pixels of `float32x3` as an `H×W×3` `float32` image,
    /// zero-copy; the inverse of [`group_lanes`](Self::group_lanes). The result's rank `R2` is one
    /// more (a compile error otherwise); its extents `E2` and layout `L2` are checked as an import
    /// checks them.
    ///
    /// # Errors
    ///
    /// [`DlpackError::DtypeMismatch`] when `T2` is not `T`'s code and width with a lanes count that
    /// divides `T`'s; the rules of section [I](crate::rules#i) for `T2`, `E2` and `L2`.
    ///
    /// ```
    /// use dlspan::{HostMdspan, dtype::F32x4};
    /// let data = [F32x4::from([1.0, 2.0, 3.0, 4.0]), F32x4::from([5.0, 6.0, 7.0, 8.0])];
    /// let vectors = HostMdspan::<F32x4, 1>::from_slice(&data, [2])?;
    /// let values: HostMdspan<f32, 2> = vectors.split_lanes()?;
    /// assert_eq!(values.extents(), [2, 4]);
    /// assert_eq!(values[[1, 2]], 7.0);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn split_lanes<T2: DlElement, const R2: usize, E2: Extents<R2>, L2: Layout>(
        &self,
    ) -> Result<Mdspan<'a, T2, R2, E2, L2, S>, DlpackError> {
        const { assert!(R2 == R + 1, "split_lanes gives a view of one axis more") };
        let (ptr, map) = split::<T, T2, R, R2, E2, L2, S>(&to_dlpack_tensor(self)?, false)?;
        // SAFETY: as in `group_lanes`.
        Ok(unsafe { Mdspan::from_parts_unchecked(ptr, map, self.origin()) })
    }
}

/// The axes of `T2` values of a view of `T` elements whose lanes become a new last axis.
fn split_axes<T: DlElement, T2: DlElement, const R: usize, const R2: usize>(
    shape: &[i64; R],
    strides: &[i64; R],
) -> Result<([i64; R2], [i64; R2]), DlpackError> {
    let (whole, part) = (T::DTYPE, T2::DTYPE);
    let fits = whole.code == part.code && whole.bits == part.bits && part.lanes > 0 && whole.lanes % part.lanes == 0;
    if !fits {
        return Err(DlpackError::DtypeMismatch { expected: part, found: whole });
    }
    let count = i64::from(whole.lanes / part.lanes);
    let (mut out_shape, mut out_strides) = ([0i64; R2], [0i64; R2]);
    for axis in 0..R {
        out_shape[axis] = shape[axis];
        // Counted in the parts. A validated view's byte span fits isize, but an axis of one index
        // may have any stride: one beyond i64 in parts is refused as beyond the address space.
        out_strides[axis] = strides[axis].checked_mul(count).ok_or(DlpackError::SpanOverflow)?;
    }
    (out_shape[R], out_strides[R]) = (count, 1);
    Ok((out_shape, out_strides))
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'a, T, R, E, L, S> {
    /// The mutable view with its last axis as the lanes of one element of `U`: see
    /// [`Mdspan::group_lanes`], whose errors it returns, and [`DlpackError::UncheckedWrites`] for a
    /// `U` that may write bytes `T` forbids (lanes of `dtype::Bool` over Rust `bool`s). `self` is
    /// consumed either way; take it from a reborrow, `view.reborrow()`, to keep it.
    ///
    /// ```
    /// use dlspan::{DlElement, HostMdspanMut};
    ///
    /// #[derive(Clone, Copy, DlElement)]
    /// #[repr(C)]
    /// struct Rgb { r: u8, g: u8, b: u8 }
    ///
    /// let mut data = [0u8; 12];
    /// let image = HostMdspanMut::<u8, 3>::from_slice(&mut data, [2, 2, 3])?;
    /// let mut pixels: HostMdspanMut<Rgb, 2> = image.into_grouped_lanes()?;
    /// pixels[[0, 1]] = Rgb { r: 255, g: 128, b: 1 };
    /// assert_eq!(data[3..6], [255, 128, 1]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn into_grouped_lanes<U: DlElement, const Q: usize, E2: Extents<Q>, L2: Layout>(
        self,
    ) -> Result<MdspanMut<'a, U, Q, E2, L2, S>, DlpackError> {
        const { assert!(Q + 1 == R, "into_grouped_lanes gives a view of one axis fewer") };
        let (ptr, map) = grouped::<T, U, R, Q, E2, L2, S>(&to_dlpack_tensor(&self)?, true)?;
        // After the type's own checks, so that another type is its mismatch.
        if !T::VALIDITY.kept_by(U::VALIDITY) {
            return Err(DlpackError::UncheckedWrites);
        }
        let origin = self.origin();
        // SAFETY: a validated, unique view of `self`'s bytes, which `self` (consumed) held alone for
        // `'a`, with its origin.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, map, origin) })
    }

    /// The mutable view with each element's lanes as a new last axis: see [`Mdspan::split_lanes`],
    /// whose errors it returns, and [`DlpackError::UncheckedWrites`] for a `T2` that may write bytes
    /// `T` forbids. `self` is consumed either way.
    ///
    /// ```
    /// use dlspan::{HostMdspanMut, dtype::F32x2};
    /// let mut data = [F32x2::default(); 3];
    /// let vectors = HostMdspanMut::<F32x2, 1>::from_slice(&mut data, [3])?;
    /// let mut values: HostMdspanMut<f32, 2> = vectors.into_split_lanes()?;
    /// values[[2, 1]] = 5.0;
    /// assert_eq!(data[2].y, 5.0);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn into_split_lanes<T2: DlElement, const R2: usize, E2: Extents<R2>, L2: Layout>(
        self,
    ) -> Result<MdspanMut<'a, T2, R2, E2, L2, S>, DlpackError> {
        const { assert!(R2 == R + 1, "into_split_lanes gives a view of one axis more") };
        let (ptr, map) = split::<T, T2, R, R2, E2, L2, S>(&to_dlpack_tensor(&self)?, true)?;
        // After the type's own checks, so that another type is its mismatch.
        if !T::VALIDITY.kept_by(T2::VALIDITY) {
            return Err(DlpackError::UncheckedWrites);
        }
        let origin = self.origin();
        // SAFETY: as in `into_grouped_lanes`.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, map, origin) })
    }
}
