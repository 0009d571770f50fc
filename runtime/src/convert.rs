//! `DLTensor` ↔ typed views: CCCL's `to_host_mdspan` / `to_device_mdspan` / `to_managed_mdspan` and
//! `to_dlpack_tensor`, with every rule of sections [I](crate::rules#i) and [E](crate::rules#e) of the
//! [rules page](crate::rules).
//!
//! This module and the dynamically typed view's constructor ([`DynMdspan`](crate::DynMdspan), which
//! reuses this module's import for its typed conversions) are the only places where raw DLPack
//! pointers become views. A `&DLTensor` cannot prove its data is alive, so the conversions from one
//! are `unsafe`; the safe doors are a managed tensor, which owns its data, and [`DlpackTensor`],
//! which borrows a view.

use crate::dtype::{DlElement, is_padded_subbyte};
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice, DLPackVersion, DLTensor};
use crate::space::{Device, Host, Managed, MemorySpace};
use crate::view::{Extents, Layout, Mapping, Mdspan, MdspanMut};
use crate::{check, view};
use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ops::Deref;
use core::ptr::{self, NonNull};

/// What a producer said about a `DLTensor` beyond the struct itself.
///
/// ```
/// use dlspan::{ImportOptions, ffi::DLPackVersion};
/// assert_eq!(ImportOptions::default().version, DLPackVersion::CURRENT);
/// assert!(ImportOptions::legacy().version < DLPackVersion { major: 1, minor: 2 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportOptions {
    /// The producer's DLPack version: before 1.2, null strides mean compact row-major; from 1.2 they
    /// are an error for rank > 0.
    pub version: DLPackVersion,
    /// Whether sub-byte data is padded (`IS_SUBBYTE_TYPE_PADDED`); a plain `DLTensor` is packed.
    pub subbyte_padded: bool,
}

impl ImportOptions {
    /// A current (1.3) producer with packed sub-byte data: what a bare `DLTensor` means.
    ///
    /// ```
    /// use dlspan::{ImportOptions, ffi::DLPackVersion};
    /// assert_eq!(ImportOptions::CURRENT, ImportOptions { version: DLPackVersion::CURRENT, subbyte_padded: false });
    /// ```
    pub const CURRENT: Self = Self { version: DLPackVersion::CURRENT, subbyte_padded: false };

    /// A legacy (unversioned, pre-1.0) producer: null strides mean row-major.
    ///
    /// ```
    /// use dlspan::{ImportOptions, ffi::DLPackVersion};
    /// let legacy = ImportOptions::legacy();
    /// assert_eq!((legacy.version, legacy.subbyte_padded), (DLPackVersion { major: 0, minor: 0 }, false));
    /// ```
    pub const fn legacy() -> Self {
        Self { version: DLPackVersion { major: 0, minor: 0 }, subbyte_padded: false }
    }

    /// Whether null strides mean compact row-major for this producer.
    pub(crate) const fn null_strides_are_row_major(&self) -> bool {
        self.version.major == 0 || (self.version.major == 1 && self.version.minor < 2)
    }
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self::CURRENT
    }
}

/// A validated view's parts: base pointer, mapping, device ordinal.
pub(crate) type Parts<T, const R: usize, E, L, S> = (NonNull<T>, Mapping<R, E, L>, <S as MemorySpace>::Ordinal);

/// Validates a `DLTensor` for a view of `T`, rank `R`, extents `E`, layout `L`, space `S`;
/// `unique` additionally requires that no two indices share an element.
///
/// The common case takes [`import_fast`]: tensors within one bound, where no arithmetic can
/// overflow. Anything else (an error, or a valid but unusual tensor: no elements, null legacy
/// strides, pinned memory, padded sub-byte data, negative strides, numbers beyond the bound) takes
/// [`import_ordered`], which applies the rules in the order of [section I](crate::rules#i) and
/// reports the first that fails. The fast path accepts only what the ordered one accepts, with the
/// same view.
///
/// Last, for element types whose [`VALIDITY`](DlElement::VALIDITY) needs a check (`bool`) in
/// host-readable memory, every element the view reaches is read ([rule I18](crate::rules#i18));
/// for every other type and space that branch is a constant `false`, and no element is read.
///
/// # Safety
///
/// When `tensor.ndim == R` and `tensor.shape` / `tensor.strides` are non-null, each points to `R`
/// readable, aligned `int64_t`. When `T::VALIDITY` needs a check and `S` is host-accessible, the
/// elements a valid tensor describes are readable and initialised.
#[inline(always)]
pub(crate) unsafe fn import<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    tensor: &DLTensor,
    options: ImportOptions,
    unique: bool,
) -> Result<Parts<T, R, E, L, S>, DlpackError> {
    // SAFETY: forwarded to the caller.
    let parts = match unsafe { import_fast::<T, R, E, L, S>(tensor, unique) } {
        Some(parts) => parts,
        // SAFETY: forwarded to the caller.
        None => unsafe { import_ordered::<T, R, E, L, S>(tensor, options, unique) }?,
    };
    if const { T::VALIDITY.needs_check() && S::HOST_ACCESSIBLE } {
        // SAFETY: the parts are a validated view's, whose elements are readable (caller).
        unsafe { check_values(parts.0, &parts.1) }?;
    }
    Ok(parts)
}

