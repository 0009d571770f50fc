//! The view types: [`Mdspan`] (shared, `Copy`) and [`MdspanMut`] (unique), and their aliases.

use super::extents::{Dims, Extents};
use super::iter::{Iter, IterMut};
use super::layout::{Layout, LayoutRight, LayoutStrideRelaxed};
use super::mapping::Mapping;
use crate::error::DlpackError;
use crate::space::{Device, Host, HostAccessible, Managed, MemorySpace};
use core::marker::PhantomData;
use core::ops::{Bound, Index, IndexMut, RangeBounds};
use core::ptr::NonNull;

/// A shared, typed, multi-dimensional view of elements of type `T` (CCCL's `mdspan` of `const T`).
///
/// - `R`: the rank; indices are `[usize; R]`, so a wrong number of indices does not compile.
/// - `E`: the extents type, [`Dims<R>`] (all dynamic) or a tuple of [`Static`](crate::Static) /
///   [`Dyn`](crate::Dyn) axes (spelled by `mdspan!`).
/// - `L`: the layout ([`LayoutRight`], [`LayoutLeft`](crate::LayoutLeft),
///   [`LayoutStride`](crate::LayoutStride), [`LayoutStrideRelaxed`]).
/// - `S`: the memory space ([`Host`], [`Device`], [`Managed`]); only host-accessible views index,
///   iterate and print values.
///
/// A view borrows its data for `'a` like `&'a [T]`; it is `Copy` and covariant in `'a`.
///
/// ```
/// use dlspan::HostMdspan;
/// let data = [0, 1, 2, 3, 4, 5];
/// let m = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
/// assert_eq!((m.rank(), m.extent(0), m.extent(1), m.size()), (2, 2, 3, 6));
/// assert_eq!(m[[1, 2]], 5);
/// assert_eq!(m.iter().sum::<i32>(), 15);
/// ```
pub struct Mdspan<'a, T, const R: usize, E: Extents<R> = Dims<R>, L: Layout = LayoutRight, S: MemorySpace = Host> {
    /// Base pointer. Invariants: non-null and aligned for `T`; every offset the mapping reaches,
    /// `[lowest, span)`, addresses an element valid for reads (in `S`'s memory) for `'a`, not written
    /// through any other path during `'a`; `span * size_of::<T>()` fits `isize`.
    ptr: NonNull<T>,
    map: Mapping<R, E, L>,
    ordinal: S::Ordinal,
    _borrow: PhantomData<&'a T>,
}

/// A unique, mutable, typed, multi-dimensional view of elements of type `T` (CCCL's `mdspan` of
/// `T`). Like `&'a mut [T]`: not `Copy`; reborrow with [`reborrow`](Self::reborrow) or look with
/// [`as_view`](Self::as_view). Its mapping is always unique: no two indices share an element.
///
/// ```
/// use dlspan::HostMdspanMut;
/// let mut data = [0.0f32; 6];
/// let mut m = HostMdspanMut::<f32, 2>::from_slice(&mut data, [2, 3]).unwrap();
/// m[[1, 2]] = 5.0;
/// for x in m.iter_mut() {
///     *x += 1.0;
/// }
/// assert_eq!(data, [1.0, 1.0, 1.0, 1.0, 1.0, 6.0]);
/// ```
pub struct MdspanMut<'a, T, const R: usize, E: Extents<R> = Dims<R>, L: Layout = LayoutRight, S: MemorySpace = Host> {
    /// Base pointer. Invariants: those of [`Mdspan`], with "valid for reads and writes, not
    /// accessed through any other path during `'a`", and a unique mapping.
    ptr: NonNull<T>,
    map: Mapping<R, E, L>,
    ordinal: S::Ordinal,
    _borrow: PhantomData<&'a mut T>,
}

