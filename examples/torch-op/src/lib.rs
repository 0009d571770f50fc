//! The kernels of a PyTorch operator, SiLU (`x · sigmoid(x)`), written in Rust with dlspan: the
//! forward pass an element-wise kernel (`dlspan::elementwise!`), the backward pass a raw kernel
//! (`dlspan::kernel!`, CUDA C++). On CPU tensors both run on the CPU (the element-wise body as Rust,
//! the raw kernel through the host C++ compiler); on CUDA tensors both are compiled by NVRTC and
//! launched on the caller's stream — PyTorch's current stream — with no synchronisation. The
//! Python package around this module (`python/my_torch_ops`) registers them with `torch.library`.
//!
//! Each function takes float32 or float64 tensors of any rank and returns a new row-major
//! `torch.Tensor` from PyTorch's allocator (on the input's device), without copying.

use dlspan::cuda::Stream;
use dlspan::dtype::{RankVisitor, dispatch_rank};
use dlspan::ffi::{DLDataType, DLDataTypeCode};
use dlspan::kernel::{Cpu, Float, LaunchConfig};
use dlspan::pyo3::exceptions::{PyTypeError, PyValueError};
use dlspan::pyo3::prelude::*;
use dlspan::python::{Output, PyDynView};
use dlspan::{Device, DeviceMdspanMut, Dims, DlElement, Host, LayoutRight, LayoutStrideRelaxed, Mdspan, MemorySpace};

dlspan::elementwise! {
    /// `y = x · sigmoid(x) = x / (1 + e^−x)`.
    pub fn silu_forward<T: Float>(x: &T, y: &mut T) {
        *y = *x / (1.0 as T + (-*x).exp());
    }
}

dlspan::kernel! {
    /// `grad_x = grad_y · s · (1 + x · (1 − s))` with `s = sigmoid(x)`: one thread per element of
    /// flat (contiguous) views.
    pub fn silu_backward_kernel<T>(x: &[T; 1], grad_y: &[T; 1], grad_x: &mut [T; 1]) {
        r#"
        const dl::index_t i = (dl::index_t)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < grad_x.extent(0)) {
          const T v = x(i);
          const T s = T(1) / (T(1) + exp(-v));
          grad_x(i) = grad_y(i) * s * (T(1) + v * (T(1) - s));
        }
        "#
    }
}

/// Threads per block of the backward kernel.
const BLOCK: u32 = 256;

/// The element type of a tensor both kernels take.
#[derive(Clone, Copy)]
enum Real {
    F32,
    F64,
}

/// `x`'s element type, or a `TypeError` naming the one it has.
fn real<S: MemorySpace>(x: &PyDynView<'_, S>, name: &str) -> PyResult<Real> {
    match x.dtype() {
        t if t == DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1) => Ok(Real::F32),
        t if t == DLDataType::new(DLDataTypeCode::kDLFloat, 64, 1) => Ok(Real::F64),
        other => Err(PyTypeError::new_err(format!("{name} takes float32 or float64 tensors, not {other}"))),
    }
}

/// The forward pass at rank `R` (run by [`dispatch_rank`]).
struct Forward<'a, 'py> {
    py: Python<'py>,
    x: &'a PyDynView<'py>,
    y: &'a mut Output<'py>,
    real: Real,
}

impl Forward<'_, '_> {
    fn run<T: Float + DlElement + Send + Sync, const R: usize>(self) -> PyResult<()> {
        // Any strides (transposed, sliced, broadcast): the element-wise kernel walks them.
        let x = self.x.typed::<T, R, LayoutStrideRelaxed>()?;
        let mut y = self.y.view_mut::<T, R>()?;
        Ok(self.py.detach(|| silu_forward.run(Cpu, &x, &mut y))?)
    }
}

impl RankVisitor for Forward<'_, '_> {
    type Output = PyResult<()>;
    fn visit<const R: usize>(self) -> PyResult<()> {
        match self.real {
            Real::F32 => self.run::<f32, R>(),
            Real::F64 => self.run::<f64, R>(),
        }
    }
}

/// A contiguous tensor argument as one axis in logical order: what the raw kernel's one-axis views
/// take, on the host or on a device.
fn flat<'a, T: DlElement, const R: usize, S: MemorySpace>(
    arg: &'a PyDynView<'_, S>,
    name: &str,
) -> PyResult<Mdspan<'a, T, 1, Dims<1>, LayoutRight, S>> {
    let contiguous = || PyValueError::new_err(format!("silu_backward: '{name}' is not contiguous"));
    arg.typed::<T, R, LayoutRight>().map_err(|_| contiguous())?.flatten().ok_or_else(contiguous)
}