/// Rule I18: every byte of every element a validated view reaches is 0 or 1, for element types of
/// [`Validity::BoolBytes`](crate::dtype::Validity::BoolBytes) (the only check a validity asks for
/// today).
///
/// # Safety
///
/// The parts are a validated view's, whose reached elements are readable and initialised.
unsafe fn check_values<T: DlElement, const R: usize, E: Extents<R>, L: Layout>(
    base: NonNull<T>,
    mapping: &Mapping<R, E, L>,
) -> Result<(), DlpackError> {
    // SAFETY: forwarded to the caller.
    match unsafe { view::first_non_boolean_byte(base, mapping) } {
        Some(found) => Err(DlpackError::InvalidBool { found }),
        None => Ok(()),
    }
}

/// The common case of [`import`]: a current producer's tensor in `S`'s usual device type, with
/// non-null data, shape and strides, at least one element, no sub-byte padding question, every
/// extent, stride and offset within [`check::fast_bound`] (so no sum or product of them can
/// overflow, and the view spans at most [`check::FAST_SPAN_BYTES`]), and the first element below
/// address 2^63. `None` hands the tensor to [`import_ordered`]. It never accepts a tensor
/// `import_ordered` rejects, and builds the same view for those it accepts.
///
/// # Safety
///
/// As for [`import`].
#[inline(always)]
unsafe fn import_fast<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    tensor: &DLTensor,
    unique: bool,
) -> Option<Parts<T, R, E, L, S>> {
    // Rules I1-I6 (and the fast path's own conditions); a sub-byte type always goes the slow way, and
    // 32-bit targets too (the casts below assume 64-bit `usize`).
    if cfg!(not(target_pointer_width = "64")) || T::DTYPE.bits < 8 || R > i32::MAX as usize {
        return None;
    }
    let ordinal = S::fast_accept(tensor.device)?;
    let dtype = T::DTYPE;
    let expected = u64::from(R as u32) | u64::from(u32::from_ne_bytes(dtype_bytes(dtype))) << 32;
    let found = u64::from(tensor.ndim as u32) | u64::from(u32::from_ne_bytes(dtype_bytes(tensor.dtype))) << 32;
    let arrays_null = R > 0 && (tensor.shape.is_null() || tensor.strides.is_null());
    if (found != expected) | tensor.data.is_null() | arrays_null {
        return None;
    }
    let (shape, strides) = if R == 0 {
        ([0i64; R], [0i64; R])
    } else {
        // SAFETY: ndim == R and both arrays are non-null: the caller guarantees R readable int64_t.
        let shape = unsafe { *tensor.shape.cast::<[i64; R]>() };
        // SAFETY: as above.
        let strides = unsafe { *tensor.strides.cast::<[i64; R]>() };
        (shape, strides)
    };
    let size = size_of::<T>();
    let bound = const { check::fast_bound(R, size_of::<T>()) };
    // Rules I7-I8: the first element (or the base and an element offset below the bound) and its
    // alignment.
    let data = tensor.data.addr();
    let mut bad = false;
    let (address, offset) = if L::HAS_OFFSET {
        // A byte offset that is not a whole number of elements gives an offset beyond the bound,
        // which the layout's check rejects.
        (data, check::element_offset_fast(tensor.byte_offset, size))
    } else {
        let (address, overflow) = data.overflowing_add(tensor.byte_offset as usize);
        bad |= overflow;
        (address, 0)
    };
    bad |= address % align_of::<T>() != 0;
    // Rule I10 needs no test of its own here: a negative extent is huge as `usize`, beyond the bound.
    let extents = shape.map(|e| e as usize);
    let strides = strides.map(|s| s as isize);
    // Static extents of `E`.
    if E::RANK_DYNAMIC != R {
        for (axis, &extent) in extents.iter().enumerate() {
            if let Some(expected) = E::STATIC[axis] {
                bad |= extent != expected;
            }
        }
    }
    // Rules I12-I15 for the layout, then the byte range: under the bound the view spans at most
    // FAST_SPAN_BYTES (below 2^63), so a range starting below 2^63 cannot wrap.
    let stored = L::validate_fast(&extents, &strides, offset, bound)?;
    bad |= address > isize::MAX as usize;
    if bad {
        return None;
    }
    let mapping = Mapping::<R, E, L>::from_validated(extents, stored);
    if unique && !mapping.is_unique() {
        return None;
    }
    // Pointer arithmetic that keeps the pointer's provenance; `address` is its address.
    let first = tensor.data.cast::<u8>().wrapping_add(address - data).cast::<T>();
    // SAFETY: `address >= data > 0` (no wrap).
    Some((unsafe { NonNull::new_unchecked(first) }, mapping, ordinal))
}

