"""The autograd example: forward and backward run dlspan kernels on PyTorch's tensors."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def test_gradcheck(torch):
    from autograd_square import Square, square

    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Square.apply, (x,))
    assert torch.autograd.gradcheck(Square.apply, (x.detach().t().requires_grad_(),)), "non-contiguous input"
    y = square(x)
    y.sum().backward()
    assert torch.allclose(x.grad, 2 * x.detach())


def test_forward_reads_tensors_that_require_grad(torch):
    from autograd_square import square

    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    assert torch.equal(square(w).detach(), torch.tensor([1.0, 4.0]))
