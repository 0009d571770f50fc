//! [`Tensor`]: dlspan's Python tensor type (`dlspan.Tensor`). It owns memory of any data type,
//! rank and device — a managed tensor imported from another framework, a buffer dlspan allocated,
//! or a Python object whose memory it views — and exports it through `__dlpack__` (every rule of
//! the array API), the C exchange API (`__dlpack_c_exchange_api__`) and the buffer protocol.

use super::dtype::buffer_format;
use super::producer::{ExportRequest, export};
use crate::convert::ImportOptions;
use crate::error::DlpackError;
use crate::ffi::{
    DLDataType, DLDevice, DLDeviceType, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, DLPACK_FLAG_BITMASK_READ_ONLY,
    DLTensor,
};
use crate::owned::ManagedTensor;
use core::ffi::c_void;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

/// The largest rank a [`Tensor`] holds (the buffer protocol's limit).
pub const MAX_RANK: usize = 64;

/// What keeps a tensor's memory alive.
pub(crate) enum Owner {
    /// A managed tensor: imported, exported by dlspan from a Rust owner, or a buffer dlspan
    /// allocated (an [`AlignedBuffer`](crate::AlignedBuffer), 64-byte aligned).
    Managed(#[allow(dead_code)] ManagedTensor),
    /// A Python object whose memory the tensor views (a record array's member).
    Object(#[allow(dead_code)] Py<PyAny>),
}

/// `bytes` zeroed, 64-byte-aligned bytes (what JAX needs to import without copying), owned by a
/// managed tensor, and their address (null when `bytes` is 0).
pub(crate) fn zeroed_bytes(bytes: usize) -> Result<(ManagedTensor, *mut c_void), DlpackError> {
    let buffer = crate::AlignedBuffer::<u8>::try_zeroed(bytes)?;
    let owner = ManagedTensor::from_owner(buffer, [bytes])?;
    let data = owner.dl_tensor().data;
    Ok((owner, data))
}

/// A tensor's metadata, validated once by the rules of a dynamic view
/// ([`DynMdspan`](crate::DynMdspan), rules D1–D3), with shape and strides owned here (strides
/// always present, in elements) and the buffer protocol's forms of them.
pub(crate) struct Meta {
    pub(crate) data: *mut c_void,
    pub(crate) byte_offset: u64,
    pub(crate) dtype: DLDataType,
    pub(crate) device: DLDevice,
    pub(crate) shape: Box<[i64]>,
    pub(crate) strides: Box<[i64]>,
    pub(crate) read_only: bool,
    pub(crate) subbyte_padded: bool,
    /// Elements.
    pub(crate) numel: usize,
    /// Bits of one element (`bits · lanes`; one lane per byte for padded sub-byte data).
    pub(crate) bits: usize,
    /// Bytes of one element; 0 for packed sub-byte data, which is not addressed by element.
    pub(crate) item_size: usize,
    /// Bytes from the lowest element to the end of the highest: the memory the tensor reaches,
    /// which is less than the elements take when strides are zero or overlap (packed sub-byte
    /// data: `ceil(numel · bits / 8)` when compact).
    pub(crate) span: usize,
    buffer_shape: Box<[isize]>,
    buffer_strides: Box<[isize]>,
}

// SAFETY: `data` points to the memory the tensor's owner keeps alive; the metadata is never
// mutated after construction.
unsafe impl Send for Meta {}
// SAFETY: as above.
unsafe impl Sync for Meta {}

/// Row-major strides of `shape` (an extent of 0 or 1 counts as 1).
pub(crate) fn row_major(shape: &[i64]) -> Box<[i64]> {
    let mut strides = vec![0i64; shape.len()];
    let mut next = 1i64;
    for (stride, &extent) in strides.iter_mut().zip(shape).rev() {
        *stride = next;
        next = next.saturating_mul(extent.max(1));
    }
    strides.into_boxed_slice()
}

/// What a dynamic view says of its tensor: shape, strides (filled by version), elements, bits per
/// element, bytes spanned.
type Summary = (Vec<i64>, Vec<i64>, usize, usize, usize);

/// The [`Summary`] of `tensor` as a dynamic view in memory space `S`.
fn summary<S: crate::MemorySpace>(tensor: &DLTensor, options: ImportOptions) -> Result<Summary, DlpackError> {
    // SAFETY: the view is dropped before this function returns and only its metadata is read;
    // the producer's contract makes shape and strides readable arrays of `ndim` entries.
    let view = unsafe { crate::DynMdspan::<S>::from_dltensor_with(tensor, options) }?;
    // Validated: extents and strides fit isize, hence int64_t on 64-bit targets (and the byte
    // span fits isize on every target).
    let shape = view.shape().iter().map(|&e| e as i64).collect();
    let strides = view.strides().iter().map(|&s| s as i64).collect();
    Ok((shape, strides, view.size(), view.element_bits(), view.byte_range().len()))
}

impl Meta {
    /// Validates a `DLTensor` of any rank and data type, on a device dlspan has a memory space
    /// for (host and pinned host memory, CUDA device and managed memory), by the rules of a
    /// dynamic view.
    pub(crate) fn from_dltensor(
        tensor: &DLTensor,
        options: ImportOptions,
        read_only: bool,
    ) -> Result<Self, DlpackError> {
        if tensor.dtype.type_code().name().is_none() {
            return Err(DlpackError::UnsupportedDtype { dtype: tensor.dtype });
        }
        let mut rebased = *tensor;
        // SAFETY: the producer's contract on shape and strides, which `summary` relies on too.
        unsafe { super::consumer::rebase(&mut rebased) };
        let tensor = &rebased;
        if usize::try_from(tensor.ndim).is_ok_and(|ndim| ndim > MAX_RANK) {
            return Err(DlpackError::UnsupportedRank { rank: tensor.ndim as usize, max: MAX_RANK });
        }
        let (shape, strides, numel, bits, span) = match tensor.device.device_type {
            DLDeviceType::kDLCUDA => summary::<crate::Device>(tensor, options)?,
            DLDeviceType::kDLCUDAManaged => summary::<crate::Managed>(tensor, options)?,
            _ => summary::<crate::Host>(tensor, options)?,
        };
        let subbyte_padded = options.subbyte_padded && tensor.dtype.bits < 8;
        let item_size = if bits % 8 == 0 { bits / 8 } else { 0 };
        let buffer_shape = shape.iter().map(|&e| e as isize).collect();
        let buffer_strides = strides.iter().map(|&s| (s as isize).wrapping_mul(item_size as isize)).collect();
        Ok(Self {
            data: tensor.data,
            byte_offset: tensor.byte_offset,
            dtype: tensor.dtype,
            device: tensor.device,
            shape: shape.into_boxed_slice(),
            strides: strides.into_boxed_slice(),
            read_only,
            subbyte_padded,
            numel,
            bits,
            item_size,
            span,
            buffer_shape,
            buffer_strides,
        })
    }

    /// The tensor, with shape and strides pointing into this metadata.
    pub(crate) fn dl_tensor(&self) -> DLTensor {
        let ndim = self.shape.len();
        DLTensor {
            data: self.data,
            device: self.device,
            ndim: ndim as i32,
            dtype: self.dtype,
            shape: if ndim == 0 { core::ptr::null_mut() } else { self.shape.as_ptr().cast_mut() },
            strides: if ndim == 0 { core::ptr::null_mut() } else { self.strides.as_ptr().cast_mut() },
            byte_offset: self.byte_offset,
        }
    }

    /// The bytes the elements take stored compactly (row-major, no element twice): what a copy
    /// holds, and NumPy's `nbytes`. `numel · item_size`, or `ceil(numel · bits / 8)` for packed
    /// sub-byte data; `None` when that overflows `isize` (a broadcast view can describe more
    /// elements than any buffer holds).
    pub(crate) fn compact_bytes(&self) -> Option<usize> {
        let bytes = self.numel.checked_mul(self.bits)?.div_ceil(8);
        (bytes <= isize::MAX as usize).then_some(bytes)
    }

    /// The address of the element at index 0.
    pub(crate) fn first(&self) -> *mut u8 {
        self.data.cast::<u8>().wrapping_add(self.byte_offset as usize)
    }

    /// Whether the strides are row-major (extents of 0 or 1 allow any stride).
    pub(crate) fn is_c_contiguous(&self) -> bool {
        self.numel == 0
            || self
                .shape
                .iter()
                .zip(&self.strides)
                .zip(row_major(&self.shape).iter())
                .all(|((&e, &s), &r)| e <= 1 || s == r)
    }

    /// Whether the strides are column-major.
    fn is_f_contiguous(&self) -> bool {
        let mut next = 1i64;
        self.numel == 0
            || self.shape.iter().zip(&self.strides).all(|(&e, &s)| {
                let ok = e <= 1 || s == next;
                next = next.saturating_mul(e.max(1));
                ok
            })
    }

    /// The DLPack flags this metadata implies.
    pub(crate) fn flags(&self) -> u64 {
        let mut flags = 0;
        if self.read_only {
            flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
        }
        if self.subbyte_padded {
            flags |= DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
        }
        flags
    }
}

/// `dlspan.Tensor`: memory of any data type, rank and device, owned by Rust, exchanged with
/// NumPy, PyTorch, JAX and any DLPack consumer without copying.
///
/// Python sees `shape`, `strides` (in elements), `dtype` (NumPy's name), `device`, `readonly`,
/// `__dlpack__` / `__dlpack_device__`, the class attribute `__dlpack_c_exchange_api__` and the
/// buffer protocol (`memoryview(t)`, `np.asarray(t)`).
///
/// ```
/// use dlspan::{ManagedTensor, python::Tensor};
/// use pyo3::prelude::*;
/// Python::initialize();
/// Python::attach(|py| {
///     let t = Tensor::from_managed(py, ManagedTensor::from_owner(vec![1.5f32; 6], [2, 3])?)?;
///     assert_eq!(t.getattr("shape")?.extract::<(i64, i64)>()?, (2, 3));
///     assert_eq!(t.getattr("dtype")?.extract::<String>()?, "float32");
///     let view = pyo3::types::PyMemoryView::from(t.as_any())?;
///     assert_eq!(view.call_method0("tolist")?.extract::<Vec<Vec<f32>>>()?, [[1.5; 3]; 2]);
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
#[pyclass(module = "dlspan", name = "Tensor", frozen, weakref)]
pub struct Tensor {
    pub(crate) meta: Meta,
    owner: Option<Owner>,
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // Deallocation (with the GIL) can happen while an exception propagates; the owner's
        // deleter may run Python code.
        super::drop_keeping_exception(self.owner.take());
    }
}

impl Tensor {
    pub(crate) fn new(meta: Meta, owner: Owner) -> Self {
        Self { meta, owner: Some(owner) }
    }

