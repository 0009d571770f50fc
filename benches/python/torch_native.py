"""Native PyTorch operators (examples/torch-native: registered through LibTorch's stable C ABI)
beside PyTorch's own operators and a `torch.library.custom_op`, in ns per call: one table per run.

Run through ``bash scripts/bench_torch_native.sh`` (builds the operator library in release mode and
pins the process to one core with ``taskset``), or directly with ``DLSPAN_TORCH_NATIVE`` naming the
built library. Every row is measured beside its peer in the same run, interleaved: each round
times every statement once, and a statement's figure is the median of its rounds. Ratios are what
to compare; absolute figures vary with the machine and its load.
"""

import argparse
import os
import platform
import statistics
import sys
import timeit
import warnings

import torch

from table import print_table, print_targets

warnings.filterwarnings("ignore")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.2, help="time per measurement")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--cuda", action="store_true", help="the SiLU rows on a CUDA device (a GPU machine)")
    args = parser.parse_args()

    library = os.environ.get("DLSPAN_TORCH_NATIVE")
    if not library or not os.path.exists(library):
        sys.exit("DLSPAN_TORCH_NATIVE names no built library (bash scripts/bench_torch_native.sh builds it)")
    torch.set_num_threads(1)
    torch.ops.load_library(library)
    ops = torch.ops.dlspan_native

    @torch.library.custom_op("dlspan_bench::mul", mutates_args=())
    def custom_mul(x: torch.Tensor, s: float) -> torch.Tensor:
        return torch.mul(x, s)

    @custom_mul.register_fake
    def _(x, s):
        return torch.empty_like(x)

    # The floor of any Python autograd kernel: one that only redispatches below autograd.
    after = torch._C._after_autograd_keyset
    redispatch = ops.mul_floor.default.redispatch
    floor_library = torch.library.Library("dlspan_native", "IMPL")
    floor_library.impl("mul_floor", lambda keyset, *args: redispatch(keyset & after, *args), "Autograd",
                       with_keyset=True)

    if args.cuda:
        # A call's host time, in batches of 256 calls after a synchronisation (untimed), as the
        # exchange benchmark measures its CUDA rows; the operator has autograd registered.
        x4, x20 = torch.randn(4, device="cuda"), torch.randn(1 << 20, device="cuda")
        env = {"torch": torch, "ops": ops, "silu": torch.nn.functional.silu, "x4": x4, "x20": x20}
        rows = [
            ("F.silu, 4 float32, cuda", None, "silu(x4)", None),
            ("native silu, 4 float32, cuda", "F.silu, 4 float32, cuda", "ops.silu(x4)", 1.1),
            ("F.silu, 2^20 float32, cuda", None, "silu(x20)", None),
            ("native silu, 2^20 float32, cuda", "F.silu, 2^20 float32, cuda", "ops.silu(x20)", 1.1),
        ]
        return report(rows, env, args, setup="torch.cuda.synchronize()", number=256)

    x = torch.randn(4)
    xg = torch.randn(4, requires_grad=True)
    x48, b8 = torch.randn(4, 8), torch.randn(8)
    gelu = torch.nn.functional.gelu
    # GELU with a broadcast bias, 1024 x 1024 float32, forward and backward: PyTorch's autograd,
    # the hand-written backward (gelu_bias_backward) and the one #[differentiable] derives.
    big_x = torch.randn(1024, 1024, requires_grad=True)
    big_b = torch.randn(1024, requires_grad=True)
    big_g = torch.randn(1024, 1024)
    big_y, big_w, big_z = torch.randn(1024, 1024), torch.randn(1024, 1024), torch.randn(1024, 1024)
    env_big = {"big_x": big_x, "big_b": big_b, "big_g": big_g, "big_y": big_y, "big_w": big_w, "big_z": big_z}
    env = {"torch": torch, "ops": ops, "custom_mul": custom_mul, "x": x, "xg": xg, "x48": x48, "b8": b8, **env_big,
           "gelu": gelu, "mul": ops.mul, "mul_ad": ops.mul_ad, "mul_floor": ops.mul_floor, "view_cost": ops.view_cost}
    rows = [
        # (row, peer row or None, statement, target ratio or None)
        ("torch.mul(x, 2.0), 4 float32", None, "torch.mul(x, 2.0)", None),
        ("x * 2.0", None, "x * 2.0", None),
        ("custom_op mul (Python registration)", None, "custom_mul(x, 2.0)", None),
        ("native mul, no autograd", "torch.mul(x, 2.0), 4 float32", "mul(x, 2.0)", 1.0),
        ("native mul, no autograd (vs custom_op)", "custom_op mul (Python registration)", "mul(x, 2.0)", 0.2),
        ("native mul_ad, autograd registered, no grad", "torch.mul(x, 2.0), 4 float32", "mul_ad(x, 2.0)", 1.5),
        ("native mul + a Python kernel that only redispatches", "torch.mul(x, 2.0), 4 float32", "mul_floor(x, 2.0)",
         None),
        ("torch.mul forward + backward", None, "torch.mul(xg, 2.0).sum().backward()", None),
        ("native mul_ad forward + backward", "torch.mul forward + backward", "mul_ad(xg, 2.0).sum().backward()",
         1.5),
        ("F.gelu(x + b, tanh), (4, 8) float32", None, "gelu(x48 + b8, approximate='tanh')", None),
        ("native gelu_bias(x, b), (4, 8)", "F.gelu(x + b, tanh), (4, 8) float32", "ops.gelu_bias(x48, b8)", None),
        ("F.gelu(x + b, tanh) fwd + bwd, 1024² float32", None,
         "gelu(big_x + big_b, approximate='tanh').backward(big_g)", None),
        ("native gelu_bias, hand-written backward", "F.gelu(x + b, tanh) fwd + bwd, 1024² float32",
         "ops.gelu_bias(big_x, big_b).backward(big_g)", None),
        ("native gelu_bias_auto, derived backward", "native gelu_bias, hand-written backward",
         "ops.gelu_bias_auto(big_x, big_b).backward(big_g)", 1.1),
        ("native gelu_bias_auto, derived (vs PyTorch)", "F.gelu(x + b, tanh) fwd + bwd, 1024² float32",
         "ops.gelu_bias_auto(big_x, big_b).backward(big_g)", 1.0),
        # The bodies issue "CPU kernels at PyTorch's speed" names, 1024² float32, one thread.
        ("torch.exp, 1024² float32", None, "torch.exp(big_y)", None),
        ("native exp", "torch.exp, 1024² float32", "ops.exp_body(big_y)", 1.0),
        ("torch.tanh, 1024² float32", None, "torch.tanh(big_y)", None),
        ("native tanh", "torch.tanh, 1024² float32", "ops.tanh_body(big_y)", 1.0),
        ("torch.sigmoid, 1024² float32", None, "torch.sigmoid(big_y)", None),
        ("native sigmoid", "torch.sigmoid, 1024² float32", "ops.sigmoid_body(big_y)", 1.0),
        ("torch.addcmul(z, x, y), 1024² float32", None, "torch.addcmul(big_z, big_y, big_w)", None),
        ("native x * y + z", "torch.addcmul(z, x, y), 1024² float32", "ops.fma_body(big_y, big_w, big_z)", 1.0),
        ("view_cost(x, 0, True)", None, "view_cost(x, 0, True)", None),
        ("view_cost(x, 1000, True)", None, "view_cost(x, 1000, True)", None),
        ("view_cost(x, 1000, False)", None, "view_cost(x, 1000, False)", None),
    ]
    return report(rows, env, args)


