//! [`Mapping`]: extents plus a layout's stored strides, validated once at construction.

use super::extents::{self, Dims, Extents};
use super::layout::{Layout, LayoutRight};
use crate::check;
use crate::error::{DlpackError, LayoutKind};
use core::fmt;
use core::marker::PhantomData;

/// The index → element-offset function of a view: extents and the layout's strides and offset.
///
/// Every constructor validates ([rules I12 to I15](crate::rules#i12)): the layout's stride rules,
/// static extents, and that every reachable offset fits `isize` and none lies below the base. Index
/// arithmetic on a mapping therefore never overflows.
///
/// ```
/// use dlspan::{Mapping, Dims, LayoutStride};
/// let m = Mapping::<2, Dims<2>, LayoutStride>::from_strides([2, 3], [4, 1]).unwrap();
/// assert_eq!(m.index_offset([1, 2]), Some(6));
/// assert_eq!(m.required_span_size(), 7);
/// assert!(!m.is_contiguous());
/// ```
pub struct Mapping<const R: usize, E: Extents<R> = Dims<R>, L: Layout = LayoutRight> {
    extents: [usize; R],
    stored: L::Strides<R>,
    _extents: PhantomData<E>,
}

impl<const R: usize, E: Extents<R>, L: Layout> Clone for Mapping<R, E, L> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<const R: usize, E: Extents<R>, L: Layout> Copy for Mapping<R, E, L> {}

impl<const R: usize, E: Extents<R>, L: Layout> PartialEq for Mapping<R, E, L> {
    fn eq(&self, other: &Self) -> bool {
        self.extents == other.extents && self.stored == other.stored
    }
}
impl<const R: usize, E: Extents<R>, L: Layout> Eq for Mapping<R, E, L> {}

impl<const R: usize, E: Extents<R>, L: Layout> fmt::Debug for Mapping<R, E, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Mapping");
        s.field("extents", &self.extents).field("strides", &self.strides()).field("layout", &L::KIND);
        if L::HAS_OFFSET {
            s.field("offset", &self.offset());
        }
        s.finish()
    }
}

impl<const R: usize, E: Extents<R>, L: Layout> Mapping<R, E, L> {
    /// The compact mapping of these extents: column-major for [`LayoutLeft`](crate::LayoutLeft),
    /// row-major for every other layout.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ExtentMismatch`] against static extents; [`DlpackError::SpanOverflow`] when the
    /// number of elements does not fit `isize`.
    ///
    /// ```
    /// use dlspan::{Mapping, Dims, LayoutLeft};
    /// assert_eq!(Mapping::<3, Dims<3>, LayoutLeft>::compact([2, 3, 4]).unwrap().strides(), [1, 2, 6]);
    /// ```
    pub fn compact(extents: [usize; R]) -> Result<Self, DlpackError> {
        extents::check_static::<R, E>(&extents)?;
        let strides = L::compact_strides(&extents)?;
        Self::from_parts(extents, strides, 0)
    }

    /// A mapping with explicit strides (in elements) and no offset.
    ///
    /// # Errors
    ///
    /// The layout's rules: [`DlpackError::StridesIncompatible`] for compact layouts,
    /// [`DlpackError::NonPositiveStride`] for [`LayoutStride`](crate::LayoutStride),
    /// [`DlpackError::SpanOverflow`], [`DlpackError::ExtentMismatch`].
    ///
    /// ```
    /// use dlspan::{Mapping, Dims, LayoutRight, DlpackError};
    /// let bad = Mapping::<2, Dims<2>, LayoutRight>::from_strides([2, 3], [1, 2]);
    /// assert!(matches!(bad, Err(DlpackError::StridesIncompatible { axis: 0, .. })));
    /// ```
    pub fn from_strides(extents: [usize; R], strides: [isize; R]) -> Result<Self, DlpackError> {
        Self::from_parts(extents, strides, 0)
    }

    /// Validates extents, strides and an element offset (only the relaxed layout keeps an offset;
    /// callers pass 0 for the others).
    #[inline]
    pub(crate) fn from_parts(extents: [usize; R], strides: [isize; R], offset: usize) -> Result<Self, DlpackError> {
        Self::from_parts_with_span(extents, strides, offset).map(|(mapping, _)| mapping)
    }

    /// As [`from_parts`](Self::from_parts), also returning the span the validation computed
    /// (elements from the base to one past the highest offset reached).
    #[inline(always)]
    pub(crate) fn from_parts_with_span(
        extents: [usize; R],
        strides: [isize; R],
        offset: usize,
    ) -> Result<(Self, usize), DlpackError> {
        debug_assert!(L::HAS_OFFSET || offset == 0);
        extents::check_static::<R, E>(&extents)?;
        let (stored, reach) = L::validate(&extents, &strides, offset)?;
        let stored = if reach.size == 0 { Self::empty_stored(&extents)? } else { stored };
        Ok((Self { extents, stored, _extents: PhantomData }, reach.span))
    }

