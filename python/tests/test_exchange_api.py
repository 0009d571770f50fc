"""dlspan's DLPack C exchange table, read by a C consumer compiled with gcc against the real
dlpack.h (not dlspan's code), and checked beside PyTorch's table with the same consumer."""

import gc
import importlib.util
import os
import shutil
import subprocess
import sysconfig
import weakref
from pathlib import Path

import numpy as np
import pytest

import dlspan

HERE = Path(__file__).parent


def dlpack_include():
    candidates = [os.environ.get("DLSPAN_DLPACK_INCLUDE", "")]
    return next((c for c in candidates if c and (Path(c) / "dlpack" / "dlpack.h").is_file()), None)


@pytest.fixture(scope="module")
def consumer(tmp_path_factory):
    gcc, include = shutil.which("gcc"), dlpack_include()
    if gcc is None or include is None:
        reason = f"needs gcc and DLSPAN_DLPACK_INCLUDE with dlpack/dlpack.h (gcc={gcc}, include={include})"
        if os.environ.get("DLSPAN_REQUIRE_DLPACK_H"):
            pytest.fail(reason)  # the test command provides both
        pytest.skip(f"skipped: {reason}")
    build = tmp_path_factory.mktemp("consumer")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    target = build / f"exchange_consumer{suffix}"
    subprocess.run(
        [gcc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-pthread", f"-I{sysconfig.get_paths()['include']}",
         f"-I{include}", str(HERE / "c" / "exchange_consumer.c"), "-o", str(target)],
        check=True,
    )
    spec = importlib.util.spec_from_file_location("exchange_consumer", target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dltensor_view(consumer):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1::2]
    t = dlspan.from_dlpack(a)
    version, ndim, dtype, shape, strides, byte_offset, device = consumer.describe(t)
    assert (version, ndim, dtype, shape, strides, device) == ((1, 3), 2, (2, 32, 1), (3, 2), (4, 2), (1, 0))
    assert consumer.sum_f32(t) == a.sum()


def test_same_consumer_reads_torch(consumer, torch):
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    assert consumer.describe(x)[3:5] == ((4, 3), (1, 4))
    assert consumer.sum_f32(x) == float(x.sum())
    assert consumer.sum_f32(dlspan.from_dlpack(x)) == float(x.sum())


def test_managed_round_trip(consumer):
    t = dlspan.arange(5, "float32")
    back = consumer.roundtrip(t)
    assert type(back) is dlspan.Tensor
    assert np.asarray(back).ctypes.data == np.asarray(t).ctypes.data
    np.asarray(back)[0] = 9.0
    assert np.asarray(t)[0] == 9.0


def test_deleter_from_a_thread_without_the_gil(consumer):
    t = dlspan.zeros(4)
    alive = weakref.ref(t)
    consumer.release_elsewhere(t)
    del t
    gc.collect()
    assert alive() is None, "the export's reference was released by the deleter"


def test_allocator(consumer):
    t = consumer.allocate(dlspan.zeros(1), (2, 3), 2, 64, 1)
    assert type(t) is dlspan.Tensor and (t.shape, t.dtype) == ((2, 3), "float64")
    assert np.asarray(t).ctypes.data % 64 == 0
    # CUDA (rule Y22): dlspan's device memory where there is a device, otherwise an error through
    # SetError (no driver, or a package built without `cuda`), never host memory.
    result = consumer.allocate(dlspan.zeros(1), (2,), 2, 32, 2)
    if isinstance(result, tuple):
        kind, message = result
        # No driver (the driver's error, RuntimeError) or a package built without `cuda`.
        assert kind in ("RuntimeError", "BufferError") and ("kDLCUDA" in message or "CUDA driver" in message), message
        assert not message.startswith(kind), "SetError's message is the exception's own, without its class"
    else:
        assert type(result) is dlspan.Tensor and (result.device, result.shape) == ("cuda:0", (2,))
    kind, message = consumer.allocate(dlspan.zeros(1), (2,), 2, 32, 13)  # CUDA managed: never
    assert kind == "BufferError" and "cuda_managed" in message.lower().replace(" ", "_"), message


def test_allocator_errors_carry_their_class(consumer):
    """SetError receives the class Python raises for the same refusal, and its message alone."""
    kind, message = consumer.allocate(dlspan.zeros(1), (4,), 2, 0, 1)  # float0: no element type
    assert kind == "TypeError" and "float0" in message and not message.startswith("TypeError"), (kind, message)
    kind, message = consumer.allocate(dlspan.zeros(1), (2**62, 4), 2, 32, 1)
    assert kind == "BufferError", (kind, message)


