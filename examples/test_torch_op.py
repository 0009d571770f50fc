"""The README's PyTorch operator (examples/torch-op, package `my_torch_ops`), built by
scripts/python.sh with `maturin develop`: `torch.ops.dlspan_example.silu`, whose forward kernel is a
dlspan element-wise kernel and whose backward kernel a dlspan raw kernel, agrees with PyTorch's SiLU
and its gradient, passes `torch.library.opcheck` and `torch.autograd.gradcheck`, and runs under
`torch.compile(fullgraph=True)` with no graph break."""

import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import my_torch_ops

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## A PyTorch operator in Rust"

SHAPES = [(), (0,), (7,), (3, 4), (2, 0, 3), (2, 3, 4), (1, 2, 1, 3, 2)]
DTYPES = [torch.float32, torch.float64]


def sample(shape, dtype, requires_grad=False):
    # Large enough values for exp(-x) to overflow in float32: the kernels must not give NaN there.
    x = torch.randn(shape, dtype=dtype) * 4
    if x.numel():
        x.view(-1)[0] = -100.0
    return x.requires_grad_(requires_grad)


def non_contiguous(dtype):
    """Transposed, sliced with a step, permuted, and broadcast (stride 0) tensors."""
    base = torch.randn(6, 8, dtype=dtype) * 3
    return {
        "transposed": base.t(),
        "stepped": base[::2, 1::3],
        "permuted": base.view(2, 3, 8).permute(2, 0, 1),
        "broadcast": base[0].expand(5, 8),
    }


CRATE = Path(__file__).resolve().parent / "torch-op"


def readme_blocks():
    """The section's fenced blocks as `(caption, language, text)`: the caption is the path in
    backticks opening the line before the block ("`src/lib.rs` (excerpt...):"), if any."""
    text = README.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.find("\n## ", 1)]
    blocks, caption, lines = [], None, iter(section.splitlines())
    for line in lines:
        if line.startswith("```"):
            body = []
            for inner in lines:
                if inner == "```":
                    break
                body.append(inner)
            blocks.append((caption, line[3:], "\n".join(body) + "\n"))
            caption = None
        elif line.strip():
            found = re.match(r"^`([^`]+)`.*:$", line)
            caption = found.group(1) if found else None
    return blocks


def test_the_readme_calls_run_as_written():
    calls = [text for caption, language, text in readme_blocks() if language == "python" and caption is None]
    assert len(calls) == 1, "the README's section has one Python block of calls"
    exec(compile(calls[0], f"{README} ({SECTION[3:]})", "exec"), {})


def test_the_readme_shows_the_crates_lines_as_they_are():
    """Each line of the README's excerpts (`src/lib.rs`, `python/my_torch_ops/__init__.py`) is a
    line of that file, but for the `// ...` and `# ...` lines that say what is left out."""
    excerpts = [(caption, text) for caption, _, text in readme_blocks() if caption]
    assert sorted(caption for caption, _ in excerpts) == ["python/my_torch_ops/__init__.py", "src/lib.rs"]
    for caption, text in excerpts:
        source = (CRATE / caption).read_text().splitlines()
        for line in text.splitlines():
            if line.strip() and not re.match(r"^(//|#) \.\.\.", line):
                assert line in source, f"the README's {caption} has a line that is not the file's: {line!r}"


def test_the_readme_shows_each_operators_fake():
    """Each operator the README's Python excerpt defines shows its `register_fake`: without the
    backward's, the README's own `opcheck` and `torch.compile` lines fail."""
    (text,) = [text for caption, _, text in readme_blocks() if caption == "python/my_torch_ops/__init__.py"]
    operators = re.findall(r"^def (\w+)\(", text, re.M)
    custom = [name for name in operators if f'"dlspan_example::{name}"' in text]
    assert custom == ["silu", "silu_backward"], custom
    for name in custom:
        assert f"@{name}.register_fake" in text, f"the README's excerpt shows no fake for {name}"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_forward_agrees_with_torch(shape, dtype):
    x = sample(shape, dtype)
    y = torch.ops.dlspan_example.silu(x)
    assert type(y) is torch.Tensor and y.dtype == dtype and y.shape == x.shape and y.is_contiguous()
    torch.testing.assert_close(y, F.silu(x))
    assert not torch.isnan(y).any()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_forward_reads_strided_inputs_without_copying_them(dtype):
    for name, x in non_contiguous(dtype).items():
        assert not x.is_contiguous(), name
        torch.testing.assert_close(my_torch_ops.silu(x), F.silu(x), msg=name)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0, 2), (5,), (3, 4), (2, 3, 4)], ids=str)