    /// What an empty mapping stores whatever it was given (rule I17): no offset, and the layout's
    /// compact strides (a zero extent counted as 1). An empty mapping reaches nothing, so its
    /// strides only matter to code that moves a pointer along an axis anyway (ndarray does, even
    /// for empty arrays): with these, every such move stays within what a non-empty mapping of
    /// the same extents would reach, and no stride is negative, zero or huge.
    ///
    /// # Errors
    ///
    /// [`DlpackError::SpanOverflow`] when the product of the extents, zeros counted as 1, does not
    /// fit `isize` (NumPy and ndarray refuse such shapes even when empty).
    #[cold]
    fn empty_stored(extents: &[usize; R]) -> Result<L::Strides<R>, DlpackError> {
        L::compact_strides(extents).map(|strides| L::assume_valid(strides, 0))
    }

    /// A mapping from extents and stored strides that `L::validate_fast` accepted and `E` allows.
    #[inline(always)]
    pub(crate) fn from_validated(extents: [usize; R], stored: L::Strides<R>) -> Self {
        Self { extents, stored, _extents: PhantomData }
    }

    /// A mapping from parts that already satisfy this layout's rules and `E` (a sub-mapping of a
    /// validated mapping, or a change of extents type that was checked). An empty one is
    /// normalised as [`from_parts`](Self::from_parts) normalises it.
    #[inline]
    pub(crate) fn assume_valid(extents: [usize; R], strides: [isize; R], offset: usize) -> Self {
        if extents.contains(&0) {
            // Each extent, a zero counted as 1, is at most the (nonzero, or normalised) extent of
            // the validated mapping these parts come from, so the compact strides fit.
            if let Ok(stored) = Self::empty_stored(&extents) {
                return Self { extents, stored, _extents: PhantomData };
            }
            debug_assert!(false, "the compact strides of a sub-mapping's extents fit isize");
        }
        Self { extents, stored: L::assume_valid(strides, offset), _extents: PhantomData }
    }