    /// A tensor owning a managed tensor (imported from any producer, or exported by dlspan from a
    /// Rust owner: `Vec`, `Box<[T]>`, `Arc<[T]>`, records).
    ///
    /// # Errors
    ///
    /// The managed tensor's metadata is validated for any rank and data type:
    /// [`DlpackError::NullShape`], [`DlpackError::NegativeExtent`], [`DlpackError::NullStrides`],
    /// [`DlpackError::NullData`], [`DlpackError::SpanOverflow`], [`DlpackError::UnsupportedDtype`],
    /// [`DlpackError::NegativeNdim`], and [`DlpackError::UnsupportedRank`] above [`MAX_RANK`].
    ///
    /// ```
    /// use dlspan::{ManagedTensor, python::Tensor};
    /// use pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let shared = ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from([1u8, 2, 3]), [3])?;
    ///     let t = Tensor::from_managed(py, shared)?;
    ///     assert!(t.getattr("readonly")?.extract::<bool>()?);
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn from_managed(py: Python<'_>, tensor: ManagedTensor) -> PyResult<Bound<'_, Self>> {
        let meta = Meta::from_dltensor(tensor.dl_tensor(), tensor.import_options(), tensor.is_read_only())?;
        Bound::new(py, Self::new(meta, Owner::Managed(tensor)))
    }

    /// A tensor viewing memory that a Python object keeps alive (a member of a record array the
    /// object owns, a buffer of another library).
    ///
    /// # Errors
    ///
    /// As [`from_managed`](Self::from_managed), for a current (DLPack 1.3) description.
    ///
    /// # Safety
    ///
    /// `tensor` describes memory that `owner` keeps alive and in place for as long as `owner`
    /// lives, holding valid values of its data type, with shape and strides readable during this
    /// call; unless `read_only`, holders of the tensor may write that memory.
    ///
    /// ```
    /// use dlspan::{ffi::*, python::Tensor};
    /// use pyo3::{prelude::*, types::PyByteArray};
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let bytes = PyByteArray::new(py, &[1, 2, 3, 4]);
    ///     let mut shape = [2i64];
    ///     let mut strides = [2i64];
    ///     let tensor = DLTensor {
    ///         data: bytes.data().cast(),
    ///         device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
    ///         ndim: 1,
    ///         dtype: DLDataType::new(DLDataTypeCode::kDLUInt, 8, 1),
    ///         shape: shape.as_mut_ptr(),
    ///         strides: strides.as_mut_ptr(),
    ///         byte_offset: 1,
    ///     };
    ///     // SAFETY: the bytearray keeps its 4 bytes in place while it lives (it is not resized).
    ///     let odd = unsafe { Tensor::from_object(py, bytes.clone().into_any().unbind(), &tensor, true) }?;
    ///     let values = pyo3::types::PyMemoryView::from(odd.as_any())?.call_method0("tolist")?;
    ///     assert_eq!(values.extract::<Vec<u8>>()?, [2, 4]);
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub unsafe fn from_object<'py>(
        py: Python<'py>,
        owner: Py<PyAny>,
        tensor: &DLTensor,
        read_only: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let meta = Meta::from_dltensor(tensor, ImportOptions::CURRENT, read_only)?;
        Bound::new(py, Self::new(meta, Owner::Object(owner)))
    }

