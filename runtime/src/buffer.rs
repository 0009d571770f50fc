//! [`AlignedBuffer`]: an owned host buffer whose first element is aligned to a chosen number of
//! bytes (64 by default: a cache line, the widest vector register, and what JAX needs to import a
//! tensor without copying it).
//!
//! `Vec<T>` only promises `align_of::<T>()`. Kernels with vector loads, and consumers that copy
//! under-aligned data, want more; an `AlignedBuffer` is a `Vec`-like owner with that promise in its
//! type. It dereferences to `[T]`, exports as a managed tensor without copying (it is a
//! [`TensorOwner`](crate::TensorOwner)), and backs the copies [`Mdspan::to_managed_tensor`](crate::Mdspan::to_managed_tensor) makes.
//!
//! ```
//! use dlspan::{AlignedBuffer, LayoutRight, ManagedTensor};
//!
//! let mut buffer = AlignedBuffer::<f32>::zeroed(6);
//! buffer[5] = 1.5;
//! assert_eq!(buffer.as_ptr().addr() % 64, 0);
//!
//! let tensor = ManagedTensor::from_owner(buffer, [2, 3])?; // no copy, one allocation
//! assert_eq!(tensor.dl_tensor().data.addr() % 64, 0);
//! assert_eq!(tensor.view::<f32, 2, LayoutRight>()?[[1, 2]], 1.5);
//! # Ok::<(), dlspan::DlpackError>(())
//! ```

use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::index::{self, Extents};
use crate::space::HostAccessible;
use crate::view::{Aligned, HostMdspan, HostMdspanMut, Mdspan, MdspanMut};
use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};
use std::alloc::{self, handle_alloc_error};

/// An owned, fixed-length buffer of `T` whose first element is aligned to
/// [`ALIGNMENT`](Self::ALIGNMENT) bytes: `ALIGN` (64 by default), or `align_of::<T>()` when that is
/// larger. `ALIGN` must be a power of two (a compile error otherwise).
///
/// Like `Box<[T]>`: it dereferences to `[T]`, drops its elements and frees its memory once, and is
/// `Send`/`Sync` exactly when `T` is. The elements never move while the buffer lives (moving the
/// buffer moves a pointer), so a managed tensor can borrow them: `AlignedBuffer<T, ALIGN>` is a
/// [`TensorOwner`](crate::TensorOwner) for every element type.
///
/// ```
/// use dlspan::AlignedBuffer;
///
/// let squares: AlignedBuffer<u32> = (0..8).map(|i| i * i).collect();
/// assert_eq!(&squares[..4], &[0, 1, 4, 9]);
///
/// let wide = AlignedBuffer::<u8, 4096>::filled(7, 3); // page-aligned
/// assert_eq!((wide.len(), wide.as_ptr().addr() % 4096), (3, 0));
/// assert_eq!(AlignedBuffer::<u8, 4096>::ALIGNMENT, 4096);
/// ```
pub struct AlignedBuffer<T, const ALIGN: usize = 64> {
    /// Invariants: aligned to `ALIGNMENT`; when `cap > 0` and `T` has a size, the start of a live
    /// allocation of `layout(cap)` owned by this buffer (dangling otherwise); its first `len`
    /// elements are initialised; `len <= cap`.
    ptr: NonNull<T>,
    len: usize,
    cap: usize,
    _owns: PhantomData<T>,
}

// SAFETY: the buffer owns its elements uniquely, like `Box<[T]>`: sending it sends the elements.
unsafe impl<T: Send, const ALIGN: usize> Send for AlignedBuffer<T, ALIGN> {}
// SAFETY: `&AlignedBuffer` gives only `&[T]`, like `&Box<[T]>`.
unsafe impl<T: Sync, const ALIGN: usize> Sync for AlignedBuffer<T, ALIGN> {}

impl<T, const ALIGN: usize> AlignedBuffer<T, ALIGN> {
    /// The alignment of the first element, in bytes: the larger of `ALIGN` and `align_of::<T>()`.
    ///
    /// ```
    /// use dlspan::{AlignedBuffer, dtype::F64x4};
    /// assert_eq!(AlignedBuffer::<f32>::ALIGNMENT, 64);
    /// assert_eq!(AlignedBuffer::<F64x4, 16>::ALIGNMENT, 32); // CUDA's double4 is 32-byte aligned
    /// ```
    pub const ALIGNMENT: usize = {
        assert!(ALIGN.is_power_of_two(), "AlignedBuffer: ALIGN must be a power of two");
        if ALIGN > align_of::<T>() { ALIGN } else { align_of::<T>() }
    };