    /// The rank `R`.
    ///
    /// ```
    /// use dlspan::{Dims, LayoutRight, Mapping};
    /// assert_eq!(Mapping::<3, Dims<3>, LayoutRight>::compact([2, 3, 4])?.rank(), 3);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub const fn rank(&self) -> usize {
        R
    }

    /// The length of `axis`; a constant for static axes.
    ///
    /// # Panics
    ///
    /// If `axis >= R`.
    ///
    /// ```
    /// use dlspan::{Dyn, LayoutRight, Mapping, Static};
    /// let m = Mapping::<2, (Static<2>, Dyn), LayoutRight>::compact([2, 5])?;
    /// assert_eq!((m.extent(0), m.extent(1)), (2, 5));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn extent(&self, axis: usize) -> usize {
        match E::STATIC[axis] {
            Some(n) => n,
            None => self.extents[axis],
        }
    }

    /// Every extent.
    ///
    /// ```
    /// use dlspan::{Dims, LayoutRight, Mapping};
    /// assert_eq!(Mapping::<2, Dims<2>, LayoutRight>::compact([2, 3])?.extents(), [2, 3]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn extents(&self) -> [usize; R] {
        self.extents
    }

    /// The stride of `axis`, in elements.
    ///
    /// # Panics
    ///
    /// If `axis >= R`.
    ///
    /// ```
    /// use dlspan::{Dims, LayoutLeft, Mapping};
    /// let column_major = Mapping::<2, Dims<2>, LayoutLeft>::compact([2, 3])?;
    /// assert_eq!((column_major.stride(0), column_major.stride(1)), (1, 2));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn stride(&self, axis: usize) -> isize {
        self.strides()[axis]
    }

    /// Every stride, in elements.
    ///
    /// ```
    /// use dlspan::{Dims, LayoutRight, Mapping};
    /// assert_eq!(Mapping::<3, Dims<3>, LayoutRight>::compact([2, 3, 4])?.strides(), [12, 4, 1]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn strides(&self) -> [isize; R] {
        L::strides(&self.extents, &self.stored)
    }

    /// The element offset of index `[0; R]` from the base pointer (0 except for the relaxed layout).
    ///
    /// ```
    /// use dlspan::{HostMdspan, LayoutStrideRelaxed};
    /// let data = [1, 2, 3, 4, 5];
    /// let reversed = HostMdspan::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [5], [-1], 4)?;
    /// assert_eq!(reversed.mapping().offset(), 4);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn offset(&self) -> usize {
        L::offset(&self.stored)
    }

    /// The layout.
    ///
    /// ```
    /// use dlspan::{Dims, LayoutKind, LayoutLeft, Mapping};
    /// assert_eq!(Mapping::<2, Dims<2>, LayoutLeft>::compact([2, 3])?.layout(), LayoutKind::Left);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn layout(&self) -> LayoutKind {
        L::KIND
    }

    /// The number of elements (indices).
    ///
    /// ```
    /// use dlspan::{Dims, LayoutStride, Mapping};
    /// assert_eq!(Mapping::<2, Dims<2>, LayoutStride>::from_strides([2, 3], [4, 1])?.size(), 6);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn size(&self) -> usize {
        // An empty mapping may have other extents whose product overflows (it reaches nothing, so
        // it is valid, and its size is 0); a mapping with elements has a validated product that
        // fits isize.
        if self.extents.contains(&0) { 0 } else { self.extents.iter().product() }
    }

    /// The element offsets reached, relative to the base pointer: `(lowest, one past the highest)`,
    /// or `(0, 0)` without elements.
    #[inline]
    pub(crate) fn bounds(&self) -> (usize, usize) {
        check::bounds(&self.extents, &self.strides(), self.offset())
    }

    /// Elements from the base pointer to one past the highest offset reached (0 when empty): how
    /// much memory a view of this mapping needs.
    ///
    /// ```
    /// use dlspan::{Dims, LayoutStride, Mapping};
    /// let padded_rows = Mapping::<2, Dims<2>, LayoutStride>::from_strides([2, 3], [4, 1])?;
    /// assert_eq!(padded_rows.required_span_size(), 7); // 6 elements, the last at offset 6
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn required_span_size(&self) -> usize {
        self.bounds().1
    }

    /// Whether distinct indices reach distinct elements (see [`DlpackError::OverlappingStrides`]).
    ///
    /// ```
    /// use dlspan::{Dims, LayoutStrideRelaxed, Mapping};
    /// let broadcast = Mapping::<1, Dims<1>, LayoutStrideRelaxed>::from_strides([3], [0])?;
    /// assert!(!broadcast.is_unique());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn is_unique(&self) -> bool {
        match L::KIND {
            LayoutKind::Right | LayoutKind::Left => true,
            _ => check::unique(&self.extents, &self.strides()),
        }
    }

    /// Whether the elements fill a block of exactly `size()` consecutive elements (in some order of
    /// axes): then a view of them is also a slice.
    ///
    /// ```
    /// use dlspan::{Dims, LayoutStride, Mapping};
    /// assert!(Mapping::<2, Dims<2>, LayoutStride>::from_strides([2, 3], [3, 1])?.is_contiguous());
    /// assert!(!Mapping::<2, Dims<2>, LayoutStride>::from_strides([2, 3], [4, 1])?.is_contiguous());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        let (low, high) = self.bounds();
        high - low == self.size() && self.is_unique()
    }

    /// Whether the mapping is row-major compact from its offset: logical order is memory order.
    #[inline]
    pub(crate) fn is_row_major(&self) -> bool {
        match L::KIND {
            LayoutKind::Right => true,
            _ => {
                self.size() == 0
                    || check::compact_strides(&self.extents, LayoutKind::Right)
                        .is_ok_and(|compact| (0..R).all(|k| self.extents[k] <= 1 || compact[k] == self.strides()[k]))
            }
        }
    }

    /// The element offset of `index` from the base pointer, or `None` when out of bounds.
    ///
    /// ```
    /// use dlspan::{Mapping, Dims, LayoutRight};
    /// let m = Mapping::<2, Dims<2>, LayoutRight>::compact([2, 3]).unwrap();
    /// assert_eq!((m.index_offset([1, 2]), m.index_offset([2, 0])), (Some(5), None));
    /// ```
    #[inline]
    pub fn index_offset(&self, index: [usize; R]) -> Option<isize> {
        if index.iter().zip(&self.extents).all(|(i, e)| i < e) { Some(self.offset_unchecked(&index)) } else { None }
    }

    /// The element offset of an index known to be in bounds.
    #[inline(always)]
    pub(crate) fn offset_unchecked(&self, index: &[usize; R]) -> isize {
        L::index(&self.extents, &self.stored, index)
    }

    /// The same mapping under another extents type.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ExtentMismatch`] when an extent differs from a static extent of `E2`.
    ///
    /// ```
    /// use dlspan::{Dims, Dyn, LayoutRight, Mapping, Static};
    /// let m = Mapping::<2, Dims<2>, LayoutRight>::compact([2, 3])?;
    /// assert_eq!(m.with_extents::<(Static<2>, Dyn)>()?.extents(), [2, 3]);
    /// assert!(m.with_extents::<(Static<3>, Dyn)>().is_err());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn with_extents<E2: Extents<R>>(self) -> Result<Mapping<R, E2, L>, DlpackError> {
        extents::check_static::<R, E2>(&self.extents)?;
        Ok(Mapping { extents: self.extents, stored: self.stored, _extents: PhantomData })
    }
}
