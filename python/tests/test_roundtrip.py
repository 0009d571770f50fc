"""Round trips both ways for every dtype each framework supports, every layout, writes visible on
both sides."""

import ctypes

import numpy as np
import pytest
from conftest import capsule_info

import dlspan

NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "float32", "float64", "complex64", "complex128"]


def sample_numpy(name, shape=(3, 4)):
    values = np.arange(np.prod(shape)).reshape(shape)
    return (values % 2 == 1) if name == "bool" else (values + 1).astype(name)


@pytest.mark.parametrize("name", NUMPY_DTYPES)
def test_numpy_both_ways(name):
    a = sample_numpy(name)
    t = dlspan.from_dlpack(a)
    assert (t.dtype, t.shape) == (name, a.shape)
    back = np.from_dlpack(t)
    assert back.dtype == a.dtype and back.ctypes.data == a.ctypes.data, "zero-copy both ways"
    back[2, 3] = back[0, 0]
    assert a[2, 3] == a[0, 0], "a write through the round trip lands in the source"
    c = dlspan.zeros(a.shape, name)
    d = np.from_dlpack(c)
    d[...] = a
    np.testing.assert_array_equal(np.asarray(c), a)


TORCH_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
                "bfloat16", "float32", "float64", "complex32", "complex64", "complex128", "float8_e4m3fn",
                "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2"]


def sample_torch(torch, name):
    dtype = getattr(torch, name)
    if name == "float4_e2m1fn_x2":
        return torch.arange(12, dtype=torch.uint8).view(dtype).reshape(3, 4)
    if name in ("complex32",):
        return (torch.arange(12.0) + 1j).to(dtype).reshape(3, 4)
    if name.startswith("uint") and name != "uint8":
        return torch.arange(12, dtype=torch.int64).to(dtype).reshape(3, 4)
    return (torch.arange(12) % 7).to(dtype).reshape(3, 4)


def raw_bytes(torch, x):
    return x.contiguous().view(torch.uint8).reshape(-1).tolist() if x.dtype.itemsize else []


@pytest.mark.parametrize("name", TORCH_DTYPES)
def test_torch_both_ways(torch, name):
    x = sample_torch(torch, name)
    t = dlspan.from_dlpack(x)
    assert (t.dtype, t.shape, t.strides) == (name, tuple(x.shape), tuple(x.stride()))
    y = torch.from_dlpack(t)
    assert y.dtype == x.dtype and y.data_ptr() == x.data_ptr()
    assert raw_bytes(torch, y) == raw_bytes(torch, x)
    # A write on either side shows on the other (bytes: every dtype has them).
    y.view(torch.uint8).reshape(-1)[0] = 1
    assert x.view(torch.uint8).reshape(-1)[0] == 1
    z = torch.from_dlpack(dlspan.zeros(tuple(x.shape), x.dtype))
    assert z.dtype == x.dtype and raw_bytes(torch, z) == [0] * len(raw_bytes(torch, x))


JAX_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "bfloat16", "float32", "float64", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2",
              "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu", "float8_e3m4",
              "float8_e4m3"]


def dlspan_bytes(t):
    """A contiguous dlspan tensor's bytes, read through its capsule (sub-byte data has no buffer format)."""
    info = capsule_info(t.__dlpack__(max_version=(1, 3)))
    return list(ctypes.string_at(info["data"] + info["byte_offset"], t.nbytes))


def jax_bytes(j):
    return np.asarray(j).reshape(-1).view(np.uint8).tolist()


@pytest.mark.parametrize("name", JAX_DTYPES)
def test_jax_both_ways(jnp, name):
    j = (jnp.arange(12) % 5 + 1).astype(name).reshape(3, 4)
    t = dlspan.from_dlpack(j)
    assert (t.dtype, t.shape, t.readonly) == (name, (3, 4), True)
    assert dlspan_bytes(t) == jax_bytes(j), "the same bytes, read in place"
    back = jnp.from_dlpack(dlspan.from_dlpack(j, copy=True))
    assert back.dtype == j.dtype and jax_bytes(back) == jax_bytes(j), "bit for bit (NaN payloads too)"
    z = dlspan.zeros((3, 4), name)
    jz = jnp.from_dlpack(z)
    assert jz.dtype.name == name and jz.shape == (3, 4)
    assert jax_bytes(jz) == [0] * (12 * jz.dtype.itemsize)


