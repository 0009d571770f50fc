//! The `dlspan` Python module: [`Tensor`] (Rust-owned memory of any data type), the DLPack
//! consumer, and functions written with dlspan's typed view arguments — the pass-through pattern
//! for extension authors to copy.

mod ops;
mod particles;

use dlspan::ffi::{DLDevice, DLDeviceType};
use dlspan::python::{DETACH_ELEMENTS, ImportRequest, PyView, PyViewMut, Tensor, dtype_from_py};
use dlspan::view::Static;
use dlspan::{DlpackError, LayoutRight, LayoutStride};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A shape: an integer or a sequence of integers.
fn shape_of(shape: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    match shape.extract::<i64>() {
        Ok(n) => Ok(vec![n]),
        Err(_) => shape.extract::<Vec<i64>>(),
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

/// A zeroed tensor of `shape` and `dtype` (a name, a NumPy or PyTorch dtype), 64-byte aligned.
#[pyfunction]
#[pyo3(signature = (shape, dtype = None))]
fn zeros<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, Tensor>> {
    let dtype = match dtype {
        Some(dtype) => dtype_from_py(dtype)?,
        None => dlspan::dtype::dtype_of::<f32>(),
    };
    Tensor::zeros(py, &shape_of(shape)?, dtype)
}

/// Imports any DLPack producer (NumPy, PyTorch, JAX, a capsule) as a `dlspan.Tensor`.
#[pyfunction]
#[pyo3(signature = (x, *, copy = None, device = None))]
fn from_dlpack<'py>(
    x: &Bound<'py, PyAny>,
    copy: Option<bool>,
    device: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, Tensor>> {
    let device = device.map(device_of).transpose()?;
    let tensor = dlspan::python::from_dlpack(x, ImportRequest { copy, device, stream: None })?;
    Tensor::from_managed(x.py(), tensor)
}

/// `y += alpha * x` for float32 vectors of any strides: the typed-argument pattern.
#[pyfunction]
fn axpy(py: Python<'_>, alpha: f32, x: PyView<'_, f32, 1>, mut y: PyViewMut<'_, f32, 1>) -> PyResult<()> {
    let x = x.view();
    let mut y = y.view_mut();
    let mut run = move || y.zip_with(&x, |y, &x| *y += alpha * x);
    if x.size() >= DETACH_ELEMENTS { py.detach(run) } else { run() }?;
    Ok(())
}

/// The determinant of a 3×3 float64 matrix: static extents in the argument's type.
#[pyfunction]
fn det3(m: PyView<'_, f64, 2, LayoutStride, (Static<3>, Static<3>)>) -> f64 {
    let m = m.view();
    m[[0, 0]] * (m[[1, 1]] * m[[2, 2]] - m[[1, 2]] * m[[2, 1]])
        - m[[0, 1]] * (m[[1, 0]] * m[[2, 2]] - m[[1, 2]] * m[[2, 0]])
        + m[[0, 2]] * (m[[1, 0]] * m[[2, 1]] - m[[1, 1]] * m[[2, 0]])
}

/// The trace of a square float64 matrix stored row-major (compact layout required).
#[pyfunction]
fn trace(m: PyView<'_, f64, 2, LayoutRight>) -> PyResult<f64> {
    let m = m.view();
    if m.extent(0) != m.extent(1) {
        return Err(DlpackError::ShapeMismatch { axis: 1, expected: m.extent(0), found: m.extent(1) }.into());
    }
    Ok((0..m.extent(0)).map(|i| m[[i, i]]).sum())
}

/// Test hook (not API): holds a view of `x` while `callback()` runs Python code, then sums the view
/// — what an extension that calls back into Python does. The view's memory must stay alive.
#[pyfunction]
fn _sum_during(x: PyView<'_, f64, 1>, callback: &Bound<'_, PyAny>) -> PyResult<f64> {
    let view = x.view();
    callback.call0()?;
    Ok(view.sum())
}

/// The number of view arguments alive (borrows registered): 0 between calls.
#[pyfunction]
fn live_borrows(py: Python<'_>) -> usize {
    dlspan::python::live_borrows(py)
}

/// The `dlspan` module.
#[pymodule(name = "dlspan")]
fn dlspan_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tensor>()?;
    m.add_class::<particles::Particles>()?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(axpy, m)?)?;
    m.add_function(wrap_pyfunction!(det3, m)?)?;
    m.add_function(wrap_pyfunction!(trace, m)?)?;
    m.add_function(wrap_pyfunction!(live_borrows, m)?)?;
    m.add_function(wrap_pyfunction!(_sum_during, m)?)?;
    m.add_function(wrap_pyfunction!(ops::add, m)?)?;
    m.add_function(wrap_pyfunction!(ops::mul, m)?)?;
    m.add_function(wrap_pyfunction!(ops::scale, m)?)?;
    m.add_function(wrap_pyfunction!(ops::sum, m)?)?;
    m.add_function(wrap_pyfunction!(ops::arange, m)?)?;
    m.add_function(wrap_pyfunction!(ops::signature, m)?)?;
    Ok(())
}
