//! [`Aligned`]: a view whose first element is aligned to `ALIGN` bytes, a promise in its type.

use super::mdspan::{Mdspan, MdspanMut};
use crate::error::DlpackError;
use crate::index::{Dims, Extents, Layout, SubviewRanges};
use crate::space::MemorySpace;
use core::fmt;
use core::ops::{Deref, Index, IndexMut};

/// A view `V` whose first element is aligned to `ALIGN` bytes (a power of two), a promise in its
/// type; `mdspan!(...; align = N)` spells it.
///
/// Kernels with vector loads (16-byte SSE/NEON, 32-byte AVX, 64-byte AVX-512 or a cache line) need
/// the data pointer aligned beyond what the element type asks; a DLPack tensor only promises the
/// element's alignment (rule [I8](crate::rules#i8)). `Aligned<V, ALIGN>` wraps a view `V`
/// ([`Mdspan`] or [`MdspanMut`]) and is only ever built around a view whose first element (index
/// `[0; R]`) lies at a multiple of `ALIGN` bytes, or that has no elements (the rules page's
/// section [A](crate::rules#a)):
///
/// - importing checks the address after every rule of section I, with
///   [`DlpackError::Underaligned`] naming the required and the found alignment;
/// - dlspan's owned buffers satisfy it by construction ([`AlignedBuffer::view`](crate::AlignedBuffer::view));
/// - a sub-view keeps it only when its own first element is aligned, which depends on run-time
///   ranges and strides: [`subview_aligned`](Self::subview_aligned) checks it, or re-state it with
///   [`Aligned::new`].
///
/// The view's queries, indexing and iteration are reached through `Deref`. There is no `DerefMut`:
/// it would let safe code assign another, unaligned view in place. Mutable access goes through
/// [`view_mut`](Self::view_mut) and `IndexMut`.
///
/// Default view types carry no alignment parameter and pay nothing for this: the check lives only in
/// `Aligned`'s constructors.
///
/// ```
/// use dlspan::{AlignedBuffer, Aligned, HostMdspan, ManagedTensor, mdspan};
///
/// /// A kernel that may use 64-byte vector loads from the first element.
/// fn scale(mut x: mdspan!(mut f32; dyn, dyn; align = 64), factor: f32) {
///     assert_eq!(x.data_handle().addr() % 64, 0); // what the type promises
///     x.view_mut().for_each_unordered(|v| *v *= factor);
/// }
///
/// let mut buffer = AlignedBuffer::<f32>::filled(1.0, 32);
/// scale(buffer.view_mut([4, 8])?, 2.0);
///
/// // Through DLPack: the import checks the alignment the type states.
/// let tensor = ManagedTensor::from_owner(buffer, [4, 8])?;
/// let view = tensor.view_as::<Aligned<HostMdspan<'_, f32, 2>, 64>>()?;
/// assert_eq!(view[[3, 7]], 2.0);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
///
/// ```
/// use dlspan::{Aligned, AlignedBuffer, DlpackError, HostMdspan};
///
/// let lines = AlignedBuffer::<f32, 64>::from_fn(32, |i| if i < 16 { 1.0 } else { 2.0 });
/// let rows = HostMdspan::<f32, 2>::from_slice(&lines, [2, 16])?;
/// let aligned = Aligned::<_, 64>::new(rows)?;
/// assert_eq!(aligned.sum(), 48.0); // the view's methods, through Deref
///
/// // The second row starts 64 bytes in: still aligned. Four elements in it is not.
/// assert!(aligned.subview_aligned((1.., ..)).is_ok());
/// let shifted = aligned.subview_aligned((.., 4..));
/// assert!(matches!(shifted, Err(DlpackError::Underaligned { required: 64, found: 16, .. })));
/// # Ok::<(), DlpackError>(())
/// ```
#[derive(Clone, Copy)]
pub struct Aligned<V, const ALIGN: usize> {
    /// Invariant: empty, or its first element's address is a multiple of `ALIGN`.
    view: V,
}

mod sealed {
    pub trait Sealed {}
}

/// The views [`Aligned`] wraps: [`Mdspan`] and [`MdspanMut`] of any element type, rank, extents,
/// layout and memory space. Sealed.
///
/// ```
/// use dlspan::{HostMdspan, view::AlignedView};
/// let data = [1u8, 2, 3];
/// let view = HostMdspan::<u8, 1>::from_slice(&data, [3])?;
/// assert_eq!(view.first_element_address(), Some(data.as_ptr().addr()));
/// assert_eq!(view.subview([1..1]).first_element_address(), None);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub trait AlignedView: sealed::Sealed {
    /// The address of the element at index `[0; R]` (a device address for device views), or
    /// `None` when the view has no elements.
    fn first_element_address(&self) -> Option<usize>;
}

