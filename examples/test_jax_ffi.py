"""JAX kernels in Rust (examples/jax-ffi, package `my_jax_kernels`), built by scripts/python.sh with
`maturin develop`: element-wise kernels that are XLA FFI handlers, against real JAX — values against
the `jnp` expression, inside `jax.jit`, under `vmap` (in_axes on each argument), `grad`, `jvp`,
`jax.test_util.check_grads` and `lax.scan`, every float dtype JAX has, errors naming the argument
(before tracing, and from the handler itself), and 10⁵ calls with no growth."""

import resource

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

jax.config.update("jax_enable_x64", True)

import my_jax_kernels as m  # noqa: E402  (after x64 is on: float64 arrays stay float64)

FLOATS = [jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64]
# The broadcast pairs the element-wise tests use: 0-d, zero-size, a bias, leading and inner ones.
PAIRS = [((), ()), ((0,), (0,)), ((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((1, 5), (4, 1)), ((2, 0, 3), (3,))]
TOLERANCE = {jnp.float16: 2e-3, jnp.bfloat16: 1.6e-2, jnp.float32: 2e-6, jnp.float64: 1e-13}


def gelu_reference(x, b):
    v = x + b
    return 0.5 * v * (1.0 + jnp.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))


def random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.standard_normal(shape) * 2, dtype=dtype)


def close(actual, expected, dtype):
    # Half precisions compute in float32 and round once, as the reference (computed in float32).
    tolerance = TOLERANCE[dtype]
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", PAIRS)
def test_values_eager_and_jitted_against_jnp(dtype, shapes):
    x, b = random(shapes[0], dtype, 1), random(shapes[1], dtype, 2)
    wide = jnp.float64 if dtype == jnp.float64 else jnp.float32
    expected = gelu_reference(x.astype(wide), b.astype(wide)).astype(dtype)
    eager = m.gelu_bias(x, b)
    jitted = jax.jit(m.gelu_bias)(x, b)
    assert eager.shape == expected.shape == jnp.broadcast_shapes(x.shape, b.shape)
    assert eager.dtype == jitted.dtype == dtype
    close(eager, expected, dtype)
    np.testing.assert_array_equal(np.asarray(eager, np.float64), np.asarray(jitted, np.float64))


def test_two_results_and_an_attribute():
    x = random((5, 3), jnp.float64)
    s, c = jax.jit(m.sincos)(x)
    close(s, jnp.sin(x), jnp.float64)
    close(c, jnp.cos(x), jnp.float64)
    for beta in (0.5, 1.0, 3.0):
        close(m.softplus(x, beta), jax.nn.softplus(beta * x) / beta, jnp.float64)
    # Under jit a scalar is static: an attribute of the compiled call.
    softplus = jax.jit(m.softplus, static_argnums=1)
    close(softplus(x, 2.0), jax.nn.softplus(2.0 * x) / 2.0, jnp.float64)
    assert softplus._cache_size() == 1
    softplus(x, 3.0)
    assert softplus._cache_size() == 2


@pytest.mark.parametrize("dtype", [jnp.int8, jnp.int32, jnp.int64, jnp.uint8, jnp.float32])
def test_integer_and_float_dtypes_of_a_scalar_kernel(dtype):
    x = jnp.arange(12, dtype=dtype).reshape(3, 4)
    y = jnp.asarray([1, 0, 2, 1], dtype=dtype)
    got = jax.jit(m.add_clamped, static_argnums=2)(x, y, 5)
    np.testing.assert_array_equal(got, jnp.maximum(x + y, jnp.asarray(5, dtype)))
    assert got.dtype == dtype


