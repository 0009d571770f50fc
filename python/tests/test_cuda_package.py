"""The package's functions on CUDA memory: ``add``, ``mul``, ``scale_``, ``sum``, ``copy``, ``cast``.

Without a GPU: fake CUDA capsules (host bytes labelled kDLCUDA, on a device id no machine has, so
that no kernel ever reads them even where a driver is installed) give typed errors before any memory
is touched; host and device arguments mixed are a ``TypeError`` naming the argument; the new
``copy`` and ``cast`` on the host against NumPy. With a GPU (``skipped: no CUDA device``
otherwise): PyTorch CUDA tensors (float32, float16, int32, transposed and strided), CuPy arrays and
JAX GPU arrays against the frameworks' own results, on the caller's stream.
"""

import ctypes

import numpy as np
import pytest
from test_cuda_args import CPU, CUDA, CUDA_MANAGED, FakeCuda, note

import dlspan
import dlspan.diagnostics

# A device id no machine has: a fake CUDA tensor there fails when its device is looked up, before a
# kernel could read the host bytes behind the label.
NOWHERE = 63


def driver_present():
    for name in ("libcuda.so.1", "libcuda.so"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False


def unreachable_kinds():
    # No driver: the library is missing; a driver: the device does not exist.
    return ("NoDevice",) if driver_present() else ("LibraryMissing",)


def fake(device_id=NOWHERE, **kwargs):
    return FakeCuda(device_id, **kwargs)


# --- Without a GPU: typed errors, never a read of the bytes behind a CUDA label ---------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda a, b, out: dlspan.add(a.capsule, b.capsule),
        lambda a, b, out: dlspan.add(a.capsule, b.capsule, out=out.capsule),
        lambda a, b, out: dlspan.mul(a.capsule, b.capsule, out=out.capsule),
        lambda a, b, out: dlspan.scale_(a.capsule, 2.0),
        lambda a, b, out: dlspan.sum(a.capsule),
        lambda a, b, out: dlspan.copy(a.capsule, out.capsule),
        lambda a, b, out: dlspan.cast(a.capsule, "float16"),
        lambda a, b, out: dlspan.cast(a.capsule, out=out.capsule),
    ],
    ids=["add", "add-out", "mul-out", "scale_", "sum", "copy", "cast", "cast-out"],
)
def test_unreachable_cuda_arguments_are_a_buffer_error(call):
    a, b, out = fake(), fake(), fake()
    canary = [a.buffer[k] for k in range(16)]
    with pytest.raises(BufferError) as info:
        call(a, b, out)
    assert info.value.kind in unreachable_kinds(), note(info.value)
    # The bytes behind the label were neither read into a result nor written.
    assert [a.buffer[k] for k in range(16)] == canary
    # Every capsule taken was released once; nothing stays borrowed.
    assert all(f.deleted <= 1 for f in (a, b, out)) and a.deleted == 1
    assert dlspan.diagnostics.live_borrows() == 0


def test_without_a_driver_the_error_says_so():
    if driver_present():
        pytest.skip("skipped: a CUDA driver is installed (this test covers machines without one)")
    with pytest.raises(BufferError) as info:
        dlspan.sum(fake(0).capsule)
    assert info.value.kind == "LibraryMissing" and "libcuda" in str(info.value)
    assert "while processing 'x'" in note(info.value)


def test_host_and_device_arguments_mixed_are_a_type_error_naming_the_argument():
    host = np.zeros(4, np.float32)
    # A host first argument: the device one is refused as a host argument.
    for call, name in [
        (lambda d: dlspan.add(host, d.capsule), "b"),
        (lambda d: dlspan.add(host, host, out=d.capsule), "out"),
        (lambda d: dlspan.copy(host, d.capsule), "out"),
        (lambda d: dlspan.cast(host, out=d.capsule), "out"),
    ]:
        d = fake()
        with pytest.raises(TypeError) as info:
            call(d)
        e = info.value
        assert (e.kind, e.expected[0], e.found) == ("DeviceMismatch", CPU, (CUDA, NOWHERE)), name
        assert f"while processing '{name}'" in note(e), note(e)
        assert d.deleted == 1
    # A device first argument: the host one is refused as a device argument.
    for call, name in [
        (lambda d: dlspan.add(d.capsule, host), "b"),
        (lambda d: dlspan.mul(d.capsule, fake().capsule, out=host), "out"),
        (lambda d: dlspan.copy(d.capsule, host), "out"),
        (lambda d: dlspan.cast(d.capsule, out=host), "out"),
    ]:
        d = fake()
        with pytest.raises(TypeError) as info:
            call(d)
        e = info.value
        assert (e.kind, e.expected, e.found[0]) == ("DeviceMismatch", (CUDA, 0), CPU), name
        assert f"while processing '{name}'" in note(e), note(e)
    assert dlspan.diagnostics.live_borrows() == 0


