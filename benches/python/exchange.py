"""dlspan's Python exchange beside its peers, in ns per call: one table per run.

Run through ``bash scripts/bench_python.sh`` (builds the ``dlspan`` module and the peers module in
release mode, pins the process to one core with ``taskset``). Every row is measured beside its peer
in the same run, interleaved: each round times every function once, and a function's figure is the
median of its rounds. Ratios are what to compare; absolute figures vary with the machine and its
load.
"""

import argparse
from importlib import metadata
import platform
import statistics
import sys
import timeit
import warnings

import numpy as np
import torch

import dlspan
import dlspan_bench_peers as peers
from table import print_table, print_targets

warnings.filterwarnings("ignore")


def cases():
    t4 = [torch.ones(4) for _ in range(3)]
    a4 = [np.ones(4, np.float32) for _ in range(3)]
    d4 = dlspan.zeros(4)
    ta, tb, tc = t4
    na, nb, nc = a4
    npa = np.ones(1024, np.float32)
    tta = torch.ones(1024)
    # Sums of 10^6 float32 values, contiguous and every other value of 2·10^6 (NumPy's and PyTorch's
    # own arrays, each summed by its framework and by dlspan).
    big = np.arange(10**6, dtype=np.float32)
    big_strided = np.arange(2 * 10**6, dtype=np.float32)[::2]
    big_torch = torch.arange(10**6, dtype=torch.float32)
    big_torch_strided = torch.arange(2 * 10**6, dtype=torch.float32)[::2]
    return [
        # (row, peer row or None, statement, globals, target ratio or None)
        ("empty #[pyfunction], one argument", None, "f(x)", {"f": peers.empty, "x": ta}, None),
        ("floor: cached exchange call, reads ndim", None, "f(x)", {"f": peers.torch_floor, "x": ta}, None),
        (
            "PyView<f32, 1> of a torch tensor",
            "floor: cached exchange call, reads ndim",
            "f(x)",
            {"f": peers.dlspan_view, "x": ta},
            1.25,
        ),
        ("rust-numpy PyReadonlyArrayDyn<f32>", None, "f(x)", {"f": peers.numpy_readonly, "x": na}, None),
        (
            "PyView<f32, 1> of a NumPy array",
            "rust-numpy PyReadonlyArrayDyn<f32>",
            "f(x)",
            {"f": peers.dlspan_view, "x": na},
            0.9,
        ),
        ("PyView<f32, 1> of a dlspan.Tensor", None, "f(x)", {"f": peers.dlspan_view, "x": d4}, None),
        ("torch.add(a, b, out=c), 4 elements", None, "add(a, b, out=c)", {"add": torch.add, "a": ta, "b": tb, "c": tc}, None),
        (
            "dlspan.add(a, b, c), torch, 4 elements",
            "torch.add(a, b, out=c), 4 elements",
            "add(a, b, c)",
            {"add": dlspan.add, "a": ta, "b": tb, "c": tc},
            0.3,
        ),
        ("np.add(a, b, out=c), 4 elements", None, "add(a, b, out=c)", {"add": np.add, "a": na, "b": nb, "c": nc}, None),
        (
            "dlspan.add(a, b, c), NumPy, 4 elements",
            "np.add(a, b, out=c), 4 elements",
            "add(a, b, c)",
            {"add": dlspan.add, "a": na, "b": nb, "c": nc},
            1.0,
        ),
        ("np.from_dlpack(NumPy array)", None, "f(x)", {"f": np.from_dlpack, "x": npa}, None),
        (
            "np.from_dlpack(dlspan.Tensor)",
            "np.from_dlpack(NumPy array)",
            "f(x)",
            {"f": np.from_dlpack, "x": dlspan.zeros(1024)},
            1.5,
        ),
        ("torch.from_dlpack(torch tensor)", None, "f(x)", {"f": torch.from_dlpack, "x": tta}, None),
        (
            "torch.from_dlpack(dlspan.Tensor)",
            "torch.from_dlpack(torch tensor)",
            "f(x)",
            {"f": torch.from_dlpack, "x": dlspan.zeros(1024)},
            1.0,
        ),
        (
            "dlspan.from_dlpack(NumPy array)",
            "np.from_dlpack(NumPy array)",
            "f(x)",
            {"f": dlspan.from_dlpack, "x": npa},
            1.5,
        ),
        ("dlspan.from_dlpack(torch tensor)", None, "f(x)", {"f": dlspan.from_dlpack, "x": tta}, None),
        ("dlspan.signature(torch tensor)", None, "f(x)", {"f": dlspan.signature, "x": ta}, None),
        ("np.sum, 10^6 float32", None, "f(x)", {"f": np.sum, "x": big}, None),
        ("dlspan.sum, 10^6 float32 (NumPy)", "np.sum, 10^6 float32", "f(x)", {"f": dlspan.sum, "x": big}, 1.0),
        ("np.sum, 10^6 float32, stride 2", None, "f(x)", {"f": np.sum, "x": big_strided}, None),
        (
            "dlspan.sum, 10^6 float32, stride 2 (NumPy)",
            "np.sum, 10^6 float32, stride 2",
            "f(x)",
            {"f": dlspan.sum, "x": big_strided},
            1.0,
        ),
        ("torch.sum, 10^6 float32", None, "f(x)", {"f": torch.sum, "x": big_torch}, None),
        ("dlspan.sum, 10^6 float32 (torch)", "torch.sum, 10^6 float32", "f(x)", {"f": dlspan.sum, "x": big_torch}, None),
        ("torch.sum, 10^6 float32, stride 2", None, "f(x)", {"f": torch.sum, "x": big_torch_strided}, None),
        (
            "dlspan.sum, 10^6 float32, stride 2 (torch)",
            "torch.sum, 10^6 float32, stride 2",
            "f(x)",
            {"f": dlspan.sum, "x": big_torch_strided},
            None,
        ),
    ]


