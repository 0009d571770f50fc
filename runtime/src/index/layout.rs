//! Layouts: how an index becomes an element offset.
//!
//! | layout | strides | offset | CCCL / std |
//! |---|---|---|---|
//! | [`LayoutRight`] | computed: row-major, compact | 0 | `layout_right` |
//! | [`LayoutLeft`] | computed: column-major, compact | 0 | `layout_left` |
//! | [`LayoutStride`] | stored, each > 0 | 0 | `layout_stride` |
//! | [`LayoutStrideRelaxed`] | stored, any sign or zero | stored, in elements | `layout_stride_relaxed` |
//!
//! The compact layouts store no strides, so the compiler sees that the innermost stride is 1.
//! Foreign tensors (PyTorch normalises strides of size-1 axes, NumPy broadcasts with zero strides)
//! are best taken as [`LayoutStride`] or [`LayoutStrideRelaxed`].
//!
//! ```
//! use dlspan::{Layout, LayoutKind, LayoutStrideRelaxed};
//! assert_eq!(LayoutStrideRelaxed::KIND, LayoutKind::StrideRelaxed);
//! ```

use crate::check::{self, Reach};
use crate::error::{DlpackError, LayoutKind};
use core::fmt::Debug;

mod sealed {
    pub trait Sealed {}
}

/// A layout policy. Sealed: the four layouts of this module are the ones every check knows.
///
/// ```
/// use dlspan::{Layout, LayoutKind, LayoutLeft, LayoutStride, LayoutStrideRelaxed};
/// assert_eq!(<LayoutLeft as Layout>::KIND, LayoutKind::Left);
/// assert!(LayoutStrideRelaxed::HAS_OFFSET && !LayoutStride::HAS_OFFSET);
/// ```
pub trait Layout: sealed::Sealed + Copy + Default + Debug + Send + Sync + 'static {
    /// What a mapping of rank `R` stores besides its extents.
    type Strides<const R: usize>: Copy + Debug + PartialEq + Eq + Send + Sync + 'static;

    /// The layout of sub-views: a compact layout stays compact only for some ranges, so sub-views
    /// of compact and strided views are [`LayoutStride`], and of relaxed views relaxed.
    type Sub: Layout;

    /// The layout of the views that fix axis 0 (the rows that
    /// [`outer_iter`](crate::Mdspan::outer_iter) yields): rows of a row-major compact view are
    /// row-major compact, so [`LayoutRight`] keeps itself; the others are as [`Sub`](Self::Sub).
    type Outer: Layout;

    /// Which layout this is, for errors and queries.
    const KIND: LayoutKind;

    /// Whether mappings of this layout keep an element offset from the base pointer (only the
    /// relaxed layout does; the others start at their pointer).
    const HAS_OFFSET: bool;

    /// Validates strides and offset against this layout's rules ([rules I13 to
    /// I15](crate::rules#i13)) and returns the stored form with what the mapping reaches.
    #[doc(hidden)]
    fn validate<const R: usize>(
        extents: &[usize; R],
        strides: &[isize; R],
        offset: usize,
    ) -> Result<(Self::Strides<R>, Reach), DlpackError>;

    /// The fast path of [`validate`](Self::validate) for tensors within `bound` (a
    /// [`fast_bound`](check::fast_bound)), where no arithmetic can overflow: returns the stored
    /// form, or `None` whenever `validate` might reject the input *or* the input is outside the
    /// bound (no elements, negative strides, large numbers): the caller then runs `validate`, which
    /// decides precisely. Never accepts what `validate` rejects, and agrees with it on what it
    /// accepts; what it accepts spans at most [`FAST_SPAN_BYTES`](check::FAST_SPAN_BYTES) bytes.
    #[doc(hidden)]
    fn validate_fast<const R: usize>(
        extents: &[usize; R],
        strides: &[isize; R],
        offset: usize,
        bound: usize,
    ) -> Option<Self::Strides<R>>;

    /// The stored form of strides and offset that are already known to satisfy this layout's rules
    /// (taken from a validated mapping of a parent view).
    #[doc(hidden)]
    fn assume_valid<const R: usize>(strides: [isize; R], offset: usize) -> Self::Strides<R>;

    /// The strides of a compact mapping of this layout: column-major for [`LayoutLeft`], row-major
    /// for the others.
    #[doc(hidden)]
    fn compact_strides<const R: usize>(extents: &[usize; R]) -> Result<[isize; R], DlpackError> {
        check::compact_strides(extents, LayoutKind::Right)
    }

    /// Every stride.
    #[doc(hidden)]
    fn strides<const R: usize>(extents: &[usize; R], stored: &Self::Strides<R>) -> [isize; R];

    /// The element offset of index 0 from the base pointer.
    #[doc(hidden)]
    fn offset<const R: usize>(stored: &Self::Strides<R>) -> usize;

    /// The element offset of an in-bounds index from the base pointer.
    #[doc(hidden)]
    fn index<const R: usize>(extents: &[usize; R], stored: &Self::Strides<R>, index: &[usize; R]) -> isize;
}

