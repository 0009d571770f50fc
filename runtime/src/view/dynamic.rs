//! Dynamically typed views: [`DynMdspan`] (shared) and [`DynMdspanMut`] (mutable), whose data type
//! and rank are known only at run time — what a Python function or a kernel launcher receives.
//!
//! A dynamic view is a validated `DLTensor` that borrows its data: every rule of the typed import
//! that does not need the element type is checked when it is built (the same validators), and the
//! rest — data type, rank, alignment, the layout's stride rules — when it becomes a typed view with
//! [`typed`](DynMdspan::typed), which runs the typed import itself. Packed sub-byte data (two FP4
//! values per byte) is described exactly: its byte range is measured in bits.
//!
//! The rules are on the types and on the rules page ([D1–D3](crate::rules#d)).

use crate::check;
use crate::convert::{DlTensorRef, Element, FromDlTensor, ImportOptions, import, import_element, sealed};
use crate::dtype::{DlElement, PlainBits, storage_bits};
use crate::error::{DlpackError, LayoutKind};
use crate::ffi::{DLDataType, DLDevice, DLPackVersion, DLTensor};
use crate::space::{Host, MemorySpace};
use crate::view::{Dims, Extents, Layout, Mapping, Mdspan, MdspanMut, PackedMdspan, PackedMdspanMut};
use core::ffi::c_void;
use core::fmt;
use core::marker::PhantomData;
use core::ops::Range;
use core::ptr::{self, NonNull};

/// Axes a dynamic view keeps without allocating.
const INLINE_AXES: usize = 8;

/// Per-axis values of any rank: inline up to [`INLINE_AXES`] axes, on the heap beyond.
#[derive(Clone)]
enum Axes<T> {
    Inline { len: u8, values: [T; INLINE_AXES] },
    Heap(Box<[T]>),
}

impl<T: Copy + Default> Axes<T> {
    fn zeroed(len: usize) -> Self {
        if len <= INLINE_AXES {
            Self::Inline { len: len as u8, values: [T::default(); INLINE_AXES] }
        } else {
            Self::Heap(vec![T::default(); len].into_boxed_slice())
        }
    }

    fn from_slice(values: &[T]) -> Self {
        let mut axes = Self::zeroed(values.len());
        axes.as_mut_slice().copy_from_slice(values);
        axes
    }

    fn as_slice(&self) -> &[T] {
        match self {
            Self::Inline { len, values } => &values[..usize::from(*len)],
            Self::Heap(values) => values,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Self::Inline { len, values } => &mut values[..usize::from(*len)],
            Self::Heap(values) => values,
        }
    }
}

/// What both dynamic views hold: a `DLTensor` with its shape and strides, validated.
///
/// Invariants: `storage_bits(dtype, padded)` is `Some(bits)` (`padded` only for sub-byte dtypes);
/// the element at index `i` lies `8·byte_offset + Σ i_k·strides_k·bits` bits after `data`; when
/// there are elements, none lies below `data`, the bytes from the lowest to the end of the highest
/// fit `isize` and do not wrap around the address space ([`locate`](DynParts::locate) succeeds);
/// `data` is null only when there are no elements; the memory space accepted the device.
#[derive(Clone)]
struct DynParts<S: MemorySpace> {
    data: *mut u8,
    byte_offset: u64,
    dtype: DLDataType,
    padded: bool,
    /// The ordinal, and the ordering event of a cudarc allocation (kept by typed views made here).
    origin: S::Origin,
    extents: Axes<usize>,
    strides: Axes<isize>,
}

/// Where the elements of a dynamic view lie: the address of the byte holding the lowest element,
/// the bit in it where that element starts, and the span in elements from it to one past the
/// highest.
#[derive(Clone, Copy)]
struct Located {
    byte: usize,
    bit: usize,
    span: usize,
}