    /// An empty buffer (no allocation).
    ///
    /// ```
    /// let empty = dlspan::AlignedBuffer::<f64>::new();
    /// assert!(empty.is_empty());
    /// assert_eq!(empty.as_ptr().addr() % 64, 0);
    /// ```
    pub const fn new() -> Self {
        Self { ptr: Self::dangling(), len: 0, cap: 0, _owns: PhantomData }
    }

    /// `len` elements, all zero bytes (from the allocator's zeroed memory: no pass over it).
    ///
    /// # Panics
    ///
    /// If `len` elements of `T` exceed `isize::MAX` bytes; allocation failure aborts, as for `Vec`.
    /// [`try_zeroed`](Self::try_zeroed) returns an error for both instead.
    ///
    /// ```
    /// let b = dlspan::AlignedBuffer::<i16>::zeroed(4);
    /// assert_eq!(&*b, &[0, 0, 0, 0]);
    /// ```
    #[track_caller]
    pub fn zeroed(len: usize) -> Self
    where
        T: DlElement,
    {
        match Self::try_zeroed(len) {
            Ok(buffer) => buffer,
            Err(_) => Self::allocation_failed(len),
        }
    }

    /// `len` zeroed elements, or why they could not be allocated.
    ///
    /// # Errors
    ///
    /// [`DlpackError::AllocationFailed`] when the size overflows `isize` or the allocator fails.
    ///
    /// ```
    /// use dlspan::{AlignedBuffer, DlpackError};
    /// assert_eq!(AlignedBuffer::<u8>::try_zeroed(3)?.len(), 3);
    /// let huge = AlignedBuffer::<f64>::try_zeroed(usize::MAX / 4);
    /// assert!(matches!(huge, Err(DlpackError::AllocationFailed { element_size: 8, alignment: 64, .. })));
    /// # Ok::<(), DlpackError>(())
    /// ```
    pub fn try_zeroed(len: usize) -> Result<Self, DlpackError>
    where
        T: DlElement,
    {
        let ptr = Self::allocate(len, true)?;
        // The zeroed allocation holds `len` valid elements: all-zero bytes are a valid value of every
        // DLPack data type (integer and float zero, `false`, FP8/FP6/FP4 codes 0), hence of every
        // `DlElement` (its safety contract: the bytes of a valid DLPack element are a valid `T`).
        Ok(Self { ptr, len, cap: len, _owns: PhantomData })
    }

    /// `len` clones of `value`.
    ///
    /// # Panics
    ///
    /// As [`zeroed`](Self::zeroed); a panic of `T::clone` drops the clones made so far.
    ///
    /// ```
    /// let b = dlspan::AlignedBuffer::<f32, 32>::filled(0.5, 3);
    /// assert_eq!(&*b, &[0.5; 3]);
    /// assert_eq!(b.as_ptr().addr() % 32, 0);
    /// ```
    #[track_caller]
    pub fn filled(value: T, len: usize) -> Self
    where
        T: Clone,
    {
        let mut buffer = Self::with_capacity(len);
        if len > 0 {
            for _ in 1..len {
                // SAFETY: at most `len - 1` elements were written into room for `len`.
                unsafe { buffer.push_within_capacity(value.clone()) };
            }
            // SAFETY: `len - 1` elements were written into room for `len`.
            unsafe { buffer.push_within_capacity(value) };
        }
        buffer
    }

    /// A copy of `values`.
    ///
    /// # Panics
    ///
    /// Allocation failure aborts, as for `Vec`; a panic of `T::clone` drops the clones made so far.
    ///
    /// ```
    /// let b = dlspan::AlignedBuffer::<u16>::from_slice(&[1, 2, 3]);
    /// assert_eq!((&*b, b.as_ptr().addr() % 64), (&[1u16, 2, 3][..], 0));
    /// ```
    #[track_caller]
    pub fn from_slice(values: &[T]) -> Self
    where
        T: Clone,
    {
        let mut buffer = Self::with_capacity(values.len());
        for value in values {
            // SAFETY: one element per value, into room for all of them.
            unsafe { buffer.push_within_capacity(value.clone()) };
        }
        buffer
    }

    /// `len` elements, element `i` being `f(i)`.
    ///
    /// # Panics
    ///
    /// As [`zeroed`](Self::zeroed); a panic of `f` drops the elements made so far.
    ///
    /// ```
    /// let b = dlspan::AlignedBuffer::<u64>::from_fn(4, |i| 10 * i as u64);
    /// assert_eq!(&*b, &[0, 10, 20, 30]);
    /// ```
    #[track_caller]
    pub fn from_fn(len: usize, f: impl FnMut(usize) -> T) -> Self {
        match Self::try_from_fn(len, f) {
            Ok(buffer) => buffer,
            Err(_) => Self::allocation_failed(len),
        }
    }

