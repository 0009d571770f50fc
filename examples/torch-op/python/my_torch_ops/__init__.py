"""SiLU as a PyTorch operator whose kernels are Rust (dlspan): ``torch.ops.dlspan_example.silu``,
differentiable, traceable by ``torch.compile`` and FakeTensor, on CPU and CUDA tensors (CUDA kernels
launched on PyTorch's current stream)."""

import torch

from . import _kernels

__all__ = ["silu"]


@torch.library.custom_op("dlspan_example::silu", mutates_args=(), device_types="cpu")
def silu(x: torch.Tensor) -> torch.Tensor:
    """SiLU, ``x * sigmoid(x)``: a new contiguous tensor of ``x``'s shape and dtype.

    Parameters
    ----------
    x : torch.Tensor
        A float32 or float64 tensor of any shape and strides, on the CPU or a CUDA device.
    """
    return _kernels.silu(x)


@silu.register_kernel("cuda")
def _(x):
    return _kernels.silu_cuda(x)


@silu.register_fake
def _(x):
    torch._check(x.dtype in (torch.float32, torch.float64), lambda: f"silu takes float32 or float64, not {x.dtype}")
    return x.new_empty(x.shape)  # contiguous, as the kernel's output is


@torch.library.custom_op("dlspan_example::silu_backward", mutates_args=(), device_types="cpu")
def silu_backward(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The gradient of ``silu`` at ``x``, given the gradient ``grad`` of its output."""
    # The raw kernel reads flat memory: no copy when the tensors are contiguous already.
    return _kernels.silu_backward(grad.contiguous(), x.contiguous())


@silu_backward.register_kernel("cuda")
def _(grad, x):
    return _kernels.silu_backward_cuda(grad.contiguous(), x.contiguous())


@silu_backward.register_fake  # opcheck and torch.compile trace the backward too
def _(grad, x):
    return x.new_empty(x.shape)


def _setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return silu_backward(grad, x)


silu.register_autograd(_backward, setup_context=_setup_context)