impl<S: MemorySpace> DynParts<S> {
    /// Validates a `DLTensor` by every rule of the typed import that does not need the element type,
    /// in the same order: device, `ndim >= 0`, a dtype with a storage layout, null data, shape,
    /// extents, strides (null by version), where the elements lie ([`locate`](Self::locate), which
    /// covers the byte offset); with `unique`, also that no two indices share an element.
    ///
    /// # Safety
    ///
    /// `tensor.shape` and `tensor.strides`, when non-null and `ndim > 0`, each point to `ndim`
    /// readable `int64_t`.
    #[inline]
    unsafe fn import(tensor: &DLTensor, options: ImportOptions, unique: bool) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        if let Some(parts) = unsafe { Self::import_fast(tensor, unique) } {
            return Ok(parts);
        }
        // SAFETY: forwarded to the caller.
        unsafe { Self::import_ordered(tensor, options, unique) }
    }

    /// The common case of [`import`](Self::import), as the typed import's fast path: the space's
    /// own device type, rank up to 8 with non-null data, shape and strides, a dtype of whole bytes
    /// with lanes of at least 8 bits,
    /// at least one element, non-negative strides and a byte offset below 2^32. The axes are
    /// padded to 4 or 8 (extent 1, stride 0, which reach nothing) so that two instantiations of the
    /// typed fast path's reach check serve every rank. `None` hands the tensor to
    /// [`import_ordered`](Self::import_ordered), which accepts everything this accepts.
    ///
    /// # Safety
    ///
    /// As for [`import`](Self::import).
    #[inline]
    unsafe fn import_fast(tensor: &DLTensor, unique: bool) -> Option<Self> {
        let ordinal = S::fast_accept(tensor.device)?;
        let rank = usize::try_from(tensor.ndim).ok().filter(|&rank| rank <= INLINE_AXES)?;
        let dtype = tensor.dtype;
        // Whole bytes, and no sub-byte lanes (whose padding only the ordered path considers).
        let bits = storage_bits(dtype, false).filter(|bits| bits % 8 == 0 && dtype.bits >= 8)?;
        let arrays_null = rank > 0 && (tensor.shape.is_null() || tensor.strides.is_null());
        if tensor.data.is_null() || arrays_null || tensor.byte_offset >= 1 << 32 {
            return None;
        }
        let (mut extents, mut strides) = ([1usize; INLINE_AXES], [0isize; INLINE_AXES]);
        if rank > 0 {
            // SAFETY: non-null, `ndim` entries (caller).
            let shape = unsafe { core::slice::from_raw_parts(tensor.shape, rank) };
            // SAFETY: as above.
            let given = unsafe { core::slice::from_raw_parts(tensor.strides, rank) };
            for axis in 0..rank {
                // A negative extent or stride is huge as unsigned and fails the reach check's bound.
                extents[axis] = shape[axis] as usize;
                strides[axis] = given[axis] as isize;
            }
        }
        // Non-negative strides within the typed fast path's bound: no element lies below index 0,
        // which is `byte_offset` (below 2^32) into `data`, and the bytes reached from there are at
        // most FAST_SPAN_BYTES, so a first element below 2^63 cannot wrap. Most tensors have at
        // most 4 axes: their check reads half the padding.
        let size = bits / 8;
        let within = if rank <= 4 {
            let (extents, strides) =
                ([extents[0], extents[1], extents[2], extents[3]], [strides[0], strides[1], strides[2], strides[3]]);
            check::reach_fast::<4, false>(&extents, &strides, 0, check::fast_bound(4, size))
        } else {
            check::reach_fast::<INLINE_AXES, false>(&extents, &strides, 0, check::fast_bound(INLINE_AXES, size))
        };
        let (first, wrapped) = tensor.data.addr().overflowing_add(tensor.byte_offset as usize);
        if !within || wrapped || first > isize::MAX as usize {
            return None;
        }
        if unique && !check::unique(&extents[..rank], &strides[..rank]) {
            return None;
        }
        Some(Self {
            data: tensor.data.cast(),
            byte_offset: tensor.byte_offset,
            dtype,
            padded: false,
            origin: S::origin(ordinal),
            extents: Axes::Inline { len: rank as u8, values: extents },
            strides: Axes::Inline { len: rank as u8, values: strides },
        })
    }

    /// [`import`](Self::import) rule by rule, in the typed import's order, reporting the first
    /// rule that fails.
    ///
    /// # Safety
    ///
    /// As for [`import`](Self::import).
    #[cold]
    #[inline(never)]
    unsafe fn import_ordered(tensor: &DLTensor, options: ImportOptions, unique: bool) -> Result<Self, DlpackError> {
        let ordinal = S::accept(tensor.device)?;
        let rank = usize::try_from(tensor.ndim).map_err(|_| DlpackError::NegativeNdim { ndim: tensor.ndim })?;
        let dtype = tensor.dtype;
        let padded = options.subbyte_padded && dtype.bits < 8;
        if storage_bits(dtype, padded).is_none() {
            return Err(DlpackError::UnsupportedDtype { dtype });
        }
        let shape = if rank == 0 || tensor.shape.is_null() {
            None
        } else {
            // SAFETY: non-null, `ndim` entries (caller).
            Some(unsafe { core::slice::from_raw_parts(tensor.shape, rank) })
        };
        if tensor.data.is_null() && !shape.is_some_and(|s| s.contains(&0)) {
            return Err(DlpackError::NullData);
        }
        let shape = match shape {
            Some(shape) => shape,
            None if rank == 0 => &[],
            None => return Err(DlpackError::NullShape),
        };
        let mut extents = Axes::zeroed(rank);
        for (axis, (&extent, slot)) in shape.iter().zip(extents.as_mut_slice()).enumerate() {
            *slot = check::extent(axis, extent)?;
        }
        let mut strides = Axes::zeroed(rank);
        if rank > 0 && tensor.strides.is_null() {
            if !options.null_strides_are_row_major() {
                return Err(DlpackError::NullStrides { version: options.version });
            }
            check::compact_strides_into(extents.as_slice(), LayoutKind::Right, strides.as_mut_slice())?;
        } else if rank > 0 {
            // SAFETY: non-null, `ndim` entries (caller).
            let given = unsafe { core::slice::from_raw_parts(tensor.strides, rank) };
            for (&stride, slot) in given.iter().zip(strides.as_mut_slice()) {
                *slot = check::stride(stride)?;
            }
        }
        let parts = Self {
            data: tensor.data.cast(),
            byte_offset: tensor.byte_offset,
            dtype,
            padded,
            origin: S::origin(ordinal),
            extents,
            strides,
        };
        parts.locate()?;
        if unique && !check::unique(parts.extents.as_slice(), parts.strides.as_slice()) {
            return Err(DlpackError::OverlappingStrides);
        }
        Ok(parts)
    }

    /// Rules I14 and I15 for any layout: where the elements lie, or `None` without elements. No element may
    /// lie below `data` (negative strides need a byte offset), and the bytes from the lowest
    /// element to the end of the highest must fit `isize` without wrapping. This accepts every
    /// tensor that the typed import accepts under some layout: the strict layouts measure from
    /// `data + byte_offset`, the relaxed one from `data`.
    fn locate(&self) -> Result<Option<Located>, DlpackError> {
        let (extents, strides) = (self.extents.as_slice(), self.strides.as_slice());
        // The lowest element's offset from index 0 (in elements, negated), by the same check that
        // reports it for a relaxed mapping without offset.
        let below = match check::reach::<false>(extents, strides, 0) {
            Ok(reach) if reach.size == 0 => return Ok(None),
            Ok(_) => 0,
            Err(DlpackError::NegativeReach { lowest }) => lowest.unsigned_abs() as usize,
            Err(error) => return Err(error),
        };
        let reach = check::reach::<false>(extents, strides, below)?;
        let bits = self.bits() as u128;
        let first_bit = u128::from(self.byte_offset) * 8;
        let Some(lowest_bit) = first_bit.checked_sub(below as u128 * bits) else {
            let lowest = (first_bit / bits) as i128 - below as i128;
            return Err(DlpackError::NegativeReach { lowest: i64::try_from(lowest).unwrap_or(i64::MIN) });
        };
        let byte = usize::try_from(lowest_bit / 8)
            .ok()
            .and_then(|offset| self.data.addr().checked_add(offset))
            .ok_or(DlpackError::SpanOverflow)?;
        let bit = (lowest_bit % 8) as usize;
        check::bit_range(byte, bit, reach.span, bits as usize)?;
        Ok(Some(Located { byte, bit, span: reach.span }))
    }

    /// The parts of a typed or packed view (valid by that view's invariants): `data` is its base,
    /// `byte_offset` the bytes to index 0.
    fn of_view(
        data: *mut u8,
        byte_offset: usize,
        element: Element,
        extents: &[usize],
        strides: &[isize],
        origin: S::Origin,
    ) -> Self {
        Self {
            data,
            byte_offset: byte_offset as u64,
            dtype: element.dtype,
            padded: element.padded,
            origin,
            extents: Axes::from_slice(extents),
            strides: Axes::from_slice(strides),
        }
    }

    fn bits(&self) -> usize {
        // Validated: a storage layout exists.
        storage_bits(self.dtype, self.padded).unwrap_or(8)
    }

    fn size(&self) -> usize {
        let extents = self.extents.as_slice();
        // Validated: the product fits isize when no extent is 0.
        if extents.contains(&0) { 0 } else { extents.iter().product() }
    }

    fn byte_range(&self) -> Range<usize> {
        match self.locate() {
            Ok(Some(Located { byte, bit, span })) => {
                // Validated: the byte count fits isize (the bit count is taken in 128 bits).
                let bytes = (bit as u128 + span as u128 * self.bits() as u128).div_ceil(8);
                byte..byte + bytes as usize
            }
            _ => self.data.addr()..self.data.addr(),
        }
    }

    /// A typed view's parts, by the typed import's rules (it runs on this view's own `DLTensor`),
    /// with this view's origin.
    #[allow(clippy::type_complexity)]
    fn typed<T: DlElement, const R: usize, L: Layout>(
        &self,
        unique: bool,
    ) -> Result<(NonNull<T>, Mapping<R, Dims<R>, L>, S::Origin), DlpackError> {
        let (ptr, mapping, _) = self.with_tensor::<R, _>(|tensor, options| {
            // SAFETY: when `ndim == R`, shape and strides point to `R` entries (`with_tensor`).
            unsafe { import::<T, R, Dims<R>, L, S>(tensor, options, unique) }
        })?;
        Ok((ptr, mapping, self.origin))
    }

    /// A packed view's parts, by the typed import's rules with positions in bits, with this view's
    /// origin.
    #[allow(clippy::type_complexity)]
    fn packed<T: DlElement, const R: usize, L: Layout>(
        &self,
        unique: bool,
    ) -> Result<(NonNull<u8>, usize, Mapping<R, Dims<R>, L>, S::Origin), DlpackError> {
        // As every packed constructor: a `u16` or a two-lane type cannot be addressed in bits.
        const { super::packed::assert_packable::<T>() };
        let (base, start_bit, mapping, _) = self.with_tensor::<R, _>(|tensor, options| {
            // SAFETY: when `ndim == R`, shape and strides point to `R` entries (`with_tensor`).
            unsafe { import_element::<R, Dims<R>, L, S>(tensor, options, unique, Element::packed::<T>()) }
        })?;
        Ok((base, start_bit, mapping, self.origin))
    }

    /// Runs `import` on this view's own `DLTensor` (shape and strides as `R` entries when the rank
    /// is `R`) and what its producer said.
    fn with_tensor<const R: usize, Out>(&self, import: impl FnOnce(&DLTensor, ImportOptions) -> Out) -> Out {
        let (mut shape, mut strides) = ([0i64; R], [0i64; R]);
        if self.extents.as_slice().len() == R {
            for axis in 0..R {
                // Validated: extents and strides fit isize, hence int64_t.
                shape[axis] = self.extents.as_slice()[axis] as i64;
                strides[axis] = self.strides.as_slice()[axis] as i64;
            }
        }
        let tensor = DLTensor {
            data: self.data.cast(),
            device: S::device(S::ordinal_of(self.origin)),
            ndim: i32::try_from(self.extents.as_slice().len()).unwrap_or(-1),
            dtype: self.dtype,
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: self.byte_offset,
        };
        import(&tensor, ImportOptions { version: DLPackVersion::CURRENT, subbyte_padded: self.padded })
    }

    fn export(&self) -> Result<DynDlpackTensor<'_>, DlpackError> {
        if self.padded {
            return Err(DlpackError::PaddedSubbyteExport);
        }
        let empty = self.size() == 0;
        Ok(DynDlpackTensor {
            data: if empty { ptr::null_mut() } else { self.data.cast() },
            device: S::device(S::ordinal_of(self.origin)),
            dtype: self.dtype,
            byte_offset: if empty { 0 } else { self.byte_offset },
            shape: int64(self.extents.as_slice()),
            strides: int64(self.strides.as_slice()),
            _borrow: PhantomData,
        })
    }

    fn fmt(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(name)
            .field("dtype", &format_args!("{}", self.dtype))
            .field("subbyte_padded", &self.padded)
            .field("device", &S::device(S::ordinal_of(self.origin)))
            .field("shape", &self.extents.as_slice())
            .field("strides", &self.strides.as_slice())
            .field("byte_offset", &self.byte_offset)
            .finish()
    }
}