def test_device_arguments_on_two_devices_are_a_value_error_naming_the_argument():
    with pytest.raises(ValueError) as info:
        dlspan.add(fake(NOWHERE).capsule, fake(NOWHERE - 1).capsule)
    e = info.value
    assert (e.kind, e.expected, e.found) == ("DevicesDiffer", (CUDA, NOWHERE), (CUDA, NOWHERE - 1))
    assert "while processing 'b'" in note(e)
    # Device memory and managed memory are two spaces: refused as a device mismatch.
    with pytest.raises(TypeError) as info:
        dlspan.add(fake().capsule, fake(device_type=CUDA_MANAGED).capsule)
    assert info.value.kind == "DeviceMismatch" and "while processing 'b'" in note(info.value)


def test_read_only_cuda_memory_is_refused_in_place():
    with pytest.raises(ValueError) as info:
        dlspan.scale_(fake(read_only=True).capsule, 2.0)
    assert info.value.kind == "ReadOnly" and "while processing 'x'" in note(info.value)
    with pytest.raises(ValueError) as info:
        dlspan.copy(fake().capsule, fake(read_only=True).capsule)
    assert info.value.kind == "ReadOnly" and "while processing 'out'" in note(info.value)


def test_managed_memory_unreachable_is_a_buffer_error():
    # Managed memory is synchronised before use (rule Y16): without a driver, or on a device that
    # does not exist, that is refused.
    with pytest.raises(BufferError) as info:
        dlspan.sum(fake(device_type=CUDA_MANAGED).capsule)
    assert info.value.kind == "HostAccessUnordered"


def test_scalar_kinds_are_checked_before_the_device():
    with pytest.raises(TypeError) as info:
        dlspan.scale_(fake().capsule, 1 + 2j)
    assert info.value.kind == "ScalarKind"


# --- copy and cast on the host -------------------------------------------------------------------


def test_copy_takes_any_strides_on_either_side():
    rng = np.random.default_rng(1)
    src = rng.standard_normal((6, 10)).astype(np.float32)
    out = np.zeros((10, 6), np.float32).T  # column-major
    assert dlspan.copy(src, out) is None
    np.testing.assert_array_equal(out, src)
    strided = np.zeros((12, 20), np.int16)[::2, ::-2]
    values = rng.integers(-1000, 1000, (6, 10)).astype(np.int16)
    dlspan.copy(values[:, ::-1], strided)
    np.testing.assert_array_equal(strided, values[:, ::-1])
    torch = pytest.importorskip("torch")
    t = torch.zeros(10, 6, dtype=torch.float32)
    dlspan.copy(torch.from_numpy(src).T, t)
    np.testing.assert_array_equal(t.numpy(), src.T)


