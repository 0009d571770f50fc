"""Functions written with dlspan's typed view arguments: the pass-through pattern for extension
authors to copy (``python/src/examples.rs``), and a record array."""

from typing import Any, final

from . import Tensor

def axpy(alpha: float, x: Any, y: Any) -> None:
    """``y += alpha * x`` for float32 vectors of any strides (a typed-argument example)."""

def det3(m: Any) -> float:
    """The determinant of a 3×3 float64 matrix with positive strides (static extents)."""

def trace(m: Any) -> float:
    """The trace of a square float64 matrix stored row-major (a compact-layout example)."""

@final
class Particles:
    """``n`` particle records (``position: float32[3], mass: float32, id: uint32, charge: float32``, 24
    bytes each) whose members are zero-copy strided tensors."""

    def __init__(self, n: int) -> None: ...
    def __len__(self) -> int: ...
    def fields(self) -> dict[str, Tensor]:
        """``position`` (n, 3), ``mass``, ``id``, ``charge`` (n,), each viewing the records in place."""
    def record(self, i: int) -> tuple[list[float], float, int, float]: ...
    def scale_masses(self, factor: float) -> None: ...
