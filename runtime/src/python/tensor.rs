//! [`Tensor`]: dlspan's Python tensor type (`dlspan.Tensor`), and its Rust constructors. It owns
//! memory of any data type, rank and device — a managed tensor imported from another framework, a
//! buffer dlspan allocated, or a Python object whose memory it views. Python's side of it (its
//! attributes, `__dlpack__`, the C exchange API, the buffer protocol) is in `tensor_methods`, above
//! the producer and the exchange table it calls.

use super::gil::drop_keeping_exception;
use super::meta::{Meta, row_major};
use crate::convert::ImportOptions;
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice, DLDeviceType, DLTensor};
use crate::owned::ManagedTensor;
use core::ffi::c_void;
use core::ptr::NonNull;
use pyo3::prelude::*;

/// What keeps a tensor's memory alive.
pub(crate) enum Owner {
    /// A managed tensor: imported, exported by dlspan from a Rust owner, or a buffer dlspan
    /// allocated (an [`AlignedBuffer`](crate::AlignedBuffer), 64-byte aligned).
    Managed(#[cfg_attr(not(feature = "cuda"), allow(dead_code))] ManagedTensor),
    /// A Python object whose memory the tensor views (a record array's member).
    Object(#[allow(dead_code)] Py<PyAny>),
    /// dlspan's own CUDA memory (`device_memory::zeroed_on`): a cudarc allocation, exported, that
    /// its deleter frees on the per-thread default stream of the thread that drops it.
    #[cfg(feature = "cuda")]
    Device(DeviceOwner),
}

/// The managed tensor of dlspan's own CUDA memory, released without a wait on the host: the
/// launches on the views it lent (an output's) are ordered before the free on the device.
#[cfg(feature = "cuda")]
pub(crate) struct DeviceOwner(Option<ManagedTensor>);

#[cfg(feature = "cuda")]
impl DeviceOwner {
    /// The managed tensor of a cudarc allocation dlspan made (`export_cuda`), whose deleter frees
    /// it on the per-thread default stream of the thread that runs it.
    pub(crate) fn new(tensor: ManagedTensor) -> Self {
        Self(Some(tensor))
    }
}

#[cfg(feature = "cuda")]
impl Drop for DeviceOwner {
    fn drop(&mut self) {
        let Some(tensor) = self.0.take() else { return };
        // SAFETY: the driver's per-thread default stream (its handle), on the tensor's device once the
        // lending event's context is bound; the tensor's deleter frees the cudarc allocation with
        // `cuMemFreeAsync` on that same handle from this same thread (cudarc's per-thread stream,
        // the allocation's), which is this thread's per-thread stream: the free follows the wait.
        unsafe { tensor.drop_on(super::device::PER_THREAD as cudarc::driver::sys::CUstream) };
    }
}

/// `bytes` zeroed, 64-byte-aligned bytes (what JAX needs to import without copying), owned by a
/// managed tensor, and their address (null when `bytes` is 0).
pub(crate) fn zeroed_bytes(bytes: usize) -> Result<(ManagedTensor, *mut c_void), DlpackError> {
    let buffer = crate::AlignedBuffer::<u8>::try_zeroed(bytes)?;
    let owner = ManagedTensor::from_owner(buffer, [bytes])?;
    let data = owner.dl_tensor().data;
    Ok((owner, data))
}

/// The metadata of a row-major tensor of `dtype` and `shape` on `device` that dlspan is about to
/// allocate, validated with a stand-in address: the allocation's size is its `span` (the compact
/// size), and its `data` is then pointed at the allocation.
pub(crate) fn compact_meta(shape: &[i64], dtype: DLDataType, device: DLDevice) -> Result<Meta, DlpackError> {
    let strides = row_major(shape);
    let tensor = DLTensor {
        data: NonNull::<u64>::dangling().as_ptr().cast(),
        device,
        ndim: shape.len() as i32,
        dtype,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.as_ptr().cast_mut(),
        byte_offset: 0,
    };
    Meta::from_dltensor(&tensor, ImportOptions::CURRENT, false)
}

/// A tensor whose memory dlspan owns: any dtype, shape and device, exchanged with NumPy, PyTorch,
/// JAX and any DLPack consumer without copying.
//
// The rest of Python's docstring (PyO3 turns doc attributes into it), then the rest of the Rust
// documentation, each hidden from the other: the docstring's NumPy-style sections are indented,
// which rustdoc would read as code blocks, and the doctest is Rust.
#[cfg_attr(
    not(any(doc, doctest)),
    doc = r#"
Tensors come from ``dlspan.zeros``, ``dlspan.arange`` and ``dlspan.from_dlpack``, and from
extensions built on dlspan. Other frameworks read them in place: ``np.from_dlpack(t)``,
``torch.from_dlpack(t)``, ``jax.dlpack.from_dlpack(t)``, and through the buffer protocol
``np.asarray(t)`` and ``memoryview(t)``. The memory is 64-byte aligned, so JAX imports it without
a copy.

Attributes
----------
shape : tuple of int
    The extent of each axis.
strides : tuple of int
    The step of each axis, in elements (PyTorch's convention; NumPy's are in bytes).
dtype : str
    The data type, as NumPy names it (``"float32"``, ``"bfloat16"``, ``"float4_e2m1fn"``).
device : str
    ``"cpu"``, ``"cuda:0"``, ...
readonly : bool
    Whether consumers must not write the memory.
ndim, size, nbytes : int
    The number of axes, of elements, and of bytes the elements take stored compactly."#
)]
#[cfg_attr(
    any(doc, doctest),
    doc = r#"
