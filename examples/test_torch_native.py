"""examples/torch-native: PyTorch operators in Rust registered natively with the dispatcher through
LibTorch's stable C ABI (no PyO3, no Python glue), loaded with torch.ops.load_library. The library
path comes from DLSPAN_TORCH_NATIVE (scripts/python.sh builds it)."""

import os
import threading

import pytest
import torch
from torch.library import opcheck

LIBRARY = os.environ.get("DLSPAN_TORCH_NATIVE")
if not LIBRARY or not os.path.exists(LIBRARY):
    pytest.skip("DLSPAN_TORCH_NATIVE names no built library (scripts/python.sh builds it)", allow_module_level=True)
torch.ops.load_library(LIBRARY)
ops = torch.ops.dlspan_native


def reference(x, b):
    return torch.nn.functional.gelu(x + b, approximate="tanh")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5), (2, 1, 3, 4)])
def test_gelu_bias_matches_pytorch(dtype, shape):
    x = torch.randn(shape, dtype=dtype)
    b = torch.randn(shape[-1], dtype=dtype)
    torch.testing.assert_close(ops.gelu_bias(x, b), reference(x, b))


@pytest.mark.parametrize("shapes", [((3, 4), (1, 4)), ((3, 1), (4,)), ((), ()), ((2, 1, 5), (3, 1)), ((0, 4), (4,))])
def test_gelu_bias_broadcasts_as_numpy_does(shapes):
    x, b = torch.randn(shapes[0]), torch.randn(shapes[1])
    y = ops.gelu_bias(x, b)
    assert y.shape == torch.broadcast_shapes(x.shape, b.shape) and y.is_contiguous()
    torch.testing.assert_close(y, reference(x, b))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_compute_in_float32(dtype):
    x, b = torch.randn(5, 3, dtype=dtype), torch.randn(3, dtype=dtype)
    torch.testing.assert_close(ops.gelu_bias(x, b), reference(x.float(), b.float()).to(dtype), atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64, torch.uint8, torch.float32, torch.float64])
def test_scalar_kernels_take_integer_and_float_dtypes(dtype):
    x = torch.arange(-6, 6).reshape(3, 4).to(dtype) if dtype != torch.uint8 else torch.arange(12).reshape(3, 4).to(dtype)
    y = torch.ones(4, dtype=dtype)
    assert torch.equal(ops.add_clamped(x, y, 2), torch.clamp(x + y, min=2))


def test_two_results():
    x = torch.randn(3, 5, dtype=torch.float64)
    s, c = ops.sincos(x)
    torch.testing.assert_close(s, torch.sin(x))
    torch.testing.assert_close(c, torch.cos(x))


def test_the_schema_follows_from_the_signature():
    schemas = {name: str(getattr(ops, name).default._schema) for name in
               ["gelu_bias", "scale_", "axpy_", "add_clamped", "sincos"]}
    assert schemas == {
        "gelu_bias": "dlspan_native::gelu_bias(Tensor x, Tensor b) -> Tensor",
        "scale_": "dlspan_native::scale_(Tensor(a!) x, float s) -> ()",
        "axpy_": "dlspan_native::axpy_(Tensor(a!) y, Tensor x, float a) -> ()",
        "add_clamped": "dlspan_native::add_clamped(Tensor x, Tensor y, int lo) -> Tensor",
        "sincos": "dlspan_native::sincos(Tensor x) -> (Tensor, Tensor)",
    }


def test_layouts_transposed_sliced_expanded_negative_zero_size():
    b = torch.randn(4)
    base = torch.randn(4, 6)
    for x in [base.t()[:4].t()[:, :4], base[:, ::2][:, :3].t().t()[:3, :], torch.randn(4).expand(5, 4),
              torch._neg_view(torch.randn(3, 4)), torch.randn(0, 4)]:
        bias = b[: x.shape[-1]]
        torch.testing.assert_close(ops.gelu_bias(x, bias), reference(x, bias))


def test_opcheck():
    for result in [opcheck(ops.gelu_bias, (torch.randn(3, 4), torch.randn(4))),
                   opcheck(ops.gelu_bias, (torch.randn(2, 1, 3), torch.randn(5, 1))),
                   opcheck(ops.scale_, (torch.randn(3, 4), 2.0)),
                   opcheck(ops.axpy_, (torch.randn(3, 4), torch.randn(4), 0.5)),
                   opcheck(ops.add_clamped, (torch.arange(6).reshape(2, 3), torch.arange(3), 1)),
                   opcheck(ops.sincos, (torch.randn(4, 2),))]:
        assert all(v == "SUCCESS" for v in result.values()), result