/// Extents or strides as `int64_t` (rule E4): each was read from an `int64_t` of a validated tensor,
/// or comes from a typed view's mapping, whose values fit `isize`; the fallback is never taken.
fn int64<T: Copy>(values: &[T]) -> Axes<i64>
where
    i64: TryFrom<T>,
{
    let mut out = Axes::zeroed(values.len());
    for (&value, slot) in values.iter().zip(out.as_mut_slice()) {
        *slot = i64::try_from(value).unwrap_or(i64::MAX);
    }
    out
}

/// A shared view of a tensor whose data type and rank are known only at run time (in memory space
/// `S`): its dtype, shape, strides (in elements), device and the bytes it spans, packed sub-byte data
/// included. It becomes a typed view with [`typed`](Self::typed) (usually inside a
/// [`dispatch`](crate::dtype::dispatch) on its dtype); it has no element access of its own.
///
/// Built (`unsafe`, like [`to_host_mdspan`](crate::to_host_mdspan)) from a `DLTensor`, safely from a
/// [`ManagedTensor`](crate::ManagedTensor) (`view_as::<DynMdspan>()`) or from any typed view
/// (`From`). Like a typed view it borrows its data for `'a`; it never allocates up to 8 axes.
///
/// What is checked where ([rules D1–D3](crate::rules#d)):
/// - on construction, in the typed import's order: device, `ndim >= 0`, a dtype with a storage
///   layout ([`storage_bits`]; [`DlpackError::UnsupportedDtype`] otherwise), data non-null unless
///   empty, shape, extents, null strides by version; then, for a view with elements, that no
///   element lies below `data` ([`DlpackError::NegativeReach`]) and that the bytes from the lowest
///   element to the end of the highest fit `isize` without wrapping
///   ([`DlpackError::SpanOverflow`]); for [`DynMdspanMut`], unique strides. A tensor some typed
///   conversion accepts is always accepted (the strict layouts measure from `data + byte_offset`,
///   the relaxed one from `data`; this rule allows both);
/// - by [`typed`](Self::typed): data type, rank, alignment, and the layout's rules (compact or
///   positive strides, `data + byte_offset` for the strict layouts, a `byte_offset` of whole
///   elements for the relaxed one, and their span rules).
///
/// ```
/// use dlspan::{DynMdspan, ManagedTensor, LayoutRight, ffi::DLDataTypeCode};
/// let tensor = ManagedTensor::from_owner(vec![1.5f32, 2.5, 3.5, 4.5, 5.5, 6.5], [2, 3])?;
/// let view = tensor.view_as::<DynMdspan>()?;
/// assert_eq!((view.dtype().type_code(), view.shape(), view.strides()), (DLDataTypeCode::kDLFloat, &[2, 3][..], &[3, 1][..]));
/// assert_eq!(view.byte_range().len(), 24);
/// let typed = view.typed::<f32, 2, LayoutRight>()?;
/// assert_eq!(typed[[1, 2]], 6.5);
/// assert!(view.typed::<f64, 2, LayoutRight>().is_err());
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
///
/// Together with [`dispatch_tensor`](crate::dtype::dispatch_tensor) (a dtype and a rank known at
/// run time, to generic code), one function serves every dtype and rank:
///
/// ```
/// use dlspan::dtype::{cast, dispatch_tensor, Numeric, TensorVisitor};
/// use dlspan::{DlpackError, DynMdspan, HostMdspan, LayoutStrideRelaxed};
///
/// /// The sum of any tensor (accumulated in its `Numeric::Acc` type), as f64.
/// fn sum(x: &DynMdspan<'_>) -> Result<f64, DlpackError> {
///     struct Sum<'v, 'a>(&'v DynMdspan<'a>);
///     impl TensorVisitor for Sum<'_, '_> {
///         type Output = Result<f64, DlpackError>;
///         fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
///             let view = self.0.typed::<T, R, LayoutStrideRelaxed>()?;
///             Ok(cast(view.fold_unordered(T::Acc::ZERO, |acc, &x| acc.add(x.to_acc()))))
///         }
///     }
///     dispatch_tensor(x.dtype(), x.rank(), Sum(x))?
/// }
///
/// let ints = [1i16, 2, 3, 4, 5, 6];
/// let floats = [0.5f32, 1.5];
/// assert_eq!(sum(&HostMdspan::<i16, 2>::from_slice(&ints, [2, 3])?.into())?, 21.0);
/// assert_eq!(sum(&HostMdspan::<f32, 1>::from_slice(&floats, [2])?.into())?, 2.0);
/// # Ok::<(), DlpackError>(())
/// ```
#[derive(Clone)]
pub struct DynMdspan<'a, S: MemorySpace = Host> {
    parts: DynParts<S>,
    _borrow: PhantomData<&'a [u8]>,
}

