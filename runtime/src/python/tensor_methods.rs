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
use crate::ffi::{DLDataType, DLDevice, DLDeviceType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyModule, PyString, PyTuple, PyType};

#[pymethods]
impl Tensor {
    /// The extent of each axis, a tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.meta.shape().iter())
    }

    /// The step of each axis in elements, a tuple of ints (PyTorch's convention; NumPy's
    /// ``strides`` are in bytes).
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.meta.strides().iter())
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
        self.meta.shape().len()
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
        match self.meta.shape().first() {
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

    /// Pickling, by copy: the values' bytes (compact, row-major), the data type (as DLPack's
    /// `(code, bits, lanes)`, so that every data type a `Tensor` holds comes back, named or not), the
    /// shape and the flags. BufferError for memory the host cannot read.
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
        let shape = PyTuple::new(py, meta.shape().iter())?;
        let dtype = (meta.dtype.code, meta.dtype.bits, meta.dtype.lanes);
        let arguments = (bytes, dtype, shape, meta.read_only, meta.subbyte_padded);
        PyTuple::new(py, [rebuild, arguments.into_pyobject(py)?.into_any()])
    }

    /// Unpickling: a tensor holding a copy of `data`, the compact row-major bytes of a tensor of
    /// `dtype` (DLPack's `(code, bits, lanes)`, or a name `dlspan.zeros` takes) and `shape`
    /// (`padded`: one sub-byte value per byte).
    #[classmethod]
    #[pyo3(signature = (data, dtype, shape, readonly = false, padded = false))]
    fn _from_bytes<'py>(
        cls: &Bound<'py, PyType>,
        data: &Bound<'py, PyBytes>,
        dtype: &Bound<'py, PyAny>,
        shape: Vec<i64>,
        readonly: bool,
        padded: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let py = cls.py();
        let dtype = match dtype.extract::<(u8, u8, u16)>() {
            Ok((code, bits, lanes)) => DLDataType { code, bits, lanes },
            Err(_) => dtype_from_py(dtype)?,
        };
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
        // NumPy reads the memory on the host: pinned and managed memory after the device (rule Y16).
        wait_for_host(slf.get().meta.device)?;
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
                    // Read under a shared borrow (rule Y8), as dlspan's own copies of a tensor are.
                    let _borrow = values::hold(slf.as_any(), &slf.get().meta)?;
                    return array.call_method1(pyo3::intern!(py, "astype"), (dtype,));
                }
                copy == Some(true)
            }
            None => copy == Some(true),
        };
        if !needs_copy {
            return Ok(array);
        }
        // Read under a shared borrow (rule Y8): a mutable view argument alive now refuses the copy.
        let _borrow = values::hold(slf.as_any(), &slf.get().meta)?;
        array.call_method0(pyo3::intern!(py, "copy"))
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
        let ndim = meta.shape().len();
        let mut buffer = ffi::Py_buffer::new();
        buffer.buf = meta.first().cast();
        buffer.obj = slf.clone().into_any().into_ptr();
        buffer.len = (meta.numel * meta.item_size) as isize;
        buffer.readonly = core::ffi::c_int::from(meta.read_only);
        buffer.itemsize = meta.item_size as isize;
        buffer.format = if flags & ffi::PyBUF_FORMAT != 0 { format.as_ptr().cast_mut() } else { core::ptr::null_mut() };
        buffer.ndim = ndim as core::ffi::c_int;
        if contiguous(ffi::PyBUF_ND) && ndim > 0 {
            buffer.shape = meta.buffer_shape().as_ptr().cast_mut();
        }
        if contiguous(ffi::PyBUF_STRIDES) && ndim > 0 {
            buffer.strides = meta.buffer_strides().as_ptr().cast_mut();
        }
        // SAFETY: CPython passes a writable `Py_buffer` to fill. Its pointers point into this tensor
        // (or a static format string), which the buffer keeps alive through `obj` (a new reference).
        unsafe { view.write(buffer) };
        Ok(())
    }

    #[cfg(Py_3_11)]
    unsafe fn __releasebuffer__(&self, _view: *mut pyo3::ffi::Py_buffer) {}
}

