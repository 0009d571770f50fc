//! `Debug` for views: extents, strides, layout, memory space, and the values as nested lists when
//! the host can read them (elided like NumPy beyond 1000 elements).

use super::mdspan::{Mdspan, MdspanMut};
use crate::index::{Extents, Layout, Mapping};
use crate::space::MemorySpace;
use core::fmt;
use core::ptr::NonNull;

/// Views above this many elements print only the first and last few entries of each axis.
const ELIDE_ABOVE: usize = 1000;
/// Entries kept at each end of an elided axis.
const EDGE: usize = 3;

struct Values<'v, T, const R: usize, E: Extents<R>, L: Layout> {
    ptr: NonNull<T>,
    map: &'v Mapping<R, E, L>,
}

impl<T: fmt::Debug, const R: usize, E: Extents<R>, L: Layout> Values<'_, T, R, E, L> {
    fn axis(&self, f: &mut fmt::Formatter<'_>, index: &mut [usize; R], axis: usize, elide: bool) -> fmt::Result {
        if axis == R {
            let offset = self.map.offset_unchecked(index);
            // SAFETY: `index` is in bounds of the validated mapping: an in-range element offset.
            let element = unsafe { self.ptr.offset(offset) };
            // SAFETY: `Values` is only built for host-accessible views, whose elements are valid
            // for reads while the view is borrowed.
            let value = unsafe { element.as_ref() };
            return fmt::Debug::fmt(value, f);
        }
        let extent = self.map.extent(axis);
        let mut list = f.debug_list();
        let shown: &mut dyn Iterator<Item = usize> =
            if elide && extent > 2 * EDGE { &mut (0..EDGE).chain(extent - EDGE..extent) } else { &mut (0..extent) };
        for i in shown {
            if elide && extent > 2 * EDGE && i == extent - EDGE {
                list.entry(&format_args!("..."));
            }
            index[axis] = i;
            list.entry(&format_args!("{}", Entry { values: self, index: *index, axis: axis + 1, elide }));
        }
        list.finish()
    }
}

struct Entry<'v, 'w, T, const R: usize, E: Extents<R>, L: Layout> {
    values: &'w Values<'v, T, R, E, L>,
    index: [usize; R],
    axis: usize,
    elide: bool,
}

impl<T: fmt::Debug, const R: usize, E: Extents<R>, L: Layout> fmt::Display for Entry<'_, '_, T, R, E, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut index = self.index;
        self.values.axis(f, &mut index, self.axis, self.elide)
    }
}

fn debug_view<T: fmt::Debug, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    ptr: NonNull<T>,
    map: &Mapping<R, E, L>,
    ordinal: S::Ordinal,
) -> fmt::Result {
    let mut s = f.debug_struct(name);
    s.field("extents", &map.extents()).field("strides", &map.strides()).field("layout", &L::KIND);
    if L::HAS_OFFSET {
        s.field("offset", &map.offset());
    }
    s.field("device", &S::device(ordinal));
    if S::HOST_ACCESSIBLE {
        let values = Values { ptr, map };
        let elide = map.size() > ELIDE_ABOVE;
        s.field("values", &format_args!("{}", Entry { values: &values, index: [0; R], axis: 0, elide }));
    } else {
        s.field("values", &format_args!("<device memory>"));
    }
    s.finish()
}

impl<T: fmt::Debug, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> fmt::Debug for Mdspan<'_, T, R, E, L, S> {
    /// ```
    /// let data = [1, 2, 3, 4, 5, 6];
    /// let m = dlspan::HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    /// assert_eq!(
    ///     format!("{m:?}"),
    ///     "Mdspan { extents: [2, 3], strides: [3, 1], layout: Right, \
    ///      device: DLDevice { device_type: kDLCPU, device_id: 0 }, values: [[1, 2, 3], [4, 5, 6]] }"
    /// );
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ptr = NonNull::new(self.data_handle().cast_mut()).ok_or(fmt::Error)?;
        debug_view::<T, R, E, L, S>(f, "Mdspan", ptr, self.mapping(), self.ordinal())
    }
}

impl<T: fmt::Debug, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> fmt::Debug
    for MdspanMut<'_, T, R, E, L, S>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ptr = NonNull::new(self.data_handle()).ok_or(fmt::Error)?;
        debug_view::<T, R, E, L, S>(f, "MdspanMut", ptr, self.mapping(), self.ordinal())
    }
}
