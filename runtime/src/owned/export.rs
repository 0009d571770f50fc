//! Exporters: Rust owners out as managed tensors, with one allocation besides the owner.
//!
//! The allocation is a `Context`: the DLPack header (versioned, or legacy after
//! [`ManagedTensor::into_raw_legacy`]), the shape and strides inline, and the owner. The deleter
//! turns the header pointer back into the context (the header is its first field), frees it, and
//! drops the owner inside `catch_unwind`, so a panicking `Drop` never unwinds into C.

use super::ManagedTensor;
use crate::buffer::AlignedBuffer;
use crate::dlpack::Element;
use crate::dtype::DlElement;
use crate::error::{DlpackError, LayoutKind};
use crate::ffi::{
    DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLPackVersion, DLTensor,
};
use crate::index::{Dims, LayoutStrideRelaxed, Mapping};
use core::ffi::c_void;
use core::mem::{ManuallyDrop, size_of};
use core::ptr::{self, NonNull};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// Where an owner keeps its elements.
///
/// ```
/// use dlspan::{Storage, TensorOwner};
/// let mut v = vec![1u8, 2, 3];
/// let s: Storage<u8> = v.storage();
/// assert_eq!((s.len, s.writable), (3, true));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Storage<T> {
    /// The first element (dangling but aligned when `len` is 0).
    pub ptr: NonNull<T>,
    /// Number of elements.
    pub len: usize,
    /// Whether consumers may write the elements: `false` exports `READ_ONLY`.
    pub writable: bool,
}

/// An owner of host memory that can back a managed tensor: the tensor's deleter drops it.
///
/// Implemented for `Vec<T>`, `Box<[T]>` (writable), `Arc<[T]>` (shared, exported `READ_ONLY`),
/// `&'static [T]` (read-only) and `&'static mut [T]` (writable).
///
/// ```
/// use dlspan::{ManagedTensor, Storage, TensorOwner};
/// use core::ptr::NonNull;
///
/// /// A buffer with a header in front of the elements.
/// struct Frame { header: u32, pixels: Vec<u16> }
///
/// // SAFETY: `pixels` is a heap buffer: its pointer stays valid for `len` elements, unmoved, until the
/// // Frame is dropped, and nothing else reaches it.
/// unsafe impl TensorOwner for Frame {
///     type Elem = u16;
///     fn storage(&mut self) -> Storage<u16> {
///         Storage { ptr: NonNull::new(self.pixels.as_mut_ptr()).unwrap(), len: self.pixels.len(), writable: true }
///     }
/// }
///
/// let t = ManagedTensor::from_owner(Frame { header: 7, pixels: vec![1, 2, 3, 4] }, [2, 2])?;
/// assert_eq!(t.shape(), &[2, 2]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
///
/// # Safety
///
/// `storage` is called once, after the owner has been moved into its final place (a heap
/// allocation that does not move). The returned pointer must be aligned, valid for reads of `len`
/// elements (and writes, when `writable`), hold valid values of `Elem`, and stay so, unwritten by
/// anything else, until the owner is dropped; nothing but that drop touches the owner afterwards.
/// A writable export's consumers write what DLPack lets them: for `kDLBool` any byte (rule I18), so
/// an owner of `bool`s must not read its elements as `bool` when dropped (`Vec`, `Box` and the
/// other owners dlspan implements never read them).
pub unsafe trait TensorOwner: Send + 'static {
    /// The element type.
    type Elem: DlElement;

    /// The owner's elements.
    fn storage(&mut self) -> Storage<Self::Elem>;
}

// SAFETY: a Vec's buffer stays at its address while the Vec is neither grown nor dropped, and the
// context never touches the Vec again until dropping it.
unsafe impl<T: DlElement> TensorOwner for Vec<T> {
    type Elem = T;

    fn storage(&mut self) -> Storage<T> {
        // `Vec::as_mut_ptr` is never null (dangling and aligned when empty).
        Storage { ptr: NonNull::new(self.as_mut_ptr()).unwrap_or(NonNull::dangling()), len: self.len(), writable: true }
    }
}

// SAFETY: as for Vec: the boxed slice's buffer does not move until it is dropped.
unsafe impl<T: DlElement> TensorOwner for Box<[T]> {
    type Elem = T;

