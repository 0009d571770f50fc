"""JAX kernels in Rust (examples/jax-ffi: element-wise kernels and a `jax::Function` as XLA FFI handlers) beside the jitted
`jnp` expression of the same math and the same Rust kernel through `jax.pure_callback`, in ns per
call: one table per run.

Run through ``bash scripts/bench_jax_ffi.sh`` (builds the example in release mode into .venv and
pins the process to one core with ``taskset``). Every row is measured beside its peer in the same
run, interleaved: each round times every statement once, and a statement's figure is the median of
its rounds. Ratios are what to compare; absolute figures vary with the machine and its load.
"""

import argparse
import os
import platform
import statistics
import sys
import timeit

# One thread for XLA's CPU client (dlspan's kernels take the cores the process may run on: one
# under `taskset -c 1`), unless `--all-cores` (both with their default threads).
if "--all-cores" not in sys.argv:
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import my_jax_kernels as m  # noqa: E402
from table import print_table, print_targets  # noqa: E402


def gelu_expression(x, b):
    v = x + b
    return 0.5 * v * (1.0 + jnp.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.2, help="time per measurement")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--all-cores", action="store_true", help="XLA and dlspan with their default threads")
    args = parser.parse_args()

    def through_callback(x, b):
        def host(x, b):
            out = np.empty(x.shape, np.float32)
            m.gelu_bias_host(x, b, out)
            return out

        return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x, b, vmap_method="expand_dims")

    rng = np.random.default_rng(0)
    env = {}
    for label, n in (("4", 4), ("20", 1 << 20)):
        env[f"x{label}"] = jnp.asarray(rng.standard_normal(n), jnp.float32)
        env[f"b{label}"] = jnp.asarray(rng.standard_normal(n), jnp.float32)
    big_x = jnp.asarray(rng.standard_normal((1024, 1024)), jnp.float32)
    big_b = jnp.asarray(rng.standard_normal(1024), jnp.float32)
    env.update(
        big_x=big_x,
        big_b=big_b,
        expression=jax.jit(gelu_expression),
        kernel=jax.jit(m.gelu_bias),
        callback=jax.jit(through_callback),
        grad_expression=jax.jit(jax.grad(lambda x, b: gelu_expression(x, b).sum(), argnums=(0, 1))),
        grad_kernel=jax.jit(jax.grad(lambda x, b: m.gelu_bias(x, b).sum(), argnums=(0, 1))),
        argmax_expression=jax.jit(lambda x: (jnp.argmax(x, axis=-1).astype(jnp.int32), jnp.max(x, axis=-1))),
        argmax_function=jax.jit(m.row_argmax),
        small=jnp.asarray(rng.standard_normal((1, 4)), jnp.float32),
        ready=jax.block_until_ready,
    )
    # Compiled once, and the kernel's values checked against the expression's before timing.
    for label in ("4", "20"):
        x, b = env[f"x{label}"], env[f"b{label}"]
        np.testing.assert_allclose(env["kernel"](x, b), env["expression"](x, b), rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(env["callback"](x, b), env["expression"](x, b), rtol=2e-6, atol=2e-6)
    for x in (env["small"], big_x):
        for got, want in zip(env["argmax_function"](x), env["argmax_expression"](x)):
            np.testing.assert_array_equal(got, want)
    for got, want in zip(env["grad_kernel"](big_x, big_b), env["grad_expression"](big_x, big_b)):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)

    rows = [
        # (row, peer row or None, statement, target ratio or None)
        ("jnp expression, jit, 4 float32", None, "ready(expression(x4, b4))", None),
        ("gelu_bias kernel, jit, 4", "jnp expression, jit, 4 float32", "ready(kernel(x4, b4))", 1.5),
        ("pure_callback of the Rust kernel, jit, 4", None, "ready(callback(x4, b4))", None),
        ("gelu_bias kernel vs pure_callback, 4", "pure_callback of the Rust kernel, jit, 4",
         "ready(kernel(x4, b4))", 0.1),
        ("jnp expression, jit, 2^20 float32", None, "ready(expression(x20, b20))", None),
        ("gelu_bias kernel, jit, 2^20", "jnp expression, jit, 2^20 float32", "ready(kernel(x20, b20))", 1.0),
        ("pure_callback of the Rust kernel, jit, 2^20", None, "ready(callback(x20, b20))", None),
        ("gelu_bias kernel vs pure_callback, 2^20", "pure_callback of the Rust kernel, jit, 2^20",
         "ready(kernel(x20, b20))", None),
        ("jax.grad of the expression, 1024² + bias", None, "ready(grad_expression(big_x, big_b))", None),
        ("jax.grad of the kernel (derived backward)", "jax.grad of the expression, 1024² + bias",
         "ready(grad_kernel(big_x, big_b))", None),
        # A `jax::Function` (not element-wise): the per-call cost of its handler on a 1×4 matrix,
        # and its CPU work on 1024² (the example's plain loop, not vectorised).
        ("jnp argmax + max, jit, 1×4", None, "ready(argmax_expression(small))", None),
        ("row_argmax function, jit, 1×4", "jnp argmax + max, jit, 1×4", "ready(argmax_function(small))", None),
        ("jnp argmax + max, jit, 1024²", None, "ready(argmax_expression(big_x))", None),
        ("row_argmax function, jit, 1024²", "jnp argmax + max, jit, 1024²", "ready(argmax_function(big_x))", None),
    ]
    return report(rows, env, args)


def report(rows, env, args):
    """Times every row, interleaved, and prints the table."""
    timers = []
    for _, _, stmt, _ in rows:
        timer = timeit.Timer(stmt, globals=env)
        for _ in range(3):
            timer.timeit(4)
        count = 1
        while timer.timeit(count) < args.seconds / 10 and count < 1 << 22:
            count *= 2
        timers.append((timer, count))
    samples = {name: [] for name, *_ in rows}
    for _ in range(args.rounds):
        for (name, *_), (timer, count) in zip(rows, timers):
            samples[name].append(timer.timeit(count) / count * 1e9)
    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"# JAX {jax.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS')}, {os.cpu_count()} cores, "
          f"DLSPAN_NUM_THREADS={os.environ.get('DLSPAN_NUM_THREADS')}, median of {args.rounds} interleaved rounds")
    table = [(name, peer, target) for name, peer, _, target in rows]
    failed = print_table(table, median, args.markdown, 46)
    print_targets(table, failed)
    return 0  # a benchmark reports; it does not fail


if __name__ == "__main__":
    sys.exit(main())