/// A mutable view of a tensor whose data type and rank are known only at run time: the unique
/// twin of [`DynMdspan`] (its strides never let two indices share an element). It becomes a typed
/// mutable view with [`typed_mut`](Self::typed_mut) or [`into_typed`](Self::into_typed).
///
/// ```
/// use dlspan::{DynMdspanMut, HostMdspanMut, LayoutStride};
/// let mut data = [0u8; 6];
/// let mut view: DynMdspanMut<'_> = HostMdspanMut::<u8, 2>::from_slice(&mut data, [2, 3])?.into();
/// view.typed_mut::<u8, 2, LayoutStride>()?[[1, 1]] = 7;
/// assert_eq!(data, [0, 0, 0, 0, 7, 0]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub struct DynMdspanMut<'a, S: MemorySpace = Host> {
    parts: DynParts<S>,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: a shared dynamic view is a `&'a [u8]` of plain element values in disguise (every element
// type is `Send + Sync` and has no interior mutability): other threads only read through it.
unsafe impl<S: MemorySpace> Send for DynMdspan<'_, S> {}
// SAFETY: as for `Send`.
unsafe impl<S: MemorySpace> Sync for DynMdspan<'_, S> {}
// SAFETY: a mutable dynamic view is a `&'a mut [u8]` in disguise: moving it moves the unique access.
unsafe impl<S: MemorySpace> Send for DynMdspanMut<'_, S> {}
// SAFETY: `&DynMdspanMut` only reads (metadata, or shared views through `as_view`).
unsafe impl<S: MemorySpace> Sync for DynMdspanMut<'_, S> {}

/// The queries both dynamic views share.
macro_rules! dyn_queries {
    ($view:ident, $typed:ident, $mut_kw:literal) => {
        impl<S: MemorySpace> $view<'_, S> {
            /// The data type.
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.dtype().to_string(), "uint16");
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn dtype(&self) -> DLDataType {
                self.parts.dtype
            }

            /// Whether sub-byte data is padded, one lane per byte (`IS_SUBBYTE_TYPE_PADDED`);
            /// `false` for packed data and for dtypes of whole bytes.
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert!(!view.is_subbyte_padded());
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn is_subbyte_padded(&self) -> bool {
                self.parts.padded
            }

            /// The bits one element occupies in memory ([`storage_bits`]): 4 for packed FP4.
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.element_bits(), 16);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn element_bits(&self) -> usize {
                self.parts.bits()
            }

            /// The rank (`ndim`).
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.rank(), 2);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn rank(&self) -> usize {
                self.parts.extents.as_slice().len()
            }

            /// The extents.
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.shape(), [2, 2]);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn shape(&self) -> &[usize] {
                self.parts.extents.as_slice()
            }

            /// The strides, in elements (row-major ones when a legacy producer left them null).
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.strides(), [2, 1]);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn strides(&self) -> &[isize] {
                self.parts.strides.as_slice()
            }

            /// The number of elements.
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.size(), 4);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn size(&self) -> usize {
                self.parts.size()
            }

            /// Whether the view has no elements.
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert!(!view.is_empty());
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.parts.size() == 0
            }

            /// The tensor's `data` pointer (the base that `byte_offset` counts from); null or
            /// dangling when the view has no elements. A device address for device views.
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            /// # let address = data.as_ptr() as usize;
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.data_ptr() as usize, address);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn data_ptr(&self) -> *const u8 {
                self.parts.data
            }

            /// The tensor's `byte_offset`: where index 0 lies after [`data_ptr`](Self::data_ptr).
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.byte_offset(), 0);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn byte_offset(&self) -> u64 {
                self.parts.byte_offset
            }

            /// The addresses of the bytes the elements occupy: from the lowest byte holding an
            /// element to one past the highest (with gaps between strided elements, and the
            /// partly used bytes at both ends of packed data); empty when the view has no
            /// elements. Overlap tests between views compare these.
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            /// # let address = data.as_ptr() as usize;
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.byte_range(), address..address + 8);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn byte_range(&self) -> Range<usize> {
                self.parts.byte_range()
            }

            /// The device the view exports as (`kDLCPU` for host views, also of pinned memory).
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.device().device_type, dlspan::ffi::DLDeviceType::kDLCPU);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn device(&self) -> DLDevice {
                S::device(S::ordinal_of(self.parts.origin))
            }

            /// The memory space's record of the device (the CUDA ordinal of device views).
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// assert_eq!(view.ordinal(), ());
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn ordinal(&self) -> S::Ordinal {
                S::ordinal_of(self.parts.origin)
            }

            /// Describes the view as a `DLTensor` (shape and strides stored in the result, no
            /// allocation up to 8 axes); `data` is null when the view has no elements.
            ///
            /// # Errors
            ///
            /// [`DlpackError::PaddedSubbyteExport`] for padded sub-byte data (a plain `DLTensor` is
            /// packed).
            ///
            /// ```
            #[doc = concat!("# let ", $mut_kw, "data = [0u16; 4];")]
            #[doc = concat!("# let view: dlspan::", stringify!($view), " = dlspan::", stringify!($typed), "::<u16, 2>::from_slice(&", $mut_kw, "data, [2, 2])?.into();")]
            /// let exported = view.to_dlpack_tensor()?;
            /// assert_eq!((exported.get().ndim, exported.shape()), (2, &[2i64, 2][..]));
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn to_dlpack_tensor(&self) -> Result<DynDlpackTensor<'_>, DlpackError> {
                self.parts.export()
            }
        }

        impl<S: MemorySpace> fmt::Debug for $view<'_, S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.parts.fmt(stringify!($view), f)
            }
        }
    };
}