def report(rows, env, args, setup="pass", number=None):
    """Times every row, interleaved, and prints the table."""
    timers = []
    for _, _, stmt, _ in rows:
        timer = timeit.Timer(stmt, setup=setup, globals=env)
        for _ in range(3):
            timer.timeit(16)
        count = 1
        while timer.timeit(count) < args.seconds / 10 and count < 1 << 22:
            count *= 2
        timers.append((timer, count if number is None else number))
    samples = {name: [] for name, *_ in rows}
    for _ in range(args.rounds):
        for (name, *_), (timer, count) in zip(rows, timers):
            samples[name].append(timer.timeit(count) / count * 1e9)
    median = {name: statistics.median(values) for name, values in samples.items()}

    print(f"# PyTorch {torch.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"one intra-op thread, median of {args.rounds} interleaved rounds")
    table = [(name, peer, target) for name, peer, _, target in rows]
    failed = print_table(table, median, args.markdown, 46)
    if "view_cost(x, 0, True)" in median:
        base = median["view_cost(x, 0, True)"]
        per_argument = (median["view_cost(x, 1000, True)"] - base) / 1000
        per_view = (median["view_cost(x, 1000, False)"] - base) / 1000
        print(f"# one tensor argument (a new handle, its metadata read, a typed view, the handle deleted): "
              f"{per_argument:.0f} ns; the typed view alone: {per_view:.0f} ns")
    print_targets(table, failed)
    return 0  # a benchmark reports; it does not fail


if __name__ == "__main__":
    sys.exit(main())
