//! Sub-views: a range per axis ([`SubviewRanges`]), one axis fixed (`index_axis`), or every index
//! of one axis in turn (`outer_iter`, `axis_iter`), for shared and mutable views.

use super::{Mdspan, MdspanMut};
use crate::error::DlpackError;
use crate::space::MemorySpace;
use crate::view::axis_iter::{AxisIter, AxisIterMut, AxisParts};
use crate::view::extents::{Dims, Extents};
use crate::view::layout::Layout;
use crate::view::mapping::Mapping;
use crate::view::rank::{LowerRank, Rank};
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
#[derive(Clone, Copy)]
pub(crate) struct SubParts<const Q: usize> {
    pub(crate) extents: [usize; Q],
    pub(crate) strides: [isize; Q],
    pub(crate) start: isize,
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

/// The extents and strides of the views that fix `axis`: every other axis, in order.
///
/// # Panics
///
/// If `axis >= R`.
#[track_caller]
pub(crate) fn other_axes<const R: usize, const Q: usize, E: Extents<R>, L: Layout>(
    map: &Mapping<R, E, L>,
    axis: usize,
) -> ([usize; Q], [isize; Q])
where
    Rank<R>: LowerRank<Q>,
{
    assert!(axis < R, "axis {axis} out of range for rank {R}");
    let all = map.strides();
    let (mut extents, mut strides) = ([0usize; Q], [0isize; Q]);
    for (j, k) in (0..R).filter(|&k| k != axis).enumerate() {
        extents[j] = map.extent(k);
        strides[j] = all[k];
    }
    (extents, strides)
}

#[track_caller]
fn sub_axis<const R: usize, const Q: usize, E: Extents<R>, L: Layout>(
    map: &Mapping<R, E, L>,
    axis: usize,
    index: usize,
) -> SubParts<Q>
where
    Rank<R>: LowerRank<Q>,
{
    let (extents, strides) = other_axes(map, axis);
    let extent = map.extent(axis);
    assert!(index < extent, "index {index} out of bounds for axis {axis} of extent {extent}");
    let mut first = [0usize; R];
    first[axis] = index;
    let start = if map.extents().contains(&0) { map.offset() as isize } else { map.offset_unchecked(&first) };
    SubParts { extents, strides, start }
}

/// The sub-views along `axis`: the first one's parts, the step between them, and how many.
fn axis_parts<const R: usize, const Q: usize, E: Extents<R>, L: Layout>(
    map: &Mapping<R, E, L>,
    axis: usize,
) -> AxisParts<Q>
where
    Rank<R>: LowerRank<Q>,
{
    let (extents, strides) = other_axes(map, axis);
    // Sub-views with no elements keep the parent's position (its offset, 0 when it is empty).
    let step = if map.extents().contains(&0) { 0 } else { map.stride(axis) };
    AxisParts { first: SubParts { extents, strides, start: map.offset() as isize }, step, len: map.extent(axis) }
}

impl<const Q: usize> SubParts<Q> {
    /// Applies validated sub-mapping parts to the parent's base pointer `ptr` (layout `L`), for a
    /// sub-view of layout `M` (`L::Sub` or `L::Outer`: it keeps an offset exactly when `L` does).
    fn apply<T, L: Layout, M: Layout>(self, ptr: NonNull<T>) -> (NonNull<T>, Mapping<Q, Dims<Q>, M>) {
        const { assert!(L::HAS_OFFSET == M::HAS_OFFSET) };
        self.place(ptr)
    }

    /// The sub-view's base pointer and mapping of layout `M`, from the parent's base pointer `ptr`
    /// (the parent keeps an offset exactly when `M` does).
    #[inline]
    pub(crate) fn place<T, M: Layout>(self, ptr: NonNull<T>) -> (NonNull<T>, Mapping<Q, Dims<Q>, M>) {
        if M::HAS_OFFSET {
            // The parent reaches no element below its base, so the sub-view's first element
            // offset is non-negative.
            (ptr, Mapping::assume_valid(self.extents, self.strides, self.start as usize))
        } else {
            // Wrapping arithmetic: for device views the pointer is not a host allocation.
            let moved = ptr.as_ptr().wrapping_offset(self.start);
            // SAFETY: non-relaxed layouts have positive strides and no offset below the
            // base, so `start` is the offset of the sub-view's first element (or, for an empty
            // sub-view, of the parent's), inside the parent's memory range, which does not
            // contain or wrap around address 0.
            (unsafe { NonNull::new_unchecked(moved) }, Mapping::assume_valid(self.extents, self.strides, 0))
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
        let (ptr, map) = parts.apply::<T, L, L::Sub>(self.ptr);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements.
        Ok(unsafe { Mdspan::from_parts_unchecked(ptr, map, self.origin) })
    }

    /// The view with `axis` fixed at `index`, of rank `Q = R - 1` (inferred: see
    /// [`LowerRank`]).
    ///
    /// # Panics
    ///
    /// If `axis >= R` or `index` is out of bounds for the axis.
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let data: Vec<i32> = (0..6).collect();
    /// let m = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    /// assert_eq!(m.index_axis(0, 1).to_vec(), [3, 4, 5]);
    /// assert_eq!(m.index_axis(1, 2).to_vec(), [2, 5]);
    /// ```
    #[track_caller]
    pub fn index_axis<const Q: usize>(&self, axis: usize, index: usize) -> Mdspan<'a, T, Q, Dims<Q>, L::Sub, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        let parts = sub_axis::<R, Q, E, L>(&self.map, axis, index);
        let (ptr, map) = parts.apply::<T, L, L::Sub>(self.ptr);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements.
        unsafe { Mdspan::from_parts_unchecked(ptr, map, self.origin) }
    }

