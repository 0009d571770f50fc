"""A PyTorch autograd function whose forward and backward run dlspan kernels on the tensors
PyTorch passes (zero-copy, through PyTorch's DLPack exchange table): y = x * x, dy/dx = 2 x.

    python python/examples/autograd_square.py
"""

import torch

import dlspan


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.empty_like(x)
        # x may require grad: dlspan reads it as a detached, shared view.
        dlspan.mul(x, x, out)
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_in = torch.empty_like(x)
        dlspan.mul(x, grad_out, grad_in)
        dlspan.scale_(grad_in, 2.0)
        return grad_in


def square(x):
    return Square.apply(x)


if __name__ == "__main__":
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    square(x).sum().backward()
    print("x =", x.tolist(), " d(sum x^2)/dx =", x.grad.tolist())
    print("gradcheck:", torch.autograd.gradcheck(Square.apply, (torch.randn(4, 3, dtype=torch.float64, requires_grad=True),)))