    /// A zeroed, row-major CPU tensor in a fresh 64-byte-aligned buffer (JAX imports such buffers
    /// without copying).
    ///
    /// # Errors
    ///
    /// `ValueError` for a negative extent; `BufferError` for a size that does not fit
    /// ([`DlpackError::SpanOverflow`], [`DlpackError::AllocationFailed`]); `TypeError` for a data
    /// type that cannot be laid out ([`DlpackError::UnsupportedDtype`]).
    ///
    /// ```
    /// use dlspan::{dtype::dtype_of, python::Tensor};
    /// use pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let t = Tensor::zeros(py, &[2, 3], dtype_of::<f64>())?;
    ///     assert_eq!(t.get().dl_tensor().data.addr() % 64, 0);
    ///     assert!(Tensor::zeros(py, &[-1], dtype_of::<f64>()).is_err());
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn zeros<'py>(py: Python<'py>, shape: &[i64], dtype: DLDataType) -> PyResult<Bound<'py, Self>> {
        if let Some((axis, &extent)) = shape.iter().enumerate().find(|&(_, &e)| e < 0) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("extent {extent} of axis {axis} is negative")));
        }
        super::exchange::zeros(py, shape, dtype)
    }

    /// The tensor as a `DLTensor`, whose shape and strides point into this object.
    ///
    /// ```
    /// use dlspan::{ManagedTensor, python::Tensor};
    /// use pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let t = Tensor::from_managed(py, ManagedTensor::from_owner(vec![0u16; 4], [4])?)?;
    ///     assert_eq!(t.get().dl_tensor().ndim, 1);
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn dl_tensor(&self) -> DLTensor {
        self.meta.dl_tensor()
    }

    /// Whether consumers must not write the memory.
    ///
    /// ```
    /// use dlspan::{ManagedTensor, python::Tensor};
    /// use pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let t = Tensor::from_managed(py, ManagedTensor::from_owner(vec![0u8; 2], [2])?)?;
    ///     assert!(!t.get().is_read_only());
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn is_read_only(&self) -> bool {
        self.meta.read_only
    }

    /// `__dlpack__` as a Rust call: a capsule of this tensor with every rule of
    /// [`ExportRequest`] applied.
    ///
    /// # Errors
    ///
    /// As `__dlpack__` (see [`ExportRequest`]).
    ///
    /// ```
    /// use dlspan::{ManagedTensor, python::{ExportRequest, Tensor}};
    /// use pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let t = Tensor::from_managed(py, ManagedTensor::from_owner(vec![0u8; 2], [2])?)?;
    ///     let capsule = Tensor::dlpack(&t, &ExportRequest { max_version: Some((1, 0)), ..Default::default() })?;
    ///     assert!(capsule.is_valid_checked(Some(c"dltensor_versioned")));
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn dlpack<'py>(slf: &Bound<'py, Self>, request: &ExportRequest) -> PyResult<Bound<'py, PyCapsule>> {
        export(slf, request)
    }
}

