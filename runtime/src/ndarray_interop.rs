//! Zero-copy conversions between views and [`ndarray`](https://docs.rs/ndarray) views (feature
//! `ndarray`, for ndarray 0.17).
//!
//! - [`Mdspan::to_ndarray`] / [`MdspanMut::into_ndarray`]: a host view as an `ArrayView` /
//!   `ArrayViewMut` of the same elements, ranks 0 to 6 (ndarray's fixed dimensions), any layout
//!   (reversed axes become inverted ndarray axes).
//! - [`Mdspan::from_ndarray`] / [`MdspanMut::from_ndarray`]: an ndarray view (fixed or dynamic
//!   dimension) as a relaxed view of rank `R`, checked.

use crate::error::DlpackError;
use crate::index::{Dims, Extents, Layout, LayoutStrideRelaxed, Mapping};
use crate::space::{Host, HostAccessible};
use crate::view::{Mdspan, MdspanMut};
use ::ndarray::{ArrayView, ArrayViewMut, Axis, Dim, Dimension, IntoDimension, ShapeBuilder};
use core::ptr::NonNull;

/// What `from_shape_ptr` needs for a view with elements: the element with the lowest address among
/// those with index 0 on every non-reversed axis (the corner reached by the last index of every
/// reversed axis), and non-negative strides; plus which axes to invert afterwards.
///
/// A view without elements has none (`None`): it becomes ndarray's own form of an empty array,
/// whose strides are all zero. ndarray moves its pointer along the axes even of an empty array
/// (`invert_axis`, slicing) and requires every such move to stay in the allocation, and an empty
/// view may have no allocation at all; with zero strides the pointer never moves.
struct NdParts<const R: usize> {
    corner: usize,
    strides: [usize; R],
    reversed: [bool; R],
}

fn nd_parts<const R: usize, E: Extents<R>, L: Layout>(mapping: &Mapping<R, E, L>) -> Option<NdParts<R>> {
    if mapping.size() == 0 {
        return None;
    }
    let extents = mapping.extents();
    // An axis of extent 1 reaches nothing, so its stride may be anything a validated mapping
    // allows (`isize::MIN` has no magnitude in `isize`): ndarray gets 0 there.
    let strides = core::array::from_fn(|axis| if extents[axis] > 1 { mapping.stride(axis) } else { 0 });
    let mut corner = mapping.offset() as isize;
    for axis in 0..R {
        if strides[axis] < 0 {
            // In bounds: the last index of a reversed axis is reached by the mapping.
            corner += (extents[axis] as isize - 1) * strides[axis];
        }
    }
    Some(NdParts {
        corner: corner as usize,
        strides: strides.map(|s| s.unsigned_abs()),
        reversed: strides.map(|s| s < 0),
    })
}

