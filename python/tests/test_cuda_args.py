"""CUDA tensors as view arguments and the caller's stream (rule Y21).

Without a GPU: fake CUDA capsules built with ctypes (host bytes labelled kDLCUDA, which device
views never read), producers recording the stream their ``__dlpack__`` receives, a fake C exchange
table whose ``current_work_stream`` returns a sentinel, and real NumPy, PyTorch and JAX arrays on
the CPU refused by device arguments. With a GPU (``scripts/gpu.sh``): PyTorch's current stream.
"""

import ctypes

import numpy as np
import pytest
from conftest import DELETER, DLTensor, ManagedVersioned

import dlspan
import dlspan.diagnostics

ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

CPU, CUDA, CUDA_MANAGED = 1, 2, 13


class FakeCuda:
    """A versioned capsule of four float32 labelled ``(device_type, device_id)``, counting deleter calls."""

    def __init__(self, device_id=0, device_type=CUDA, read_only=False):
        self.buffer = (ctypes.c_float * 16)()
        self.shape = (ctypes.c_int64 * 1)(4)
        self.strides = (ctypes.c_int64 * 1)(1)
        self.deleted = 0
        self._deleter = DELETER(self._delete)
        self.managed = ManagedVersioned()
        self.managed.major, self.managed.minor = 1, 3
        self.managed.deleter = ctypes.cast(self._deleter, ctypes.c_void_p)
        self.managed.flags = 1 if read_only else 0
        t = self.managed.dl_tensor
        t.data = (ctypes.addressof(self.buffer) + 63) // 64 * 64
        t.device_type, t.device_id = device_type, device_id
        t.ndim = 1
        t.code, t.bits, t.lanes = 2, 32, 1
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        self.capsule = ctypes.pythonapi.PyCapsule_New(ctypes.addressof(self.managed), b"dltensor_versioned", None)

    def _delete(self, _pointer):
        self.deleted += 1


class Producer:
    """A CUDA producer recording the ``stream`` each ``__dlpack__`` call receives."""

    def __init__(self, device_id=0, read_only=False, announce=None):
        self.device_id, self.read_only = device_id, read_only
        self.announce = device_id if announce is None else announce
        self.streams, self.made = [], []

    def __dlpack_device__(self):
        return (CUDA, self.announce)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        fake = FakeCuda(self.device_id, read_only=self.read_only)
        self.made.append(fake)
        return fake.capsule


def note(e):
    return str(e) + " " + " ".join(getattr(e, "__notes__", []))


def test_a_protocol_producer_receives_the_stream_dlspan_uses_never_zero():
    p = Producer(device_id=1)
    device, handle, value, source = dlspan.diagnostics.caller_stream(p)
    assert (device, handle, value, source) == ((CUDA, 1), 2, 2, "Dlspan")
    assert p.streams == [2], "the producer orders its work before dlspan's stream: the per-thread default"
    assert [f.deleted for f in p.made] == [1], "the capsule's deleter ran once, when the argument was released"
    assert dlspan.diagnostics.live_borrows() == 0


def test_a_producer_exporting_on_another_device_than_announced_is_refused():
    p = Producer(device_id=1, announce=0)
    with pytest.raises(BufferError) as info:
        dlspan.diagnostics.caller_stream(p)
    assert info.value.kind == "DeviceUnavailable" and p.streams == [2]
    assert [f.deleted for f in p.made] == [1]


def test_rocm_producers_get_no_stream():
    # DLPack's stream values differ on ROCm (0 is its default stream; 1 and 2 are not allowed).
    class Rocm(Producer):
        def __dlpack_device__(self):
            return (10, 0)

        def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
            self.streams.append(stream)
            fake = FakeCuda(0, device_type=10)
            self.made.append(fake)
            return fake.capsule

    p = Rocm()
    with pytest.raises(TypeError) as info:
        dlspan.diagnostics.caller_stream(p)
    assert (info.value.kind, info.value.found) == ("DeviceMismatch", (10, 0))
    assert p.streams == [None] and [f.deleted for f in p.made] == [1]


