//! Sub-mappings: the extents, strides and first element of a sub-view, from one range per axis
//! ([`SubviewRanges`]), from one axis fixed at an index, or for every index of one axis in turn
//! (the axis iterators). Parts of a validated mapping, so no arithmetic here can overflow; the view
//! layer applies them to its base pointer.

use super::extents::{Dims, Extents};
use super::layout::Layout;
use super::mapping::Mapping;
use super::rank::{LowerRank, Rank};
use crate::error::DlpackError;
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

/// The sub-mapping of one range per axis, or the first range that is reversed or out of bounds.
pub(crate) fn sub_ranges<const R: usize, E: Extents<R>, L: Layout>(
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
fn other_axes<const R: usize, const Q: usize, E: Extents<R>, L: Layout>(
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

/// The sub-mapping with `axis` fixed at `index`.
///
/// # Panics
///
/// If `axis >= R` or `index` is out of bounds for the axis.
#[track_caller]
pub(crate) fn sub_axis<const R: usize, const Q: usize, E: Extents<R>, L: Layout>(
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

/// The sub-views along one axis of a validated mapping: the parts of the first one, the step
/// between them (0 when they are empty: an empty view keeps the parent's position), and how many.
#[derive(Clone, Copy)]
pub(crate) struct AxisParts<const Q: usize> {
    pub(crate) first: SubParts<Q>,
    pub(crate) step: isize,
    pub(crate) len: usize,
}

/// The sub-views along `axis`: the first one's parts, the step between them, and how many.
pub(crate) fn axis_parts<const R: usize, const Q: usize, E: Extents<R>, L: Layout>(
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
    pub(crate) fn apply<T, L: Layout, M: Layout>(self, ptr: NonNull<T>) -> (NonNull<T>, Mapping<Q, Dims<Q>, M>) {
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