/// The bytes of a data type as they lie in memory, for comparing it as one integer.
#[inline(always)]
const fn dtype_bytes(dtype: DLDataType) -> [u8; 4] {
    let lanes = dtype.lanes.to_ne_bytes();
    [dtype.code, dtype.bits, lanes[0], lanes[1]]
}

/// Validates a `DLTensor` in the order of [section I](crate::rules#i), reporting the first rule that
/// fails.
///
/// # Safety
///
/// As for [`import`].
#[cold]
#[inline(never)]
unsafe fn import_ordered<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    tensor: &DLTensor,
    options: ImportOptions,
    unique: bool,
) -> Result<Parts<T, R, E, L, S>, DlpackError> {
    // SAFETY: forwarded to the caller.
    let (base, _, mapping, ordinal) =
        unsafe { import_element::<R, E, L, S>(tensor, options, unique, Element::of::<T>()) }?;
    // A whole-byte element starts at bit 0 of its base, which rule I8 aligned for `T`.
    Ok((base.cast(), mapping, ordinal))
}

/// What the import and the export need to know of an element type: its dtype, whether it is padded
/// sub-byte storage, the bits one element takes in memory, and the alignment of its first byte.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Element {
    pub(crate) dtype: DLDataType,
    pub(crate) padded: bool,
    pub(crate) bits: usize,
    pub(crate) align: usize,
}

impl Element {
    /// An element type stored in whole bytes (padded sub-byte storage included).
    pub(crate) const fn of<T: DlElement>() -> Self {
        Self { dtype: T::DTYPE, padded: is_padded_subbyte::<T>(), bits: 8 * size_of::<T>(), align: align_of::<T>() }
    }

    /// A sub-byte type's values packed at `bits` bits, low bits first (DLPack's default).
    pub(crate) const fn packed<T: DlElement>() -> Self {
        Self { dtype: T::DTYPE, padded: false, bits: T::DTYPE.bits as usize, align: 1 }
    }
}

/// A validated view's parts before its element type: the address of the mapping's base (dangling
/// when the tensor has null data), the bit of that byte where element offset 0 starts (0 unless
/// packed sub-byte data has a relaxed offset), the mapping and the device ordinal.
pub(crate) type RawParts<const R: usize, E, L, S> = (NonNull<u8>, usize, Mapping<R, E, L>, <S as MemorySpace>::Ordinal);