    /// `len` elements, element `i` being `f(i)`, or why they could not be allocated (before `f`
    /// is called).
    ///
    /// # Errors
    ///
    /// [`DlpackError::AllocationFailed`] when the size overflows `isize` or the allocator fails.
    ///
    /// # Panics
    ///
    /// A panic of `f` drops the elements made so far.
    ///
    /// ```
    /// use dlspan::{AlignedBuffer, DlpackError};
    /// assert_eq!(&*AlignedBuffer::<u32>::try_from_fn(3, |i| i as u32 + 1)?, &[1, 2, 3]);
    /// let huge = AlignedBuffer::<[f32; 4]>::try_from_fn(usize::MAX / 8, |_| [0.0; 4]);
    /// assert!(matches!(huge, Err(DlpackError::AllocationFailed { element_size: 16, .. })));
    /// # Ok::<(), DlpackError>(())
    /// ```
    pub fn try_from_fn(len: usize, mut f: impl FnMut(usize) -> T) -> Result<Self, DlpackError> {
        let ptr = Self::allocate(len, false)?;
        let mut buffer = Self { ptr, len: 0, cap: len, _owns: PhantomData };
        for i in 0..len {
            // SAFETY: one element per index, into room for `len`.
            unsafe { buffer.push_within_capacity(f(i)) };
        }
        Ok(buffer)
    }

    /// The number of elements (also `<[T]>::len` through `Deref`).
    ///
    /// ```
    /// assert_eq!(dlspan::AlignedBuffer::<u8>::zeroed(5).len(), 5);
    /// ```
    #[inline]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    ///
    /// ```
    /// assert!(dlspan::AlignedBuffer::<u8>::zeroed(0).is_empty());
    /// ```
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements as a slice.
    ///
    /// ```
    /// let b = dlspan::AlignedBuffer::<i8>::from_slice(&[1, -1]);
    /// assert_eq!(b.as_slice(), &[1, -1]);
    /// ```
    #[inline]
    pub const fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` is aligned and non-null, and the first `len` elements are initialised and
        // owned by this buffer (struct invariant); the borrow of `self` keeps them alive.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The elements as a mutable slice.
    ///
    /// ```
    /// let mut b = dlspan::AlignedBuffer::<i8>::zeroed(2);
    /// b.as_mut_slice()[1] = 4;
    /// assert_eq!(&*b, &[0, 4]);
    /// ```
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the access unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The first element's pointer, as the buffer owns it (for an export handing the elements to a
    /// managed tensor, which must not derive it from a borrow of the buffer).
    #[inline]
    pub(crate) fn as_non_null(&mut self) -> NonNull<T> {
        self.ptr
    }