    fn storage(&mut self) -> Storage<T> {
        Storage { ptr: NonNull::from(&mut **self).cast(), len: self.len(), writable: true }
    }
}

// SAFETY: the Arc's slice does not move while any clone lives; it is shared, so it is exported
// read-only, and elements have no interior mutability (DlElement), so no clone writes it.
unsafe impl<T: DlElement> TensorOwner for Arc<[T]> {
    type Elem = T;

    fn storage(&mut self) -> Storage<T> {
        Storage { ptr: NonNull::from(&**self).cast(), len: self.len(), writable: false }
    }
}

// SAFETY: static data lives forever and, behind a shared reference, is never written.
unsafe impl<T: DlElement> TensorOwner for &'static [T] {
    type Elem = T;

    fn storage(&mut self) -> Storage<T> {
        Storage { ptr: NonNull::from(*self).cast(), len: self.len(), writable: false }
    }
}

// SAFETY: a unique static borrow lives forever and is reachable only through this owner.
unsafe impl<T: DlElement> TensorOwner for &'static mut [T] {
    type Elem = T;

    fn storage(&mut self) -> Storage<T> {
        Storage { ptr: NonNull::from(&mut **self).cast(), len: self.len(), writable: true }
    }
}

// SAFETY: the elements live in the buffer's own allocation, which does not move or change while the
// buffer is neither dropped nor touched (the export touches it only to drop it); the pointer is
// aligned (more than `T` needs) and non-null, `len` elements are initialised valid `T`s, writable
// through the unique owner.
unsafe impl<T: DlElement, const ALIGN: usize> TensorOwner for AlignedBuffer<T, ALIGN> {
    type Elem = T;

    fn storage(&mut self) -> Storage<T> {
        Storage { ptr: self.as_non_null(), len: self.len(), writable: true }
    }
}

/// What an export holds: a host owner ([`TensorOwner`], exported as CPU memory) or, inside the
/// crate, an owner of device memory exported with its device.
///
/// # Safety
///
/// As [`TensorOwner`]'s contract, with "valid for reads" meaning: in the memory of `device()`.
pub(crate) unsafe trait ExportOwner: Send + 'static {
    /// The element type.
    type Elem: DlElement;

    /// The owner's elements (called once, in the owner's final place).
    fn storage(&mut self) -> Storage<Self::Elem>;

    /// The device the elements live on.
    fn device(&self) -> DLDevice;
}

// SAFETY: a `TensorOwner`'s storage is host memory under the same contract.
unsafe impl<O: TensorOwner> ExportOwner for O {
    type Elem = O::Elem;

    #[inline]
    fn storage(&mut self) -> Storage<O::Elem> {
        TensorOwner::storage(self)
    }

    #[inline]
    fn device(&self) -> DLDevice {
        DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 }
    }
}

/// When an export may copy ([rule M8](crate::rules#m8)).
///
/// ```
/// use dlspan::{CopyMode, DlpackError, HostMdspan};
/// let data = [1u8, 2, 3];
/// let view = HostMdspan::<u8, 1>::from_slice(&data, [3])?;
/// assert!(view.to_managed_tensor(CopyMode::IfNeeded)?.is_copied());
/// assert_eq!(view.to_managed_tensor(CopyMode::Never).unwrap_err(), DlpackError::CopyRequired);
/// # Ok::<(), DlpackError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyMode {
    /// Always copy (Python's `copy=True`): the consumer gets an independent, writable buffer marked
    /// `IS_COPIED`.
    Always,
    /// Copy only when sharing is impossible (Python's `copy=None`).
    IfNeeded,
    /// Never copy (Python's `copy=False`): fail with [`DlpackError::CopyRequired`] instead.
    Never,
}

/// The DLPack header of an export: versioned until (maybe) rewritten as legacy in place.
#[repr(C)]
union Header {
    versioned: ManuallyDrop<DLManagedTensorVersioned>,
    legacy: ManuallyDrop<DLManagedTensor>,
}

/// One allocation per export: the header first (so a header pointer is a context pointer), the
/// shape and strides the header's `DLTensor` points to, and the owner.
#[repr(C)]
struct Context<O, const R: usize> {
    header: Header,
    shape: [i64; R],
    strides: [i64; R],
    owner: O,
}