/// A device as Python prints it: `cpu`, `cuda:0`.
fn device_name(device: DLDevice) -> String {
    let kind = match device.device_type {
        DLDeviceType::kDLCPU => return "cpu".into(),
        DLDeviceType::kDLCUDA => "cuda",
        DLDeviceType::kDLCUDAHost => "cuda_host",
        DLDeviceType::kDLCUDAManaged => "cuda_managed",
        DLDeviceType::kDLROCM => "rocm",
        DLDeviceType::kDLROCMHost => "rocm_host",
        DLDeviceType::kDLMetal => "metal",
        DLDeviceType::kDLVulkan => "vulkan",
        DLDeviceType::kDLOpenCL => "opencl",
        DLDeviceType::kDLOneAPI => "oneapi",
        other => return format!("device{}:{}", other.0, device.device_id),
    };
    format!("{kind}:{}", device.device_id)
}

#[pymethods]
impl Tensor {
    /// The extents.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.meta.shape.iter())
    }

    /// The strides, in elements.
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.meta.strides.iter())
    }

    /// The data type, as NumPy names it (`float32`, `bfloat16`, `float8_e4m3fn`).
    #[getter]
    fn dtype(&self) -> String {
        self.meta.dtype.to_string()
    }

    /// The device: `cpu`, `cuda:0`, …
    #[getter]
    fn device(&self) -> String {
        device_name(self.meta.device)
    }

    /// Whether consumers must not write the memory.
    #[getter]
    fn readonly(&self) -> bool {
        self.meta.read_only
    }

    /// The rank.
    #[getter]
    fn ndim(&self) -> usize {
        self.meta.shape.len()
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.meta.numel
    }

    /// The bytes the elements take stored compactly (NumPy's `nbytes`: a broadcast tensor counts
    /// every element, although its memory holds fewer).
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        self.meta.compact_bytes().ok_or_else(|| super::error::to_pyerr(DlpackError::SpanOverflow))
    }

    fn __len__(&self) -> PyResult<usize> {
        match self.meta.shape.first() {
            Some(&n) => Ok(n as usize),
            None => Err(pyo3::exceptions::PyTypeError::new_err("len() of a 0-d tensor")),
        }
    }

    fn __repr__(&self) -> String {
        let shape: Vec<String> = self.meta.shape.iter().map(i64::to_string).collect();
        let comma = if shape.len() == 1 { "," } else { "" };
        format!(
            "Tensor(shape=({}{comma}), dtype={}, device={}{})",
            shape.join(", "),
            self.meta.dtype,
            device_name(self.meta.device),
            if self.meta.read_only { ", readonly" } else { "" }
        )
    }

    /// `(device_type, device_id)`, DLPack's codes.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (self.meta.device.device_type.0, self.meta.device.device_id)
    }

    /// A DLPack capsule of this tensor (the array API's `__dlpack__`).
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        stream: Option<i64>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let dl_device = dl_device.map(|(t, id)| DLDevice { device_type: DLDeviceType(t), device_id: id });
        export(slf, &ExportRequest { stream, max_version, dl_device, copy })
    }

    /// The DLPack C exchange API table (`dlpack_exchange_api` capsule).
    #[classattr]
    fn __dlpack_c_exchange_api__(py: Python<'_>) -> PyResult<Bound<'_, PyCapsule>> {
        super::exchange::api_capsule(py)
    }

    #[cfg(Py_3_11)]
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: core::ffi::c_int,
    ) -> PyResult<()> {
        use pyo3::exceptions::PyBufferError;
        use pyo3::ffi;
        let meta = &slf.get().meta;
        super::consumer::wait_for_host(meta.device)?;
        let format = buffer_format(meta.dtype)
            .ok_or_else(|| PyBufferError::new_err(format!("data type {} has no buffer format", meta.dtype)))?;
        if flags & ffi::PyBUF_WRITABLE != 0 && meta.read_only {
            return Err(PyBufferError::new_err("tensor is read-only"));
        }
        let contiguous = |required: core::ffi::c_int| flags & required == required;
        let c = meta.is_c_contiguous();
        if (contiguous(ffi::PyBUF_C_CONTIGUOUS) && !c)
            || (contiguous(ffi::PyBUF_F_CONTIGUOUS) && !meta.is_f_contiguous())
            || (contiguous(ffi::PyBUF_ANY_CONTIGUOUS) && !c && !meta.is_f_contiguous())
            || (!contiguous(ffi::PyBUF_STRIDES) && !c)
        {
            return Err(PyBufferError::new_err("tensor is not contiguous as the buffer request requires"));
        }
        let ndim = meta.shape.len();
        let mut buffer = ffi::Py_buffer::new();
        buffer.buf = meta.first().cast();
        buffer.obj = slf.clone().into_any().into_ptr();
        buffer.len = (meta.numel * meta.item_size) as isize;
        buffer.readonly = core::ffi::c_int::from(meta.read_only);
        buffer.itemsize = meta.item_size as isize;
        buffer.format = if flags & ffi::PyBUF_FORMAT != 0 { format.as_ptr().cast_mut() } else { core::ptr::null_mut() };
        buffer.ndim = ndim as core::ffi::c_int;
        if contiguous(ffi::PyBUF_ND) && ndim > 0 {
            buffer.shape = meta.buffer_shape.as_ptr().cast_mut();
        }
        if contiguous(ffi::PyBUF_STRIDES) && ndim > 0 {
            buffer.strides = meta.buffer_strides.as_ptr().cast_mut();
        }
        // SAFETY: CPython passes a writable `Py_buffer` to fill. Its pointers point into this tensor
        // (or a static format string), which the buffer keeps alive through `obj` (a new reference).
        unsafe { view.write(buffer) };
        Ok(())
    }

    #[cfg(Py_3_11)]
    unsafe fn __releasebuffer__(&self, _view: *mut pyo3::ffi::Py_buffer) {}
}
