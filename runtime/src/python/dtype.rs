//! Data types as Python names them: NumPy's names (`"float32"`, `"bool"`, `"complex64"`), which
//! PyTorch and ml_dtypes share (`"bfloat16"`, `"float8_e4m3fn"`, `"float4_e2m1fn_x2"`) — the one name
//! table of `DLDataType`'s `Display` and `FromStr` — and the dtype objects of NumPy and PyTorch; and
//! the buffer protocol's format codes.

use crate::ffi::{DLDataType, DLDataTypeCode};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

/// Every data type a `dlspan.Tensor` holds: the scalar types of dlspan's element types (named by
/// `DLDataType`'s `Display` and read back by its `FromStr`).
pub const DTYPES: &[DLDataType] = {
    use DLDataTypeCode as C;
    const fn d(code: C, bits: u8, lanes: u16) -> DLDataType {
        DLDataType::new(code, bits, lanes)
    }
    &[
        d(C::kDLBool, 8, 1),
        d(C::kDLInt, 8, 1),
        d(C::kDLInt, 16, 1),
        d(C::kDLInt, 32, 1),
        d(C::kDLInt, 64, 1),
        d(C::kDLInt, 128, 1),
        d(C::kDLUInt, 8, 1),
        d(C::kDLUInt, 16, 1),
        d(C::kDLUInt, 32, 1),
        d(C::kDLUInt, 64, 1),
        d(C::kDLUInt, 128, 1),
        d(C::kDLFloat, 16, 1),
        d(C::kDLFloat, 32, 1),
        d(C::kDLFloat, 64, 1),
        d(C::kDLBfloat, 16, 1),
        d(C::kDLComplex, 32, 1),
        d(C::kDLComplex, 64, 1),
        d(C::kDLComplex, 128, 1),
        d(C::kDLFloat8_e3m4, 8, 1),
        d(C::kDLFloat8_e4m3, 8, 1),
        d(C::kDLFloat8_e4m3b11fnuz, 8, 1),
        d(C::kDLFloat8_e4m3fn, 8, 1),
        d(C::kDLFloat8_e4m3fnuz, 8, 1),
        d(C::kDLFloat8_e5m2, 8, 1),
        d(C::kDLFloat8_e5m2fnuz, 8, 1),
        d(C::kDLFloat8_e8m0fnu, 8, 1),
        d(C::kDLFloat6_e2m3fn, 6, 1),
        d(C::kDLFloat6_e3m2fn, 6, 1),
        d(C::kDLFloat4_e2m1fn, 4, 1),
        d(C::kDLFloat4_e2m1fn, 4, 2),
    ]
};

/// The data type a Python name denotes (`"float32"`, `"torch.float32"`).
///
/// ```
/// use dlspan::{dtype::dtype_of, python::dtype_from_name};
/// assert_eq!(dtype_from_name("float32"), Some(dtype_of::<f32>()));
/// assert_eq!(dtype_from_name("torch.bfloat16"), Some(dtype_of::<dlspan::half::bf16>()));
/// assert_eq!(dtype_from_name("float33"), None);
/// ```
pub fn dtype_from_name(name: &str) -> Option<DLDataType> {
    let name = name.strip_prefix("torch.").unwrap_or(name);
    name.parse().ok().filter(|dtype| DTYPES.contains(dtype))
}

/// The data type of a Python dtype description: a name, a NumPy dtype or scalar type
/// (`np.float32`, `np.dtype("float32")`), a PyTorch dtype (`torch.float32`), or the builtins `bool`,
/// `int`, `float` and `complex` (as NumPy reads them).
///
/// # Errors
///
/// `TypeError` naming the description when it is none of these.
///
/// ```
/// use dlspan::{dtype::dtype_of, python::dtype_from_py};
/// use dlspan::pyo3::prelude::*;
/// Python::initialize();
/// Python::attach(|py| {
///     assert_eq!(dtype_from_py(dlspan::pyo3::types::PyString::new(py, "int16").as_any())?, dtype_of::<i16>());
///     assert_eq!(dtype_from_py(&py.get_type::<dlspan::pyo3::types::PyFloat>())?, dtype_of::<f64>());
///     assert!(dtype_from_py(dlspan::pyo3::types::PyString::new(py, "float33").as_any()).is_err());
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub fn dtype_from_py(description: &Bound<'_, PyAny>) -> PyResult<DLDataType> {
    let py = description.py();
    let name: String = if let Ok(name) = description.cast::<PyString>() {
        name.to_str()?.to_owned()
    } else if let Ok(ty) = description.cast::<PyType>() {
        // Builtins as NumPy reads them; NumPy scalar types by their names (`np.float32`).
        match ty.name()?.to_str()? {
            "bool" => "bool".into(),
            "int" => "int64".into(),
            "float" => "float64".into(),
            "complex" => "complex128".into(),
            // NumPy (and ml_dtypes) scalar types: `np.dtype(np.intc).name` is "int32".
            name => match numpy_dtype_name(description)? {
                Some(name) => name,
                None => name.to_owned(),
            },
        }
    } else if let Some(name) = description.getattr_opt(pyo3::intern!(py, "name"))? {
        // NumPy dtype objects.
        name.extract()?
    } else {
        // PyTorch dtypes print as `torch.float32`.
        description.str()?.to_str()?.to_owned()
    };
    dtype_from_name(&name).ok_or_else(|| {
        let names: Vec<String> = DTYPES.iter().map(ToString::to_string).collect();
        let err = PyTypeError::new_err(format!(
            "data type {name:?} is not one dlspan holds; the data types are {}",
            names.join(", ")
        ));
        let _ = err.value(py).setattr("kind", "UnknownDtype");
        err
    })
}

/// `numpy.dtype(description).name`, when NumPy is loaded and understands the description.
fn numpy_dtype_name(description: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let py = description.py();
    let modules = py.import(pyo3::intern!(py, "sys"))?.getattr(pyo3::intern!(py, "modules"))?;
    let Ok(numpy) = modules.get_item("numpy") else { return Ok(None) };
    match numpy.call_method1(pyo3::intern!(py, "dtype"), (description,)) {
        Ok(dtype) => Ok(Some(dtype.getattr(pyo3::intern!(py, "name"))?.extract()?)),
        Err(_) => Ok(None),
    }
}

/// The buffer protocol's format code of a data type, where `struct` has one.
pub(crate) fn buffer_format(dtype: DLDataType) -> Option<&'static core::ffi::CStr> {
    use DLDataTypeCode as C;
    if dtype.lanes != 1 {
        return None;
    }
    Some(match (dtype.type_code(), dtype.bits) {
        (C::kDLBool, 8) => c"?",
        (C::kDLInt, 8) => c"b",
        (C::kDLInt, 16) => c"h",
        (C::kDLInt, 32) => c"i",
        (C::kDLInt, 64) => c"q",
        (C::kDLUInt, 8) => c"B",
        (C::kDLUInt, 16) => c"H",
        (C::kDLUInt, 32) => c"I",
        (C::kDLUInt, 64) => c"Q",
        (C::kDLFloat, 16) => c"e",
        (C::kDLFloat, 32) => c"f",
        (C::kDLFloat, 64) => c"d",
        (C::kDLComplex, 64) => c"Zf",
        (C::kDLComplex, 128) => c"Zd",
        _ => return None,
    })
}
