"""Results are first-class: in the caller's framework (rule Y19: `Output`, `dlspan.add`/`mul` without
`out`, `like=`), zero-copy, and `dlspan.Tensor` readable as Python reads arrays (rule Y20: `repr`
with values, `tolist`, pickling by copy, NumPy's `__array__`)."""

import ctypes
import pickle
import re

import numpy as np
import pytest
from conftest import ManagedVersioned, Returns

import dlspan
import dlspan.diagnostics
import dlspan_test_extension as ext


def _address(result):
    if isinstance(result, np.ndarray):
        return result.__array_interface__["data"][0]
    if type(result).__module__.startswith("torch"):
        return result.data_ptr()
    if type(result).__module__.startswith("jax"):
        return result.unsafe_buffer_pointer()
    return np.from_dlpack(result).__array_interface__["data"][0]


# --- Y19: results in the caller's framework ---------------------------------------------------


def test_numpy_inputs_give_numpy_arrays_zero_copy():
    x = np.arange(4.0)
    r, address = ext.double(x)
    assert type(r) is np.ndarray and r.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert _address(r) == address, "the array is the memory the extension wrote"
    assert r.flags.writeable
    r[0] = 9.0  # NumPy owns a view of it now; writing is fine
    r = dlspan.add(x, x)
    assert type(r) is np.ndarray and r.dtype == np.float64 and r.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert not np.shares_memory(r, x)


def test_pytorch_inputs_give_pytorch_tensors_from_its_allocator(torch):
    x = torch.arange(4, dtype=torch.float64)
    r, address = ext.double(x)
    assert type(r) is torch.Tensor and r.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert r.data_ptr() == address and r.device.type == "cpu" and not r.requires_grad
    r += 1  # an ordinary PyTorch tensor
    assert r.tolist() == [1.0, 3.0, 5.0, 7.0]
    for op, expected in ((dlspan.add, [0, 2, 4, 6]), (dlspan.mul, [0, 1, 4, 9])):
        out = op(x.float(), x.float())
        assert type(out) is torch.Tensor and out.dtype == torch.float32 and out.tolist() == expected
    bf16 = torch.tensor([1.5, 2.0], dtype=torch.bfloat16)
    assert dlspan.add(bf16, bf16).dtype == torch.bfloat16
    # The shape follows the input, strides are row-major.
    m = torch.arange(6, dtype=torch.int32).reshape(2, 3).T
    out = dlspan.add(m, m)
    assert out.shape == (3, 2) and out.is_contiguous() and out.tolist() == (2 * m).tolist()


def test_jax_inputs_give_jax_arrays_zero_copy(jnp):
    x = jnp.arange(4, dtype=jnp.float64)
    r, address = ext.double(x)
    assert type(r).__module__.startswith("jax") and r.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert r.unsafe_buffer_pointer() == address, "JAX took dlspan's 64-byte aligned buffer as it is"
    out = dlspan.mul(x, x)
    assert type(out) is type(x) and out.tolist() == [0.0, 1.0, 4.0, 9.0]


def test_other_inputs_give_dlspan_tensors():
    t = dlspan.arange(3, "float64")
    r, address = ext.double(t)
    assert type(r) is dlspan.Tensor and _address(r) == address
    capsule_holder = Returns(np.arange(3.0).__dlpack__(), device=(1, 0))
    out = dlspan.add(capsule_holder, t)
    assert type(out) is dlspan.Tensor and out.tolist() == [0.0, 2.0, 4.0]


