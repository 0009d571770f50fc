//! Iteration over the sub-views along one axis: [`AxisIter`] (shared) and [`AxisIterMut`]
//! (mutable), and the view methods that make them: [`outer_iter`](crate::Mdspan::outer_iter)
//! (rows) and [`axis_iter`](crate::Mdspan::axis_iter) (any axis), with their mutable and consuming
//! twins.
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

use super::{Mdspan, MdspanMut};
use crate::index::{AxisParts, Dims, Extents, Layout, LowerRank, Mapping, Rank, SubParts, axis_parts};
use crate::space::MemorySpace;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;

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

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, T, R, E, L, S> {
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
    ///
    /// An axis reduction is a sum per sub-view. The backward of `x + bias`, a `[D]` bias broadcast
    /// over the rows of an `[N, D]` output, returns for the bias the sum of each column of the
    /// output's gradient (NumPy's `grad.sum(axis=0)`); each column is summed pairwise
    /// ([`sum`](Self::sum)), through its stride:
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let grad = [1.0f32, 2.0, 3.0, 10.0, 20.0, 30.0];
    /// let grad = HostMdspan::<f32, 2>::from_slice(&grad, [2, 3])?;
    /// let mut bias_grad = [0.0f32; 3];
    /// for (sum, column) in bias_grad.iter_mut().zip(grad.axis_iter::<1>(1)) {
    ///     *sum = column.sum();
    /// }
    /// assert_eq!(bias_grad, [11.0, 22.0, 33.0]);
    /// // The sum over the columns instead (one value per row): the rows, along axis 0.
    /// let row_sums: Vec<f32> = grad.axis_iter::<1>(0).map(|row| row.sum()).collect();
    /// assert_eq!(row_sums, [6.0, 60.0]);
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
