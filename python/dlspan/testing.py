"""A conformance kit for DLPack producers.

``check_producer(factory)`` runs the protocol's rules against the objects ``factory`` makes —
their ``__dlpack__``, ``__dlpack_device__`` and, where the type has one, the DLPack C exchange
table ``__dlpack_c_exchange_api__`` — and returns a :class:`Report` listing every rule with its
status (``"passed"``, ``"failed"``, ``"skipped"`` or ``"info"``) and why. ``assert_conforms``
raises one ``AssertionError`` listing every failure at once, for pytest::

    import numpy as np
    import dlspan.testing

    def test_my_arrays_conform():
        dlspan.testing.assert_conforms(my_framework.asarray)

The factory
-----------
``factory(source)`` receives a NumPy array chosen by the kit — random shapes (rank 0 to 4, empty
axes included) and layouts (row-major, column-major, sliced with steps and an offset, permuted
axes, reversed axes, broadcast axes, read-only memory, memory not aligned for the element) of
every dtype in ``dtypes`` — and returns a fresh object of the producer holding the same values,
sharing or copying the memory, in any layout it likes: ``lambda source: source`` (NumPy),
``torch.from_numpy``, ``jax.numpy.asarray`` and ``dlspan.from_dlpack`` all fit. A factory that
cannot hold a source raises (any exception): that example is skipped and listed. A factory taking
no argument is called as ``factory()`` for each fresh object instead, and the kit checks the one
layout it makes. The rules about capsules, deleters, flags, ``copy``, ``dl_device`` and
``stream`` use the basic example, float32 of shape (3, 4), row-major, which the factory must
accept; the rules about layouts and values use every example.

The values the object holds are read independently of DLPack by ``values(obj)``, NumPy's
``asarray`` by default (``__array__``, the buffer protocol), and compared bit for bit with what
the capsule's ``data``, ``byte_offset``, ``shape`` and ``strides`` reach. Pass ``values=`` for a
producer NumPy cannot read.

How the kit watches deleters
----------------------------
To count deleter calls the kit, acting as a consumer, replaces the ``deleter`` field of each
managed tensor it inspects with a counting function that calls the original (with the GIL held,
as a capsule destructor does). A producer whose capsule destructor frees the tensor without going
through the field is seen as calling it zero times. The kit only reads the producer's memory.

Only host (``kDLCPU``) memory is read; rules about values are skipped for other devices. The
kit needs NumPy; it uses no part of dlspan, so it checks dlspan's own ``Tensor`` like any other.
Capsules are released by reference counting as soon as the kit drops them (no garbage collection
is forced, so a producer whose capsules sit in reference cycles is seen as not releasing them).
"""

import ctypes
import dataclasses
import inspect
import sys
import typing

import numpy

__all__ = ["RULES", "Report", "RuleResult", "assert_conforms", "check_producer"]

# ----------------------------------------------------------------------------------------------
# The rules.

RULES: dict[str, str] = {
    "device.tuple": "__dlpack_device__() returns a pair of integers (device type, device id)",
    "device.capsule": "every capsule's device is the one __dlpack_device__() reports",
    "export.all": (
        "every object the factory makes exports with max_version=(1, 3), or refuses with BufferError (the "
        "basic example, float32 of shape (3, 4), must export)"
    ),
    "version.none": "__dlpack__() gives a legacy 'dltensor' capsule (or refuses with BufferError)",
    "version.0": "max_version=(0, 8) gives a legacy 'dltensor' capsule (or refuses with BufferError)",
    "version.1.0": "max_version=(1, 0) gives a 'dltensor_versioned' capsule of major version 1",
    "version.1.3": "max_version=(1, 3) gives a 'dltensor_versioned' capsule of major version 1",
    "version.2.0": "max_version=(2, 0) gives a versioned capsule of a major version it supports (1)",
    "version.written": "the versions written for each max_version asked (information)",
    "deleter.present": "every managed tensor has a deleter (information: DLPack allows none)",
    "deleter.unconsumed": "a capsule collected unconsumed calls its tensor's deleter exactly once",
    "deleter.consumed": "a capsule renamed 'used_…' by its consumer never calls the deleter",
    "deleter.pending_exception": (
        "a capsule collected while an exception is being raised keeps the exception and releases "
        "what it holds"
    ),
    "flags.known": "no flag bit beyond READ_ONLY, IS_COPIED and IS_SUBBYTE_TYPE_PADDED is set",
    "flags.read_only": "a versioned capsule of read-only memory sets READ_ONLY",
    "flags.read_only_legacy": "a legacy capsule of read-only memory is refused (BufferError)",
    "flags.is_copied": "copy=True sets IS_COPIED",
    "flags.not_copied": "an export sharing the object's memory does not set IS_COPIED",
    "copy.true": "copy=True exports fresh memory holding the same values",
    "copy.false": "copy=False exports the object's own memory",
    "dl_device.own": "dl_device=<the object's device> is accepted and shares the memory",
    "dl_device.other": "dl_device=<another device> gives a capsule there or raises BufferError",
    "dl_device.other_no_copy": "dl_device=<another device>, copy=False raises BufferError or ValueError",
    "stream.none": "stream=None is accepted",
    "stream.invalid": "a stream the device cannot have is refused (0 everywhere; any but -1 on the host)",
    "stream.minus_one": "whether stream=-1 is accepted on the host (information)",
    "tensor.shape": "the capsule's shape is the object's",
    "tensor.dtype": "the capsule's dtype is the object's",
    "tensor.strides": "strides are given (not NULL) for ndim > 0 in versioned capsules of version 1.2 on",
    "tensor.values": "the bytes data + byte_offset and strides reach hold the object's values",
    "align.element": "the first element is aligned to the element's alignment",
    "align.64": "how many first elements are 64-byte aligned (information)",
    "exchange.table": "the type's __dlpack_c_exchange_api__ is a 'dlpack_exchange_api' capsule",
    "exchange.version": "the table's header is of major version 1",
    "exchange.functions": "the table's required function pointers are not NULL",
    "exchange.dltensor": "dltensor_from_py_object_no_sync fills the capsule's DLTensor",
    "exchange.managed": (
        "managed_tensor_from_py_object_no_sync gives the capsule's tensor and flags, and its deleter "
        "releases what it holds"
    ),
    "exchange.to_py_object": (
        "managed_tensor_to_py_object_no_sync gives an object holding the values, which calls the "
        "deleter exactly once when collected"
    ),
    "exchange.allocator": (
        "managed_tensor_allocator allocates what the prototype asks, or fails through SetError alone"
    ),
    "exchange.stream": "current_work_stream(kDLCPU, 0) succeeds and gives NULL",
}
"""Every rule the kit checks, by id: what it requires."""

_PASSED, _FAILED, _SKIPPED, _INFO = "passed", "failed", "skipped", "info"


