//! Host access: `get`, indexing with `[usize; R]`, logical-order iteration, slices and copies, for
//! views in host-accessible memory.

use super::{Mdspan, MdspanMut};
use crate::index::{Extents, Layout};
use crate::space::HostAccessible;
use crate::view::iter::{Iter, IterMut};
use core::ops::{Index, IndexMut};

/// Host-side element access of shared views.
impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> Mdspan<'a, T, R, E, L, S> {
    /// The element at `index`, or `None` when out of bounds.
    ///
    /// ```
    /// let data = [1, 2, 3, 4];
    /// let m = dlspan::HostMdspan::<i32, 2>::from_slice(&data, [2, 2]).unwrap();
    /// assert_eq!((m.get([1, 0]), m.get([2, 0])), (Some(&3), None));
    /// ```
    #[inline]
    pub fn get(&self, index: [usize; R]) -> Option<&'a T> {
        let offset = self.map.index_offset(index)?;
        // SAFETY: the offset of an in-bounds index of the validated mapping is in range.
        let element = unsafe { self.ptr.offset(offset) };
        // SAFETY: it is an element valid for reads for `'a` (struct invariant).
        Some(unsafe { element.as_ref() })
    }

    /// Every element in logical (row-major index) order.
    ///
    /// When the order does not matter (sums, reductions, updates of every element), the
    /// memory-order forms are faster on every layout that is not row-major:
    /// [`sum`](Self::sum), [`fold_unordered`](Self::fold_unordered) and, on mutable views,
    /// [`for_each_unordered`](MdspanMut::for_each_unordered) and
    /// [`zip_with`](MdspanMut::zip_with) walk memory forwards and vectorise; logical order over a
    /// column-major view steps a whole column's pitch per element.
    ///
    /// ```
    /// let data = [1, 2, 3, 4, 5, 6];
    /// let m = dlspan::HostMdspan::<i32, 2, dlspan::LayoutLeft>::from_slice(&data, [2, 3]).unwrap();
    /// assert_eq!(m.iter().copied().collect::<Vec<_>>(), [1, 3, 5, 2, 4, 6]);
    /// assert_eq!(m.sum(), 21); // memory order: the fast form when the order does not matter
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'a, T, R> {
        // SAFETY: the mapping is validated and the elements are valid for reads for `'a`.
        unsafe { Iter::new(self.ptr, &self.map) }
    }

    /// The elements as a slice in memory order, when they are contiguous (see
    /// [`is_contiguous`](Self::is_contiguous)); `None` otherwise.
    ///
    /// ```
    /// let data = [1, 2, 3, 4, 5, 6];
    /// let m = dlspan::HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    /// assert_eq!(m.as_slice(), Some(&data[..]));
    /// assert_eq!(m.subview((.., 0..2)).as_slice(), None);
    /// ```
    #[inline]
    pub fn as_slice(&self) -> Option<&'a [T]> {
        if !self.map.is_contiguous() {
            return None;
        }
        let (low, high) = self.map.bounds();
        // SAFETY: the elements `[low, high)` are exactly the view's (contiguous), valid for reads for
        // `'a`; `low` is in bounds (or 0 for an empty view).
        let start = unsafe { self.ptr.add(low) };
        // SAFETY: as above; the pointer is aligned and the length's bytes fit isize.
        Some(unsafe { core::slice::from_raw_parts(start.as_ptr(), high - low) })
    }

    /// The elements in logical order, copied into a `Vec`.
    ///
    /// ```
    /// let data = [1, 2, 3, 4];
    /// let m = dlspan::HostMdspan::<i32, 2>::from_slice(&data, [2, 2]).unwrap();
    /// assert_eq!(m.subview((.., 1..)).to_vec(), [2, 4]);
    /// ```
    pub fn to_vec(&self) -> Vec<T>
    where
        T: Clone,
    {
        if self.map.is_row_major()
            && let Some(slice) = self.as_slice()
        {
            return slice.to_vec();
        }
        let mut out = Vec::with_capacity(self.size());
        self.iter().for_each(|x| out.push(x.clone()));
        out
    }
}