/// The rules of [section I](crate::rules#i) in order, for an element described at run time: the
/// typed import's slow path, and the only import of packed sub-byte views. Element `k` of the
/// mapping lies `start_bit + k·bits` bits after the base.
///
/// # Safety
///
/// As for [`import`].
pub(crate) unsafe fn import_element<const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    tensor: &DLTensor,
    options: ImportOptions,
    unique: bool,
    element: Element,
) -> Result<RawParts<R, E, L, S>, DlpackError> {
    // I1-I2 device; I3 rank; I4-I5 data type.
    let ordinal = S::accept(tensor.device)?;
    check::rank(tensor.ndim, R)?;
    check::dtype(element.dtype, element.padded, tensor.dtype, options.subbyte_padded)?;

    let shape: Option<&[i64; R]> = if R == 0 || tensor.shape.is_null() {
        None
    } else {
        // SAFETY: ndim == R (rule I3) and the shape is non-null: the caller guarantees R readable
        // int64_t.
        Some(unsafe { &*tensor.shape.cast::<[i64; R]>() })
    };

    // I6 data non-null, unless the tensor has no elements (DLPack says its data should be null).
    let data = tensor.data.addr();
    if data == 0 && !shape.is_some_and(|s| s.contains(&0)) {
        return Err(DlpackError::NullData);
    }

    // I7 the first element (strict layouts) or the base and an element offset (relaxed); packed
    // elements count their offset in bits, and it need not be a whole number of them.
    let (address, offset, start_bit) = if !L::HAS_OFFSET {
        (check::first_element(data, tensor.byte_offset)?, 0, 0)
    } else if element.bits % 8 == 0 {
        (data, check::element_offset(tensor.byte_offset, element.bits / 8)?, 0)
    } else {
        let bits = u128::from(tensor.byte_offset) * 8;
        let offset = usize::try_from(bits / element.bits as u128).map_err(|_| DlpackError::SpanOverflow)?;
        (data, offset, (bits % element.bits as u128) as usize)
    };

    // I8 alignment of that address (a null-data empty tensor gets a dangling, aligned pointer).
    if data != 0 {
        check::aligned(address, element.align)?;
    }

    // I9 rank 0 reads neither shape nor strides; I10 shape non-null, extents non-negative.
    let extents = match shape {
        Some(shape) => check::extents(shape)?,
        None if R == 0 => [0usize; R],
        None => return Err(DlpackError::NullShape),
    };

    // I11 strides: null is row-major before DLPack 1.2 and an error from 1.2 on; then I12 static
    // extents, I13 the layout's rules, I14-I15 no overflow, no reach below the base (all in
    // `Mapping::from_parts_with_span`).
    let strides = if R == 0 {
        [0isize; R]
    } else if tensor.strides.is_null() {
        if !options.null_strides_are_row_major() {
            return Err(DlpackError::NullStrides { version: options.version });
        }
        check::compact_strides(&extents, crate::LayoutKind::Right)?
    } else {
        // SAFETY: ndim == R and the strides are non-null: the caller guarantees R readable int64_t.
        check::strides(unsafe { &*tensor.strides.cast::<[i64; R]>() })?
    };
    let (mapping, span) = Mapping::<R, E, L>::from_parts_with_span(extents, strides, offset)?;
    if unique && !mapping.is_unique() {
        return Err(DlpackError::OverlappingStrides);
    }

    let base = if data == 0 {
        // Dangling and aligned for the element, as `NonNull::dangling` makes one: its address is the
        // alignment (a power of two, never 0).
        NonNull::new(ptr::without_provenance_mut(element.align)).unwrap_or(NonNull::dangling())
    } else {
        check::bit_range(address, start_bit, span, element.bits)?;
        // Pointer arithmetic that keeps the pointer's provenance; `address` is its address.
        let first = tensor.data.cast::<u8>().wrapping_add(address - data);
        // SAFETY: `data != 0` and `address >= data` (no wrap, rule I7).
        unsafe { NonNull::new_unchecked(first) }
    };
    Ok((base, start_bit, mapping, ordinal))
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> Mdspan<'a, T, R, E, L, S> {
    /// A shared view of a `DLTensor` of a current (1.3) producer: the generic form of
    /// [`to_host_mdspan`] and its twins, for any extents type, layout and memory space.
    ///
    /// # Errors
    ///
    /// The first rule of [section I](crate::rules#i) that fails, as a [`DlpackError`] variant.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`], in `S`'s memory.
    ///
    /// ```
    /// use dlspan::{to_dlpack_tensor, mdspan};
    /// let data = [0i32, 1, 2, 3, 4, 5];
    /// let exported = dlspan::HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
    /// let dl = to_dlpack_tensor(&exported).unwrap();
    /// let tensor = dl.get();
    /// // SAFETY: the tensor describes `data`, alive and unwritten for the view's life.
    /// let m = unsafe { <mdspan!(i32; 2, 3)>::from_dltensor(&tensor) }.unwrap();
    /// assert_eq!(m[[1, 2]], 5);
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A shared view of a `DLTensor`, with what the producer said about it (version, padding).
    ///
    /// # Errors
    ///
    /// The first rule of [section I](crate::rules#i) that fails, as a [`DlpackError`] variant.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`], in `S`'s memory.
    ///
    /// ```
    /// use dlspan::{HostMdspan, ImportOptions, ffi::*};
    /// let mut data = [1u8, 2, 3, 4];
    /// let mut shape = [2i64, 2];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), // legacy producers may leave strides null: row-major
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, alive and unwritten for the view's life.
    /// let m = unsafe { HostMdspan::<u8, 2>::from_dltensor_with(&tensor, ImportOptions::legacy()) }.unwrap();
    /// assert_eq!(m[[1, 0]], 3);
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: the caller guarantees the shape and strides arrays.
        let (ptr, map, ordinal) = unsafe { import::<T, R, E, L, S>(tensor, options, false) }?;
        // SAFETY: validated mapping and byte range; the caller guarantees the memory for `'a`.
        Ok(unsafe { Self::from_parts_unchecked(ptr, map, S::origin(ordinal)) })
    }
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> MdspanMut<'a, T, R, E, L, S> {
    /// A mutable view of a `DLTensor` of a current (1.3) producer.
    ///
    /// # Errors
    ///
    /// The first rule of [section I](crate::rules#i) that fails; [`DlpackError::OverlappingStrides`]
    /// when two indices share an element.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan_mut`], in `S`'s memory.
    ///
    /// ```
    /// use dlspan::{HostMdspanMut, ffi::*};
    /// let mut data = [0f32; 4];
    /// let (mut shape, mut strides) = ([4i64], [1i64]);
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, which nothing else touches while the view lives.
    /// let mut m = unsafe { HostMdspanMut::<f32, 1>::from_dltensor(&tensor) }.unwrap();
    /// m[[3]] = 1.0;
    /// assert_eq!(data[3], 1.0);
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A mutable view of a `DLTensor`, with what the producer said about it.
    ///
    /// # Errors
    ///
    /// As for [`from_dltensor`](Self::from_dltensor).
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan_mut`], in `S`'s memory.
    ///
    /// ```
    /// use dlspan::{HostMdspanMut, ImportOptions, ffi::*};
    /// let mut data = [0u8; 2];
    /// let mut shape = [2i64];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, which nothing else touches while the view lives.
    /// let mut m = unsafe { HostMdspanMut::<u8, 1>::from_dltensor_with(&tensor, ImportOptions::legacy()) }.unwrap();
    /// m[[1]] = 9;
    /// assert_eq!(data, [0, 9]);
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: the caller guarantees the shape and strides arrays.
        let (ptr, map, ordinal) = unsafe { import::<T, R, E, L, S>(tensor, options, true) }?;
        // SAFETY: validated unique mapping and byte range; the caller guarantees unique access to
        // the memory for `'a`.
        Ok(unsafe { Self::from_parts_unchecked(ptr, map, S::origin(ordinal)) })
    }
}