def test_a_bare_cuda_capsule_gets_dlspans_stream():
    fake = FakeCuda(3)
    assert dlspan.diagnostics.caller_stream(fake.capsule) == ((CUDA, 3), 2, 2, "Dlspan")
    assert fake.deleted == 1


@pytest.mark.parametrize("device_type", [CPU, CUDA_MANAGED])
def test_a_device_argument_refuses_other_memory_naming_it(device_type):
    fake = FakeCuda(0, device_type=device_type)
    with pytest.raises(TypeError) as info:
        dlspan.diagnostics.caller_stream(fake.capsule)
    e = info.value
    assert (e.kind, e.expected, e.found) == ("DeviceMismatch", (CUDA, 0), (device_type, 0))
    assert "while processing 'x'" in note(e) and "expected an array on cuda" in note(e)
    assert fake.deleted == 1


def test_host_arguments_refuse_cuda_memory_naming_them():
    fake = FakeCuda(2)
    with pytest.raises(TypeError) as info:
        dlspan.add(np.zeros(4, np.float32), fake.capsule)
    assert info.value.kind == "DeviceMismatch" and "cuda:2" in note(info.value)
    assert "while processing 'b'" in note(info.value)
    assert fake.deleted == 1


def test_arguments_on_different_devices_are_a_value_error_naming_the_argument():
    same = dlspan.diagnostics._common_stream(Producer(0), Producer(0))
    assert same == ((CUDA, 0), 2, 2, "Dlspan")
    with pytest.raises(ValueError) as info:
        dlspan.diagnostics._common_stream(Producer(0), Producer(1))
    e = info.value
    assert (e.kind, e.expected, e.found) == ("DevicesDiffer", (CUDA, 0), (CUDA, 1))
    assert "while processing 'b'" in note(e) and "argument 'a'" in note(e)
    assert dlspan.diagnostics.live_borrows() == 0


# A fake C exchange table (DLPack 1.3) with ctypes: `dltensor_from_py_object_no_sync` fills a
# kDLCUDA tensor, `current_work_stream` returns a sentinel and records what it was asked.
FILL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(DLTensor))
STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
SENTINEL = 0x5E470000


class Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class ExchangeAPI(ctypes.Structure):
    _fields_ = [
        ("version", Version),
        ("prev_api", ctypes.c_void_p),
        ("managed_tensor_allocator", ctypes.c_void_p),
        ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
        ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
        ("dltensor_from_py_object_no_sync", FILL),
        ("current_work_stream", STREAM),
    ]


SHAPE = (ctypes.c_int64 * 1)(4)
STRIDES = (ctypes.c_int64 * 1)(1)
BYTES = (ctypes.c_float * 4)()
ASKED = []