@dataclasses.dataclass(frozen=True)
class RuleResult:
    """The outcome of one rule: ``status`` is ``"passed"``, ``"failed"``, ``"skipped"`` or
    ``"info"`` (a fact reported, never a failure); ``detail`` says why."""

    rule: str
    status: str
    detail: str

    def __str__(self) -> str:
        return f"{self.status.upper():8} {self.rule}: {self.detail}"


class Report:
    """What ``check_producer`` found: one :class:`RuleResult` per rule of :data:`RULES`."""

    def __init__(self, producer: str, results: typing.Sequence[RuleResult]) -> None:
        self.producer = producer
        self.results = tuple(results)

    def __getitem__(self, rule: str) -> RuleResult:
        for result in self.results:
            if result.rule == rule:
                return result
        raise KeyError(rule)

    def __iter__(self) -> typing.Iterator[RuleResult]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def failures(self) -> tuple[RuleResult, ...]:
        """The rules that failed."""
        return tuple(r for r in self.results if r.status == _FAILED)

    @property
    def failed(self) -> frozenset[str]:
        """The ids of the rules that failed."""
        return frozenset(r.rule for r in self.failures)

    @property
    def ok(self) -> bool:
        """No rule failed."""
        return not self.failures

    def __str__(self) -> str:
        counts = {s: sum(r.status == s for r in self.results) for s in (_PASSED, _FAILED, _SKIPPED, _INFO)}
        head = f"DLPack conformance of {self.producer}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
        return "\n".join([head, *(f"  {r}" for r in self.results)])

    def __repr__(self) -> str:
        return f"<Report of {self.producer}: {len(self.failures)} failed of {len(self.results)}>"


# ----------------------------------------------------------------------------------------------
# The ABI, read through ctypes.

_py = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle)
_get_name = _py.PyCapsule_GetName
_get_name.restype, _get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_get_pointer = _py.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_set_name = _py.PyCapsule_SetName
_set_name.restype, _set_name.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_is_capsule = _py.PyCapsule_IsValid
_is_capsule.restype, _is_capsule.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_decref = _py.Py_DecRef
_decref.restype, _decref.argtypes = None, [ctypes.py_object]

# PyCapsule_SetName keeps the pointer it is given: these bytes live as long as the module.
_USED = {b"dltensor": b"used_dltensor", b"dltensor_versioned": b"used_dltensor_versioned"}

_READ_ONLY, _IS_COPIED, _IS_SUBBYTE_TYPE_PADDED = 1, 2, 4
_CPU, _CUDA, _CUDA_HOST, _ROCM = 1, 2, 3, 10


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _Versioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


class _Legacy(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)


class _ExchangeAPI(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("prev_api", ctypes.c_void_p),
        ("managed_tensor_allocator", ctypes.c_void_p),
        ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
        ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
        ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
        ("current_work_stream", ctypes.c_void_p),
    ]


# The table's functions take Python objects: they are called with the GIL held (PYFUNCTYPE),
# which also turns an exception they set into a Python exception here.
_ALLOCATOR = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(_DLTensor), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, _SET_ERROR
)
_MANAGED_FROM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
_MANAGED_TO = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_DLTENSOR_FROM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(_DLTensor))
_WORK_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_CALL_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)

# (code, bits) of the dtypes NumPy (and ml_dtypes) name.
_DTYPE_CODES = {
    "bfloat16": (4, 16),
    "float8_e3m4": (7, 8),
    "float8_e4m3": (8, 8),
    "float8_e4m3b11fnuz": (9, 8),
    "float8_e4m3fn": (10, 8),
    "float8_e4m3fnuz": (11, 8),
    "float8_e5m2": (12, 8),
    "float8_e5m2fnuz": (13, 8),
    "float8_e8m0fnu": (14, 8),
    "float6_e2m3fn": (15, 6),
    "float6_e3m2fn": (16, 6),
    "float4_e2m1fn": (17, 4),
}


def _dlpack_dtype(dtype: numpy.dtype):
    """DLPack's (code, bits, lanes) of a NumPy dtype, or None where DLPack has none."""
    if dtype.name in _DTYPE_CODES:
        code, bits = _DTYPE_CODES[dtype.name]
        return (code, bits, 1)
    code = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}.get(dtype.kind)
    if code is None or (dtype.kind == "f" and dtype.itemsize > 8) or (dtype.kind == "c" and dtype.itemsize > 16):
        return None
    return (code, dtype.itemsize * 8, 1)


# The most axes the kit reads from a capsule (NumPy's limit).
_MAX_NDIM = 64


@dataclasses.dataclass
class _Tensor:
    """The fields of a DLTensor, copied out."""

    data: int
    device: tuple[int, int]
    dtype: tuple[int, int, int]
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    byte_offset: int

    @classmethod
    def read(cls, t: _DLTensor) -> "_Tensor":
        ndim = t.ndim
        # The shape and strides arrays are read only for a plausible ndim: a capsule whose ndim is
        # wrong would have the kit read past them (and crash on an unmapped page).
        if not 0 <= ndim <= _MAX_NDIM:
            raise _RuleFailure(f"ndim is {ndim}: negative or above {_MAX_NDIM} axes (the shape is not read)")
        if ndim and not t.shape:
            raise _RuleFailure(f"shape is NULL for ndim {ndim}")
        shape = tuple(t.shape[i] for i in range(ndim)) if ndim else ()
        strides = tuple(t.strides[i] for i in range(ndim)) if t.strides else None
        return cls(t.data or 0, (t.device_type, t.device_id), (t.code, t.bits, t.lanes), shape, strides, t.byte_offset)

    @property
    def itemsize(self) -> int:
        code, bits, lanes = self.dtype
        return (bits * lanes + 7) // 8

    @property
    def element_strides(self) -> tuple[int, ...]:
        """The strides, row-major where NULL (what NULL meant before DLPack 1.2)."""
        if self.strides is not None:
            return self.strides
        strides, step = [], 1
        for extent in reversed(self.shape):
            strides.append(step)
            step *= extent
        return tuple(reversed(strides))

    @property
    def first(self) -> int:
        return self.data + self.byte_offset

    @property
    def numel(self) -> int:
        n = 1
        for extent in self.shape:
            n *= extent
        return n

    def byte_range(self) -> tuple[int, int] | None:
        """[low, high) of the bytes the elements take; None when empty."""
        if self.numel == 0:
            return None
        low = high = 0
        for extent, stride in zip(self.shape, self.element_strides):
            reach = (extent - 1) * stride * self.itemsize
            low, high = (low + reach, high) if reach < 0 else (low, high + reach)
        return self.first + low, self.first + high + self.itemsize

    def same_as(self, other: "_Tensor") -> str | None:
        """Why two DLTensors describe different elements, or None."""
        for name in ("device", "dtype", "shape"):
            if getattr(self, name) != getattr(other, name):
                return f"{name} {getattr(self, name)} != {getattr(other, name)}"
        if self.numel == 0:
            return None
        mine = [s for n, s in zip(self.shape, self.element_strides) if n > 1]
        theirs = [s for n, s in zip(other.shape, other.element_strides) if n > 1]
        if mine != theirs:
            return f"strides {self.element_strides} != {other.element_strides}"
        if self.first != other.first:
            return f"first element at {self.first:#x} != {other.first:#x}"
        return None

    def read_bytes(self) -> numpy.ndarray:
        """A copy of the elements as bytes, shape + (itemsize,) (host memory only)."""
        itemsize = self.itemsize
        shape = self.shape + (itemsize,)
        if self.numel == 0:
            return numpy.zeros(shape, numpy.uint8)
        interface = {
            "shape": shape,
            "typestr": "|u1",
            "data": (self.first, True),
            "strides": tuple(s * itemsize for s in self.element_strides) + (1,),
            "version": 3,
        }
        holder = type("_Bytes", (), {"__array_interface__": interface})()
        return numpy.array(holder, copy=True)