def test_copy_refusals_name_the_argument():
    a = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError) as info:
        dlspan.copy(a, np.zeros((2, 3), np.float64))
    assert info.value.kind == "DtypeMismatch" and "while processing 'out'" in note(info.value)
    with pytest.raises(ValueError) as info:
        dlspan.copy(a, np.zeros((3, 2), np.float32))
    assert info.value.kind == "ShapeMismatch"
    ro = np.zeros((2, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError) as info:
        dlspan.copy(a, ro)
    assert info.value.kind == "ReadOnly"
    with pytest.raises(ValueError) as info:
        dlspan.copy(a, a)
    assert info.value.kind == "BorrowConflict"


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (np.float64, np.float16),
        (np.float32, np.float64),
        (np.float64, np.float32),
        (np.int32, np.float32),
        (np.float32, np.int8),
        (np.int64, np.uint16),
        (np.float32, np.bool_),
        (np.bool_, np.float32),
        (np.uint8, np.int64),
    ],
)
def test_cast_matches_numpy_for_values_both_define(source, target):
    rng = np.random.default_rng(2)
    if np.issubdtype(source, np.floating):
        values = rng.uniform(-100, 100, (7, 9)).astype(source)
        if np.issubdtype(target, np.integer):
            info = np.iinfo(target)
            values = np.clip(np.trunc(values), info.min, info.max).astype(source)  # in range: no UB in NumPy
    elif source == np.bool_:
        values = rng.integers(0, 2, (7, 9)).astype(np.bool_)
    else:
        # Integers both types hold (or a million either way, into floats).
        low, high = max(np.iinfo(source).min, -(10**6)), min(np.iinfo(source).max, 10**6)
        if np.issubdtype(target, np.integer):
            low, high = max(low, np.iinfo(target).min), min(high, np.iinfo(target).max)
        values = rng.integers(low, high, (7, 9)).astype(source)
    x = values.T[::-1]  # transposed, reversed
    result = dlspan.cast(x, np.dtype(target))
    assert isinstance(result, np.ndarray) and result.dtype == target and result.shape == x.shape
    np.testing.assert_array_equal(result, x.astype(target))
    out = np.zeros((x.shape[1], x.shape[0]), target).T
    assert dlspan.cast(x, out=out) is None
    np.testing.assert_array_equal(out, x.astype(target))
    assert dlspan.cast(x, target, out=out) is None


def test_cast_rounds_once_and_keeps_the_framework():
    # Halfway cases round to even, as NumPy's float64 -> float16.
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65520.0, -0.0, np.inf, np.nan], np.float64)
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)
    np.testing.assert_array_equal(dlspan.cast(x, "float16").view(np.uint16), expected.view(np.uint16))
    assert dlspan.cast(x).dtype == np.float64  # no dtype, no out: a copy
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    half = dlspan.cast(t, torch.bfloat16)
    assert isinstance(half, torch.Tensor) and half.dtype == torch.bfloat16
    assert torch.equal(half, t.to(torch.bfloat16))


def test_cast_refusals():
    x = np.zeros(4, np.float32)
    with pytest.raises(TypeError) as info:
        dlspan.cast(x, "float16", out=np.zeros(4, np.float64))
    assert info.value.kind == "DtypeMismatch" and "while processing 'out'" in note(info.value)
    with pytest.raises(ValueError) as info:
        dlspan.cast(x, out=np.zeros(5, np.float64))
    assert info.value.kind == "ShapeMismatch"
    with pytest.raises(TypeError):
        dlspan.cast(x, "not-a-dtype")


def test_cast_into_and_from_packed_fp4():
    x = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -6.0, -0.5], np.float32)
    fp4 = dlspan.cast(x, "float4_e2m1fn")  # every value is one of FP4's
    back = dlspan.cast(fp4, "float32")
    np.testing.assert_array_equal(np.from_dlpack(back), x)


# --- With a GPU ----------------------------------------------------------------------------------


def no_cuda_device():
    pytest.skip("skipped: no CUDA device")


@pytest.fixture
def torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        no_cuda_device()
    return torch