/// A context's allocation, freed as uninitialised memory when dropped: its fields are dropped (or
/// not) by whoever owns them, and the allocation is freed even when that panics.
struct Allocation<O, const R: usize>(*mut Context<O, R>);

impl<O, const R: usize> Drop for Allocation<O, R> {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `Box::into_raw` of a `Box<MaybeUninit<Context>>` in
        // `export_checked`, and each allocation is freed once; freeing it as `MaybeUninit` drops no
        // field.
        drop(unsafe { Box::from_raw(self.0.cast::<core::mem::MaybeUninit<Context<O, R>>>()) });
    }
}

/// A context whose owner is written and whose header is not: dropping it (when the owner is
/// refused, or when its `storage()` unwinds) drops the owner, then frees the allocation.
struct Unfinished<O, const R: usize> {
    allocation: Allocation<O, R>,
}

impl<O, const R: usize> Drop for Unfinished<O, R> {
    fn drop(&mut self) {
        let owner =
            self.allocation.0.cast::<u8>().wrapping_add(core::mem::offset_of!(Context<O, R>, owner)).cast::<O>();
        // SAFETY: the owner field is initialised and owned by this value alone (the header that
        // would hand it to a deleter is unwritten); it is dropped once, here. `allocation` is
        // dropped next, even if this panics.
        unsafe { ptr::drop_in_place(owner) };
    }
}

/// Exports `owner` with a validated relaxed mapping (strides in elements; `offset`: the element
/// offset of index 0 from the owner's first element, carried in `byte_offset`).
pub(crate) fn export_owner<O: ExportOwner, const R: usize>(
    owner: O,
    extents: [usize; R],
    strides: [isize; R],
    offset: usize,
    extra_flags: u64,
) -> Result<ManagedTensor, DlpackError> {
    let mapping = Mapping::<R, Dims<R>, LayoutStrideRelaxed>::from_parts(extents, strides, offset)?;
    // Validated: extents and strides fit isize, hence int64_t (rule E4).
    let shape = extents.map(|e| e as i64);
    let strides = mapping.strides().map(|s| s as i64);
    let empty = extents.contains(&0);
    let byte_offset = if empty { 0 } else { (mapping.offset() * size_of::<O::Elem>()) as u64 };
    export_checked(
        owner,
        shape,
        strides,
        Required::AtLeast(mapping.required_span_size()),
        empty,
        byte_offset,
        extra_flags,
        Element::of::<O::Elem>(),
    )
}

/// How many elements the owner must hold: exactly the tensor's (compact exports), at least the
/// span its strides reach, or exactly the bytes of packed sub-byte values (an owner of bytes).
#[derive(Clone, Copy)]
enum Required {
    Exactly(usize),
    AtLeast(usize),
    PackedBytes(usize),
}