@dataclasses.dataclass
class _Export:
    """A capsule and what it holds (read while it is unconsumed)."""

    capsule: object
    name: str
    pointer: int
    version: tuple[int, int] | None
    flags: int
    deleter: int
    tensor: _Tensor

    @property
    def versioned(self) -> bool:
        return self.name == "dltensor_versioned"

    def __repr__(self) -> str:
        return f"<{self.name} {self.version} flags={self.flags}>"


def _is_pycapsule(obj) -> bool:
    return type(obj).__name__ == "PyCapsule" and type(obj).__module__ == "builtins"


def _read_capsule(capsule) -> _Export:
    if not _is_pycapsule(capsule):
        raise _RuleFailure(f"__dlpack__ returned {type(capsule).__name__}, not a capsule")
    raw = _get_name(capsule)
    name = raw.decode() if raw else ""
    if name not in ("dltensor", "dltensor_versioned"):
        raise _RuleFailure(f"capsule named {name!r}, not 'dltensor' or 'dltensor_versioned'")
    pointer = _get_pointer(capsule, raw)
    if not pointer:
        raise _RuleFailure("the capsule holds a NULL pointer")
    if name == "dltensor_versioned":
        managed = _Versioned.from_address(pointer)
        if managed.major != 1:
            # Only the version may be read of another major version.
            raise _RuleFailure(f"versioned capsule of version {managed.major}.{managed.minor}: the kit reads 1.x")
        return _Export(
            capsule, name, pointer, (managed.major, managed.minor), managed.flags, managed.deleter or 0,
            _Tensor.read(managed.dl_tensor),
        )
    managed = _Legacy.from_address(pointer)
    return _Export(capsule, name, pointer, None, 0, managed.deleter or 0, _Tensor.read(managed.dl_tensor))


class _Counter:
    """Calls of one managed tensor's deleter, counted by a function put in its place."""

    # Every counting function ever made stays alive: a producer may call a deleter late.
    _alive: typing.ClassVar[list] = []

    def __init__(self, pointer: int, versioned: bool) -> None:
        struct = (_Versioned if versioned else _Legacy).from_address(pointer)
        self.original = struct.deleter
        self.calls = 0
        self.errors: list[str] = []
        original = _CALL_DELETER(self.original) if self.original else None

        def counting(address):
            self.calls += 1
            if original is not None and self.calls == 1:
                try:
                    original(address)
                except BaseException as error:  # noqa: BLE001 - reported, never raised into C
                    self.errors.append(f"{type(error).__name__}: {error}")

        self._function = _DELETER(counting)
        _Counter._alive.append(self._function)
        struct.deleter = ctypes.cast(self._function, ctypes.c_void_p).value
        self._struct = struct

    def call(self) -> None:
        """Call the deleter as its owner does."""
        _CALL_DELETER(self._struct.deleter)(ctypes.addressof(self._struct))


class _RuleFailure(Exception):
    """A rule failed; the message says why."""


# ----------------------------------------------------------------------------------------------
# The examples the factory is asked for.


@dataclasses.dataclass
class _Example:
    label: str
    source: numpy.ndarray | None
    obj: object
    read_only_source: bool


