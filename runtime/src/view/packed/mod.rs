//! Packed sub-byte views: [`PackedMdspan`] (shared) and [`PackedMdspanMut`] (mutable), over data
//! in DLPack's default sub-byte storage, values of `bits < 8` bits side by side, low bits first
//! (two FP4 values per byte; FP6 values straddle bytes).
//!
//! Element access decodes and encodes through the one-value storage types ([`Float4E2m1fn`],
//! [`Float6E2m3fn`], ...): values are read and written by value, since no reference can point
//! at half a byte. Strides count elements, as for every DLPack dtype; the element at index `i` lies
//! `8·byte_offset + Σ i_k·s_k·bits` bits after `data`. See [rules P1–P4](crate::rules#p).
//!
//! Host element access is in `access`, the bit addressing it stands on (the reads and writes of
//! values inside bytes) in `bits`; the views'
//! DLPack doors are in the crate's DLPack module, and their copies into managed tensors in `owned`.
//!
//! [`Float4E2m1fn`]: crate::dtype::Float4E2m1fn
//! [`Float6E2m3fn`]: crate::dtype::Float6E2m3fn

mod access;
mod bits;

pub use access::PackedIter;

use crate::dtype::{DlElement, PlainBits, is_packable, packed_bytes};
use crate::error::DlpackError;
use crate::ffi::DLDevice;
use crate::index::{Dims, Extents, Layout, LayoutRight, Mapping};
use crate::space::{Device, Host, MemorySpace, OrderEvent};
use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// A shared view of packed sub-byte values of `T` (a one-value storage type such as
/// [`Float4E2m1fn`](crate::dtype::Float4E2m1fn)): rank `R`, extents `E`, layout `L`, memory space
/// `S`, as [`Mdspan`](crate::Mdspan). DLPack describes such data as `(code, bits, 1)` without
/// `IS_SUBBYTE_TYPE_PADDED`, for example `(17, 4, 1)` for FP4.
///
/// Values are read by value ([`get`](Self::get), [`iter`](Self::iter), [`to_vec`](Self::to_vec)).
/// A packed view does not split into sub-views: a sub-view could start inside a byte, which a
/// `DLTensor` cannot describe, and two mutable views sharing a byte could race.
///
/// ```
/// use dlspan::{PackedMdspan, ToDlpackTensor};
/// use dlspan::dtype::Float4E2m1fn;
/// let bytes = [0x21u8, 0x07]; // 0.5, 1.0 | 6.0: three FP4 values, low nibble first
/// let view = PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
/// assert_eq!(view.to_vec().iter().map(|x| x.to_f32()).collect::<Vec<_>>(), [0.5, 1.0, 6.0]);
/// let exported = view.to_dlpack_tensor()?;
/// assert_eq!((exported.get().dtype.bits, exported.shape()), (4, &[3i64]));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub struct PackedMdspan<'a, T, const R: usize, E: Extents<R> = Dims<R>, L: Layout = LayoutRight, S: MemorySpace = Host>
{
    /// Invariants: `T` is packable (`is_packable`, a `PlainBits` byte); element offset `k` of
    /// every index lies at bits `[start_bit + k·bits, start_bit + (k + 1)·bits)` after `base`, in
    /// bytes valid for reads for `'a` (in `S`'s memory) and written by no one else during `'a`;
    /// those bytes fit `isize` without wrapping; index 0 (offset `map.offset()`) starts at a whole
    /// byte.
    base: NonNull<u8>,
    start_bit: usize,
    map: Mapping<R, E, L>,
    origin: S::Origin,
    _borrow: PhantomData<&'a T>,
}

/// A mutable view of packed sub-byte values: the unique twin of [`PackedMdspan`], writing by value
/// ([`set`](Self::set), [`fill`](Self::fill), [`update`](Self::update)). A write replaces the
/// value's bits and keeps the other bits of its bytes.
///
/// ```
/// use dlspan::PackedMdspanMut;
/// use dlspan::dtype::Float6E2m3fn;
/// let mut bytes = [0u8; 3]; // four FP6 values: 24 bits
/// let mut view = PackedMdspanMut::<Float6E2m3fn, 2>::from_bytes(&mut bytes, [2, 2])?;
/// view.set([1, 0], Float6E2m3fn::from_f32(-7.5));
/// assert_eq!(view.get([1, 0]).map(|x| x.to_f32()), Some(-7.5));
/// assert_eq!(bytes, [0x00, 0xF0, 0x03]); // bits 12..18
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub struct PackedMdspanMut<
    'a,
    T,
    const R: usize,
    E: Extents<R> = Dims<R>,
    L: Layout = LayoutRight,
    S: MemorySpace = Host,