def _inputs(torch, dtype, shape=(64, 48)):
    g = torch.Generator(device="cuda").manual_seed(3)
    if dtype.is_floating_point:
        a = torch.randn(shape, device="cuda", generator=g).to(dtype)
        b = torch.randn(shape, device="cuda", generator=g).to(dtype)
    else:
        a = torch.randint(-1000, 1000, shape, device="cuda", generator=g, dtype=dtype)
        b = torch.randint(-1000, 1000, shape, device="cuda", generator=g, dtype=dtype)
    return a, b


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_torch_cuda_add_mul_scale(torch_cuda, dtype):
    torch = torch_cuda
    dtype = getattr(torch, dtype)
    a, b = _inputs(torch, dtype)
    # Contiguous, transposed and strided inputs; outputs with their own strides.
    for x, y in [(a, b), (a.T, b.T), (a[::2, 1::3], b[1::2, ::3]), (a.T, b.T.contiguous())]:
        out = torch.full(x.shape, 7, dtype=dtype, device="cuda")
        assert dlspan.add(x, y, out=out) is None
        torch.cuda.current_stream().synchronize()
        assert torch.equal(out, x + y)
        out_t = torch.full((x.shape[1], x.shape[0]), 7, dtype=dtype, device="cuda").T
        dlspan.mul(x, y, out=out_t)
        torch.cuda.current_stream().synchronize()
        assert torch.equal(out_t, x * y)
        # Without out: a new tensor of torch on x's device.
        result = dlspan.add(x, y)
        assert isinstance(result, torch.Tensor) and result.device == x.device and result.dtype == dtype
        assert torch.equal(result, x + y)
        assert torch.equal(dlspan.mul(x, y), x * y)
    c = a.clone()
    view = c[:, ::2]
    dlspan.scale_(view, 3)
    expected = a.clone()
    expected[:, ::2] *= 3
    torch.cuda.current_stream().synchronize()
    assert torch.equal(c, expected)
    assert dlspan.diagnostics.live_borrows() == 0


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "uint8", "bool"])
def test_torch_cuda_sum(torch_cuda, dtype):
    torch = torch_cuda
    dtype = getattr(torch, dtype)
    g = torch.Generator(device="cuda").manual_seed(4)
    if dtype == torch.bool:
        x = torch.rand(300, 500, device="cuda", generator=g) < 0.3
    elif dtype.is_floating_point:
        x = torch.rand(300, 500, device="cuda", generator=g).to(dtype)
    else:
        x = torch.randint(0, 100, (300, 500), device="cuda", generator=g).to(dtype)
    for view in (x, x.T, x[::3, 1::7], x.flip(0)):
        total = dlspan.sum(view)
        exact = view.to(torch.float64).sum().item()
        if dtype.is_floating_point:
            assert isinstance(total, float)
            eps = 2.0**-52 if dtype == torch.float64 else 2.0**-23
            assert abs(total - exact) <= 4 * eps * view.to(torch.float64).abs().sum().item() + 1e-300
        else:
            assert isinstance(total, int) and total == int(exact)
    # Integers wrap in 64 bits, as NumPy's do.
    big = torch.full((4,), 2**62, dtype=torch.int64, device="cuda")
    assert dlspan.sum(big) == (4 * 2**62 + 2**63) % 2**64 - 2**63
    assert dlspan.sum(torch.zeros(0, 3, device="cuda")) == 0.0


def test_torch_cuda_copy_and_cast(torch_cuda):
    torch = torch_cuda
    a, _ = _inputs(torch, torch.float32)
    out = torch.zeros(a.shape[1], a.shape[0], device="cuda")
    dlspan.copy(a.T, out)
    torch.cuda.current_stream().synchronize()
    assert torch.equal(out, a.T)
    half = torch.zeros(a.shape, dtype=torch.float16, device="cuda").T.contiguous().T  # column-major
    assert dlspan.cast(a, out=half) is None
    torch.cuda.current_stream().synchronize()
    assert torch.equal(half, a.to(torch.float16))  # round to nearest even, as torch
    bf = dlspan.cast(a.T, "bfloat16")
    assert isinstance(bf, torch.Tensor) and bf.device == a.device and bf.dtype == torch.bfloat16
    assert torch.equal(bf, a.T.to(torch.bfloat16))
    ints = dlspan.cast(a * 100, torch.int32)
    assert torch.equal(ints, (a * 100).to(torch.int32))  # truncation toward zero, in range
    with pytest.raises(TypeError) as info:
        dlspan.copy(a, torch.zeros(a.shape, dtype=torch.float64, device="cuda"))
    assert info.value.kind == "DtypeMismatch"
    with pytest.raises(TypeError) as info:
        dlspan.copy(a, torch.zeros(a.shape))  # a host out for a device src
    assert info.value.kind == "DeviceMismatch" and "while processing 'out'" in note(info.value)


