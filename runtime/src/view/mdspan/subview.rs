//! Sub-views: a range per axis ([`SubviewRanges`]) and one axis fixed (`index_axis`), for shared
//! and mutable views; the sub-mappings are computed in `index`.

use super::{Mdspan, MdspanMut};
use crate::error::DlpackError;
use crate::index::{Dims, Extents, Layout, LowerRank, Rank, SubviewRanges, sub_axis, sub_ranges};
use crate::space::MemorySpace;

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
}