/// The backward pass at rank `R` (run by [`dispatch_rank`]).
struct Backward<'a, 'py> {
    py: Python<'py>,
    grad_y: &'a PyDynView<'py>,
    x: &'a PyDynView<'py>,
    grad_x: &'a mut Output<'py>,
    real: Real,
}

impl Backward<'_, '_> {
    fn run<T: DlElement + Send + Sync, const R: usize>(self) -> PyResult<()> {
        let (x, grad_y) = (flat::<T, R, Host>(self.x, "x")?, flat::<T, R, Host>(self.grad_y, "grad_y")?);
        let mut grad_x = self.grad_x.view_mut::<T, R>()?.flatten().expect("a new tensor is row-major");
        let n = grad_x.size();
        if n == 0 {
            return Ok(());
        }
        let config = LaunchConfig::for_elements(n, BLOCK)?;
        self.py
            .detach(|| {
                // SAFETY: each thread reads `x(i)` and `grad_y(i)` and writes `grad_x(i)` for its own
                // `i`, guarded by `i < n`, the extent of all three views.
                unsafe { silu_backward_kernel.launch(Cpu, config, &x, &grad_y, &mut grad_x) }
            })
            .map_err(PyErr::from)
    }
}

impl RankVisitor for Backward<'_, '_> {
    type Output = PyResult<()>;
    fn visit<const R: usize>(self) -> PyResult<()> {
        match self.real {
            Real::F32 => self.run::<f32, R>(),
            Real::F64 => self.run::<f64, R>(),
        }
    }
}

/// SiLU, `x · sigmoid(x)`, of a float32 or float64 tensor of any rank and strides: a new
/// row-major tensor of `x`'s shape and dtype.
#[pyfunction(crate = "dlspan::pyo3")]
fn silu<'py>(py: Python<'py>, x: PyDynView<'py>) -> PyResult<Bound<'py, PyAny>> {
    let real = real(&x, "silu")?;
    let shape = x.view()?.shape().to_vec();
    let mut y = Output::like(py, &x, x.dtype(), &shape)?;
    dispatch_rank(x.rank(), Forward { py, x: &x, y: &mut y, real })??;
    y.finish()
}

/// The gradient of [`silu`]: `grad_y · silu'(x)`, for contiguous `grad_y` and `x` of one shape
/// and dtype.
#[pyfunction(crate = "dlspan::pyo3")]
fn silu_backward<'py>(py: Python<'py>, grad_y: PyDynView<'py>, x: PyDynView<'py>) -> PyResult<Bound<'py, PyAny>> {
    let real = real(&x, "silu_backward")?;
    if grad_y.dtype() != x.dtype() || grad_y.device() != x.device() {
        return Err(PyTypeError::new_err("silu_backward: 'grad_y' and 'x' differ in dtype or device"));
    }
    let shape = x.view()?.shape().to_vec();
    if grad_y.view()?.shape() != shape.as_slice() {
        return Err(PyValueError::new_err("silu_backward: 'grad_y' and 'x' differ in shape"));
    }
    let mut grad_x = Output::like(py, &x, x.dtype(), &shape)?;
    dispatch_rank(x.rank(), Backward { py, grad_y: &grad_y, x: &x, grad_x: &mut grad_x, real })??;
    grad_x.finish()
}

/// The caller's stream of a CUDA argument: PyTorch's current stream, as a `dlspan::cuda::Stream`.
fn stream_of(x: &PyDynView<'_, Device>) -> PyResult<Stream> {
    let caller = x.caller_stream().expect("device arguments carry the caller's stream");
    // SAFETY: PyTorch's current stream, which PyTorch keeps alive while it is current; it is used
    // only during this call, which runs no Python code that could destroy it.
    Ok(unsafe { caller.stream() }?)
}

/// The forward pass on a CUDA device at rank `R`: enqueued on the caller's stream.
struct ForwardCuda<'a, 'py> {
    stream: &'a Stream,
    x: &'a PyDynView<'py, Device>,
    y: &'a mut Output<'py>,
    real: Real,
}

