//! CUDA tensors as typed view arguments and the caller's stream (rule Y21), without a GPU: fake CUDA
//! tensors (host bytes labelled `kDLCUDA`, which device views never read), a fake producer type with
//! a C exchange table whose `current_work_stream` returns a sentinel, fake `__dlpack__` producers
//! that record the stream they are given, and a fake CuPy.
#![cfg(feature = "python")]

use dlspan::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPACK_FLAG_BITMASK_READ_ONLY,
    DLPackExchangeAPI, DLPackExchangeAPIHeader, DLPackVersion, DLTensor,
};
use dlspan::python::{
    CallerStream, EXCHANGE_API_CAPSULE, PyDeviceView, PyDeviceViewMut, PyDynView, PyManagedView, PyView, StreamSource,
    Tensor, common_stream, extract_argument,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyCapsule, PyDict};
use std::ffi::{CStr, c_int, c_void};
use std::sync::Mutex;

const CUDA: DLDeviceType = DLDeviceType::kDLCUDA;

fn cuda(device_id: i32) -> DLDevice {
    DLDevice { device_type: CUDA, device_id }
}

/// A `dlspan.Tensor` of four float32 values in host bytes labelled `device` (never read as values
/// by the device views under test).
fn fake_tensor(py: Python<'_>, device: DLDevice, read_only: bool) -> Bound<'_, Tensor> {
    let bytes = PyByteArray::new(py, &[0u8; 16]);
    let mut shape = [4i64];
    let mut strides = [1i64];
    let tensor = DLTensor {
        data: bytes.data().cast(),
        device,
        ndim: 1,
        dtype: DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1),
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    // SAFETY: the bytearray keeps its 16 bytes in place while it lives (it is never resized).
    unsafe { Tensor::from_object(py, bytes.into_any().unbind(), &tensor, read_only) }.unwrap()
}

/// What a device argument reports: the view's size, its stream's handle, DLPack value and source.
#[pyfunction]
fn device_arg(x: PyDeviceView<'_, f32, 1>) -> (usize, usize, i64, String) {
    let stream = x.caller_stream().expect("a device argument has a stream");
    assert_eq!(stream.device(), cuda(x.view().ordinal()), "the stream is the view's device's");
    (x.view().size(), stream.handle(), stream.dlpack_stream(), format!("{:?}", stream.source()))
}

/// A mutable device argument.
#[pyfunction]
fn device_arg_mut(mut x: PyDeviceViewMut<'_, f32, 1>) -> usize {
    x.view_mut().size()
}

/// A host argument.
#[pyfunction]
fn host_arg(x: PyView<'_, f32, 1>) -> usize {
    x.view().size()
}

/// A managed argument.
#[pyfunction]
fn managed_arg(x: PyManagedView<'_, f32, 1>) -> usize {
    x.view().size()
}

/// Two device arguments sharing one stream: the stream's DLPack value.
#[pyfunction]
fn two_device_args(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<i64> {
    let a: PyDeviceView<'_, f32, 1> = extract_argument(a, "a")?;
    let b: PyDeviceView<'_, f32, 1> = extract_argument(b, "b")?;
    let stream = common_stream(&[("a", a.caller_stream()), ("b", b.caller_stream())])?;
    Ok(stream.expect("device arguments").dlpack_stream())
}

/// A dynamic device argument's stream value.
#[pyfunction]
fn dyn_stream(x: PyDynView<'_, dlspan::Device>) -> Option<i64> {
    x.caller_stream().map(|s| s.dlpack_stream())
}

/// A dynamic host argument's stream value (`None`).
#[pyfunction]
fn dyn_host_stream(x: PyDynView<'_>) -> Option<i64> {
    x.caller_stream().map(|s| s.dlpack_stream())
}

fn module(py: Python<'_>) -> Bound<'_, PyDict> {
    let globals = PyDict::new(py);
    for f in [
        wrap_pyfunction!(device_arg, py).unwrap(),
        wrap_pyfunction!(device_arg_mut, py).unwrap(),
        wrap_pyfunction!(host_arg, py).unwrap(),
        wrap_pyfunction!(managed_arg, py).unwrap(),
        wrap_pyfunction!(two_device_args, py).unwrap(),
        wrap_pyfunction!(dyn_stream, py).unwrap(),
        wrap_pyfunction!(dyn_host_stream, py).unwrap(),
    ] {
        globals.set_item(f.getattr("__name__").unwrap(), f).unwrap();
    }
    globals
}

/// Runs `code` with the test functions and `locals` in scope.
fn run(py: Python<'_>, globals: &Bound<'_, PyDict>, code: &str) {
    let code = std::ffi::CString::new(code).unwrap();
    if let Err(err) = py.run(&code, Some(globals), None) {
        err.print(py);
        panic!("{err}");
    }
}

#[test]
fn device_views_take_cuda_tensors_and_refuse_others() {
    Python::initialize();
    Python::attach(|py| {
        let globals = module(py);
        globals.set_item("gpu1", fake_tensor(py, cuda(1), false)).unwrap();
        globals
            .set_item(
                "managed",
                fake_tensor(py, DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: 0 }, false),
            )
            .unwrap();
        globals
            .set_item("host", fake_tensor(py, DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 }, false))
            .unwrap();
        globals.set_item("read_only", fake_tensor(py, cuda(0), true)).unwrap();
        run(
            py,
            &globals,
            r#"
# A dlspan.Tensor names no stream: dlspan's own, the per-thread default stream (2), never 0.
assert device_arg(gpu1) == (4, 2, 2, "Dlspan"), device_arg(gpu1)
assert device_arg_mut(gpu1) == 4
assert dyn_stream(gpu1) == 2 and dyn_host_stream(host) is None

def refused(f, x, cls, words):
    try:
        f(x)
    except cls as e:
        text = str(e) + " ".join(getattr(e, "__notes__", []))
        assert all(w in text for w in words), text
        return e
    raise AssertionError(f"{f.__name__} accepted {x!r}")

# A device argument given host or managed memory, and a host or managed argument given device memory.
e = refused(device_arg, host, TypeError, ["expected an array on cuda", "got one on cpu", "while processing 'x'"])
assert (e.kind, e.expected, e.found) == ("DeviceMismatch", (2, 0), (1, 0)), (e.kind, e.expected, e.found)
refused(device_arg, managed, TypeError, ["got one on cuda_managed", "'x'"])
refused(host_arg, gpu1, TypeError, ["expected a CPU array", "got one on cuda:1", "'x'"])
refused(managed_arg, gpu1, TypeError, ["got one on cuda:1", "'x'"])
# Read-only device memory: shared views only.
assert device_arg(read_only)[0] == 4
e = refused(device_arg_mut, read_only, ValueError, ["'x'"])
assert e.kind == "ReadOnly", e.kind
"#,
        );
    });
}

#[test]
fn arguments_on_different_devices_are_a_value_error_naming_the_argument() {
    Python::initialize();
    Python::attach(|py| {
        let globals = module(py);
        globals.set_item("gpu0", fake_tensor(py, cuda(0), false)).unwrap();
        globals.set_item("gpu0b", fake_tensor(py, cuda(0), false)).unwrap();
        globals.set_item("gpu1", fake_tensor(py, cuda(1), false)).unwrap();
        run(
            py,
            &globals,
            r#"
assert two_device_args(gpu0, gpu0b) == 2
try:
    two_device_args(gpu0, gpu1)
except ValueError as e:
    text = str(e) + " ".join(getattr(e, "__notes__", []))
    assert "expected a tensor on cuda:0 (the device of argument 'a'), got one on cuda:1" in text, text
    assert "while processing 'b'" in text, text
    assert (e.kind, e.expected, e.found) == ("DevicesDiffer", (2, 0), (2, 1))
else:
    raise AssertionError("arguments on two devices accepted")
"#,
        );
    });
    // The check itself, on values.
    let on = |id| Some(CallerStream::per_thread(cuda(id)));
    assert_eq!(common_stream(&[("h", None), ("a", on(3)), ("b", on(3))]).unwrap(), on(3));
    assert_eq!(common_stream(&[("h", None)]).unwrap(), None);
    Python::attach(|py| {
        let err = common_stream(&[("a", on(0)), ("h", None), ("c", on(2))]).unwrap_err();
        assert!(err.is_instance_of::<PyValueError>(py));
        assert!(!err.is_instance_of::<PyTypeError>(py));
    });
}

/// What the fake table's functions were asked, and the sentinel stream it returns.
static ASKED: Mutex<Vec<(i32, i32)>> = Mutex::new(Vec::new());
const SENTINEL: usize = 0x5e47_0000;
static SHAPE: [i64; 1] = [4];
static STRIDES: [i64; 1] = [1];
/// Host bytes labelled CUDA: their address is registered, never read.
static BYTES: [f32; 4] = [0.0; 4];

/// `dltensor_from_py_object_no_sync`: four float32 on `cuda:<object.device_id>`.
unsafe extern "C" fn fake_fill(object: *mut c_void, out: *mut DLTensor) -> c_int {
    // SAFETY: called with the GIL held (the exchange API's contract) on a live object.
    let py = unsafe { Python::assume_attached() };
    // SAFETY: as above; a borrowed reference to the live object.
    let object = unsafe { Bound::from_borrowed_ptr(py, object.cast()) };
    let Ok(device_id) = object.getattr("device_id").and_then(|d| d.extract::<i32>()) else { return -1 };
    // SAFETY: `out` is the consumer's writable `DLTensor`; shape and strides are statics.
    unsafe {
        *out = DLTensor {
            data: BYTES.as_ptr().cast_mut().cast(),
            device: cuda(device_id),
            ndim: 1,
            dtype: DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1),
            shape: SHAPE.as_ptr().cast_mut(),
            strides: STRIDES.as_ptr().cast_mut(),
            byte_offset: 0,
        }
    };
    0
}