/// Row-major compact layout: the last index varies fastest (C order). CCCL `layout_right`.
///
/// ```
/// use dlspan::{HostMdspan, LayoutRight};
/// let v = HostMdspan::<i32, 2, LayoutRight>::from_slice(&[0, 1, 2, 3, 4, 5], [2, 3]).unwrap();
/// assert_eq!(v.strides(), [3, 1]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LayoutRight;

/// Column-major compact layout: the first index varies fastest (Fortran order). CCCL `layout_left`.
///
/// ```
/// use dlspan::{HostMdspan, LayoutLeft};
/// let v = HostMdspan::<i32, 2, LayoutLeft>::from_slice(&[1, 4, 2, 5, 3, 6], [2, 3]).unwrap();
/// assert_eq!((v.strides(), v[[1, 2]]), ([1, 2], 6));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LayoutLeft;

/// Any positive strides. CCCL `layout_stride`.
///
/// ```
/// use dlspan::{HostMdspan, LayoutStride};
/// let data = [1, 2, 3, 0, 4, 5, 6, 0];
/// let v = HostMdspan::<i32, 2, LayoutStride>::from_slice_strided(&data, [2, 3], [4, 1]).unwrap();
/// assert_eq!(v[[1, 0]], 4);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LayoutStride;

/// Any strides (zero for broadcast, negative for reversed axes) and an element offset from the base
/// pointer. CCCL `layout_stride_relaxed`. No index ever reaches below the base pointer.
///
/// ```
/// use dlspan::{HostMdspan, LayoutStrideRelaxed};
/// let data = [1, 2, 3, 4, 5];
/// let reversed = HostMdspan::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [5], [-1], 4).unwrap();
/// assert_eq!(reversed.to_vec(), [5, 4, 3, 2, 1]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LayoutStrideRelaxed;

/// Stored strides and offset of a [`LayoutStrideRelaxed`] mapping.
///
/// ```
/// use core::any::TypeId;
/// use dlspan::{Layout, LayoutStrideRelaxed, view::RelaxedStrides};
/// let stored = TypeId::of::<<LayoutStrideRelaxed as Layout>::Strides<2>>();
/// assert_eq!(stored, TypeId::of::<RelaxedStrides<2>>());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RelaxedStrides<const R: usize> {
    strides: [isize; R],
    offset: usize,
}

impl sealed::Sealed for LayoutRight {}
impl sealed::Sealed for LayoutLeft {}
impl sealed::Sealed for LayoutStride {}
impl sealed::Sealed for LayoutStrideRelaxed {}

/// Axis `k` in the order "outermost first": itself for row-major, mirrored for column-major. The
/// compact layouts share one body through it; `left` is a constant, so each folds away.
#[inline(always)]
const fn compact_axis<const R: usize>(left: bool, k: usize) -> usize {
    if left { R - 1 - k } else { k }
}

/// Both compact layouts: strides computed from extents, no offset. `$left` mirrors the axis order.
macro_rules! compact_layout {
    ($layout:ty, $kind:ident, $left:literal, $outer:ty) => {
        impl Layout for $layout {
            type Strides<const R: usize> = ();
            type Sub = LayoutStride;
            type Outer = $outer;
            const KIND: LayoutKind = LayoutKind::$kind;
            const HAS_OFFSET: bool = false;

            #[inline(always)]
            fn validate<const R: usize>(
                extents: &[usize; R],
                strides: &[isize; R],
                _offset: usize,
            ) -> Result<((), Reach), DlpackError> {
                check::compact(LayoutKind::$kind, extents, strides).map(|reach| ((), reach))
            }

            #[inline(always)]
            fn validate_fast<const R: usize>(
                extents: &[usize; R],
                strides: &[isize; R],
                _offset: usize,
                bound: usize,
            ) -> Option<()> {
                if R == 0 {
                    return Some(());
                }
                let at = |k| compact_axis::<R>($left, k);
                // Canonical strides, checked pairwise: the innermost is 1, and each other equals its
                // inner neighbour's stride times that neighbour's extent. Under the bound each product
                // is exact (both factors are bounded), the products are independent of each other
                // (no serial chain), and by induction the strides are the canonical ones.
                let mut bad = strides[at(R - 1)] != 1;
                // Every extent in [1, bound] and every outer stride below it: then every product is
                // of two bounded numbers, and so is the size (the outermost extent times its stride).
                let mut magnitudes = check::extents_fast(extents, 0);
                for k in 0..R - 1 {
                    let (outer, inner) = (at(k), at(k + 1));
                    magnitudes |= strides[outer] as usize;
                    let product = if k + 1 == R - 1 {
                        extents[inner]
                    } else {
                        extents[inner].wrapping_mul(strides[inner] as usize)
                    };
                    bad |= strides[outer] as usize != product;
                }
                if bad | (magnitudes >= bound) { None } else { Some(()) }
            }

            #[inline]
            fn assume_valid<const R: usize>(_strides: [isize; R], _offset: usize) {}

            #[inline]
            fn compact_strides<const R: usize>(extents: &[usize; R]) -> Result<[isize; R], DlpackError> {
                check::compact_strides(extents, LayoutKind::$kind)
            }

            #[inline]
            fn strides<const R: usize>(extents: &[usize; R], (): &()) -> [isize; R] {
                let mut out = [0isize; R];
                let mut acc = 1isize;
                for k in (0..R).rev() {
                    let axis = compact_axis::<R>($left, k);
                    out[axis] = acc;
                    // Validated: the product of the (nonzero) extents fits isize.
                    acc = acc.wrapping_mul(extents[axis].max(1) as isize);
                }
                out
            }

            #[inline]
            fn offset<const R: usize>((): &()) -> usize {
                0
            }

            #[inline(always)]
            fn index<const R: usize>(extents: &[usize; R], (): &(), index: &[usize; R]) -> isize {
                // Horner form of Σ i_k·Π_{j inner to k} e_j; in bounds of a validated mapping, it
                // cannot overflow.
                let mut offset = 0usize;
                for k in 0..R {
                    let axis = compact_axis::<R>($left, k);
                    offset = offset.wrapping_mul(extents[axis]).wrapping_add(index[axis]);
                }
                offset as isize
            }
        }
    };
}

