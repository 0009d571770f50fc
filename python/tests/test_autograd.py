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


def test_writes_through_dlspan_are_seen_by_autograd(torch):
    """A mutable view argument bumps the tensor's version counter, as PyTorch's own in-place
    operations do: a backward pass that saved the old values raises PyTorch's error instead of
    computing gradients from the new ones."""
    import dlspan

    w = torch.ones(3, requires_grad=True)
    a = torch.ones(3)
    z = (w * a).sum()
    before = a._version
    dlspan.scale_(a, 2.0)
    assert a._version > before
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()

    out = torch.ones(3)
    z = (w * out).sum()
    dlspan.add(a, a, out)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()
    assert out.tolist() == [4.0, 4.0, 4.0]

    # Read-only arguments leave the counter alone, and gradients that need no saved value flow.
    before = a._version
    assert dlspan.sum(a) == 6.0
    assert a._version == before


def test_inference_tensors_are_written_only_in_inference_mode(torch):
    """An inference tensor has no version counter: PyTorch updates it in place only inside
    inference mode, and so does dlspan."""
    import dlspan

    with torch.inference_mode():
        t = torch.ones(3)
        dlspan.scale_(t, 2.0)
    assert t.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError) as err:
        dlspan.scale_(t, 2.0)
    assert err.value.kind == "InferenceTensor"
    assert t.tolist() == [2.0, 2.0, 2.0], "refused before any write"
    assert dlspan.sum(t) == 6.0, "reading is allowed"
    with pytest.raises(RuntimeError, match="[Ii]nference"):
        t.mul_(2.0)  # PyTorch's own rule (it raises after its kernel wrote)


def test_subclasses_read_through_dlpack_are_marked_written_too(torch):
    """A subclass that overrides __torch_function__ is read through __dlpack__ (which honours the
    override); writing it bumps its version counter as well."""
    import dlspan

    class Tagged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    w = torch.ones(3, requires_grad=True)
    base = torch.ones(3)
    tagged = base.as_subclass(Tagged)
    z = (w * base).sum()
    dlspan.scale_(tagged, 2.0)
    assert base.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()
