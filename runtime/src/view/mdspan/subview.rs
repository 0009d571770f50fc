//! Sub-views: a range per axis ([`SubviewRanges`]) or one axis fixed (`index_axis`), for shared and
//! mutable views.

use super::{Mdspan, MdspanMut};
use crate::error::DlpackError;
use crate::space::MemorySpace;
use crate::view::extents::{Dims, Extents};
use crate::view::layout::Layout;
use crate::view::mapping::Mapping;
use core::ops::{Bound, RangeBounds};
use core::ptr::NonNull;

/// One range per axis for a sub-view: an array of one range type (`[0..2, 1..3]`, `[.., ..]`) or a
/// tuple of any range types (`(.., 1..3)`, `(2.., 0..=1)`).
///
/// ```
/// let data: Vec<u8> = (0..12).collect();
/// let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [3, 4]).unwrap();
/// assert_eq!(m.subview([1..2, 0..2]).to_vec(), [4, 5]);
/// assert_eq!(m.subview((.., 3..)).to_vec(), [3, 7, 11]);
/// ```
pub trait SubviewRanges<const R: usize> {
    /// The bounds of the range for `axis` (`axis < R`).
    fn bounds(&self, axis: usize) -> (Bound<usize>, Bound<usize>);
}

impl<B: RangeBounds<usize>, const R: usize> SubviewRanges<R> for [B; R] {
    fn bounds(&self, axis: usize) -> (Bound<usize>, Bound<usize>) {
        (self[axis].start_bound().cloned(), self[axis].end_bound().cloned())
    }
}

macro_rules! tuple_ranges {
    ($($rank:literal => ($($axis:ident . $i:tt),+);)*) => {$(
        impl<$($axis: RangeBounds<usize>),+> SubviewRanges<$rank> for ($($axis,)+) {
            fn bounds(&self, axis: usize) -> (Bound<usize>, Bound<usize>) {
                match axis {
                    $($i => (self.$i.start_bound().cloned(), self.$i.end_bound().cloned()),)+
                    _ => (Bound::Unbounded, Bound::Unbounded),
                }
            }
        }
    )*};
}

tuple_ranges! {
    1 => (A.0);
    2 => (A.0, B.1);
    3 => (A.0, B.1, C.2);
    4 => (A.0, B.1, C.2, D.3);
    5 => (A.0, B.1, C.2, D.3, E.4);
    6 => (A.0, B.1, C.2, D.3, E.4, F.5);
    7 => (A.0, B.1, C.2, D.3, E.4, F.5, G.6);
    8 => (A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);
}

