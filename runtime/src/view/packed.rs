//! Packed sub-byte views: [`PackedMdspan`] (shared) and [`PackedMdspanMut`] (mutable), over data
//! in DLPack's default sub-byte storage, values of `bits < 8` bits side by side, low bits first
//! (two FP4 values per byte; FP6 values straddle bytes).
//!
//! Element access decodes and encodes through the one-value storage types ([`Float4E2m1fn`],
//! [`Float6E2m3fn`], ...): values are read and written by value, since no reference can point
//! at half a byte. Strides count elements, as for every DLPack dtype; the element at index `i` lies
//! `8·byte_offset + Σ i_k·s_k·bits` bits after `data`. See [rules P1–P4](crate::rules#p).
//!
//! [`Float4E2m1fn`]: crate::dtype::Float4E2m1fn
//! [`Float6E2m3fn`]: crate::dtype::Float6E2m3fn

use super::iter::Cursor;
use crate::convert;
use crate::convert::{
    DlpackTensor, Element, FromDlTensor, ImportOptions, ToDlpackTensor, export_element, import_element,
};
use crate::dtype::{DlElement, PlainBits, is_packable, packed_bytes};
use crate::error::DlpackError;
use crate::ffi::{DLDevice, DLTensor};
use crate::owned::{CopyMode, ManagedTensor};
use crate::space::{Device, Host, HostAccessible, MemorySpace};
use crate::view::{Dims, Extents, Layout, LayoutRight, Mapping};
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

/// The byte and the bit in it where element offset `k` starts, `start_bit + k·bits` bits after the
/// base, computed without the bit count itself (which may not fit `usize` where the bytes do).
#[inline]
fn position(start_bit: usize, k: usize, bits: usize) -> (usize, usize) {
    // Eight values take exactly `bits` bytes.
    let low = start_bit + (k % 8) * bits;
    ((k / 8) * bits + low / 8, low % 8)
}

/// The bits of the element at element offset `k`.
///
/// # Safety
///
/// The bytes holding bits `[start_bit + k·bits, start_bit + (k + 1)·bits)` after `base` are valid
/// for reads; `bits < 8`.
#[inline]
unsafe fn read_bits(base: NonNull<u8>, start_bit: usize, k: usize, bits: usize) -> u8 {
    let (byte, shift) = position(start_bit, k, bits);
    // SAFETY: the first byte holding the value lies in the bytes the caller vouches for.
    let first = unsafe { base.add(byte) };
    // SAFETY: as above, valid for reads.
    let mut word = u16::from(unsafe { first.read() });
    if shift + bits > 8 {
        // SAFETY: the value straddles into the next byte, which holds its high bits (caller).
        let second = unsafe { first.add(1) };
        // SAFETY: as above, valid for reads.
        word |= u16::from(unsafe { second.read() }) << 8;
    }
    ((word >> shift) & ((1 << bits) - 1)) as u8
}

/// Writes the low `bits` bits of `value` as the element at element offset `k`, keeping the other
/// bits of its bytes.
///
/// # Safety
///
/// As for [`read_bits`], with the bytes valid for writes and reached through nothing else.
#[inline]
unsafe fn write_bits(base: NonNull<u8>, start_bit: usize, k: usize, bits: usize, value: u8) {
    let (byte, shift) = position(start_bit, k, bits);
    let mask = ((1u16 << bits) - 1) << shift;
    let value = (u16::from(value) << shift) & mask;
    // SAFETY: the first byte holding the value lies in the bytes the caller vouches for.
    let first = unsafe { base.add(byte) };
    // SAFETY: valid for reads and writes, reached through nothing else (caller).
    unsafe { replace_bits(first, mask as u8, value as u8) };
    if shift + bits > 8 {
        // SAFETY: the value straddles into the next byte (caller).
        let second = unsafe { first.add(1) };
        // SAFETY: as above.
        unsafe { replace_bits(second, (mask >> 8) as u8, (value >> 8) as u8) };
    }
}

/// Replaces the bits of `*byte` under `mask` with those of `value`.
///
/// # Safety
///
/// `byte` is valid for reads and writes and reached through nothing else.
#[inline]
unsafe fn replace_bits(byte: NonNull<u8>, mask: u8, value: u8) {
    // SAFETY: valid for reads (caller).
    let old = unsafe { byte.read() };
    // SAFETY: valid for writes (caller).
    unsafe { byte.write((old & !mask) | (value & mask)) };
}

/// A value of `T` from its bits.
#[inline]
fn from_bits<T: PlainBits>(bits: u8) -> T {
    debug_assert_eq!(size_of::<T>(), 1);
    // SAFETY: `T` is one byte (packable, checked by every constructor) that accepts any bits.
    unsafe { core::mem::transmute_copy::<u8, T>(&bits) }
}