def test_torch_cuda_work_runs_on_the_callers_stream(torch_cuda):
    torch = torch_cuda
    n = 1 << 22
    a = torch.zeros(n, device="cuda")
    b = torch.ones(n, device="cuda")
    out = torch.zeros(n, device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        # Work queued before dlspan's on the side stream: the fill runs after a long sleep, so a
        # kernel on any other stream would read the zeros.
        torch.cuda._sleep(100_000_000)
        a.fill_(2.0)
        dlspan.add(a, b, out=out)
        dlspan.scale_(out, 2.0)
        pending = not s.query()
        total = dlspan.sum(out)  # waits for s only, after the fill and the add
    assert pending, "the work was queued on the side stream, not run before returning"
    assert total == 6.0 * n
    s.synchronize()
    assert torch.equal(out, torch.full((n,), 6.0, device="cuda"))
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)
        a.fill_(5.0)
        c = dlspan.cast(a, torch.float16)
    s.synchronize()
    assert torch.equal(c, torch.full((n,), 5.0, dtype=torch.float16, device="cuda"))


def test_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            no_cuda_device()
    except Exception:
        no_cuda_device()
    rng = cupy.random.default_rng(5)
    a = rng.standard_normal((40, 30), dtype=cupy.float32)
    b = rng.standard_normal((40, 30), dtype=cupy.float32)
    # The inputs are made on CuPy's default stream, which a non-blocking stream does not wait for:
    # as for CuPy's own operations on `s`, ordering them is the caller's part (seen on an H200:
    # without this, the add read half-made inputs once its module was loaded already).
    cupy.cuda.get_current_stream().synchronize()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        out = cupy.zeros((40, 30), cupy.float32)
        dlspan.add(a.T, b.T, out=out.T)
        total = dlspan.sum(a[::2])
    s.synchronize()
    cupy.testing.assert_array_equal(out, a + b)
    assert abs(total - float(a[::2].astype(cupy.float64).sum())) <= 1e-4 * float(cupy.abs(a[::2]).sum())
    prod = cupy.zeros((40, 30), cupy.float32)
    wide = cupy.zeros((40, 60), cupy.float32)
    wide[:, ::2] = b
    cupy.cuda.get_current_stream().synchronize()
    dlspan.mul(a, wide[:, ::2], out=prod)  # every other column: a stride of 2
    # CuPy 14 exports a negative stride as an unsigned number (-1 element as 2^62 - 1 for
    # float32: its byte stride divided as unsigned): a producer that lies about its layout,
    # refused before any memory is read, the producer's mistake named.
    with pytest.raises(BufferError, match="cupy.ascontiguousarray") as info:
        dlspan.mul(a, b[:, ::-1], out=prod)
    assert info.value.kind == "UnsignedStride" and "while processing 'b'" in str(info.value.__notes__)
    c = cupy.zeros((30, 40), cupy.float16)
    dlspan.cast(a.T, out=c)
    x = a.copy()
    dlspan.scale_(x[:, 1::2], -1)
    d = cupy.zeros((30, 40), cupy.float32)
    dlspan.copy(a.T, d)
    cupy.cuda.get_current_stream().synchronize()
    cupy.testing.assert_array_equal(prod, a * b)
    cupy.testing.assert_array_equal(c, a.T.astype(cupy.float16))
    expected = a.copy()
    expected[:, 1::2] *= -1
    cupy.testing.assert_array_equal(x, expected)
    cupy.testing.assert_array_equal(d, a.T)


def test_jax_gpu_arrays_are_read_only_inputs(torch_cuda):
    torch = torch_cuda
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        pytest.skip("skipped: this jaxlib has no GPU backend")
    x = jax.device_put(jax.numpy.arange(12, dtype=jax.numpy.float32).reshape(3, 4), gpus[0])
    y = jax.device_put(jax.numpy.ones((3, 4), jax.numpy.float32), gpus[0])
    x.block_until_ready()
    y.block_until_ready()
    assert dlspan.sum(x) == 66.0
    if gpus[0].id == torch.cuda.current_device():
        out = torch.zeros(3, 4, device="cuda")
        dlspan.add(x, y, out=out)
        torch.cuda.synchronize()
        assert torch.equal(out, torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4) + 1)
    with pytest.raises(ValueError) as info:
        dlspan.scale_(x, 2.0)
    assert info.value.kind == "ReadOnly"
    with pytest.raises(ValueError) as info:
        dlspan.copy(y, x)
    assert info.value.kind == "ReadOnly" and "while processing 'out'" in note(info.value)