/// Boxes the owner with the header, shape and strides, checks that the owner holds the `required`
/// elements (asking for its storage once, in its final place), and writes the header, whose dtype
/// and padding flag come from `element`.
#[inline]
#[allow(clippy::too_many_arguments)]
fn export_checked<O: ExportOwner, const R: usize>(
    owner: O,
    shape: [i64; R],
    strides: [i64; R],
    required: Required,
    empty: bool,
    byte_offset: u64,
    extra_flags: u64,
    element: Element,
) -> Result<ManagedTensor, DlpackError> {
    // The context is written in place, field by field: building it on the stack and moving it into
    // a box would copy it whole (header included) only to write the header again.
    let raw = Box::into_raw(Box::<Context<O, R>>::new_uninit()).cast::<Context<O, R>>();
    let base = raw.cast::<u8>();
    let shape_ptr = base.wrapping_add(core::mem::offset_of!(Context<O, R>, shape)).cast::<[i64; R]>();
    let strides_ptr = base.wrapping_add(core::mem::offset_of!(Context<O, R>, strides)).cast::<[i64; R]>();
    let owner_ptr = base.wrapping_add(core::mem::offset_of!(Context<O, R>, owner)).cast::<O>();
    let header_ptr = base.wrapping_add(core::mem::offset_of!(Context<O, R>, header)).cast::<Header>();
    // SAFETY: `raw` is a fresh, unique allocation for a `Context`; each write initialises one field
    // in place, through a pointer to that field (no reads of uninitialised memory).
    unsafe { shape_ptr.write(shape) };
    // SAFETY: as above.
    unsafe { strides_ptr.write(strides) };
    // SAFETY: as above.
    unsafe { owner_ptr.write(owner) };
    // From here until the header is written, a refusal or a panic of the owner's `storage()` drops
    // the owner and frees the allocation.
    let unfinished = Unfinished { allocation: Allocation(raw) };
    // SAFETY: the owner was just initialised, in its final place (the heap); nothing else reaches it.
    let storage = unsafe { ExportOwner::storage(&mut *owner_ptr) };
    // SAFETY: as above.
    let device = unsafe { ExportOwner::device(&*owner_ptr) };
    let refusal = match required {
        Required::Exactly(expected) if storage.len != expected => {
            Some(DlpackError::LengthMismatch { expected, found: storage.len })
        }
        Required::AtLeast(required) if storage.len < required => {
            Some(DlpackError::TooFewElements { required, found: storage.len })
        }
        Required::PackedBytes(required) if storage.len != required => {
            Some(DlpackError::PackedByteLength { required, found: storage.len })
        }
        _ => None,
    };
    if let Some(refusal) = refusal {
        // Shape and strides are plain integers: only the owner needs dropping.
        drop(unfinished);
        return Err(refusal);
    }
    let mut flags = extra_flags;
    if !storage.writable {
        flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    }
    if element.padded {
        flags |= DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
    }
    // Pointers into the context, derived from `raw` (the deleter later uses `raw` itself).
    let (shape_ptr, strides_ptr) =
        if R == 0 { (ptr::null_mut(), ptr::null_mut()) } else { (shape_ptr.cast::<i64>(), strides_ptr.cast::<i64>()) };
    let header = Header {
        versioned: ManuallyDrop::new(DLManagedTensorVersioned {
            version: DLPackVersion::CURRENT,
            manager_ctx: raw.cast::<c_void>(),
            deleter: Some(delete_versioned::<O, R>),
            flags,
            dl_tensor: DLTensor {
                data: if empty { ptr::null_mut() } else { storage.ptr.as_ptr().cast() },
                device,
                ndim: R as i32,
                dtype: element.dtype,
                shape: shape_ptr,
                strides: strides_ptr,
                byte_offset,
            },
        }),
    };
    // SAFETY: the last field, initialised in place; the context is now fully initialised.
    unsafe { header_ptr.write(header) };
    // The deleter owns the context now.
    core::mem::forget(unfinished);
    // SAFETY: `raw` came from `Box::into_raw`, so it is non-null; the header is its first field.
    let header = unsafe { NonNull::new_unchecked(raw) }.cast::<DLManagedTensorVersioned>();
    Ok(ManagedTensor::from_export(header, relegacy::<O, R>))
}

/// The deleter of a versioned export.
///
/// # Safety
///
/// `managed` is null or the header of a live `Context<O, R>` of a versioned export, given up by its
/// owner (DLPack: the deleter is called once).
unsafe extern "C" fn delete_versioned<O: ExportOwner, const R: usize>(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: forwarded: the header is the context's first field.
    unsafe { release::<O, R>(managed.cast()) }
}

/// The deleter of an export rewritten as legacy.
///
/// # Safety
///
/// As for `delete_versioned`, for a legacy header.
unsafe extern "C" fn delete_legacy<O: ExportOwner, const R: usize>(managed: *mut DLManagedTensor) {
    // SAFETY: forwarded: the header is the context's first field.
    unsafe { release::<O, R>(managed.cast()) }
}

