//! Owned exchange: [`ManagedTensor`] owns a `DLManagedTensorVersioned` or a legacy
//! `DLManagedTensor` and calls its deleter exactly once; exporters turn Rust owners (`Vec`,
//! `Box<[T]>`, `Arc<[T]>`, any [`TensorOwner`]) into managed tensors whose deleter drops the owner.
//!
//! Ownership rules ([section M](crate::rules#m) of the rules page), made safe by construction:
//! - the deleter runs exactly once: on drop, or at once when a tensor of another major version is
//!   refused (touching nothing else), or by whoever takes the raw pointer from
//!   [`into_raw_versioned`](ManagedTensor::into_raw_versioned) /
//!   [`into_raw_legacy`](ManagedTensor::into_raw_legacy);
//! - a `READ_ONLY` tensor yields only shared views;
//! - dlspan's deleters never unwind into C: a panic in an owner's `Drop` is caught and reported.
//!
//! ```
//! use dlspan::{ManagedTensor, LayoutRight};
//!
//! // Rust data out as a DLPack managed tensor, as a C consumer would take it...
//! let exported = ManagedTensor::from_owner(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])?;
//! let raw = exported.into_raw_versioned();
//!
//! // ...and back in: the ManagedTensor owns it and calls the deleter (dropping the Vec) once.
//! // SAFETY: `raw` is a live managed tensor whose ownership passes here.
//! let imported = unsafe { ManagedTensor::from_raw_versioned(raw) }?;
//! let view = imported.view::<f32, 2, LayoutRight>()?;
//! assert_eq!(view[[1, 2]], 6.0);
//! # Ok::<(), dlspan::DlpackError>(())
//! ```

mod copy;
mod export;
#[cfg(feature = "cuda")]
mod lend;
mod shim;
mod view;

pub use export::{CopyMode, Storage, TensorOwner};
#[cfg(feature = "cuda")]
pub(crate) use export::{ExportOwner, export_compact};

use crate::error::DlpackError;
use crate::ffi::{
    DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPACK_FLAG_BITMASK_IS_COPIED,
    DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_MAJOR_VERSION, DLPackVersion,
    DLTensor,
};
use core::fmt;
use core::ptr::NonNull;

/// Converts a versioned export of dlspan into a legacy one in place (same allocation).
type Relegacy = unsafe fn(NonNull<DLManagedTensorVersioned>) -> NonNull<DLManagedTensor>;

enum Raw {
    Versioned {
        ptr: NonNull<DLManagedTensorVersioned>,
        /// Present for dlspan's own exports, whose header can be rewritten as a legacy one.
        relegacy: Option<Relegacy>,
    },
    Legacy(NonNull<DLManagedTensor>),
}

/// An owned DLPack managed tensor: versioned (`DLManagedTensorVersioned`, DLPack ≥ 1.0) or legacy
/// (`DLManagedTensor`). Dropping it calls the producer's deleter exactly once.
///
/// Typed views borrow it ([`view`](Self::view), [`view_mut`](Self::view_mut),
/// [`view_as`](Self::view_as)) with every check of [section I](crate::rules#i), using the tensor's
/// version (null strides mean row-major before DLPack 1.2) and flags (`READ_ONLY` refuses mutable
/// views; `IS_SUBBYTE_TYPE_PADDED` selects padded sub-byte storage): [rule M4](crate::rules#m4).
///
/// ```
/// use dlspan::{ManagedTensor, LayoutStride, DlpackError};
/// let tensor = ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from(vec![1, 2, 3, 4]), [2, 2])?;
/// assert!(tensor.is_read_only(), "a shared owner exports read-only");
/// assert_eq!(tensor.shape(), &[2, 2]);
/// let view = tensor.view::<u8, 2, LayoutStride>()?;
/// assert_eq!(view.to_vec(), [1, 2, 3, 4]);
/// # Ok::<(), DlpackError>(())
/// ```
pub struct ManagedTensor {
    raw: Raw,
    /// The memory may be reached through someone else too (its producer, another import of the
    /// same memory): views are refused ([rule M10](crate::rules#m10)).
    aliased: bool,
    /// The event the device views this tensor lends are ordered by (made on the first such view):
    /// launches on them wait for it and record it, and the deleter runs only after its last record
    /// ([rule C6](crate::rules#c6)).
    #[cfg(feature = "cuda")]
    order: lend::Lending,
}