The type of `dlspan.Tensor`: Python sees `shape`, `strides` (in elements), `dtype` (NumPy's
name), `device`, `readonly`, `__dlpack__` / `__dlpack_device__`, the class attribute
`__dlpack_c_exchange_api__` and the buffer protocol (`memoryview(t)`, `np.asarray(t)`); Rust makes
tensors with [`Tensor::from_managed`], [`Tensor::from_object`] and [`Tensor::zeros`].

```
use dlspan::{ManagedTensor, python::Tensor};
use pyo3::prelude::*;
Python::initialize();
Python::attach(|py| {
    let t = Tensor::from_managed(py, ManagedTensor::from_owner(vec![1.5f32; 6], [2, 3])?)?;
    assert_eq!(t.getattr("shape")?.extract::<(i64, i64)>()?, (2, 3));
    assert_eq!(t.getattr("dtype")?.extract::<String>()?, "float32");
    let view = pyo3::types::PyMemoryView::from(t.as_any())?;
    assert_eq!(view.call_method0("tolist")?.extract::<Vec<Vec<f32>>>()?, [[1.5; 3]; 2]);
    // Python's docstring is Python's: no Rust in it.
    let doc: String = t.get_type().getattr("__doc__")?.extract()?;
    assert!(doc.contains("Attributes") && !doc.contains("Rust"));
    Ok::<_, PyErr>(())
})?;
# Ok::<(), PyErr>(())
```"#
)]
#[pyclass(module = "dlspan", name = "Tensor", frozen, weakref)]
pub struct Tensor {
    pub(crate) meta: Meta,
    owner: Option<Owner>,
    /// For device memory written on a stream by the extension that made the tensor: the point in
    /// that stream's work after the writes, which every consumer's stream is ordered after
    /// (`__dlpack__(stream=…)`, DLPack's producer rule).
    #[cfg(feature = "cuda")]
    pub(crate) ready: std::sync::OnceLock<crate::cuda::Event>,
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // Deallocation (with the GIL) can happen while an exception propagates; the owner's
        // deleter may run Python code.
        drop_keeping_exception(self.owner.take());
    }
}

impl Tensor {
    /// The managed tensor that owns the memory, when one does.
    #[cfg(feature = "cuda")]
    pub(crate) fn managed(&self) -> Option<&ManagedTensor> {
        match &self.owner {
            Some(Owner::Managed(tensor)) => Some(tensor),
            Some(Owner::Device(DeviceOwner(tensor))) => tensor.as_ref(),
            _ => None,
        }
    }

