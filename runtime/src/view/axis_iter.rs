//! Iteration over the sub-views along one axis: [`AxisIter`] (shared) and [`AxisIterMut`]
//! (mutable), from [`outer_iter`](crate::Mdspan::outer_iter) (rows) and
//! [`axis_iter`](crate::Mdspan::axis_iter) (any axis).
//!
//! Each step builds a view of rank `Q = R - 1` at one more stride along the axis: no allocation, no
//! per-step validation (the parts come from the parent's validated mapping).
//!
//! ```
//! use dlspan::HostMdspanMut;
//! let mut data = [0u32; 6];
//! let mut m = HostMdspanMut::<u32, 2>::from_slice(&mut data, [2, 3])?;
//! for (i, mut row) in m.outer_iter_mut().enumerate() {
//!     row.iter_mut().for_each(|x| *x = i as u32);
//! }
//! let column_sums: Vec<u32> = m.axis_iter(1).map(|column| column.iter().sum()).collect();
//! assert_eq!((data, column_sums), ([0, 0, 0, 1, 1, 1], vec![1, 1, 1]));
//! # Ok::<(), dlspan::DlpackError>(())
//! ```

use super::extents::Dims;
use super::layout::Layout;
use super::mapping::Mapping;
use super::mdspan::{Mdspan, MdspanMut, SubParts};
use crate::space::MemorySpace;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// The sub-views along one axis of a validated mapping: the parts of the first one, the step
/// between them (0 when they are empty: an empty view keeps the parent's position), and how many.
#[derive(Clone, Copy)]
pub(crate) struct AxisParts<const Q: usize> {
    pub(crate) first: SubParts<Q>,
    pub(crate) step: isize,
    pub(crate) len: usize,
}

/// The position shared by both iterators: sub-views `front..back` remain.
struct Cursor<T, const Q: usize, M: Layout> {
    /// The parent's base pointer.
    ptr: NonNull<T>,
    parts: AxisParts<Q>,
    front: usize,
    back: usize,
    _layout: PhantomData<M>,
}

impl<T, const Q: usize, M: Layout> Clone for Cursor<T, Q, M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const Q: usize, M: Layout> Copy for Cursor<T, Q, M> {}

impl<T, const Q: usize, M: Layout> Cursor<T, Q, M> {
    /// The base pointer and mapping of sub-view `i < len`.
    #[inline]
    fn part(&self, i: usize) -> (NonNull<T>, Mapping<Q, Dims<Q>, M>) {
        let first = self.parts.first;
        // In range: the offset of an index of the parent (the validation bounded every such sum).
        let start = first.start.wrapping_add((i as isize).wrapping_mul(self.parts.step));
        SubParts { start, ..first }.place(self.ptr)
    }

    #[inline]
    fn next(&mut self) -> Option<(NonNull<T>, Mapping<Q, Dims<Q>, M>)> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        Some(self.part(self.front - 1))
    }

    #[inline]
    fn next_back(&mut self) -> Option<(NonNull<T>, Mapping<Q, Dims<Q>, M>)> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        Some(self.part(self.back))
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<(NonNull<T>, Mapping<Q, Dims<Q>, M>)> {
        self.front += n.min(self.back - self.front);
        self.next()
    }

    #[inline]
    fn len(&self) -> usize {
        self.back - self.front
    }
}

/// The sub-views of rank `Q` along one axis of a shared view, in index order (double-ended, exact
/// size); see [`Mdspan::axis_iter`] and [`Mdspan::outer_iter`].
///
/// ```
/// let data = [1, 2, 3, 4, 5, 6];
/// let m = dlspan::HostMdspan::<i32, 2>::from_slice(&data, [3, 2]).unwrap();
/// let rows = m.outer_iter();
/// assert_eq!(rows.len(), 3);
/// assert_eq!(rows.rev().map(|row| row.to_vec()).collect::<Vec<_>>(), [[5, 6], [3, 4], [1, 2]]);
/// ```
pub struct AxisIter<'a, T, const Q: usize, M: Layout, S: MemorySpace> {
    cursor: Cursor<T, Q, M>,
    origin: S::Origin,
    _borrow: PhantomData<&'a T>,
}

/// The mutable sub-views of rank `Q` along one axis of a mutable view, in index order: they are
/// disjoint, so they may all be held at once; see [`MdspanMut::axis_iter_mut`] and
/// [`MdspanMut::outer_iter_mut`].
///
/// ```
/// let mut data = [0i32; 6];
/// let mut m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 3]).unwrap();
/// let mut columns: Vec<_> = m.axis_iter_mut(1).collect();
/// columns[2][[1]] = 5;
/// columns[0][[0]] = 1;
/// assert_eq!(data, [1, 0, 0, 0, 0, 5]);
/// ```
pub struct AxisIterMut<'a, T, const Q: usize, M: Layout, S: MemorySpace> {
    cursor: Cursor<T, Q, M>,
    origin: S::Origin,
    _borrow: PhantomData<&'a mut T>,
}