// SAFETY: a ManagedTensor is a unique owner of foreign memory. Moving it to another thread moves that
// ownership; the deleter may then run on that thread, which DLPack allows (producers make their
// deleters callable from any thread; dlspan's own drop `Send` owners). Its data is plain values of
// element types, which are `Send + Sync`.
unsafe impl Send for ManagedTensor {}
// SAFETY: `&ManagedTensor` only reads metadata and gives shared views (element types are `Sync`);
// writing needs `&mut ManagedTensor`.
unsafe impl Sync for ManagedTensor {}

impl ManagedTensor {
    /// Takes ownership of a versioned managed tensor.
    ///
    /// # Errors
    ///
    /// [`DlpackError::NullManagedTensor`] for a null pointer (nothing to delete);
    /// [`DlpackError::UnsupportedVersion`] when the major version is not 1: the deleter has then
    /// been called (DLPack guarantees its place across versions) and nothing else was read.
    ///
    /// # Safety
    ///
    /// `ptr` is null or points to a `DLManagedTensorVersioned` whose ownership passes to the
    /// returned value (or whose deleter is called on error); its `deleter`, when non-null, may be
    /// called once from any thread. When its major version is 1: its `dl_tensor` is well-formed
    /// (`shape` and `strides` arrays of `ndim` entries, or null where DLPack allows), its data holds
    /// initialised elements of its dtype where shape and strides say (any bytes for `kDLBool`: views
    /// of `bool` check them, [rule I18](crate::rules#i18)), in the memory of its device, and is
    /// alive until the deleter runs and not written by anyone else while this value lives (and not
    /// at all when `READ_ONLY` is set).
    ///
    /// ```
    /// use dlspan::{ManagedTensor, DlpackError};
    /// // SAFETY: null is allowed and refused.
    /// assert!(matches!(unsafe { ManagedTensor::from_raw_versioned(core::ptr::null_mut()) }, Err(DlpackError::NullManagedTensor)));
    /// ```
    #[inline]
    pub unsafe fn from_raw_versioned(ptr: *mut DLManagedTensorVersioned) -> Result<Self, DlpackError> {
        let ptr = NonNull::new(ptr).ok_or(DlpackError::NullManagedTensor)?;
        // SAFETY: the caller guarantees a live struct; `version` keeps its place in every major
        // version of DLPack.
        let version = unsafe { (*ptr.as_ptr()).version };
        if version.major != DLPACK_MAJOR_VERSION {
            // SAFETY: DLPack: a consumer that finds another major version must call the deleter,
            // which keeps its place too; it is called once, here, and the struct is not touched
            // again.
            unsafe { call_versioned_deleter(ptr) };
            return Err(DlpackError::UnsupportedVersion { version });
        }
        Ok(Self::owning(Raw::Versioned { ptr, relegacy: None }))
    }

