"""`dlspan.sum` is NumPy's pairwise summation in the dtype's accumulator, checked against an exact
reference (`math.fsum` of the values, each exact in float64); integers wrap as NumPy's do; packed
FP4 and FP6 data (JAX's exports, dlspan's own tensors) works in `sum`, `add`, `mul` and `scale_`.
Timings are in the benchmark (`scripts/bench_python.sh`), not here."""

import ctypes
import math

import numpy as np
import pytest
from conftest import capsule_info

import dlspan

ml_dtypes = pytest.importorskip("ml_dtypes")


def exact(values):
    """The exact sum, correctly rounded to float64 (`fsum`); complex values part by part."""
    values = np.asarray(values).ravel()
    if np.iscomplexobj(values):
        return complex(math.fsum(values.real.astype(np.float64)), math.fsum(values.imag.astype(np.float64)))
    return math.fsum(values.astype(np.float64).tolist())


def error(total, values):
    return abs(complex(total) - exact(values))


def test_a_million_float32_values():
    x = np.arange(10**6, dtype=np.float32)
    # A sequential sum gives 499940360192; NumPy's pairwise sum 499999506432, the exact sum being
    # 499999500000.
    assert dlspan.sum(x) == float(np.sum(x)) == 499_999_506_432.0
    assert error(dlspan.sum(x), x) <= error(np.sum(x), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_one_axis_sums_are_numpys_bit_for_bit(dtype, layout):
    """The same algorithm as NumPy's: on one axis of positive stride, the same rounding, hence the
    same error. (A reversed axis is summed in memory order, forwards, where NumPy goes backwards.)"""
    rng = np.random.default_rng(7)
    base = (rng.standard_normal(300_007) * np.exp(rng.uniform(-8, 8, 300_007))).astype(dtype)
    x = {"contiguous": base, "strided": base[::3]}[layout]
    assert dlspan.sum(x) == float(np.sum(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_layout_is_pairwise(dtype, torch):
    """Sums of many values whose running total grows: a sequential sum loses digits on every
    layout, a pairwise one (runs halved, their sums combined pairwise) keeps them."""
    data = np.arange(2 * 10**6, dtype=dtype)
    eps = np.finfo(dtype).eps
    views = {
        "2-d": data.reshape(1000, 2000),
        "columns": data.reshape(1000, 2000).T,
        "padded rows": data.reshape(1000, 2000)[:, :1500],
        "reversed rows": data.reshape(1000, 2000)[::-1],
        "every other": data[::2],
        "narrow rows": data.reshape(250_000, 8)[:, :3],
        "torch transposed": torch.from_numpy(data).reshape(1000, 2000).T,
    }
    for name, x in views.items():
        values = np.asarray(x)
        bound = 40 * eps * exact(np.abs(values))  # (16 + log2 n + log2 runs) ε Σ|x|, generously
        assert error(dlspan.sum(x), values) <= bound, name
        assert error(dlspan.sum(x), values) <= max(error(np.sum(values), values), bound), name


def test_float16_within_numpys_error():
    rng = np.random.default_rng(3)
    for n in (7, 100, 100_003):
        x = rng.uniform(0, 0.5, n).astype(np.float16)  # a total float16 holds
        # NumPy sums float16 in float32 pairwise too, then rounds the total to float16: dlspan
        # returns the float32 total.
        assert error(dlspan.sum(x), x) <= error(np.sum(x), x), n
        assert error(dlspan.sum(x[::2]), x[::2]) <= error(np.sum(x[::2]), x[::2]), n


def test_bfloat16_within_its_peers_error(torch):
    rng = np.random.default_rng(5)
    values = rng.uniform(0, 10, 100_003).astype(np.float32)
    x = torch.from_numpy(values).to(torch.bfloat16)
    reference = x.float().numpy()  # the bfloat16 values, exactly
    ours = error(dlspan.sum(x), reference)
    assert ours <= error(torch.sum(x).item(), reference)
    # ml_dtypes' NumPy bfloat16 adds sequentially in bfloat16.
    assert ours <= error(float(np.sum(reference.astype(ml_dtypes.bfloat16))), reference)
    assert ours <= 40 * 2.0**-24 * exact(reference), "float32 accumulation, pairwise"


def test_complex_sums(torch):
    rng = np.random.default_rng(11)
    z = (rng.standard_normal(50_001) + 1j * rng.standard_normal(50_001)).astype(np.complex64)
    total = dlspan.sum(z)
    assert isinstance(total, complex)
    assert error(total, z) <= 40 * 2.0**-24 * exact(np.abs(z.real) + np.abs(z.imag))
    assert dlspan.sum(torch.from_numpy(z)) == total


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
)
def test_integers_wrap_as_numpys(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(int(info.bits))
    x = rng.integers(info.min, info.max, 10_007, dtype=dtype, endpoint=True)
    # NumPy sums smaller integers in 64 bits and wraps on overflow; so does dlspan.
    for view in (x, x[::3], x[::-1], x[:10_000].reshape(100, 100).T):
        total = dlspan.sum(view)
        assert isinstance(total, int)
        assert total == int(np.sum(view)), view.strides
    top = np.full(4, info.max, dtype)
    assert dlspan.sum(top) == int(np.sum(top))


def test_bool_counts():
    x = np.zeros(1000, bool)
    x[::7] = True
    assert dlspan.sum(x) == int(np.sum(x)) == 143


def unpack(t):
    """The values of a packed FP4 or FP6 `dlspan.Tensor` (read from its capsule's memory, low bits
    first), decoded by ml_dtypes."""
    info = capsule_info(t.__dlpack__(max_version=(1, 3)))
    bits = info["dtype"][1]
    count = math.prod(info["shape"])
    raw = ctypes.string_at(info["data"] + info["byte_offset"], (count * bits + 7) // 8)
    word = int.from_bytes(raw, "little")
    codes = np.array([(word >> (k * bits)) & ((1 << bits) - 1) for k in range(count)], np.uint8)
    return codes.view(getattr(ml_dtypes, t.dtype)).astype(np.float32)


def rounded(values, dtype):
    """`values` (float32) rounded into `dtype`, as floats."""
    return np.asarray(values, np.float32).astype(getattr(ml_dtypes, dtype)).astype(np.float32)


def test_packed_fp4_from_jax(jnp):
    values = np.array([0.5, 1, 6, -2, 3, 0, -0.5, 4, 1.5], np.float32)
    x = jnp.array(values, dtype=jnp.float4_e2m1fn)  # exported packed, two values a byte
    assert dlspan.from_dlpack(x).dtype == "float4_e2m1fn"
    assert dlspan.sum(x) == float(values.sum())
    out = dlspan.zeros(len(values), "float4_e2m1fn")
    dlspan.add(x, x, out)
    np.testing.assert_array_equal(unpack(out), rounded(values + values, "float4_e2m1fn"))
    product = dlspan.zeros(len(values), "float4_e2m1fn")
    dlspan.mul(x, out, product)
    expected = rounded(values * unpack(out), "float4_e2m1fn")
    np.testing.assert_array_equal(unpack(product), expected)
    dlspan.scale_(product, 0.5)
    np.testing.assert_array_equal(unpack(product), rounded(expected * 0.5, "float4_e2m1fn"))
    assert dlspan.sum(product) == float(unpack(product).sum())


@pytest.mark.parametrize("dtype", ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"])
def test_packed_dlspan_tensors(dtype):
    n = 37  # FP6 values straddle bytes; an odd count leaves a partly used last byte
    x = dlspan.arange(n, dtype)
    values = rounded(np.arange(n), dtype)
    np.testing.assert_array_equal(unpack(x), values)
    assert dlspan.sum(x) == float(values.sum())
    out = dlspan.zeros(n, dtype)
    dlspan.add(x, x, out)
    np.testing.assert_array_equal(unpack(out), rounded(values + values, dtype))
    dlspan.mul(x, x, out)
    np.testing.assert_array_equal(unpack(out), rounded(values * values, dtype))
    # alpha is rounded into the dtype first (as NumPy's weak scalars are): 0.5 is exact in each.
    dlspan.scale_(out, 0.5)
    np.testing.assert_array_equal(unpack(out), rounded(rounded(values * values, dtype) * 0.5, dtype))
    with pytest.raises(ValueError) as err:
        dlspan.add(x, dlspan.zeros(n - 1, dtype), out)
    assert (err.value.kind, err.value.__notes__) == ("ShapeMismatch", ["while processing 'b'"])
    with pytest.raises(ValueError) as err:
        dlspan.add(x, x, x)
    assert err.value.kind == "BorrowConflict"


def test_packed_arguments_of_another_rank_are_refused():
    x = dlspan.arange(4, "float4_e2m1fn")
    for a, b, out, argument in (
        (x, x, dlspan.zeros((2, 2), "float4_e2m1fn"), "out"),
        (x, dlspan.zeros((2, 2), "float4_e2m1fn"), dlspan.zeros(4, "float4_e2m1fn"), "b"),
    ):
        with pytest.raises(TypeError) as err:
            dlspan.add(a, b, out)
        assert (err.value.kind, err.value.__notes__) == ("RankMismatch", [f"while processing '{argument}'"])