macro_rules! aligned_view {
    ($view:ident) => {
        impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed for $view<'_, T, R, E, L, S> {}

        impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> AlignedView for $view<'_, T, R, E, L, S> {
            #[inline]
            fn first_element_address(&self) -> Option<usize> {
                (!self.is_empty()).then(|| self.data_handle().wrapping_add(self.offset()).addr())
            }
        }
    };
}

aligned_view!(Mdspan);
aligned_view!(MdspanMut);

impl<V, const ALIGN: usize> Aligned<V, ALIGN> {
    /// The alignment the type promises, in bytes.
    ///
    /// ```
    /// assert_eq!(dlspan::Aligned::<dlspan::HostMdspan<'static, f32, 1>, 32>::ALIGNMENT, 32);
    /// ```
    pub const ALIGNMENT: usize = {
        assert!(ALIGN.is_power_of_two(), "Aligned: ALIGN must be a power of two");
        ALIGN
    };

    /// The view, if its first element is aligned to `ALIGN` bytes (or it has no elements).
    ///
    /// # Errors
    ///
    /// [`DlpackError::Underaligned`] with the required and the found alignment.
    ///
    /// ```
    /// use dlspan::{Aligned, DlpackError, HostMdspan, HostMdspanMut};
    /// let mut buffer = dlspan::AlignedBuffer::<u8, 64>::zeroed(8);
    /// let view = HostMdspan::<u8, 1>::from_slice(&buffer[1..], [7])?;
    /// assert!(matches!(Aligned::<_, 4>::new(view), Err(DlpackError::Underaligned { required: 4, found: 1, .. })));
    /// let view = HostMdspanMut::<u8, 1>::from_slice(&mut buffer[4..], [4])?;
    /// assert!(Aligned::<_, 4>::new(view).is_ok());
    /// # Ok::<(), DlpackError>(())
    /// ```
    #[inline]
    pub fn new(view: V) -> Result<Self, DlpackError>
    where
        V: AlignedView,
    {
        match view.first_element_address() {
            Some(address) if address % Self::ALIGNMENT != 0 => {
                Err(DlpackError::Underaligned { address, required: ALIGN, found: 1 << address.trailing_zeros() })
            }
            _ => Ok(Self { view }),
        }
    }

    /// Wraps a view without checking.
    ///
    /// # Safety
    ///
    /// `view` has no elements, or its first element (index `[0; R]`) lies at an address that is a
    /// multiple of `ALIGN`: code may rely on it for aligned vector loads.
    ///
    /// ```
    /// use dlspan::{Aligned, HostMdspan};
    /// let data = [0u64; 4];
    /// let view = HostMdspan::<u64, 1>::from_slice(&data, [4]).unwrap();
    /// // SAFETY: a `u64` array is 8-byte aligned.
    /// let aligned = unsafe { Aligned::<_, 8>::new_unchecked(view) };
    /// assert_eq!(aligned.size(), 4);
    /// ```
    #[inline]
    pub const unsafe fn new_unchecked(view: V) -> Self {
        Self { view }
    }

    /// The view, without the alignment in its type.
    ///
    /// ```
    /// let buffer = dlspan::AlignedBuffer::<u8>::zeroed(4);
    /// let plain: dlspan::HostMdspan<'_, u8, 1> = buffer.view([4])?.into_inner();
    /// assert_eq!(plain.size(), 4);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn into_inner(self) -> V {
        self.view
    }
}

impl<V, const ALIGN: usize> Deref for Aligned<V, ALIGN> {
    type Target = V;

    #[inline]
    fn deref(&self) -> &V {
        &self.view
    }
}

impl<V: fmt::Debug, const ALIGN: usize> fmt::Debug for Aligned<V, ALIGN> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aligned").field("align", &ALIGN).field("view", &self.view).finish()
    }
}

impl<V: Index<I>, I, const ALIGN: usize> Index<I> for Aligned<V, ALIGN> {
    type Output = V::Output;

    #[inline]
    #[track_caller]
    fn index(&self, index: I) -> &V::Output {
        &self.view[index]
    }
}

impl<V: IndexMut<I>, I, const ALIGN: usize> IndexMut<I> for Aligned<V, ALIGN> {
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, index: I) -> &mut V::Output {
        &mut self.view[index]
    }
}