/// A shared host view with dynamic extents (CCCL `cuda::host_mdspan`).
///
/// ```
/// use dlspan::HostMdspan;
/// let data = [1.0f32, 2.0, 3.0, 4.0];
/// let view = HostMdspan::<f32, 2>::from_slice(&data, [2, 2])?;
/// assert_eq!((view.rank_dynamic(), view[[1, 0]]), (2, 3.0));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type HostMdspan<'a, T, const R: usize, L = LayoutRight> = Mdspan<'a, T, R, Dims<R>, L, Host>;
/// A mutable host view with dynamic extents.
///
/// ```
/// use dlspan::HostMdspanMut;
/// let mut data = [0u8; 4];
/// let mut view = HostMdspanMut::<u8, 2>::from_slice(&mut data, [2, 2])?;
/// view[[1, 0]] = 9;
/// assert_eq!(data, [0, 0, 9, 0]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type HostMdspanMut<'a, T, const R: usize, L = LayoutRight> = MdspanMut<'a, T, R, Dims<R>, L, Host>;
/// A shared CUDA device view with dynamic extents (CCCL `cuda::device_mdspan`); no host access.
///
/// ```
/// use dlspan::{DeviceMdspan, Mapping};
/// let gpu = 0x7f00_0000_0000 as *const f32; // stands in for a cudaMalloc'd address, never read here
/// let map = Mapping::compact([2, 4])?;
/// // SAFETY: `gpu` stands for 8 floats in device 0's memory; host code never reads them.
/// let view: DeviceMdspan<'_, f32, 2> = unsafe { DeviceMdspan::from_raw_parts(gpu, map, 0) };
/// assert_eq!((view.extents(), view.device().device_type), ([2, 4], dlspan::ffi::DLDeviceType::kDLCUDA));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type DeviceMdspan<'a, T, const R: usize, L = LayoutRight> = Mdspan<'a, T, R, Dims<R>, L, Device>;
/// A mutable CUDA device view with dynamic extents; no host access.
///
/// ```
/// use dlspan::{DeviceMdspanMut, Mapping};
/// let gpu = 0x7f00_0000_0000 as *mut f32; // stands in for a cudaMalloc'd address, never touched here
/// let map = Mapping::compact([4])?;
/// // SAFETY: `gpu` stands for 4 floats in device 3's memory, used by nothing else; the host never reads them.
/// let view: DeviceMdspanMut<'_, f32, 1> = unsafe { DeviceMdspanMut::from_raw_parts(gpu, map, 3) }?;
/// assert_eq!((view.size(), view.ordinal()), (4, 3));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type DeviceMdspanMut<'a, T, const R: usize, L = LayoutRight> = MdspanMut<'a, T, R, Dims<R>, L, Device>;
/// A shared CUDA managed-memory view with dynamic extents (CCCL `cuda::managed_mdspan`).
///
/// ```
/// use dlspan::{ManagedMdspan, Mapping};
/// let data = [1u8, 2, 3]; // stands in for cudaMallocManaged memory
/// let map = Mapping::compact([3])?;
/// // SAFETY: `data` holds the 3 elements, outlives the view and is not written while it lives.
/// let view: ManagedMdspan<'_, u8, 1> = unsafe { ManagedMdspan::from_raw_parts(data.as_ptr(), map, ()) };
/// assert_eq!(view[[2]], 3);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type ManagedMdspan<'a, T, const R: usize, L = LayoutRight> = Mdspan<'a, T, R, Dims<R>, L, Managed>;
/// A mutable CUDA managed-memory view with dynamic extents.
///
/// ```
/// use dlspan::{ManagedMdspanMut, Mapping};
/// let mut data = [0u8; 3]; // stands in for cudaMallocManaged memory
/// let map = Mapping::compact([3])?;
/// // SAFETY: `data` holds the 3 elements, outlives the view and is accessed only through it.
/// let ptr = data.as_mut_ptr();
/// let mut view: ManagedMdspanMut<'_, u8, 1> = unsafe { ManagedMdspanMut::from_raw_parts(ptr, map, ()) }?;
/// view[[2]] = 7;
/// assert_eq!(data, [0, 0, 7]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type ManagedMdspanMut<'a, T, const R: usize, L = LayoutRight> = MdspanMut<'a, T, R, Dims<R>, L, Managed>;

// SAFETY: a shared view is a `&'a [T]` in disguise: sending or sharing it across threads only ever
// gives other threads shared access to `T`, which `T: Sync` allows.
unsafe impl<T: Sync, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Send for Mdspan<'_, T, R, E, L, S> {}
// SAFETY: as for `Send`: `&Mdspan` only gives shared access to `T`.
unsafe impl<T: Sync, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Sync for Mdspan<'_, T, R, E, L, S> {}
// SAFETY: a mutable view is a `&'a mut [T]` in disguise: moving it to another thread moves the
// unique access, which `T: Send` allows.
unsafe impl<T: Send, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Send for MdspanMut<'_, T, R, E, L, S> {}
// SAFETY: `&MdspanMut` only gives shared access to `T` (reads), which `T: Sync` allows.
unsafe impl<T: Sync, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Sync for MdspanMut<'_, T, R, E, L, S> {}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Clone for Mdspan<'_, T, R, E, L, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Copy for Mdspan<'_, T, R, E, L, S> {}

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
struct SubParts<const Q: usize> {
    extents: [usize; Q],
    strides: [isize; Q],
    start: isize,
}