/// Host-side element access of mutable views.
impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> MdspanMut<'a, T, R, E, L, S> {
    /// The element at `index`, or `None` when out of bounds.
    ///
    /// ```
    /// let mut data = [1, 2, 3, 4];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// assert_eq!(m.get([0, 1]), Some(&2));
    /// ```
    #[inline]
    pub fn get(&self, index: [usize; R]) -> Option<&T> {
        let offset = self.map.index_offset(index)?;
        // SAFETY: the offset of an in-bounds index of the validated mapping is in range.
        let element = unsafe { self.ptr.offset(offset) };
        // SAFETY: it is an element valid for reads, shared for the borrow of `self`.
        Some(unsafe { element.as_ref() })
    }

    /// The element at `index`, mutably, or `None` when out of bounds.
    ///
    /// ```
    /// let mut data = [1, 2, 3, 4];
    /// let mut m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// *m.get_mut([0, 1]).unwrap() = 20;
    /// assert_eq!(data[1], 20);
    /// ```
    #[inline]
    pub fn get_mut(&mut self, index: [usize; R]) -> Option<&mut T> {
        let offset = self.map.index_offset(index)?;
        // SAFETY: the offset of an in-bounds index of the validated mapping is in range.
        let mut element = unsafe { self.ptr.offset(offset) };
        // SAFETY: it is an element valid for writes, unique for the borrow of `&mut self`.
        Some(unsafe { element.as_mut() })
    }

    /// Every element in logical order.
    ///
    /// ```
    /// let mut data = [1, 2, 3, 4];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// assert_eq!(m.iter().count(), 4);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T, R> {
        // SAFETY: validated mapping; elements valid for reads while `self` is borrowed.
        unsafe { Iter::new(self.ptr, &self.map) }
    }

    /// Every element in logical order, mutably.
    ///
    /// To update every element where the order does not matter, prefer the memory-order forms:
    /// [`for_each_unordered`](Self::for_each_unordered) for one view and
    /// [`zip_with`](Self::zip_with) for two (`y.zip_with(&x, |y, &x| *y += a * x)` rather than
    /// `y.iter_mut().zip(x.iter())`), which walk memory forwards and vectorise whatever the layouts.
    ///
    /// ```
    /// let mut data = [1, 2, 3, 4];
    /// let mut m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// m.iter_mut().for_each(|x| *x *= 10);
    /// m.for_each_unordered(|x| *x += 1); // the same kind of loop in memory order: the fast form
    /// assert_eq!(data, [11, 21, 31, 41]);
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T, R> {
        // SAFETY: validated unique mapping: each element is yielded once; unique while borrowed.
        unsafe { IterMut::new(self.ptr, &self.map) }
    }

    /// The elements as a slice in memory order, when contiguous.
    ///
    /// ```
    /// let mut data = [1, 2];
    /// let m = dlspan::HostMdspanMut::<i32, 1>::from_slice(&mut data, [2]).unwrap();
    /// assert_eq!(m.as_slice(), Some(&[1, 2][..]));
    /// ```
    #[inline]
    pub fn as_slice(&self) -> Option<&[T]> {
        self.as_view().as_slice()
    }

    /// The elements as a mutable slice in memory order, when contiguous.
    ///
    /// ```
    /// let mut data = [1, 2];
    /// let mut m = dlspan::HostMdspanMut::<i32, 1>::from_slice(&mut data, [2]).unwrap();
    /// m.as_mut_slice().unwrap().fill(0);
    /// assert_eq!(data, [0, 0]);
    /// ```
    #[inline]
    pub fn as_mut_slice(&mut self) -> Option<&mut [T]> {
        if !self.map.is_contiguous() {
            return None;
        }
        let (low, high) = self.map.bounds();
        // SAFETY: the elements `[low, high)` are exactly the view's, valid for writes, borrowed
        // uniquely through `&mut self`.
        let start = unsafe { self.ptr.add(low) };
        // SAFETY: as above.
        Some(unsafe { core::slice::from_raw_parts_mut(start.as_ptr(), high - low) })
    }

    /// The elements in logical order, copied into a `Vec`.
    ///
    /// ```
    /// let mut data = [1, 2];
    /// let m = dlspan::HostMdspanMut::<i32, 1>::from_slice(&mut data, [2]).unwrap();
    /// assert_eq!(m.to_vec(), [1, 2]);
    /// ```
    pub fn to_vec(&self) -> Vec<T>
    where
        T: Clone,
    {
        self.as_view().to_vec()
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn index_out_of_bounds(index: &[usize], extents: &[usize]) -> ! {
    panic!("index {index:?} out of bounds for extents {extents:?}")
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> Index<[usize; R]> for Mdspan<'_, T, R, E, L, S> {
    type Output = T;

    /// # Panics
    ///
    /// If the index is out of bounds.
    #[inline]
    #[track_caller]
    fn index(&self, index: [usize; R]) -> &T {
        match self.get(index) {
            Some(element) => element,
            None => index_out_of_bounds(&index, &self.extents()),
        }
    }
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> Index<[usize; R]>
    for MdspanMut<'_, T, R, E, L, S>
{
    type Output = T;

    #[inline]
    #[track_caller]
    fn index(&self, index: [usize; R]) -> &T {
        match self.get(index) {
            Some(element) => element,
            None => index_out_of_bounds(&index, &self.extents()),
        }
    }
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> IndexMut<[usize; R]>
    for MdspanMut<'_, T, R, E, L, S>
{
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, index: [usize; R]) -> &mut T {
        let extents = self.extents();
        match self.get_mut(index) {
            Some(element) => element,
            None => index_out_of_bounds(&index, &extents),
        }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> IntoIterator for Mdspan<'a, T, R, E, L, S> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T, R>;

    fn into_iter(self) -> Iter<'a, T, R> {
        self.iter()
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> IntoIterator for &Mdspan<'a, T, R, E, L, S> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T, R>;

    fn into_iter(self) -> Iter<'a, T, R> {
        self.iter()
    }
}

impl<'s, T, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> IntoIterator
    for &'s mut MdspanMut<'_, T, R, E, L, S>
{
    type Item = &'s mut T;
    type IntoIter = IterMut<'s, T, R>;

    fn into_iter(self) -> IterMut<'s, T, R> {
        self.iter_mut()
    }
}