def operator_cases(device):
    """The README's PyTorch operator (examples/torch-op) beside the bare path of an extension
    function (a typed argument and an output like it) and beside itself called through
    ``torch.library``'s dispatcher; none when ``my_torch_ops`` is not installed."""
    try:
        import my_torch_ops
    except ImportError:
        return []
    x = torch.randn(4, device=device)
    kernel = my_torch_ops._kernels.silu_cuda if device == "cuda" else my_torch_ops._kernels.silu
    bare = peers.output_like_device if device == "cuda" else peers.output_like
    return [
        (f"typed argument + Output::like, {device}, 4 f32", None, "f(x)", {"f": bare, "x": x}, None),
        (
            f"the operator's Rust function, {device}, 4 f32",
            f"typed argument + Output::like, {device}, 4 f32",
            "f(x)",
            {"f": kernel, "x": x},
            1.25,
        ),
        (
            f"torch.ops.dlspan_example.silu, {device}, 4 f32",
            f"the operator's Rust function, {device}, 4 f32",
            "f(x)",
            {"f": torch.ops.dlspan_example.silu, "x": x},
            None,
        ),
        (f"torch.nn.functional.silu, {device}, 4 f32", None, "f(x)", {"f": torch.nn.functional.silu, "x": x}, None),
    ]


def output_cases():
    """An output like a PyTorch tensor (its allocator, handed back as a torch.Tensor) beside
    ``torch.empty_like`` from Python, on the CPU."""
    t = torch.ones(1024)
    return [
        ("torch.empty_like, 1024 f32", None, "f(x)", {"f": torch.empty_like, "x": t}, None),
        ("Output::like + finish, torch, 1024 f32", "torch.empty_like, 1024 f32", "f(x)", {"f": peers.output_like, "x": t}, 1.0),
        # The allocation alone (no argument read), beside PyTorch's zeroed tensor: an output on
        # the CPU is zeroed, since Rust views may read it.
        ("torch.zeros(1024)", None, "f(1024)", {"f": torch.zeros}, None),
        ("Output::new + finish, torch, 1024 f32", "torch.zeros(1024)", "f(1024)", {"f": peers.output_new_torch}, None),
    ]