/// The bits of a value of `T`.
#[inline]
fn to_bits<T: PlainBits>(value: T) -> u8 {
    debug_assert_eq!(size_of::<T>(), 1);
    // SAFETY: `T` is one byte without padding (packable and `PlainBits`).
    unsafe { core::mem::transmute_copy::<T, u8>(&value) }
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
            pub(crate) fn with_order(mut self, order: crate::space::OrderEvent) -> Self {
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

        impl<T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> ToDlpackTensor<R>
            for $view<'_, T, R, E, L, S>
        {
            /// Exports as a `DLTensor` of dtype `T::DTYPE` (packed: no padding flag exists on a plain
            /// `DLTensor`), with the view's shape and strides.
            #[inline]
            fn to_dlpack_tensor(&self) -> Result<DlpackTensor<'_, R>, DlpackError> {
                export_element(self.base.as_ptr().cast(), Element::packed::<T>(), self.start_bit, &self.map, self.device())
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
        let map = Mapping::compact(extents)?;
        let base = NonNull::from(bytes).cast::<u8>();
        let required = compact_bytes::<T>(map.size())?;
        if bytes.len() != required {
            return Err(DlpackError::PackedByteLength { required, found: bytes.len() });
        }
        // SAFETY: the slice's bytes hold the compact values, borrowed shared for `'a`.
        Ok(unsafe { Self::from_validated(base, 0, map, ()) })
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
        let map = Mapping::from_strides(extents, strides)?;
        reached_bytes::<T, R, E, L>(&map, bytes.len())?;
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
        let map = Mapping::compact(extents)?;
        let required = compact_bytes::<T>(map.size())?;
        if bytes.len() != required {
            return Err(DlpackError::PackedByteLength { required, found: bytes.len() });
        }
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
        let map = Mapping::from_strides(extents, strides)?;
        if !map.is_unique() {
            return Err(DlpackError::OverlappingStrides);
        }
        reached_bytes::<T, R, E, L>(&map, bytes.len())?;
        // SAFETY: the slice's bytes hold every value the unique mapping reaches, borrowed uniquely
        // for `'a`.
        Ok(unsafe { Self::from_validated(NonNull::from(bytes).cast(), 0, map, ()) })
    }
}

/// The bytes `size` compact values of `T` take.
fn compact_bytes<T: DlElement>(size: usize) -> Result<usize, DlpackError> {
    packed_bytes(T::DTYPE, size).ok_or(DlpackError::SpanOverflow)
}

/// Checks that `len` bytes hold every value `map` reaches from bit 0.
fn reached_bytes<T: DlElement, const R: usize, E: Extents<R>, L: Layout>(
    map: &Mapping<R, E, L>,
    len: usize,
) -> Result<(), DlpackError> {
    let required = compact_bytes::<T>(map.required_span_size())?;
    if len < required { Err(DlpackError::PackedByteLength { required, found: len }) } else { Ok(()) }
}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
    PackedMdspan<'a, T, R, E, L, S>
{
    /// A packed view of a `DLTensor` of a current (1.3) producer: data type exactly `T::DTYPE`,
    /// packed (the default of a plain `DLTensor`), and every other rule of
    /// [section I](crate::rules#i) with positions counted in bits ([rule P2](crate::rules#p2)).
    ///
    /// # Errors
    ///
    /// The first rule that fails; [`DlpackError::SubbytePacking`] for padded data.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`](crate::to_host_mdspan) in `S`'s memory, for every byte that holds
    /// a value (all of it, also the partly used bytes at the ends).
    ///
    /// ```
    /// use dlspan::{PackedMdspan, ffi::*};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut packed = [0x21u8, 0x07];
    /// let (mut shape, mut strides) = ([3i64], [1i64]);
    /// let tensor = DLTensor {
    ///     data: packed.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `packed`, alive and unwritten while `view` lives.
    /// let view = unsafe { PackedMdspan::<Float4E2m1fn, 1>::from_dltensor(&tensor) }?;
    /// assert_eq!(view.get([2]).map(|x| x.to_f32()), Some(6.0));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A packed view of a `DLTensor`, with what the producer said about it (version, padding).
    ///
    /// # Errors
    ///
    /// As [`from_dltensor`](Self::from_dltensor).
    ///
    /// # Safety
    ///
    /// As for [`from_dltensor`](Self::from_dltensor).
    ///
    /// ```
    /// use dlspan::{DlpackError, ImportOptions, PackedMdspan, ffi::*};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut padded = [0x01u8, 0x02, 0x07]; // one value per byte
    /// let mut shape = [3i64];
    /// let tensor = DLTensor {
    ///     data: padded.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(),
    ///     byte_offset: 0,
    /// };
    /// let options = ImportOptions { subbyte_padded: true, ..ImportOptions::legacy() };
    /// // SAFETY: metadata only: the padded data is refused.
    /// let refused = unsafe { PackedMdspan::<Float4E2m1fn, 1>::from_dltensor_with(&tensor, options) };
    /// assert!(matches!(refused, Err(DlpackError::SubbytePacking { .. })));
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        const { assert_packable::<T>() };
        // SAFETY: forwarded to the caller (shape and strides arrays).
        let (base, start_bit, map, ordinal) =
            unsafe { import_element::<R, E, L, S>(tensor, options, false, Element::packed::<T>()) }?;
        // SAFETY: validated: every value's bytes lie in the range checked, which the caller keeps
        // alive and unwritten for `'a`; index 0 starts at `data + byte_offset`, a whole byte.
        Ok(unsafe { Self::from_validated(base, start_bit, map, S::origin(ordinal)) })
    }
}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
    PackedMdspanMut<'a, T, R, E, L, S>
{
    /// A mutable packed view of a `DLTensor` of a current (1.3) producer.
    ///
    /// # Errors
    ///
    /// As [`PackedMdspan::from_dltensor`]; [`DlpackError::OverlappingStrides`] when two indices
    /// share a value.
    ///
    /// # Safety
    ///
    /// As for [`PackedMdspan::from_dltensor`], with the bytes valid for writes and reached through
    /// nothing else for `'a`.
    ///
    /// ```
    /// use dlspan::{PackedMdspanMut, ffi::*};
    /// use dlspan::dtype::Float6E3m2fn;
    /// let mut packed = [0u8; 3]; // three FP6 values: 18 bits
    /// let (mut shape, mut strides) = ([3i64], [1i64]);
    /// let tensor = DLTensor {
    ///     data: packed.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat6_e3m2fn, 6, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `packed`, which nothing else touches while `view` lives.
    /// let mut view = unsafe { PackedMdspanMut::<Float6E3m2fn, 1>::from_dltensor(&tensor) }?;
    /// view.set([2], Float6E3m2fn::from_f32(28.0));
    /// assert_eq!(packed, [0x00, 0xF0, 0x01]); // bits 12..18
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A mutable packed view of a `DLTensor`, with what the producer said about it.
    ///
    /// # Errors
    ///
    /// As [`from_dltensor`](Self::from_dltensor).
    ///
    /// # Safety
    ///
    /// As for [`from_dltensor`](Self::from_dltensor).
    ///
    /// ```
    /// use dlspan::{DlpackError, ImportOptions, PackedMdspanMut, ffi::*};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut packed = [0u8; 2];
    /// let (mut shape, mut strides) = ([2i64, 2], [0i64, 1]); // broadcast rows: not unique
    /// let tensor = DLTensor {
    ///     data: packed.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: metadata only: refused.
    /// let refused = unsafe {
    ///     PackedMdspanMut::<Float4E2m1fn, 2, dlspan::Dims<2>, dlspan::LayoutStrideRelaxed>::from_dltensor_with(
    ///         &tensor,
    ///         ImportOptions::CURRENT,
    ///     )
    /// };
    /// assert!(matches!(refused, Err(DlpackError::OverlappingStrides)));
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        const { assert_packable::<T>() };
        // SAFETY: forwarded to the caller (shape and strides arrays).
        let (base, start_bit, map, ordinal) =
            unsafe { import_element::<R, E, L, S>(tensor, options, true, Element::packed::<T>()) }?;
        // SAFETY: validated, unique; the caller gives unique access to the bytes for `'a`.
        Ok(unsafe { Self::from_validated(base, start_bit, map, S::origin(ordinal)) })
    }

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