/// Deleter calls of the managed tensors `fake_managed` handed out.
static DELETED: Mutex<usize> = Mutex::new(0);

/// Frees a managed tensor `fake_managed` made.
unsafe extern "C" fn fake_delete(managed: *mut DLManagedTensorVersioned) {
    *DELETED.lock().unwrap() += 1;
    // SAFETY: made by `Box::into_raw` in `fake_managed`, and deleted once (the consumer's contract).
    drop(unsafe { Box::from_raw(managed) });
}

/// `managed_tensor_from_py_object_no_sync`: the tensor `fake_fill` describes, owned, flagged
/// `READ_ONLY` when `object.read_only`.
unsafe extern "C" fn fake_managed(object: *mut c_void, out: *mut *mut DLManagedTensorVersioned) -> c_int {
    let mut tensor = DLTensor::default();
    // SAFETY: forwarded: the GIL is held, `object` is live, `tensor` is writable.
    if unsafe { fake_fill(object, &mut tensor) } != 0 {
        return -1;
    }
    // SAFETY: as in `fake_fill`.
    let py = unsafe { Python::assume_attached() };
    // SAFETY: as above; a borrowed reference to the live object.
    let object = unsafe { Bound::from_borrowed_ptr(py, object.cast()) };
    let read_only = object.getattr("read_only").and_then(|r| r.is_truthy()).unwrap_or(false);
    let managed = Box::new(DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 3 },
        manager_ctx: core::ptr::null_mut(),
        deleter: Some(fake_delete),
        flags: if read_only { DLPACK_FLAG_BITMASK_READ_ONLY } else { 0 },
        dl_tensor: tensor,
    });
    // SAFETY: `out` is the consumer's writable slot; ownership passes to it.
    unsafe { *out = Box::into_raw(managed) };
    0
}