    /// Takes ownership of a legacy (unversioned) managed tensor.
    ///
    /// # Errors
    ///
    /// [`DlpackError::NullManagedTensor`] for a null pointer.
    ///
    /// # Safety
    ///
    /// As for [`from_raw_versioned`](Self::from_raw_versioned) (a legacy tensor has no version
    /// and no flags: it is taken as writable, and null strides mean row-major).
    ///
    /// ```
    /// use dlspan::ManagedTensor;
    /// let exported = ManagedTensor::from_owner(vec![7i64, 8, 9], [3])?;
    /// let legacy = exported.into_raw_legacy().map_err(|e| e.error())?;
    /// // SAFETY: `legacy` is a live legacy managed tensor whose ownership passes here.
    /// let back = unsafe { ManagedTensor::from_raw_legacy(legacy) }?;
    /// assert_eq!(back.version(), None);
    /// assert_eq!(back.view::<i64, 1, dlspan::LayoutRight>()?[[2]], 9);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub unsafe fn from_raw_legacy(ptr: *mut DLManagedTensor) -> Result<Self, DlpackError> {
        let ptr = NonNull::new(ptr).ok_or(DlpackError::NullManagedTensor)?;
        Ok(Self::owning(Raw::Legacy(ptr)))
    }

    /// A dlspan export, whose header can later be rewritten as legacy in place.
    #[inline]
    pub(crate) fn from_export(ptr: NonNull<DLManagedTensorVersioned>, relegacy: Relegacy) -> Self {
        Self::owning(Raw::Versioned { ptr, relegacy: Some(relegacy) })
    }

    /// An unaliased owner of `raw`.
    #[inline]
    fn owning(raw: Raw) -> Self {
        Self {
            raw,
            aliased: false,
            #[cfg(feature = "cuda")]
            order: std::sync::OnceLock::new(),
        }
    }

    /// Gives up what this value holds besides the raw tensor, after waiting for the work launched
    /// on the device views it lent: the memory is about to be freed or handed on.
    #[inline]
    fn settle(&mut self) {
        #[cfg(feature = "cuda")]
        {
            let device = self.device();
            lend::settle(&mut self.order, device);
        }
    }

    /// The tensor.
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0u8; 6], [2, 3])?;
    /// assert_eq!(t.dl_tensor().ndim, 2);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn dl_tensor(&self) -> &DLTensor {
        match self.raw {
            // SAFETY: owned and live until drop (constructor contracts); the borrow ends before.
            Raw::Versioned { ptr, .. } => unsafe { &(*ptr.as_ptr()).dl_tensor },
            // SAFETY: as above.
            Raw::Legacy(ptr) => unsafe { &(*ptr.as_ptr()).dl_tensor },
        }
    }

    /// The DLPack version, or `None` for a legacy tensor.
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0u8], [1])?;
    /// assert_eq!(t.version(), Some(dlspan::ffi::DLPackVersion::CURRENT));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn version(&self) -> Option<DLPackVersion> {
        match self.raw {
            // SAFETY: owned and live.
            Raw::Versioned { ptr, .. } => Some(unsafe { (*ptr.as_ptr()).version }),
            Raw::Legacy(_) => None,
        }
    }

    /// The flags (0 for a legacy tensor).
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0u8], [1])?;
    /// assert_eq!(t.flags(), 0);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn flags(&self) -> u64 {
        match self.raw {
            // SAFETY: owned and live.
            Raw::Versioned { ptr, .. } => unsafe { (*ptr.as_ptr()).flags },
            Raw::Legacy(_) => 0,
        }
    }

    /// Whether the data must not be written (`READ_ONLY`).
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from([1u8]), [1])?;
    /// assert!(t.is_read_only());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.flags() & DLPACK_FLAG_BITMASK_READ_ONLY != 0
    }

    /// Whether the memory may also be reached through someone else — its producer, or another
    /// import of the same memory — so that this value gives no views at all
    /// ([rule M10](crate::rules#m10)): a shared view (`&T`) could meet a mutable one made elsewhere
    /// (`&mut T`), and a mutable one could meet anything. Safe imports of memory that others keep
    /// using are aliased: the Python consumer's `from_dlpack` and `take_capsule` (a Python object's
    /// memory stays reachable through the object, as a mutable view argument or another export).
    /// The metadata ([`dl_tensor`](Self::dl_tensor), [`shape`](Self::shape), …) stays readable,
    /// and the tensor can be handed on whole.
    ///
    /// ```
    /// use dlspan::{DlpackError, LayoutRight, ManagedTensor};
    /// let mut t = ManagedTensor::from_owner(vec![1u8, 2], [2])?;
    /// assert!(!t.is_aliased());
    /// let mut t = t.into_aliased();
    /// assert!(t.is_aliased());
    /// assert!(matches!(t.view_mut::<u8, 1, LayoutRight>(), Err(DlpackError::Aliased)));
    /// assert!(matches!(t.view::<u8, 1, LayoutRight>(), Err(DlpackError::Aliased)));
    /// assert_eq!(t.shape(), &[2]);
    /// # Ok::<(), DlpackError>(())
    /// ```
    #[inline]
    pub fn is_aliased(&self) -> bool {
        self.aliased
    }

    /// The same tensor, marked aliased: its memory may also be reached through someone else, so it
    /// gives no views from now on ([`is_aliased`](Self::is_aliased)). Safe: it only takes access
    /// away.
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0f32; 3], [3])?.into_aliased();
    /// assert!(t.is_aliased() && !t.is_read_only());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn into_aliased(mut self) -> Self {
        self.aliased = true;
        self
    }

    /// The same tensor, no longer marked aliased: views become available again (mutable ones unless
    /// `READ_ONLY`).
    ///
    /// # Safety
    ///
    /// The contract of [`from_raw_versioned`](Self::from_raw_versioned) holds from now on: nobody
    /// else writes the memory while this value lives — the producer does not touch it, no other
    /// import of the same memory and no Python view argument of it writes meanwhile — and nobody
    /// else reads it while a mutable view of this value lives.
    ///
    /// ```
    /// use dlspan::{LayoutRight, ManagedTensor};
    /// let t = ManagedTensor::from_owner(vec![0i32; 2], [2])?.into_aliased();
    /// // SAFETY: this value is the only way to the memory (its owner, a `Vec`, went with it).
    /// let mut t = unsafe { t.assume_unaliased() };
    /// t.view_mut::<i32, 1, LayoutRight>()?[[1]] = 7;
    /// assert_eq!(t.view::<i32, 1, LayoutRight>()?.to_vec(), [0, 7]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn assume_unaliased(mut self) -> Self {
        self.aliased = false;
        self
    }

    /// Whether the producer made a copy for this consumer (`IS_COPIED`).
    ///
    /// ```
    /// use dlspan::{CopyMode, HostMdspan};
    /// let data = [1u8, 2];
    /// let copy = HostMdspan::<u8, 1>::from_slice(&data, [2])?.to_managed_tensor(CopyMode::Always)?;
    /// assert!(copy.is_copied());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn is_copied(&self) -> bool {
        self.flags() & DLPACK_FLAG_BITMASK_IS_COPIED != 0
    }

    /// Whether sub-byte data is padded one lane per byte (`IS_SUBBYTE_TYPE_PADDED`).
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fn;
    /// let t = dlspan::ManagedTensor::from_owner(vec![Float4E2m1fn::from_bits(2); 4], [4])?;
    /// assert!(t.is_subbyte_padded());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn is_subbyte_padded(&self) -> bool {
        self.flags() & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0
    }

    /// The device.
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0u8], [1])?;
    /// assert_eq!(t.device().device_type, dlspan::ffi::DLDeviceType::kDLCPU);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn device(&self) -> DLDevice {
        self.dl_tensor().device
    }

    /// The data type.
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0f64], [1])?;
    /// assert_eq!(t.dtype().to_string(), "float64");
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn dtype(&self) -> DLDataType {
        self.dl_tensor().dtype
    }

    /// The number of dimensions (0 for a malformed negative `ndim`).
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0u8; 6], [1, 2, 3])?;
    /// assert_eq!(t.ndim(), 3);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn ndim(&self) -> usize {
        usize::try_from(self.dl_tensor().ndim).unwrap_or(0)
    }

    /// The shape (empty when `ndim` is 0 or the shape is null).
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0u8; 6], [2, 3])?;
    /// assert_eq!(t.shape(), &[2, 3]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn shape(&self) -> &[i64] {
        let t = self.dl_tensor();
        if t.shape.is_null() {
            return &[];
        }
        // SAFETY: a well-formed tensor's non-null shape has `ndim` entries, alive while owned.
        unsafe { core::slice::from_raw_parts(t.shape, self.ndim()) }
    }

    /// The strides in elements, or `None` when null (legacy producers: row-major).
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![0u8; 6], [2, 3])?;
    /// assert_eq!(t.strides(), Some(&[3i64, 1][..]));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn strides(&self) -> Option<&[i64]> {
        let t = self.dl_tensor();
        if t.strides.is_null() {
            return None;
        }
        // SAFETY: a well-formed tensor's non-null strides have `ndim` entries, alive while owned.
        Some(unsafe { core::slice::from_raw_parts(t.strides, self.ndim()) })
    }

    /// Gives up ownership as a versioned managed tensor, for a C consumer, which must call its
    /// deleter once. A legacy tensor is wrapped in a small versioned shell (one allocation) whose
    /// deleter calls the legacy deleter.
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(vec![1u8, 2], [2])?;
    /// let raw = t.into_raw_versioned();
    /// // SAFETY: `raw` is a live managed tensor; this consumer calls its deleter once.
    /// unsafe {
    ///     let deleter = (*raw).deleter.unwrap();
    ///     deleter(raw);
    /// }
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    pub fn into_raw_versioned(mut self) -> *mut DLManagedTensorVersioned {
        self.settle();
        let this = core::mem::ManuallyDrop::new(self);
        match this.raw {
            Raw::Versioned { ptr, .. } => ptr.as_ptr(),
            Raw::Legacy(ptr) => shim::versioned_around_legacy(ptr).as_ptr(),
        }
    }

    /// Gives up ownership as a legacy managed tensor, for consumers that only speak the
    /// unversioned form (JAX, NumPy's legacy path). dlspan's own exports are rewritten in place; a
    /// foreign versioned tensor is wrapped in a small legacy shell (one allocation).
    ///
    /// # Errors
    ///
    /// The legacy form has no flags: a read-only tensor cannot be exported as legacy (the consumer
    /// would assume it may write), nor padded sub-byte data (the consumer would read it as packed);
    /// the error gives the tensor back. `?` turns it into [`DlpackError::ReadOnly`] or
    /// [`DlpackError::PaddedSubbyteExport`], releasing the tensor.
    ///
    /// ```
    /// use std::sync::Arc;
    /// let shared = dlspan::ManagedTensor::from_owner(Arc::<[u8]>::from([1u8, 2]), [2])?;
    /// let refused = shared.into_raw_legacy().unwrap_err();
    /// assert_eq!(refused.error(), dlspan::DlpackError::ReadOnly);
    /// let shared = refused.into_tensor(); // still owned, deleted on drop
    /// assert!(shared.is_read_only());
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn into_raw_legacy(self) -> Result<*mut DLManagedTensor, IntoLegacyError> {
        if self.is_read_only() || self.is_subbyte_padded() {
            return Err(IntoLegacyError { tensor: self });
        }
        let mut this = self;
        this.settle();
        let this = core::mem::ManuallyDrop::new(this);
        Ok(match this.raw {
            Raw::Legacy(ptr) => ptr.as_ptr(),
            // SAFETY: `relegacy` belongs to this export's own allocation (dlspan made it), which
            // this value owns and gives up here.
            Raw::Versioned { ptr, relegacy: Some(relegacy) } => unsafe { relegacy(ptr) }.as_ptr(),
            Raw::Versioned { ptr, relegacy: None } => shim::legacy_around_versioned(ptr).as_ptr(),
        })
    }
}