/// Logical-order iterator over the values of a packed view; see [`PackedMdspan::iter`].
///
/// ```
/// # let bytes = [0x21u8, 0x07];
/// # let view = dlspan::PackedMdspan::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
/// let mut values = view.iter();
/// assert_eq!(values.len(), 3);
/// assert_eq!(values.next().map(|x| x.to_f32()), Some(0.5));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub struct PackedIter<'a, T, const R: usize> {
    base: NonNull<u8>,
    start_bit: usize,
    cursor: Cursor<u8, R>,
    _borrow: PhantomData<&'a T>,
}

// SAFETY: reads only, as the shared view it comes from.
unsafe impl<T: Sync, const R: usize> Send for PackedIter<'_, T, R> {}
// SAFETY: as above.
unsafe impl<T: Sync, const R: usize> Sync for PackedIter<'_, T, R> {}

impl<T: DlElement + PlainBits, const R: usize> Iterator for PackedIter<'_, T, R> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        let offset = self.cursor.next_offset()?;
        // SAFETY: the offset of an in-bounds index of the validated mapping (non-negative), whose
        // bytes the view made valid for reads for `'a`.
        let bits = unsafe { read_bits(self.base, self.start_bit, offset as usize, T::DTYPE.bits as usize) };
        Some(from_bits(bits))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.cursor.len(), Some(self.cursor.len()))
    }
}

