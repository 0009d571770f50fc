//! The view types: [`Mdspan`] (shared, `Copy`) and [`MdspanMut`] (unique), their aliases and
//! queries. Constructors are in `construct`, sub-views in `subview`, the iterators over the
//! sub-views along an axis in `axis_iter`, host element access and iteration in `access`.

mod access;
mod axis_iter;
mod construct;
mod subview;

pub use axis_iter::{AxisIter, AxisIterMut};

use crate::error::DlpackError;
use crate::index::{Dims, Extents, Layout, LayoutRight, Mapping};
use crate::space::{Device, Host, Managed, MemorySpace};
use core::marker::PhantomData;
use core::ptr::NonNull;

/// A shared, typed, multi-dimensional view of elements of type `T` (CCCL's `mdspan` of `const T`).
///
/// - `R`: the rank; indices are `[usize; R]`, so a wrong number of indices does not compile.
/// - `E`: the extents type, [`Dims<R>`] (all dynamic) or a tuple of [`Static`](crate::Static) /
///   [`Dyn`](crate::Dyn) axes (spelled by `mdspan!`).
/// - `L`: the layout ([`LayoutRight`], [`LayoutLeft`](crate::LayoutLeft),
///   [`LayoutStride`](crate::LayoutStride), [`LayoutStrideRelaxed`](crate::LayoutStrideRelaxed)).
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
    /// The device ordinal, and for cudarc allocations the event ordering their uses (rule C6).
    origin: S::Origin,
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
    /// As for [`Mdspan`].
    origin: S::Origin,
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
            /// `ptr` and `map` satisfy the invariants documented on the struct for `'a`; an ordering
            /// event in `origin` is valid for `'a`.
            #[inline]
            pub(crate) const unsafe fn from_parts_unchecked(
                ptr: NonNull<T>,
                map: Mapping<R, E, L>,
                origin: S::Origin,
            ) -> Self {
                Self { ptr, map, origin, _borrow: PhantomData }
            }

            /// The origin: the ordinal, and the ordering event of a cudarc allocation.
            #[inline]
            pub(crate) fn origin(&self) -> S::Origin {
                self.origin
            }

            /// The view, its device memory ordered by `order`, an event that lives as long as the
            /// view's borrow (see [`MemorySpace::with_order`]).
            #[inline]
            pub(crate) fn with_order(mut self, order: crate::space::OrderEvent) -> Self {
                self.origin = S::with_order(self.origin, order);
                self
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

            /// The view as one axis of its elements in logical order, when they are row-major
            /// contiguous (logical order is memory order: a C-contiguous tensor of any rank, a
            /// row-major sub-view); `None` otherwise. What a kernel written over flat memory takes
            /// (a raw kernel over `&[T; 1]`), in any memory space, as `reshape(-1)` does for
            /// arrays that need no copy.
            ///
            /// ```
            /// # use dlspan::LayoutStride;
            /// let data = [0u8, 1, 2, 3, 4, 5];
            /// let m = dlspan::HostMdspan::<u8, 2>::from_slice(&data, [2, 3]).unwrap();
            /// assert_eq!(m.flatten().unwrap().to_vec(), data);
            /// assert!(m.subview([0..2, 0..2]).flatten().is_none()); // a gap between the rows
            /// let columns = dlspan::HostMdspan::<u8, 2, LayoutStride>::from_slice_strided(&data, [3, 2], [1, 3]).unwrap();
            /// assert!(columns.flatten().is_none()); // contiguous, but not in logical order
            /// ```
            #[inline]
            pub fn flatten(self) -> Option<$view<'a, T, 1, Dims<1>, LayoutRight, S>> {
                if !self.map.is_row_major() {
                    return None;
                }
                let (low, high) = self.map.bounds();
                let map = Mapping::<1, Dims<1>, LayoutRight>::compact([high - low]).ok()?;
                // The first element's address; no arithmetic on the pointer's provenance is
                // needed (device memory is no Rust allocation).
                let ptr = NonNull::new(self.ptr.as_ptr().wrapping_add(low))?;
                // SAFETY: row-major and compact from `low`: the `high - low` elements the new
                // mapping reaches from `ptr` are exactly the ones the view reached, in the same
                // memory, for the same borrow, with the same access (the view is consumed), and
                // aligned (`ptr` addresses one of them); their bytes fit isize as before.
                Some(unsafe { $view::from_parts_unchecked(ptr, map, self.origin) })
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
                S::ordinal_of(self.origin)
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
                S::device(self.ordinal())
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
                unsafe { $view::from_parts_unchecked(self.ptr, map, self.origin) }
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
                Ok(unsafe { $view::from_parts_unchecked(self.ptr, map, self.origin) })
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
                Ok(unsafe { $view::from_parts_unchecked(ptr, map, self.origin) })
            }
        }
    };
}

common_view_api!(Mdspan, *const T, as_ptr);
common_view_api!(MdspanMut, *mut T, as_ptr);

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'a, T, R, E, L, S> {
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
        unsafe { Mdspan::from_parts_unchecked(self.ptr, self.map, self.origin) }
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
        unsafe { MdspanMut::from_parts_unchecked(self.ptr, self.map, self.origin) }
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
        unsafe { Mdspan::from_parts_unchecked(self.ptr, self.map, self.origin) }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> From<MdspanMut<'a, T, R, E, L, S>>
    for Mdspan<'a, T, R, E, L, S>
{
    fn from(view: MdspanMut<'a, T, R, E, L, S>) -> Self {
        view.into_view()
    }
}

/// Converts a view with dynamic extents into one with static extents (a tuple extents type, as
/// `mdspan!` spells), checking every static extent.
macro_rules! try_from_dims {
    ($($rank:literal => ($($axis:ident),+);)*) => {$(
        impl<'a, T, L: Layout, S: MemorySpace, $($axis: crate::index::Dim),+> TryFrom<Mdspan<'a, T, $rank, Dims<$rank>, L, S>>
            for Mdspan<'a, T, $rank, ($($axis,)+), L, S>
        {
            type Error = DlpackError;

            fn try_from(view: Mdspan<'a, T, $rank, Dims<$rank>, L, S>) -> Result<Self, DlpackError> {
                view.with_extents()
            }
        }

        impl<'a, T, L: Layout, S: MemorySpace, $($axis: crate::index::Dim),+> TryFrom<MdspanMut<'a, T, $rank, Dims<$rank>, L, S>>
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
