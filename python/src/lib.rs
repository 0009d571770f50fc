//! The `dlspan` Python module: [`Tensor`] (Rust-owned memory of any data type), the DLPack
//! consumer, and functions over tensors of any data type and rank (`ops`). Two submodules hold
//! what is not API: `dlspan.examples`, functions written with dlspan's typed view arguments (the
//! pass-through pattern for extension authors to copy), and `dlspan.diagnostics`.

mod convert;
mod device;
mod diagnostics;
mod examples;
mod ops;
mod particles;

use dlspan::ffi::{DLDevice, DLDeviceType};
use dlspan::python::{Framework, ImportRequest, Output, Tensor, dtype_from_py};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// A shape: an integer or a sequence of integers.
fn shape_of(shape: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let py = shape.py();
    let not_a_shape = |value: &Bound<'_, PyAny>| {
        let name = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        PyTypeError::new_err(format!("shape must be an int or a sequence of ints, got {name}"))
    };
    // An int, or anything with `__index__` (NumPy and PyTorch integers), as Python's `range` takes.
    let extent = |value: &Bound<'_, PyAny>| -> PyResult<i64> {
        let int = ops::index(value).map_err(|_| not_a_shape(value))?;
        int.extract::<i64>().map_err(|err| {
            if err.is_instance_of::<PyOverflowError>(py) {
                PyValueError::new_err(format!("extent {int} is too large: the most an axis takes is 2**63 - 1"))
            } else {
                err
            }
        })
    };
    // One extent, or a sequence of them (a tuple, a list, a 1-d array), not any iterable: a set has
    // no order.
    // SAFETY: a live object, attached; `PySequence_Check` reads its type's slots (a NumPy array is
    // a sequence there, though not a `collections.abc.Sequence`).
    let sequence = !shape.is_instance_of::<PyString>()
        && !shape.is_instance_of::<PyBytes>()
        && unsafe { pyo3::ffi::PySequence_Check(shape.as_ptr()) } == 1;
    match extent(shape) {
        Err(err) if sequence && err.is_instance_of::<PyTypeError>(py) => {
            shape.try_iter().map_err(|_| not_a_shape(shape))?.map(|item| extent(&item?)).collect()
        }
        one => one.map(|n| vec![n]),
    }
}

/// A device: `"cpu"`, `"cuda:1"`, or DLPack's `(device_type, device_id)`.
fn device_of(device: &Bound<'_, PyAny>) -> PyResult<DLDevice> {
    if let Ok((device_type, device_id)) = device.extract::<(i32, i32)>() {
        return Ok(DLDevice { device_type: DLDeviceType(device_type), device_id });
    }
    let name: String =
        device.extract().map_err(|_| PyTypeError::new_err("device must be a name or a (type, id) tuple"))?;
    let (kind, id) = name.split_once(':').unwrap_or((&name, "0"));
    let device_id = id.parse().map_err(|_| PyValueError::new_err(format!("bad device id in {name:?}")))?;
    let device_type = match kind {
        "cpu" => DLDeviceType::kDLCPU,
        "cuda" => DLDeviceType::kDLCUDA,
        "cuda_host" => DLDeviceType::kDLCUDAHost,
        "cuda_managed" => DLDeviceType::kDLCUDAManaged,
        "rocm" => DLDeviceType::kDLROCM,
        _ => return Err(PyValueError::new_err(format!("unknown device {name:?}"))),
    };
    Ok(DLDevice { device_type, device_id })
}

/// A new array filled with zeros, row-major: a ``Tensor`` in a 64-byte-aligned CPU buffer, or
/// with ``like``, an array of that framework.
///
/// Parameters
/// ----------
/// shape : int or sequence of int
///     The extent of each axis.
/// dtype : str, NumPy dtype or PyTorch dtype, optional
///     The data type: a name (``"float32"``, ``"bfloat16"``, ``"float4_e2m1fn"``), a NumPy dtype or
///     scalar type, a PyTorch dtype, or ``bool``, ``int``, ``float``, ``complex``. ``float32`` by
///     default. FP6 and FP4 values are packed (several to a byte), as DLPack stores them.
/// like : array, optional
///     An array whose framework the result takes (a NumPy array, a ``torch.Tensor``, a JAX array),
///     as NumPy's ``like=``; a ``Tensor`` for dtypes that framework cannot hold.
///
/// Returns
/// -------
/// Tensor or array
///
/// Raises
/// ------
/// TypeError
///     ``dtype`` is not a data type dlspan holds (the message lists those it holds).
/// ValueError
///     An extent is negative.
/// BufferError
///     The tensor's size does not fit in memory.
#[pyfunction]
#[pyo3(signature = (shape, dtype = None, *, like = None))]
fn zeros<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    like: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let dtype = match dtype {
        Some(dtype) => dtype_from_py(dtype)?,
        None => dlspan::dtype::dtype_of::<f32>(),
    };
    let shape = shape_of(shape)?;
    let Some(like) = like else { return Ok(Tensor::zeros(py, &shape, dtype)?.into_any()) };
    if let Some((axis, &extent)) = shape.iter().enumerate().find(|&(_, &e)| e < 0) {
        return Err(PyValueError::new_err(format!("extent {extent} of axis {axis} is negative")));
    }
    let shape: Vec<usize> = shape.iter().map(|&e| e as usize).collect();
    Output::new(py, Framework::of(like)?, dtype, &shape)?.finish()
}