/// `current_work_stream`: the sentinel plus the device id; fails for device id 7 (raising) and 8
/// (without raising).
unsafe extern "C" fn fake_stream(device_type: DLDeviceType, device_id: i32, out: *mut *mut c_void) -> c_int {
    ASKED.lock().unwrap().push((device_type.0, device_id));
    if device_id == 7 {
        // SAFETY: the GIL is held (the exchange API's contract).
        let py = unsafe { Python::assume_attached() };
        PyErr::new::<pyo3::exceptions::PyRuntimeError, _>("no stream for device 7").restore(py);
        return -1;
    }
    if device_id == 8 {
        return -1;
    }
    // SAFETY: `out` is the consumer's writable slot.
    unsafe { *out = (SENTINEL + device_id as usize) as *mut c_void };
    0
}

/// The fake producer's table.
struct Table(DLPackExchangeAPI);

// SAFETY: the table is immutable and its one pointer field (`prev_api`) is null.
unsafe impl Sync for Table {}

static TABLE: Table = Table(DLPackExchangeAPI {
    header: DLPackExchangeAPIHeader { version: DLPackVersion { major: 1, minor: 3 }, prev_api: core::ptr::null_mut() },
    managed_tensor_allocator: None,
    managed_tensor_from_py_object_no_sync: Some(fake_managed),
    managed_tensor_to_py_object_no_sync: None,
    dltensor_from_py_object_no_sync: Some(fake_fill),
    current_work_stream: Some(fake_stream),
});

