//! Iteration over a view's elements in logical (row-major index) order.
//!
//! Row-major compact views walk memory linearly; other layouts walk an odometer over the indices.
//! `fold` (and everything built on it: `sum`, `for_each`, `count`, …) runs the innermost axis as a
//! tight loop, so strided traversals stay close to a hand-written loop.

use super::extents::Extents;
use super::layout::Layout;
use super::mapping::Mapping;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// The position of an iteration: an index and its element offset from the base pointer.
pub(super) struct Cursor<T, const R: usize> {
    ptr: NonNull<T>,
    extents: [usize; R],
    strides: [isize; R],
    index: [usize; R],
    /// Element offset of `index` from `ptr`; only turned into a pointer while elements remain.
    offset: isize,
    remaining: usize,
    /// Row-major compact from `offset`: advancing is `offset += 1`.
    linear: bool,
}

impl<T, const R: usize> Cursor<T, R> {
    pub(super) fn new<E: Extents<R>, L: Layout>(ptr: NonNull<T>, map: &Mapping<R, E, L>) -> Self {
        Self {
            ptr,
            extents: map.extents(),
            strides: map.strides(),
            index: [0; R],
            offset: map.offset() as isize,
            remaining: map.size(),
            linear: map.is_row_major(),
        }
    }

    /// Moves to the next index in row-major order. Offsets may step outside the mapping's range in
    /// between (wrapping arithmetic); they are only used while the index is in bounds.
    #[inline(always)]
    fn advance(&mut self) {
        if self.linear {
            self.offset = self.offset.wrapping_add(1);
            return;
        }
        for axis in (0..R).rev() {
            self.index[axis] += 1;
            self.offset = self.offset.wrapping_add(self.strides[axis]);
            if self.index[axis] < self.extents[axis] {
                return;
            }
            self.offset = self.offset.wrapping_sub((self.extents[axis] as isize).wrapping_mul(self.strides[axis]));
            self.index[axis] = 0;
        }
    }

    /// The element offset of the current index, and a step forward; `None` when none remain.
    /// Packed views address bits, not `T`s, so they walk offsets.
    #[inline(always)]
    pub(super) fn next_offset(&mut self) -> Option<isize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let offset = self.offset;
        self.advance();
        Some(offset)
    }

    /// The number of elements left.
    pub(super) fn remaining(&self) -> usize {
        self.remaining
    }

    /// The pointer to the current element, and a step forward.
    ///
    /// # Safety
    ///
    /// `remaining > 0`, and the cursor was built from a validated mapping over memory that holds
    /// its elements.
    #[inline(always)]
    unsafe fn take(&mut self) -> NonNull<T> {
        self.remaining -= 1;
        // SAFETY: while elements remain, `offset` is the in-bounds offset of the current index.
        let ptr = unsafe { self.ptr.offset(self.offset) };
        self.advance();
        ptr
    }

    /// Folds `f` over a pointer to every remaining element, innermost axis in a tight loop.
    ///
    /// # Safety
    ///
    /// As for [`take`](Self::take).
    #[inline]
    unsafe fn fold_ptr<B>(mut self, init: B, mut f: impl FnMut(B, NonNull<T>) -> B) -> B {
        let mut acc = init;
        if self.linear {
            for k in 0..self.remaining {
                // SAFETY: linear: the remaining elements are at offsets offset..offset+remaining.
                acc = f(acc, unsafe { self.ptr.offset(self.offset.wrapping_add(k as isize)) });
            }
            return acc;
        }
        if R == 0 {
            while self.remaining > 0 {
                // SAFETY: an element remains.
                acc = f(acc, unsafe { self.take() });
            }
            return acc;
        }
        let last = R - 1;
        let stride = self.strides[last];
        while self.remaining > 0 {
            let run = (self.extents[last] - self.index[last]).min(self.remaining);
            let mut offset = self.offset;
            for _ in 0..run {
                // SAFETY: indices index[last]..index[last]+run of the innermost axis are in bounds.
                acc = f(acc, unsafe { self.ptr.offset(offset) });
                offset = offset.wrapping_add(stride);
            }
            self.remaining -= run;
            // Stand on the run's last element, then step (carrying into outer axes).
            self.index[last] += run - 1;
            self.offset = self.offset.wrapping_add((run as isize - 1).wrapping_mul(stride));
            self.advance();
        }
        acc
    }
}

/// Iterator over `&T` in logical order; see [`Mdspan::iter`](crate::Mdspan::iter).
///
/// ```
/// let data = [1, 2, 3, 4];
/// let m = dlspan::HostMdspan::<i32, 2>::from_slice(&data, [2, 2]).unwrap();
/// let mut it = m.iter();
/// assert_eq!(it.len(), 4);
/// assert_eq!(it.next(), Some(&1));
/// ```
pub struct Iter<'a, T, const R: usize> {
    cursor: Cursor<T, R>,
    _borrow: PhantomData<&'a T>,
}