def test_backward_agrees_with_torch(shape, dtype):
    x = sample(shape, dtype, requires_grad=True)
    grad = torch.randn(shape, dtype=dtype)
    (ours,) = torch.autograd.grad(my_torch_ops.silu(x), x, grad)
    (theirs,) = torch.autograd.grad(F.silu(x), x, grad)
    torch.testing.assert_close(ours, theirs)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_backward_of_strided_inputs_and_broadcast_gradients(dtype):
    for name, x in non_contiguous(dtype).items():
        x = x.detach().requires_grad_()
        # `.sum()` hands the backward a gradient of stride 0.
        (ours,) = torch.autograd.grad(my_torch_ops.silu(x).sum(), x)
        (theirs,) = torch.autograd.grad(F.silu(x).sum(), x)
        torch.testing.assert_close(ours, theirs, msg=name)


def opcheck_samples():
    return [
        sample((3, 4), torch.float32),
        sample((5,), torch.float64, requires_grad=True),
        sample((), torch.float64, requires_grad=True),
        sample((2, 3, 4), torch.float32, requires_grad=True),
        sample((0, 3), torch.float32),
        non_contiguous(torch.float64)["transposed"].requires_grad_(),
    ]


@pytest.mark.parametrize("x", opcheck_samples(), ids=lambda x: f"{tuple(x.shape)}-{x.dtype}-{x.requires_grad}")
def test_opcheck(x):
    # test_schema, test_autograd_registration, test_faketensor, test_aot_dispatch_dynamic.
    result = torch.library.opcheck(torch.ops.dlspan_example.silu.default, (x,))
    assert set(result.values()) == {"SUCCESS"}, result


def test_opcheck_of_the_backward_operator():
    for x in opcheck_samples():
        grad = torch.randn_like(x, requires_grad=False)
        result = torch.library.opcheck(torch.ops.dlspan_example.silu_backward.default, (grad, x.detach()))
        assert set(result.values()) == {"SUCCESS"}, result


@pytest.mark.parametrize("shape", [(), (6,), (3, 4), (2, 3, 2)], ids=str)
def test_gradcheck(shape):
    x = sample(shape, torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(my_torch_ops.silu, (x,))


def test_gradcheck_of_a_strided_input():
    x = non_contiguous(torch.float64)["stepped"].requires_grad_()
    assert torch.autograd.gradcheck(my_torch_ops.silu, (x,))


def test_torch_compile_fullgraph_forward_and_backward():
    """One compiled function (inductor, dynamic shapes) with the operator between PyTorch ops:
    no graph break (fullgraph=True raises on one), the eager values and gradients."""
    torch._dynamo.reset()

    def f(x):
        return (my_torch_ops.silu(x * 2.0) + x).sum(dim=-1)

    compiled = torch.compile(f, fullgraph=True, dynamic=True)
    for shape, dtype in [((4, 5), torch.float32), ((3, 7), torch.float64)]:
        x = sample(shape, dtype, requires_grad=True)
        y = compiled(x)
        torch.testing.assert_close(y, f(x))
        (ours,) = torch.autograd.grad(y.sum(), x)
        (eager,) = torch.autograd.grad(f(x).sum(), x)
        torch.testing.assert_close(ours, eager)


def test_the_compiled_graph_calls_the_operator():
    """The graph dynamo captures holds the custom operator itself, not a fallback to Python."""
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(lambda x: my_torch_ops.silu(x) * 3, backend=backend, fullgraph=True)
    x = sample((8,), torch.float32)
    torch.testing.assert_close(compiled(x), F.silu(x) * 3)
    assert len(graphs) == 1
    targets = [node.target for node in graphs[0].graph.nodes if node.op == "call_function"]
    assert torch.ops.dlspan_example.silu.default in targets, targets


def test_a_wrong_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="float32 or float64.*int32"):
        my_torch_ops.silu(torch.arange(3, dtype=torch.int32))
    with pytest.raises(TypeError, match="float32 or float64.*float16"):
        my_torch_ops.silu(torch.ones(3, dtype=torch.float16))