/// Exports this build's borrow registry, `Tensor` class and exchange table as the process's: the
/// capsule `_C_API` (named `dlspan._C_API`) on `module`, which extensions built on this crate find
/// at their first use of the Python exchange (`PyCapsule_Import("dlspan._C_API")`), registering
/// their view arguments' borrows here and making their results ([`into_tensor`](super::into_tensor),
/// [`Output`](super::Output)) of this class ([rule Y18](crate::rules#y18)). The `dlspan` package's
/// module calls it (and re-exports `_C_API` from its `__init__.py`); an extension has no reason
/// to.
///
/// It also makes `Tensor.__dlpack__` a hand-written `METH_FASTCALL` method, the same to callers.
///
/// # Errors
///
/// What setting the module attribute or the method raises.
///
/// ```
/// use dlspan::pyo3::{prelude::*, types::{PyCapsule, PyModule}};
/// Python::initialize();
/// Python::attach(|py| {
///     let module = PyModule::new(py, "dlspan")?;
///     dlspan::python::export_c_api(&module)?;
///     let capsule = module.getattr("_C_API")?.cast_into::<PyCapsule>()?;
///     assert!(capsule.is_valid_checked(Some(c"dlspan._C_API")));
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub fn export_c_api(module: &Bound<'_, PyModule>) -> PyResult<()> {
    super::package::export_table(module)?;
    install_fast_dlpack(module.py())
}

/// The keywords of `__dlpack__`, in [`ExportRequest`]'s order.
const DLPACK_KEYWORDS: [&str; 4] = ["stream", "max_version", "dl_device", "copy"];

/// Replaces the `__dlpack__` PyO3 generated on the process's `Tensor` type with the same method
/// as a `METH_FASTCALL | METH_KEYWORDS` C function whose keywords are matched by identity with
/// interned names first: NumPy's `from_dlpack` passes three keywords, which PyO3 matched as UTF-8
/// text (about half of the method's instructions). Same signature, documentation, errors' types
/// and result; called once, by the package's module (rule Y18).
pub(crate) fn install_fast_dlpack(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<Tensor>();
    let generated = ty.getattr(intern!(py, "__dlpack__"))?;
    let signature: String = generated.getattr(intern!(py, "__text_signature__"))?.extract()?;
    let doc: String = generated.getattr(intern!(py, "__doc__"))?.extract()?;
    let doc = std::ffi::CString::new(format!("__dlpack__{signature}\n--\n\n{doc}"))
        .map_err(|_| PyValueError::new_err("__dlpack__'s documentation holds a NUL"))?;
    // The definition lives as long as the type that holds its descriptor: the process.
    let def: &'static mut pyo3::ffi::PyMethodDef = Box::leak(Box::new(pyo3::ffi::PyMethodDef {
        ml_name: c"__dlpack__".as_ptr(),
        ml_meth: pyo3::ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: dlpack_fast },
        ml_flags: pyo3::ffi::METH_FASTCALL | pyo3::ffi::METH_KEYWORDS,
        ml_doc: Box::leak(doc.into_boxed_c_str()).as_ptr(),
    }));
    // SAFETY: a live type object and a method definition that outlives it, attached; the
    // descriptor checks that `self` is a `Tensor` before calling `dlpack_fast`.
    let descriptor = unsafe { pyo3::ffi::PyDescr_NewMethod(ty.as_type_ptr(), def) };
    // SAFETY: a new reference or null with an exception set.
    let descriptor = unsafe { Bound::from_owned_ptr_or_err(py, descriptor) }?;
    ty.setattr(intern!(py, "__dlpack__"), descriptor)
}