impl<T: DlElement + PlainBits, const R: usize> ExactSizeIterator for PackedIter<'_, T, R> {}
impl<T: DlElement + PlainBits, const R: usize> core::iter::FusedIterator for PackedIter<'_, T, R> {}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    PackedMdspan<'a, T, R, E, L, S>
{
    /// The value at `index`, or `None` when out of bounds.
    ///
    /// ```
    /// # let bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspan::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
    /// assert_eq!(view.get([1]).map(|x| x.to_f32()), Some(1.0));
    /// assert_eq!(view.get([3]), None);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn get(&self, index: [usize; R]) -> Option<T> {
        let offset = self.map.index_offset(index)?;
        // SAFETY: an in-bounds index's offset (non-negative), whose bytes are valid for reads.
        let bits = unsafe { read_bits(self.base, self.start_bit, offset as usize, T::DTYPE.bits as usize) };
        Some(from_bits(bits))
    }

    /// Every value in logical (row-major index) order.
    ///
    /// ```
    /// # let bytes = [0x21u8, 0x43];
    /// let view = dlspan::HostPackedMdspan::<dlspan::dtype::Float4E2m1fn, 2, dlspan::LayoutLeft>::from_bytes(&bytes, [2, 2])?;
    /// let values: Vec<f32> = view.iter().map(|x| x.to_f32()).collect();
    /// assert_eq!(values, [0.5, 1.5, 1.0, 2.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn iter(&self) -> PackedIter<'a, T, R> {
        PackedIter {
            base: self.base,
            start_bit: self.start_bit,
            cursor: Cursor::new(self.base, &self.map),
            _borrow: PhantomData,
        }
    }

    /// The values in logical order, one per element of the `Vec` (unpacked).
    ///
    /// ```
    /// # let bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspan::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
    /// assert_eq!(view.to_vec().len(), 3);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }

    /// An owned managed tensor of these values: a copy, packed compact row-major, `IS_COPIED`
    /// set, dtype `T::DTYPE` packed ([rule P4](crate::rules#p4)); [`CopyMode::Never`] is refused.
    ///
    /// # Errors
    ///
    /// [`DlpackError::CopyRequired`] for [`CopyMode::Never`].
    ///
    /// ```
    /// use dlspan::{CopyMode, PackedMdspan};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let bytes = [0x21u8, 0x07];
    /// let view = PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
    /// let owned = view.to_managed(CopyMode::Always)?;
    /// assert!(owned.is_copied() && !owned.is_subbyte_padded());
    /// assert_eq!(owned.view_as::<PackedMdspan<Float4E2m1fn, 1>>()?.to_vec(), view.to_vec());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn to_managed(&self, copy: CopyMode) -> Result<ManagedTensor, DlpackError> {
        if copy == CopyMode::Never {
            return Err(DlpackError::CopyRequired);
        }
        let bits = T::DTYPE.bits as usize;
        let mut bytes = vec![0u8; compact_bytes::<T>(self.size())?];
        let base = NonNull::from(&mut bytes[..]).cast::<u8>();
        for (k, value) in self.iter().enumerate() {
            // SAFETY: `bytes` holds `size` compact values; value `k` is among them.
            unsafe { write_bits(base, 0, k, bits, to_bits(value)) };
        }
        crate::owned::export_packed::<T, _, R>(bytes, self.extents(), crate::ffi::DLPACK_FLAG_BITMASK_IS_COPIED)
    }
}