@FILL
def _fill(obj, out):
    device_id = ctypes.cast(obj, ctypes.py_object).value.device_id
    t = out.contents
    t.data = ctypes.addressof(BYTES)
    t.device_type, t.device_id, t.ndim = CUDA, device_id, 1
    t.code, t.bits, t.lanes = 2, 32, 1
    t.shape = ctypes.cast(SHAPE, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(STRIDES, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    return 0


@STREAM
def _stream(device_type, device_id, out):
    ASKED.append((device_type, device_id))
    out[0] = SENTINEL + device_id
    return 0


TABLE = ExchangeAPI(Version(1, 3), None, None, None, None, _fill, _stream)
# A capsule keeps a pointer to its name: the name lives as long as the module.
TABLE_NAME = b"dlpack_exchange_api"
TABLE_CAPSULE = ctypes.pythonapi.PyCapsule_New(ctypes.addressof(TABLE), TABLE_NAME, None)


class TableTensor:
    __dlpack_c_exchange_api__ = TABLE_CAPSULE

    def __init__(self, device_id):
        self.device_id = device_id


def test_an_exchange_tables_current_work_stream_is_the_callers_stream():
    ASKED.clear()
    assert dlspan.diagnostics.caller_stream(TableTensor(2)) == ((CUDA, 2), SENTINEL + 2, SENTINEL + 2, "ExchangeTable")
    assert ASKED == [(CUDA, 2)]
    # Two arguments of one producer on one device share its stream.
    assert dlspan.diagnostics._common_stream(TableTensor(1), TableTensor(1))[1] == SENTINEL + 1
    with pytest.raises(ValueError, match="cuda:3"):
        dlspan.diagnostics._common_stream(TableTensor(1), TableTensor(3))


def cpu_arrays():
    yield "numpy", np.zeros(4, np.float32)
    torch = pytest.importorskip("torch")
    yield "torch", torch.zeros(4)
    yield "torch-requires-grad", torch.zeros(4, requires_grad=True)
    jax = pytest.importorskip("jax")
    # On the CPU even where JAX's default device is a GPU.
    yield "jax", jax.device_put(jax.numpy.zeros(4, jax.numpy.float32), jax.devices("cpu")[0])


def test_real_cpu_arrays_are_refused_by_device_arguments_and_have_no_stream():
    names = []
    for name, array in cpu_arrays():
        with pytest.raises(TypeError) as info:
            dlspan.diagnostics.caller_stream(array)
        e = info.value
        assert (e.kind, e.expected, e.found[0]) == ("DeviceMismatch", (CUDA, 0), CPU), name
        assert "while processing 'x'" in note(e), name
        # The same arrays are host arguments as before.
        assert dlspan.sum(array) == 0.0, name
        names.append(name)
    assert names == ["numpy", "torch", "torch-requires-grad", "jax"]
    assert dlspan.diagnostics.live_borrows() == 0


def no_cuda_device():
    pytest.skip("skipped: no CUDA device")


def test_torch_cuda_tensors_get_torchs_current_stream():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        no_cuda_device()
    x = torch.zeros(4, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        device, handle, value, source = dlspan.diagnostics.caller_stream(x)
    assert (device, handle, value, source) == ((CUDA, x.device.index), s.cuda_stream, s.cuda_stream, "ExchangeTable")
    device, handle, value, source = dlspan.diagnostics.caller_stream(x)
    current = torch.cuda.current_stream().cuda_stream
    assert handle == current and value == (current or 1) and source == "ExchangeTable"
    # Gradients: shared views of tensors that require grad, as on the host.
    assert dlspan.diagnostics.caller_stream(torch.zeros(4, device="cuda", requires_grad=True))[3] == "ExchangeTable"
    # The package's functions run on CUDA tensors (test_cuda_package.py); a host array among them is
    # refused, named.
    assert dlspan.sum(x) == 0.0
    with pytest.raises(TypeError) as info:
        dlspan.add(x, torch.zeros(4))
    assert info.value.kind == "DeviceMismatch" and "while processing 'b'" in note(info.value)
    # A second argument on another device (a fake one: its memory is never read).
    with pytest.raises(ValueError) as info:
        dlspan.diagnostics._common_stream(x, Producer(x.device.index + 1))
    assert info.value.kind == "DevicesDiffer" and "while processing 'b'" in note(info.value)


def test_cupy_arrays_get_cupys_current_stream():
    cupy = pytest.importorskip("cupy")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:
        count = 0
    if count == 0:
        no_cuda_device()
    x = cupy.zeros(4, cupy.float32)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        assert dlspan.diagnostics.caller_stream(x) == ((CUDA, x.device.id), s.ptr, s.ptr, "CuPy")
    null = cupy.cuda.get_current_stream().ptr
    assert dlspan.diagnostics.caller_stream(x)[1:] == (null, null or 1, "CuPy")


def test_jax_gpu_arrays_get_dlspans_stream():
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        # A CPU-only jaxlib says nothing about the machine's devices.
        pytest.skip("skipped: this jaxlib has no GPU backend")
    x = jax.device_put(jax.numpy.zeros(4, jax.numpy.float32), gpus[0])
    assert dlspan.diagnostics.caller_stream(x) == ((CUDA, gpus[0].id), 2, 2, "Dlspan")
