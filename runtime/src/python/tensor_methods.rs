//! `dlspan.Tensor` as Python sees it: its attributes, `__dlpack__` and `__dlpack_device__`, the
//! class attribute `__dlpack_c_exchange_api__` and the buffer protocol. PyO3 takes one
//! `#[pymethods]` block per class, and this one calls the producer and the exchange table, so it
//! sits above both.

use super::copy::compact_copy;
use super::device::{device_name, wait_for_host};
use super::dtype::buffer_format;
use super::dtype::dtype_from_py;
use super::exchange::api_capsule;
use super::output::numpy_array;
use super::producer::ExportRequest;
use super::tensor::Tensor;
use super::values;
use crate::error::DlpackError;
use crate::ffi::{DLDevice, DLDeviceType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyString, PyTuple, PyType};

#[pymethods]
impl Tensor {
    /// The extent of each axis, a tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.meta.shape.iter())
    }

    /// The step of each axis in elements, a tuple of ints (PyTorch's convention; NumPy's
    /// ``strides`` are in bytes).
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.meta.strides.iter())
    }

    /// The data type, as NumPy names it: ``"float32"``, ``"bfloat16"``, ``"float8_e4m3fn"``, ...
    #[getter]
    fn dtype(&self) -> String {
        self.meta.dtype.to_string()
    }

    /// The device: ``"cpu"``, ``"cuda:0"``, ...
    #[getter]
    fn device(&self) -> String {
        device_name(self.meta.device)
    }

    /// Whether consumers must not write the memory (a bool).
    #[getter]
    fn readonly(&self) -> bool {
        self.meta.read_only
    }

    /// The number of axes.
    #[getter]
    fn ndim(&self) -> usize {
        self.meta.shape.len()
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.meta.numel
    }

    /// The bytes the elements take stored compactly (NumPy's ``nbytes``: a broadcast tensor counts
    /// every element, although its memory holds fewer).
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        Ok(self.meta.compact_bytes().ok_or(DlpackError::SpanOverflow)?)
    }

    fn __len__(&self) -> PyResult<usize> {
        match self.meta.shape.first() {
            Some(&n) => Ok(n as usize),
            None => Err(pyo3::exceptions::PyTypeError::new_err("len() of a 0-d tensor")),
        }
    }

    /// The values, summarised and aligned as NumPy prints arrays (`Tensor([0., 1.5], dtype=float32)`);
    /// shape and data type only for memory the host cannot read.
    fn __repr__(slf: &Bound<'_, Self>) -> String {
        values::repr(slf.as_any(), &slf.get().meta)
    }

    /// The values as nested lists of Python scalars (`bool`, `int`, `float`, `complex`); a 0-d
    /// tensor's as one scalar. BufferError for memory the host cannot read.
    fn tolist<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        values::to_list(slf.as_any(), &slf.get().meta)
    }

    /// Pickling, by copy: the values' bytes (compact, row-major), the data type, the shape and the
    /// flags. BufferError for memory the host cannot read.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let meta = &slf.get().meta;
        let bytes = {
            let _borrow = values::hold(slf.as_any(), meta)?;
            let length = meta.compact_bytes().ok_or(DlpackError::SpanOverflow)?;
            PyBytes::new_with(py, length, |target| {
                // SAFETY: `meta` is validated and its host memory ready and alive (the tensor is
                // held) and registered against writers; `target` holds `compact_bytes` zeroed
                // bytes of a new object that nothing else reaches.
                unsafe { compact_copy(meta, target.as_mut_ptr()) };
                Ok(())
            })?
        };
        let rebuild = slf.get_type().getattr(pyo3::intern!(py, "_from_bytes"))?;
        let shape = PyTuple::new(py, meta.shape.iter())?;
        let arguments = (bytes, meta.dtype.to_string(), shape, meta.read_only, meta.subbyte_padded);
        PyTuple::new(py, [rebuild, arguments.into_pyobject(py)?.into_any()])
    }

    /// Unpickling: a tensor holding a copy of `data`, the compact row-major bytes of a tensor of
    /// `dtype` and `shape` (`padded`: one sub-byte value per byte).
    #[classmethod]
    #[pyo3(signature = (data, dtype, shape, readonly = false, padded = false))]
    fn _from_bytes<'py>(
        cls: &Bound<'py, PyType>,
        data: &Bound<'py, PyBytes>,
        dtype: &str,
        shape: Vec<i64>,
        readonly: bool,
        padded: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let py = cls.py();
        let dtype = dtype_from_py(PyString::new(py, dtype).as_any())?;
        Tensor::from_compact(py, data.as_bytes(), dtype, &shape, readonly, padded)
    }

    /// NumPy's array protocol: a NumPy array sharing the memory (read-only when the tensor is),
    /// or a copy for `copy=True` or another `dtype`; ValueError when `copy=False` and a copy is
    /// needed. ml_dtypes types (`bfloat16`, FP8) are viewed as ml_dtypes arrays; TypeError for
    /// data types NumPy does not hold.
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let Some(array) = numpy_array(slf)? else {
            return Err(PyTypeError::new_err(format!("data type {} has no NumPy dtype", slf.get().meta.dtype)));
        };
        let needs_copy = match dtype {
            Some(dtype) => {
                let dtype =
                    py.import(pyo3::intern!(py, "numpy"))?.call_method1(pyo3::intern!(py, "dtype"), (dtype,))?;
                let same = array.getattr(pyo3::intern!(py, "dtype"))?.eq(&dtype)?;
                if !same {
                    if copy == Some(false) {
                        return Err(PyValueError::new_err(format!(
                            "a {} tensor cannot be given as {dtype} without a copy (copy=False)",
                            slf.get().meta.dtype
                        )));
                    }
                    return array.call_method1(pyo3::intern!(py, "astype"), (dtype,));
                }
                copy == Some(true)
            }
            None => copy == Some(true),
        };
        if needs_copy { array.call_method0(pyo3::intern!(py, "copy")) } else { Ok(array) }
    }

    /// The device as DLPack codes it: ``(device_type, device_id)``.
    ///
    /// Returns
    /// -------
    /// tuple of (int, int)
    ///     ``(1, 0)`` for CPU memory, ``(2, n)`` for CUDA device ``n``, ... (DLPack's ``DLDeviceType``).
    fn __dlpack_device__(&self) -> (i32, i32) {
        (self.meta.device.device_type.0, self.meta.device.device_id)
    }

    /// A DLPack capsule of this tensor, for another framework's ``from_dlpack`` (the array API's
    /// ``__dlpack__``).
    ///
    /// Parameters
    /// ----------
    /// stream : int, optional
    ///     The consumer's stream, for device memory: ``None`` or ``-1`` for CPU memory (``0`` is never
    ///     valid).
    /// max_version : tuple of (int, int), optional
    ///     The highest DLPack version the consumer reads. Without it the capsule is a legacy one
    ///     (``dltensor``), which read-only memory cannot be exported as; with it, a versioned one
    ///     (``dltensor_versioned``) of version ``min(max_version, (1, 3))``.
    /// dl_device : tuple of (int, int), optional
    ///     The device the consumer wants the data on; only the tensor's own device can be delivered.
    /// copy : bool, optional
    ///     ``True`` exports a copy (flagged ``IS_COPIED``), ``False`` refuses any copy, ``None`` shares
    ///     the memory.
    ///
    /// Returns
    /// -------
    /// PyCapsule
    ///     The capsule; the tensor's memory stays alive until the consumer releases it.
    ///
    /// Raises
    /// ------
    /// BufferError
    ///     The tensor cannot be exported as asked: read-only memory as a legacy capsule, another device.
    /// ValueError
    ///     ``stream`` is not valid for the tensor's device.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        stream: Option<i64>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let dl_device = dl_device.map(|(t, id)| DLDevice { device_type: DLDeviceType(t), device_id: id });
        Self::dlpack(slf, &ExportRequest { stream, max_version, dl_device, copy })
    }

    /// The DLPack C exchange API table (a ``dlpack_exchange_api`` capsule), which frameworks read
    /// tensors through without a capsule per call.
    #[classattr]
    fn __dlpack_c_exchange_api__(py: Python<'_>) -> PyResult<Bound<'_, PyCapsule>> {
        api_capsule(py)
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
        wait_for_host(meta.device)?;
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