#[test]
fn a_table_producers_current_work_stream_is_the_callers_stream() {
    Python::initialize();
    Python::attach(|py| {
        let name: &'static CStr = EXCHANGE_API_CAPSULE;
        // SAFETY: a static table, alive for the process, only read by consumers.
        let capsule =
            unsafe { PyCapsule::new_with_pointer(py, core::ptr::NonNull::from(&TABLE.0).cast(), name) }.unwrap();
        let globals = module(py);
        globals.set_item("table", capsule).unwrap();
        ASKED.lock().unwrap().clear();
        *DELETED.lock().unwrap() = 0;
        run(
            py,
            &globals,
            &format!(
                r#"
class TableTensor:
    __dlpack_c_exchange_api__ = table
    def __init__(self, device_id, read_only=False):
        self.device_id, self.read_only = device_id, read_only

size, handle, value, source = device_arg(TableTensor(3))
assert (size, handle, value, source) == (4, {SENTINEL} + 3, {SENTINEL} + 3, "ExchangeTable"), (handle, value, source)
# Mutable views take the table's managed path, whose flags say READ_ONLY (rule Y8), on the same stream.
assert device_arg_mut(TableTensor(4)) == 4
try:
    device_arg_mut(TableTensor(5, read_only=True))
except ValueError as e:
    assert e.kind == "ReadOnly", e.kind
else:
    raise AssertionError("a mutable view of READ_ONLY device memory")
try:
    device_arg(TableTensor(7))
except RuntimeError as e:
    assert "no stream for device 7" in str(e), e
else:
    raise AssertionError("a failing current_work_stream was ignored")
try:
    device_arg(TableTensor(8))
except BufferError as e:
    assert e.kind == "NoCurrentStream" and "cuda:8" in str(e), (e.kind, str(e))
else:
    raise AssertionError("a silent failure of current_work_stream was ignored")
"#
            ),
        );
        assert_eq!(*DELETED.lock().unwrap(), 2, "each managed tensor deleted once");
        assert_eq!(
            *ASKED.lock().unwrap(),
            [(CUDA.0, 3), (CUDA.0, 4), (CUDA.0, 5), (CUDA.0, 7), (CUDA.0, 8)],
            "asked for the tensor's device"
        );
    });
}