def test_in_place_operators():
    x = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    ops.scale_(x.t(), 2.0)
    assert x.tolist() == [[0, 2, 4], [6, 8, 10]]
    y = torch.ones(2, 3)
    ops.axpy_(y, torch.full((2, 3), 2.0), 0.5)
    assert y.tolist() == [[2.0] * 3] * 2


def test_torch_compile_fullgraph_dynamic():
    fn = torch.compile(lambda x, b: ops.gelu_bias(x, b) * 2, fullgraph=True, dynamic=True)
    for n in (3, 5):
        x, b = torch.randn(n, 4), torch.randn(4)
        torch.testing.assert_close(fn(x, b), reference(x, b) * 2)


def test_errors_name_the_argument():
    with pytest.raises(RuntimeError, match="argument `b`"):
        ops.gelu_bias(torch.randn(3, 4), torch.randn(4).int())
    with pytest.raises(RuntimeError, match="argument `b`"):
        ops.gelu_bias(torch.randn(3, 4), torch.randn(5))
    with pytest.raises(RuntimeError, match="argument `b` has dtype float64; argument `x` has float32"):
        ops.gelu_bias(torch.randn(3, 4), torch.randn(4, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="argument `x`: .*float16, bfloat16, float32 or float64"):
        ops.gelu_bias(torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32))
    with pytest.raises(RuntimeError, match="argument `b` is on meta, argument `x` on cpu"):
        ops.gelu_bias(torch.randn(3), torch.randn(3, device="meta"))
    with pytest.raises(RuntimeError, match="argument `y` is written in place and has shape"):
        ops.axpy_(torch.ones(3), torch.ones(2, 3), 1.0)
    with pytest.raises(RuntimeError, match="argument `lo` = 1099511627776 does not fit"):
        ops.add_clamped(torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32), 2**40)
    with pytest.raises(RuntimeError, match="argument `x`: .*rank"):
        ops.gelu_bias(torch.ones([1] * 9), torch.ones(1))
    with pytest.raises(RuntimeError, match="argument `x`"):
        ops.scale_(torch.randn(3).expand(2, 3), 2.0)  # a written view needs unique strides
    with pytest.raises(RuntimeError, match="shares memory"):
        y = torch.ones(4)
        ops.axpy_(y, y, 1.0)


def test_a_panic_is_an_exception_and_the_process_lives():
    for _ in range(3):
        with pytest.raises(RuntimeError, match="panicked: a deliberate panic"):
            ops.fails(torch.randn(2), True)
    with pytest.raises(RuntimeError, match="argument `x`"):
        ops.fails(torch.randn(2), False)
    torch.testing.assert_close(ops.gelu_bias(torch.zeros(2), torch.zeros(2)), torch.zeros(2))