fn sub_ranges<const R: usize, E: Extents<R>, L: Layout>(
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

fn sub_axis<const R: usize, const Q: usize, E: Extents<R>, L: Layout>(
    map: &Mapping<R, E, L>,
    axis: usize,
    index: usize,
) -> SubParts<Q> {
    debug_assert!(Q + 1 == R);
    assert!(axis < R, "axis {axis} out of range for rank {R}");
    let extent = map.extent(axis);
    assert!(index < extent, "index {index} out of bounds for axis {axis} of extent {extent}");
    let all = map.strides();
    let (mut extents, mut strides) = ([0usize; Q], [0isize; Q]);
    for (j, k) in (0..R).filter(|&k| k != axis).enumerate() {
        extents[j] = map.extent(k);
        strides[j] = all[k];
    }
    let mut first = [0usize; R];
    first[axis] = index;
    let start = if map.extents().contains(&0) { map.offset() as isize } else { map.offset_unchecked(&first) };
    SubParts { extents, strides, start }
}

/// Generates what both view types share: queries, conversions that keep the access kind, and
/// sub-views. `$ptr_ty` is the raw pointer type `data_handle` returns.
macro_rules! common_view_api {
    ($view:ident, $ptr_ty:ty, $as_ptr:ident) => {
        impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> $view<'a, T, R, E, L, S> {
            /// The rank, as an associated constant.
            ///
            /// ```
            #[doc = concat!("let extents: [usize; <dlspan::", stringify!($view), "<'static, f32, 3>>::RANK] = [2, 3, 4];")]
            /// assert_eq!(extents.len(), 3);
            /// ```
            pub const RANK: usize = R;

            /// Assembles a view from validated parts.
            ///
            /// # Safety
            ///
            /// `ptr` and `map` satisfy the invariants documented on the struct for `'a`.
            #[inline]
            pub(crate) const unsafe fn from_parts_unchecked(
                ptr: NonNull<T>,
                map: Mapping<R, E, L>,
                ordinal: S::Ordinal,
            ) -> Self {
                Self { ptr, map, ordinal, _borrow: PhantomData }
            }

            /// The rank `R`.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.rank(), 2);
            /// ```
            #[inline]
            pub const fn rank(&self) -> usize {
                R
            }

            /// The number of dynamic axes of the view type.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.rank_dynamic(), 2);
            /// ```
            #[inline]
            pub const fn rank_dynamic(&self) -> usize {
                E::RANK_DYNAMIC
            }

            /// The length of `axis` (a constant for static axes).
            ///
            /// # Panics
            ///
            /// If `axis >= R`.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.extent(1), 3);
            /// ```
            #[inline]
            pub fn extent(&self, axis: usize) -> usize {
                self.map.extent(axis)
            }

            /// Every extent.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.extents(), [2, 3]);
            /// ```
            #[inline]
            pub fn extents(&self) -> [usize; R] {
                self.map.extents()
            }

            /// The stride of `axis`, in elements.
            ///
            /// # Panics
            ///
            /// If `axis >= R`.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.stride(0), 3);
            /// ```
            #[inline]
            pub fn stride(&self, axis: usize) -> isize {
                self.map.stride(axis)
            }

            /// Every stride, in elements.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.strides(), [3, 1]);
            /// ```
            #[inline]
            pub fn strides(&self) -> [isize; R] {
                self.map.strides()
            }

            /// The element offset of index `[0; R]` from [`data_handle`](Self::data_handle): nonzero
            /// only for relaxed views.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.offset(), 0);
            /// ```
            #[inline]
            pub fn offset(&self) -> usize {
                self.map.offset()
            }

            /// The number of elements.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.size(), 6);
            /// ```
            #[inline]
            pub fn size(&self) -> usize {
                self.map.size()
            }

            /// Whether the view has no elements.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert!(!m.is_empty());
            /// ```
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.map.size() == 0
            }

            /// The base pointer (CCCL `data_handle()`): the first element for strict layouts, the
            /// base that [`offset`](Self::offset) counts from for relaxed views. For device views it
            /// is a device address. A view of no elements may return a dangling, aligned pointer.
            ///
            /// ```
            /// let data = [0u8; 6];
            /// let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.data_handle(), data.as_ptr());
            /// ```
            #[inline]
            pub fn data_handle(&self) -> $ptr_ty {
                self.ptr.$as_ptr()
            }

            /// The mapping (extents, strides, offset).
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.mapping().required_span_size(), 6);
            /// ```
            #[inline]
            pub fn mapping(&self) -> &Mapping<R, E, L> {
                &self.map
            }

            /// Whether the elements fill exactly `size()` consecutive memory slots (then
            /// `as_slice` succeeds on host-accessible views).
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert!(m.is_contiguous());
            /// assert!(!m.subview([0..2, 0..2]).is_contiguous());
            /// ```
            #[inline]
            pub fn is_contiguous(&self) -> bool {
                self.map.is_contiguous()
            }

            /// The memory space's record of the device: `()` for host and managed views, the CUDA
            /// ordinal for device views.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.ordinal(), ());
            /// ```
            #[inline]
            pub fn ordinal(&self) -> S::Ordinal {
                self.ordinal
            }

            /// The DLPack device this view exports as.
            ///
            /// ```
            /// # let data = [0u8; 6];
            /// # let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.device().device_type, dlspan::ffi::DLDeviceType::kDLCPU);
            /// ```
            #[inline]
            pub fn device(&self) -> crate::ffi::DLDevice {
                S::device(self.ordinal)
            }

            /// The same view with all extents dynamic.
            ///
            /// ```
            /// type M<'a> = dlspan::mdspan!(&'a u8; 2, 3);
            /// let data = [0u8; 6];
            /// let m: dlspan::HostMdspan<u8, 2> = M::from_array(&data).into_dyn();
            /// assert_eq!(m.extents(), [2, 3]);
            /// ```
            #[inline]
            pub fn into_dyn(self) -> $view<'a, T, R, Dims<R>, L, S> {
                let map = Mapping::assume_valid(self.map.extents(), self.map.strides(), self.map.offset());
                // SAFETY: same pointer and mapping; `Dims<R>` constrains nothing.
                unsafe { $view::from_parts_unchecked(self.ptr, map, self.ordinal) }
            }

            /// The same view under another extents type, checked.
            ///
            /// # Errors
            ///
            /// [`DlpackError::ExtentMismatch`] when an extent differs from a static extent of `E2`.
            ///
            /// ```
            /// use dlspan::{Static, Dyn, HostMdspan};
            /// let data = [0u8; 6];
            /// let m = HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert!(m.with_extents::<(Static<2>, Dyn)>().is_ok());
            /// assert!(m.with_extents::<(Static<3>, Dyn)>().is_err());
            /// ```
            #[inline]
            pub fn with_extents<E2: Extents<R>>(self) -> Result<$view<'a, T, R, E2, L, S>, DlpackError> {
                let map = self.map.with_extents::<E2>()?;
                // SAFETY: same pointer and mapping, extents checked against `E2`.
                Ok(unsafe { $view::from_parts_unchecked(self.ptr, map, self.ordinal) })
            }

            /// The same view under another layout, checked against the layout's rules. An offset
            /// of a relaxed view moves into the pointer when the target layout has none.
            ///
            /// # Errors
            ///
            /// The target layout's rules, as for [`Mapping::from_strides`].
            ///
            /// ```
            /// use dlspan::{HostMdspan, LayoutStride, LayoutLeft};
            /// let data = [0u8; 6];
            /// let m = HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.into_layout::<LayoutStride>().unwrap().strides(), [3, 1]);
            /// assert!(m.into_layout::<LayoutLeft>().is_err());
            /// ```
            pub fn into_layout<L2: Layout>(self) -> Result<$view<'a, T, R, E, L2, S>, DlpackError> {
                let (extents, strides, offset) = (self.map.extents(), self.map.strides(), self.map.offset());
                let (ptr, offset) = if L2::HAS_OFFSET || offset == 0 || self.map.size() == 0 {
                    (self.ptr, if self.map.size() == 0 { 0 } else { offset })
                } else {
                    // Wrapping arithmetic: for device views the pointer is not a host allocation.
                    let moved = self.ptr.as_ptr().wrapping_add(offset);
                    // SAFETY: the view has elements, so `offset` is the validated offset of index 0
                    // from the base, inside the view's memory range, which does not contain or wrap
                    // around address 0.
                    (unsafe { NonNull::new_unchecked(moved) }, 0)
                };
                let map = Mapping::<R, E, L2>::from_parts(extents, strides, offset)?;
                // SAFETY: the new mapping reaches exactly the elements the old one did (same
                // extents and strides, same first element); uniqueness is unchanged.
                Ok(unsafe { $view::from_parts_unchecked(ptr, map, self.ordinal) })
            }

            /// Applies validated sub-mapping parts.
            fn sub<const Q: usize>(&self, parts: SubParts<Q>) -> (NonNull<T>, Mapping<Q, Dims<Q>, L::Sub>) {
                if <L::Sub as Layout>::HAS_OFFSET {
                    // The parent reaches no element below its base, so the sub-view's first element
                    // offset is non-negative.
                    (self.ptr, Mapping::assume_valid(parts.extents, parts.strides, parts.start as usize))
                } else {
                    // Wrapping arithmetic: for device views the pointer is not a host allocation.
                    let moved = self.ptr.as_ptr().wrapping_offset(parts.start);
                    // SAFETY: non-relaxed layouts have positive strides and no offset below the
                    // base, so `start` is the offset of the sub-view's first element (or, for an empty
                    // sub-view, of the parent's), inside the parent's memory range, which does not
                    // contain or wrap around address 0.
                    (unsafe { NonNull::new_unchecked(moved) }, Mapping::assume_valid(parts.extents, parts.strides, 0))
                }
            }
        }
    };
}