compact_layout!(LayoutRight, Right, false, LayoutRight);
compact_layout!(LayoutLeft, Left, true, LayoutStride);

impl Layout for LayoutStride {
    type Strides<const R: usize> = [isize; R];
    type Sub = LayoutStride;
    type Outer = LayoutStride;
    const KIND: LayoutKind = LayoutKind::Stride;
    const HAS_OFFSET: bool = false;

    #[inline(always)]
    fn validate<const R: usize>(
        extents: &[usize; R],
        strides: &[isize; R],
        _offset: usize,
    ) -> Result<([isize; R], Reach), DlpackError> {
        check::reach::<true>(extents, strides, 0).map(|reach| (*strides, reach))
    }

    #[inline(always)]
    fn validate_fast<const R: usize>(
        extents: &[usize; R],
        strides: &[isize; R],
        _offset: usize,
        bound: usize,
    ) -> Option<[isize; R]> {
        check::reach_fast::<R, true>(extents, strides, 0, bound).then_some(*strides)
    }

    #[inline]
    fn assume_valid<const R: usize>(strides: [isize; R], _offset: usize) -> [isize; R] {
        strides
    }

    #[inline]
    fn strides<const R: usize>(_extents: &[usize; R], stored: &[isize; R]) -> [isize; R] {
        *stored
    }

    #[inline]
    fn offset<const R: usize>(_stored: &[isize; R]) -> usize {
        0
    }

    #[inline(always)]
    fn index<const R: usize>(_extents: &[usize; R], stored: &[isize; R], index: &[usize; R]) -> isize {
        let mut offset = 0isize;
        for (&i, &s) in index.iter().zip(stored) {
            offset = offset.wrapping_add((i as isize).wrapping_mul(s));
        }
        offset
    }
}

impl Layout for LayoutStrideRelaxed {
    type Strides<const R: usize> = RelaxedStrides<R>;
    type Sub = LayoutStrideRelaxed;
    type Outer = LayoutStrideRelaxed;
    const KIND: LayoutKind = LayoutKind::StrideRelaxed;
    const HAS_OFFSET: bool = true;

    #[inline(always)]
    fn validate<const R: usize>(
        extents: &[usize; R],
        strides: &[isize; R],
        offset: usize,
    ) -> Result<(RelaxedStrides<R>, Reach), DlpackError> {
        // An empty mapping is normalised by `Mapping` (rule I17).
        check::reach::<false>(extents, strides, offset)
            .map(|reach| (RelaxedStrides { strides: *strides, offset }, reach))
    }

    #[inline(always)]
    fn validate_fast<const R: usize>(
        extents: &[usize; R],
        strides: &[isize; R],
        offset: usize,
        bound: usize,
    ) -> Option<RelaxedStrides<R>> {
        check::reach_fast::<R, false>(extents, strides, offset, bound)
            .then_some(RelaxedStrides { strides: *strides, offset })
    }

    #[inline]
    fn assume_valid<const R: usize>(strides: [isize; R], offset: usize) -> RelaxedStrides<R> {
        RelaxedStrides { strides, offset }
    }

    #[inline]
    fn strides<const R: usize>(_extents: &[usize; R], stored: &RelaxedStrides<R>) -> [isize; R] {
        stored.strides
    }

    #[inline]
    fn offset<const R: usize>(stored: &RelaxedStrides<R>) -> usize {
        stored.offset
    }

    #[inline(always)]
    fn index<const R: usize>(_extents: &[usize; R], stored: &RelaxedStrides<R>, index: &[usize; R]) -> isize {
        let mut offset = stored.offset as isize;
        for (&i, &s) in index.iter().zip(&stored.strides) {
            offset = offset.wrapping_add((i as isize).wrapping_mul(s));
        }
        offset
    }
}