/// Drops a context's owner and frees the context, containing any panic of the owner's `Drop`.
///
/// # Safety
///
/// `context` is null or a live context from `export_owner`, given up by its owner.
unsafe fn release<O: ExportOwner, const R: usize>(context: *mut Context<O, R>) {
    if context.is_null() {
        return;
    }
    let owner = context.cast::<u8>().wrapping_add(core::mem::offset_of!(Context<O, R>, owner)).cast::<O>();
    // The owner is dropped in place first (its memory is usually the larger block), then the
    // context's allocation is freed as plain memory, whatever the owner's `Drop` did: a panic is
    // contained, never unwinds into C, and never skips the free.
    let allocation = Allocation(context);
    // SAFETY: the context is live and given up by its owner: its owner field is dropped once, here.
    let dropped = catch_unwind(AssertUnwindSafe(|| unsafe { ptr::drop_in_place(owner) }));
    drop(allocation);
    if let Err(payload) = dropped {
        // Report (ignoring a closed stderr) and drop the payload, containing a second panic from the
        // payload's own `Drop` too.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "dlspan: a tensor owner panicked while dropped by a DLPack deleter; the panic was contained"
        );
        if let Err(nested) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
            core::mem::forget(nested);
        }
    }
}

/// Rewrites a versioned export's header as a legacy one, in place.
///
/// # Safety
///
/// `header` is the header of a live `Context<O, R>` with a versioned header, owned by the caller,
/// who gives it up as the returned legacy tensor.
unsafe fn relegacy<O: ExportOwner, const R: usize>(
    header: NonNull<DLManagedTensorVersioned>,
) -> NonNull<DLManagedTensor> {
    // SAFETY: the header is the first field of a live context, owned uniquely by the caller.
    let context = unsafe { &mut *header.cast::<Context<O, R>>().as_ptr() };
    // SAFETY: the versioned variant is the one `export_owner` wrote.
    let versioned = unsafe { &context.header.versioned };
    let legacy = DLManagedTensor {
        dl_tensor: versioned.dl_tensor,
        manager_ctx: versioned.manager_ctx,
        deleter: Some(delete_legacy::<O, R>),
    };
    context.header = Header { legacy: ManuallyDrop::new(legacy) };
    header.cast()
}

impl ManagedTensor {
    /// Exports an owner's elements as a compact row-major tensor of `shape`, without copying. The
    /// managed tensor's deleter drops the owner. `READ_ONLY` is set for shared owners (`Arc<[T]>`);
    /// `IS_SUBBYTE_TYPE_PADDED` for padded sub-byte element types.
    ///
    /// One allocation besides the owner.
    ///
    /// # Errors
    ///
    /// [`DlpackError::LengthMismatch`] when the owner holds a different number of elements;
    /// [`DlpackError::SpanOverflow`]. The owner is dropped on error ([rule M6](crate::rules#m6)).
    ///
    /// ```
    /// use dlspan::{ManagedTensor, DlpackError};
    /// let t = ManagedTensor::from_owner(vec![0f32; 12], [3, 4])?;
    /// assert_eq!((t.shape(), t.strides()), (&[3i64, 4][..], Some(&[4i64, 1][..])));
    /// let short = ManagedTensor::from_owner(vec![0f32; 11], [3, 4]);
    /// assert!(matches!(short, Err(DlpackError::LengthMismatch { expected: 12, found: 11 })));
    /// # Ok::<(), DlpackError>(())
    /// ```
    #[inline]
    pub fn from_owner<O: TensorOwner, const R: usize>(owner: O, shape: [usize; R]) -> Result<Self, DlpackError> {
        export_compact(owner, shape, 0)
    }