    /// A row-major view of the elements, whose type states the buffer's alignment.
    ///
    /// # Errors
    ///
    /// [`DlpackError::LengthMismatch`] when the buffer holds another number of elements than
    /// `extents`; [`DlpackError::SpanOverflow`].
    ///
    /// ```
    /// let buffer = dlspan::AlignedBuffer::<u16>::from_fn(6, |i| i as u16);
    /// let matrix = buffer.view([2, 3])?;
    /// assert_eq!((matrix[[1, 2]], matrix.data_handle().addr() % 64), (5, 0));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn view<const R: usize>(
        &self,
        extents: [usize; R],
    ) -> Result<Aligned<HostMdspan<'_, T, R>, ALIGN>, DlpackError> {
        let view = HostMdspan::from_slice(self, extents)?;
        // SAFETY: the view's first element is the buffer's, aligned to `ALIGNMENT >= ALIGN`.
        Ok(unsafe { Aligned::new_unchecked(view) })
    }

    /// A mutable row-major view of the elements, whose type states the buffer's alignment.
    ///
    /// # Errors
    ///
    /// As [`view`](Self::view).
    ///
    /// ```
    /// let mut buffer = dlspan::AlignedBuffer::<u16>::zeroed(6);
    /// buffer.view_mut([3, 2])?[[2, 1]] = 9;
    /// assert_eq!(buffer[5], 9);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn view_mut<const R: usize>(
        &mut self,
        extents: [usize; R],
    ) -> Result<Aligned<HostMdspanMut<'_, T, R>, ALIGN>, DlpackError> {
        let view = HostMdspanMut::from_slice(self, extents)?;
        // SAFETY: the view's first element is the buffer's, aligned to `ALIGNMENT >= ALIGN`.
        Ok(unsafe { Aligned::new_unchecked(view) })
    }

    /// A buffer with room for `cap` elements and none written yet.
    #[track_caller]
    fn with_capacity(cap: usize) -> Self {
        match Self::allocate(cap, false) {
            Ok(ptr) => Self { ptr, len: 0, cap, _owns: PhantomData },
            Err(_) => Self::allocation_failed(cap),
        }
    }

    /// Appends `value`.
    ///
    /// # Safety
    ///
    /// `len < cap`, or `T` has no size.
    #[inline]
    unsafe fn push_within_capacity(&mut self, value: T) {
        debug_assert!(self.len < self.cap || size_of::<T>() == 0);
        // SAFETY: `len < cap` (caller), so the slot is inside the allocation (or `T` has no size).
        let slot = unsafe { self.ptr.add(self.len) };
        // SAFETY: the slot is aligned and not yet initialised; `len` grows only after the write.
        unsafe { slot.write(value) };
        self.len += 1;
    }

    /// Appends `value`, doubling the allocation when full (the allocator keeps the alignment).
    fn push(&mut self, value: T) {
        if self.len == self.cap && size_of::<T>() != 0 {
            self.grow();
        }
        // SAFETY: room was made above.
        unsafe { self.push_within_capacity(value) };
    }

    #[cold]
    fn grow(&mut self) {
        let cap = self.cap.checked_mul(2).map_or(usize::MAX, |c| c.max(4));
        let Some(new) = Self::layout(cap) else { Self::allocation_failed(cap) };
        let raw = if self.cap == 0 {
            // SAFETY: `T` has a size and `cap >= 4`, so the layout's size is nonzero.
            unsafe { alloc::alloc(new) }
        } else {
            // The current capacity was allocated, so its layout is valid (invariant).
            let Some(old) = Self::layout(self.cap) else { Self::allocation_failed(self.cap) };
            // SAFETY: `ptr` was allocated by the global allocator with `old` (invariant); the new
            // size is nonzero and, rounded up to the alignment, fits isize (`layout` checked it).
            unsafe { alloc::realloc(self.ptr.as_ptr().cast(), old, new.size()) }
        };
        match NonNull::new(raw) {
            Some(ptr) => {
                self.ptr = ptr.cast();
                self.cap = cap;
            }
            None => handle_alloc_error(new),
        }
    }

    /// The layout of `cap` elements, or `None` when its size overflows `isize`.
    fn layout(cap: usize) -> Option<Layout> {
        let size = cap.checked_mul(size_of::<T>())?;
        Layout::from_size_align(size, Self::ALIGNMENT).ok()
    }

    /// An aligned, dangling pointer (for no allocation).
    const fn dangling() -> NonNull<T> {
        // SAFETY: `ALIGNMENT` is a nonzero power of two, so the address is not null.
        unsafe { NonNull::new_unchecked(ptr::without_provenance_mut(Self::ALIGNMENT)) }
    }

    /// Memory for `cap` elements (zeroed if asked); dangling when it needs no bytes.
    fn allocate(cap: usize, zeroed: bool) -> Result<NonNull<T>, DlpackError> {
        let failed =
            || DlpackError::AllocationFailed { len: cap, element_size: size_of::<T>(), alignment: Self::ALIGNMENT };
        let layout = Self::layout(cap).ok_or_else(failed)?;
        if layout.size() == 0 {
            return Ok(Self::dangling());
        }
        let raw = if zeroed {
            // SAFETY: the layout has a nonzero size.
            unsafe { alloc::alloc_zeroed(layout) }
        } else {
            // SAFETY: as above.
            unsafe { alloc::alloc(layout) }
        };
        NonNull::new(raw).map(NonNull::cast).ok_or_else(failed)
    }

    #[cold]
    #[track_caller]
    fn allocation_failed(cap: usize) -> ! {
        match Self::layout(cap) {
            Some(layout) => handle_alloc_error(layout),
            None => panic!("AlignedBuffer: {cap} elements of {} bytes exceed isize::MAX bytes", size_of::<T>()),
        }
    }
}

impl<T, const ALIGN: usize> Drop for AlignedBuffer<T, ALIGN> {
    fn drop(&mut self) {
        /// Frees the allocation when dropped, so a panicking element `Drop` does not leak it.
        struct Free(Option<(NonNull<u8>, Layout)>);
        impl Drop for Free {
            fn drop(&mut self) {
                if let Some((ptr, layout)) = self.0 {
                    // SAFETY: the buffer's live allocation, made with this layout, freed once.
                    unsafe { alloc::dealloc(ptr.as_ptr(), layout) };
                }
            }
        }
        let allocation = Self::layout(self.cap).filter(|l| l.size() > 0).map(|l| (self.ptr.cast::<u8>(), l));
        let _free = Free(allocation);
        // SAFETY: the first `len` elements are initialised and owned; they are dropped once, here
        // (the slice's drop glue drops the rest even if one panics; then `_free` frees the memory).
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len)) };
    }
}