> {
    /// Invariants: those of [`PackedMdspan`], with the bytes valid for writes and reached through
    /// nothing else during `'a`, and a unique mapping.
    base: NonNull<u8>,
    start_bit: usize,
    map: Mapping<R, E, L>,
    origin: S::Origin,
    _borrow: PhantomData<&'a mut T>,
}

/// A shared packed view of host memory with dynamic extents.
///
/// ```
/// use dlspan::{HostPackedMdspan, LayoutLeft};
/// use dlspan::dtype::Float4E2m1fn;
/// let view = HostPackedMdspan::<Float4E2m1fn, 2, LayoutLeft>::from_bytes(&[0x21, 0x43], [2, 2])?;
/// assert_eq!(view.strides(), [1, 2]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type HostPackedMdspan<'a, T, const R: usize, L = LayoutRight> = PackedMdspan<'a, T, R, Dims<R>, L, Host>;
/// A mutable packed view of host memory with dynamic extents.
///
/// ```
/// use dlspan::{HostPackedMdspanMut, LayoutStrideRelaxed};
/// use dlspan::dtype::Float4E2m1fn;
/// let mut bytes = [0u8; 2];
/// let view = HostPackedMdspanMut::<Float4E2m1fn, 1, LayoutStrideRelaxed>::from_bytes_strided(&mut bytes, [2], [1])?;
/// assert_eq!(view.size(), 2);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type HostPackedMdspanMut<'a, T, const R: usize, L = LayoutRight> = PackedMdspanMut<'a, T, R, Dims<R>, L, Host>;
/// A shared packed view of CUDA device memory with dynamic extents; no host access.
///
/// ```
/// use dlspan::{DevicePackedMdspan, ffi::*};
/// use dlspan::dtype::Float4E2m1fn;
/// let (mut shape, mut strides) = ([3i64], [1i64]);
/// let tensor = DLTensor {
///     data: 0x7f00_0000_0000 as *mut core::ffi::c_void, // a device address, never read here
///     device: DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 1 },
///     ndim: 1,
///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1),
///     shape: shape.as_mut_ptr(),
///     strides: strides.as_mut_ptr(),
///     byte_offset: 0,
/// };
/// // SAFETY: a device view is never read on the host; the metadata arrays are alive.
/// let view = unsafe { DevicePackedMdspan::<Float4E2m1fn, 1>::from_dltensor(&tensor) }?;
/// assert_eq!((view.byte_len(), view.ordinal()), (2, 1));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type DevicePackedMdspan<'a, T, const R: usize, L = LayoutRight> = PackedMdspan<'a, T, R, Dims<R>, L, Device>;
/// A mutable packed view of CUDA device memory with dynamic extents; no host access.
///
/// ```
/// use dlspan::{DevicePackedMdspanMut, ToDlpackTensor, ffi::*};
/// use dlspan::dtype::Float6E2m3fn;
/// let (mut shape, mut strides) = ([4i64], [1i64]);
/// let tensor = DLTensor {
///     data: 0x7f00_0000_0000 as *mut core::ffi::c_void, // a device address, never touched here
///     device: DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 },
///     ndim: 1,
///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat6_e2m3fn, 6, 1),
///     shape: shape.as_mut_ptr(),
///     strides: strides.as_mut_ptr(),
///     byte_offset: 0,
/// };
/// // SAFETY: a device view is never read on the host; the metadata arrays are alive.
/// let view = unsafe { DevicePackedMdspanMut::<Float6E2m3fn, 1>::from_dltensor(&tensor) }?;
/// assert_eq!(view.to_dlpack_tensor()?.get().device.device_type, DLDeviceType::kDLCUDA);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub type DevicePackedMdspanMut<'a, T, const R: usize, L = LayoutRight> = PackedMdspanMut<'a, T, R, Dims<R>, L, Device>;