/// Aligned sub-views of both view types. `$mutable` spells the examples' `view` or `view_mut`.
macro_rules! aligned_subviews {
    ($view:ident, $mutable:literal, $mut_kw:literal) => {
        impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace, const ALIGN: usize>
            Aligned<$view<'a, T, R, E, L, S>, ALIGN>
        {
            /// A sub-view of a range per axis that keeps the alignment, if its first element is
            /// aligned (a run-time fact: it depends on the ranges' starts and the strides; rule
            /// [A3](crate::rules#a3)).
            ///
            /// # Errors
            ///
            /// [`DlpackError::SubviewOutOfBounds`] for a reversed or out-of-bounds range;
            /// [`DlpackError::Underaligned`] when the sub-view's first element is not aligned.
            ///
            /// ```
            #[doc = concat!("let ", $mut_kw, "buffer = dlspan::AlignedBuffer::<f32, 64>::zeroed(64);")]
            #[doc = concat!("let matrix = buffer.view", $mutable, "([4, 16])?;")]
            /// assert!(matrix.subview_aligned((2.., 0..8)).is_ok()); // row 2 starts 128 bytes in
            /// assert!(matrix.subview_aligned((.., 2..)).is_err()); // 8 bytes in
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            pub fn subview_aligned(
                &self,
                ranges: impl SubviewRanges<R>,
            ) -> Result<Aligned<Mdspan<'_, T, R, Dims<R>, L::Sub, S>, ALIGN>, DlpackError> {
                Aligned::new(self.view.as_shared().try_subview(ranges)?)
            }
        }
    };
}

aligned_subviews!(Mdspan, "", "");
aligned_subviews!(MdspanMut, "_mut", "mut ");

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, T, R, E, L, S> {
    /// Itself (the shared form both view types offer, for code generated for either).
    #[inline]
    fn as_shared(&self) -> Mdspan<'a, T, R, E, L, S> {
        *self
    }
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'_, T, R, E, L, S> {
    /// A shared view borrowing this one (the shared form both view types offer).
    #[inline]
    fn as_shared(&self) -> Mdspan<'_, T, R, E, L, S> {
        self.as_view()
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace, const ALIGN: usize>
    Aligned<MdspanMut<'a, T, R, E, L, S>, ALIGN>
{
    /// The mutable view for a shorter borrow, as a plain [`MdspanMut`]: writes, mutable iteration,
    /// mutable sub-views and element-wise updates.
    ///
    /// ```
    /// let mut buffer = dlspan::AlignedBuffer::<f64>::zeroed(6);
    /// let mut matrix = buffer.view_mut([2, 3])?;
    /// matrix.view_mut().iter_mut().for_each(|x| *x = 1.5);
    /// matrix.view_mut().subview_mut((1.., 2..))[[0, 0]] = 0.0;
    /// assert_eq!(&*buffer, &[1.5, 1.5, 1.5, 1.5, 1.5, 0.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn view_mut(&mut self) -> MdspanMut<'_, T, R, E, L, S> {
        self.view.reborrow()
    }

    /// The aligned mutable view for a shorter borrow.
    ///
    /// ```
    /// use dlspan::{Aligned, HostMdspanMut};
    /// fn fill(mut x: Aligned<HostMdspanMut<'_, u8, 1>, 64>) {
    ///     x.view_mut().as_mut_slice().unwrap().fill(7);
    /// }
    /// let mut buffer = dlspan::AlignedBuffer::<u8>::zeroed(3);
    /// let mut view = buffer.view_mut([3])?;
    /// fill(view.reborrow());
    /// fill(view.reborrow());
    /// assert_eq!(&*buffer, &[7, 7, 7]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn reborrow(&mut self) -> Aligned<MdspanMut<'_, T, R, E, L, S>, ALIGN> {
        Aligned { view: self.view.reborrow() }
    }

    /// A shared aligned view of the same elements, borrowing this one.
    ///
    /// ```
    /// let mut buffer = dlspan::AlignedBuffer::<u8>::zeroed(3);
    /// let view = buffer.view_mut([3])?;
    /// assert_eq!(view.as_aligned_view().size(), 3);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn as_aligned_view(&self) -> Aligned<Mdspan<'_, T, R, E, L, S>, ALIGN> {
        Aligned { view: self.view.as_view() }
    }

    /// Gives up mutability: a shared aligned view for the rest of `'a`.
    ///
    /// ```
    /// let mut buffer = dlspan::AlignedBuffer::<u8>::zeroed(3);
    /// let shared = buffer.view_mut([3])?.into_aligned_view();
    /// assert_eq!((shared[[0]], shared[[2]]), (0, 0));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn into_aligned_view(self) -> Aligned<Mdspan<'a, T, R, E, L, S>, ALIGN> {
        Aligned { view: self.view.into_view() }
    }
}

impl<'a, T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace, const ALIGN: usize>
    From<Aligned<MdspanMut<'a, T, R, E, L, S>, ALIGN>> for Aligned<Mdspan<'a, T, R, E, L, S>, ALIGN>
{
    fn from(view: Aligned<MdspanMut<'a, T, R, E, L, S>, ALIGN>) -> Self {
        view.into_aligned_view()
    }
}