macro_rules! to_mdspan {
    ($(#[$doc:meta])* $name:ident, $name_mut:ident, $space:ident, $alias:ident, $alias_mut:ident, $memory:literal) => {
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// The first rule of [section I](crate::rules#i) that fails, as a [`DlpackError`] variant, in
        /// this order: device type, device id, rank, data type, null data, byte offset, alignment,
        /// shape, strides, overflow.
        ///
        /// # Safety
        ///
        /// - `tensor.shape` and `tensor.strides`, when non-null and `ndim` equals `R`, each point to
        ///   `R` readable, aligned `int64_t`;
        #[doc = concat!("- the elements the tensor describes lie in ", $memory, ", are initialised, and stay")]
        ///   alive and unwritten for `'a` (the view borrows the `DLTensor` struct, which cannot prove
        ///   that its data lives as long). Any bytes a producer stores for the tensor's dtype will
        ///   do: element types accept every such bit pattern, and views of `bool` check theirs
        ///   ([rule I18](crate::rules#i18)).
        #[inline]
        pub unsafe fn $name<'a, T: DlElement, const R: usize, L: Layout>(
            tensor: &'a DLTensor,
        ) -> Result<view::$alias<'a, T, R, L>, DlpackError> {
            // SAFETY: forwarded to the caller.
            unsafe { Mdspan::<'a, T, R, view::Dims<R>, L, $space>::from_dltensor(tensor) }
        }

        #[doc = concat!("The mutable twin of [`", stringify!($name), "`].")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($name), "`], and [`DlpackError::OverlappingStrides`] when two indices")]
        /// share an element.
        ///
        /// # Safety
        ///
        #[doc = concat!("As [`", stringify!($name), "`], with the elements valid for writes and accessed through")]
        /// nothing else for `'a`.
        #[inline]
        pub unsafe fn $name_mut<'a, T: DlElement, const R: usize, L: Layout>(
            tensor: &'a DLTensor,
        ) -> Result<view::$alias_mut<'a, T, R, L>, DlpackError> {
            // SAFETY: forwarded to the caller.
            unsafe { MdspanMut::<'a, T, R, view::Dims<R>, L, $space>::from_dltensor(tensor) }
        }
    };
}

to_mdspan! {
    /// A shared host view of a `DLTensor` on the CPU (CCCL `cuda::to_host_mdspan`): device `kDLCPU`
    /// (or pinned `kDLCUDAHost` / `kDLROCMHost`), rank `R`, element type `T`, layout `L`.
    ///
    /// ```
    /// use dlspan::{to_host_mdspan, LayoutRight, ffi::*};
    /// # fn main() -> Result<(), dlspan::DlpackError> {
    /// let mut data = [0i32, 1, 2, 3, 4, 5];
    /// let mut shape = [2i64, 3];
    /// let mut strides = [3i64, 1];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLInt, 32, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, alive and unwritten while `md` lives.
    /// let md = unsafe { to_host_mdspan::<i32, 2, LayoutRight>(&tensor) }?;
    /// assert_eq!((md.extent(0), md.extent(1), md.stride(0)), (2, 3, 3));
    /// assert_eq!((md[[0, 0]], md[[1, 2]]), (0, 5));
    /// # Ok(()) }
    /// ```
    to_host_mdspan, to_host_mdspan_mut, Host, HostMdspan, HostMdspanMut, "host memory"
}

to_mdspan! {
    /// A shared CUDA device view of a `DLTensor` (CCCL `cuda::to_device_mdspan`): device `kDLCUDA`;
    /// the view remembers the device ordinal. Validating needs no GPU: only metadata is read.
    ///
    /// ```
    /// use dlspan::{to_device_mdspan, LayoutRight, ffi::*};
    /// let mut shape = [4i64];
    /// let mut strides = [1i64];
    /// let tensor = DLTensor {
    ///     data: 0x7f00_0000_0000 as *mut core::ffi::c_void, // a device address, never read here
    ///     device: DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 1 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: a device view is never read on the host; the metadata arrays are alive.
    /// let d = unsafe { to_device_mdspan::<f32, 1, LayoutRight>(&tensor) }.unwrap();
    /// assert_eq!((d.extent(0), d.ordinal()), (4, 1));
    /// ```
    to_device_mdspan, to_device_mdspan_mut, Device, DeviceMdspan, DeviceMdspanMut, "the CUDA device's memory"
}