def test_a_dtype_the_framework_cannot_hold_gives_a_dlspan_tensor(torch, jnp):
    assert type(dlspan.zeros(3, "int128", like=np.zeros(1))) is dlspan.Tensor
    assert type(dlspan.zeros(3, "float8_e3m4", like=torch.zeros(1))) is dlspan.Tensor
    assert type(dlspan.zeros(3, "float4_e2m1fn", like=jnp.zeros(1))) is dlspan.Tensor
    assert type(dlspan.zeros(3, "complex32", like=torch.zeros(1))) is torch.Tensor
    # NumPy holds ml_dtypes types once NumPy knows their names.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    out = dlspan.arange(3, "bfloat16", like=np.zeros(1))
    assert type(out) is np.ndarray and out.dtype == ml_dtypes.bfloat16 and out.tolist() == [0.0, 1.0, 2.0]


def test_ml_dtypes_arrays_are_read_back(torch):
    # dlspan hands NumPy callers ml_dtypes arrays (bfloat16, FP8): it reads them back too, though
    # NumPy's own __dlpack__ refuses them.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = dlspan.arange(3, "bfloat16", like=np.zeros(1))
    b = np.asarray(dlspan.arange(3, "bfloat16"))
    assert dlspan.sum(b) == 3.0
    out = dlspan.add(a, b)
    assert type(out) is np.ndarray and out.dtype == ml_dtypes.bfloat16 and out.tolist() == [0.0, 2.0, 4.0]
    t = dlspan.from_dlpack(b[::-1])
    assert t.dtype == "bfloat16" and t.tolist() == [2.0, 1.0, 0.0]
    assert dlspan.from_dlpack(b, device=(1, 1)).tolist() == [0.0, 1.0, 2.0], "host memory by any id"
    dlspan.scale_(b, 2.0)  # written in place, zero-copy
    assert b.tolist() == [0.0, 2.0, 4.0]
    fp8 = np.array([1.0, -0.5, 448.0], dtype=ml_dtypes.float8_e4m3fn)
    assert dlspan.from_dlpack(fp8).dtype == "float8_e4m3fn" and dlspan.sum(fp8) == 448.5
    # Copied as they are shared (CuPy's test_conversion_bfloat16 asks for the copy).
    for source in (b, b[::-1], fp8):
        copy = dlspan.from_dlpack(source, copy=True)
        assert copy.dtype == str(source.dtype) and copy.tolist() == source.tolist()
        assert not np.shares_memory(np.asarray(copy), source) and not copy.readonly
    assert torch.equal(torch.from_dlpack(dlspan.from_dlpack(a)), torch.arange(3, dtype=torch.bfloat16))
    # ml_dtypes' sub-byte types take a byte per value, which a plain DLPack tensor cannot say.
    with pytest.raises(BufferError):
        dlspan.from_dlpack(np.zeros(2, dtype=ml_dtypes.float4_e2m1fn))


def test_like_and_out_keep_their_meaning(torch, jnp):
    x = np.arange(4, dtype=np.float32)
    for like, kind in ((x, np.ndarray), (torch.zeros(1), torch.Tensor), (jnp.zeros(1), type(jnp.zeros(1)))):
        assert type(dlspan.arange(4, "float32", like=like)) is kind
        z = dlspan.zeros((2, 3), "int16", like=like)
        assert type(z) is kind and tuple(z.shape) == (2, 3)
        assert np.asarray(z).tolist() == [[0, 0, 0], [0, 0, 0]]
    assert dlspan.arange(3, like=torch.zeros(1)).tolist() == [0, 1, 2]
    with pytest.raises(ValueError):
        dlspan.zeros((-1,), like=x)
    # `out` given: written, nothing returned (positional or keyword).
    out = np.zeros(4, np.float32)
    assert dlspan.add(x, x, out) is None and out.tolist() == [0, 2, 4, 6]
    assert dlspan.mul(x, x, out=out) is None and out.tolist() == [0, 1, 4, 9]
    assert type(dlspan.arange(2)) is dlspan.Tensor and type(dlspan.zeros(2)) is dlspan.Tensor