    pub(crate) fn new(meta: Meta, owner: Owner) -> Self {
        Self {
            meta,
            owner: Some(owner),
            #[cfg(feature = "cuda")]
            ready: std::sync::OnceLock::new(),
        }
    }

    /// A tensor owning a managed tensor (imported from any producer, or exported by dlspan from a
    /// Rust owner: `Vec`, `Box<[T]>`, `Arc<[T]>`, records).
    ///
    /// # Errors
    ///
    /// The managed tensor's metadata is validated for any rank and data type:
    /// [`DlpackError::NullShape`], [`DlpackError::NegativeExtent`], [`DlpackError::NullStrides`],
    /// [`DlpackError::NullData`], [`DlpackError::SpanOverflow`], [`DlpackError::UnsupportedDtype`],
    /// [`DlpackError::NegativeNdim`], and [`DlpackError::UnsupportedRank`] above [`MAX_TENSOR_RANK`](super::MAX_TENSOR_RANK).
    ///
    /// ```
    /// use dlspan::{ManagedTensor, python::Tensor};
    /// use dlspan::pyo3::prelude::*;
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
    /// use dlspan::pyo3::{prelude::*, types::PyByteArray};
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
    ///     let values = dlspan::pyo3::types::PyMemoryView::from(odd.as_any())?.call_method0("tolist")?;
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
    /// use dlspan::pyo3::prelude::*;
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
        Self::zeroed(py, shape, dtype)
    }

    /// A zeroed, row-major CPU tensor of a validated shape (negative extents are refused by the
    /// validation, as [`DlpackError::NegativeExtent`]): what [`zeros`](Self::zeros) and the C
    /// exchange API's allocator make.
    pub(crate) fn zeroed<'py>(py: Python<'py>, shape: &[i64], dtype: DLDataType) -> PyResult<Bound<'py, Self>> {
        let cpu = DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 };
        let mut meta = compact_meta(shape, dtype, cpu)?;
        // Row-major: the span is the compact size.
        let (owner, data) = zeroed_bytes(meta.allocation_bytes(meta.span))?;
        meta.data = data;
        Bound::new(py, Self::new(meta, Owner::Managed(owner)))
    }

    /// A row-major CPU tensor holding a copy of `bytes`, the compact bytes of a tensor of `dtype`
    /// and `shape` (`padded`: one sub-byte value per byte): what unpickling makes.
    pub(crate) fn from_compact<'py>(
        py: Python<'py>,
        bytes: &[u8],
        dtype: DLDataType,
        shape: &[i64],
        read_only: bool,
        padded: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let strides = row_major(shape);
        let tensor = DLTensor {
            data: NonNull::<u64>::dangling().as_ptr().cast(),
            device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
            ndim: shape.len() as i32,
            dtype,
            shape: shape.as_ptr().cast_mut(),
            strides: strides.as_ptr().cast_mut(),
            byte_offset: 0,
        };
        let options = ImportOptions { subbyte_padded: padded, ..ImportOptions::CURRENT };
        let mut meta = Meta::from_dltensor(&tensor, options, read_only)?;
        // Row-major: the span is the compact size, which the bytes must be.
        if meta.span != bytes.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{} bytes do not hold a {dtype} tensor of shape {shape:?} ({} bytes)",
                bytes.len(),
                meta.span
            )));
        }
        let (owner, data) = zeroed_bytes(meta.allocation_bytes(meta.span))?;
        if !bytes.is_empty() {
            // SAFETY: `data` holds `meta.span` writable bytes of a fresh buffer, as many as `bytes`.
            unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len()) };
        }
        meta.data = data;
        Bound::new(py, Self::new(meta, Owner::Managed(owner)))
    }

    /// The tensor as a `DLTensor`, whose shape and strides point into this object.
    ///
    /// ```
    /// use dlspan::{ManagedTensor, python::Tensor};
    /// use dlspan::pyo3::prelude::*;
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
    /// use dlspan::pyo3::prelude::*;
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
}
