//! Devices as Python names them (`cpu`, `cuda:0`; DLPack's `(device_type, device_id)` pairs), and
//! when the host may read a device's memory (rule Y16).

use super::error::ExchangeError;
pub(crate) use super::error::device_name;
use crate::ffi::{DLDevice, DLDeviceType};
use pyo3::prelude::*;

/// The host's device.
pub(crate) const CPU: DLDevice = DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 };

/// The driver's handle of the per-thread default stream (`CU_STREAM_PER_THREAD`), DLPack's stream
/// value 2: dlspan's own stream for CUDA memory whose producer names none.
pub(crate) const PER_THREAD: usize = 2;

/// Whether the host reads this device's memory directly (dlspan can copy it).
pub(crate) fn host_readable(device: DLDevice) -> bool {
    matches!(
        device.device_type,
        DLDeviceType::kDLCPU | DLDeviceType::kDLCUDAHost | DLDeviceType::kDLROCMHost | DLDeviceType::kDLCUDAManaged
    )
}

/// Makes memory of `device` safe to read on the host, or says why it is not (rule Y16): host memory
/// needs nothing; CUDA pinned and managed memory may still be written by work the producer queued
/// on the device, so the device's primary context is synchronised first (feature `cuda`; without
/// it such memory is refused, as is ROCm's); other devices are not host-readable.
pub(crate) fn wait_for_host(device: DLDevice) -> PyResult<()> {
    match device.device_type {
        DLDeviceType::kDLCPU => Ok(()),
        #[cfg(feature = "cuda")]
        DLDeviceType::kDLCUDAHost | DLDeviceType::kDLCUDAManaged => {
            let unordered = || PyErr::from(ExchangeError::HostAccessUnordered { device });
            if !crate::cuda::driver_present() {
                return Err(unordered());
            }
            let ordinal = usize::try_from(device.device_id).map_err(|_| unordered())?;
            let context = cudarc::driver::CudaContext::new(ordinal).map_err(|_| unordered())?;
            context.synchronize().map_err(|_| unordered())
        }
        _ if host_readable(device) => Err(ExchangeError::HostAccessUnordered { device }.into()),
        _ => Err(ExchangeError::DeviceUnavailable { requested: CPU, found: device }.into()),
    }
}

/// A device as `__dlpack_device__` returns it.
///
/// # Errors
///
/// [`ExchangeError::NotADevice`] (`TypeError`) for anything but a pair of 32-bit integers, with
/// the value shown in a note.
pub(crate) fn device_of(value: &Bound<'_, PyAny>) -> PyResult<DLDevice> {
    match value.extract::<(i32, i32)>() {
        Ok((device_type, device_id)) => Ok(DLDevice { device_type: DLDeviceType(device_type), device_id }),
        Err(_) => {
            let err = PyErr::from(ExchangeError::NotADevice);
            let shown = value.repr().map_or_else(|_| "an object without a repr".to_owned(), |r| r.to_string());
            let note = format!("__dlpack_device__ returned {}", shown.chars().take(200).collect::<String>());
            err.value(value.py()).call_method1(pyo3::intern!(value.py(), "add_note"), (note,))?;
            Err(err)
        }
    }
}

/// Whether two devices name the same memory: the same device, or the host by any id (rule I2: the
/// id of host memory changes nothing, and JAX numbers its host devices).
pub(crate) fn same_memory(a: DLDevice, b: DLDevice) -> bool {
    a == b || (a.device_type == DLDeviceType::kDLCPU && b.device_type == DLDeviceType::kDLCPU)
}
