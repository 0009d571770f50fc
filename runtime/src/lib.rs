#![doc = include_str!("../docs/overview.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod buffer;
mod check;
pub mod convert;
#[cfg(feature = "cuda")]
pub mod cuda;
mod dlpack;
pub mod dtype;
pub mod error;
pub mod ffi;
mod index;
#[cfg(feature = "jax")]
pub mod jax;
pub mod kernel;
#[cfg(feature = "ndarray")]
mod ndarray_interop;
pub mod owned;
#[cfg(feature = "python")]
pub mod python;
pub mod record;
pub mod rules;
pub mod space;
#[cfg(feature = "torch")]
pub mod torch;
pub mod view;

/// The items `elementwise!` generates for `#[torch("ns::name")]`: kept with feature `torch`.
#[cfg(feature = "torch")]
#[doc(hidden)]
#[macro_export]
macro_rules! __torch {
    ($($item:item)*) => { $($item)* };
}

/// The items `elementwise!` generates for `#[torch("ns::name")]`: refused without feature
/// `torch`, saying so.
#[cfg(not(feature = "torch"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __torch {
    ($($item:item)*) => {
        ::core::compile_error!(
            "`#[torch(\"ns::name\")]` makes the kernel a PyTorch operator: enable dlspan's feature `torch`"
        );
    };
}

/// The items `elementwise!` generates for `#[jax]`: kept with feature `jax`.
#[cfg(feature = "jax")]
#[doc(hidden)]
#[macro_export]
macro_rules! __jax {
    ($($item:item)*) => { $($item)* };
}

/// The items `elementwise!` generates for `#[jax]`: refused without feature `jax`, saying so.
#[cfg(not(feature = "jax"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __jax {
    ($($item:item)*) => {
        ::core::compile_error!(
            "`#[jax]` makes the kernel a JAX kernel (an XLA FFI handler): enable dlspan's feature `jax`"
        );
    };
}

#[doc(hidden)]
pub mod __private;

pub use buffer::AlignedBuffer;
pub use convert::{
    DlTensorRef, DlpackTensor, DynDlpackTensor, FromDlTensor, ImportOptions, ToDlpackTensor, to_device_mdspan,
    to_device_mdspan_mut, to_dlpack_tensor, to_host_mdspan, to_host_mdspan_mut, to_managed_mdspan,
    to_managed_mdspan_mut,
};
/// The [`cudarc`](https://docs.rs/cudarc/0.19) crate (feature `cuda`), the version dlspan's device
/// views, streams and kernels are built on: code naming its types (`CudaSlice`, `CudaStream`)
/// takes them from here and needs no `cudarc` dependency of its own, which could resolve to
/// another version whose types dlspan's functions do not take.
///
/// ```no_run
/// # #[cfg(feature = "cuda")] {
/// use dlspan::cudarc::driver::CudaSlice;
/// let gpu = dlspan::cuda::Gpu::new(0)?;
/// let buffer: CudaSlice<f32> = gpu.new_stream()?.alloc_zeros::<f32>(16)?;
/// assert_eq!(buffer.len(), 16);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "cuda")]
#[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
pub use cudarc;
pub use dlspan_macros::{DlElement, DlRecord, elementwise, kernel, mdspan};
pub use dtype::DlElement;
pub use error::{DlpackError, LayoutKind};
pub use half;
/// The [`ndarray`](https://docs.rs/ndarray/0.17) crate (feature `ndarray`), the version the
/// conversions (`to_ndarray`, `from_ndarray`) speak, so its types need no dependency of their own.
///
/// ```
/// # #[cfg(feature = "ndarray")] {
/// use dlspan::{HostMdspan, ndarray::ArrayView2};
/// let data = [1.0f32, 2.0, 3.0, 4.0];
/// let array: ArrayView2<'_, f32> = HostMdspan::<f32, 2>::from_slice(&data, [2, 2]).unwrap().to_ndarray();
/// assert_eq!(array[[1, 0]], 3.0);
/// # }
/// ```
#[cfg(feature = "ndarray")]
#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
pub use ndarray;
pub use num_complex;
pub use owned::{CopyMode, IntoLegacyError, ManagedTensor, Storage, TensorOwner};
/// The [`pyo3`](https://docs.rs/pyo3/0.30) crate (feature `python`), the version `PyView`,
/// `Tensor` and the error conversions are built on. An extension that takes PyO3 from here
/// instead of a `pyo3` dependency of its own cannot pick a second, mismatched PyO3 (which cargo
/// refuses: two packages linking the native library `pyo3-python`). PyO3's macros name their crate
/// `::pyo3`: without a direct `pyo3` dependency, each `#[pyfunction]`, `#[pymodule]`,
/// `#[pyclass]` and `#[pymethods]` says where it is, `crate = "dlspan::pyo3"`.
///
/// ```
/// use dlspan::pyo3::prelude::*;
/// use dlspan::python::PyView;
///
/// /// The sum of a float32 vector from any framework.
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn total(x: PyView<'_, f32, 1>) -> f32 {
///     x.view().sum()
/// }
///
/// #[pymodule(crate = "dlspan::pyo3")]
/// mod my_kernels {
///     #[pymodule_export]
///     use super::total;
/// }
/// # fn main() -> PyResult<()> {
/// #     Python::initialize();
/// #     Python::attach(|py| {
/// #         let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1.5f32; 4], [4])?)?;
/// #         assert_eq!(wrap_pyfunction!(total, py)?.call1((x,))?.extract::<f32>()?, 6.0);
/// #         Ok(())
/// #     })
/// # }
/// ```
#[cfg(feature = "python")]
#[cfg_attr(docsrs, doc(cfg(feature = "python")))]
pub use pyo3;
pub use space::{Device, Host, HostAccessible, Managed, MemorySpace};
pub use view::{
    Aligned, DeviceMdspan, DeviceMdspanMut, DevicePackedMdspan, DevicePackedMdspanMut, Dim, Dims, Dyn, DynMdspan,
    DynMdspanMut, Extents, HostMdspan, HostMdspanMut, HostPackedMdspan, HostPackedMdspanMut, Layout, LayoutLeft,
    LayoutRight, LayoutStride, LayoutStrideRelaxed, ManagedMdspan, ManagedMdspanMut, Mapping, Mdspan, MdspanMut,
    PackedIter, PackedMdspan, PackedMdspanMut, Static, SubviewRanges,
};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

// Lets the macros' absolute `::dlspan` paths resolve inside this crate too (unit tests, doctests).
extern crate self as dlspan;