common_view_api!(Mdspan, *const T, as_ptr);
common_view_api!(MdspanMut, *mut T, as_ptr);

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, T, R, E, L, S> {
    /// A view from a raw pointer and a mapping (the `unsafe` twin of [`from_slice`](Self::from_slice)).
    ///
    /// # Safety
    ///
    /// - `ptr` is non-null and aligned for `T`;
    /// - every element offset `mapping` reaches, `[lowest, required_span_size)`, addresses a `T`
    ///   valid for reads for `'a` in `S`'s memory (host memory for [`Host`], device memory for
    ///   [`Device`], managed memory for [`Managed`]), and no one writes those elements during `'a`;
    /// - `mapping.required_span_size() * size_of::<T>()` fits `isize`, and the range does not
    ///   wrap around the address space;
    /// - for [`Device`], `ordinal` is the CUDA device that owns the memory.
    ///
    /// ```
    /// use dlspan::{Mdspan, Mapping, Dims, LayoutRight, Host};
    /// let data = [1u16, 2, 3, 4];
    /// let map = Mapping::<2, Dims<2>, LayoutRight>::compact([2, 2]).unwrap();
    /// // SAFETY: `data` holds the 4 elements the mapping reaches and outlives the view.
    /// let m: Mdspan<'_, u16, 2> = unsafe { Mdspan::from_raw_parts(data.as_ptr(), map, ()) };
    /// assert_eq!(m[[1, 0]], 3);
    /// ```
    #[inline]
    pub unsafe fn from_raw_parts(ptr: *const T, mapping: Mapping<R, E, L>, ordinal: S::Ordinal) -> Self {
        debug_assert!(!ptr.is_null() && ptr.is_aligned());
        // SAFETY: the caller guarantees `ptr` is non-null.
        let ptr = unsafe { NonNull::new_unchecked(ptr.cast_mut()) };
        // SAFETY: the caller guarantees the struct invariants.
        unsafe { Self::from_parts_unchecked(ptr, mapping, ordinal) }
    }

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
        let (ptr, map) = self.sub(parts);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements.
        Ok(unsafe { Mdspan::from_parts_unchecked(ptr, map, self.ordinal) })
    }

    /// The view with `axis` fixed at `index`: rank `Q = R - 1` (a compile error otherwise).
    ///
    /// # Panics
    ///
    /// If `axis >= R` or `index` is out of bounds for the axis.
    ///
    /// ```
    /// use dlspan::HostMdspan;
    /// let data: Vec<i32> = (0..6).collect();
    /// let m = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    /// assert_eq!(m.index_axis::<1>(0, 1).to_vec(), [3, 4, 5]);
    /// assert_eq!(m.index_axis::<1>(1, 2).to_vec(), [2, 5]);
    /// ```
    #[track_caller]
    pub fn index_axis<const Q: usize>(&self, axis: usize, index: usize) -> Mdspan<'a, T, Q, Dims<Q>, L::Sub, S> {
        const { assert!(Q + 1 == R, "index_axis removes one axis: the result's rank must be R - 1") };
        let parts = sub_axis::<R, Q, E, L>(&self.map, axis, index);
        let (ptr, map) = self.sub(parts);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements.
        unsafe { Mdspan::from_parts_unchecked(ptr, map, self.ordinal) }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'a, T, R, E, L, S> {
    /// A mutable view from a raw pointer and a mapping (the `unsafe` twin of
    /// [`from_slice`](Self::from_slice)).
    ///
    /// # Errors
    ///
    /// [`DlpackError::OverlappingStrides`] when the mapping is not unique.
    ///
    /// # Safety
    ///
    /// As for [`Mdspan::from_raw_parts`], with the elements valid for reads *and writes* for `'a`
    /// and not accessed through any other path during `'a`.
    ///
    /// ```
    /// use dlspan::{MdspanMut, Mapping, Dims, LayoutRight};
    /// let mut data = [0u16; 4];
    /// let map = Mapping::<2, Dims<2>, LayoutRight>::compact([2, 2]).unwrap();
    /// // SAFETY: `data` holds the 4 elements, is borrowed mutably by nothing else, outlives the view.
    /// let mut m: MdspanMut<'_, u16, 2> = unsafe { MdspanMut::from_raw_parts(data.as_mut_ptr(), map, ()) }.unwrap();
    /// m[[1, 1]] = 7;
    /// assert_eq!(data[3], 7);
    /// ```
    #[inline]
    pub unsafe fn from_raw_parts(
        ptr: *mut T,
        mapping: Mapping<R, E, L>,
        ordinal: S::Ordinal,
    ) -> Result<Self, DlpackError> {
        if !mapping.is_unique() {
            return Err(DlpackError::OverlappingStrides);
        }
        debug_assert!(!ptr.is_null() && ptr.is_aligned());
        // SAFETY: the caller guarantees `ptr` is non-null.
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        // SAFETY: the caller guarantees the invariants; uniqueness was checked above.
        Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, ordinal) })
    }

    /// A shared view of the same elements, borrowing this one.
    ///
    /// ```
    /// let mut data = [1, 2, 3];
    /// let m = dlspan::HostMdspanMut::<i32, 1>::from_slice(&mut data, [3]).unwrap();
    /// assert_eq!(m.as_view().to_vec(), [1, 2, 3]);
    /// ```
    #[inline]
    pub fn as_view(&self) -> Mdspan<'_, T, R, E, L, S> {
        // SAFETY: shared access for the borrow of `self`, during which this view cannot write.
        unsafe { Mdspan::from_parts_unchecked(self.ptr, self.map, self.ordinal) }
    }

    /// A mutable view of the same elements for a shorter borrow.
    ///
    /// ```
    /// let mut data = [1, 2, 3];
    /// let mut m = dlspan::HostMdspanMut::<i32, 1>::from_slice(&mut data, [3]).unwrap();
    /// m.reborrow()[[0]] = 9;
    /// assert_eq!(m[[0]], 9);
    /// ```
    #[inline]
    pub fn reborrow(&mut self) -> MdspanMut<'_, T, R, E, L, S> {
        // SAFETY: unique access for the mutable borrow of `self`.
        unsafe { MdspanMut::from_parts_unchecked(self.ptr, self.map, self.ordinal) }
    }

    /// Gives up mutability: a shared view for the rest of `'a`.
    ///
    /// ```
    /// let mut data = [1, 2, 3];
    /// let m = dlspan::HostMdspanMut::<i32, 1>::from_slice(&mut data, [3]).unwrap();
    /// let shared = m.into_view();
    /// assert_eq!((shared[[2]], shared[[2]]), (3, 3));
    /// ```
    #[inline]
    pub fn into_view(self) -> Mdspan<'a, T, R, E, L, S> {
        // SAFETY: the unique access of `self` becomes shared access for the same lifetime.
        unsafe { Mdspan::from_parts_unchecked(self.ptr, self.map, self.ordinal) }
    }

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
        let (ptr, map) = self.sub(parts);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements, uniquely; the parent
        // is consumed, so the access stays unique.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, map, self.ordinal) })
    }

    /// The mutable view with `axis` fixed at `index`, consuming this view: rank `Q = R - 1`.
    ///
    /// # Panics
    ///
    /// If `axis >= R` or `index` is out of bounds for the axis.
    ///
    /// ```
    /// let mut data = [0i32; 6];
    /// let m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 3]).unwrap();
    /// m.into_index_axis::<1>(0, 1).iter_mut().for_each(|x| *x = 1);
    /// assert_eq!(data, [0, 0, 0, 1, 1, 1]);
    /// ```
    #[track_caller]
    pub fn into_index_axis<const Q: usize>(self, axis: usize, index: usize) -> MdspanMut<'a, T, Q, Dims<Q>, L::Sub, S> {
        const { assert!(Q + 1 == R, "into_index_axis removes one axis: the result's rank must be R - 1") };
        let parts = sub_axis::<R, Q, E, L>(&self.map, axis, index);
        let (ptr, map) = self.sub(parts);
        // SAFETY: the sub-mapping reaches a subset of the parent's elements, uniquely.
        unsafe { MdspanMut::from_parts_unchecked(ptr, map, self.ordinal) }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> From<MdspanMut<'a, T, R, E, L, S>>
    for Mdspan<'a, T, R, E, L, S>
{
    fn from(view: MdspanMut<'a, T, R, E, L, S>) -> Self {
        view.into_view()
    }
}