#[test]
fn a_protocol_producer_receives_the_stream_dlspan_uses_and_never_zero() {
    Python::initialize();
    Python::attach(|py| {
        let globals = module(py);
        globals.set_item("inner0", fake_tensor(py, cuda(0), false)).unwrap();
        globals.set_item("inner1", fake_tensor(py, cuda(1), false)).unwrap();
        globals.set_item("inner_ro", fake_tensor(py, cuda(0), false)).unwrap();
        globals.set_item("inner_flagged", fake_tensor(py, cuda(0), true)).unwrap();
        run(
            py,
            &globals,
            r#"
import sys, types

class Producer:
    """A CUDA producer that records the stream it is asked to order its work before."""
    def __init__(self, inner, device_id):
        self.inner, self.device_id, self.streams = inner, device_id, []
    def __dlpack_device__(self):
        return (2, self.device_id)
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        return self.inner.__dlpack__(stream=stream, max_version=max_version)

p = Producer(inner0, 0)
size, handle, value, source = device_arg(p)
assert p.streams == [2] and (size, handle, value, source) == (4, 2, 2, "Dlspan"), (p.streams, handle, source)
assert dyn_stream(p) == 2 and p.streams == [2, 2]

# A producer older than the keywords: retried with `stream` alone, then with none, when it orders its
# work before the legacy default stream (the array API's None), which the extension then gets.
class StreamOnly:
    def __init__(self, inner):
        self.inner, self.streams = inner, []
    def __dlpack_device__(self):
        return (2, 0)
    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.inner.__dlpack__(stream=stream, max_version=(1, 3))
class Old(StreamOnly):
    def __dlpack__(self):
        self.streams.append("none")
        return self.inner.__dlpack__(max_version=(1, 3))
s = StreamOnly(inner0)
assert device_arg(s) == (4, 2, 2, "Dlspan") and s.streams == [2], s.streams
o = Old(inner0)
assert device_arg(o) == (4, 1, 1, "Dlspan") and o.streams == ["none"], o.streams

# A producer announcing one device and exporting on another is refused (the stream ordered nothing).
liar = Producer(inner1, 0)
try:
    device_arg(liar)
except BufferError as e:
    assert e.kind == "DeviceUnavailable", e.kind
else:
    raise AssertionError("a tensor on another device than announced was accepted")

# A JAX array is immutable: shared device views only.
Jax = type("Array", (Producer,), {"__module__": "jax._src.fake"})
j = Jax(inner_ro, 0)
assert device_arg(j)[0] == 4 and j.streams == [2]
try:
    device_arg_mut(j)
except ValueError as e:
    assert e.kind == "ReadOnly", e.kind
else:
    raise AssertionError("a mutable view of a JAX array")

# A producer's READ_ONLY flag is honoured on the device as on the host.
flagged = Producer(inner_flagged, 0)
assert device_arg(flagged)[0] == 4
try:
    device_arg_mut(flagged)
except ValueError as e:
    assert e.kind == "ReadOnly", e.kind
else:
    raise AssertionError("a mutable view of READ_ONLY device memory")
assert flagged.streams == [2, 2]
# A writable producer's memory gives a mutable device view, with the same stream.
assert device_arg_mut(Producer(inner0, 0)) == 4

# CuPy: the current stream of the array's device, passed to __dlpack__; the null stream as 1.
class FakeStream:
    def __init__(self, ptr):
        self.ptr = ptr
current = {"ptr": 0xC0FFEE0}
asked = []
def get_current_stream(device_id=None):
    asked.append(device_id)
    return FakeStream(current["ptr"])
cupy = types.ModuleType("cupy")
cupy.cuda = types.SimpleNamespace(get_current_stream=get_current_stream)
saved = sys.modules.get("cupy")
sys.modules["cupy"] = cupy
try:
    CupyArray = type("ndarray", (Producer,), {"__module__": "cupy"})
    c = CupyArray(inner1, 1)
    assert device_arg(c) == (4, 0xC0FFEE0, 0xC0FFEE0, "CuPy") and c.streams == [0xC0FFEE0] and asked == [1]
    current["ptr"] = 0
    assert device_arg(c) == (4, 0, 1, "CuPy") and c.streams[-1] == 1, c.streams
finally:
    if saved is None:
        del sys.modules["cupy"]
    else:
        sys.modules["cupy"] = saved
assert all(s not in (0, None) for s in p.streams + j.streams + c.streams)
"#,
        );
    });
}