def test_threads():
    x, b = torch.randn(8, 16), torch.randn(16)
    expected = reference(x, b)
    failures = []

    def work():
        for _ in range(300):
            if not torch.allclose(ops.gelu_bias(x, b), expected):
                failures.append(1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_many_calls_keep_memory_flat():
    import resource

    x, b = torch.randn(4), torch.randn(4)
    for _ in range(2000):
        ops.gelu_bias(x, b)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(100_000):
        ops.gelu_bias(x, b)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 16 * 1024, f"memory grew by {grown_kib} KiB over 10^5 calls"


def test_a_c_program_calls_the_operators_through_the_dispatcher_without_python(tmp_path):
    import shutil
    import subprocess

    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the program with")
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    source = os.path.join(os.path.dirname(__file__), "torch-native", "c", "call_dispatcher.c")
    program = tmp_path / "call_dispatcher"
    subprocess.run([compiler, "-O1", "-Wall", "-Werror", source, "-o", str(program), f"-L{lib}", "-ltorch_cpu",
                    "-lc10", f"-Wl,-rpath,{lib}", "-ldl", "-lm"], check=True)
    # No Python in the program's process: a clean environment without PYTHONPATH.
    run = subprocess.run([str(program), os.path.abspath(LIBRARY)], capture_output=True, text=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", ""), "RUST_BACKTRACE": "0"})
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


def test_gradients_through_the_named_backward():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ops.gelu_bias, (x, b))
    y = ops.gelu_bias(x, b)
    assert y.grad_fn is not None
    y.sum().backward()
    x2, b2 = x.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    reference(x2, b2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(b.grad, b2.grad)
    # Only x requires grad: b's gradient is not asked for.
    x3 = torch.randn(2, 4, requires_grad=True)
    ops.gelu_bias(x3, torch.randn(4)).sum().backward()
    assert x3.grad.shape == (2, 4)


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((2, 1, 3), (5, 1)), ((), ()), ((0, 3), (3,))])
def test_derived_backward_passes_gradcheck(shapes):
    # gelu_bias_auto's backward is derived from its forward body by #[differentiable].
    x = torch.randn(shapes[0], dtype=torch.float64, requires_grad=True)
    b = torch.randn(shapes[1], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ops.gelu_bias_auto, (x, b))
    y = ops.gelu_bias_auto(x, b)
    y.sum().backward()
    x2, b2 = x.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    reference(x2, b2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(b.grad, b2.grad)


def test_derived_backward_against_autograd_of_the_same_expression():
    for dtype in [torch.float32, torch.float64]:
        x = torch.randn(64, 33, dtype=dtype, requires_grad=True)
        b = torch.randn(33, dtype=dtype, requires_grad=True)
        g = torch.randn(64, 33, dtype=dtype)
        ops.gelu_bias_auto(x, b).backward(g)
        x2, b2 = x.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
        reference(x2, b2).backward(g)
        torch.testing.assert_close(x.grad, x2.grad)
        torch.testing.assert_close(b.grad, b2.grad)
    x = torch.randn(50, dtype=torch.float64, requires_grad=True) * 15
    x.retain_grad()
    assert torch.autograd.gradcheck(lambda x: ops.softplus_auto(x, 1.5), (x.detach().requires_grad_(),))
    y = ops.softplus_auto(x, 1.5)
    y.sum().backward()
    x2 = x.detach().clone().requires_grad_()
    torch.nn.functional.softplus(x2, beta=1.5, threshold=20.0).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)


MATH = [torch.sqrt, torch.exp, torch.exp2, torch.log, torch.log2, torch.log10, torch.sin, torch.cos, torch.tan,
        torch.tanh, lambda x: (x - 1).abs(), torch.minimum, torch.maximum, torch.pow, lambda x, y: x * y + x,
        torch.div, lambda x, y: torch.fmod(x * 3, y)]


@pytest.mark.parametrize("which", range(len(MATH)))
def test_each_math_functions_derived_backward_against_pytorch_autograd(which):
    # Inputs in every function's domain, away from the points where a derivative is undefined.
    x = (torch.rand(40, dtype=torch.float64) * 1.4 + 0.55).requires_grad_()
    y = (torch.rand(40, dtype=torch.float64) * 1.4 + 0.55).requires_grad_()
    reference = MATH[which]
    binary = which >= 11
    assert torch.autograd.gradcheck(lambda x, y: ops.math_auto(x, y, which), (x, y))
    ops.math_auto(x, y, which).sum().backward()
    x2, y2 = x.detach().clone().requires_grad_(), y.detach().clone().requires_grad_()
    (reference(x2, y2) if binary else reference(x2)).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    if binary:
        torch.testing.assert_close(y.grad, y2.grad)
    else:
        assert torch.equal(y.grad, torch.zeros_like(y))


def test_derived_tangent_in_forward_mode():
    import torch.autograd.forward_ad as fwAD
    x, b = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    tx, tb = torch.randn_like(x), torch.randn_like(b)
    with fwAD.dual_level():
        primal, tangent = fwAD.unpack_dual(ops.gelu_bias_auto(fwAD.make_dual(x, tx), fwAD.make_dual(b, tb)))
        expected_primal, expected = fwAD.unpack_dual(reference(fwAD.make_dual(x, tx), fwAD.make_dual(b, tb)))
        # An argument without a tangent: its tangent is zero.
        _, only_x = fwAD.unpack_dual(ops.gelu_bias_auto(fwAD.make_dual(x, tx), b))
        _, expected_only_x = fwAD.unpack_dual(reference(fwAD.make_dual(x, tx), b))
    torch.testing.assert_close(primal, expected_primal)
    torch.testing.assert_close(tangent, expected)
    torch.testing.assert_close(only_x, expected_only_x)
    xg, bg = x.clone().requires_grad_(), b.clone().requires_grad_()
    assert torch.autograd.gradcheck(ops.gelu_bias_auto, (xg, bg), check_forward_ad=True)
    assert torch.autograd.gradcheck(lambda x: ops.softplus_auto(x, 0.7), (xg,), check_forward_ad=True)
    assert str(ops.gelu_bias_auto_tangent.default._schema) == (
        "dlspan_native::gelu_bias_auto_tangent(Tensor x, Tensor b, Tensor tangent_x, Tensor tangent_b) -> (Tensor, Tensor)")