impl<const R: usize> NdParts<R> {
    /// Inverts the reversed axes of an ndarray view made from these parts.
    fn invert<A: ::ndarray::RawData>(&self, view: &mut ::ndarray::ArrayBase<A, Dim<[usize; R]>>)
    where
        Dim<[usize; R]>: Dimension,
    {
        for (axis, &reversed) in self.reversed.iter().enumerate() {
            if reversed {
                view.invert_axis(Axis(axis));
            }
        }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> Mdspan<'a, T, R, E, L, S> {
    /// The same elements as an ndarray `ArrayView` (zero-copy): same shape, same logical indices.
    ///
    /// ```
    /// use dlspan::{HostMdspan, LayoutStrideRelaxed};
    /// let data = [1, 2, 3, 4, 5, 6];
    /// let reversed = HostMdspan::<i32, 2, LayoutStrideRelaxed>::from_slice_relaxed(&data, [2, 3], [-3, 1], 3)?;
    /// let array = reversed.to_ndarray();
    /// assert_eq!(array, ndarray::array![[4, 5, 6], [1, 2, 3]]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn to_ndarray(&self) -> ArrayView<'a, T, Dim<[usize; R]>>
    where
        [usize; R]: IntoDimension<Dim = Dim<[usize; R]>>,
        Dim<[usize; R]>: Dimension,
    {
        let Some(parts) = nd_parts(self.mapping()) else {
            // SAFETY: an empty array with ndarray's default strides, all zero for an empty shape:
            // every pointer ndarray forms is this one, non-null and aligned, and nothing is read;
            // the product of the non-zero extents fits isize (rule I17).
            return unsafe { ArrayView::from_shape_ptr(self.extents(), self.data_handle()) };
        };
        let ptr = self.data_handle().wrapping_add(parts.corner);
        let shape = self.extents().strides(parts.strides);
        // SAFETY: the view's elements are valid for reads for `'a` and unwritten by others; the
        // corner is an element of the view; every pointer ndarray forms moving along the axes from
        // there is an element of the view; the view's byte span fits isize and its size too
        // (validated mapping); the strides passed are non-negative.
        let mut view = unsafe { ArrayView::from_shape_ptr(shape, ptr) };
        parts.invert(&mut view);
        view
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> MdspanMut<'a, T, R, E, L, S> {
    /// The same elements as an ndarray `ArrayViewMut` (zero-copy), consuming this view.
    ///
    /// ```
    /// let mut data = [0u8; 4];
    /// let view = dlspan::HostMdspanMut::<u8, 2>::from_slice(&mut data, [2, 2])?;
    /// let mut array = view.into_ndarray();
    /// array[[1, 0]] = 7;
    /// assert_eq!(data, [0, 0, 7, 0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn into_ndarray(self) -> ArrayViewMut<'a, T, Dim<[usize; R]>>
    where
        [usize; R]: IntoDimension<Dim = Dim<[usize; R]>>,
        Dim<[usize; R]>: Dimension,
    {
        let Some(parts) = nd_parts(self.mapping()) else {
            // SAFETY: as in `Mdspan::to_ndarray`: an empty array, ndarray's zero strides.
            return unsafe { ArrayViewMut::from_shape_ptr(self.extents(), self.data_handle()) };
        };
        let ptr = self.data_handle().wrapping_add(parts.corner);
        let shape = self.extents().strides(parts.strides);
        // SAFETY: as in `Mdspan::to_ndarray`, for writes: the view is consumed, its elements are
        // unique (a mutable view's mapping is), and accessed by nothing else for `'a`.
        let mut view = unsafe { ArrayViewMut::from_shape_ptr(shape, ptr) };
        parts.invert(&mut view);
        view
    }
}

/// The lowest-address base and the relaxed mapping of an ndarray view's memory.
fn from_nd<T, const R: usize>(
    shape: &[usize],
    strides: &[isize],
    ptr: *const T,
) -> Result<(NonNull<T>, Mapping<R, Dims<R>, LayoutStrideRelaxed>), DlpackError> {
    if shape.len() != R {
        return Err(DlpackError::RankMismatch { expected: R, found: i32::try_from(shape.len()).unwrap_or(i32::MAX) });
    }
    let mut extents = [0usize; R];
    let mut stride_array = [0isize; R];
    extents.copy_from_slice(shape);
    stride_array.copy_from_slice(strides);
    let empty = extents.contains(&0);
    // ndarray points at index 0; the relaxed base is the lowest address reached.
    let mut below = 0usize;
    if !empty {
        for axis in 0..R {
            if stride_array[axis] < 0 {
                below += (extents[axis] - 1) * stride_array[axis].unsigned_abs();
            }
        }
    }
    let base = ptr.wrapping_sub(below).cast_mut();
    let mapping = Mapping::from_parts(extents, stride_array, below)?;
    let base = NonNull::new(base).ok_or(DlpackError::NullData)?;
    Ok((base, mapping))
}

impl<'a, T, const R: usize> Mdspan<'a, T, R, Dims<R>, LayoutStrideRelaxed, Host> {
    /// A relaxed view of an ndarray view's elements (zero-copy): same shape and indices; ndarray's
    /// negative strides become negative strides with an offset.
    ///
    /// # Errors
    ///
    /// [`DlpackError::RankMismatch`] when the ndarray view's rank is not `R`.
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let array = ndarray::arr2(&[[1, 2, 3], [4, 5, 6]]);
    /// let flipped = array.slice(ndarray::s![.., ..;-1]);
    /// let view = HostMdspan::<i32, 2, dlspan::LayoutStrideRelaxed>::from_ndarray(flipped)?;
    /// assert_eq!(view.to_vec(), [3, 2, 1, 6, 5, 4]);
    /// assert_eq!(view.strides(), [3, -1]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn from_ndarray<D: Dimension>(array: ArrayView<'a, T, D>) -> Result<Self, DlpackError> {
        let (base, mapping) = from_nd::<T, R>(array.shape(), array.strides(), array.as_ptr())?;
        // SAFETY: the ndarray view's elements are valid for reads for `'a` and not written through
        // any other path meanwhile (ArrayView's contract); the mapping reaches exactly them from
        // the lowest address, and was validated.
        Ok(unsafe { Self::from_parts_unchecked(base, mapping, ()) })
    }
}

impl<'a, T, const R: usize> MdspanMut<'a, T, R, Dims<R>, LayoutStrideRelaxed, Host> {
    /// A mutable relaxed view of an ndarray mutable view's elements (zero-copy).
    ///
    /// # Errors
    ///
    /// [`DlpackError::RankMismatch`]; [`DlpackError::OverlappingStrides`] for the rare unique
    /// layouts dlspan's sufficient uniqueness test does not recognise.
    ///
    /// ```
    /// use dlspan::{HostMdspanMut, LayoutStrideRelaxed};
    /// let mut array = ndarray::Array2::<f32>::zeros((2, 3));
    /// let mut view = HostMdspanMut::<f32, 2, LayoutStrideRelaxed>::from_ndarray(array.view_mut())?;
    /// view[[1, 2]] = 9.0;
    /// assert_eq!(array[[1, 2]], 9.0);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn from_ndarray<D: Dimension>(mut array: ArrayViewMut<'a, T, D>) -> Result<Self, DlpackError> {
        let ptr = array.as_mut_ptr();
        let (base, mapping) = from_nd::<T, R>(array.shape(), array.strides(), ptr)?;
        if !mapping.is_unique() {
            return Err(DlpackError::OverlappingStrides);
        }
        // SAFETY: as for `Mdspan::from_ndarray`, for writes: the ndarray view is consumed, its
        // elements are unique and accessed by nothing else for `'a`.
        Ok(unsafe { Self::from_parts_unchecked(base, mapping, ()) })
    }
}