_DEFAULT_DTYPES = (
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip
_LAYOUTS = ("C", "F", "sliced", "permuted", "reversed", "broadcast", "read-only", "unaligned")


def _values_of(dtype: numpy.dtype, shape, rng) -> numpy.ndarray:
    low, high = {"b": (0, 2), "u": (0, 250)}.get(dtype.kind, (-99, 99))
    values = numpy.array(rng.integers(low, high, size=shape))
    if dtype.kind == "c":
        values = values + 1j * numpy.array(rng.integers(low, high, size=shape))
    return numpy.array(values, dtype=dtype)  # an array for rank 0 too (arithmetic gives scalars)


def _source(dtype: numpy.dtype, shape: tuple[int, ...], layout: str, rng) -> numpy.ndarray:
    if layout == "F":
        return numpy.asfortranarray(_values_of(dtype, shape, rng))
    if layout == "sliced" and shape:
        base = _values_of(dtype, tuple(2 * n + 1 for n in shape), rng)
        return base[tuple(slice(1, None, 2) for _ in shape)]
    if layout == "permuted" and len(shape) > 1:
        order = rng.permutation(len(shape))
        base = _values_of(dtype, tuple(shape[i] for i in numpy.argsort(order)), rng)
        return base.transpose(tuple(int(i) for i in numpy.argsort(numpy.argsort(order))))
    if layout == "reversed" and shape:
        return _values_of(dtype, shape, rng)[::-1]
    if layout == "broadcast" and shape:
        narrow = tuple(1 if i % 2 == 0 else n for i, n in enumerate(shape))
        return numpy.broadcast_to(_values_of(dtype, narrow, rng), shape)
    if layout == "unaligned" and dtype.itemsize > 1:
        values = _values_of(dtype, shape, rng)
        unaligned = numpy.zeros(values.nbytes + 1, numpy.uint8)[1:].view(dtype).reshape(shape)
        unaligned[...] = values
        return unaligned
    source = _values_of(dtype, shape, rng)
    if layout == "read-only":
        source.flags.writeable = False
    return source


def _byte_bounds(a: numpy.ndarray) -> tuple[int, int] | None:
    if a.size == 0:
        return None
    low = high = a.__array_interface__["data"][0]
    for extent, stride in zip(a.shape, a.strides):
        reach = (extent - 1) * stride
        low, high = (low + reach, high) if reach < 0 else (low, high + reach)
    return low, high + a.itemsize


def _overlap(a, b) -> bool:
    return a is not None and b is not None and a[0] < b[1] and b[0] < a[1]


# ----------------------------------------------------------------------------------------------
# The checker.


class _Checker:
    """One run of the kit. Each check records outcomes against rules; a rule's result is failed if
    any check of it failed, passed if any passed, information if it only informs, else skipped."""

    def __init__(self, factory, dtypes, examples, seed, values):
        self.factory = factory
        self.values = values if values is not None else numpy.asarray
        self.dtypes = [numpy.dtype(d) for d in dtypes]
        self.examples = examples
        self.rng = numpy.random.default_rng(seed)
        self.takes_source = _takes_argument(factory)
        self.outcomes: dict[str, list[tuple[str, str]]] = {rule: [] for rule in RULES}
        self.skipped_examples: list[str] = []
        self.aligned64 = [0, 0]
        self.base: _Example | None = None

    # Recording.
    def passed(self, rule, detail=""):
        self.outcomes[rule].append((_PASSED, detail))

    def failed(self, rule, detail):
        self.outcomes[rule].append((_FAILED, detail))

    def skipped(self, rule, detail):
        self.outcomes[rule].append((_SKIPPED, detail))

    def info(self, rule, detail):
        self.outcomes[rule].append((_INFO, detail))

    def expect(self, rule, condition, failure, success=""):
        if condition:
            self.passed(rule, success)
        else:
            self.failed(rule, failure)

    def results(self) -> list[RuleResult]:
        out = []
        for rule, outcomes in self.outcomes.items():
            statuses = [s for s, _ in outcomes]
            if not outcomes:
                out.append(RuleResult(rule, _SKIPPED, "not reached"))
            elif _FAILED in statuses:
                details = _unique(d for s, d in outcomes if s == _FAILED)
                more = f" (and {len(details) - 3} more)" if len(details) > 3 else ""
                out.append(RuleResult(rule, _FAILED, "; ".join(details[:3]) + more))
            elif _PASSED in statuses:
                details = _unique(d for s, d in outcomes if s == _PASSED and d)
                skipped = _unique(d for s, d in outcomes if s == _SKIPPED)
                note = "; ".join(details[:3]) or f"{statuses.count(_PASSED)} checked"
                if skipped:
                    note += f"; {len(skipped)} not applicable: " + "; ".join(skipped[:2])
                    note += " …" if len(skipped) > 2 else ""
                out.append(RuleResult(rule, _PASSED, note))
            elif _INFO in statuses:
                out.append(RuleResult(rule, _INFO, "; ".join(_unique(d for s, d in outcomes if s == _INFO))))
            else:
                out.append(RuleResult(rule, _SKIPPED, "; ".join(_unique(d for _, d in outcomes)[:3])))
        return out

    # Objects.
    def make(self, dtype="float32", shape=(3, 4), layout="C") -> _Example | None:
        source = _source(numpy.dtype(dtype), shape, layout, self.rng) if self.takes_source else None
        label = "factory()" if source is None else f"{source.dtype} {shape} {layout}"
        try:
            obj = self.factory() if source is None else self.factory(source)
        except Exception as error:  # noqa: BLE001 - a factory refuses what it cannot hold
            self.skipped_examples.append(f"{label}: {type(error).__name__}")
            return None
        return _Example(label, source, obj, source is not None and not source.flags.writeable)

    def random_examples(self) -> list[_Example]:
        made = []
        for i in range(self.examples):
            dtype = self.dtypes[i % len(self.dtypes)]
            layout = _LAYOUTS[i % len(_LAYOUTS)]
            rank = int(self.rng.integers(0, 5))
            shape = tuple(int(n) for n in self.rng.integers(0 if i % 5 == 4 else 1, 5, size=rank))
            example = self.make(dtype, shape, layout)
            if example is not None:
                made.append(example)
        return made

    def own_values(self, example: _Example) -> numpy.ndarray | None:
        try:
            values = self.values(example.obj)
        except Exception:  # noqa: BLE001 - the values are then not compared
            return None
        values = numpy.asarray(values)
        return None if values.dtype == object else values

    def read_only_memory(self, example: _Example, export: _Export) -> str | None:
        """Why the kit knows the capsule's memory is read-only, or None."""
        reach = export.tensor.byte_range()
        if example.read_only_source and _overlap(reach, _byte_bounds(example.source)):
            return "the factory's object shares the read-only memory it was given"
        values = self.own_values(example)
        if values is not None and not values.flags.writeable and _overlap(reach, _byte_bounds(values)):
            return "the object exposes this memory read-only"
        return None

    # Running.
    def run(self) -> None:
        base = self.base = self.make()
        if base is None:
            # The factory must accept the basic example: a factory that always raises would
            # otherwise pass every rule by skipping it.
            refused = self.skipped_examples[-1].partition(": ")[2] if self.skipped_examples else "an error"
            detail = f"the factory refused the basic example (float32, shape (3, 4), row-major) with {refused}"
            self.failed("export.all", detail)
            for rule in RULES:
                if rule != "export.all":
                    self.skipped(rule, detail)
            return
        examples = [base, *self.random_examples()]
        read_only = self.make(layout="read-only")
        if read_only is not None:
            examples.append(read_only)
        # Each group charges an exception the kit did not expect to the rule named beside it.
        groups = [
            (self.check_device, base, "device.tuple"),
            (self.check_versions, base, "export.all"),
            (self.check_deleters, None, "deleter.unconsumed"),
            (self.check_copies, base, "copy.true"),
            (self.check_dl_device, base, "dl_device.own"),
            (self.check_streams, base, "stream.none"),
        ]
        for check, arg, rule in groups:
            self.guard(check, arg, rule)
        for example in examples:
            self.guard(self.check_example, example, "export.all")
        self.guard(self.check_exchange, examples, "exchange.table")
        for refused in self.skipped_examples:
            self.skipped("export.all", f"the factory refused {refused}")
        aligned, total = self.aligned64
        if total:
            self.info("align.64", f"{aligned} of {total} first elements 64-byte aligned")

    def guard(self, check, arg, rule) -> None:
        try:
            check(arg)
        except _RuleFailure as failure:
            named, _, detail = str(failure).partition("|")
            self.failed(named if named in RULES else rule, detail or str(failure))
        except Exception as error:  # noqa: BLE001 - a producer's surprise is a failure, not a crash
            self.failed(rule, f"{type(error).__name__}: {_short(error)}")

    def export(self, rule, obj, **kwargs) -> _Export:
        try:
            capsule = obj.__dlpack__(**kwargs)
        except Exception as error:
            raise _RuleFailure(f"{rule}|__dlpack__({_kwargs(kwargs)}) raised {type(error).__name__}: {_short(error)}")
        try:
            return _read_capsule(capsule)
        except _RuleFailure as failure:
            raise _RuleFailure(f"{rule}|__dlpack__({_kwargs(kwargs)}): {failure}")

    def refused(self, rule, example: _Example, error: BaseException) -> None:
        """A BufferError, the way to refuse data that cannot be exported: allowed, except for the
        basic example."""
        detail = f"{example.label}: refused with BufferError: {_short(error)}"
        if example is self.base:
            self.failed(rule, detail)
        else:
            self.skipped(rule, detail)

    def fresh(self) -> object:
        example = self.make()
        if example is None:
            raise _RuleFailure("export.all|the factory refused a fresh basic example")
        return example.obj

    # -- device
    def check_device(self, base: _Example) -> None:
        device = base.obj.__dlpack_device__()
        ok = isinstance(device, tuple) and len(device) == 2 and all(_is_int(v) for v in device)
        self.expect("device.tuple", ok, f"__dlpack_device__() returned {device!r}", f"{_device(device)}")

    # -- versions and names
    def check_versions(self, base: _Example) -> None:
        obj = self.fresh()
        written = []
        for rule, max_version in (("version.none", None), ("version.0", (0, 8))):
            kwargs = {} if max_version is None else {"max_version": max_version}
            try:
                capsule = obj.__dlpack__(**kwargs)
            except BufferError:
                self.passed(rule, "refused with BufferError (no legacy capsules)")
                continue
            except Exception as error:  # noqa: BLE001
                self.failed(rule, f"__dlpack__({_kwargs(kwargs)}) raised {type(error).__name__}: {_short(error)}")
                continue
            try:
                export = _read_capsule(capsule)
            except _RuleFailure as failure:
                self.failed(rule, str(failure))
                continue
            self.expect(rule, export.name == "dltensor", f"gave a {export.name!r} capsule", "legacy capsule")
        for rule, max_version in (("version.1.0", (1, 0)), ("version.1.3", (1, 3)), ("version.2.0", (2, 0))):
            try:
                export = self.export(rule, obj, max_version=max_version)
            except _RuleFailure as failure:
                self.failed(rule, str(failure).partition("|")[2])
                continue
            if not export.versioned:
                self.failed(rule, f"asked max_version={max_version}, gave a legacy 'dltensor' capsule")
                written.append(f"{max_version} -> legacy")
                continue
            major, minor = export.version
            written.append(f"{max_version} -> {major}.{minor}")
            self.expect(rule, major == 1 and major <= max_version[0], f"wrote version {major}.{minor}",
                        f"version {major}.{minor}")
            if max_version[0] == 1 and minor > max_version[1]:
                self.info("version.written", f"asked {max_version}, wrote {major}.{minor}: allowed (the "
                          "consumer checks the version), but a consumer of the version asked may not know "
                          "every value the newer one may hold")
        self.info("version.written", ", ".join(written))

    # -- deleters
    def check_deleters(self, _) -> None:
        rules = ("deleter.unconsumed", "deleter.consumed", "deleter.pending_exception")
        for form, kwargs in (("versioned", {"max_version": (1, 3)}), ("legacy", {})):
            try:
                probe = _read_capsule(self.fresh().__dlpack__(**kwargs))
            except Exception as error:  # noqa: BLE001 - judged by the version rules
                for rule in rules:
                    self.skipped(rule, f"{form}: no capsule ({type(error).__name__})")
                continue
            if probe.versioned != (form == "versioned"):
                for rule in rules:
                    self.skipped(rule, f"{form}: the producer gives no {form} capsule")
                continue
            if not probe.deleter:
                self.info("deleter.present", f"{form}: no deleter")
                for rule in rules:
                    self.skipped(rule, f"{form}: no deleter to count")
                continue
            self.info("deleter.present", f"{form}: yes")
            del probe
            self.deleter_unconsumed(form, kwargs)
            self.deleter_consumed(form, kwargs)
            self.deleter_pending(form, kwargs)

    def counted(self, kwargs) -> tuple[object, _Counter]:
        export = self.export("deleter.unconsumed", self.fresh(), **kwargs)
        return export.capsule, _Counter(export.pointer, export.versioned)

    def deleter_unconsumed(self, form, kwargs) -> None:
        capsule, counter = self.counted(kwargs)
        del capsule
        self.expect("deleter.unconsumed", counter.calls == 1 and not counter.errors,
                    f"{form}: the deleter ran {counter.calls} times{_errors(counter)}"
                    + (" (the destructor frees the tensor without its deleter field, or leaks it)"
                       if counter.calls == 0 else ""), form)

    def deleter_consumed(self, form, kwargs) -> None:
        capsule, counter = self.counted(kwargs)
        name = _get_name(capsule)
        _set_name(capsule, _USED[name])
        del capsule
        if counter.calls:
            self.failed("deleter.consumed", f"{form}: the destructor of a consumed capsule ran the deleter")
            return
        counter.call()
        self.expect("deleter.consumed", counter.calls == 1 and not counter.errors,
                    f"{form}: the deleter ran {counter.calls} times{_errors(counter)}", form)

    def deleter_pending(self, form, kwargs) -> None:
        # The producer's own deleter runs here, not a counting one: Python code cannot run while an
        # exception is pending (CPython replaces it with a SystemError), and deleters need not be
        # written for that. What a consumer sees is judged: the exception, and the references the
        # capsule held (where it held the object's).
        class Pending(Exception):
            pass

        obj = self.fresh()
        before = sys.getrefcount(obj)
        pending = [obj.__dlpack__(**kwargs)]
        holds_object = sys.getrefcount(obj) > before

        def exports():
            yield pending.pop()  # no name in this frame holds it: tuple()'s list is its only owner
            raise Pending

        unraisable = []
        hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
        try:
            # tuple() drops the capsule it collected while the generator's exception is pending.
            tuple(exports())
            raised = None
        except Pending:
            raised = Pending
        except BaseException as error:  # noqa: BLE001
            raised = error
        finally:
            sys.unraisablehook = hook
        problems = []
        if raised is not Pending:
            problems.append(f"the pending exception was replaced by {raised!r}")
        if unraisable:
            problems.append(f"the destructor reported {unraisable[0].exc_type.__name__}: {unraisable[0].exc_value}")
        if holds_object and sys.getrefcount(obj) != before:
            problems.append("the capsule's reference to the object was not released")
        released = "the object released" if holds_object else "what the deleter frees is not visible from Python"
        self.expect("deleter.pending_exception", not problems, f"{form}: " + "; ".join(problems),
                    f"{form}: exception kept, {released}")

    # -- copies
    def check_copies(self, base: _Example) -> None:
        obj = self.fresh()
        shared = self.export("copy.false", obj, max_version=(1, 3))
        shared_values = shared.tensor.read_bytes() if _host(shared) else None
        copied = self.export("copy.true", obj, max_version=(1, 3), copy=True)
        if not _host(copied) or shared_values is None:
            self.skipped("copy.true", "memory not on the host")
        else:
            fresh = not _overlap(copied.tensor.byte_range(), shared.tensor.byte_range())
            same = numpy.array_equal(copied.tensor.read_bytes(), shared_values)
            self.expect("copy.true", fresh and same,
                        "the copy shares the object's memory" if not fresh else "the copy holds other values")
        if copied.versioned:
            self.expect("flags.is_copied", copied.flags & _IS_COPIED, "copy=True did not set IS_COPIED")
        else:
            self.failed("flags.is_copied", "copy=True gave a legacy capsule, which cannot say IS_COPIED")
        no_copy = self.export("copy.false", obj, max_version=(1, 3), copy=False)
        same = no_copy.tensor.same_as(shared.tensor)
        self.expect("copy.false", same is None, f"copy=False differs from copy=None: {same}")
        for export in (shared, no_copy):
            if export.versioned:
                self.expect("flags.not_copied", not export.flags & _IS_COPIED, "IS_COPIED set on shared memory")
            else:
                self.skipped("flags.not_copied", "legacy capsules carry no flags")

    # -- dl_device
    def check_dl_device(self, base: _Example) -> None:
        obj = self.fresh()
        device = obj.__dlpack_device__()
        own = self.export("dl_device.own", obj, max_version=(1, 3), dl_device=device)
        shared = self.export("dl_device.own", obj, max_version=(1, 3))
        same = own.tensor.same_as(shared.tensor)
        self.expect("dl_device.own", same is None, f"dl_device={_device(device)} gave other memory: {same}")
        other = (_CPU, 0) if int(device[0]) not in (_CPU, _CUDA_HOST) else (_CUDA, 0)
        try:
            export = _read_capsule(obj.__dlpack__(max_version=(1, 3), dl_device=other))
        except BufferError:
            self.passed("dl_device.other", f"{_device(other)}: BufferError")
        except Exception as error:  # noqa: BLE001
            self.failed("dl_device.other", f"dl_device={_device(other)} raised {type(error).__name__}, not "
                        f"BufferError: {_short(error)}")
        else:
            there = export.tensor.device[0] == other[0]
            flagged = not export.versioned or export.flags & _IS_COPIED
            self.expect("dl_device.other", there and flagged,
                        f"dl_device={_device(other)} gave a capsule on {_device(export.tensor.device)}"
                        if not there else "the copy to another device does not set IS_COPIED",
                        f"{_device(other)}: copied there")
        try:
            export = _read_capsule(obj.__dlpack__(max_version=(1, 3), dl_device=other, copy=False))
        except (BufferError, ValueError) as error:
            self.passed("dl_device.other_no_copy", f"{type(error).__name__}")
        except Exception as error:  # noqa: BLE001
            self.failed("dl_device.other_no_copy", f"raised {type(error).__name__}, not BufferError or ValueError: "
                        f"{_short(error)}")
        else:
            moved = export.tensor.device[0] == other[0] and not export.flags & _IS_COPIED
            self.expect("dl_device.other_no_copy", moved,
                        f"copy=False to {_device(other)} gave a capsule on {_device(export.tensor.device)}")

    # -- streams
    def check_streams(self, base: _Example) -> None:
        # Versioned capsules are asked for, so a refused legacy capsule (of read-only memory) is not
        # taken for a refused stream; a producer of legacy capsules only ignores max_version.
        obj = self.fresh()
        try:
            obj.__dlpack__(stream=None, max_version=(1, 3))
            self.passed("stream.none")
        except Exception as error:  # noqa: BLE001
            self.failed("stream.none", f"raised {type(error).__name__}: {_short(error)}")
        device = int(obj.__dlpack_device__()[0])
        invalid = {_CUDA: (0,), _ROCM: (1, 2)}.get(device, (0, 1, 2))
        for stream in invalid:
            try:
                obj.__dlpack__(stream=stream, max_version=(1, 3))
            except Exception as error:  # noqa: BLE001 - the array API names no class
                self.passed("stream.invalid", f"{stream}: {type(error).__name__}")
            else:
                self.failed("stream.invalid", f"stream={stream} accepted on {_device((device, 0))}")
        if device not in (_CUDA, _ROCM):
            try:
                obj.__dlpack__(stream=-1, max_version=(1, 3))
                self.info("stream.minus_one", "accepted")
            except Exception as error:  # noqa: BLE001
                self.info("stream.minus_one", f"refused with {type(error).__name__} (the array API accepts only "
                          "None on the host; PyTorch passes -1)")

    # -- one example: shape, dtype, strides, values, alignment, flags
    def check_example(self, example: _Example) -> None:
        obj = example.obj
        try:
            device = tuple(int(v) for v in obj.__dlpack_device__())
        except Exception as error:  # noqa: BLE001
            raise _RuleFailure(f"device.tuple|{example.label}: __dlpack_device__() raised {error!r}")
        try:
            capsule = obj.__dlpack__(max_version=(1, 3))
        except BufferError as error:
            self.refused("export.all", example, error)  # the array API's refusal of data it cannot export
            return
        except Exception as error:  # noqa: BLE001
            self.failed("export.all", f"{example.label}: __dlpack__(max_version=(1, 3)) raised "
                        f"{type(error).__name__}: {_short(error)}")
            return
        try:
            versioned = _read_capsule(capsule)
        except _RuleFailure as failure:
            self.failed("export.all", f"{example.label}: {failure}")
            return
        self.passed("export.all")
        exports = [versioned]
        try:
            exports.append(_read_capsule(obj.__dlpack__()))
        except Exception:  # noqa: BLE001 - rules version.none and flags.read_only_legacy judge refusals
            pass
        values = self.own_values(example)
        for export in exports:
            self.check_export(example, export, device, values)
        memory = self.read_only_memory(example, versioned)
        if memory is None:
            self.skipped("flags.read_only", f"{example.label}: writable memory")
            self.skipped("flags.read_only_legacy", f"{example.label}: writable memory")
            return
        if versioned.versioned:
            self.expect("flags.read_only", versioned.flags & _READ_ONLY,
                        f"{example.label}: READ_ONLY not set ({memory})")
        else:
            self.failed("flags.read_only", f"{example.label}: asked for a versioned capsule, got a legacy one, which "
                        f"cannot say READ_ONLY ({memory})")
        try:
            _read_capsule(obj.__dlpack__())
        except BufferError:
            self.passed("flags.read_only_legacy")
        except Exception as error:  # noqa: BLE001
            self.failed("flags.read_only_legacy", f"{example.label}: raised {type(error).__name__}, not BufferError")
        else:
            self.failed("flags.read_only_legacy", f"{example.label}: a legacy capsule of read-only memory ({memory})")

    def check_export(self, example: _Example, export: _Export, device, values) -> None:
        t, where = export.tensor, f"{example.label}, {export.name}"
        self.expect("device.capsule", t.device == device, f"{where}: capsule on {_device(t.device)}, object on "
                    f"{_device(device)}")
        self.expect("flags.known", not export.flags & ~7, f"{where}: unknown flag bits {export.flags:#x}")
        if not t.shape:
            self.passed("tensor.strides")  # rank 0: NULL is allowed
        elif export.versioned and export.version >= (1, 2):
            self.expect("tensor.strides", t.strides is not None, f"{where}: NULL strides in version "
                        f"{export.version[0]}.{export.version[1]}")
        elif t.strides is None:
            self.skipped("tensor.strides", f"{where}: NULL strides (row-major) allowed before DLPack 1.2")
        else:
            self.passed("tensor.strides")
        if t.numel and t.device[0] == _CPU:
            code, bits, lanes = t.dtype
            scalar = max(1, bits // 8 // (2 if code == 5 else 1))
            self.expect("align.element", t.first % scalar == 0, f"{where}: first element at {t.first:#x} is not "
                        f"{scalar}-byte aligned")
            self.aligned64[0] += t.first % 64 == 0
            self.aligned64[1] += 1
        if values is None:
            self.skipped("tensor.values", f"{where}: the object's values cannot be read without DLPack")
            return
        self.expect("tensor.shape", t.shape == values.shape, f"{where}: shape {t.shape}, the object's "
                    f"{values.shape}")
        expected = _dlpack_dtype(values.dtype)
        if expected is None:
            self.skipped("tensor.dtype", f"{where}: {values.dtype} has no DLPack code")
        else:
            self.expect("tensor.dtype", t.dtype == expected, f"{where}: dtype {t.dtype}, the object's {values.dtype} "
                        f"is {expected}")
        if t.shape != values.shape or t.itemsize != values.itemsize or (expected is not None and t.dtype != expected):
            return
        if t.device[0] != _CPU:
            self.skipped("tensor.values", f"{where}: memory on {_device(t.device)}")
            return
        if t.dtype[1] < 8:
            self.skipped("tensor.values", f"{where}: packed sub-byte data")
            return
        got = t.read_bytes()
        want = numpy.ascontiguousarray(values).reshape(-1).view(numpy.uint8).reshape(values.shape + (values.itemsize,))
        if numpy.array_equal(got, want):
            self.passed("tensor.values")
        else:
            self.failed("tensor.values", f"{where}: the capsule's bytes differ from the object's values "
                        f"(strides {t.strides}, byte_offset {t.byte_offset})")

    # -- the exchange table
    def check_exchange(self, examples: list[_Example]) -> None:
        cls = type(examples[0].obj)
        capsule = getattr(cls, "__dlpack_c_exchange_api__", None)
        if capsule is None:
            for rule in [r for r in RULES if r.startswith("exchange.")]:
                self.skipped(rule, f"{cls.__qualname__} has no __dlpack_c_exchange_api__")
            return
        if not _is_pycapsule(capsule) or not _is_capsule(capsule, b"dlpack_exchange_api"):
            raise _RuleFailure(f"exchange.table|{cls.__qualname__}.__dlpack_c_exchange_api__ is not a "
                               "'dlpack_exchange_api' capsule")
        self.passed("exchange.table", "on the type")
        table = _ExchangeAPI.from_address(_get_pointer(capsule, b"dlpack_exchange_api"))
        if table.major != 1:
            raise _RuleFailure(f"exchange.version|version {table.major}.{table.minor}")
        self.passed("exchange.version", f"{table.major}.{table.minor}"
                    + (", with an older table chained" if table.prev_api else ""))
        required = ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                    "managed_tensor_to_py_object_no_sync", "current_work_stream")
        missing = [name for name in required if not getattr(table, name)]
        self.expect("exchange.functions", not missing, f"NULL: {', '.join(missing)}")
        for example in examples:
            self.guard(self.exchange_dltensor, (table, example), "exchange.dltensor")
            self.guard(self.exchange_managed, (table, example), "exchange.managed")
        self.guard(self.exchange_to_py_object, (table, examples[0]), "exchange.to_py_object")
        self.guard(self.exchange_allocator, (table, examples[0]), "exchange.allocator")
        self.guard(self.exchange_stream, (table, examples[0]), "exchange.stream")

    def exchange_dltensor(self, args) -> None:
        table, example = args
        if not table.dltensor_from_py_object_no_sync:
            self.skipped("exchange.dltensor", "dltensor_from_py_object_no_sync is NULL (allowed)")
            return
        out = _DLTensor()
        try:
            status = _DLTENSOR_FROM(table.dltensor_from_py_object_no_sync)(example.obj, ctypes.byref(out))
        except BufferError as error:
            self.refused("exchange.dltensor", example, error)
            return
        except Exception as error:  # noqa: BLE001
            raise _RuleFailure(f"exchange.dltensor|{example.label}: raised {type(error).__name__}: {_short(error)}")
        if status != 0:
            raise _RuleFailure(f"exchange.dltensor|{example.label}: returned {status}")
        tensor = _Tensor.read(out)
        export = self.export("exchange.dltensor", example.obj, max_version=(1, 3))
        same = tensor.same_as(export.tensor)
        self.expect("exchange.dltensor", same is None, f"{example.label}: differs from the capsule: {same}")

    def managed_from(self, table, obj, rule) -> int:
        out = ctypes.c_void_p()
        try:
            status = _MANAGED_FROM(table.managed_tensor_from_py_object_no_sync)(obj, ctypes.byref(out))
        except BufferError:
            raise  # the header's refusal of data DLPack cannot describe: the caller judges it
        except Exception as error:  # noqa: BLE001
            raise _RuleFailure(f"{rule}|managed_tensor_from_py_object_no_sync raised {type(error).__name__}: "
                               f"{_short(error)}")
        if status != 0 or not out.value:
            raise _RuleFailure(f"{rule}|managed_tensor_from_py_object_no_sync returned {status}")
        return out.value

    def exchange_managed(self, args) -> None:
        table, example = args
        obj = example.obj
        export = self.export("exchange.managed", obj, max_version=(1, 3))
        flags = export.flags if export.versioned else None
        del export
        before = sys.getrefcount(obj)
        try:
            pointer = self.managed_from(table, obj, "exchange.managed")
        except BufferError as error:
            self.refused("exchange.managed", example, error)
            return
        managed = _Versioned.from_address(pointer)
        problems = []
        if managed.major != 1:
            problems.append(f"version {managed.major}.{managed.minor}")
        else:
            capsule = self.export("exchange.managed", obj, max_version=(1, 3))
            same = _Tensor.read(managed.dl_tensor).same_as(capsule.tensor)
            if same:
                problems.append(f"differs from the capsule: {same}")
            if flags is not None and (managed.flags & _READ_ONLY) != (flags & _READ_ONLY):
                problems.append(f"flags {managed.flags:#x}, the capsule's {flags:#x}")
            del capsule
        if not managed.deleter:
            problems.append("no deleter")
        else:
            counter = _Counter(pointer, True)
            counter.call()
            if counter.errors:
                problems.append(f"the deleter raised {counter.errors[0]}")
            if sys.getrefcount(obj) != before:
                problems.append(f"the object's references went from {before} to {sys.getrefcount(obj)} after the "
                                "deleter")
        self.expect("exchange.managed", not problems, f"{example.label}: " + "; ".join(problems))

    def exchange_to_py_object(self, args) -> None:
        table, example = args
        pointer = self.managed_from(table, example.obj, "exchange.to_py_object")
        counter = _Counter(pointer, True)
        out = ctypes.c_void_p()
        try:
            status = _MANAGED_TO(table.managed_tensor_to_py_object_no_sync)(pointer, ctypes.byref(out))
        except Exception as error:  # noqa: BLE001
            raise _RuleFailure(f"exchange.to_py_object|raised {type(error).__name__}: {_short(error)}")
        if status != 0 or not out.value:
            raise _RuleFailure(f"exchange.to_py_object|returned {status}")
        made = ctypes.cast(out.value, ctypes.py_object).value
        _decref(made)  # the table handed over a new reference; `made` holds one of its own
        problems = []
        if not isinstance(made, type(example.obj)):
            problems.append(f"made a {type(made).__qualname__}, not a {type(example.obj).__qualname__}")
        mine, theirs = self.own_values(example), self.own_values(_Example("", None, made, False))
        if mine is not None and theirs is not None and not numpy.array_equal(mine, theirs, equal_nan=True):
            problems.append("the object made holds other values")
        del made, theirs
        if counter.calls != 1 or counter.errors:
            problems.append(f"the deleter ran {counter.calls} times once the object was collected{_errors(counter)}")
        self.expect("exchange.to_py_object", not problems, "; ".join(problems))

    def exchange_allocator(self, args) -> None:
        table, example = args
        device = tuple(int(v) for v in example.obj.__dlpack_device__())
        shape = (ctypes.c_int64 * 2)(2, 3)
        errors = []

        def set_error(_ctx, kind, message):
            errors.append(f"{(kind or b'').decode()}: {(message or b'').decode()}")

        callback = _SET_ERROR(set_error)
        allocate = _ALLOCATOR(table.managed_tensor_allocator)
        for target in (device, (_CUDA, 0) if device[0] != _CUDA else (_CPU, 0)):
            prototype = _DLTensor(None, target[0], target[1], 2, 2, 32, 1, shape, None, 0)
            out = ctypes.c_void_p()
            errors.clear()
            try:
                status = allocate(ctypes.byref(prototype), ctypes.byref(out), None, callback)
            except Exception as error:  # noqa: BLE001
                self.failed("exchange.allocator", f"{_device(target)}: raised {type(error).__name__} instead of "
                            f"calling SetError: {_short(error)}")
                continue
            if status != 0:
                self.expect("exchange.allocator", len(errors) == 1 and not out.value,
                            f"{_device(target)}: failed ({status}) with SetError called {len(errors)} times",
                            f"{_device(target)}: refused through SetError")
                continue
            if errors or not out.value:
                self.failed("exchange.allocator", f"{_device(target)}: succeeded, SetError called {len(errors)} times, "
                            f"out={out.value}")
                continue
            managed = _Versioned.from_address(out.value)
            tensor = _Tensor.read(managed.dl_tensor)
            asked = (target, (2, 32, 1), (2, 3))
            got = (tensor.device, tensor.dtype, tensor.shape)
            if managed.major != 1 or got != asked:
                self.failed("exchange.allocator", f"{_device(target)}: allocated {got}, asked {asked}")
            elif target == device and tensor.first % 4:
                self.failed("exchange.allocator", f"the allocation at {tensor.first:#x} is not 4-byte aligned")
            else:
                self.passed("exchange.allocator", f"{_device(target)}: allocated")
            if managed.deleter:
                counter = _Counter(out.value, True)
                counter.call()

    def exchange_stream(self, args) -> None:
        table, _ = args
        out = ctypes.c_void_p(1)
        try:
            status = _WORK_STREAM(table.current_work_stream)(_CPU, 0, ctypes.byref(out))
        except Exception as error:  # noqa: BLE001
            raise _RuleFailure(f"exchange.stream|raised {type(error).__name__}: {_short(error)}")
        self.expect("exchange.stream", status == 0 and not out.value, f"returned {status}, stream {out.value}")


def _takes_argument(factory) -> bool:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True  # a builtin without a signature: called with the source
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return bool(positional)


def _is_int(value) -> bool:
    try:
        return int(value) == value and not isinstance(value, (bool, float))
    except (TypeError, ValueError):
        return False


def _host(export: _Export) -> bool:
    return export.tensor.device[0] == _CPU


def _device(device) -> str:
    try:
        return f"({int(device[0])}, {int(device[1])})"
    except (TypeError, ValueError, IndexError):
        return repr(device)


def _kwargs(kwargs) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _short(error) -> str:
    text = str(error).strip().splitlines()
    return (text[0][:120] if text else "")


def _errors(counter: _Counter) -> str:
    return f" (the deleter raised {counter.errors[0]})" if counter.errors else ""


def _unique(items) -> list[str]:
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


# ----------------------------------------------------------------------------------------------
# The entry points.


def check_producer(
    factory: typing.Callable[..., typing.Any],
    *,
    dtypes: typing.Iterable[typing.Any] = _DEFAULT_DTYPES,
    examples: int = 28,
    seed: int = 0,
    values: typing.Callable[[typing.Any], typing.Any] | None = None,
) -> Report:
    """Run every rule of :data:`RULES` against the objects ``factory`` makes.

    ``factory(source)`` returns a fresh object of the producer holding the values of the NumPy
    array ``source`` (any layout, shared or copied), or raises for a source it cannot hold; a
    factory of no argument is called as ``factory()``. ``dtypes`` are the dtypes of the random
    sources (NumPy names or dtypes), ``examples`` how many random sources to make (``seed`` fixes
    them), ``values(obj)`` reads an object's values without DLPack (``numpy.asarray`` by default).

    Never raises for a failed rule: the :class:`Report` lists them all.
    """
    checker = _Checker(factory, tuple(dtypes), examples, seed, values)
    checker.run()
    name = getattr(factory, "__qualname__", None) or repr(factory)
    module = getattr(factory, "__module__", None)
    return Report(f"{module}.{name}" if module else name, checker.results())


def assert_conforms(
    factory: typing.Callable[..., typing.Any],
    *,
    deviations: typing.Iterable[str] = (),
    dtypes: typing.Iterable[typing.Any] = _DEFAULT_DTYPES,
    examples: int = 28,
    seed: int = 0,
    values: typing.Callable[[typing.Any], typing.Any] | None = None,
) -> Report:
    """``check_producer(factory, …)``, raising one ``AssertionError`` that lists every failed rule
    not in ``deviations`` — and every rule in ``deviations`` that no longer fails, so that a known
    deviation that disappears is noticed as well as a new one. Returns the report otherwise.

    ``deviations`` names rule ids of :data:`RULES` (a mapping from rule id to an explanation
    works too); an unknown id is a ``ValueError``. The other keywords are ``check_producer``'s.
    """
    known = set(deviations)
    unknown = sorted(known - RULES.keys())
    if unknown:
        raise ValueError(f"unknown rules in deviations: {', '.join(unknown)}")
    report = check_producer(factory, dtypes=dtypes, examples=examples, seed=seed, values=values)
    unexpected = [r for r in report.failures if r.rule not in known]
    gone = [report[rule] for rule in sorted(known) if rule not in report.failed]
    if unexpected or gone:
        lines = [f"{report.producer} does not conform as expected:"]
        lines += [f"  {r}" for r in unexpected]
        lines += [f"  NO LONGER FAILS {r.rule} ({r.status}: {r.detail})" for r in gone]
        raise AssertionError("\n".join(lines))
    return report