def test_derived_backward_opcheck_and_compile():
    x = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    for op, args in [(ops.gelu_bias_auto, (x, b)), (ops.softplus_auto, (x, 0.5))]:
        result = opcheck(op, args)
        assert all(v == "SUCCESS" for v in result.values()), result
    fn = torch.compile(lambda x, b: ops.gelu_bias_auto(x, b).sum(), fullgraph=True, dynamic=True)
    fn(x, b).backward()
    x2, b2 = x.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    reference(x2, b2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(b.grad, b2.grad)
    assert str(ops.gelu_bias_auto_backward.default._schema) == (
        "dlspan_native::gelu_bias_auto_backward(Tensor x, Tensor b, Tensor grad_out) -> (Tensor, Tensor)")


def test_opcheck_and_compile_with_gradients():
    x = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    result = opcheck(ops.gelu_bias, (x, b))
    assert all(v == "SUCCESS" for v in result.values()), result
    fn = torch.compile(lambda x, b: ops.gelu_bias(x, b).sum(), fullgraph=True, dynamic=True)
    fn(x, b).backward()
    x2, b2 = x.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    reference(x2, b2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(b.grad, b2.grad)


def test_torch_export_and_aotinductor_run_the_operator(tmp_path):
    # AOTInductor compiles the exported graph to a C++ wrapper (g++), which calls the operator
    # through `aoti_torch_proxy_executor_call_function`: the dispatcher, then dlspan's kernel.
    class Model(torch.nn.Module):
        def forward(self, x, b):
            return ops.gelu_bias(x, b) * 2

    x, b = torch.randn(3, 4), torch.randn(4)
    exported = torch.export.export(Model(), (x, b))
    targets = [node.target for node in exported.graph.nodes if node.op == "call_function"]
    assert ops.gelu_bias.default in targets
    package = torch._inductor.aoti_compile_and_package(exported, package_path=str(tmp_path / "model.pt2"))
    runner = torch._inductor.aoti_load_package(package)
    torch.testing.assert_close(runner(x, b), reference(x, b) * 2)
    x2 = torch.randn(3, 4)
    torch.testing.assert_close(runner(x2, b), reference(x2, b) * 2)


def test_optional_and_text_arguments():
    x = torch.randn(3, 4, dtype=torch.float64)
    w = torch.rand(3, 4, dtype=torch.float64)
    torch.testing.assert_close(ops.reduce(x), x.sum())
    torch.testing.assert_close(ops.reduce(x, w), (x * w).sum())
    torch.testing.assert_close(ops.reduce(x, None, "mean"), x.mean())
    torch.testing.assert_close(ops.reduce(x, w, mode="mean", scale=2.0), 2 * (x * w).mean())
    torch.testing.assert_close(ops.reduce(x.t(), scale=None), x.sum())
    assert str(ops.reduce.default._schema) == (
        'dlspan_native::reduce(Tensor x, Tensor? weight=None, str mode="sum", float? scale=None) -> Tensor')
    with pytest.raises(RuntimeError, match='argument `mode` is "max"'):
        ops.reduce(x, mode="max")
    with pytest.raises(RuntimeError, match="argument `weight` has shape"):
        ops.reduce(x, torch.ones(4, dtype=torch.float64))
    result = opcheck(ops.reduce, (x, w), {"mode": "mean", "scale": 0.5})
    assert all(v == "SUCCESS" for v in result.values()), result


def test_optional_and_text_arguments_keep_memory_flat():
    import resource

    x, w = torch.randn(8), torch.rand(8)
    for _ in range(2000):
        ops.reduce(x, w, "mean", 2.0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(50_000):
        ops.reduce(x, w, "mean", 2.0)
        ops.reduce(x, None, "sum", None)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 16 * 1024, f"memory grew by {grown_kib} KiB over 10^5 calls"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_silu_and_its_gradient(dtype):
    x = torch.randn(4, 5, dtype=dtype, requires_grad=True)
    y = ops.silu(x)
    torch.testing.assert_close(y, torch.nn.functional.silu(x))
    y.sum().backward()
    x2 = x.detach().clone().requires_grad_()
    torch.nn.functional.silu(x2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    if dtype == torch.float64:
        assert torch.autograd.gradcheck(ops.silu, (x.detach().requires_grad_(),))
    result = opcheck(ops.silu, (torch.randn(3, 2, dtype=dtype, requires_grad=True),))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_torch_compile_raises_the_same_error_from_the_meta_kernel():
    fn = torch.compile(lambda x, b: ops.gelu_bias(x, b), fullgraph=True)
    with pytest.raises(Exception, match="argument `b` has dtype float64; argument `x` has float32"):
        fn(torch.randn(3, 4), torch.randn(4, dtype=torch.float64))


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (the GPU machine runs these)")


@cuda
def test_cuda_operators_match_the_cpu_on_the_current_stream():
    x, b = torch.randn(64, 33, device="cuda"), torch.randn(33, device="cuda")
    torch.testing.assert_close(ops.gelu_bias(x, b), reference(x, b))
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        # A long kernel first on the side stream: the operator is ordered after it on that stream.
        big = torch.randn(4096, 4096, device="cuda")
        for _ in range(4):
            big = big @ big / 4096
        y = ops.gelu_bias(big[:64, :33], b)
        expected = reference(big[:64, :33], b)
    side.synchronize()
    torch.testing.assert_close(y, expected)
    xg = torch.randn(8, 3, device="cuda", dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ops.silu, (xg,))
    for args in [(x, b), (x.t().contiguous().t(), b)]:
        result = opcheck(ops.gelu_bias, args)
        assert all(v == "SUCCESS" for v in result.values()), result
    fn = torch.compile(lambda x, b: ops.gelu_bias(x, b) * 2, fullgraph=True)
    torch.testing.assert_close(fn(x, b), reference(x, b) * 2)


def test_strict_operators_refuse_broadcasting():
    x, y = torch.arange(6).reshape(2, 3), torch.arange(6).reshape(2, 3)
    assert torch.equal(ops.mul_same(x, y), x * y)
    assert torch.equal(ops.mul_same(x.t(), y.t()), (x * y).t())
    with pytest.raises(RuntimeError, match=r"argument `y` has shape \[3\] and argument `x` \[2, 3\]: .*does not broadcast"):
        ops.mul_same(x, torch.arange(3))
    result = opcheck(ops.mul_same, (torch.randn(2, 3), torch.randn(2, 3)))
    assert all(v == "SUCCESS" for v in result.values()), result


def test_the_dispatcher_resolves_conjugate_and_negative_views():
    z = torch.randn(5, dtype=torch.complex64)
    conj = z.conj()
    assert conj.is_conj()
    torch.testing.assert_close(ops.conj_copy(conj), z.conj().resolve_conj())
    torch.testing.assert_close(ops.conj_copy(z[::2].conj()), z[::2].conj().resolve_conj())
    neg = torch._neg_view(torch.randn(3, 4))
    assert neg.is_neg()
    torch.testing.assert_close(ops.gelu_bias(neg, torch.zeros(4)), reference(neg.resolve_neg(), torch.zeros(4)))


@pytest.mark.parametrize("n", [1, 100, 4096, 1 << 18])
def test_a_tensor_a_kernel_allocates_reads_as_zeros_on_the_cpu(n):
    # The kernel fills and frees tensors of the same size first: libtorch's allocator hands their
    # memory back uninitialised, which `Tensor::empty` zeroes before a view can read it.
    out = ops.fresh(torch.empty(n, dtype=torch.int8))
    assert out.shape == (n,) and out.dtype == torch.float32
    assert torch.equal(out, torch.ones(n)), out[:8]


def test_scalars_convert_exactly_to_the_tensors_dtype():
    assert ops.shift(torch.arange(3, dtype=torch.int32), 2.0).tolist() == [2, 3, 4]
    torch.testing.assert_close(ops.shift(torch.zeros(2), 2.5), torch.full((2,), 2.5))
    with pytest.raises(RuntimeError, match="argument `s` = 2.5 is not a value of the kernel's int32"):
        ops.shift(torch.arange(3, dtype=torch.int32), 2.5)
    with pytest.raises(RuntimeError, match="argument `s` = -1 is not a value of the kernel's uint8"):
        ops.shift(torch.arange(3, dtype=torch.uint8), -1.0)
    with pytest.raises(RuntimeError, match="argument `lo` = -1099511627776 does not fit"):
        ops.add_clamped(torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32), -2**40)


def test_a_tensor_kept_past_its_call_gives_no_views():
    x = torch.randn(4)
    ops.keep(x)
    with pytest.raises(RuntimeError, match="argument `x` is used after its call returned"):
        ops.view_kept(x)