def test_outputs_release_their_memory(torch):
    import gc
    import weakref

    x = np.arange(1000.0)
    r, _ = ext.double(x)
    base = r.base  # what keeps dlspan's buffer alive
    ref = weakref.ref(base) if base is not None and type(base).__weakrefoffset__ else None
    del r, base
    gc.collect()
    assert ref is None or ref() is None
    assert dlspan.diagnostics.live_borrows() == 0


# --- Y20: a Tensor readable as Python reads arrays ----------------------------------------------


def _tensor(a):
    return dlspan.from_dlpack(a)


def _numpy_repr(a):
    """NumPy's repr of `a` as dlspan writes it: `Tensor(` for `array(` (one column more of indent)."""
    return repr(a).replace("array(", "Tensor(").replace("\n      ", "\n       ")


def _without_dtype(text):
    # NumPy leaves out the dtype of float64, int64 and bool arrays; dlspan always gives it.
    return re.sub(r",\s*dtype=\w+\)$", ")", text)


def test_repr_shows_values_as_numpy_does():
    assert repr(dlspan.zeros((2, 3))) == "Tensor([[0., 0., 0.],\n        [0., 0., 0.]], dtype=float32)"
    assert repr(dlspan.arange(4, "int8")) == "Tensor([0, 1, 2, 3], dtype=int8)"
    cases = [
        np.array([[0.1, 1, 2.5], [np.nan, -np.inf, 3]], np.float32),
        np.array([1 + 2j, 3j, -1.5 - 0.25j]),
        np.array([-1e-5, 1.0, np.nan]),
        np.array([True, False]),
        np.array([0.1, 1 / 3], np.float16),
        np.arange(24.0).reshape(2, 3, 4),
        np.arange(200).reshape(4, 50),
        np.arange(12.0).reshape(3, 4)[::-1, ::2],
        np.array(2.5),
        np.array([2**64 - 1, 0], np.uint64),
        np.zeros((0, 3), np.float32),
    ]
    for a in cases:
        assert _without_dtype(repr(_tensor(a))) == _without_dtype(_numpy_repr(a)), a


def test_repr_summarises_large_tensors():
    cases = [
        np.arange(2000.0),
        np.arange(10_000, dtype=np.int32),
        np.arange(1_000_000.0).reshape(1000, 1000),
        np.arange(8000, dtype=np.int16).reshape(20, 20, 20),
    ]
    for a in cases:
        ours = repr(_tensor(a))
        assert "..." in ours and f"shape={a.shape}" in ours
        assert _without_dtype(ours) == _without_dtype(_numpy_repr(a)), a
    assert repr(dlspan.zeros((0, 3))) == "Tensor([], shape=(0, 3), dtype=float32)"


def test_repr_of_narrow_floats_uses_their_own_precision():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.array([0.1, 1.5, 3.0], dtype=ml_dtypes.bfloat16)
    assert repr(dlspan.Tensor._from_bytes(a.tobytes(), "bfloat16", (3,))) == "Tensor([0.1, 1.5, 3. ], dtype=bfloat16)"
    fp4 = dlspan.Tensor._from_bytes(bytes([0x21, 0xF3]), "float4_e2m1fn", (4,))
    assert repr(fp4) == "Tensor([ 0.5,  1. ,  1.5, -6. ], dtype=float4_e2m1fn)"
    assert repr(dlspan.zeros(2, "float4_e2m1fn_x2")) == "Tensor(shape=(2,), dtype=float4_e2m1fn_x2)"


def _relabelled(x, device):
    """A tensor of `x`'s memory whose producer says it lives on `device`."""
    capsule = x.__dlpack__(max_version=(1, 3))
    pointer = ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    managed = ManagedVersioned.from_address(pointer)
    managed.dl_tensor.device_type, managed.dl_tensor.device_id = device
    return dlspan.from_dlpack(Returns(capsule, device=device))


