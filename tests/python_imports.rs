//! The safe imports of the Python exchange (`from_dlpack`, `take_capsule`) share memory a Python
//! object can still reach: they give aliased managed tensors, which refuse mutable views (rule
//! M10). Importing one writable object twice gave two tensors whose mutable views aliased.
#![cfg(feature = "python")]

use dlspan::python::{ExportRequest, ImportRequest, Tensor, from_dlpack, take_capsule};
use dlspan::{DlpackError, LayoutRight, ManagedTensor};
use pyo3::prelude::*;

#[test]
fn two_imports_of_one_object_give_no_mutable_views() {
    Python::initialize();
    Python::attach(|py| {
        let object = Tensor::from_managed(py, ManagedTensor::from_owner(vec![1.0f32, 2.0, 3.0], [3]).unwrap()).unwrap();
        let mut first = from_dlpack(object.as_any(), ImportRequest::default()).unwrap();
        let mut second = from_dlpack(object.as_any(), ImportRequest::default()).unwrap();
        assert_eq!(first.dl_tensor().data, second.dl_tensor().data, "both share the object's memory");
        for tensor in [&mut first, &mut second] {
            assert!(tensor.is_aliased() && !tensor.is_read_only());
            assert!(matches!(tensor.view_mut::<f32, 1, LayoutRight>(), Err(DlpackError::Aliased)));
            // A shared view could meet a mutable view argument of the same memory (`&` and `&mut`).
            assert!(matches!(tensor.view::<f32, 1, LayoutRight>(), Err(DlpackError::Aliased)));
            assert_eq!(tensor.shape(), &[3]);
        }

        let capsule = Tensor::dlpack(&object, &ExportRequest { max_version: Some((1, 3)), ..Default::default() });
        let mut taken = take_capsule(capsule.unwrap().as_any()).unwrap();
        assert!(matches!(taken.view_mut::<f32, 1, LayoutRight>(), Err(DlpackError::Aliased)));

        // A copy is the consumer's alone.
        let mut copy = from_dlpack(object.as_any(), ImportRequest { copy: Some(true), ..Default::default() }).unwrap();
        assert!(!copy.is_aliased());
        copy.view_mut::<f32, 1, LayoutRight>().unwrap()[[0]] = 10.0;
        // SAFETY: nothing writes the object's memory while this view lives (the other imports give
        // no views, and no Python code runs).
        let first = unsafe { first.assume_unaliased() };
        assert_eq!(first.view::<f32, 1, LayoutRight>().unwrap()[[0]], 1.0, "the object's memory is untouched");
    });
}

#[test]
fn legacy_and_read_only_imports_stay_aliased() {
    Python::initialize();
    Python::attach(|py| {
        let object = Tensor::from_managed(py, ManagedTensor::from_owner(vec![7u8; 4], [2, 2]).unwrap()).unwrap();
        // A legacy capsule (no flags) taken from a bare capsule, as JAX exports them.
        let capsule = Tensor::dlpack(&object, &ExportRequest::default()).unwrap();
        let mut legacy = from_dlpack(capsule.as_any(), ImportRequest::default()).unwrap();
        assert_eq!(legacy.version(), None);
        assert!(matches!(legacy.view_mut::<u8, 2, LayoutRight>(), Err(DlpackError::Aliased)));
        // SAFETY: nothing else reaches the object's memory while this test writes it (the object
        // and the other import are not used meanwhile).
        let mut owned = unsafe { legacy.assume_unaliased() };
        owned.view_mut::<u8, 2, LayoutRight>().unwrap()[[1, 1]] = 9;
        drop(owned);
        let again = from_dlpack(object.as_any(), ImportRequest::default()).unwrap();
        // SAFETY: nothing writes the object's memory while this view lives.
        let again = unsafe { again.assume_unaliased() };
        assert_eq!(again.view::<u8, 2, LayoutRight>().unwrap().to_vec(), [7, 7, 7, 9]);
    });
}

/// CUDA pinned memory read on the host: the device may still be writing it, so dlspan waits for the
/// device (feature `cuda` with a driver) or refuses (rule Y16).
#[test]
fn pinned_memory_is_read_after_the_device_or_refused() {
    use dlspan::ffi::{DLDevice, DLDeviceType, DLTensor};
    use dlspan::python::{ExchangeError, PyView};
    Python::initialize();
    Python::attach(|py| {
        let data = pyo3::types::PyByteArray::new(py, &[1, 2, 3, 4]);
        let mut shape = [4i64];
        let mut strides = [1i64];
        let pinned = DLTensor {
            data: data.data().cast(),
            device: DLDevice { device_type: DLDeviceType::kDLCUDAHost, device_id: 0 },
            ndim: 1,
            dtype: dlspan::dtype::dtype_of::<u8>(),
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: 0,
        };
        // SAFETY: the tensor describes the bytearray's 4 bytes, which it keeps alive and in place.
        let tensor = unsafe { Tensor::from_object(py, data.into_any().unbind(), &pinned, false) }.unwrap();
        let view = tensor.as_any().extract::<PyView<'_, u8, 1>>();
        let driver = cfg!(feature = "cuda") && dlspan_cuda_driver();
        match view {
            Ok(view) => assert!(driver, "read without waiting for a device: {:?}", view.view().to_vec()),
            Err(err) => {
                assert!(!driver, "{err}");
                let expected = PyErr::from(ExchangeError::HostAccessUnordered { device: pinned.device });
                assert_eq!(err.to_string(), expected.to_string());
            }
        }
    });
}

#[cfg(feature = "cuda")]
fn dlspan_cuda_driver() -> bool {
    dlspan::cuda::device_count() > 0
}

#[cfg(not(feature = "cuda"))]
fn dlspan_cuda_driver() -> bool {
    false
}