to_mdspan! {
    /// A shared CUDA managed-memory view of a `DLTensor` (CCCL `cuda::to_managed_mdspan`): device
    /// `kDLCUDAManaged`. Managed views index on the host.
    ///
    /// ```
    /// use dlspan::{to_managed_mdspan, LayoutRight, ffi::*};
    /// let mut data = [7u8; 3]; // stands in for cudaMallocManaged memory
    /// let mut shape = [3i64];
    /// let mut strides = [1i64];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, alive and unwritten while the view lives.
    /// let m = unsafe { to_managed_mdspan::<u8, 1, LayoutRight>(&tensor) }.unwrap();
    /// assert_eq!(m[[2]], 7);
    /// ```
    to_managed_mdspan, to_managed_mdspan_mut, Managed, ManagedMdspan, ManagedMdspanMut, "CUDA managed memory"
}

/// A view exported as a `DLTensor` (CCCL's `dlpack_tensor`): the `DLTensor` fields with the shape
/// and strides stored inline, no heap allocation.
///
/// The `DLTensor` itself is only handed out by [`get`](Self::get), rebuilt on each call and bound to
/// a borrow of the wrapper: `get()` on a temporary cannot outlive the statement, a handle cannot be
/// returned from the function that owns the wrapper, and the wrapper cannot move or drop while a
/// handle lives. Moving the wrapper between calls is fine: no pointer into it is kept.
///
/// ```
/// use dlspan::{HostMdspan, to_dlpack_tensor, ffi::DLDeviceType};
/// let data = [0i32, 1, 2, 3, 4, 5];
/// let md = HostMdspan::<i32, 2>::from_slice(&data, [2, 3]).unwrap();
/// let dl = to_dlpack_tensor(&md).unwrap();
/// let t = dl.get();
/// assert_eq!(t.device.device_type, DLDeviceType::kDLCPU);
/// assert_eq!(t.ndim, 2);
/// // SAFETY: shape and strides point into `dl`, which outlives `t`.
/// assert_eq!(unsafe { (*t.shape, *t.shape.add(1), *t.strides, *t.strides.add(1)) }, (2, 3, 3, 1));
/// assert_eq!(t.data, data.as_ptr() as *mut _);
/// ```
#[derive(Clone, Debug)]
pub struct DlpackTensor<'a, const R: usize> {
    data: *mut c_void,
    device: DLDevice,
    dtype: DLDataType,
    byte_offset: u64,
    shape: [i64; R],
    strides: [i64; R],
    _borrow: PhantomData<&'a ()>,
}

/// The `DLTensor` of a [`DlpackTensor`], borrowing it: derefs to [`DLTensor`], and gives C the
/// pointer it takes.
///
/// The consumer must not write through `shape` or `strides`, and must not write elements of a
/// tensor exported from a shared view.
///
/// ```
/// # let data = [1u8];
/// # let md = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [1]).unwrap();
/// let dl = dlspan::to_dlpack_tensor(&md).unwrap();
/// let mut handle = dl.get();
/// let for_c: *mut dlspan::ffi::DLTensor = handle.as_mut_ptr();
/// assert!(!for_c.is_null());
/// ```
#[derive(Clone, Debug)]
pub struct DlTensorRef<'t> {
    tensor: DLTensor,
    _borrow: PhantomData<&'t ()>,
}

impl<const R: usize> DlpackTensor<'_, R> {
    /// The `DLTensor`, borrowing the wrapper (CCCL's `get() &`; `get() &&` is deleted there, and a
    /// temporary's borrow ends with its statement here).
    ///
    /// ```
    /// # let data = [1u8, 2];
    /// # let md = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [2]).unwrap();
    /// let dl = dlspan::to_dlpack_tensor(&md).unwrap();
    /// assert_eq!(dl.get().ndim, 1);
    /// ```
    #[inline]
    pub fn get(&self) -> DlTensorRef<'_> {
        let (shape, strides) = if R == 0 {
            (ptr::null_mut(), ptr::null_mut())
        } else {
            // Consumers only read shape and strides (DLPack: the producer owns them).
            (self.shape.as_ptr().cast_mut(), self.strides.as_ptr().cast_mut())
        };
        DlTensorRef {
            tensor: DLTensor {
                data: self.data,
                device: self.device,
                ndim: R as i32,
                dtype: self.dtype,
                shape,
                strides,
                byte_offset: self.byte_offset,
            },
            _borrow: PhantomData,
        }
    }

    /// The exported shape.
    ///
    /// ```
    /// # let data = [1u8, 2];
    /// # let md = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [2]).unwrap();
    /// assert_eq!(dlspan::to_dlpack_tensor(&md).unwrap().shape(), &[2]);
    /// ```
    #[inline]
    pub fn shape(&self) -> &[i64; R] {
        &self.shape
    }

    /// The exported strides, in elements.
    ///
    /// ```
    /// # let data = [1u8, 2];
    /// # let md = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [2]).unwrap();
    /// assert_eq!(dlspan::to_dlpack_tensor(&md).unwrap().strides(), &[1]);
    /// ```
    #[inline]
    pub fn strides(&self) -> &[i64; R] {
        &self.strides
    }
}