def test_memory_the_host_cannot_read_is_not_read():
    x = dlspan.arange(4, "float64")
    pinned = _relabelled(x, (3, 0))  # CUDA pinned memory: read only after the device (rule Y16)
    assert repr(pinned) == "Tensor(shape=(4,), dtype=float64, device=cuda_host:0)"
    for attempt in (pinned.tolist, lambda: pickle.dumps(pinned)):
        with pytest.raises(BufferError) as err:
            attempt()
        assert err.value.kind == "HostAccessUnordered"


def test_reads_respect_mutable_views():
    x = dlspan.arange(4, "float64")
    seen = []
    ext.fill_during(x, 1.0, lambda: seen.append(repr(x)))
    assert seen == ["Tensor(shape=(4,), dtype=float64)"], "no values while a mutable view is alive"
    with pytest.raises(ValueError) as err:
        ext.fill_during(x, 1.0, x.tolist)
    assert err.value.kind == "BorrowConflict"
    assert x.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_copies_respect_mutable_views():
    """Every copy of a tensor reads under a shared borrow, as `tolist` does: a mutable view alive
    meanwhile (here on this thread's stack; on another thread, with the GIL released, the copy
    read values half written) refuses it."""
    x = dlspan.arange(4, "float64")
    a = np.arange(4.0)
    copies = {
        "__array__(copy=True)": lambda: x.__array__(copy=True),
        "__array__(dtype=float32)": lambda: x.__array__(dtype=np.float32),
        "__dlpack__(copy=True)": lambda: x.__dlpack__(copy=True),
        "np.from_dlpack(x, copy=True)": lambda: np.from_dlpack(x, copy=True),
        "dlspan.from_dlpack(x, copy=True)": lambda: dlspan.from_dlpack(x, copy=True),
    }
    for name, copy in copies.items():
        with pytest.raises(ValueError) as err:
            ext.fill_during(x, 1.0, copy)
        assert err.value.kind == "BorrowConflict", name
    with pytest.raises(ValueError) as err:
        ext.fill_during(a, 1.0, lambda: dlspan.from_dlpack(a, copy=True))
    assert err.value.kind == "BorrowConflict"
    assert np.asarray(x.__array__(copy=True)).tolist() == [0.0, 1.0, 2.0, 3.0], "nothing was written"
    assert dlspan.from_dlpack(a, copy=True).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_tolist():
    assert dlspan.arange(3).tolist() == [0, 1, 2]
    assert _tensor(np.arange(6.0).reshape(2, 3)[:, ::-1]).tolist() == [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]
    assert _tensor(np.array(2.5)).tolist() == 2.5
    assert _tensor(np.array([True, False])).tolist() == [True, False]
    assert type(_tensor(np.array([True])).tolist()[0]) is bool
    assert _tensor(np.array([1 + 2j])).tolist() == [1 + 2j]
    assert _tensor(np.array([2**64 - 1], np.uint64)).tolist() == [2**64 - 1]
    assert dlspan.zeros((2, 0)).tolist() == [[], []]
    broadcast = _tensor(np.broadcast_to(np.arange(3.0), (2, 3)))
    assert broadcast.tolist() == [[0.0, 1.0, 2.0]] * 2
    with pytest.raises(TypeError):
        dlspan.zeros(2, "float4_e2m1fn_x2").tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda: dlspan.arange(6, "float32"),
        lambda: _tensor(np.arange(12.0).reshape(3, 4)[::-1, ::2]),
        lambda: _tensor(np.broadcast_to(np.arange(3, dtype=np.int16), (4, 3))),
        lambda: _tensor(np.array([True, False, True])),
        lambda: _tensor(np.array(7, np.uint8)),
        lambda: dlspan.zeros((2, 0, 3), "complex64"),
        lambda: dlspan.Tensor._from_bytes(np.arange(4.0).tobytes(), "float64", (2, 2), True),
        lambda: dlspan.Tensor._from_bytes(bytes([0x21, 0xF3, 0x05]), "float4_e2m1fn", (5,)),
        lambda: dlspan.Tensor._from_bytes(bytes([1, 2, 3]), "float4_e2m1fn", (3,), False, True),
        lambda: dlspan.zeros(3, "bfloat16"),
    ],
    ids=["float32", "strided", "broadcast", "bool", "0-d", "empty", "read-only", "packed-fp4", "padded-fp4", "bf16"],
)
def test_pickling_copies(make):
    t = make()
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(t, protocol))
        assert type(back) is dlspan.Tensor
        assert (back.shape, back.dtype, back.readonly) == (t.shape, t.dtype, t.readonly)
        assert back.tolist() == t.tolist()
        assert back.strides == tuple(int(np.prod([max(e, 1) for e in t.shape[i + 1 :]])) for i in range(len(t.shape)))
    if t.size and not t.readonly and t.dtype == "float32":
        back = pickle.loads(pickle.dumps(t))
        dlspan.scale_(back, 2.0)
        assert back.tolist() != t.tolist(), "a copy"