/// Checks that `mapping` fits in a slice of `len` elements.
fn fits_slice<const R: usize, E: Extents<R>, L: Layout>(
    mapping: &Mapping<R, E, L>,
    len: usize,
) -> Result<(), DlpackError> {
    let required = mapping.required_span_size();
    if required > len { Err(DlpackError::SliceTooShort { required, len }) } else { Ok(()) }
}

/// Generates the slice constructors of one view type. `$mut_kw` is `"mut "` for the mutable view
/// and `""` for the shared one: the examples spell `let mut data` and `&mut data` with it.
macro_rules! slice_constructors {
    ($view:ident, $slice:ty, $array:ty, $unique:expr, $mut_kw:literal) => {
        impl<'a, T, const R: usize, E: Extents<R>, L: Layout> $view<'a, T, R, E, L, Host> {
            /// A view of the compact layout of `extents` over a slice of exactly that many elements
            /// (row-major, or column-major for `LayoutLeft`).
            ///
            /// # Errors
            ///
            /// [`DlpackError::SliceTooShort`] when the slice length differs from the number of
            /// elements; [`DlpackError::ExtentMismatch`] against static extents;
            /// [`DlpackError::SpanOverflow`].
            ///
            /// ```
            #[doc = concat!("use dlspan::Host", stringify!($view), ";")]
            #[doc = concat!("let ", $mut_kw, "data = [0, 1, 2, 3, 4, 5];")]
            #[doc = concat!("let view = Host", stringify!($view), "::<i32, 2>::from_slice(&", $mut_kw, "data, [2, 3])?;")]
            /// assert_eq!(view[[1, 0]], 3);
            #[doc = concat!("assert!(Host", stringify!($view), "::<i32, 2>::from_slice(&", $mut_kw, "data, [2, 2]).is_err());")]
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn from_slice(data: $slice, extents: [usize; R]) -> Result<Self, DlpackError> {
                let mapping = Mapping::compact(extents)?;
                if mapping.size() != data.len() {
                    return Err(DlpackError::SliceTooShort { required: mapping.size(), len: data.len() });
                }
                Self::from_slice_mapping(data, mapping)
            }

            /// A view of `extents` and `strides` (in elements) over a slice that holds every element
            /// they reach; the first element is `data[0]`.
            ///
            /// # Errors
            ///
            /// The layout's stride rules (as [`Mapping::from_strides`]);
            /// [`DlpackError::SliceTooShort`]; for mutable views
            /// [`DlpackError::OverlappingStrides`].
            ///
            /// ```
            #[doc = concat!("use dlspan::{Host", stringify!($view), ", LayoutStride};")]
            #[doc = concat!("let ", $mut_kw, "data = [1, 2, 3, 0, 4, 5, 6, 0]; // rows padded to 4")]
            #[doc = concat!(
                "let view = Host", stringify!($view),
                "::<i32, 2, LayoutStride>::from_slice_strided(&", $mut_kw, "data, [2, 3], [4, 1])?;"
            )]
            /// assert_eq!(view.to_vec(), [1, 2, 3, 4, 5, 6]);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn from_slice_strided(data: $slice, extents: [usize; R], strides: [isize; R]) -> Result<Self, DlpackError> {
                let mapping = Mapping::from_strides(extents, strides)?;
                Self::from_slice_mapping(data, mapping)
            }

            /// A view of a mapping over a slice that holds every element it reaches.
            ///
            /// # Errors
            ///
            /// [`DlpackError::SliceTooShort`]; for mutable views [`DlpackError::OverlappingStrides`].
            ///
            /// ```
            #[doc = concat!("use dlspan::{Dims, Host", stringify!($view), ", LayoutLeft, Mapping};")]
            #[doc = concat!("let ", $mut_kw, "data = [1, 4, 2, 5, 3, 6];")]
            /// let map = Mapping::<2, Dims<2>, LayoutLeft>::compact([2, 3])?;
            #[doc = concat!("let view = Host", stringify!($view), "::<i32, 2, LayoutLeft>::from_slice_mapping(&", $mut_kw, "data, map)?;")]
            /// assert_eq!(view[[1, 2]], 6);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            pub fn from_slice_mapping(data: $slice, mapping: Mapping<R, E, L>) -> Result<Self, DlpackError> {
                fits_slice(&mapping, data.len())?;
                if $unique && !mapping.is_unique() {
                    return Err(DlpackError::OverlappingStrides);
                }
                let ptr = NonNull::from(data).cast::<T>();
                // SAFETY: the slice is valid for `'a` (and, for the mutable view, borrowed uniquely),
                // holds every element the mapping reaches (`fits_slice`), and as a slice its bytes fit
                // `isize` without wrapping; its pointer is non-null and aligned; the mapping is unique
                // for mutable views.
                Ok(unsafe { Self::from_parts_unchecked(ptr, mapping, ()) })
            }

            /// A view of an array whose length the static extents fix: a mismatch is a compile error.
            ///
            /// # Panics
            ///
            /// Never for element types with a size; for zero-sized `T`, if `N` exceeds `isize::MAX`.
            ///
            /// ```
            #[doc = concat!("let ", $mut_kw, "data = [0, 1, 2, 3, 4, 5];")]
            #[doc = concat!("let view = <dlspan::mdspan!(", $mut_kw, "i32; 2, 3)>::from_array(&", $mut_kw, "data);")]
            /// assert_eq!((view.extents(), view[[1, 2]]), ([2, 3], 5));
            /// ```
            #[inline]
            pub fn from_array<const N: usize>(data: $array) -> Self {
                const {
                    assert!(
                        matches!(E::STATIC_SIZE, Some(n) if n == N),
                        "from_array: the array length must equal the product of the view type's static extents (and every extent must be static)"
                    )
                };
                let extents = E::STATIC.map(|e| e.unwrap_or(0));
                match Self::from_slice(data, extents) {
                    Ok(view) => view,
                    Err(err) => panic!("{err}"),
                }
            }
        }

        impl<'a, T, const R: usize, E: Extents<R>> $view<'a, T, R, E, LayoutStrideRelaxed, Host> {
            /// A relaxed view over a slice: any strides (zero, negative) and the element offset of
            /// index 0 from `data[0]`.
            ///
            /// # Errors
            ///
            /// [`DlpackError::NegativeReach`] when an index reaches below `data[0]`;
            /// [`DlpackError::SliceTooShort`]; [`DlpackError::SpanOverflow`]; for mutable views
            /// [`DlpackError::OverlappingStrides`].
            ///
            /// ```
            #[doc = concat!("use dlspan::{Host", stringify!($view), ", LayoutStrideRelaxed};")]
            #[doc = concat!("let ", $mut_kw, "data = [1, 2, 3, 4, 5];")]
            #[doc = concat!(
                "let reversed = Host", stringify!($view),
                "::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&", $mut_kw, "data, [5], [-1], 4)?;"
            )]
            /// assert_eq!(reversed.to_vec(), [5, 4, 3, 2, 1]);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            pub fn from_slice_relaxed(
                data: $slice,
                extents: [usize; R],
                strides: [isize; R],
                offset: usize,
            ) -> Result<Self, DlpackError> {
                let mapping = Mapping::from_parts(extents, strides, offset)?;
                Self::from_slice_mapping(data, mapping)
            }
        }
    };
}