// SAFETY: a shared packed view is a `&'a [u8]` in disguise: other threads only read through it.
unsafe impl<T: Sync, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Send
    for PackedMdspan<'_, T, R, E, L, S>
{
}
// SAFETY: as for `Send`.
unsafe impl<T: Sync, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Sync
    for PackedMdspan<'_, T, R, E, L, S>
{
}
// SAFETY: a mutable packed view is a `&'a mut [u8]` in disguise (it owns the bytes its elements
// touch, partly used ones included): moving it moves the unique access.
unsafe impl<T: Send, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Send
    for PackedMdspanMut<'_, T, R, E, L, S>
{
}
// SAFETY: `&PackedMdspanMut` only reads.
unsafe impl<T: Sync, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Sync
    for PackedMdspanMut<'_, T, R, E, L, S>
{
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Clone for PackedMdspan<'_, T, R, E, L, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Copy for PackedMdspan<'_, T, R, E, L, S> {}

/// Checks at compile time that `T` can be packed; every constructor calls it.
pub(crate) const fn assert_packable<T: DlElement>() {
    assert!(
        is_packable::<T>(),
        "packed views hold one-value storage types of sub-byte dtypes (bits < 8, one lane, one byte)"
    );
}

/// The queries both packed views share.
macro_rules! packed_queries {
    ($view:ident) => {
        impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
            $view<'a, T, R, E, L, S>
        {
            /// Assembles a view from validated parts.
            ///
            /// # Safety
            ///
            /// The parts satisfy the invariants documented on the struct for `'a`.
            #[inline]
            pub(crate) const unsafe fn from_validated(
                base: NonNull<u8>,
                start_bit: usize,
                map: Mapping<R, E, L>,
                origin: S::Origin,
            ) -> Self {
                Self { base, start_bit, map, origin, _borrow: PhantomData }
            }

            /// The origin: the ordinal, and the ordering event of a cudarc allocation.
            #[inline]
            pub(crate) fn origin(&self) -> S::Origin {
                self.origin
            }

            /// The view, its device memory ordered by `order` (see [`MemorySpace::with_order`]).
            #[inline]
            pub(crate) fn with_order(mut self, order: OrderEvent) -> Self {
                self.origin = S::with_order(self.origin, order);
                self
            }

            /// The extents.
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 2>::from_bytes(&mut bytes, [2, 2])?;")]
            /// assert_eq!(view.extents(), [2, 2]);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn extents(&self) -> [usize; R] {
                self.map.extents()
            }

            /// The strides, in elements.
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 2>::from_bytes(&mut bytes, [2, 2])?;")]
            /// assert_eq!(view.strides(), [2, 1]);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn strides(&self) -> [isize; R] {
                self.map.strides()
            }

            /// The mapping (extents, strides in elements, element offset).
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 2>::from_bytes(&mut bytes, [2, 2])?;")]
            /// assert_eq!(view.mapping().required_span_size(), 4);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn mapping(&self) -> &Mapping<R, E, L> {
                &self.map
            }

            /// The number of values.
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;")]
            /// assert_eq!(view.size(), 3);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn size(&self) -> usize {
                self.map.size()
            }

            /// Whether the view has no values.
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;")]
            /// assert!(!view.is_empty());
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.map.size() == 0
            }

            /// The bits of one value (`T`'s dtype bits: 4 for FP4, 6 for FP6).
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;")]
            /// assert_eq!(view.element_bits(), 4);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn element_bits(&self) -> usize {
                T::DTYPE.bits as usize
            }

            /// The bytes from [`data_handle`](Self::data_handle) to the end of the last value
            /// (`ceil(size · bits / 8)` for a compact view); 0 without values.
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;")]
            /// assert_eq!(view.byte_len(), 2);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn byte_len(&self) -> usize {
                let span = self.map.required_span_size() as u128;
                // Validated: the byte count fits isize; its bits are counted in 128 bits.
                if span == 0 { 0 } else { (self.start_bit as u128 + span * self.element_bits() as u128).div_ceil(8) as usize }
            }

            /// The address the values are counted from (the first byte for a compact view). A
            /// device address for device views.
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            /// # let address = bytes.as_ptr() as usize;
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;")]
            /// assert_eq!(view.data_handle() as usize, address);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn data_handle(&self) -> *const u8 {
                self.base.as_ptr()
            }

            /// The bytes from [`data_handle`](Self::data_handle) to the one where index 0 starts
            /// (always a whole byte).
            #[inline]
            pub(crate) fn index_zero_byte(&self) -> usize {
                // Validated: the byte count fits isize; its bits are counted in 128 bits.
                ((self.start_bit as u128 + self.map.offset() as u128 * self.element_bits() as u128) / 8) as usize
            }

            /// The bit of [`data_handle`](Self::data_handle)'s byte where element offset 0 starts (0
            /// unless a relaxed view's offset is not a whole number of bytes).
            #[inline]
            pub(crate) fn start_bit(&self) -> usize {
                self.start_bit
            }

            /// The memory space's record of the device (the CUDA ordinal of device views).
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;")]
            /// assert_eq!(view.ordinal(), ());
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn ordinal(&self) -> S::Ordinal {
                S::ordinal_of(self.origin)
            }

            /// The device the view exports as.
            ///
            /// ```
            /// # let mut bytes = [0u8; 2];
            #[doc = concat!("# let view = dlspan::", stringify!($view), "::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;")]
            /// assert_eq!(view.device().device_type, dlspan::ffi::DLDeviceType::kDLCPU);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn device(&self) -> DLDevice {
                S::device(self.ordinal())
            }
        }

        impl<T: DlElement + PlainBits + fmt::Debug, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
            fmt::Debug for $view<'_, T, R, E, L, S>
        {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($view))
                    .field("dtype", &format_args!("{}", T::DTYPE))
                    .field("extents", &self.extents())
                    .field("strides", &self.strides())
                    .field("device", &self.device())
                    .finish_non_exhaustive()
            }
        }
    };
}