def test_unpickling_checks_the_bytes():
    with pytest.raises(ValueError):
        dlspan.Tensor._from_bytes(b"\0" * 7, "float64", (1,))
    with pytest.raises(TypeError):
        dlspan.Tensor._from_bytes(b"", "float33", (0,))


def test_numpy_array_protocol():
    t = dlspan.arange(4, "float32")
    a = np.asarray(t)
    assert a.dtype == np.float32 and np.shares_memory(a, np.asarray(t))
    direct = t.__array__()
    assert type(direct) is np.ndarray and direct.tolist() == [0, 1, 2, 3]
    direct[0] = 5.0
    assert t.tolist()[0] == 5.0, "shares the memory"
    copy = t.__array__(copy=True)
    copy[1] = 9.0
    assert t.tolist()[1] == 1.0
    assert t.__array__(dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError):
        t.__array__(dtype=np.float64, copy=False)
    assert np.array(t, dtype=np.int64).tolist() == [5, 1, 2, 3]
    read_only = dlspan.Tensor._from_bytes(np.arange(2.0).tobytes(), "float64", (2,), True)
    assert not read_only.__array__().flags.writeable
    with pytest.raises(TypeError):
        dlspan.zeros(4, "float4_e2m1fn").__array__()


def test_numpy_array_protocol_for_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = dlspan.from_dlpack(np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16).view(np.uint16))
    bf16 = dlspan.Tensor._from_bytes(np.asarray(t).tobytes(), "bfloat16", (2,))
    a = np.asarray(bf16)  # no buffer format: NumPy calls __array__
    assert a.dtype == ml_dtypes.bfloat16 and a.tolist() == [1.5, -2.0]
    fp8 = dlspan.Tensor._from_bytes(np.array([1.0], ml_dtypes.float8_e4m3fn).tobytes(), "float8_e4m3fn", (1,))
    assert np.asarray(fp8).dtype == ml_dtypes.float8_e4m3fn


@pytest.mark.parametrize(
    "dtype, count",
    [((2, 32, 3), 2), ((0, 4, 1), 5), ((1, 1, 1), 9), ((1, 8, 4), 2), ((1, 24, 1), 2), ((2, 8, 1), 3), ((3, 64, 1), 2)],
    ids=["float32x3", "int4", "uint1", "uint8x4", "uint24", "float8-code2", "opaque_handle64"],
)
def test_pickling_keeps_data_types_without_a_name(dtype, count):
    """A Tensor of a data type no name describes (lanes, odd widths, opaque handles) pickles as
    DLPack's (code, bits, lanes) and comes back whole."""
    code, bits, lanes = dtype
    data = bytes(range(1, (count * bits * lanes + 7) // 8 + 1))
    t = dlspan.Tensor._from_bytes(data, dtype, (count,))
    back = pickle.loads(pickle.dumps(t))
    assert (back.shape, back.dtype) == (t.shape, t.dtype)
    assert pickle.dumps(back) == pickle.dumps(t), "the same bytes, data type and shape"