impl Drop for ManagedTensor {
    #[inline]
    fn drop(&mut self) {
        self.settle();
        match self.raw {
            // SAFETY: this value owns the tensor; its deleter is called once, here.
            Raw::Versioned { ptr, .. } => unsafe { call_versioned_deleter(ptr) },
            // SAFETY: as above.
            Raw::Legacy(ptr) => unsafe { call_legacy_deleter(ptr) },
        }
    }
}

impl fmt::Debug for ManagedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.dl_tensor();
        f.debug_struct("ManagedTensor")
            .field("version", &self.version())
            .field("flags", &self.flags())
            .field("aliased", &self.aliased)
            .field("device", &t.device)
            .field("dtype", &format_args!("{}", t.dtype))
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("byte_offset", &t.byte_offset)
            .finish()
    }
}

/// [`ManagedTensor::into_raw_legacy`] refused a read-only or padded sub-byte tensor, whose legacy form
/// could not say so; the tensor is given back.
///
/// ```
/// let t = dlspan::ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from([1u8]), [1])?;
/// let err = t.into_raw_legacy().unwrap_err();
/// assert_eq!(err.to_string(), "tensor is read-only");
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub struct IntoLegacyError {
    tensor: ManagedTensor,
}

impl IntoLegacyError {
    /// Why the export was refused: [`DlpackError::ReadOnly`], or
    /// [`DlpackError::PaddedSubbyteExport`] for padded sub-byte data.
    ///
    /// ```
    /// use dlspan::{DlpackError, ManagedTensor, dtype::Float4E2m1fn};
    /// let t = ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from([1u8]), [1])?;
    /// assert_eq!(t.into_raw_legacy().unwrap_err().error(), DlpackError::ReadOnly);
    /// let padded = ManagedTensor::from_owner(vec![Float4E2m1fn::from_bits(1); 2], [2])?;
    /// assert_eq!(padded.into_raw_legacy().unwrap_err().error(), DlpackError::PaddedSubbyteExport);
    /// # Ok::<(), DlpackError>(())
    /// ```
    pub fn error(&self) -> DlpackError {
        if self.tensor.is_read_only() { DlpackError::ReadOnly } else { DlpackError::PaddedSubbyteExport }
    }