/// Iterator over `&mut T` in logical order; see [`MdspanMut::iter_mut`](crate::MdspanMut::iter_mut).
///
/// ```
/// let mut data = [1, 2, 3, 4];
/// let mut m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
/// let it = m.iter_mut();
/// assert_eq!(it.len(), 4);
/// ```
pub struct IterMut<'a, T, const R: usize> {
    cursor: Cursor<T, R>,
    _borrow: PhantomData<&'a mut T>,
}

// SAFETY: `Iter` hands out `&T` only: like `slice::Iter`, it may move or be shared across threads
// when `T: Sync`.
unsafe impl<T: Sync, const R: usize> Send for Iter<'_, T, R> {}
// SAFETY: as above.
unsafe impl<T: Sync, const R: usize> Sync for Iter<'_, T, R> {}
// SAFETY: `IterMut` hands out `&mut T` to distinct elements: like `slice::IterMut`, it may move to
// another thread when `T: Send`.
unsafe impl<T: Send, const R: usize> Send for IterMut<'_, T, R> {}
// SAFETY: `&IterMut` gives no access to elements.
unsafe impl<T: Sync, const R: usize> Sync for IterMut<'_, T, R> {}

impl<'a, T, const R: usize> Iter<'a, T, R> {
    /// # Safety
    ///
    /// `map` is validated and every element it reaches from `ptr` is valid for reads for `'a`.
    pub(crate) unsafe fn new<E: Extents<R>, L: Layout>(ptr: NonNull<T>, map: &Mapping<R, E, L>) -> Self {
        Self { cursor: Cursor::new(ptr, map), _borrow: PhantomData }
    }
}

impl<'a, T, const R: usize> IterMut<'a, T, R> {
    /// # Safety
    ///
    /// `map` is validated and unique, and every element it reaches from `ptr` is valid for writes
    /// and accessed only through this iterator for `'a`.
    pub(crate) unsafe fn new<E: Extents<R>, L: Layout>(ptr: NonNull<T>, map: &Mapping<R, E, L>) -> Self {
        Self { cursor: Cursor::new(ptr, map), _borrow: PhantomData }
    }
}

impl<'a, T, const R: usize> Iterator for Iter<'a, T, R> {
    type Item = &'a T;

    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        if self.cursor.remaining == 0 {
            return None;
        }
        // SAFETY: an element remains, and the cursor's mapping is validated (constructor contract).
        let element = unsafe { self.cursor.take() };
        // SAFETY: the element is valid for reads for `'a` (constructor contract).
        Some(unsafe { element.as_ref() })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.cursor.remaining, Some(self.cursor.remaining))
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a T) -> B>(self, init: B, mut f: F) -> B {
        let visit = |acc, element: NonNull<T>| {
            // SAFETY: `fold_ptr` passes remaining elements, valid for reads for `'a` (constructor
            // contract).
            f(acc, unsafe { element.as_ref() })
        };
        // SAFETY: the cursor's mapping is validated over memory holding its elements.
        unsafe { self.cursor.fold_ptr(init, visit) }
    }
}

impl<'a, T, const R: usize> Iterator for IterMut<'a, T, R> {
    type Item = &'a mut T;

    #[inline]
    fn next(&mut self) -> Option<&'a mut T> {
        if self.cursor.remaining == 0 {
            return None;
        }
        // SAFETY: an element remains, and the cursor's mapping is validated (constructor contract).
        let mut element = unsafe { self.cursor.take() };
        // SAFETY: the mapping is unique, so each element is yielded once, valid for writes for `'a`
        // (constructor contract).
        Some(unsafe { element.as_mut() })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.cursor.remaining, Some(self.cursor.remaining))
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a mut T) -> B>(self, init: B, mut f: F) -> B {
        let visit = |acc, mut element: NonNull<T>| {
            // SAFETY: as in `next`: each remaining element once, valid for writes for `'a`.
            f(acc, unsafe { element.as_mut() })
        };
        // SAFETY: the cursor's mapping is validated over memory holding its elements.
        unsafe { self.cursor.fold_ptr(init, visit) }
    }
}

impl<T, const R: usize> ExactSizeIterator for Iter<'_, T, R> {}
impl<T, const R: usize> ExactSizeIterator for IterMut<'_, T, R> {}
impl<T, const R: usize> FusedIterator for Iter<'_, T, R> {}
impl<T, const R: usize> FusedIterator for IterMut<'_, T, R> {}
