//! Iteration over a view's elements in logical (row-major index) order.
//!
//! The cursor walks *runs*: stretches of equally spaced elements (the innermost axis, or the whole
//! view when it is row-major compact). Inside a run a step is one decrement and one addition, as in
//! a slice iterator, so `next` stays small enough for loops that call it per element (`zip`,
//! `for` loops) to run close to a hand-written loop in the same order; only the end of a run moves
//! the outer indices. `fold` (and everything built on it: `sum`, `for_each`, `count`, …) runs each
//! run as a tight loop.

use crate::index::{Extents, Layout, Mapping};
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// The position of an iteration: the next element's offset from the base pointer, what is left of
/// its run, and the outer indices of that run.
pub(super) struct Cursor<T, const R: usize> {
    ptr: NonNull<T>,
    /// Element offset of the next element from `ptr`; only turned into a pointer while elements
    /// remain in the run.
    offset: isize,
    /// Elements left in the current run.
    run_left: usize,
    /// The distance between consecutive elements of a run.
    step: isize,
    /// Elements in the runs after the current one.
    rest: usize,
    /// The length of every run.
    run_len: usize,
    /// Element offset of the current run's first element.
    run_start: isize,
    extents: [usize; R],
    strides: [isize; R],
    /// The current run's index on the outer axes (the innermost entry stays 0).
    index: [usize; R],
}

impl<T, const R: usize> Clone for Cursor<T, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const R: usize> Copy for Cursor<T, R> {}

impl<T, const R: usize> Cursor<T, R> {
    pub(super) fn new<E: Extents<R>, L: Layout>(ptr: NonNull<T>, map: &Mapping<R, E, L>) -> Self {
        let size = map.size();
        let start = map.offset() as isize;
        // A row-major compact view is one run of every element; otherwise a run is the innermost
        // axis (`R > 0` here: a rank-0 view is row-major).
        let (run_len, step) =
            if map.is_row_major() || size == 0 { (size, 1) } else { (map.extent(R - 1), map.stride(R - 1)) };
        Self {
            ptr,
            offset: start,
            run_left: run_len,
            step,
            rest: size - run_len,
            run_len,
            run_start: start,
            extents: map.extents(),
            strides: map.strides(),
            index: [0; R],
        }
    }

    /// The number of elements left.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.run_left + self.rest
    }

    /// The pointer to the next element, and a step forward; `None` at the end.
    ///
    /// # Safety
    ///
    /// The cursor was built from a validated mapping over memory that holds its elements.
    #[inline(always)]
    unsafe fn next(&mut self) -> Option<NonNull<T>> {
        let offset = self.next_offset()?;
        // SAFETY: the in-bounds offset of an index of the validated mapping.
        Some(unsafe { self.ptr.offset(offset) })
    }

    /// The element offset of the next element, and a step forward; `None` at the end. Packed
    /// views address bits, not `T`s, so they walk offsets.
    #[inline(always)]
    pub(super) fn next_offset(&mut self) -> Option<isize> {
        if self.run_left == 0 {
            if self.rest == 0 {
                return None;
            }
            self.next_run();
        }
        self.run_left -= 1;
        let offset = self.offset;
        // May step past the run's last element (wrapping arithmetic); only used while elements
        // remain in the run.
        self.offset = self.offset.wrapping_add(self.step);
        Some(offset)
    }

    /// Moves to the start of the next run in row-major order of the outer axes. Only called when a
    /// run ends and elements remain, which implies several runs: `R >= 2`, every extent at least 1.
    ///
    /// Inlined although rare: an out-of-line call would take the cursor's address, and a write
    /// through a `&mut T` from `IterMut` might then alias it, so every step would reload the cursor
    /// from memory.
    #[inline(always)]
    fn next_run(&mut self) {
        let mut axis = R - 1;
        while axis > 0 {
            axis -= 1;
            self.index[axis] += 1;
            self.run_start = self.run_start.wrapping_add(self.strides[axis]);
            if self.index[axis] < self.extents[axis] {
                break;
            }
            self.run_start =
                self.run_start.wrapping_sub((self.extents[axis] as isize).wrapping_mul(self.strides[axis]));
            self.index[axis] = 0;
        }
        self.offset = self.run_start;
        self.run_left = self.run_len;
        self.rest -= self.run_len;
    }

    /// Folds `f` over a pointer to every remaining element, each run in a tight loop.
    ///
    /// # Safety
    ///
    /// As for [`next`](Self::next).
    #[inline]
    unsafe fn fold_ptr<B>(mut self, init: B, mut f: impl FnMut(B, NonNull<T>) -> B) -> B {
        let mut acc = init;
        loop {
            let (start, step) = (self.offset, self.step);
            if step == 1 {
                for k in 0..self.run_left {
                    // SAFETY: the run's remaining elements are at offsets start..start+run_left.
                    acc = f(acc, unsafe { self.ptr.offset(start.wrapping_add(k as isize)) });
                }
            } else {
                let mut offset = start;
                for _ in 0..self.run_left {
                    // SAFETY: the run's remaining elements are at start + k·step, in bounds.
                    acc = f(acc, unsafe { self.ptr.offset(offset) });
                    offset = offset.wrapping_add(step);
                }
            }
            if self.rest == 0 {
                return acc;
            }
            self.next_run();
        }
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
        // SAFETY: the cursor's mapping is validated over memory holding its elements (constructor
        // contract).
        let element = unsafe { self.cursor.next() }?;
        // SAFETY: the element is valid for reads for `'a` (constructor contract).
        Some(unsafe { element.as_ref() })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.cursor.len(), Some(self.cursor.len()))
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
        // SAFETY: the cursor's mapping is validated over memory holding its elements (constructor
        // contract).
        let mut element = unsafe { self.cursor.next() }?;
        // SAFETY: the mapping is unique, so each element is yielded once, valid for writes for `'a`
        // (constructor contract).
        Some(unsafe { element.as_mut() })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.cursor.len(), Some(self.cursor.len()))
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

impl<T, const R: usize> Clone for Iter<'_, T, R> {
    fn clone(&self) -> Self {
        Self { cursor: self.cursor, _borrow: PhantomData }
    }
}

impl<T, const R: usize> ExactSizeIterator for Iter<'_, T, R> {}
impl<T, const R: usize> ExactSizeIterator for IterMut<'_, T, R> {}
impl<T, const R: usize> FusedIterator for Iter<'_, T, R> {}
impl<T, const R: usize> FusedIterator for IterMut<'_, T, R> {}