/// Normalises a range to `start..end` within `extent`.
fn range_within(
    axis: usize,
    (start, end): (Bound<usize>, Bound<usize>),
    extent: usize,
) -> Result<(usize, usize), DlpackError> {
    let start = match start {
        Bound::Included(s) => Some(s),
        Bound::Excluded(s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match end {
        Bound::Included(e) => e.checked_add(1),
        Bound::Excluded(e) => Some(e),
        Bound::Unbounded => Some(extent),
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= extent => Ok((start, end)),
        (start, end) => Err(DlpackError::SubviewOutOfBounds {
            axis,
            start: start.unwrap_or(usize::MAX),
            end: end.unwrap_or(usize::MAX),
            extent,
        }),
    }
}

/// A sub-mapping: new extents, strides and the element offset of its first element from the parent's
/// base pointer (parts of a validated mapping, so in range).
struct SubParts<const Q: usize> {
    extents: [usize; Q],
    strides: [isize; Q],
    start: isize,
}

fn sub_ranges<const R: usize, E: Extents<R>, L: Layout>(
    map: &Mapping<R, E, L>,
    ranges: &impl SubviewRanges<R>,
) -> Result<SubParts<R>, DlpackError> {
    let strides = map.strides();
    let mut extents = [0usize; R];
    let mut first = [0usize; R];
    for axis in 0..R {
        let (start, end) = range_within(axis, ranges.bounds(axis), map.extent(axis))?;
        extents[axis] = end - start;
        first[axis] = start;
    }
    // An empty sub-view reaches nothing: keep the parent's first element as its position.
    let start = if extents.contains(&0) { map.offset() as isize } else { map.offset_unchecked(&first) };
    Ok(SubParts { extents, strides, start })
}

fn sub_axis<const R: usize, const Q: usize, E: Extents<R>, L: Layout>(
    map: &Mapping<R, E, L>,
    axis: usize,
    index: usize,
) -> SubParts<Q> {
    debug_assert!(Q + 1 == R);
    assert!(axis < R, "axis {axis} out of range for rank {R}");
    let extent = map.extent(axis);
    assert!(index < extent, "index {index} out of bounds for axis {axis} of extent {extent}");
    let all = map.strides();
    let (mut extents, mut strides) = ([0usize; Q], [0isize; Q]);
    for (j, k) in (0..R).filter(|&k| k != axis).enumerate() {
        extents[j] = map.extent(k);
        strides[j] = all[k];
    }
    let mut first = [0usize; R];
    first[axis] = index;
    let start = if map.extents().contains(&0) { map.offset() as isize } else { map.offset_unchecked(&first) };
    SubParts { extents, strides, start }
}

impl<const Q: usize> SubParts<Q> {
    /// Applies validated sub-mapping parts to the parent's base pointer `ptr` (layout `L`).
    fn apply<T, L: Layout>(self, ptr: NonNull<T>) -> (NonNull<T>, Mapping<Q, Dims<Q>, L::Sub>) {
        let parts = self;
        if <L::Sub as Layout>::HAS_OFFSET {
            // The parent reaches no element below its base, so the sub-view's first element
            // offset is non-negative.
            (ptr, Mapping::assume_valid(parts.extents, parts.strides, parts.start as usize))
        } else {
            // Wrapping arithmetic: for device views the pointer is not a host allocation.
            let moved = ptr.as_ptr().wrapping_offset(parts.start);
            // SAFETY: non-relaxed layouts have positive strides and no offset below the
            // base, so `start` is the offset of the sub-view's first element (or, for an empty
            // sub-view, of the parent's), inside the parent's memory range, which does not
            // contain or wrap around address 0.
            (unsafe { NonNull::new_unchecked(moved) }, Mapping::assume_valid(parts.extents, parts.strides, 0))
        }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, T, R, E, L, S> {
    /// A sub-view of a range per axis (same rank): an array of ranges or a tuple of any ranges.
    ///
    /// # Panics
    ///
    /// If a range is reversed or exceeds its axis; [`try_subview`](Self::try_subview) returns an
    /// error instead.
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let data: Vec<i32> = (0..12).collect();
    /// let m = HostMdspan::<i32, 2>::from_slice(&data, [3, 4]).unwrap();
    /// let s = m.subview([1..3, 1..3]);
    /// assert_eq!(s.to_vec(), [5, 6, 9, 10]);
    /// ```
    #[track_caller]
    pub fn subview(&self, ranges: impl SubviewRanges<R>) -> Mdspan<'a, T, R, Dims<R>, L::Sub, S> {
        match self.try_subview(ranges) {
            Ok(view) => view,
            Err(err) => panic!("{err}"),
        }
    }

    /// A sub-view of a range per axis, or why not.
    ///
    /// # Errors
    ///
    /// [`DlpackError::SubviewOutOfBounds`] for a reversed or out-of-bounds range.
    ///
    /// ```
    /// use dlspan::{HostMdspan, DlpackError};
    /// let data = [0u8; 6];
    /// let m = HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
    /// assert!(matches!(m.try_subview([0..2, 2..4]), Err(DlpackError::SubviewOutOfBounds { axis: 1, .. })));
    /// ```
    pub fn try_subview(
        &self,
        ranges: impl SubviewRanges<R>,
    ) -> Result<Mdspan<'a, T, R, Dims<R>, L::Sub, S>, DlpackError> {
        let parts = sub_ranges(&self.map, &ranges)?;
        let (ptr, map) = parts.apply::<T, L>(self.ptr);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements.
        Ok(unsafe { Mdspan::from_parts_unchecked(ptr, map, self.ordinal) })
    }

    /// The view with `axis` fixed at `index`: rank `Q = R - 1` (a compile error otherwise).
    ///
    /// # Panics
    ///
    /// If `axis >= R` or `index` is out of bounds for the axis.
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let data: Vec<i32> = (0..6).collect();
    /// let m = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    /// assert_eq!(m.index_axis::<1>(0, 1).to_vec(), [3, 4, 5]);
    /// assert_eq!(m.index_axis::<1>(1, 2).to_vec(), [2, 5]);
    /// ```
    #[track_caller]
    pub fn index_axis<const Q: usize>(&self, axis: usize, index: usize) -> Mdspan<'a, T, Q, Dims<Q>, L::Sub, S> {
        const { assert!(Q + 1 == R, "index_axis removes one axis: the result's rank must be R - 1") };
        let parts = sub_axis::<R, Q, E, L>(&self.map, axis, index);
        let (ptr, map) = parts.apply::<T, L>(self.ptr);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements.
        unsafe { Mdspan::from_parts_unchecked(ptr, map, self.ordinal) }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'a, T, R, E, L, S> {
    /// A mutable sub-view of a range per axis, borrowing this view.
    ///
    /// # Panics
    ///
    /// If a range is reversed or exceeds its axis.
    ///
    /// ```
    /// let mut data = [0i32; 6];
    /// let mut m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 3]).unwrap();
    /// m.subview_mut((.., 1..2)).iter_mut().for_each(|x| *x = 1);
    /// assert_eq!(data, [0, 1, 0, 0, 1, 0]);
    /// ```
    #[track_caller]
    pub fn subview_mut(&mut self, ranges: impl SubviewRanges<R>) -> MdspanMut<'_, T, R, Dims<R>, L::Sub, S> {
        self.reborrow().into_subview(ranges)
    }

    /// A mutable sub-view of a range per axis, consuming this view.
    ///
    /// # Panics
    ///
    /// If a range is reversed or exceeds its axis; [`try_into_subview`](Self::try_into_subview)
    /// returns an error instead.
    ///
    /// ```
    /// let mut data = [0i32; 4];
    /// let m = dlspan::HostMdspanMut::<i32, 1>::from_slice(&mut data, [4]).unwrap();
    /// let mut tail = m.into_subview([2..]);
    /// tail[[0]] = 5;
    /// assert_eq!(data, [0, 0, 5, 0]);
    /// ```
    #[track_caller]
    pub fn into_subview(self, ranges: impl SubviewRanges<R>) -> MdspanMut<'a, T, R, Dims<R>, L::Sub, S> {
        match self.try_into_subview(ranges) {
            Ok(view) => view,
            Err(err) => panic!("{err}"),
        }
    }

    /// A mutable sub-view of a range per axis, consuming this view, or why not.
    ///
    /// # Errors
    ///
    /// [`DlpackError::SubviewOutOfBounds`] for a reversed or out-of-bounds range.
    ///
    /// ```
    /// let mut data = [0i32; 4];
    /// let m = dlspan::HostMdspanMut::<i32, 1>::from_slice(&mut data, [4]).unwrap();
    /// assert!(m.try_into_subview([3..5]).is_err());
    /// ```
    pub fn try_into_subview(
        self,
        ranges: impl SubviewRanges<R>,
    ) -> Result<MdspanMut<'a, T, R, Dims<R>, L::Sub, S>, DlpackError> {
        let parts = sub_ranges(&self.map, &ranges)?;
        let (ptr, map) = parts.apply::<T, L>(self.ptr);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements, uniquely; the parent
        // is consumed, so the access stays unique.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, map, self.ordinal) })
    }

    /// The mutable view with `axis` fixed at `index`, consuming this view: rank `Q = R - 1`.
    ///
    /// # Panics
    ///
    /// If `axis >= R` or `index` is out of bounds for the axis.
    ///
    /// ```
    /// let mut data = [0i32; 6];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 3]).unwrap();
    /// m.into_index_axis::<1>(0, 1).iter_mut().for_each(|x| *x = 1);
    /// assert_eq!(data, [0, 0, 0, 1, 1, 1]);
    /// ```
    #[track_caller]
    pub fn into_index_axis<const Q: usize>(self, axis: usize, index: usize) -> MdspanMut<'a, T, Q, Dims<Q>, L::Sub, S> {
        const { assert!(Q + 1 == R, "into_index_axis removes one axis: the result's rank must be R - 1") };
        let parts = sub_axis::<R, Q, E, L>(&self.map, axis, index);
        let (ptr, map) = parts.apply::<T, L>(self.ptr);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements, uniquely.
        unsafe { MdspanMut::from_parts_unchecked(ptr, map, self.ordinal) }
    }
}