def test_mismatched_backward_arguments_are_refused():
    x = torch.ones(3, dtype=torch.float64)
    with pytest.raises(ValueError, match="shape"):
        torch.ops.dlspan_example.silu_backward(torch.ones(4, dtype=torch.float64), x)
    with pytest.raises(TypeError, match="dtype"):
        torch.ops.dlspan_example.silu_backward(torch.ones(3, dtype=torch.float32), x)


def test_the_kernels_module_refuses_a_non_contiguous_backward_argument():
    x = torch.ones(4, 4, dtype=torch.float64)
    with pytest.raises(ValueError, match="'x' is not contiguous"):
        my_torch_ops._kernels.silu_backward(torch.ones(4, 4, dtype=torch.float64), x.t())


def needs_cuda():
    if not torch.cuda.is_available():
        pytest.skip("skipped: no CUDA device")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cuda_forward_and_backward_run_on_the_callers_stream(dtype):
    needs_cuda()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        # Made, computed and differentiated on the side stream: the kernels must be ordered after
        # the randn that fills x, and the backward's reads after the forward's writes.
        x = (torch.randn(300, 70, dtype=dtype, device="cuda") * 4).requires_grad_()
        y = my_torch_ops.silu(x)
        (grad,) = torch.autograd.grad(y, x, torch.ones_like(y))
        strided = my_torch_ops.silu(x.detach().t()[::2])
    side.synchronize()
    assert y.device == x.device and y.dtype == dtype
    reference = x.detach().double()
    torch.testing.assert_close(y.double(), F.silu(reference), rtol=1e-5, atol=1e-6)
    expected = torch.autograd.grad(F.silu(reference.requires_grad_()).sum(), reference)[0]
    torch.testing.assert_close(grad.double(), expected, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(strided.double(), F.silu(x.detach().t()[::2].double()), rtol=1e-5, atol=1e-6)


def test_cuda_forward_returns_before_the_callers_pending_work_ends():
    # The output comes from PyTorch's allocator and goes back to PyTorch ordered on the caller's
    # stream: nothing waits on the host (before the fix, handing it back waited for the kernel).
    needs_cuda()
    side = torch.cuda.Stream()
    x = torch.randn(1 << 16, device="cuda")
    with torch.cuda.stream(side):
        # Every kernel of the timed section launched once first: CUDA loads a kernel at its first
        # launch in a process, and that load waits for the device's pending work.
        torch.cuda._sleep(1000)
        my_torch_ops.silu(x)
    side.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(500_000_000)  # a quarter of a second or more
        y = my_torch_ops.silu(x)
        pending = not side.query()
    side.synchronize()
    assert pending, "the operator waited on the host for the work on the caller's stream"
    torch.testing.assert_close(y, F.silu(x), rtol=1e-5, atol=1e-6)


def test_cuda_opcheck_gradcheck_and_compile():
    needs_cuda()
    x = torch.randn(5, 3, dtype=torch.float64, device="cuda", requires_grad=True)
    torch.library.opcheck(torch.ops.dlspan_example.silu.default, (x,))
    assert torch.autograd.gradcheck(my_torch_ops.silu, (x,))
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: my_torch_ops.silu(x) * 2, fullgraph=True)
    torch.testing.assert_close(compiled(x.float()), 2 * F.silu(x.float()))
