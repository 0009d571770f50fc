//! PyTorch's exchange table as `Output` uses it: found once and pinned, its current stream, and
//! the error callback its allocator reports through.

use crate::error::DlpackError;
#[cfg(feature = "cuda")]
use crate::ffi::DLDevice;
use crate::ffi::DLPackExchangeAPI;
use crate::python::capsule::EXCHANGE_API_CAPSULE;
#[cfg(feature = "cuda")]
use crate::python::stream::table_stream;
use core::ffi::{CStr, c_char, c_void};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyCapsule;

/// PyTorch's current stream on `device`, through its exchange table (`None` when the table cannot
/// say: the output's release then waits on the host).
#[cfg(feature = "cuda")]
pub(super) fn torch_current_stream(py: Python<'_>, api: &DLPackExchangeAPI, device: DLDevice) -> Option<usize> {
    // SAFETY: PyTorch's table as `torch_api` checked it (version 1), pinned for the process.
    unsafe { table_stream(py, api, device) }.ok().map(|stream| stream.handle())
}

/// PyTorch's exchange table, found once (`torch.Tensor.__dlpack_c_exchange_api__`) and pinned.
pub(super) fn torch_api(py: Python<'_>) -> PyResult<&'static DLPackExchangeAPI> {
    static CAPSULE: PyOnceLock<Py<PyCapsule>> = PyOnceLock::new();
    let capsule = CAPSULE.get_or_try_init(py, || -> PyResult<_> {
        let capsule = py.import("torch")?.getattr("Tensor")?.getattr("__dlpack_c_exchange_api__")?;
        Ok(capsule.cast_into::<PyCapsule>()?.unbind())
    })?;
    let table = capsule.bind(py).pointer_checked(Some(EXCHANGE_API_CAPSULE))?.cast::<DLPackExchangeAPI>();
    // SAFETY: a capsule of that name holds an exchange table alive as long as the capsule, which
    // the static pins for the rest of the process; tables are never written.
    let api: &'static DLPackExchangeAPI = unsafe { table.as_ref() };
    if api.header.version.major != 1 || api.managed_tensor_to_py_object_no_sync.is_none() {
        return Err(DlpackError::UnsupportedVersion { version: api.header.version }.into());
    }
    Ok(api)
}

/// `SetError` for PyTorch's allocator: records the error's kind and message.
///
/// # Safety
///
/// `context` is the `Option<(String, String)>` the caller passed; `kind` and `message` are null or
/// C strings.
pub(super) unsafe extern "C" fn set_error(context: *mut c_void, kind: *const c_char, message: *const c_char) {
    let read = |text: *const c_char| {
        if text.is_null() {
            String::new()
        } else {
            // SAFETY: a C string (caller).
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        }
    };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let error = (read(kind), read(message));
        // SAFETY: the caller's `Option`, alive and not otherwise borrowed during the call.
        unsafe { *context.cast::<Option<(String, String)>>() = Some(error) };
    }));
}