dyn_queries!(DynMdspan, HostMdspan, "");
dyn_queries!(DynMdspanMut, HostMdspanMut, "mut ");

impl<'a, S: MemorySpace> DynMdspan<'a, S> {
    /// A dynamic view of a `DLTensor` from a current (1.3) producer: sub-byte data packed, null
    /// strides an error for rank > 0.
    ///
    /// Name the memory space (`DynMdspan::<Host>::from_dltensor`) or annotate the binding
    /// (`let view: DynMdspan = …`): Rust does not infer a type parameter from its default, so a
    /// bare `DynMdspan::from_dltensor(&t)` with nothing else fixing `S` is error E0283.
    ///
    /// # Errors
    ///
    /// The first rule that fails (see the type's documentation).
    ///
    /// # Safety
    ///
    /// As for [`to_host_mdspan`](crate::to_host_mdspan) in `S`'s memory, for the bytes the tensor
    /// describes: `shape` and `strides`, when non-null and `ndim > 0`, each point to `ndim`
    /// readable `int64_t`; every byte holding an element (all of it, for the partly used bytes of
    /// packed data) stays alive and unwritten for `'a`, and holds a valid value of the dtype.
    ///
    /// ```
    /// use dlspan::{DynMdspan, ffi::*};
    /// let mut packed = [0x21u8, 0x07]; // FP4 values 0.5, 1.0, 6.0, low nibble first
    /// let mut shape = [3i64];
    /// let mut strides = [1i64];
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
    /// let view = unsafe { DynMdspan::<dlspan::Host>::from_dltensor(&tensor) }?;
    /// assert_eq!((view.element_bits(), view.byte_range().len()), (4, 2));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A dynamic view of a `DLTensor`, with what the producer said about it (version, padding).
    ///
    /// # Errors
    ///
    /// The first rule that fails (see the type's documentation).
    ///
    /// # Safety
    ///
    /// As for [`from_dltensor`](Self::from_dltensor).
    ///
    /// ```
    /// use dlspan::{DynMdspan, ImportOptions, ffi::*};
    /// let mut data = [1u8, 2, 3, 4];
    /// let mut shape = [2i64, 2];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: core::ptr::null_mut(), // a legacy producer: row-major
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, alive and unwritten while `view` lives.
    /// let view = unsafe { DynMdspan::<dlspan::Host>::from_dltensor_with(&tensor, ImportOptions::legacy()) }?;
    /// assert_eq!(view.strides(), [2, 1]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller (shape and strides arrays).
        let parts = unsafe { DynParts::import(tensor, options, false) }?;
        Ok(Self { parts, _borrow: PhantomData })
    }

    /// The typed view of element type `T`, rank `R` and layout `L`, by every rule of the typed
    /// import ([`to_host_mdspan`](crate::to_host_mdspan) and its twins): data type (with sub-byte
    /// packing), rank, alignment, the layout's stride rules.
    ///
    /// # Errors
    ///
    /// The first typed rule that fails: [`DlpackError::DtypeMismatch`],
    /// [`DlpackError::RankMismatch`], [`DlpackError::Misaligned`],
    /// [`DlpackError::StridesIncompatible`], ...
    ///
    /// ```
    /// use dlspan::{DlpackError, DynMdspan, HostMdspan, LayoutLeft, LayoutStride};
    /// let data = [1i32, 2, 3, 4, 5, 6];
    /// let view: DynMdspan = HostMdspan::<i32, 2, LayoutLeft>::from_slice(&data, [2, 3])?.into();
    /// assert_eq!(view.typed::<i32, 2, LayoutStride>()?[[1, 2]], 6);
    /// assert!(matches!(view.typed::<i32, 3, LayoutStride>(), Err(DlpackError::RankMismatch { .. })));
    /// # Ok::<(), DlpackError>(())
    /// ```
    #[inline]
    pub fn typed<T: DlElement, const R: usize, L: Layout>(
        &self,
    ) -> Result<Mdspan<'a, T, R, Dims<R>, L, S>, DlpackError> {
        let (ptr, mapping, origin) = self.parts.typed::<T, R, L>(false)?;
        // SAFETY: the typed import validated the mapping, byte range and alignment; the elements
        // are alive and unwritten for `'a` (this view's invariant).
        Ok(unsafe { Mdspan::from_parts_unchecked(ptr, mapping, origin) })
    }
}