impl<T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible>
    PackedMdspanMut<'_, T, R, E, L, S>
{
    /// The value at `index`, or `None` when out of bounds.
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.get([2]).map(|x| x.to_f32()), Some(6.0));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn get(&self, index: [usize; R]) -> Option<T> {
        self.as_view().get(index)
    }

    /// Every value in logical order; see [`PackedMdspan::iter`].
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.iter().count(), 3);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn iter(&self) -> PackedIter<'_, T, R> {
        self.as_view().iter()
    }

    /// The values in logical order, unpacked.
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.to_vec()[0].to_f32(), 0.5);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn to_vec(&self) -> Vec<T> {
        self.as_view().to_vec()
    }

    /// Writes `value` at `index` and returns the value it replaces, or `None` (writing nothing)
    /// when out of bounds. Only the value's bits change (`T`'s bits above the format's width are
    /// dropped).
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut bytes = [0x21u8, 0x07];
    /// let mut view = dlspan::PackedMdspanMut::<Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// let old = view.set([1], Float4E2m1fn::from_f32(-6.0));
    /// assert_eq!(old.map(|x| x.to_f32()), Some(1.0));
    /// assert_eq!(view.set([3], Float4E2m1fn::from_f32(1.0)), None);
    /// assert_eq!(bytes, [0xF1, 0x07]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn set(&mut self, index: [usize; R], value: T) -> Option<T> {
        let offset = self.map.index_offset(index)? as usize;
        let bits = T::DTYPE.bits as usize;
        // SAFETY: an in-bounds index's offset, whose bytes are valid for reads and writes and
        // reached through nothing else while `self` is borrowed mutably.
        let old = unsafe { read_bits(self.base, self.start_bit, offset, bits) };
        // SAFETY: as above.
        unsafe { write_bits(self.base, self.start_bit, offset, bits, to_bits(value)) };
        Some(from_bits(old))
    }

    /// Replaces every value with `f(value)`, in logical order.
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut bytes = [0x21u8, 0x07];
    /// let mut view = dlspan::PackedMdspanMut::<Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// view.update(|x| Float4E2m1fn::from_f32(x.to_f32() * 2.0)); // 6.0 · 2 saturates to 6.0
    /// assert_eq!(view.to_vec().iter().map(|x| x.to_f32()).collect::<Vec<_>>(), [1.0, 2.0, 6.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn update(&mut self, mut f: impl FnMut(T) -> T) {
        let bits = T::DTYPE.bits as usize;
        let mut cursor = Cursor::<u8, R>::new(self.base, &self.map);
        while let Some(offset) = cursor.next_offset() {
            // SAFETY: the offsets of in-bounds indices (non-negative), each visited once (a unique
            // mapping), in bytes valid for reads and writes, reached only through `self`.
            let old = unsafe { read_bits(self.base, self.start_bit, offset as usize, bits) };
            let new = to_bits(f(from_bits(old)));
            // SAFETY: as above.
            unsafe { write_bits(self.base, self.start_bit, offset as usize, bits, new) };
        }
    }

    /// Writes `value` everywhere.
    ///
    /// ```
    /// use dlspan::dtype::Float6E2m3fn;
    /// let mut bytes = [0u8; 3];
    /// let mut view = dlspan::PackedMdspanMut::<Float6E2m3fn, 1>::from_bytes(&mut bytes, [4])?;
    /// view.fill(Float6E2m3fn::from_f32(1.0)); // 0b001000, four times
    /// assert_eq!(bytes, [0x08, 0x82, 0x20]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn fill(&mut self, value: T) {
        self.update(|_| value);
    }

    /// An owned managed tensor of these values; see [`PackedMdspan::to_managed`].
    ///
    /// # Errors
    ///
    /// [`DlpackError::CopyRequired`] for [`CopyMode::Never`].
    ///
    /// ```
    /// # let mut bytes = [0x21u8, 0x07];
    /// # let view = dlspan::PackedMdspanMut::<dlspan::dtype::Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?;
    /// assert_eq!(view.to_managed(dlspan::CopyMode::Always)?.shape(), &[3]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn to_managed(&self, copy: CopyMode) -> Result<ManagedTensor, DlpackError> {
        self.as_view().to_managed(copy)
    }
}

impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> convert::sealed::Sealed
    for PackedMdspan<'_, T, R, E, L, S>
{
}
impl<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> convert::sealed::Sealed
    for PackedMdspanMut<'_, T, R, E, L, S>
{
}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> FromDlTensor<'a>
    for PackedMdspan<'a, T, R, E, L, S>
{
    const MUTABLE: bool = false;

    #[inline]
    unsafe fn view_dltensor(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, options) }
    }

    #[inline]
    fn with_order(self, order: crate::space::OrderEvent) -> Self {
        self.with_order(order)
    }
}

impl<'a, T: DlElement + PlainBits, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> FromDlTensor<'a>
    for PackedMdspanMut<'a, T, R, E, L, S>
{
    const MUTABLE: bool = true;

    #[inline]
    unsafe fn view_dltensor(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, options) }
    }

    #[inline]
    fn with_order(self, order: crate::space::OrderEvent) -> Self {
        self.with_order(order)
    }
}