packed_queries!(PackedMdspan);
packed_queries!(PackedMdspanMut);

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout> PackedMdspan<'a, T, R, E, L, Host> {
    /// A view of packed values over bytes, compact (row-major, or column-major for
    /// [`LayoutLeft`](crate::LayoutLeft)): exactly `ceil(size · bits / 8)` bytes.
    ///
    /// # Errors
    ///
    /// [`DlpackError::PackedByteLength`] when the byte count differs;
    /// [`DlpackError::ExtentMismatch`], [`DlpackError::SpanOverflow`].
    ///
    /// ```
    /// use dlspan::{DlpackError, PackedMdspan};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let bytes = [0x21u8];
    /// assert!(matches!(
    ///     PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3]),
    ///     Err(DlpackError::PackedByteLength { required: 2, found: 1 })
    /// ));
    /// ```
    #[inline]
    pub fn from_bytes(bytes: &'a [u8], extents: [usize; R]) -> Result<Self, DlpackError> {
        const { assert_packable::<T>() };
        let map = compact_mapping::<T, R, E, L>(bytes.len(), extents)?;
        // SAFETY: the slice's bytes hold the compact values, borrowed shared for `'a`.
        Ok(unsafe { Self::from_validated(NonNull::from(bytes).cast(), 0, map, ()) })
    }

    /// A view of packed values over bytes with explicit strides (in elements, by the layout's
    /// rules), the value at index 0 in the low bits of the first byte; the bytes hold at least every
    /// value the strides reach.
    ///
    /// # Errors
    ///
    /// The layout's rules (as [`Mapping::from_strides`]); [`DlpackError::PackedByteLength`] when
    /// the bytes are too few.
    ///
    /// ```
    /// use dlspan::{LayoutStride, HostPackedMdspan};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let bytes = [0x21u8, 0x43]; // 0.5, 1.0, 1.5, 2.0
    /// let every_other = HostPackedMdspan::<Float4E2m1fn, 1, LayoutStride>::from_bytes_strided(&bytes, [2], [2])?;
    /// assert_eq!(every_other.to_vec().iter().map(|x| x.to_f32()).collect::<Vec<_>>(), [0.5, 1.5]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn from_bytes_strided(bytes: &'a [u8], extents: [usize; R], strides: [isize; R]) -> Result<Self, DlpackError> {
        const { assert_packable::<T>() };
        let map = strided_mapping::<T, R, E, L>(bytes.len(), extents, strides, false)?;
        // SAFETY: the slice's bytes hold every value the mapping reaches, borrowed shared for `'a`.
        Ok(unsafe { Self::from_validated(NonNull::from(bytes).cast(), 0, map, ()) })
    }
}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout> PackedMdspanMut<'a, T, R, E, L, Host> {
    /// A mutable view of packed values over bytes, compact; see [`PackedMdspan::from_bytes`].
    ///
    /// # Errors
    ///
    /// As [`PackedMdspan::from_bytes`].
    ///
    /// ```
    /// use dlspan::PackedMdspanMut;
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut bytes = [0u8; 2];
    /// let mut view = PackedMdspanMut::<Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// view.fill(Float4E2m1fn::from_f32(-1.0));
    /// assert_eq!(bytes, [0xAA, 0x0A]); // the high nibble of byte 1 is not a value: untouched
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn from_bytes(bytes: &'a mut [u8], extents: [usize; R]) -> Result<Self, DlpackError> {
        const { assert_packable::<T>() };
        let map = compact_mapping::<T, R, E, L>(bytes.len(), extents)?;
        // SAFETY: the slice's bytes hold the compact values, borrowed uniquely for `'a`; compact
        // mappings are unique.
        Ok(unsafe { Self::from_validated(NonNull::from(bytes).cast(), 0, map, ()) })
    }

    /// A mutable view of packed values over bytes with explicit strides; see
    /// [`PackedMdspan::from_bytes_strided`].
    ///
    /// # Errors
    ///
    /// As [`PackedMdspan::from_bytes_strided`]; [`DlpackError::OverlappingStrides`] when two
    /// indices share a value.
    ///
    /// ```
    /// use dlspan::{LayoutStride, HostPackedMdspanMut};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut bytes = [0u8; 2];
    /// let mut odd = HostPackedMdspanMut::<Float4E2m1fn, 1, LayoutStride>::from_bytes_strided(&mut bytes, [2], [2])?;
    /// odd.fill(Float4E2m1fn::from_f32(6.0));
    /// assert_eq!(bytes, [0x07, 0x07]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn from_bytes_strided(
        bytes: &'a mut [u8],
        extents: [usize; R],
        strides: [isize; R],
    ) -> Result<Self, DlpackError> {
        const { assert_packable::<T>() };
        let map = strided_mapping::<T, R, E, L>(bytes.len(), extents, strides, true)?;
        // SAFETY: the slice's bytes hold every value the unique mapping reaches, borrowed uniquely
        // for `'a`.
        Ok(unsafe { Self::from_validated(NonNull::from(bytes).cast(), 0, map, ()) })
    }
}