impl<'a, S: MemorySpace> DynMdspan<'a, S> {
    /// The packed view of sub-byte values of `T` (packed data: DLPack's default), rank `R`,
    /// layout `L`, by the typed import's rules with positions in bits ([rule P2](crate::rules#p2)).
    ///
    /// # Errors
    ///
    /// As [`typed`](Self::typed); [`DlpackError::SubbytePacking`] for padded data.
    ///
    /// ```
    /// use dlspan::{DynMdspan, LayoutRight, PackedMdspan};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let bytes = [0x21u8, 0x07];
    /// let view: DynMdspan = PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3])?.into();
    /// assert_eq!((view.element_bits(), view.shape()), (4, &[3usize][..]));
    /// let packed = view.typed_packed::<Float4E2m1fn, 1, LayoutRight>()?;
    /// assert_eq!(packed.get([2]).map(|x| x.to_f32()), Some(6.0));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn typed_packed<T: DlElement + PlainBits, const R: usize, L: Layout>(
        &self,
    ) -> Result<PackedMdspan<'a, T, R, Dims<R>, L, S>, DlpackError> {
        let (base, start_bit, mapping, origin) = self.parts.packed::<T, R, L>(false)?;
        // SAFETY: validated by the typed import with positions in bits; the bytes are alive and
        // unwritten for `'a` (this view's invariant).
        Ok(unsafe { PackedMdspan::from_validated(base, start_bit, mapping, origin) })
    }
}

impl<'a, S: MemorySpace> DynMdspanMut<'a, S> {
    /// A mutable packed view of sub-byte values of `T`, borrowing this one; see
    /// [`DynMdspan::typed_packed`].
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::typed_packed`].
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, LayoutRight, PackedMdspanMut};
    /// use dlspan::dtype::Float6E2m3fn;
    /// let mut bytes = [0u8; 3];
    /// let mut view: DynMdspanMut = PackedMdspanMut::<Float6E2m3fn, 1>::from_bytes(&mut bytes, [4])?.into();
    /// view.typed_packed_mut::<Float6E2m3fn, 1, LayoutRight>()?.fill(Float6E2m3fn::from_f32(1.0));
    /// assert_eq!(view.as_view().typed_packed::<Float6E2m3fn, 1, LayoutRight>()?.get([3]).unwrap().to_f32(), 1.0);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn typed_packed_mut<T: DlElement + PlainBits, const R: usize, L: Layout>(
        &mut self,
    ) -> Result<PackedMdspanMut<'_, T, R, Dims<R>, L, S>, DlpackError> {
        let (base, start_bit, mapping, origin) = self.parts.packed::<T, R, L>(true)?;
        // SAFETY: validated (unique included); the bytes are reached only through this borrow.
        Ok(unsafe { PackedMdspanMut::from_validated(base, start_bit, mapping, origin) })
    }

    /// The mutable packed view of sub-byte values of `T`, consuming this one; see
    /// [`DynMdspan::typed_packed`].
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::typed_packed`].
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, LayoutRight, PackedMdspanMut};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let mut bytes = [0u8; 2];
    /// let view: DynMdspanMut = PackedMdspanMut::<Float4E2m1fn, 1>::from_bytes(&mut bytes, [3])?.into();
    /// view.into_typed_packed::<Float4E2m1fn, 1, LayoutRight>()?.set([2], Float4E2m1fn::from_f32(6.0));
    /// assert_eq!(bytes, [0x00, 0x07]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn into_typed_packed<T: DlElement + PlainBits, const R: usize, L: Layout>(
        self,
    ) -> Result<PackedMdspanMut<'a, T, R, Dims<R>, L, S>, DlpackError> {
        let (base, start_bit, mapping, origin) = self.parts.packed::<T, R, L>(true)?;
        // SAFETY: validated (unique included); this view's unique access for `'a` moves on.
        Ok(unsafe { PackedMdspanMut::from_validated(base, start_bit, mapping, origin) })
    }

    /// A mutable dynamic view of a `DLTensor` from a current (1.3) producer.
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::from_dltensor`], and [`DlpackError::OverlappingStrides`] when two indices
    /// share an element.
    ///
    /// # Safety
    ///
    /// As for [`DynMdspan::from_dltensor`], with the bytes valid for writes and accessed through
    /// nothing else for `'a`.
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, LayoutRight, ffi::*};
    /// let mut data = [0i64; 3];
    /// let mut shape = [3i64];
    /// let mut strides = [1i64];
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 1,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLInt, 64, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, which nothing else touches while `view` lives.
    /// let view = unsafe { DynMdspanMut::<dlspan::Host>::from_dltensor(&tensor) }?;
    /// view.into_typed::<i64, 1, LayoutRight>()?[[2]] = 9;
    /// assert_eq!(data, [0, 0, 9]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_dltensor(tensor: &'a DLTensor) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, ImportOptions::CURRENT) }
    }

    /// A mutable dynamic view of a `DLTensor`, with what the producer said about it.
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
    /// use dlspan::{DlpackError, DynMdspanMut, ImportOptions, ffi::*};
    /// let mut data = [0u8; 4];
    /// let mut shape = [2i64, 2];
    /// let mut strides = [0i64, 1]; // broadcast rows: not unique
    /// let tensor = DLTensor {
    ///     data: data.as_mut_ptr().cast(),
    ///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///     ndim: 2,
    ///     dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///     shape: shape.as_mut_ptr(),
    ///     strides: strides.as_mut_ptr(),
    ///     byte_offset: 0,
    /// };
    /// // SAFETY: the tensor describes `data`, which nothing else touches while a view lives.
    /// let refused = unsafe { DynMdspanMut::<dlspan::Host>::from_dltensor_with(&tensor, ImportOptions::CURRENT) };
    /// assert!(matches!(refused, Err(DlpackError::OverlappingStrides)));
    /// ```
    #[inline]
    pub unsafe fn from_dltensor_with(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller (shape and strides arrays).
        let parts = unsafe { DynParts::import(tensor, options, true) }?;
        Ok(Self { parts, _borrow: PhantomData })
    }

    /// A shared dynamic view of the same elements, borrowing this one.
    ///
    /// ```
    /// # let mut data = [0u16; 4];
    /// # let view: dlspan::DynMdspanMut = dlspan::HostMdspanMut::<u16, 2>::from_slice(&mut data, [2, 2])?.into();
    /// assert_eq!(view.as_view().shape(), view.shape());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn as_view(&self) -> DynMdspan<'_, S> {
        DynMdspan { parts: self.parts.clone(), _borrow: PhantomData }
    }

    /// A mutable dynamic view of the same elements, borrowing this one (as `&mut *x` reborrows a
    /// `&mut [T]`): for passing it on without giving it up.
    ///
    /// ```
    /// # let mut data = [0u8; 4];
    /// # let mut view: dlspan::DynMdspanMut = dlspan::HostMdspanMut::<u8, 1>::from_slice(&mut data, [4])?.into();
    /// fn rank(view: dlspan::DynMdspanMut<'_>) -> usize {
    ///     view.rank()
    /// }
    /// assert_eq!(rank(view.reborrow()), 1);
    /// assert_eq!(view.rank(), 1); // still usable
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn reborrow(&mut self) -> DynMdspanMut<'_, S> {
        DynMdspanMut { parts: self.parts.clone(), _borrow: PhantomData }
    }

    /// A typed mutable view, borrowing this one; see [`DynMdspan::typed`] for the rules.
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::typed`].
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, HostMdspanMut, LayoutStrideRelaxed};
    /// let mut data = [1.0f64, 2.0, 3.0];
    /// let mut view: DynMdspanMut = HostMdspanMut::<f64, 1>::from_slice(&mut data, [3])?.into();
    /// view.typed_mut::<f64, 1, LayoutStrideRelaxed>()?.for_each_unordered(|x| *x *= 2.0);
    /// assert_eq!(data, [2.0, 4.0, 6.0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn typed_mut<T: DlElement, const R: usize, L: Layout>(
        &mut self,
    ) -> Result<MdspanMut<'_, T, R, Dims<R>, L, S>, DlpackError> {
        let (ptr, mapping, origin) = self.parts.typed::<T, R, L>(true)?;
        // SAFETY: validated by the typed import (unique mapping included); the elements are valid
        // for writes and reachable through nothing else while `self` is borrowed mutably.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, mapping, origin) })
    }

    /// The typed mutable view, consuming this one; see [`DynMdspan::typed`] for the rules.
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::typed`].
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, HostMdspanMut, LayoutRight};
    /// let mut data = [0u32; 4];
    /// let view: DynMdspanMut = HostMdspanMut::<u32, 2>::from_slice(&mut data, [2, 2])?.into();
    /// let mut typed = view.into_typed::<u32, 2, LayoutRight>()?;
    /// typed[[1, 0]] = 3;
    /// assert_eq!(data, [0, 0, 3, 0]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn into_typed<T: DlElement, const R: usize, L: Layout>(
        self,
    ) -> Result<MdspanMut<'a, T, R, Dims<R>, L, S>, DlpackError> {
        let (ptr, mapping, origin) = self.parts.typed::<T, R, L>(true)?;
        // SAFETY: validated by the typed import; this view's unique access for `'a` moves into the
        // typed view.
        Ok(unsafe { MdspanMut::from_parts_unchecked(ptr, mapping, origin) })
    }
}