impl<T, const ALIGN: usize> Deref for AlignedBuffer<T, ALIGN> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T, const ALIGN: usize> DerefMut for AlignedBuffer<T, ALIGN> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T, const ALIGN: usize> AsRef<[T]> for AlignedBuffer<T, ALIGN> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T, const ALIGN: usize> AsMut<[T]> for AlignedBuffer<T, ALIGN> {
    fn as_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T, const ALIGN: usize> Default for AlignedBuffer<T, ALIGN> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone, const ALIGN: usize> Clone for AlignedBuffer<T, ALIGN> {
    fn clone(&self) -> Self {
        Self::from_slice(self)
    }
}

impl<T: fmt::Debug, const ALIGN: usize> fmt::Debug for AlignedBuffer<T, ALIGN> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl<T: PartialEq, const ALIGN: usize, const OTHER: usize> PartialEq<AlignedBuffer<T, OTHER>>
    for AlignedBuffer<T, ALIGN>
{
    fn eq(&self, other: &AlignedBuffer<T, OTHER>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Eq, const ALIGN: usize> Eq for AlignedBuffer<T, ALIGN> {}

impl<T: Clone, const ALIGN: usize> From<&[T]> for AlignedBuffer<T, ALIGN> {
    fn from(values: &[T]) -> Self {
        Self::from_slice(values)
    }
}

impl<T, const ALIGN: usize> FromIterator<T> for AlignedBuffer<T, ALIGN> {
    /// Collects into one allocation when the iterator knows its length (as views' iterators do),
    /// growing it otherwise.
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut buffer = Self::with_capacity(iter.size_hint().0);
        for value in iter {
            buffer.push(value);
        }
        buffer
    }
}

impl<'b, T, const ALIGN: usize> IntoIterator for &'b AlignedBuffer<T, ALIGN> {
    type Item = &'b T;
    type IntoIter = core::slice::Iter<'b, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<'b, T, const ALIGN: usize> IntoIterator for &'b mut AlignedBuffer<T, ALIGN> {
    type Item = &'b mut T;
    type IntoIter = core::slice::IterMut<'b, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_mut_slice().iter_mut()
    }
}

/// Copies of host views into aligned buffers: here rather than with the views, since a buffer is
/// the higher of the two (it hands out views of itself).
impl<T, const R: usize, E: Extents<R>, L: index::Layout, S: HostAccessible> Mdspan<'_, T, R, E, L, S> {
    /// The elements in logical order, copied into an [`AlignedBuffer`] whose first element is
    /// aligned to `ALIGN` bytes (one allocation).
    ///
    /// ```
    /// let data = [1, 2, 3, 4];
    /// let m = dlspan::HostMdspan::<i32, 2, dlspan::LayoutLeft>::from_slice(&data, [2, 2]).unwrap();
    /// let copy = m.to_aligned_buffer::<64>();
    /// assert_eq!((&*copy, copy.as_ptr().addr() % 64), (&[1, 3, 2, 4][..], 0));
    /// ```
    pub fn to_aligned_buffer<const ALIGN: usize>(&self) -> AlignedBuffer<T, ALIGN>
    where
        T: Clone,
    {
        if self.mapping().is_row_major()
            && let Some(slice) = self.as_slice()
        {
            return AlignedBuffer::from_slice(slice);
        }
        self.iter().cloned().collect()
    }
}

impl<T, const R: usize, E: Extents<R>, L: index::Layout, S: HostAccessible> MdspanMut<'_, T, R, E, L, S> {
    /// The elements in logical order, copied into an [`AlignedBuffer`]; see
    /// [`Mdspan::to_aligned_buffer`].
    ///
    /// ```
    /// let mut data = [1u8, 2];
    /// let m = dlspan::HostMdspanMut::<u8, 1>::from_slice(&mut data, [2]).unwrap();
    /// assert_eq!(&*m.to_aligned_buffer::<16>(), &[1, 2]);
    /// ```
    pub fn to_aligned_buffer<const ALIGN: usize>(&self) -> AlignedBuffer<T, ALIGN>
    where
        T: Clone,
    {
        self.as_view().to_aligned_buffer()
    }
}