    /// The tensor, still owned.
    ///
    /// ```
    /// let t = dlspan::ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from([1u8, 2]), [2])?;
    /// let tensor = t.into_raw_legacy().unwrap_err().into_tensor(); // deleted on drop
    /// assert_eq!(tensor.shape(), &[2]);
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn into_tensor(self) -> ManagedTensor {
        self.tensor
    }
}

impl fmt::Debug for IntoLegacyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoLegacyError").field("error", &self.error()).field("tensor", &self.tensor).finish()
    }
}

impl fmt::Display for IntoLegacyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error(), f)
    }
}

impl std::error::Error for IntoLegacyError {}

/// `?` on [`ManagedTensor::into_raw_legacy`] in a function returning [`DlpackError`]: the error
/// becomes [`DlpackError::ReadOnly`], and the refused tensor, which nobody can reach any more, is
/// released on the spot (its deleter runs once, as when a `ManagedTensor` is dropped). Match on the
/// [`IntoLegacyError`] instead to keep the tensor ([`into_tensor`](IntoLegacyError::into_tensor)).
///
/// ```
/// use dlspan::{DlpackError, ManagedTensor, ffi::DLManagedTensor};
/// use std::sync::Arc;
///
/// fn to_legacy_consumer(tensor: ManagedTensor) -> Result<*mut DLManagedTensor, DlpackError> {
///     let raw = tensor.into_raw_legacy()?;
///     Ok(raw) // a legacy consumer now owns it and calls its deleter
/// }
///
/// let values: Arc<[f32]> = Arc::from([1.0, 2.0]);
/// let read_only = ManagedTensor::from_owner(values.clone(), [2])?;
/// assert_eq!(to_legacy_consumer(read_only), Err(DlpackError::ReadOnly));
/// assert_eq!(Arc::strong_count(&values), 1, "the refused tensor released its owner");
/// # Ok::<(), DlpackError>(())
/// ```
impl From<IntoLegacyError> for DlpackError {
    fn from(refused: IntoLegacyError) -> Self {
        refused.error()
    }
}

/// Calls a versioned tensor's deleter, if any.
///
/// # Safety
///
/// `ptr` is a live versioned managed tensor owned by the caller, who gives it up.
#[inline]
unsafe fn call_versioned_deleter(ptr: NonNull<DLManagedTensorVersioned>) {
    // SAFETY: live (caller); the deleter keeps its place across major versions.
    let deleter = unsafe { (*ptr.as_ptr()).deleter };
    if let Some(deleter) = deleter {
        // SAFETY: the owner calls the producer's deleter once, with the tensor it belongs to.
        unsafe { deleter(ptr.as_ptr()) };
    }
}

/// Calls a legacy tensor's deleter, if any.
///
/// # Safety
///
/// `ptr` is a live legacy managed tensor owned by the caller, who gives it up.
#[inline]
unsafe fn call_legacy_deleter(ptr: NonNull<DLManagedTensor>) {
    // SAFETY: live (caller).
    let deleter = unsafe { (*ptr.as_ptr()).deleter };
    if let Some(deleter) = deleter {
        // SAFETY: the owner calls the producer's deleter once, with the tensor it belongs to.
        unsafe { deleter(ptr.as_ptr()) };
    }
}