/// `From` a typed or packed view: its base, the bytes to index 0, and its element's layout.
macro_rules! from_view {
    ($($view:ident => $dyn:ident, [$($bound:tt)+], $element:ident, $index_zero_byte:expr;)*) => {$(
        impl<'a, T: $($bound)+, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
            From<$view<'a, T, R, E, L, S>> for $dyn<'a, S>
        {
            #[inline]
            fn from(view: $view<'a, T, R, E, L, S>) -> Self {
                let index_zero_byte: fn(&$view<'a, T, R, E, L, S>) -> usize = $index_zero_byte;
                let parts = DynParts::of_view(
                    view.data_handle() as *mut u8,
                    index_zero_byte(&view),
                    Element::$element::<T>(),
                    &view.extents(),
                    &view.strides(),
                    view.origin(),
                );
                Self { parts, _borrow: PhantomData }
            }
        }
    )*};
}

from_view! {
    Mdspan => DynMdspan, [DlElement], of, |view| view.offset() * size_of::<T>();
    MdspanMut => DynMdspanMut, [DlElement], of, |view| view.offset() * size_of::<T>();
    PackedMdspan => DynMdspan, [DlElement + PlainBits], packed, PackedMdspan::index_zero_byte;
    PackedMdspanMut => DynMdspanMut, [DlElement + PlainBits], packed, PackedMdspanMut::index_zero_byte;
}

impl<S: MemorySpace> sealed::Sealed for DynMdspan<'_, S> {}
impl<S: MemorySpace> sealed::Sealed for DynMdspanMut<'_, S> {}

impl<'a, S: MemorySpace> FromDlTensor<'a> for DynMdspan<'a, S> {
    const MUTABLE: bool = false;

    #[inline]
    unsafe fn view_dltensor(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, options) }
    }
    #[inline]
    fn with_order(mut self, order: crate::space::OrderEvent) -> Self {
        self.parts.origin = S::with_order(self.parts.origin, order);
        self
    }
}

impl<'a, S: MemorySpace> FromDlTensor<'a> for DynMdspanMut<'a, S> {
    const MUTABLE: bool = true;

    #[inline]
    unsafe fn view_dltensor(tensor: &'a DLTensor, options: ImportOptions) -> Result<Self, DlpackError> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::from_dltensor_with(tensor, options) }
    }
    #[inline]
    fn with_order(mut self, order: crate::space::OrderEvent) -> Self {
        self.parts.origin = S::with_order(self.parts.origin, order);
        self
    }
}