/// `Tensor.__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)` for
/// [`install_fast_dlpack`].
///
/// # Safety
///
/// Called by CPython as a `METH_FASTCALL | METH_KEYWORDS` method of `Tensor`: attached, `slf` a
/// `Tensor` (checked by the method descriptor), `args` holding the positional arguments and then
/// one value per name of the tuple `kwnames` (or null).
unsafe extern "C" fn dlpack_fast(
    slf: *mut pyo3::ffi::PyObject,
    args: *const *mut pyo3::ffi::PyObject,
    nargsf: pyo3::ffi::Py_ssize_t,
    kwnames: *mut pyo3::ffi::PyObject,
) -> *mut pyo3::ffi::PyObject {
    // SAFETY: CPython calls methods attached (caller).
    let py = unsafe { Python::assume_attached() };
    let call = std::panic::AssertUnwindSafe(|| -> PyResult<*mut pyo3::ffi::PyObject> {
        // SAFETY: the method's own `self`, alive for the call (caller).
        let slf = unsafe { Borrowed::from_ptr(py, slf) }.cast::<Tensor>()?;
        // The count without `PY_VECTORCALL_ARGUMENTS_OFFSET`, the top bit (not in the limited API
        // before Python 3.12).
        let nargs = nargsf & pyo3::ffi::Py_ssize_t::MAX;
        if nargs != 0 {
            return Err(PyTypeError::new_err(format!(
                "__dlpack__() takes 0 positional arguments but {nargs} were given"
            )));
        }
        let mut values: [Option<Borrowed<'_, '_, PyAny>>; 4] = [None; 4];
        if !kwnames.is_null() {
            // SAFETY: a tuple of the keyword names, alive for the call (caller).
            let names = unsafe { Borrowed::from_ptr(py, kwnames) }.cast::<PyTuple>()?;
            let interned =
                [intern!(py, "stream"), intern!(py, "max_version"), intern!(py, "dl_device"), intern!(py, "copy")];
            for (i, name) in names.iter_borrowed().enumerate() {
                let slot = match interned.iter().position(|known| known.is(&*name)) {
                    Some(slot) => slot,
                    None => {
                        let name = name.cast::<PyString>()?;
                        let text = name.to_cow()?;
                        DLPACK_KEYWORDS.iter().position(|known| *known == text).ok_or_else(|| {
                            PyTypeError::new_err(format!("__dlpack__() got an unexpected keyword argument '{text}'"))
                        })?
                    }
                };
                // SAFETY: `args` holds one value per keyword name after the `nargs` (zero)
                // positional ones (caller).
                let slot_ptr = unsafe { args.add(i) };
                // SAFETY: as above: a readable slot.
                let raw = unsafe { *slot_ptr };
                // SAFETY: a live object for the call (caller).
                let value = unsafe { Borrowed::from_ptr(py, raw) };
                if values[slot].replace(value).is_some() {
                    let name = DLPACK_KEYWORDS[slot];
                    return Err(PyTypeError::new_err(format!(
                        "__dlpack__() got multiple values for argument '{name}'"
                    )));
                }
            }
        }
        // A value given as None is the default; a refusal names the argument, as PyO3's did.
        let given = |slot: usize| values[slot].filter(|value| !value.is_none());
        let named = |slot: usize| {
            move |err: PyErr| {
                let wrapped = PyTypeError::new_err(format!("argument '{}': {}", DLPACK_KEYWORDS[slot], err.value(py)));
                wrapped.set_cause(py, Some(err));
                wrapped
            }
        };
        let request = ExportRequest {
            stream: given(0).map(|v| v.extract::<i64>()).transpose().map_err(named(0))?,
            max_version: given(1).map(|v| v.extract::<(u32, u32)>()).transpose().map_err(named(1))?,
            dl_device: given(2)
                .map(|v| v.extract::<(i32, i32)>())
                .transpose()
                .map_err(named(2))?
                .map(|(t, id)| DLDevice { device_type: DLDeviceType(t), device_id: id }),
            copy: given(3).map(|v| v.extract::<bool>()).transpose().map_err(named(3))?,
        };
        Ok(Tensor::dlpack(&slf.to_owned(), &request)?.into_ptr())
    });
    let result = std::panic::catch_unwind(call).unwrap_or_else(|payload| {
        Err(pyo3::panic::PanicException::new_err(crate::error::panic_message(payload, "panic in __dlpack__")))
    });
    result.unwrap_or_else(|err| {
        err.restore(py);
        core::ptr::null_mut()
    })
}