    /// Exports an owner's elements with explicit strides (in elements; zero and negative allowed)
    /// and the element offset of index 0 from the owner's first element, without copying. Every
    /// element the strides reach must lie in the owner.
    ///
    /// # Errors
    ///
    /// [`DlpackError::NegativeReach`], [`DlpackError::SpanOverflow`],
    /// [`DlpackError::TooFewElements`]. The owner is dropped on error ([rule M6](crate::rules#m6)).
    ///
    /// ```
    /// use dlspan::{ManagedTensor, LayoutStrideRelaxed};
    /// // The transpose of a 2x3 row-major buffer, without copying.
    /// let t = ManagedTensor::from_owner_strided(vec![0u8, 1, 2, 3, 4, 5], [3, 2], [1, 3], 0)?;
    /// assert_eq!(t.view::<u8, 2, LayoutStrideRelaxed>()?.to_vec(), [0, 3, 1, 4, 2, 5]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn from_owner_strided<O: TensorOwner, const R: usize>(
        owner: O,
        shape: [usize; R],
        strides: [isize; R],
        offset: usize,
    ) -> Result<Self, DlpackError> {
        export_owner(owner, shape, strides, offset, 0)
    }

    /// Exports an owner of bytes as packed sub-byte values of `T` (for example
    /// [`Float4E2m1fn`](crate::dtype::Float4E2m1fn), exported as `(17, 4, 1)` without
    /// `IS_SUBBYTE_TYPE_PADDED`) in a compact row-major tensor of `shape`, without copying: the owner
    /// holds exactly `ceil(numel · bits / 8)` bytes, values low bits first
    /// ([rule P4](crate::rules#p4)).
    ///
    /// # Errors
    ///
    /// [`DlpackError::PackedByteLength`] when the owner holds another number of bytes;
    /// [`DlpackError::SpanOverflow`]. The owner is dropped on error.
    ///
    /// ```
    /// use dlspan::{DlpackError, ManagedTensor, PackedMdspan};
    /// use dlspan::dtype::Float4E2m1fn;
    /// let t = ManagedTensor::from_packed::<Float4E2m1fn, _, 1>(vec![0x21u8, 0x07], [3])?;
    /// assert_eq!((t.dtype().bits, t.dtype().lanes, t.shape()), (4, 1, &[3i64][..]));
    /// assert!(!t.is_subbyte_padded());
    /// let values = t.view_as::<PackedMdspan<Float4E2m1fn, 1>>()?.to_vec();
    /// assert_eq!(values.iter().map(|x| x.to_f32()).collect::<Vec<_>>(), [0.5, 1.0, 6.0]);
    /// let short = ManagedTensor::from_packed::<Float4E2m1fn, _, 1>(vec![0x21u8], [3]);
    /// assert!(matches!(short, Err(DlpackError::PackedByteLength { required: 2, found: 1 })));
    /// # Ok::<(), DlpackError>(())
    /// ```
    pub fn from_packed<T: DlElement + crate::dtype::PlainBits, O: TensorOwner<Elem = u8>, const R: usize>(
        owner: O,
        shape: [usize; R],
    ) -> Result<Self, DlpackError> {
        const { assert!(crate::dtype::is_packable::<T>(), "packed values are sub-byte one-value storage types") };
        export_packed::<T, O, R>(owner, shape, 0)
    }
}

/// Exports an owner as a compact row-major tensor of `shape` (zero extents count as 1 in the
/// strides, as PyTorch does), with `extra_flags` set.
#[inline]
pub(crate) fn export_compact<O: ExportOwner, const R: usize>(
    owner: O,
    shape: [usize; R],
    extra_flags: u64,
) -> Result<ManagedTensor, DlpackError> {
    export_compact_as(owner, shape, extra_flags, Element::of::<O::Elem>(), |size| Ok(Required::Exactly(size)))
}

/// Exports an owner of bytes as packed sub-byte values of `T` in a compact row-major tensor of
/// `shape`: exactly `ceil(numel · bits / 8)` bytes, low bits first.
pub(crate) fn export_packed<T: DlElement, O: ExportOwner<Elem = u8>, const R: usize>(
    owner: O,
    shape: [usize; R],
    extra_flags: u64,
) -> Result<ManagedTensor, DlpackError> {
    export_compact_as(owner, shape, extra_flags, Element::packed::<T>(), |size| {
        crate::dtype::packed_bytes(T::DTYPE, size).map(Required::PackedBytes).ok_or(DlpackError::SpanOverflow)
    })
}

/// A compact row-major export of elements laid out as `element` says; `required` turns the number
/// of elements into what the owner must hold.
#[inline]
fn export_compact_as<O: ExportOwner, const R: usize>(
    owner: O,
    shape: [usize; R],
    extra_flags: u64,
    element: Element,
    required: impl FnOnce(usize) -> Result<Required, DlpackError>,
) -> Result<ManagedTensor, DlpackError> {
    let strides = crate::check::compact_strides(&shape, LayoutKind::Right)?;
    let empty = shape.contains(&0);
    // Validated: the product of the extents (each at least 1 here) fits isize.
    let size = if empty { 0 } else { shape.iter().fold(1usize, |acc, &e| acc.wrapping_mul(e)) };
    export_checked(
        owner,
        shape.map(|e| e as i64),
        strides.map(|s| s as i64),
        required(size)?,
        empty,
        0,
        extra_flags,
        element,
    )
}