slice_constructors!(Mdspan, &'a [T], &'a [T; N], false, "");
slice_constructors!(MdspanMut, &'a mut [T], &'a mut [T; N], true, "mut ");

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
    /// ```
    /// let data = [1, 2, 3, 4, 5, 6];
    /// let m = dlspan::HostMdspan::<i32, 2, dlspan::LayoutLeft>::from_slice(&data, [2, 3]).unwrap();
    /// assert_eq!(m.iter().copied().collect::<Vec<_>>(), [1, 3, 5, 2, 4, 6]);
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
        if self.map.is_row_major() {
            if let Some(slice) = self.as_slice() {
                return slice.to_vec();
            }
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
    /// ```
    /// let mut data = [1, 2, 3, 4];
    /// let mut m = dlspan::HostMdspanMut::<i32, 2>::from_slice(&mut data, [2, 2]).unwrap();
    /// m.iter_mut().for_each(|x| *x *= 10);
    /// assert_eq!(data, [10, 20, 30, 40]);
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

/// Converts a view with dynamic extents into one with static extents (a tuple extents type, as
/// `mdspan!` spells), checking every static extent.
macro_rules! try_from_dims {
    ($($rank:literal => ($($axis:ident),+);)*) => {$(
        impl<'a, T, L: Layout, S: MemorySpace, $($axis: super::extents::Dim),+> TryFrom<Mdspan<'a, T, $rank, Dims<$rank>, L, S>>
            for Mdspan<'a, T, $rank, ($($axis,)+), L, S>
        {
            type Error = DlpackError;

            fn try_from(view: Mdspan<'a, T, $rank, Dims<$rank>, L, S>) -> Result<Self, DlpackError> {
                view.with_extents()
            }
        }

        impl<'a, T, L: Layout, S: MemorySpace, $($axis: super::extents::Dim),+> TryFrom<MdspanMut<'a, T, $rank, Dims<$rank>, L, S>>
            for MdspanMut<'a, T, $rank, ($($axis,)+), L, S>
        {
            type Error = DlpackError;

            fn try_from(view: MdspanMut<'a, T, $rank, Dims<$rank>, L, S>) -> Result<Self, DlpackError> {
                view.with_extents()
            }
        }
    )*};
}

try_from_dims! {
    1 => (A);
    2 => (A, B);
    3 => (A, B, C);
    4 => (A, B, C, D);
    5 => (A, B, C, D, E);
    6 => (A, B, C, D, E, F);
    7 => (A, B, C, D, E, F, G);
    8 => (A, B, C, D, E, F, G, H);
    9 => (A, B, C, D, E, F, G, H, I);
    10 => (A, B, C, D, E, F, G, H, I, J);
    11 => (A, B, C, D, E, F, G, H, I, J, K);
    12 => (A, B, C, D, E, F, G, H, I, J, K, L2);
}
