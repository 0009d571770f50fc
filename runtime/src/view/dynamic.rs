//! Dynamically typed views: [`DynMdspan`] (shared) and [`DynMdspanMut`] (mutable), whose data type
//! and rank are known only at run time — what a Python function or a kernel launcher receives.
//!
//! A dynamic view is a validated `DLTensor` that borrows its data: every rule of the typed import
//! that does not need the element type is checked when it is built (the same validators), and the
//! rest — data type, rank, alignment, the layout's stride rules — when it becomes a typed view with
//! [`typed`](DynMdspan::typed), which runs the typed import itself. Packed sub-byte data (two FP4
//! values per byte) is described exactly: its byte range is measured in bits.
//!
//! This file holds the views and their queries; their DLPack doors (built from a `DLTensor`, made
//! typed, exported) are in the crate's DLPack module, above the views. The rules are on the types
//! and on the rules page ([D1–D3](crate::rules#d)).

use super::mdspan::{Mdspan, MdspanMut};
use super::packed::{PackedMdspan, PackedMdspanMut};
use crate::check;
use crate::dtype::{DlElement, PlainBits, Validity, is_padded_subbyte, storage_bits};
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice};
use crate::index::{Axes, Extents, Layout};
use crate::space::{Host, MemorySpace, OrderEvent};
use core::fmt;
use core::marker::PhantomData;
use core::ops::Range;

/// What both dynamic views hold: a `DLTensor` with its shape and strides, validated.
///
/// Invariants: `storage_bits(dtype, padded)` is `Some(bits)` (`padded` only for sub-byte dtypes);
/// the element at index `i` lies `8·byte_offset + Σ i_k·strides_k·bits` bits after `data`; when
/// there are elements, none lies below `data`, the bytes from the lowest to the end of the highest
/// fit `isize` and do not wrap around the address space ([`locate`](DynParts::locate) succeeds);
/// `data` is null only when there are no elements; the memory space accepted the device.
#[derive(Clone)]
pub(crate) struct DynParts<S: MemorySpace> {
    pub(crate) data: *mut u8,
    pub(crate) byte_offset: u64,
    pub(crate) dtype: DLDataType,
    pub(crate) padded: bool,
    /// Which values the memory must keep: its Rust element type's validity for a view made from a
    /// typed one (Rust `bool`s must stay 0 or 1), [`Validity::AnyBits`] for foreign memory, whose
    /// bytes DLPack lets be anything. Typed mutable views made here must keep it.
    pub(crate) validity: Validity,
    /// The ordinal, and the ordering event of a cudarc allocation (kept by typed views made here).
    pub(crate) origin: S::Origin,
    pub(crate) extents: Axes<usize>,
    pub(crate) strides: Axes<isize>,
}

/// Where the elements of a dynamic view lie: the address of the byte holding the lowest element,
/// the bit in it where that element starts, and the span in elements from it to one past the
/// highest.
#[derive(Clone, Copy)]
pub(crate) struct Located {
    byte: usize,
    bit: usize,
    span: usize,
}