def test_vmap_with_in_axes_on_each_argument():
    x, b = random((6, 4), jnp.float32, 5), random((6, 4), jnp.float32, 6)
    for in_axes, args, expected in [
        ((0, None), (x, b[0]), gelu_reference(x, b[0])),
        ((None, 0), (x[0], b), gelu_reference(x[0], b)),
        ((0, 0), (x, b), gelu_reference(x, b)),
        ((1, 0), (x.T, b), gelu_reference(x, b)),
        ((0, 1), (x, b.T), gelu_reference(x, b)),
    ]:
        got = jax.jit(jax.vmap(m.gelu_bias, in_axes=in_axes))(*args)
        close(got, expected, jnp.float32)
    # Nested vmap, and a strict kernel (broadcast_all: every input gets the batch axis).
    got = jax.vmap(jax.vmap(m.gelu_bias, in_axes=(0, None)), in_axes=(None, 0))(x, b)
    assert got.shape == (6, 6, 4)
    close(got[2, 3], gelu_reference(x[3], b[2]), jnp.float32)
    got = jax.vmap(m.mul_same, in_axes=(0, None))(x, b[1])
    close(got, x * b[1], jnp.float32)


@pytest.mark.parametrize("shapes", [((), ()), ((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((1, 5), (4, 1))])
def test_grad_against_jax_autodiff(shapes):
    x, b = random(shapes[0], jnp.float64, 7), random(shapes[1], jnp.float64, 8)

    def loss(f):
        return lambda x, b: jnp.sum(jnp.sin(f(x, b)))

    got = jax.jit(jax.grad(loss(m.gelu_bias), argnums=(0, 1)))(x, b)
    want = jax.grad(loss(gelu_reference), argnums=(0, 1))(x, b)
    for g, w, arg in zip(got, want, (x, b)):
        assert g.shape == arg.shape, "the broadcast input's gradient is summed to its shape"
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_check_grads_forward_and_reverse():
    x, b = random((3, 4), jnp.float64, 9), random((4,), jnp.float64, 10)
    check_grads(m.gelu_bias, (x, b), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: m.softplus(x, 1.5), (x,), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: m.sincos(x)[0] * m.sincos(x)[1], (x,), order=1, modes=("fwd", "rev"))
    # jvp and vjp of a two-result kernel.
    t = random((3, 4), jnp.float64, 11)
    (s, c), (ts, tc) = jax.jvp(m.sincos, (x,), (t,))
    np.testing.assert_allclose(ts, jnp.cos(x) * t, rtol=1e-13)
    np.testing.assert_allclose(tc, -jnp.sin(x) * t, rtol=1e-13)
    # grad through vmap, and vmap of grad.
    per_row = jax.vmap(jax.grad(lambda x, b: m.gelu_bias(x, b).sum()), in_axes=(0, None))(x, b)
    np.testing.assert_allclose(per_row, jax.grad(lambda x: gelu_reference(x, b).sum())(x), rtol=1e-12, atol=1e-12)


def test_float32_grad_against_jax():
    x, b = random((32, 16), jnp.float32, 12), random((16,), jnp.float32, 13)
    got = jax.grad(lambda x, b: m.gelu_bias(x, b).sum(), argnums=(0, 1))(x, b)
    want = jax.grad(lambda x, b: jax.nn.gelu(x + b, approximate=True).sum(), argnums=(0, 1))(x, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_scan_over_a_kernel():
    b = random((4,), jnp.float32, 14)

    def step(carry, _):
        y = m.gelu_bias(carry, b)
        return y, y.sum()

    final, sums = jax.jit(lambda x: jax.lax.scan(step, x, None, length=5))(random((3, 4), jnp.float32, 15))
    carry = random((3, 4), jnp.float32, 15)
    for k in range(5):
        carry = gelu_reference(carry, b)
        np.testing.assert_allclose(sums[k], carry.sum(), rtol=1e-5)
    close(final, carry, jnp.float32)


def test_errors_name_the_argument_before_tracing():
    x, b = random((3, 4), jnp.float32), random((4,), jnp.float32)
    with pytest.raises(TypeError, match=r"argument `b` has dtype float64; argument `x` has float32"):
        m.gelu_bias(x, b.astype(jnp.float64))
    with pytest.raises(TypeError, match=r"argument `x` has dtype int32; the kernel takes bfloat16, float16"):
        m.gelu_bias(x.astype(jnp.int32), b)
    with pytest.raises(ValueError, match=r"argument `b` has shape \(3,\), which does not broadcast"):
        m.gelu_bias(x, random((3,), jnp.float32))
    with pytest.raises(ValueError, match=r"argument `y` has shape \(4,\) and argument `x` \(3, 4\)"):
        m.mul_same(x, b)
    with pytest.raises(TypeError, match=r"gelu_bias\(x, b\): missing a required argument: 'b'"):
        m.gelu_bias(x)
    with pytest.raises(TypeError, match=r"gelu_bias\(x, b\): got an unexpected keyword argument 'y'"):
        m.gelu_bias(x, b, y=b)
    with pytest.raises(TypeError, match=r"argument `beta` is a scalar of the kernel.*static_argnames"):
        jax.jit(m.softplus)(x, 2.0)
    with pytest.raises(TypeError, match=r"argument `beta`: expected a float, got str"):
        m.softplus(x, "2")
    with pytest.raises(TypeError, match=r"argument `lo`: 'float' object cannot be interpreted as an integer"):
        m.add_clamped(x, x, 2.5)
    with pytest.raises(TypeError, match=r"argument `lo`: .*does not fit an int64"):
        m.add_clamped(x, x, 2**70)


def test_the_handler_checks_what_xla_passes():
    # A caller of the FFI target itself, bypassing the Python function: the handler checks the
    # frame and reports through XLA, naming the argument.
    x, b = random((3, 4), jnp.float32), random((4,), jnp.float32)
    wrong_shape = jax.ffi.ffi_call("my_jax_kernels.gelu_bias", jax.ShapeDtypeStruct((5,), jnp.float32))
    with pytest.raises(Exception, match=r"result `out` has shape \[5\]; the arguments broadcast to \[3, 4\]"):
        jax.block_until_ready(wrong_shape(x, b))
    wrong_dtype = jax.ffi.ffi_call("my_jax_kernels.gelu_bias", jax.ShapeDtypeStruct((3, 4), jnp.float64))
    with pytest.raises(Exception, match=r"argument `out` has dtype float64; argument `x` has float32"):
        jax.block_until_ready(wrong_dtype(x, b))
    no_attribute = jax.ffi.ffi_call("my_jax_kernels.softplus", jax.ShapeDtypeStruct((3, 4), jnp.float32))
    with pytest.raises(Exception, match=r"argument `beta`: the call passes no attribute of this name"):
        jax.block_until_ready(no_attribute(x))
    wrong_attribute = jax.ffi.ffi_call("my_jax_kernels.softplus", jax.ShapeDtypeStruct((3, 4), jnp.float32))
    with pytest.raises(Exception, match=r"argument `beta`: the attribute has dtype int64; the kernel takes a float"):
        jax.block_until_ready(wrong_attribute(x, beta=np.int64(2)))
    # An integer that fits int64 but not the kernel's i32.
    with pytest.raises(Exception, match=r"argument `lo` = 4294967296 does not fit the kernel's int32"):
        jax.block_until_ready(m.add_clamped(x, x, 2**32))
    aliased = jax.ffi.ffi_call(
        "my_jax_kernels.gelu_bias", jax.ShapeDtypeStruct((3, 4), jnp.float32), input_output_aliases={0: 0}
    )
    with pytest.raises(Exception, match=r"result `out` shares memory with `x`"):
        jax.block_until_ready(jax.jit(aliased, donate_argnums=0)(x + 0, b))
    # The process carries on: a good call after the errors.
    close(m.gelu_bias(x, b), gelu_reference(x, b), jnp.float32)


def test_many_calls_do_not_grow():
    f = jax.jit(m.gelu_bias)
    x, b = random((4,), jnp.float32), random((4,), jnp.float32)
    for _ in range(2000):
        f(x, b).block_until_ready()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(100_000):
        y = f(x, b)
    y.block_until_ready()
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    # A leak of even one small allocation per call (a message, a buffer list) is > 3 MiB here.
    assert grown_kib < 3 * 1024, f"max RSS grew by {grown_kib} KiB over 10^5 calls"


def test_the_kernels_run_on_the_expected_backend():
    # The GPU tier sets DLSPAN_REQUIRE_JAX_BACKEND=gpu: every test above then ran the CUDA handlers.
    import os

    required = os.environ.get("DLSPAN_REQUIRE_JAX_BACKEND")
    backend = jax.default_backend()
    if required is not None:
        assert backend == required, f"JAX runs on {backend}, the test run requires {required}"
    x = random((3, 4), jnp.float32)
    y = m.gelu_bias(x, x)
    assert next(iter(y.devices())).platform == backend


def test_functions_are_named_documented_and_take_keywords():
    import inspect

    assert m.gelu_bias.__name__ == "gelu_bias"
    assert "my_jax_kernels.gelu_bias" in m.gelu_bias.__doc__
    assert str(inspect.signature(m.softplus)) == "(x, beta)"
    x = random((3, 4), jnp.float32)
    b = random((4,), jnp.float32)
    np.testing.assert_array_equal(m.gelu_bias(b=b, x=x), m.gelu_bias(x, b))
    # `static_argnames` finds a scalar by its name, as for any Python function.
    softplus = jax.jit(m.softplus, static_argnames=("beta",))
    close(softplus(x, beta=2.0), jax.nn.softplus(2.0 * x) / 2.0, jnp.float32)
    grad = jax.grad(lambda x: softplus(x, beta=2.0).sum())(x)
    close(grad, jax.nn.sigmoid(2.0 * x), jnp.float32)


# Functions that are not element-wise (`dlspan::jax::Function`): a Rust shape function gives the
# results' shapes and dtypes at trace time, the handler checks XLA's buffers against it.


def softmax_reference(x, t):
    return jax.nn.softmax(x / t, axis=-1)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
@pytest.mark.parametrize("shape", [(3, 5), (1, 1), (0, 4), (4, 0), (2, 3, 4)])
def test_a_function_eager_and_jitted_against_jnp(dtype, shape):
    x = random(shape, dtype, 3)
    eager = m.row_softmax(x, 1.5)
    jitted = jax.jit(m.row_softmax, static_argnames=("temperature",))(x, temperature=1.5)
    assert eager.shape == jitted.shape == x.shape and eager.dtype == dtype
    close(eager, softmax_reference(x, 1.5), dtype)
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))


def test_a_function_with_two_results_of_their_own_shape_and_dtypes():
    x = random((6, 7), jnp.float32, 4)
    x = x.at[2, 3].set(jnp.nan).at[4].set(1.0)  # a NaN row, and a row of ties
    index, value = jax.jit(m.row_argmax)(x)
    assert index.dtype == jnp.int32 and value.dtype == jnp.float32 and index.shape == value.shape == (6,)
    np.testing.assert_array_equal(np.asarray(index), np.asarray(jnp.argmax(x, axis=-1)))
    np.testing.assert_array_equal(np.asarray(value), np.asarray(jnp.max(x, axis=-1)))


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_vmap_of_a_function_batched_in_one_call_and_one_call_at_a_time(in_axes):
    xs = random((3, 4, 5), jnp.float64, 5)
    # `row_softmax` declares `broadcast_all`: one call over a batch of matrices.
    got = jax.vmap(lambda x: m.row_softmax(x, 0.7), in_axes=in_axes)(xs)
    expected = jax.vmap(lambda x: softmax_reference(x, 0.7), in_axes=in_axes)(xs)
    close(got, expected, jnp.float64)
    # `row_argmax` is sequential (the default): one call per batch element, any in_axes.
    xs = xs.astype(jnp.float32)
    index, value = jax.jit(jax.vmap(m.row_argmax, in_axes=in_axes))(xs)
    expected = jax.vmap(lambda x: jnp.argmax(x, axis=-1), in_axes=in_axes)(xs)
    np.testing.assert_array_equal(np.asarray(index), np.asarray(expected))
    # Nested: sequential outside, one call inside.
    nested = jax.vmap(jax.vmap(m.row_argmax))(jnp.stack([xs, xs + 1]))
    assert nested[0].shape == (2, 3, 4)


def test_grad_through_a_function_uses_its_rust_backward():
    x = random((4, 6), jnp.float64, 6)
    weights = jnp.arange(6.0)

    def loss(f):
        return lambda x: (f(x, 1.3) * weights).sum()

    got = jax.jit(jax.grad(loss(m.row_softmax)))(x)
    expected = jax.grad(loss(softmax_reference))(x)
    close(got, expected, jnp.float64)
    check_grads(lambda x: m.row_softmax(x, 1.3), (x,), order=1, modes=["rev"])
    # Batched backward: vmap of grad (the backward is a `broadcast_all` function too).
    xs = random((2, 4, 6), jnp.float64, 7)
    got = jax.vmap(jax.grad(loss(m.row_softmax)))(xs)
    close(got, jax.vmap(jax.grad(loss(softmax_reference)))(xs), jnp.float64)
    # Under lax.scan.
    total = jax.lax.scan(lambda c, x: (c + m.row_softmax(x, 1.0).sum(), None), 0.0, xs)[0]
    close(total, 8.0, jnp.float64)


def test_grad_through_a_function_with_an_integer_result():
    # `row_argmax` returns an int32 index (cotangent float0: its backward gets zeros) and the max.
    x = random((5, 4), jnp.float32, 8)
    got = jax.jit(jax.grad(lambda x: (m.row_argmax(x)[1] * jnp.arange(5.0)).sum()))(x)
    expected = jax.grad(lambda x: (jnp.max(x, axis=-1) * jnp.arange(5.0)).sum())(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    rows = jnp.asarray([[1.0, 3.0], [4.0, 2.0]], jnp.float32)
    g = jax.grad(lambda x: m.row_argmax(x)[1].sum())(rows)
    np.testing.assert_array_equal(np.asarray(g), [[0.0, 1.0], [1.0, 0.0]])
    # A Python list as an array argument of a differentiable function (a `custom_vjp`) is an
    # array to it (float64 here: x64 is on).
    close(m.row_softmax([[1.0, 3.0], [4.0, 2.0]], 1.0), softmax_reference(rows.astype(jnp.float64), 1.0), jnp.float64)


def test_a_function_refuses_arguments_naming_them_before_anything_runs():
    x = random((3, 5), jnp.float32)
    cases = [
        (lambda: m.row_softmax(x[0], 1.0), ValueError, "argument `x` has shape [5]"),
        (lambda: m.row_softmax(x.astype(jnp.int32), 1.0), ValueError, "argument `x` has dtype int32"),
        (lambda: m.row_softmax(x, -1.0), ValueError, "`temperature` must be positive"),
        (lambda: m.row_softmax(x, "hot"), TypeError, "argument `temperature`"),
        (lambda: jax.jit(m.row_softmax)(x, 1.0), TypeError, "static_argnames=('temperature',)"),
        (lambda: m.row_argmax(x.astype(jnp.float64)), ValueError, "the function takes float32"),
        (lambda: m.row_argmax(x, x), TypeError, "row_argmax(x)"),
    ]
    for thunk, error, text in cases:
        with pytest.raises(error) as raised:
            thunk()
        assert text in str(raised.value), str(raised.value)


def test_a_function_called_with_results_it_does_not_give_fails_in_the_handler():
    # A caller of the XLA target itself, with result shapes of its own: the handler recomputes
    # them with the Rust shape function and refuses the call, naming the result.
    x = random((3, 5), jnp.float32)
    lie = [jax.ShapeDtypeStruct((4,), jnp.int32), jax.ShapeDtypeStruct((3,), jnp.float32)]
    with pytest.raises(Exception) as raised:
        jax.block_until_ready(jax.ffi.ffi_call("my_jax_kernels.row_argmax", lie)(x))
    assert "result `index`" in str(raised.value), str(raised.value)


def test_a_function_called_many_times_does_not_grow():
    x = random((8, 16), jnp.float32)
    f = jax.jit(lambda x: m.row_softmax(x, 2.0))
    for _ in range(2000):
        f(x).block_until_ready()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(20000):
        f(x).block_until_ready()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 16 * 1024, f"max RSS grew by {grown} KiB over 20000 calls"
