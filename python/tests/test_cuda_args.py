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


def jax_gpus(jax):
    """JAX's GPU devices; none for a CPU-only jaxlib (which says nothing of the machine's)."""
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def jax_gpus_or_skip(jax):
    gpus = jax_gpus(jax)
    if not gpus:
        pytest.skip("skipped: this jaxlib has no GPU backend")
    return gpus


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


# Outputs on the caller's device (rule Y22).


def test_dlspans_exchange_table_names_the_per_thread_stream_for_cuda_memory():
    table = ctypes.pythonapi.PyCapsule_GetPointer
    table.restype, table.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    api = ExchangeAPI.from_address(table(dlspan.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api"))
    out = ctypes.c_void_p(7)
    for device_type, expected in ((CUDA, 2), (CUDA_MANAGED, 2), (CPU, None)):
        assert api.current_work_stream(device_type, 0, ctypes.byref(out)) == 0
        assert out.value == expected, device_type


def test_an_output_for_a_stream_dlspan_cannot_order_with_is_refused():
    # The fake table's stream is neither PyTorch's (its allocator) nor a default stream.
    with pytest.raises(TypeError, match="cannot be ordered with the caller's stream") as info:
        dlspan.diagnostics._empty_like(TableTensor(2))
    assert "on cuda:2" in str(info.value)
    assert dlspan.diagnostics.live_borrows() == 0


def cuda_device_count():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:
        pass
    try:
        import torch

        return torch.cuda.device_count()
    except Exception:
        return 0


def test_an_output_on_a_default_stream_is_dlspans_device_memory_or_a_clean_error():
    producer = Producer()
    if cuda_device_count() == 0:
        # No driver, or a package built without `cuda`: a typed error, never host memory.
        with pytest.raises((BufferError, RuntimeError)) as info:
            dlspan.diagnostics._empty_like(producer)
        e = info.value
        assert "cuda" in str(e), str(e)
        if isinstance(e, RuntimeError):
            assert e.kind in ("LibraryMissing", "NoDevice", "Driver"), e.kind
    else:
        out = dlspan.diagnostics._empty_like(producer)
        assert isinstance(out, dlspan.Tensor)
        assert (out.device, out.shape, out.dtype) == ("cuda:0", (4,), "float32")
        # Its consumers' streams wait for the writes: a legacy capsule on the legacy stream.
        assert out.__dlpack__(stream=1) is not None
    assert producer.streams == [2]
    assert all(made.deleted == 1 for made in producer.made)
    assert dlspan.diagnostics.live_borrows() == 0


def test_torch_outputs_come_from_pytorchs_allocator_on_the_device():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        no_cuda_device()
    x = torch.ones(1 << 20, device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    out = dlspan.diagnostics._empty_like(x)
    assert type(out) is torch.Tensor
    assert (out.device, out.shape, out.dtype) == (x.device, x.shape, x.dtype)
    assert torch.cuda.memory_allocated() - before >= out.numel() * 4
    half = dlspan.diagnostics._empty_like(x[::2].to(torch.float16))
    assert (half.shape, half.dtype) == ((1 << 19,), torch.float16)


def test_cupy_outputs_are_cupy_arrays_on_the_device():
    cupy = pytest.importorskip("cupy")
    if cuda_device_count() == 0:
        no_cuda_device()
    x = cupy.ones((3, 5), dtype=cupy.int32)
    out = dlspan.diagnostics._empty_like(x)
    assert type(out) is cupy.ndarray
    assert (out.shape, out.dtype, out.device.id) == ((3, 5), cupy.int32, x.device.id)
    out[...] = 7
    assert int(out.sum()) == 105


def test_jax_outputs_are_jax_arrays_of_dlspans_zeroed_device_memory():
    jax = pytest.importorskip("jax")
    gpus = jax_gpus_or_skip(jax)
    x = jax.device_put(jax.numpy.ones((4, 6), jax.numpy.float32), gpus[0])
    out = dlspan.diagnostics._empty_like(x)
    assert isinstance(out, jax.Array)
    assert out.shape == (4, 6) and out.dtype == jax.numpy.float32
    assert list(out.devices())[0] == gpus[0]
    assert float(jax.numpy.abs(out).sum()) == 0.0


# On a GPU: round trips through dlspan.Tensor, and the race test of the caller's stream.


def test_device_round_trips_through_dlspan_share_the_memory():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        no_cuda_device()
    x = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    t = dlspan.from_dlpack(x)
    assert (t.device, t.shape, t.dtype) == ("cuda:0", (3, 4), "float32")
    back = torch.from_dlpack(t)
    assert back.data_ptr() == x.data_ptr() and torch.equal(back, x)
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        c = cupy.arange(6, dtype=cupy.int32)
        tc = dlspan.from_dlpack(c)
        again = cupy.from_dlpack(tc)
        assert again.data.ptr == c.data.ptr and bool((again == c).all())
    jax = pytest.importorskip("jax")
    gpus = jax_gpus(jax)
    if gpus:
        j = jax.device_put(jax.numpy.arange(8, dtype=jax.numpy.float32), gpus[0])
        tj = dlspan.from_dlpack(j)
        assert tj.readonly and tj.device == f"cuda:{gpus[0].id}"
        # JAX reads only legacy capsules, which cannot say read-only: a read-only tensor (JAX's
        # own arrays are immutable) is refused as NumPy refuses one, and a writable one shared.
        with pytest.raises(BufferError, match="read-only"):
            jax.dlpack.from_dlpack(tj)
        w = dlspan.from_dlpack(torch.arange(8, dtype=torch.float32, device=f"cuda:{gpus[0].id}"))
        k = jax.dlpack.from_dlpack(w)
        assert k.unsafe_buffer_pointer() == torch.from_dlpack(w).data_ptr()
        assert bool((k == j).all())


def test_an_in_place_op_is_ordered_on_the_callers_stream_and_does_not_wait():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        no_cuda_device()
    side = torch.cuda.Stream()
    x = torch.empty(1 << 20, device="cuda")
    # A kernel's first launch in a process loads it (CUDA's lazy loading, the default), and loading
    # waits for the device's pending work: every kernel of the timed section, PyTorch's as well as
    # dlspan's, is launched once before it (seen on an H100 and an H200: PyTorch's first `add_`
    # in a process waited for the long kernel, with CUDA_MODULE_LOADING=EAGER it did not).
    with torch.cuda.stream(side):
        x.fill_(1.0)
        torch.cuda._sleep(1000)
        x.add_(1.0)
        dlspan.scale_(x, 1.0)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        x.fill_(1.0)
        torch.cuda._sleep(500_000_000)  # a long kernel: a quarter of a second or more
        x.add_(1.0)
        dlspan.scale_(x, 3.0)  # on the side stream, after the add
        returned_before_the_long_kernel_ended = not side.query()
    side.synchronize()
    assert returned_before_the_long_kernel_ended, "the call synchronised with the side stream"
    assert bool((x == 6.0).all())
    wrong = 0
    for i in range(1000):
        with torch.cuda.stream(side):
            x.fill_(float(i))
            torch.cuda._sleep(20_000)
            dlspan.scale_(x, 2.0)
            x.add_(1.0)
        side.synchronize()
        wrong += not bool((x == 2.0 * i + 1.0).all())
    assert wrong == 0, f"{wrong} of 1000 runs read or wrote outside the caller's stream order"


def test_an_output_is_handed_back_ordered_on_the_callers_stream_with_no_wait():
    # dlspan.cast into a new tensor: PyTorch's allocator on the caller's stream, the cast kernel
    # there, the tensor handed back to PyTorch with the caller's stream ordered after the kernel
    # on the device, never by a wait on the host.
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        no_cuda_device()
    side = torch.cuda.Stream()
    x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    with torch.cuda.stream(side):  # every kernel of the timed section launched once first
        torch.cuda._sleep(1000)
        x.add_(1.0)
        dlspan.cast(x, torch.float64)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(500_000_000)  # a quarter of a second or more
        x.add_(1.0)
        y = dlspan.cast(x, torch.float64)
        pending = not side.query()
    side.synchronize()
    assert pending, "the call waited on the host for the caller's stream"
    assert torch.equal(y, (torch.arange(1 << 20, device="cuda") + 2).double())


# An extension may write an output on a stream of its own rather than the caller's: the output's
# views then order the write after the allocation (the framework's allocator may hand back a block
# the caller's pending work still uses) and the caller's stream after the write.
SPIN = 200_000_000  # clock cycles: a tenth of a second or more


def test_a_torch_output_written_on_another_stream_is_ordered_both_ways():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        no_cuda_device()
    side = torch.cuda.Stream()
    x = torch.ones(1 << 20, device="cuda")
    with torch.cuda.stream(side):  # every kernel of the timed section launched once first
        torch.cuda._sleep(1000)
        torch.ones(1 << 20, device="cuda").add_(5.0)
        dlspan.diagnostics._fill_on_own_stream(x, 1.0, 1000)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        t = torch.zeros(1 << 20, device="cuda")
        block = t.data_ptr()
        torch.cuda._sleep(500_000_000)  # a quarter of a second or more
        t.add_(5.0)  # pending on the caller's stream, writing the block
        del t  # freed: PyTorch's allocator reuses it on this stream at once
        y = dlspan.diagnostics._fill_on_own_stream(x, 7.0, SPIN)
        pending = not side.query()
        z = y + 1.0  # on the caller's stream, after the write on dlspan's stream
    side.synchronize()
    assert y.data_ptr() == block, "PyTorch's allocator did not reuse the block (the test's premise)"
    assert pending, "the call waited on the host"
    assert bool((y == 7.0).all()), "the write on another stream ran before the block's earlier use ended"
    assert bool((z == 8.0).all()), "the caller's stream read the output before the write on another stream"


def test_a_cupy_output_written_on_another_stream_is_ordered_both_ways():
    cupy = pytest.importorskip("cupy")
    if cuda_device_count() == 0:
        no_cuda_device()
    spin = cupy.RawKernel(
        r"""extern "C" __global__ void spin(long long cycles) {
              const long long start = clock64();
              while (clock64() - start < cycles) {}
            }""",
        "spin",
    )
    side = cupy.cuda.Stream(non_blocking=True)
    x = cupy.ones(1 << 20, dtype=cupy.float32)
    with side:  # every kernel of the timed section launched once first
        spin((1,), (1,), (cupy.int64(1000),))
        cupy.ones(1 << 20, dtype=cupy.float32).__iadd__(5.0)
        dlspan.diagnostics._fill_on_own_stream(x, 1.0, 1000)
    cupy.cuda.Device().synchronize()
    with side:
        t = cupy.zeros(1 << 20, dtype=cupy.float32)
        block = t.data.ptr
        spin((1,), (1,), (cupy.int64(4 * SPIN),))
        t += 5.0
        del t
        y = dlspan.diagnostics._fill_on_own_stream(x, 7.0, SPIN)
        pending = not side.done
        z = y + 1.0
    side.synchronize()
    assert y.data.ptr == block, "CuPy's pool did not reuse the block (the test's premise)"
    assert pending, "the call waited on the host"
    assert bool((y == 7.0).all()), "the write on another stream ran before the block's earlier use ended"
    assert bool((z == 8.0).all()), "the caller's stream read the output before the write on another stream"


def test_a_jax_output_written_on_another_stream_is_ready_for_jax():
    jax = pytest.importorskip("jax")
    gpus = jax_gpus_or_skip(jax)
    x = jax.device_put(jax.numpy.ones(1 << 20, jax.numpy.float32), gpus[0])
    # JAX's computations compiled first: a compilation would outlast the write.
    warm = dlspan.diagnostics._fill_on_own_stream(x, 1.0, 1000)
    float((warm + 1.0).min()), float((warm + 1.0).max())
    y = dlspan.diagnostics._fill_on_own_stream(x, 7.0, 4 * SPIN)
    assert isinstance(y, jax.Array)
    z = y + 1.0
    assert float(z.min()) == 8.0 and float(z.max()) == 8.0, "JAX read the output before the write on another stream"


def test_dlspans_own_output_is_released_with_no_wait_after_a_write_on_another_stream():
    # dlspan's own device memory (a dlspan.Tensor caller): dropped while the write on another
    # stream runs, it is freed on the per-thread default stream after that stream waits for the
    # write, on the device; the host waits for nothing.
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        no_cuda_device()
    x = dlspan.from_dlpack(torch.ones(1 << 20, device="cuda"))
    warm = dlspan.diagnostics._fill_on_own_stream(x, 1.0, 1000)
    del warm
    torch.cuda.synchronize()
    y = dlspan.diagnostics._fill_on_own_stream(x, 7.0, 4 * SPIN)
    assert isinstance(y, dlspan.Tensor)
    assert float(torch.from_dlpack(y).min()) == 7.0  # read on the legacy default stream, after the write
    z = dlspan.diagnostics._fill_on_own_stream(x, 7.0, 4 * SPIN)
    del z
    assert not dlspan.diagnostics._own_stream_idle(x), "releasing the output waited for the write"
    torch.cuda.synchronize()


class Reversed:
    """A producer exporting a reversed float32 axis as CuPy 14 does: `data` at index 0, and the
    stride -1 divided as an unsigned number (2^62 - 1), labelled `device_type`."""

    def __init__(self, device_type):
        self.device_type = device_type
        self.buffer = (ctypes.c_float * 64)()
        self.shape = (ctypes.c_int64 * 1)(30)
        self.strides = (ctypes.c_int64 * 1)((1 << 62) - 1)
        self.deleted = 0
        self._deleter = DELETER(self._delete)
        self.managed = ManagedVersioned()
        self.managed.major, self.managed.minor = 1, 0
        self.managed.deleter = ctypes.cast(self._deleter, ctypes.c_void_p)
        t = self.managed.dl_tensor
        t.data = (ctypes.addressof(self.buffer) + 63) // 64 * 64 + 29 * 4
        t.device_type, t.device_id = device_type, 0
        t.ndim = 1
        t.code, t.bits, t.lanes = 2, 32, 1
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))

    def _delete(self, _pointer):
        self.deleted += 1

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return ctypes.pythonapi.PyCapsule_New(ctypes.addressof(self.managed), b"dltensor_versioned", None)


def test_a_negative_stride_exported_as_unsigned_is_named_and_refused():
    # The CuPy 14 export seen on an H200 (rule Y17's framework notes): refused before any memory
    # is read, with the producer's mistake named, on the host and on a device alike.
    for device_type in (CPU, CUDA):
        producer = Reversed(device_type)
        with pytest.raises(BufferError, match="cupy.ascontiguousarray") as info:
            dlspan.from_dlpack(producer)
        assert info.value.kind == "UnsignedStride" and "-4" in str(info.value)
        assert producer.deleted == 1, "the refused tensor's deleter ran"
    producer = Reversed(CUDA)
    with pytest.raises(BufferError) as info:
        dlspan.diagnostics.caller_stream(producer)
    assert info.value.kind == "UnsignedStride" and "while processing 'x'" in note(info.value)
    assert producer.deleted == 1 and dlspan.diagnostics.live_borrows() == 0