impl<S: MemorySpace> DynParts<S> {
    /// Rules I14 and I15 for any layout: where the elements lie, or `None` without elements. No element may
    /// lie below `data` (negative strides need a byte offset), and the bytes from the lowest
    /// element to the end of the highest must fit `isize` without wrapping. This accepts every
    /// tensor that the typed import accepts under some layout: the strict layouts measure from
    /// `data + byte_offset`, the relaxed one from `data`.
    pub(crate) fn locate(&self) -> Result<Option<Located>, DlpackError> {
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
    /// `byte_offset` the bytes to index 0, `dtype` and `padded` its element's data type and whether
    /// it is padded sub-byte storage.
    fn of_view(
        data: *mut u8,
        byte_offset: usize,
        (dtype, padded, validity): (DLDataType, bool, Validity),
        extents: &[usize],
        strides: &[isize],
        origin: S::Origin,
    ) -> Self {
        Self {
            data,
            byte_offset: byte_offset as u64,
            dtype,
            padded,
            validity,
            origin,
            extents: Axes::from_slice(extents),
            strides: Axes::from_slice(strides),
        }
    }

    pub(crate) fn bits(&self) -> usize {
        // Validated: a storage layout exists.
        storage_bits(self.dtype, self.padded).unwrap_or(8)
    }

    pub(crate) fn size(&self) -> usize {
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
///   layout (`bits · lanes` bits, or one byte per padded sub-byte lane;
///   [`DlpackError::UnsupportedDtype`] otherwise), data non-null unless
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
    ($view:ident, $typed:ident, $mut_kw:literal, $ptr_ty:ty, $to_ptr:ident) => {
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

            /// The bits one element occupies in memory: `bits · lanes`, or 8 per lane for padded
            /// sub-byte data; 4 for packed FP4.
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
            /// assert_eq!(view.data_handle() as usize, address);
            /// # Ok::<(), dlspan::DlpackError>(())
            /// ```
            #[inline]
            pub fn data_handle(&self) -> $ptr_ty {
                self.parts.data.$to_ptr()
            }

            /// The tensor's `byte_offset`: where index 0 lies after [`data_handle`](Self::data_handle).
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

            /// The memory space's record of the device and, for a cudarc allocation, its ordering
            /// event (the `cuda` module's operations read it, as a typed view's).
            #[inline]
            #[allow(dead_code)] // read by the `cuda` module only
            pub(crate) fn origin(&self) -> S::Origin {
                self.parts.origin
            }
        }

        impl<S: MemorySpace> fmt::Debug for $view<'_, S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.parts.fmt(stringify!($view), f)
            }
        }
    };
}

dyn_queries!(DynMdspan, HostMdspan, "", *const u8, cast_const);
dyn_queries!(DynMdspanMut, HostMdspanMut, "mut ", *mut u8, cast);

macro_rules! dyn_parts {
    ($view:ident) => {
        impl<'a, S: MemorySpace> $view<'a, S> {
            /// A view of validated parts.
            ///
            /// # Safety
            ///
            /// `parts` satisfy [`DynParts`]' invariants, and the bytes they describe stay alive (and,
            /// for a mutable view, reached through nothing else) for `'a`, as the view's type says.
            #[inline]
            pub(crate) unsafe fn from_parts(parts: DynParts<S>) -> Self {
                Self { parts, _borrow: PhantomData }
            }

            /// The validated parts.
            #[inline]
            pub(crate) fn parts(&self) -> &DynParts<S> {
                &self.parts
            }

            /// The view, its device memory ordered by `order` (see [`MemorySpace::with_order`]).
            #[inline]
            pub(crate) fn with_order(mut self, order: OrderEvent) -> Self {
                self.parts.origin = S::with_order(self.parts.origin, order);
                self
            }
        }
    };
}

dyn_parts!(DynMdspan);
dyn_parts!(DynMdspanMut);

impl<S: MemorySpace> DynMdspanMut<'_, S> {
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
}

/// `From` a typed or packed view: its base, the bytes to index 0, and its element's data type and
/// padding (packed views hold packed sub-byte values).
macro_rules! from_view {
    ($($view:ident => $dyn:ident, [$($bound:tt)+], $element:expr, $index_zero_byte:expr;)*) => {$(
        impl<'a, T: $($bound)+, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>
            From<$view<'a, T, R, E, L, S>> for $dyn<'a, S>
        {
            #[inline]
            fn from(view: $view<'a, T, R, E, L, S>) -> Self {
                let index_zero_byte: fn(&$view<'a, T, R, E, L, S>) -> usize = $index_zero_byte;
                let parts = DynParts::of_view(
                    view.data_handle() as *mut u8,
                    index_zero_byte(&view),
                    $element,
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
    Mdspan => DynMdspan, [DlElement], (T::DTYPE, is_padded_subbyte::<T>(), T::VALIDITY), |view| view.offset() * size_of::<T>();
    MdspanMut => DynMdspanMut, [DlElement], (T::DTYPE, is_padded_subbyte::<T>(), T::VALIDITY), |view| view.offset() * size_of::<T>();
    PackedMdspan => DynMdspan, [DlElement + PlainBits], (T::DTYPE, false, T::VALIDITY), PackedMdspan::index_zero_byte;
    PackedMdspanMut => DynMdspanMut, [DlElement + PlainBits], (T::DTYPE, false, T::VALIDITY), PackedMdspanMut::index_zero_byte;
}
