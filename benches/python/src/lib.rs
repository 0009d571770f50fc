//! Peers of the Python benchmarks (`benches/python/exchange.py`), compiled like the `dlspan` module
//! (PyO3 0.30, abi3, release): an empty one-argument `#[pyfunction]`; the floor of a PyTorch
//! extraction — the same cached exchange-table call dlspan makes, reading `ndim` and nothing else;
//! rust-numpy's `PyReadonlyArrayDyn` extraction; and dlspan's typed extraction of one tensor.

use core::ffi::c_void;
use dlspan::ffi::{DLPackExchangeAPI, DLTensor};
use dlspan::python::PyView;
use numpy::PyReadonlyArrayDyn;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCapsule;
use std::hint::black_box;

/// An empty one-argument function: the cost of a call.
#[pyfunction]
fn empty(x: &Bound<'_, PyAny>) {
    black_box(x);
}

/// `torch.Tensor`'s exchange table, looked up once.
struct Table(&'static DLPackExchangeAPI);
// SAFETY: PyTorch's table is static and immutable.
unsafe impl Send for Table {}
// SAFETY: as above.
unsafe impl Sync for Table {}

static TORCH_TABLE: PyOnceLock<Table> = PyOnceLock::new();

fn torch_table(py: Python<'_>) -> PyResult<&'static DLPackExchangeAPI> {
    let table = TORCH_TABLE.get_or_try_init(py, || -> PyResult<Table> {
        let capsule = py.import("torch")?.getattr("Tensor")?.getattr("__dlpack_c_exchange_api__")?;
        let capsule = capsule.cast_into::<PyCapsule>()?;
        let pointer = capsule.pointer_checked(Some(c"dlpack_exchange_api"))?;
        // PyTorch's table lives as long as the process; the capsule is kept alive by the class.
        std::mem::forget(capsule);
        // SAFETY: the capsule holds a static DLPackExchangeAPI (DLPack 1.3).
        Ok(Table(unsafe { pointer.cast::<DLPackExchangeAPI>().as_ref() }))
    })?;
    Ok(table.0)
}

/// The floor of a typed PyTorch extraction: the cached exchange call, reading `ndim`.
#[pyfunction]
fn torch_floor(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
    let fill = torch_table(py)?.dltensor_from_py_object_no_sync.expect("PyTorch fills DLTensors");
    let mut tensor = DLTensor::default();
    // SAFETY: `x` is a torch.Tensor (the benchmark passes one); the GIL is held.
    if unsafe { fill(x.as_ptr().cast::<c_void>(), &mut tensor) } != 0 {
        return Err(PyErr::fetch(py));
    }
    black_box(tensor.ndim);
    Ok(())
}

/// rust-numpy's read-only extraction of a float32 array of any rank.
#[pyfunction]
fn numpy_readonly(x: PyReadonlyArrayDyn<'_, f32>) {
    black_box(x.as_array().ndim());
}

/// dlspan's typed extraction of one float32 vector (any strides), borrow-checked.
#[pyfunction]
fn dlspan_view(x: PyView<'_, f32, 1>) {
    black_box(x.view());
}

/// The module.
#[pymodule(name = "dlspan_bench_peers")]
fn peers(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(torch_floor, m)?)?;
    m.add_function(wrap_pyfunction!(numpy_readonly, m)?)?;
    m.add_function(wrap_pyfunction!(dlspan_view, m)?)?;
    Ok(())
}
