"""Native PyTorch operators from a PyO3 extension module (python/tests/extension, built as an abi3
wheel by the test command): registered with the dispatcher from the module's init through LibTorch's
stable C ABI (`dlspan::torch::register_module`), with their autograd, whatever was imported first."""

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
extension = pytest.importorskip("dlspan_test_extension")
ops = torch.ops.dlspan_test_extension


def test_the_operator_runs_with_its_gradient():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    torch.testing.assert_close(ops.cube(x), x**3)
    assert torch.autograd.gradcheck(ops.cube, (x,))
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        y = torch.randn(5, dtype=dtype)
        torch.testing.assert_close(ops.cube(y), (y.float() ** 3).to(dtype), atol=1e-2, rtol=1e-2)


def test_opcheck_and_compile():
    x = torch.randn(4, 3, requires_grad=True)
    result = torch.library.opcheck(ops.cube, (x,))
    assert all(v == "SUCCESS" for v in result.values()), result
    compiled = torch.compile(lambda x: ops.cube(x).sum(), fullgraph=True, dynamic=True)
    compiled(x).backward()
    torch.testing.assert_close(x.grad, 3 * x.detach() ** 2)


def test_an_error_names_the_argument():
    with pytest.raises(RuntimeError, match="argument `x`: .*float16, bfloat16, float32 or float64"):
        ops.cube(torch.ones(3, dtype=torch.int64))


def test_the_module_imports_torch_itself():
    # A fresh interpreter that imports the extension before torch: the module's init imports it.
    code = "import dlspan_test_extension, torch; print(torch.ops.dlspan_test_extension.cube(torch.full((2,), 2.0)).tolist())"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[8.0, 8.0]"