/// The bytes `size` compact values of `T` take.
fn compact_bytes<T: DlElement>(size: usize) -> Result<usize, DlpackError> {
    packed_bytes(T::DTYPE, size).ok_or(DlpackError::SpanOverflow)
}

/// The compact mapping of `extents` for a view over `len` bytes, which must be exactly the bytes
/// its values take (both constructors of compact views).
#[inline]
fn compact_mapping<T: DlElement, const R: usize, E: Extents<R>, L: Layout>(
    len: usize,
    extents: [usize; R],
) -> Result<Mapping<R, E, L>, DlpackError> {
    let map = Mapping::compact(extents)?;
    let required = compact_bytes::<T>(map.size())?;
    if len != required {
        return Err(DlpackError::PackedByteLength { required, found: len });
    }
    Ok(map)
}

/// The strided mapping of `extents` and `strides` for a view over `len` bytes, which must hold
/// every value it reaches from bit 0; `unique` (mutable views) also refuses two indices sharing a
/// value.
#[inline]
fn strided_mapping<T: DlElement, const R: usize, E: Extents<R>, L: Layout>(
    len: usize,
    extents: [usize; R],
    strides: [isize; R],
    unique: bool,
) -> Result<Mapping<R, E, L>, DlpackError> {
    let map = Mapping::from_strides(extents, strides)?;
    if unique && !map.is_unique() {
        return Err(DlpackError::OverlappingStrides);
    }
    let required = compact_bytes::<T>(map.required_span_size())?;
    if len < required {
        return Err(DlpackError::PackedByteLength { required, found: len });
    }
    Ok(map)
}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
    PackedMdspanMut<'a, T, R, E, L, S>
{
    /// A shared view of the same values, borrowing this one.
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.as_view().to_vec(), view.to_vec());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn as_view(&self) -> PackedMdspan<'_, T, R, E, L, S> {
        // SAFETY: the same values, shared for the borrow of `self`, during which nothing writes.
        unsafe { PackedMdspan::from_validated(self.base, self.start_bit, self.map, self.origin) }
    }

    /// A mutable view of the same values for a shorter borrow.
    ///
    /// ```
    /// # let mut bytes = [0u8; 2];
    /// # let mut view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// view.reborrow().fill(dlspan::dtype::Float4E2m1fn::from_f32(1.0));
    /// assert_eq!(view.get([2]).unwrap().to_f32(), 1.0);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn reborrow(&mut self) -> PackedMdspanMut<'_, T, R, E, L, S> {
        // SAFETY: the same values, uniquely for the borrow of `self`.
        unsafe { PackedMdspanMut::from_validated(self.base, self.start_bit, self.map, self.origin) }
    }
}
