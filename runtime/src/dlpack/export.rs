//! The export wrappers: a view described as a `DLTensor` without heap allocation ([`DlpackTensor`]
//! for typed and packed views, [`DynDlpackTensor`] for dynamic ones), the handle that lends out the
//! `DLTensor` ([`DlTensorRef`]), the [`ToDlpackTensor`] trait with CCCL's [`to_dlpack_tensor`], and
//! the functions that fill the wrappers by the rules of [section E](crate::rules#e). The views'
//! `ToDlpackTensor` implementations are in their own DLPack files.

use super::import::Element;
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice, DLTensor};
use crate::index::{Axes, Extents, Layout, Mapping};
use crate::space::MemorySpace;
use crate::view::DynParts;
use core::ffi::c_void;
use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;
use core::ptr;

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
/// tensor exported from a shared view. The elements of a tensor exported from a mutable view
/// (`MdspanMut`) may be written by the consumer, with valid values of the view's element type (0
/// or 1 for `bool`, which Rust reads again): they are that view's alone. The export borrows the
/// view shared, though, so Rust code may still read the view meanwhile: writes from C must not
/// overlap such reads (a C call that writes and returns before the view is read again, as usual).
///
/// The handle is what the borrow tracks: a `DLTensor` copied out of it (`*handle`; every C struct
/// of [`ffi`](crate::ffi) is `Copy`) holds raw pointers into the export and the view, valid only
/// while they live, as any pointer handed to C.
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

/// Views that export to a [`DlpackTensor`] of rank `R`: [`Mdspan`](crate::Mdspan) and
/// [`MdspanMut`](crate::MdspanMut) of a [`DlElement`](crate::DlElement) in any memory space, and
/// the views built on them ([`Aligned`](crate::Aligned), the packed views).
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
    } else if element.bits.is_multiple_of(8) {
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

/// A dynamic view exported as a `DLTensor`: the fields with shape and strides stored inline (no
/// allocation up to 8 axes). As [`DlpackTensor`], the `DLTensor` is only
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

/// Describes a dynamic view's parts as a `DLTensor` ([section E](crate::rules#e)); `data` is null
/// when the view has no elements.
pub(crate) fn export_dynamic<S: MemorySpace>(parts: &DynParts<S>) -> Result<DynDlpackTensor<'_>, DlpackError> {
    if parts.padded {
        return Err(DlpackError::PaddedSubbyteExport);
    }
    let empty = parts.size() == 0;
    Ok(DynDlpackTensor {
        data: if empty { ptr::null_mut() } else { parts.data.cast() },
        device: S::device(S::ordinal_of(parts.origin)),
        dtype: parts.dtype,
        byte_offset: if empty { 0 } else { parts.byte_offset },
        shape: int64(parts.extents.as_slice()),
        strides: int64(parts.strides.as_slice()),
        _borrow: PhantomData,
    })
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