def test_jax_float4_one_way(jnp):
    """Recorded JAX behaviour: it exports FP4 packed two to a byte (low nibble first) in a legacy
    capsule, and imports no FP4 tensor, not even its own."""
    j = jnp.asarray([0.0, 1.0, 2.0, 3.0, 4.0, 6.0], dtype=jnp.float4_e2m1fn)
    t = dlspan.from_dlpack(j)
    assert (t.dtype, t.shape, t.nbytes) == ("float4_e2m1fn", (6,), 3)
    assert dlspan_bytes(t) == [0b0010_0000, 0b0101_0100, 0b0111_0110]
    with pytest.raises(Exception, match="UNIMPLEMENTED"):
        jnp.from_dlpack(j)


LAYOUTS = {
    "non-contiguous": lambda a: a[:, ::2],
    "transposed": lambda a: a.T,
    "negative": lambda a: a[::-1, ::-1],
    "zero-stride": lambda a: np.broadcast_to(a[:1], a.shape),
    "0-d": lambda a: a[1, 2],
    "zero-size": lambda a: a[:, 2:2],
    "offset": lambda a: a[1:, 1:],
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_numpy_layouts(layout):
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    a = LAYOUTS[layout](base)
    a = np.asarray(a) if np.ndim(a) == 0 and not isinstance(a, np.ndarray) else a
    if not isinstance(a, np.ndarray):
        a = base[1:2, 2:3].reshape(())
    t = dlspan.from_dlpack(a)
    assert t.shape == a.shape
    np.testing.assert_array_equal(np.asarray(t), a)
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a)
    if a.size:
        assert back.__array_interface__["data"][0] == a.__array_interface__["data"][0], "the same memory"
    assert dlspan.sum(a) == a.sum()
    assert dlspan.sum(t) == a.sum()


TORCH_LAYOUTS = {
    "non-contiguous": lambda x: x[:, ::2],
    "transposed": lambda x: x.t(),
    "zero-stride": lambda x: x[:1].expand(4, 6),
    "0-d": lambda x: x[1, 2],
    "zero-size": lambda x: x[:, 2:2],
    "offset": lambda x: x[1:, 1:],
}


@pytest.mark.parametrize("layout", TORCH_LAYOUTS)
def test_torch_layouts(torch, layout):
    x = TORCH_LAYOUTS[layout](torch.arange(24, dtype=torch.int32).reshape(4, 6))
    t = dlspan.from_dlpack(x)
    assert (t.shape, t.strides) == (tuple(x.shape), tuple(x.stride()))
    np.testing.assert_array_equal(np.asarray(t), x.numpy())
    y = torch.from_dlpack(t)
    assert torch.equal(y, x)
    assert dlspan.sum(x) == int(x.sum())


def test_negative_strides_to_torch_are_refused_by_torch(torch):
    """Recorded PyTorch behaviour: it rejects negative strides on import."""
    t = dlspan.from_dlpack(np.arange(4.0)[::-1])
    with pytest.raises(RuntimeError):
        torch.from_dlpack(t)
    np.testing.assert_array_equal(np.from_dlpack(t), [3.0, 2.0, 1.0, 0.0])


def test_writes_through_views_both_ways(torch):
    a = np.zeros((3, 4), np.float32)
    x = torch.from_dlpack(dlspan.from_dlpack(a[:, 1::2]))
    x.fill_(2.0)
    assert a.sum() == 12.0 and a[:, 0].sum() == 0.0
    dlspan.scale_(a[:, 1::2], 0.5)
    assert torch.all(x == 1.0)