impl ForwardCuda<'_, '_> {
    fn run<T: Float + DlElement + Send + Sync, const R: usize>(self) -> PyResult<()> {
        let x = self.x.typed::<T, R, LayoutStrideRelaxed>()?;
        let mut y = self.y.view_mut_as::<DeviceMdspanMut<'_, T, R, LayoutRight>>()?;
        Ok(silu_forward.run(self.stream, &x, &mut y)?)
    }
}

impl RankVisitor for ForwardCuda<'_, '_> {
    type Output = PyResult<()>;
    fn visit<const R: usize>(self) -> PyResult<()> {
        match self.real {
            Real::F32 => self.run::<f32, R>(),
            Real::F64 => self.run::<f64, R>(),
        }
    }
}

/// The backward pass on a CUDA device at rank `R`: the raw kernel over the flattened contiguous
/// tensors, enqueued on the caller's stream.
struct BackwardCuda<'a, 'py> {
    stream: &'a Stream,
    grad_y: &'a PyDynView<'py, Device>,
    x: &'a PyDynView<'py, Device>,
    grad_x: &'a mut Output<'py>,
    real: Real,
}

impl BackwardCuda<'_, '_> {
    fn run<T: DlElement + Send + Sync, const R: usize>(self) -> PyResult<()> {
        let (x, grad_y) = (flat::<T, R, Device>(self.x, "x")?, flat::<T, R, Device>(self.grad_y, "grad_y")?);
        let grad_x = self.grad_x.view_mut_as::<DeviceMdspanMut<'_, T, R, LayoutRight>>()?;
        let mut grad_x = grad_x.flatten().expect("a new tensor is row-major");
        let n = grad_x.size();
        if n == 0 {
            return Ok(());
        }
        let config = LaunchConfig::for_elements(n, BLOCK)?;
        // SAFETY: each thread reads `x(i)` and `grad_y(i)` and writes `grad_x(i)` for its own `i`,
        // guarded by `i < n`, the extent of all three views.
        Ok(unsafe { silu_backward_kernel.launch(self.stream, config, &x, &grad_y, &mut grad_x) }?)
    }
}

impl RankVisitor for BackwardCuda<'_, '_> {
    type Output = PyResult<()>;
    fn visit<const R: usize>(self) -> PyResult<()> {
        match self.real {
            Real::F32 => self.run::<f32, R>(),
            Real::F64 => self.run::<f64, R>(),
        }
    }
}

/// [`silu`] of a CUDA tensor, on PyTorch's current stream.
#[pyfunction(crate = "dlspan::pyo3")]
fn silu_cuda<'py>(py: Python<'py>, x: PyDynView<'py, Device>) -> PyResult<Bound<'py, PyAny>> {
    let real = real(&x, "silu")?;
    let shape = x.view()?.shape().to_vec();
    let stream = stream_of(&x)?;
    let mut y = Output::like(py, &x, x.dtype(), &shape)?;
    dispatch_rank(x.rank(), ForwardCuda { stream: &stream, x: &x, y: &mut y, real })??;
    y.finish()
}

/// [`silu_backward`] of CUDA tensors, on PyTorch's current stream.
#[pyfunction(crate = "dlspan::pyo3")]
fn silu_backward_cuda<'py>(
    py: Python<'py>,
    grad_y: PyDynView<'py, Device>,
    x: PyDynView<'py, Device>,
) -> PyResult<Bound<'py, PyAny>> {
    let real = real(&x, "silu_backward")?;
    if grad_y.dtype() != x.dtype() || grad_y.device() != x.device() {
        return Err(PyTypeError::new_err("silu_backward: 'grad_y' and 'x' differ in dtype or device"));
    }
    let shape = x.view()?.shape().to_vec();
    if grad_y.view()?.shape() != shape.as_slice() {
        return Err(PyValueError::new_err("silu_backward: 'grad_y' and 'x' differ in shape"));
    }
    let stream = stream_of(&x)?;
    let mut grad_x = Output::like(py, &x, x.dtype(), &shape)?;
    let backward = BackwardCuda { stream: &stream, grad_y: &grad_y, x: &x, grad_x: &mut grad_x, real };
    dispatch_rank(x.rank(), backward)??;
    grad_x.finish()
}

/// The kernels of `my_torch_ops`: SiLU and its gradient, in Rust with dlspan, on the CPU and on
/// CUDA devices.
#[pymodule(crate = "dlspan::pyo3")]
mod _kernels {
    #[pymodule_export]
    use super::{silu, silu_backward, silu_backward_cuda, silu_cuda};
}
