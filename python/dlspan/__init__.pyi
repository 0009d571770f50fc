"""dlspan: zero-copy NumPy, PyTorch and JAX exchange with typed, checked DLPack views.

``dlspan.examples`` holds functions written with dlspan's typed view arguments (for extension
authors to copy), ``dlspan.diagnostics`` what tests and debugging ask of the Python layer.

Errors are the array API's exceptions (BufferError, TypeError, ValueError) carrying ``kind`` (the
name of dlspan's error variant) and, where the error has them, ``expected`` and ``found``; an error
about an argument carries the note ``while processing 'x'``.
"""

from typing import Any, Protocol, SupportsComplex, SupportsFloat, SupportsIndex, TypeAlias, final

from . import diagnostics as diagnostics, examples as examples

class InvalidStreamError(ValueError, RuntimeError):
    """A ``stream`` the tensor's device cannot honour (``__dlpack__(stream=...)``): a ValueError, and
    a RuntimeError as NumPy and JAX raise for it."""

class _DlpackProducer(Protocol):
    def __dlpack__(self, *, stream: int | None = ..., max_version: tuple[int, int] | None = ...) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...

DType: TypeAlias = str | type | Any
"""A data type: NumPy's name (``"float32"``, ``"bfloat16"``, ``"float8_e4m3fn"``), a NumPy dtype or
scalar type, a PyTorch dtype, or the builtins ``bool``, ``int``, ``float``, ``complex``."""

Device: TypeAlias = str | tuple[int, int]
"""``"cpu"``, ``"cuda:0"``, … or DLPack's ``(device_type, device_id)``."""

Shape: TypeAlias = SupportsIndex | tuple[SupportsIndex, ...] | list[SupportsIndex]

@final
class Tensor:
    """Memory of any data type, rank and device owned by Rust, exchanged without copying through
    ``__dlpack__``, the DLPack C exchange API and the buffer protocol."""

    __dlpack_c_exchange_api__: Any
    """The DLPack 1.3 C exchange table (a ``dlpack_exchange_api`` capsule)."""

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def strides(self) -> tuple[int, ...]:
        """In elements (PyTorch's convention; NumPy's ``strides`` are in bytes)."""
    @property
    def dtype(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str:
        """The values, summarised and aligned as NumPy prints arrays: ``Tensor([0., 1.5], dtype=float32)``;
        shape and data type only for memory the host cannot read."""
    def tolist(self) -> Any:
        """Nested lists of Python scalars (``bool``, ``int``, ``float``, ``complex``); a 0-d tensor's value."""
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickling by copy: the compact bytes, dtype, shape and flags."""
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        """NumPy's array protocol: a NumPy array sharing the memory, or a copy for ``copy=True`` or
        another ``dtype`` (ValueError with ``copy=False``)."""
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """A DLPack capsule: legacy for no ``max_version`` (BufferError for read-only memory),
        versioned ``min(max_version, (1, 3))`` otherwise; ``copy=True`` copies and sets IS_COPIED."""
    def __buffer__(self, flags: int, /) -> memoryview: ...

def zeros(shape: Shape, dtype: DType | None = None, *, like: Any = None) -> Tensor | Any:
    """A zeroed row-major CPU tensor (float32 by default) in a 64-byte-aligned buffer; with ``like``
    (a NumPy array, a PyTorch tensor, a JAX array), of its type, as NumPy's ``like=``."""

def arange(n: int, dtype: DType | None = None, *, like: Any = None) -> Tensor | Any:
    """``0, 1, …, n-1`` (int64 by default); with ``like``, of its type."""

def from_dlpack(x: _DlpackProducer | Any, *, copy: bool | None = None, device: Device | None = None) -> Tensor:
    """Any DLPack producer (NumPy, PyTorch, JAX, a capsule) as a Tensor; ``copy=True`` always copies,
    ``copy=False`` never does."""

def add(a: Any, b: Any, out: Any = None) -> Any:
    """``out = a + b`` for tensors of any framework, one dtype, one shape, any strides (returns None);
    without ``out``, a new tensor of ``a``'s type (NumPy, PyTorch, JAX; else a Tensor), returned.
    On a CUDA device, enqueued on the caller's stream."""

def mul(a: Any, b: Any, out: Any = None) -> Any:
    """``out = a * b``; without ``out``, a new tensor of ``a``'s type, returned."""

def scale_(x: Any, alpha: bool | int | float | complex | SupportsIndex | SupportsFloat | SupportsComplex) -> None:
    """``x *= alpha`` in place; ``alpha`` of no higher kind than ``x`` (bool < int < float < complex;
    NumPy scalars and 0-d arrays or tensors by their dtype's kind)."""

def sum(x: Any) -> int | float | complex:
    """The sum of every element: NumPy's pairwise summation in the dtype's accumulator (float32 for
    float32 and smaller floats, wrapping 64-bit integers); packed FP4/FP6 data included."""

def copy(src: Any, out: Any) -> None:
    """``out[...] = src`` for arrays of one dtype and shape, any strides, in host memory or on one CUDA
    device (enqueued on the caller's stream)."""

def cast(x: Any, dtype: DType | None = None, *, out: Any = None) -> Any:
    """``x`` rounded once into ``dtype`` (or ``out``'s dtype): into ``out`` (returns None), or a new
    array of ``x``'s framework and memory, returned; bit for bit the same on a CUDA device."""

def signature(x: Any) -> int:
    """A hashable dispatch key: dtype (bits 0-31), rank (32-39), layout class (40-41: row-major,
    column-major, positive strides, other), device type (42-49) and id (50-57), read-only (58)."""