impl DlTensorRef<'_> {
    /// A handle to `tensor`, whose shape and strides point into storage that the handle's lifetime
    /// borrows.
    #[inline]
    pub(crate) fn borrowing(tensor: DLTensor) -> Self {
        Self { tensor, _borrow: PhantomData }
    }

    /// A pointer to the `DLTensor`, valid while this handle lives (for C functions taking
    /// `const DLTensor*`).
    ///
    /// ```
    /// # let data = [1u8];
    /// # let md = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [1]).unwrap();
    /// let dl = dlspan::to_dlpack_tensor(&md).unwrap();
    /// let handle = dl.get();
    /// // SAFETY: the pointer is used while `handle` lives.
    /// assert_eq!(unsafe { (*handle.as_ptr()).ndim }, 1);
    /// ```
    #[inline]
    pub fn as_ptr(&self) -> *const DLTensor {
        &self.tensor
    }

    /// A mutable pointer to this handle's own `DLTensor` (for C functions taking `DLTensor*`),
    /// valid while the handle lives. Changing its fields changes only this handle.
    ///
    /// ```
    /// # let data = [1u8];
    /// # let md = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [1]).unwrap();
    /// let dl = dlspan::to_dlpack_tensor(&md).unwrap();
    /// let mut handle = dl.get();
    /// assert!(!handle.as_mut_ptr().is_null());
    /// ```
    #[inline]
    pub fn as_mut_ptr(&mut self) -> *mut DLTensor {
        &mut self.tensor
    }
}

impl Deref for DlTensorRef<'_> {
    type Target = DLTensor;

    #[inline]
    fn deref(&self) -> &DLTensor {
        &self.tensor
    }
}

/// Views that export to a [`DlpackTensor`] of rank `R`: [`Mdspan`] and [`MdspanMut`] of a
/// [`DlElement`] in any memory space.
///
/// ```
/// use dlspan::{HostMdspanMut, ToDlpackTensor};
/// let mut data = [1u8, 2, 3, 4];
/// let view = HostMdspanMut::<u8, 2>::from_slice(&mut data, [2, 2])?;
/// let dl = view.to_dlpack_tensor()?;
/// assert_eq!((dl.shape(), dl.strides()), (&[2, 2], &[2, 1]));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub trait ToDlpackTensor<const R: usize> {
    /// Exports the view; see [`to_dlpack_tensor`].
    ///
    /// # Errors
    ///
    /// As [`to_dlpack_tensor`].
    ///
    /// ```
    /// use dlspan::{HostMdspan, LayoutLeft, ToDlpackTensor};
    /// let data = [0.0f64; 6];
    /// let view = HostMdspan::<f64, 2, LayoutLeft>::from_slice(&data, [2, 3])?;
    /// assert_eq!(view.to_dlpack_tensor()?.strides(), &[1, 2]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    fn to_dlpack_tensor(&self) -> Result<DlpackTensor<'_, R>, DlpackError>;
}

/// Describes a view as a `DLTensor` (CCCL `cuda::to_dlpack_tensor`), without heap allocation.
///
/// `shape[i] = extent(i)`, `strides[i] = stride(i)`; `data` is the view's base pointer, null when
/// the view has no elements; `byte_offset` is 0, except for relaxed views with an offset, whose
/// offset it carries in bytes (CCCL drops it); the device is `kDLCPU`/0 for host views,
/// `kDLCUDA`/ordinal for device views, `kDLCUDAManaged`/0 for managed views ([section
/// E](crate::rules#e) of the rules page).
///
/// # Errors
///
/// [`DlpackError::PaddedSubbyteExport`] for padded sub-byte element types, which a plain `DLTensor`
/// cannot describe.
///
/// ```
/// use dlspan::{HostMdspan, LayoutStrideRelaxed, to_dlpack_tensor};
/// let data = [1i32, 2, 3, 4, 5];
/// let reversed = HostMdspan::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [5], [-1], 4).unwrap();
/// let dl = to_dlpack_tensor(&reversed).unwrap();
/// assert_eq!((dl.get().byte_offset, dl.strides()[0]), (16, -1));
/// ```
#[inline]
pub fn to_dlpack_tensor<V: ToDlpackTensor<R>, const R: usize>(view: &V) -> Result<DlpackTensor<'_, R>, DlpackError> {
    view.to_dlpack_tensor()
}

#[inline]
fn export<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout>(
    data: *mut T,
    mapping: &Mapping<R, E, L>,
    device: DLDevice,
) -> Result<DlpackTensor<'a, R>, DlpackError> {
    export_element(data.cast(), Element::of::<T>(), 0, mapping, device)
}