def test_allocator_leaves_a_pending_exception_alone(consumer):
    """The allocator reports through SetError: an exception the caller had pending is still pending
    after the call, refused (float0) or not (float32)."""
    for bits, refused in ((0, True), (32, False)):
        rc, kind, pending = consumer.allocate_pending(dlspan.zeros(1), 2, bits)
        assert (rc, kind) == ((-1, "TypeError") if refused else (0, "")), (rc, kind)
        assert isinstance(pending, KeyError) and pending.args == ("pending before the call",), pending


@pytest.mark.parametrize("code, bits", [(17, 8), (15, 4), (16, 8), (10, 16), (6, 1)])
def test_codes_of_one_width_refuse_another(consumer, code, bits):
    """DLPack fixes the width of bool, FP8, FP6 and FP4 and tells consumers to stop importing any
    other: the allocator refuses such a prototype, and no Tensor holds such data."""
    kind, message = consumer.allocate(dlspan.zeros(1), (4,), code, bits, 1)
    assert kind == "TypeError", (kind, message)


def test_current_stream(consumer):
    assert consumer.stream(dlspan.zeros(1), 1, 0, 0) == 0
    assert consumer.stream(dlspan.zeros(1), 2, 0, 0) == 2, "the per-thread default stream for CUDA memory"


def test_current_stream_failures_raise(consumer):
    """-1 comes with a Python exception set, as the header requires."""
    with pytest.raises(ValueError, match="null out"):
        consumer.stream(dlspan.zeros(1), 1, 0, 1)
    with pytest.raises(ValueError, match="-1"):
        consumer.stream(dlspan.zeros(1), 2, -1, 0)


def test_padded_subbyte_data_has_no_plain_dltensor(consumer):
    """A plain DLTensor has no flags: without IS_SUBBYTE_TYPE_PADDED its sub-byte data reads as
    packed, so padded FP4 values would be read as other values. Refused, as for legacy capsules;
    the managed path (which carries the flag) shares it."""
    padded = dlspan.Tensor._from_bytes(bytes([1, 2, 3]), "float4_e2m1fn", (3,), False, True)
    with pytest.raises(BufferError) as err:
        consumer.describe(padded)
    assert err.value.kind == "PaddedSubbyteExport"
    assert consumer.roundtrip(padded).tolist() == [0.5, 1.0, 1.5]


def test_refused_objects_are_released_at_once(consumer):
    """A C consumer calling the table with objects it refuses holds nothing afterwards: the
    references the error held are released when it is raised, not at the next call into dlspan."""
    import tracemalloc

    owner = dlspan.zeros(1)
    tracemalloc.start()
    try:
        for _ in range(100):
            with pytest.raises(TypeError):
                consumer.describe_as(owner, 5)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(20000):
            try:
                consumer.describe_as(owner, 5)
            except TypeError:
                pass
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 100_000, f"{grown} bytes held after 20000 refused calls"


def test_pinned_memory_is_read_by_numpy_after_the_device(consumer):
    """`__array__` hands the memory to NumPy, which reads it on the host: memory labelled CUDA
    pinned (kDLCUDAHost) is read after the device, or refused where no driver can order it (rule
    Y16), as memoryview and tolist are."""
    t = consumer.relabel(dlspan.arange(4, "float32"), 3)
    assert t.device.startswith("cuda_host")
    try:
        memoryview(t)
    except BufferError as err:
        assert err.kind == "HostAccessUnordered"
        for read in (np.asarray, lambda x: x.__array__(), np.array):
            with pytest.raises(BufferError) as refused:
                read(t)
            assert refused.value.kind == "HostAccessUnordered"
    else:
        assert np.asarray(t).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_wrong_type_is_refused(consumer):
    with pytest.raises(AttributeError):
        consumer.describe(np.zeros(2))


def test_misaligned_tensors_are_refused(consumer):
    """The table's functions share memory, never copy: a tensor whose first element is not aligned
    for its type is refused (BufferError), as a typed consumer could not read it."""
    values = np.zeros(4 * 4 + 1, np.uint8)[1:].view(np.float32)
    t = dlspan.from_dlpack(values)
    for call in (consumer.describe, consumer.roundtrip):
        with pytest.raises(BufferError) as err:
            call(t)
        assert err.value.kind == "Misaligned"