// SAFETY: `AxisIter` hands out shared views only: like `slice::Iter`, it may move or be shared across
// threads when `T: Sync`.
unsafe impl<T: Sync, const Q: usize, M: Layout, S: MemorySpace> Send for AxisIter<'_, T, Q, M, S> {}
// SAFETY: as above.
unsafe impl<T: Sync, const Q: usize, M: Layout, S: MemorySpace> Sync for AxisIter<'_, T, Q, M, S> {}
// SAFETY: `AxisIterMut` hands out mutable views of disjoint elements: like `slice::IterMut`, it may
// move to another thread when `T: Send`.
unsafe impl<T: Send, const Q: usize, M: Layout, S: MemorySpace> Send for AxisIterMut<'_, T, Q, M, S> {}
// SAFETY: `&AxisIterMut` gives no access to elements.
unsafe impl<T: Sync, const Q: usize, M: Layout, S: MemorySpace> Sync for AxisIterMut<'_, T, Q, M, S> {}

impl<T, const Q: usize, M: Layout, S: MemorySpace> Clone for AxisIter<'_, T, Q, M, S> {
    fn clone(&self) -> Self {
        Self { cursor: self.cursor, origin: self.origin, _borrow: PhantomData }
    }
}

impl<'a, T, const Q: usize, M: Layout, S: MemorySpace> AxisIter<'a, T, Q, M, S> {
    /// # Safety
    ///
    /// `parts` come from a validated mapping of a view over `ptr` whose elements are valid for
    /// reads (in `S`'s memory) for `'a`, of a layout that keeps an offset exactly when `M` does,
    /// and with `M`'s rules holding for every sub-view.
    #[inline]
    pub(crate) unsafe fn new(ptr: NonNull<T>, parts: AxisParts<Q>, origin: S::Origin) -> Self {
        let cursor = Cursor { ptr, parts, front: 0, back: parts.len, _layout: PhantomData };
        Self { cursor, origin, _borrow: PhantomData }
    }

    /// A shared view of sub-view `(ptr, map)`.
    #[inline]
    fn view(&self, (ptr, map): (NonNull<T>, Mapping<Q, Dims<Q>, M>)) -> Mdspan<'a, T, Q, Dims<Q>, M, S> {
        // SAFETY: a sub-view of the parent (constructor contract): it reaches a subset of the
        // parent's elements, valid for reads for `'a`.
        unsafe { Mdspan::from_parts_unchecked(ptr, map, self.origin) }
    }
}

impl<'a, T, const Q: usize, M: Layout, S: MemorySpace> AxisIterMut<'a, T, Q, M, S> {
    /// # Safety
    ///
    /// As for [`AxisIter::new`], with the parent's mapping unique and its elements valid for
    /// writes and accessed only through this iterator for `'a`.
    #[inline]
    pub(crate) unsafe fn new(ptr: NonNull<T>, parts: AxisParts<Q>, origin: S::Origin) -> Self {
        let cursor = Cursor { ptr, parts, front: 0, back: parts.len, _layout: PhantomData };
        Self { cursor, origin, _borrow: PhantomData }
    }

    /// A mutable view of sub-view `(ptr, map)`, yielded once.
    #[inline]
    fn view(&self, (ptr, map): (NonNull<T>, Mapping<Q, Dims<Q>, M>)) -> MdspanMut<'a, T, Q, Dims<Q>, M, S> {
        // SAFETY: a sub-view of the parent (constructor contract), yielded once: distinct indices
        // along the axis reach disjoint elements of a unique mapping (a shared element would be
        // two parent indices at one offset), so the views never alias; valid for writes for `'a`.
        unsafe { MdspanMut::from_parts_unchecked(ptr, map, self.origin) }
    }
}

/// Implements the iterator traits of one axis iterator, mapping the cursor's parts through `view`.
macro_rules! axis_iterator {
    ($iter:ident, $view:ident) => {
        impl<'a, T, const Q: usize, M: Layout, S: MemorySpace> Iterator for $iter<'a, T, Q, M, S> {
            type Item = $view<'a, T, Q, Dims<Q>, M, S>;

            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                self.cursor.next().map(|part| self.view(part))
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.cursor.len(), Some(self.cursor.len()))
            }

            #[inline]
            fn nth(&mut self, n: usize) -> Option<Self::Item> {
                self.cursor.nth(n).map(|part| self.view(part))
            }

            #[inline]
            fn count(self) -> usize {
                self.cursor.len()
            }

            #[inline]
            fn last(mut self) -> Option<Self::Item> {
                self.next_back()
            }
        }

        impl<T, const Q: usize, M: Layout, S: MemorySpace> DoubleEndedIterator for $iter<'_, T, Q, M, S> {
            #[inline]
            fn next_back(&mut self) -> Option<Self::Item> {
                self.cursor.next_back().map(|part| self.view(part))
            }
        }

        impl<T, const Q: usize, M: Layout, S: MemorySpace> ExactSizeIterator for $iter<'_, T, Q, M, S> {}
        impl<T, const Q: usize, M: Layout, S: MemorySpace> FusedIterator for $iter<'_, T, Q, M, S> {}
    };
}

axis_iterator!(AxisIter, Mdspan);
axis_iterator!(AxisIterMut, MdspanMut);