/// Describes a view of elements laid out as `element` says, whose element offset 0 starts
/// `start_bit` bits after `data`, as a `DLTensor` ([section E](crate::rules#e)); index 0 must lie at
/// a whole byte.
#[inline]
pub(crate) fn export_element<'a, const R: usize, E: Extents<R>, L: Layout>(
    data: *mut c_void,
    element: Element,
    start_bit: usize,
    mapping: &Mapping<R, E, L>,
    device: DLDevice,
) -> Result<DlpackTensor<'a, R>, DlpackError> {
    if element.padded {
        return Err(DlpackError::PaddedSubbyteExport);
    }
    let extents = mapping.extents();
    // Rule E4: a validated mapping's extents and strides fit isize (rules I14 and I17), hence
    // int64_t on every target whose isize is at most 64 bits.
    const { assert!(isize::BITS <= i64::BITS, "extents and strides are exported as int64_t") };
    let shape = extents.map(|e| e as i64);
    let strides = mapping.strides().map(|s| s as i64);
    // Emptiness needs no product: a zero extent.
    let empty = extents.contains(&0);
    // Validated: the bytes up to index 0 fit isize (their bits may not: counted in 128 bits).
    let byte_offset = if empty {
        0
    } else if element.bits % 8 == 0 {
        (mapping.offset() * (element.bits / 8)) as u64
    } else {
        ((start_bit as u128 + mapping.offset() as u128 * element.bits as u128) / 8) as u64
    };
    Ok(DlpackTensor {
        data: if empty { ptr::null_mut() } else { data },
        device,
        dtype: element.dtype,
        byte_offset,
        shape,
        strides,
        _borrow: PhantomData,
    })
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> ToDlpackTensor<R>
    for Mdspan<'_, T, R, E, L, S>
{
    #[inline]
    fn to_dlpack_tensor(&self) -> Result<DlpackTensor<'_, R>, DlpackError> {
        export(self.data_handle().cast_mut(), self.mapping(), self.device())
    }
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> ToDlpackTensor<R>
    for MdspanMut<'_, T, R, E, L, S>
{
    #[inline]
    fn to_dlpack_tensor(&self) -> Result<DlpackTensor<'_, R>, DlpackError> {
        export(self.data_handle(), self.mapping(), self.device())
    }
}

/// Seals [`FromDlTensor`]: only view types of this crate implement it.
pub(crate) mod sealed {
    /// A view type of this crate.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a view type of dlspan",
        note = "`FromDlTensor` is sealed: its `MUTABLE` constant is what keeps read-only managed tensors read-only, so only dlspan's own view types implement it"
    )]
    pub trait Sealed {}
}

/// View types a `DLTensor` converts into: [`Mdspan`] (shared) and [`MdspanMut`] (mutable) of any
/// element type, rank, extents, layout and memory space. Used by
/// [`ManagedTensor::view_as`](crate::ManagedTensor::view_as) to produce any view type.
///
/// Sealed: [`ManagedTensor::view_mut_as`](crate::ManagedTensor::view_mut_as) refuses a `READ_ONLY`
/// tensor only when [`MUTABLE`](Self::MUTABLE) says the view writes, so an outside implementation
/// that said otherwise could write to read-only memory.
///
/// ```
/// use dlspan::{FromDlTensor, HostMdspan, HostMdspanMut};
/// assert!(!<HostMdspan<'static, f32, 2> as FromDlTensor<'static>>::MUTABLE);
/// assert!(<HostMdspanMut<'static, f32, 2> as FromDlTensor<'static>>::MUTABLE);
/// ```
pub trait FromDlTensor<'a>: Sized + sealed::Sealed {
    /// Whether the view writes its elements (see the trait's example).
    const MUTABLE: bool;

    /// Validates `tensor` into this view type (as `from_dltensor_with` of each view type).
    ///
    /// # Errors
    ///
    /// The first rule of [section I](crate::rules#i) that fails.
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`] (or its `_mut` twin for mutable views), in the view's memory space.
    ///
    /// ```
    /// use dlspan::{FromDlTensor, HostMdspan, HostMdspanMut, ImportOptions, ToDlpackTensor};
    /// let mut data = [1i16, 2, 3, 4];
    /// let source = HostMdspanMut::<i16, 2>::from_slice(&mut data, [2, 2])?;
    /// let dl = source.to_dlpack_tensor()?;
    /// let tensor = dl.get();
    /// // SAFETY: `tensor` describes `data`, live for this borrow and not written meanwhile.
    /// let view = unsafe { HostMdspan::<i16, 2>::view_dltensor(&tensor, ImportOptions::default()) }?;
    /// assert_eq!(view[[1, 0]], 3);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    unsafe fn view_dltensor(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError>;

    /// The view, its device memory ordered by `order`: the event a
    /// [`ManagedTensor`](crate::ManagedTensor) keeps for the device views it lends, valid while the
    /// view borrows it ([rule C6](crate::rules#c6)). Host and managed views are returned as they are
    /// (the default); every view type of device memory overrides it (`view/origin_tests.rs` checks
    /// each one).
    #[doc(hidden)]
    #[inline]
    fn with_order(self, order: crate::space::OrderEvent) -> Self {
        let _ = order;
        self
    }
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed
    for Mdspan<'_, T, R, E, L, S>
{
}

impl<T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> sealed::Sealed
    for MdspanMut<'_, T, R, E, L, S>
{
}

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> FromDlTensor<'a>
    for Mdspan<'a, T, R, E, L, S>
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

impl<'a, T: DlElement, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace> FromDlTensor<'a>
    for MdspanMut<'a, T, R, E, L, S>
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

#[cfg(test)]
pub(crate) mod fast_path_tests;
