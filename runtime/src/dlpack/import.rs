//! The typed import engine: a `DLTensor` validated for a view of element type `T`, rank `R`,
//! extents `E`, layout `L` and memory space `S`, by every rule of [section I](crate::rules#i) of
//! the rules page. A fast path takes the common tensors; everything else takes the ordered checks,
//! which report the first rule that fails. Packed sub-byte views and the dynamic views' typed
//! conversions run the same engine with the element described at run time ([`import_element`]).

use crate::check;
use crate::dtype::{DlElement, is_padded_subbyte};
use crate::error::{DlpackError, LayoutKind};
use crate::ffi::{DLDataType, DLPackVersion, DLTensor};
use crate::index::{Extents, Layout, Mapping};
use crate::space::MemorySpace;
use crate::view::first_non_boolean_byte;
use core::mem::{align_of, size_of};
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
    match unsafe { first_non_boolean_byte(base, mapping) } {
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
    } else if element.bits.is_multiple_of(8) {
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
        check::compact_strides(&extents, LayoutKind::Right)?
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

#[cfg(test)]
pub(crate) mod fast_path_tests;