    /// The sub-views along axis 0 (the rows of a matrix), in order: rank `Q = R - 1`, inferred.
    /// Rows of a [`LayoutRight`](crate::LayoutRight) view are `LayoutRight` (contiguous).
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let data: Vec<f32> = (0..6).map(|x| x as f32).collect();
    /// let m = HostMdspan::<f32, 2>::from_slice(&data, [2, 3])?;
    /// let mut sums = Vec::new();
    /// for row in m.outer_iter() {
    ///     sums.push(row.as_slice().unwrap().iter().sum::<f32>()); // rows of a row-major view are slices
    /// }
    /// assert_eq!(sums, [3.0, 12.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn outer_iter<const Q: usize>(&self) -> AxisIter<'a, T, Q, L::Outer, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        let parts = axis_parts::<R, Q, E, L>(&self.map, 0);
        // SAFETY: parts of this view's validated mapping, whose elements are valid for reads for
        // `'a`; `L::Outer` keeps an offset exactly when `L` does, and rows of a row-major view are
        // row-major.
        unsafe { AxisIter::new(self.ptr, parts, self.origin) }
    }

    /// The sub-views along `axis`, in order: `axis_iter(1)` of a matrix yields its columns. Rank
    /// `Q = R - 1`, inferred.
    ///
    /// # Panics
    ///
    /// If `axis >= R`.
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let data = [1, 2, 3, 4, 5, 6];
    /// let m = HostMdspan::<i32, 2>::from_slice(&data, [2, 3])?;
    /// let columns: Vec<Vec<i32>> = m.axis_iter(1).map(|c| c.to_vec()).collect();
    /// assert_eq!(columns, [[1, 4], [2, 5], [3, 6]]);
    /// assert_eq!(m.axis_iter(1).rev().next().unwrap().to_vec(), [3, 6]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    #[track_caller]
    pub fn axis_iter<const Q: usize>(&self, axis: usize) -> AxisIter<'a, T, Q, L::Sub, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        let parts = axis_parts::<R, Q, E, L>(&self.map, axis);
        // SAFETY: parts of this view's validated mapping, whose elements are valid for reads for
        // `'a`; `L::Sub` keeps an offset exactly when `L` does and accepts any sub-mapping.
        unsafe { AxisIter::new(self.ptr, parts, self.origin) }
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
        let (ptr, map) = parts.apply::<T, L, L::Sub>(self.ptr);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements, uniquely; the parent
        // is consumed, so the access stays unique.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, map, self.origin) })
    }

    /// The shared view with `axis` fixed at `index`, borrowing this view: rank `Q = R - 1`
    /// (inferred).
    ///
    /// # Panics
    ///
    /// If `axis >= R` or `index` is out of bounds for the axis.
    ///
    /// ```
    /// let mut data = [0, 1, 2, 3, 4, 5];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 3]).unwrap();
    /// assert_eq!(m.index_axis(1, 2).to_vec(), [2, 5]);
    /// ```
    #[track_caller]
    pub fn index_axis<const Q: usize>(&self, axis: usize, index: usize) -> Mdspan<'_, T, Q, Dims<Q>, L::Sub, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        self.as_view().index_axis(axis, index)
    }

    /// The mutable view with `axis` fixed at `index`, borrowing this view: rank `Q = R - 1`
    /// (inferred).
    ///
    /// # Panics
    ///
    /// If `axis >= R` or `index` is out of bounds for the axis.
    ///
    /// ```
    /// let mut data = [0i32; 6];
    /// let mut m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 3]).unwrap();
    /// m.index_axis_mut(1, 0).iter_mut().for_each(|x| *x = 1);
    /// m.index_axis_mut(0, 1)[[2]] = 7;
    /// assert_eq!(data, [1, 0, 0, 1, 0, 7]);
    /// ```
    #[track_caller]
    pub fn index_axis_mut<const Q: usize>(
        &mut self,
        axis: usize,
        index: usize,
    ) -> MdspanMut<'_, T, Q, Dims<Q>, L::Sub, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        self.reborrow().into_index_axis(axis, index)
    }

    /// The mutable view with `axis` fixed at `index`, consuming this view: rank `Q = R - 1`
    /// (inferred).
    ///
    /// # Panics
    ///
    /// If `axis >= R` or `index` is out of bounds for the axis.
    ///
    /// ```
    /// let mut data = [0i32; 6];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 3]).unwrap();
    /// m.into_index_axis(0, 1).iter_mut().for_each(|x| *x = 1);
    /// assert_eq!(data, [0, 0, 0, 1, 1, 1]);
    /// ```
    #[track_caller]
    pub fn into_index_axis<const Q: usize>(self, axis: usize, index: usize) -> MdspanMut<'a, T, Q, Dims<Q>, L::Sub, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        let parts = sub_axis::<R, Q, E, L>(&self.map, axis, index);
        let (ptr, map) = parts.apply::<T, L, L::Sub>(self.ptr);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements, uniquely.
        unsafe { MdspanMut::from_parts_unchecked(ptr, map, self.origin) }
    }

    /// The shared sub-views along axis 0, borrowing this view; see [`Mdspan::outer_iter`].
    ///
    /// ```
    /// let mut data = [1, 2, 3, 4];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// assert_eq!(m.outer_iter().map(|row| row[[1]]).collect::<Vec<_>>(), [2, 4]);
    /// ```
    #[inline]
    pub fn outer_iter<const Q: usize>(&self) -> AxisIter<'_, T, Q, L::Outer, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        self.as_view().outer_iter()
    }

    /// The shared sub-views along `axis`, borrowing this view; see [`Mdspan::axis_iter`].
    ///
    /// # Panics
    ///
    /// If `axis >= R`.
    ///
    /// ```
    /// let mut data = [1, 2, 3, 4];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// assert_eq!(m.axis_iter(1).map(|column| column.sum()).collect::<Vec<_>>(), [4, 6]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn axis_iter<const Q: usize>(&self, axis: usize) -> AxisIter<'_, T, Q, L::Sub, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        self.as_view().axis_iter(axis)
    }

    /// The mutable sub-views along axis 0 (rows), borrowing this view: disjoint, in order.
    ///
    /// ```
    /// let mut data = [0u8; 6];
    /// let mut m = dlspan::HostMdspanMut::<u8, 2>::from_slice(&mut data, [3, 2]).unwrap();
    /// for (i, mut row) in m.outer_iter_mut().enumerate() {
    ///     row.as_mut_slice().unwrap().fill(i as u8); // rows of a row-major view are slices
    /// }
    /// assert_eq!(data, [0, 0, 1, 1, 2, 2]);
    /// ```
    #[inline]
    pub fn outer_iter_mut<const Q: usize>(&mut self) -> AxisIterMut<'_, T, Q, L::Outer, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        self.reborrow().into_outer_iter()
    }

    /// The mutable sub-views along `axis`, borrowing this view: disjoint, in order.
    ///
    /// # Panics
    ///
    /// If `axis >= R`.
    ///
    /// ```
    /// let mut data = [0u8; 6];
    /// let mut m = dlspan::HostMdspanMut::<u8, 2>::from_slice(&mut data, [2, 3]).unwrap();
    /// for (j, mut column) in m.axis_iter_mut(1).enumerate() {
    ///     column.iter_mut().for_each(|x| *x = j as u8);
    /// }
    /// assert_eq!(data, [0, 1, 2, 0, 1, 2]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn axis_iter_mut<const Q: usize>(&mut self, axis: usize) -> AxisIterMut<'_, T, Q, L::Sub, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        self.reborrow().into_axis_iter(axis)
    }

    /// The mutable sub-views along axis 0, consuming this view (they live for `'a`).
    ///
    /// ```
    /// let mut data = [0i32; 4];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// let [mut top, mut bottom]: [_; 2] = m.into_outer_iter().collect::<Vec<_>>().try_into().ok().unwrap();
    /// top[[0]] = 1;
    /// bottom[[1]] = 2;
    /// assert_eq!(data, [1, 0, 0, 2]);
    /// ```
    #[inline]
    pub fn into_outer_iter<const Q: usize>(self) -> AxisIterMut<'a, T, Q, L::Outer, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        let parts = axis_parts::<R, Q, E, L>(&self.map, 0);
        // SAFETY: parts of this view's validated unique mapping, whose elements are valid for
        // writes for `'a` and, the view being consumed, reachable only through the iterator;
        // `L::Outer` keeps an offset exactly when `L` does, and rows of a row-major view are
        // row-major.
        unsafe { AxisIterMut::new(self.ptr, parts, self.origin) }
    }

    /// The mutable sub-views along `axis`, consuming this view (they live for `'a`).
    ///
    /// # Panics
    ///
    /// If `axis >= R`.
    ///
    /// ```
    /// let mut data = [0i32; 4];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// let mut columns = m.into_axis_iter(1);
    /// let (mut left, mut right) = (columns.next().unwrap(), columns.next().unwrap());
    /// left[[1]] = 3;
    /// right[[0]] = 4;
    /// assert_eq!(data, [0, 4, 3, 0]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn into_axis_iter<const Q: usize>(self, axis: usize) -> AxisIterMut<'a, T, Q, L::Sub, S>
    where
        Rank<R>: LowerRank<Q>,
    {
        let parts = axis_parts::<R, Q, E, L>(&self.map, axis);
        // SAFETY: as in `into_outer_iter`; `L::Sub` accepts any sub-mapping.
        unsafe { AxisIterMut::new(self.ptr, parts, self.origin) }
    }
}