#[test]
fn host_arguments_have_no_stream_and_call_no_stream_function() {
    Python::initialize();
    Python::attach(|py| {
        let globals = module(py);
        globals
            .set_item("host", fake_tensor(py, DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 }, false))
            .unwrap();
        run(
            py,
            &globals,
            r#"
class HostProducer:
    def __init__(self, inner):
        self.inner, self.streams = inner, []
    def __dlpack_device__(self):
        return (1, 0)
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        return self.inner.__dlpack__(max_version=max_version)
h = HostProducer(host)
assert host_arg(h) == 4 and dyn_host_stream(h) is None
assert h.streams == [None, None], h.streams
"#,
        );
    });
}

/// With feature `cuda` and no driver, the caller's stream cannot become a `cuda::Stream`: an
/// error, not a crash (rule C1).
#[cfg(feature = "cuda")]
#[test]
fn a_caller_stream_without_a_driver_is_an_error() {
    if dlspan::cuda::driver_present() && dlspan::cuda::device_count() > 0 {
        println!("skipped: a CUDA device is present (the GPU tier covers it)");
        return;
    }
    // SAFETY: the per-thread default stream lives as long as the context.
    let result = unsafe { CallerStream::per_thread(cuda(0)).stream() };
    assert!(result.is_err());
    let host = CallerStream::per_thread(DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 });
    // SAFETY: as above (the handle is never used: the device is refused first).
    assert!(matches!(unsafe { host.stream() }, Err(dlspan::cuda::CudaError::NoDevice { .. })));
    assert_eq!(StreamSource::Dlspan, CallerStream::per_thread(cuda(0)).source());
}

/// Outputs on the caller's device (rule Y22) that cannot be made here are typed errors, never host
/// memory labelled with a device: CUDA managed memory (no framework allocates it), and dlspan's own
/// device memory without a driver (feature `cuda`) or without the feature.
#[test]
fn device_outputs_that_cannot_be_made_are_typed_errors() {
    use dlspan::python::{Framework, Output};
    Python::initialize();
    Python::attach(|py| {
        let f32 = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1);
        let managed = DLDevice { device_type: DLDeviceType::kDLCUDAManaged, device_id: 0 };
        let refused = Output::on_device(py, Framework::Dlspan, CallerStream::per_thread(managed), f32, &[4]);
        let err = refused.err().expect("no output in managed memory");
        assert!(err.is_instance_of::<pyo3::exceptions::PyBufferError>(py), "{err}");
        assert_eq!(err.value(py).getattr("kind").unwrap().extract::<String>().unwrap(), "DeviceUnavailable");

        #[cfg(feature = "cuda")]
        let gpu_present = dlspan::cuda::driver_present() && dlspan::cuda::device_count() > 0;
        #[cfg(not(feature = "cuda"))]
        let gpu_present = false;
        if gpu_present {
            println!("skipped: a CUDA device is present (the GPU tier makes real outputs)");
            return;
        }
        let own = Output::on_device(py, Framework::Dlspan, CallerStream::per_thread(cuda(0)), f32, &[4]);
        let err = own.err().expect("no device memory here");
        let kind = err.value(py).getattr("kind").map(|k| k.extract::<String>().unwrap()).unwrap_or_default();
        if cfg!(feature = "cuda") {
            assert!(err.is_instance_of::<pyo3::exceptions::PyRuntimeError>(py), "{err}");
            assert!(matches!(kind.as_str(), "LibraryMissing" | "NoDevice"), "{kind}");
        } else {
            assert!(err.is_instance_of::<pyo3::exceptions::PyBufferError>(py), "{err}");
            assert!(err.to_string().contains("`cuda` feature"), "{err}");
        }
    });
}