/// A dynamic view exported as a `DLTensor`: the fields with shape and strides stored inline (no
/// allocation up to 8 axes). As [`DlpackTensor`](crate::DlpackTensor), the `DLTensor` is only
/// handed out by [`get`](Self::get), bound to a borrow of the wrapper.
///
/// ```
/// use dlspan::{DynMdspan, HostMdspan, LayoutStrideRelaxed, ffi::DLDeviceType};
/// let data = [1i32, 2, 3, 4, 5];
/// let reversed = HostMdspan::<i32, 1, LayoutStrideRelaxed>::from_slice_relaxed(&data, [5], [-1], 4)?;
/// let view: DynMdspan = reversed.into();
/// let exported = view.to_dlpack_tensor()?;
/// let tensor = exported.get();
/// assert_eq!((tensor.byte_offset, exported.strides()), (16, &[-1i64][..]));
/// assert_eq!(tensor.device.device_type, DLDeviceType::kDLCPU);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub struct DynDlpackTensor<'a> {
    data: *mut c_void,
    device: DLDevice,
    dtype: DLDataType,
    byte_offset: u64,
    shape: Axes<i64>,
    strides: Axes<i64>,
    _borrow: PhantomData<&'a ()>,
}

impl DynDlpackTensor<'_> {
    /// The `DLTensor`, borrowing the wrapper.
    ///
    /// ```
    /// # let data = [1u8, 2];
    /// # let view: dlspan::DynMdspan = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [2])?.into();
    /// let exported = view.to_dlpack_tensor()?;
    /// assert_eq!(exported.get().ndim, 1);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn get(&self) -> DlTensorRef<'_> {
        let rank = self.shape.as_slice().len();
        let (shape, strides) = if rank == 0 {
            (ptr::null_mut(), ptr::null_mut())
        } else {
            // Consumers only read shape and strides (DLPack: the producer owns them).
            (self.shape.as_slice().as_ptr().cast_mut(), self.strides.as_slice().as_ptr().cast_mut())
        };
        DlTensorRef::borrowing(DLTensor {
            data: self.data,
            device: self.device,
            ndim: rank as i32,
            dtype: self.dtype,
            shape,
            strides,
            byte_offset: self.byte_offset,
        })
    }

    /// The exported shape.
    ///
    /// ```
    /// # let data = [1u8, 2];
    /// # let view: dlspan::DynMdspan = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [2])?.into();
    /// assert_eq!(view.to_dlpack_tensor()?.shape(), &[2]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn shape(&self) -> &[i64] {
        self.shape.as_slice()
    }

    /// The exported strides, in elements.
    ///
    /// ```
    /// # let data = [1u8, 2];
    /// # let view: dlspan::DynMdspan = dlspan::HostMdspan::<u8, 1>::from_slice(&data, [2])?.into();
    /// assert_eq!(view.to_dlpack_tensor()?.strides(), &[1]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn strides(&self) -> &[i64] {
        self.strides.as_slice()
    }
}

impl fmt::Debug for DynDlpackTensor<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynDlpackTensor")
            .field("data", &self.data)
            .field("device", &self.device)
            .field("dtype", &format_args!("{}", self.dtype))
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("byte_offset", &self.byte_offset)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::fast_path_tests::{Input, input};
    use crate::dtype::{Float4E2m1fn, Float6E2m3fnX4};
    use crate::{Device, Host};
    use proptest::prelude::*;
    use proptest::test_runner::{TestCaseError, TestRunner};

    /// Runs both import paths of a dynamic view on `input` as rank `rank`, data type `dtype`:
    /// whatever the fast path accepts, the ordered one accepts identically. Returns how many each
    /// accepted.
    fn agree<S: MemorySpace>(input: &Input, rank: usize, dtype: DLDataType) -> Result<[usize; 2], TestCaseError> {
        let mut shape = input.shape;
        let mut strides = input.strides(rank);
        let size = storage_bits(dtype, false).unwrap_or(8).div_ceil(8) as u64;
        let tensor = DLTensor {
            data: core::ptr::without_provenance_mut(input.data),
            device: input.device,
            ndim: input.ndim.unwrap_or(rank as i32),
            dtype: input.dtype.unwrap_or(dtype),
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: if input.whole_elements { input.byte_offset.wrapping_mul(size) } else { input.byte_offset },
        };
        let mut counts = [0; 2];
        for unique in [false, true] {
            // SAFETY: shape and strides hold 8 entries (the rank is at most 8); nothing reads data.
            let fast = unsafe { DynParts::<S>::import_fast(&tensor, unique) };
            // SAFETY: as above.
            let ordered = unsafe { DynParts::<S>::import_ordered(&tensor, ImportOptions::CURRENT, unique) };
            if let Some(fast) = fast {
                let Ok(ordered) = ordered else {
                    return Err(TestCaseError::fail(format!("fast path accepted what the ordered refuses: {input:?}")));
                };
                let parts = |p: &DynParts<S>| {
                    (
                        p.data,
                        p.byte_offset,
                        p.dtype,
                        p.padded,
                        p.extents.as_slice().to_vec(),
                        p.strides.as_slice().to_vec(),
                    )
                };
                prop_assert_eq!(parts(&fast), parts(&ordered), "{:?}", input);
                counts[0] += 1;
                counts[1] += 1;
            } else {
                counts[1] += usize::from(ordered.is_ok());
            }
        }
        Ok(counts)
    }

    #[test]
    fn fast_path_accepts_only_what_the_ordered_path_accepts() {
        let cases = 3000;
        let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
        let counts = core::cell::Cell::new([0usize; 2]);
        TestRunner::new(config)
            .run(&(input(), 0usize..=8), |(input, rank)| {
                for dtype in [u8::DTYPE, f32::DTYPE, f64::DTYPE, Float6E2m3fnX4::DTYPE, Float4E2m1fn::DTYPE] {
                    for [fast, ordered] in [agree::<Host>(&input, rank, dtype)?, agree::<Device>(&input, rank, dtype)?]
                    {
                        let [f, o] = counts.get();
                        counts.set([f + fast, o + ordered]);
                    }
                }
                Ok(())
            })
            .unwrap();
        let [fast, ordered] = counts.get();
        assert!(fast > cases as usize && ordered > fast, "fast {fast}, ordered {ordered}");
    }
}