/// A ``Tensor`` sharing the memory of any DLPack producer: a NumPy array, a PyTorch tensor, a JAX
/// array, any object with ``__dlpack__``, or a DLPack capsule.
///
/// Parameters
/// ----------
/// x : object
///     The producer (or a capsule, which is consumed).
/// copy : bool, optional
///     ``True`` always copies (into memory only the new tensor holds), ``False`` never does (an
///     error if the producer can only give a copy), ``None`` shares the producer's memory.
/// device : str or tuple of (int, int), optional
///     The device the tensor must be on (``"cpu"``, ``"cuda:0"`` or DLPack's ``(type, id)``);
///     dlspan moves no memory between devices.
///
/// Returns
/// -------
/// Tensor
///     Read-only when the producer's memory is (a JAX array, a non-writeable NumPy array).
///
/// Raises
/// ------
/// BufferError
///     The producer cannot export the tensor, or not to ``device``; the capsule was consumed.
/// TypeError
///     ``x`` is no DLPack producer.
/// ValueError
///     ``copy=False`` and only a copy can be given.
#[pyfunction]
#[pyo3(signature = (x, *, copy = None, device = None))]
fn from_dlpack<'py>(
    x: &Bound<'py, PyAny>,
    copy: Option<bool>,
    device: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, Tensor>> {
    let device = device.map(device_of).transpose()?;
    Tensor::from_dlpack(x, ImportRequest { copy, device, stream: None })
}

/// Adds the submodule `dlspan.<name>`, described by `doc` and filled by `fill`. PyO3 makes a
/// module, not a package entry: the module is registered in `sys.modules` under its full name, so
/// that `import dlspan.<name>` and `from dlspan.<name> import …` find it.
fn add_submodule(
    parent: &Bound<'_, PyModule>,
    name: &str,
    doc: &str,
    fill: impl FnOnce(&Bound<'_, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let py = parent.py();
    let full_name = format!("dlspan.{name}");
    let module = PyModule::new(py, &full_name)?;
    module.setattr("__doc__", doc)?;
    fill(&module)?;
    parent.add(name, &module)?;
    py.import("sys")?.getattr("modules")?.set_item(full_name, module)?;
    Ok(())
}

/// NumPy, PyTorch and JAX arrays as typed, checked views, without copying.
///
/// dlspan is a Rust library that makes DLPack tensors typed and safe; this package is its Python
/// side:
///
/// - ``Tensor``: memory dlspan owns, of any dtype (FP8, FP6 and FP4 included), exchanged with any
///   framework through DLPack and the buffer protocol;
/// - ``from_dlpack``, ``zeros``, ``arange``: tensors from any DLPack producer, or new ones;
/// - ``add``, ``mul``, ``scale_``, ``sum``, ``copy``, ``cast``, ``signature``: functions over
///   arrays of any framework, dtype, shape and strides, reading them in place, in host memory or on
///   a CUDA device (there on the caller's stream: PyTorch's or CuPy's current stream).
///
/// Extensions written in Rust on dlspan take NumPy arrays, PyTorch tensors and JAX arrays as typed,
/// checked arguments; ``dlspan.examples`` holds a few to copy, ``dlspan.diagnostics`` what tests
/// ask of the views alive.
///
/// Errors are the array API's exceptions (``BufferError``, ``TypeError``, ``ValueError``) with a
/// ``kind`` attribute (the name of the error) and, where the error has them, ``expected`` and
/// ``found``; an error about an argument carries the note ``while processing 'x'``.
#[pymodule(name = "dlspan")]
fn dlspan_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // First: this module's registry and `Tensor` class are the process's (rule Y18).
    dlspan::python::export_c_api(m)?;
    m.add_class::<Tensor>()?;
    // The exception of a stream a device cannot honour: a ValueError and a RuntimeError.
    m.add("InvalidStreamError", dlspan::python::invalid_stream_error(m.py())?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(ops::add, m)?)?;
    m.add_function(wrap_pyfunction!(ops::mul, m)?)?;
    m.add_function(wrap_pyfunction!(ops::scale, m)?)?;
    m.add_function(wrap_pyfunction!(ops::sum, m)?)?;
    m.add_function(wrap_pyfunction!(convert::copy, m)?)?;
    m.add_function(wrap_pyfunction!(convert::cast_array, m)?)?;
    m.add_function(wrap_pyfunction!(ops::arange, m)?)?;
    m.add_function(wrap_pyfunction!(ops::signature, m)?)?;
    add_submodule(m, "examples", examples::DOC, examples::fill)?;
    add_submodule(m, "diagnostics", diagnostics::DOC, diagnostics::fill)?;
    Ok(())
}