def cuda_cases():
    """On a GPU: a typed view of a CUDA tensor with its caller's stream beside the bare exchange
    call, an output from PyTorch's allocator beside ``torch.empty_like``, and the operator."""
    t = torch.ones(4, device="cuda")
    big = torch.ones(1 << 20, device="cuda")
    return [
        ("floor: cached exchange call, cuda tensor", None, "f(x)", {"f": peers.torch_floor, "x": t}, None),
        (
            "floor + the table's current stream, cuda tensor",
            "floor: cached exchange call, cuda tensor",
            "f(x)",
            {"f": peers.torch_floor_stream, "x": t},
            None,
        ),
        (
            "PyDeviceView<f32, 1> + caller_stream",
            "floor: cached exchange call, cuda tensor",
            "f(x)",
            {"f": peers.dlspan_device_view, "x": t},
            1.3,
        ),
        ("torch.empty_like, cuda, 2^20 f32", None, "f(x)", {"f": torch.empty_like, "x": big}, None),
        (
            "Output::like + finish, cuda, 2^20 f32",
            "torch.empty_like, cuda, 2^20 f32",
            "f(x)",
            {"f": peers.output_like_device, "x": big},
            1.0,
        ),
        ("torch.empty(2^20, device='cuda')", None, "f(1 << 20, device='cuda')", {"f": torch.empty}, None),
        (
            "Output::on_device + finish, cuda, 2^20 f32",
            "torch.empty(2^20, device='cuda')",
            "f(1 << 20)",
            {"f": peers.output_new_torch_cuda},
            None,
        ),
    ] + operator_cases("cuda")


def calibrate(timer, target_seconds):
    number = 1
    while True:
        if timer.timeit(number) >= target_seconds / 10 or number >= 1 << 22:
            return max(number, 1)
        number *= 2


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.2, help="time per measurement")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--cuda", action="store_true", help="the rows on a CUDA device instead (a GPU machine)")
    args = parser.parse_args()

    rows = cuda_cases() if args.cuda else cases() + output_cases() + operator_cases("cpu")
    # On a GPU a call's host time is what is measured: in batches of at most 256 calls, the device
    # synchronised before each (untimed), so that the launch queue (1024 entries) never fills and
    # paces the calls by the device's speed instead.
    batch = 256 if args.cuda else None
    setup = "torch.cuda.synchronize()" if args.cuda else "pass"
    timers = []
    for name, _, stmt, globals_, _ in rows:
        timer = timeit.Timer(stmt, setup=setup, globals={"torch": torch, **globals_})
        # A few calls first: a first call's one-time costs (a kernel's compilation or loading, a
        # first allocation) would make the calibration settle on one call per measurement, and
        # one call just after a synchronisation is what would be timed then.
        for _ in range(3):
            timer.timeit(16)
        number = calibrate(timer, args.seconds)
        timers.append((timer, number if batch is None else max(number, batch)))

    def per_call(timer, number):
        if batch is None or number <= batch:
            return timer.timeit(number) / number
        batches = number // batch
        return sum(timer.timeit(batch) for _ in range(batches)) / (batches * batch)

    samples = {name: [] for name, *_ in rows}
    for _ in range(args.rounds):
        for (name, *_), (timer, number) in zip(rows, timers):
            samples[name].append(per_call(timer, number) * 1e9)
    median = {name: statistics.median(values) for name, values in samples.items()}

    print(f"# dlspan {metadata.version('dlspan')}, Python {platform.python_version()}, NumPy {np.__version__}, "
          f"PyTorch {torch.__version__}, {platform.machine()}, median of {args.rounds} interleaved rounds")
    table = [(name, peer, target) for name, peer, _, _, target in rows]
    print_targets(table, print_table(table, median, args.markdown, 44))
    return 0  # a benchmark reports; it does not fail


if __name__ == "__main__":
    sys.exit(main())
