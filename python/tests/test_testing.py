"""dlspan.testing, the conformance kit for DLPack producers: what it finds in NumPy, PyTorch, JAX and
dlspan.Tensor is exactly what the rules page's framework table (rule Y17) records — a deviation
that disappears fails as a new one does — and each of its rules fails on a producer that breaks it
(NumPy arrays whose capsules are altered, capsules with a hand-written destructor, a hand-written
exchange table)."""

import ctypes
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import READ_ONLY, ManagedLegacy, ManagedVersioned, capsule_name

import dlspan
import dlspan.testing
from dlspan.testing import RULES, assert_conforms, check_producer

RULES_PAGE = Path(__file__).resolve().parents[2] / "runtime" / "docs" / "rules.md"
FRAMEWORKS = {"NumPy": "numpy", "PyTorch": "torch", "JAX": "jax", "dlspan": "dlspan"}


def framework_table():
    """{column: {rule ids marked **fails**}} from the rules page's framework table, and its header."""
    lines = RULES_PAGE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Rule |"))
    header = [cell.strip() for cell in lines[start].strip().strip("|").split("|")]
    fails = {column: set() for column in header[1:]}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rules = re.findall(r"`([a-z0-9_.]+)`", cells[0])
        assert rules and set(rules) <= RULES.keys(), f"rules of the row {cells[0]!r}"
        for column, cell in zip(header[1:], cells[1:]):
            if cell.startswith("**fails**"):
                fails[column] |= set(rules)
    return header, fails


def deviations_of(name):
    """The deviations the table records for the framework `name`, checked against the version installed."""
    header, fails = framework_table()
    column = next(c for c in header[1:] if c.split()[0] == name)
    if name != "dlspan":
        version = sys.modules[FRAMEWORKS[name]].__version__
        assert version.startswith(column.split()[1] + "."), f"the table records {column}; installed: {version}"
    return fails[column]


def test_the_table_has_a_column_per_framework():
    header, _ = framework_table()
    assert [c.split()[0] for c in header[1:]] == list(FRAMEWORKS)


# ----------------------------------------------------------------------------------------------
# Real producers.


def test_numpy():
    assert_conforms(lambda source: source, deviations=deviations_of("NumPy"))


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_torch(torch):
    assert_conforms(torch.from_numpy, deviations=deviations_of("PyTorch"))


def test_jax(jnp):
    assert_conforms(jnp.asarray, deviations=deviations_of("JAX"))


def test_dlspan_tensor_conforms(torch, jnp):
    """dlspan.Tensor over NumPy's memory (every layout, misaligned memory included), over its own
    copies, over PyTorch's and JAX's memory, and as dlspan makes it."""
    expected = deviations_of("dlspan")
    assert expected == set(), "dlspan.Tensor conforms fully"

    def over_torch(source):
        if not source.flags.writeable:
            # PyTorch shares read-only memory as writable (its deviation): dlspan cannot know.
            raise NotImplementedError("PyTorch cannot say read-only")
        return dlspan.from_dlpack(torch.from_numpy(source))

    for factory in (
        dlspan.from_dlpack,
        lambda source: dlspan.from_dlpack(source, copy=True),
        over_torch,
        lambda source: dlspan.from_dlpack(jnp.asarray(source)),
        lambda: dlspan.zeros((3, 4), "float32"),
    ):
        assert_conforms(factory, deviations=expected)


# ----------------------------------------------------------------------------------------------
# The report and the assertion.


def test_the_report_lists_every_rule_once():
    report = check_producer(lambda source: source, examples=4)
    assert [r.rule for r in report] == list(RULES) and len(report) == len(RULES)
    assert {r.status for r in report} <= {"passed", "failed", "skipped", "info"}
    assert report.ok and report["version.1.0"].status == "passed"
    assert report["exchange.table"].status == "skipped" and "no __dlpack_c_exchange_api__" in report["exchange.table"].detail
    assert report["align.64"].status == "info" and report["stream.minus_one"].status == "info"
    text = str(report)
    assert all(rule in text for rule in RULES)


def test_assert_conforms_lists_every_unexpected_failure_and_every_vanished_deviation():
    broken = lambda source: Tampered(aligned(source), drop=("copy", "stream"))  # noqa: E731
    with pytest.raises(AssertionError) as err:
        assert_conforms(broken, deviations={"copy.true", "version.1.0"})
    message = str(err.value)
    assert "flags.is_copied" in message and "stream.invalid" in message, "the unexpected failures"
    assert "NO LONGER FAILS version.1.0" in message, "the deviation that disappeared"
    assert "copy.true" not in message.replace("NO LONGER FAILS", ""), "an expected failure is not reported"
    assert_conforms(broken, deviations={"copy.true", "flags.is_copied", "stream.invalid"})
    with pytest.raises(ValueError, match="unknown rules"):
        assert_conforms(broken, deviations={"copy.sometimes"})


def test_a_factory_that_refuses_a_source_skips_it():
    def only_c_order(source):
        if not source.flags.c_contiguous:
            raise NotImplementedError("row-major only")
        return aligned(source)

    report = check_producer(only_c_order)
    assert report.ok
    assert "refused" in report["export.all"].detail and "NotImplementedError" in report["export.all"].detail


def test_a_factory_that_refuses_everything_fails():
    """The factory must accept the basic example: one that raises for everything (a broken
    producer, a factory with a bug) fails, rather than passing every rule by skipping it."""

    def refuses(source):
        raise TypeError("nothing")

    def refuses_no_argument():
        raise ImportError("broken")

    for factory, error in ((refuses, "TypeError"), (refuses_no_argument, "ImportError")):
        report = check_producer(factory)
        assert not report.ok and report.failed == {"export.all"}, str(report)
        assert "basic example" in report["export.all"].detail and error in report["export.all"].detail
        assert {r.status for r in report if r.rule != "export.all"} == {"skipped"}
        with pytest.raises(AssertionError, match="basic example"):
            assert_conforms(factory)


# ----------------------------------------------------------------------------------------------
# Each rule fails on a producer that breaks it.


def aligned(source):
    """The source, copied where NumPy made it misaligned: NumPy exports misaligned arrays as they
    are (its deviation, rule `align.element`), which the producers built on NumPy here would inherit."""
    return np.require(source, requirements="A")


def managed(capsule):
    """The managed tensor a capsule holds (a ctypes struct over the producer's memory) and its DLTensor."""
    name = capsule_name(capsule)
    pointer = ctypes.pythonapi.PyCapsule_GetPointer(capsule, name.encode())
    struct = (ManagedVersioned if name == "dltensor_versioned" else ManagedLegacy).from_address(pointer)
    return struct, struct.dl_tensor, name == "dltensor_versioned"


class Tampered:
    """A NumPy array whose `__dlpack__` drops keywords before asking NumPy, and whose capsules
    `alter` changes after NumPy made them. Its values, for the kit, are the array's (or `shown`)."""

    def __init__(self, array, alter=None, drop=(), shown=None):
        self.array, self.alter, self.drop, self.shown = array, alter, drop, shown

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        for name in self.drop:
            kwargs.pop(name, None)
        capsule = self.array.__dlpack__(**kwargs)
        if self.alter is not None:
            self.alter(*managed(capsule))
        return capsule

    def __array__(self, dtype=None, copy=None):
        return self.array if self.shown is None else self.shown


def major_two(struct, tensor, versioned):
    if versioned:
        struct.major = 2


def first_stride_zero(struct, tensor, versioned):
    # Fewer bytes are reached than before: every read stays inside the array.
    for axis in range(tensor.ndim):
        if tensor.shape[axis] > 1 and tensor.strides[axis] != 0:
            tensor.strides[axis] = 0
            return


def one_byte_off(struct, tensor, versioned):
    # One element fewer on the last axis and one byte later: every read stays inside the array.
    last = tensor.ndim - 1
    if last >= 0 and tensor.shape[last] > 1 and tensor.strides[last] != 0 and tensor.bits > 8:
        tensor.shape[last] -= 1
        tensor.byte_offset += 1


def clear_read_only(struct, tensor, versioned):
    if versioned:
        struct.flags &= ~READ_ONLY


def unknown_flag(struct, tensor, versioned):
    if versioned:
        struct.flags |= 1 << 8


def always_copied(struct, tensor, versioned):
    if versioned:
        struct.flags |= 2


def next_type_code(struct, tensor, versioned):
    if tensor.code in (0, 1, 2):
        tensor.code = (tensor.code + 1) % 3


def device_one(struct, tensor, versioned):
    tensor.device_id = 1


def null_strides_in_1_3(struct, tensor, versioned):
    if versioned and tensor.ndim > 0:
        struct.minor = 3
        tensor.strides = None


def huge_ndim(struct, tensor, versioned):
    # The shape array keeps its entries: a kit reading 2**30 of them would crash.
    tensor.ndim = 1 << 30


def null_shape(struct, tensor, versioned):
    if tensor.ndim > 0:
        tensor.shape = None


class WrongDevice(Tampered):
    def __dlpack_device__(self):
        return "cpu"


class NoLegacy(Tampered):
    def __dlpack__(self, **kwargs):
        if kwargs.get("max_version") is None:
            raise ValueError("versioned capsules only")  # the array API's refusal is BufferError
        return super().__dlpack__(**kwargs)


def read_only_view(source):
    view = source.view()
    view.flags.writeable = False
    return view


BROKEN = {
    "ignores max_version": (lambda s: Tampered(aligned(s), drop=("max_version",)), {"version.1.0", "version.1.3", "version.2.0"}),
    "writes major version 2": (lambda s: Tampered(aligned(s), major_two), {"version.1.0", "version.1.3", "version.2.0"}),
    "a stride set to 0": (lambda s: Tampered(aligned(s), first_stride_zero), {"tensor.values"}),
    "one byte off": (lambda s: Tampered(aligned(s), one_byte_off), {"align.element", "tensor.shape"}),
    "clears READ_ONLY": (lambda s: Tampered(aligned(s), clear_read_only), {"flags.read_only"}),
    "sets an unknown flag": (lambda s: Tampered(aligned(s), unknown_flag), {"flags.known"}),
    "always sets IS_COPIED": (lambda s: Tampered(aligned(s), always_copied), {"flags.not_copied"}),
    "ignores copy": (lambda s: Tampered(aligned(s), drop=("copy",)), {"copy.true", "flags.is_copied"}),
    "ignores dl_device": (lambda s: Tampered(aligned(s), drop=("dl_device",)), {"dl_device.other", "dl_device.other_no_copy"}),
    "ignores stream": (lambda s: Tampered(aligned(s), drop=("stream",)), {"stream.invalid"}),
    "another dtype": (lambda s: Tampered(aligned(s), next_type_code), {"tensor.dtype"}),
    "another device id": (lambda s: Tampered(aligned(s), device_one), {"device.capsule"}),
    "NULL strides in 1.3": (lambda s: Tampered(aligned(s), null_strides_in_1_3), {"tensor.strides"}),
    "a device that is not a pair": (lambda s: WrongDevice(aligned(s)), {"device.tuple"}),
    "legacy refused with ValueError": (lambda s: NoLegacy(aligned(s)), {"version.none"}),
    "shown read-only, exported writable": (
        lambda s: Tampered(aligned(s), shown=read_only_view(aligned(s))),
        {"flags.read_only", "flags.read_only_legacy"},
    ),
}


@pytest.mark.parametrize("alter, words", [(huge_ndim, "ndim is 1073741824"), (null_shape, "shape is NULL")])
def test_a_capsule_whose_shape_cannot_be_read_is_reported_not_read(alter, words):
    """A capsule's ndim is read before its shape: an implausible one (negative, above 64) or a NULL
    shape is a failure the report names, never a read past the producer's arrays."""
    report = check_producer(lambda source: Tampered(aligned(source), alter))
    assert not report.ok and words in str(report), str(report)


def test_an_unaltered_numpy_array_conforms():
    """The control: NumPy's capsules, passed through `Tampered` unchanged, pass every rule."""
    report = check_producer(lambda source: Tampered(aligned(source)))
    assert report.ok, str(report)


@pytest.mark.parametrize("breakage", BROKEN)
def test_each_rule_fails_on_a_producer_that_breaks_it(breakage):
    factory, rules = BROKEN[breakage]
    report = check_producer(factory)
    assert rules <= report.failed, str(report)


# Capsules with a destructor written here (NumPy's managed tensor inside, taken from NumPy's capsule).

_capsule_new = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle).PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_valid = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle).PyCapsule_IsValid
_capsule_valid.restype, _capsule_valid.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]
_capsule_pointer = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle).PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
_capsule_rename = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle).PyCapsule_SetName
_capsule_rename.restype, _capsule_rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
CALL_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
NAMES = {b"dltensor": b"used_dltensor", b"dltensor_versioned": b"used_dltensor_versioned"}


def destructor(kind):
    """A capsule destructor (Python code, run by ctypes) that misbehaves as `kind` says."""

    def destroy(capsule):
        for name in NAMES:
            if _capsule_valid(capsule, name):
                pointer = _capsule_pointer(capsule, name)
                break
        else:
            if kind != "ignores the rename":
                return
            name = next(n for n in NAMES if _capsule_valid(capsule, NAMES[n]))
            pointer = _capsule_pointer(capsule, NAMES[name])
        if kind == "leaks":
            return
        struct = (ManagedVersioned if name == b"dltensor_versioned" else ManagedLegacy).from_address(pointer)
        deleter = struct.deleter
        CALL_DELETER(deleter)(pointer)
        if kind == "deletes twice" and deleter != NUMPY_DELETERS.get(name):
            CALL_DELETER(deleter)(pointer)  # only where the kit counts: NumPy's memory is freed once

    return DESTRUCTOR(destroy)


DESTRUCTORS = {kind: destructor(kind) for kind in ("leaks", "deletes twice", "ignores the rename", "keeps to the rules")}
NUMPY_DELETERS = {}


class Rewrapped:
    """A NumPy array whose capsules hold NumPy's managed tensor under a destructor written in Python."""

    def __init__(self, array, kind):
        self.array, self.kind = array, kind

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        inner = self.array.__dlpack__(**kwargs)
        # A name of NAMES itself: the capsule keeps the pointer it is given.
        name = next(n for n in NAMES if n.decode() == capsule_name(inner))
        pointer = ctypes.pythonapi.PyCapsule_GetPointer(inner, name)
        struct = (ManagedVersioned if name == b"dltensor_versioned" else ManagedLegacy).from_address(pointer)
        NUMPY_DELETERS.setdefault(name, struct.deleter)
        _capsule_rename(inner, NAMES[name])  # NumPy's destructor now leaves the tensor to ours
        return _capsule_new(pointer, name, ctypes.cast(DESTRUCTORS[self.kind], ctypes.c_void_p))

    def __array__(self, dtype=None, copy=None):
        return self.array


@pytest.mark.parametrize(
    ("kind", "rules"),
    [
        ("leaks", {"deleter.unconsumed"}),
        ("deletes twice", {"deleter.unconsumed"}),
        ("ignores the rename", {"deleter.consumed"}),
        # Python code cannot run while an exception is pending: it is replaced, as a destructor
        # that calls into Python without setting it aside replaces it.
        ("keeps to the rules", {"deleter.pending_exception"}),
    ],
)
def test_deleter_rules_fail_on_destructors_that_break_them(kind, rules):
    report = check_producer(lambda source: Rewrapped(aligned(source), kind), examples=2)
    assert rules <= report.failed, str(report)
    if kind == "keeps to the rules":
        assert {"deleter.unconsumed", "deleter.consumed"}.isdisjoint(report.failed), str(report)


# A hand-written exchange table over NumPy arrays.

SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATOR = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_void_p
)
MANAGED_FROM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
MANAGED_TO = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
DLTENSOR_FROM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
WORK_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class ExchangeAPI(ctypes.Structure):
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


class Capsuled:
    """Hands a given capsule to `np.from_dlpack`."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def exchange_type(breakage=None):
    """A producer type with an exchange table whose functions (Python, through ctypes) serve NumPy
    arrays, broken as `breakage` says."""

    class WithTable(Tampered):
        keep = []  # capsules whose DLTensors were handed out, alive with the type

    def managed_from(obj, out):
        capsule = obj.array.__dlpack__(max_version=(1, 3))
        struct, tensor, _ = managed(capsule)
        if breakage == "managed flags":
            struct.flags &= ~READ_ONLY
        _capsule_rename(capsule, b"used_dltensor_versioned")
        out[0] = ctypes.addressof(struct)
        return 0

    def managed_to(pointer, out):
        capsule = _capsule_new(pointer, b"dltensor_versioned", None)
        array = np.from_dlpack(Capsuled(capsule))  # NumPy takes the tensor: its deleter runs when the array dies
        made = array if breakage == "another type" else WithTable(array)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(made))  # a new reference for the caller
        out[0] = id(made)
        return 0

    def dltensor_from(obj, out):
        capsule = obj.array.__dlpack__(max_version=(1, 3))
        WithTable.keep.append(capsule)
        _, tensor, _ = managed(capsule)
        if breakage == "dltensor shape" and tensor.ndim > 0:
            tensor.shape[0] += 1
        ctypes.memmove(out, ctypes.addressof(tensor), ctypes.sizeof(tensor))
        return 0

    def allocate(prototype, out, ctx, set_error):
        if breakage == "silent allocator":
            return -1
        SET_ERROR(set_error)(ctx, b"BufferError", b"this table allocates nothing")
        return -1

    def work_stream(device_type, device_id, out):
        out[0] = 1 if breakage == "a stream on the host" else None
        return 0

    functions = [
        ALLOCATOR(allocate),
        MANAGED_FROM(managed_from),
        MANAGED_TO(managed_to),
        DLTENSOR_FROM(dltensor_from),
        WORK_STREAM(work_stream),
    ]
    pointers = [ctypes.cast(f, ctypes.c_void_p).value for f in functions]
    if breakage == "no current_work_stream":
        pointers[4] = None
    table = ExchangeAPI(2 if breakage == "major version 2" else 1, 3, None, *pointers)
    WithTable.functions, WithTable.table = functions, table
    if breakage == "not a capsule":
        WithTable.__dlpack_c_exchange_api__ = ctypes.addressof(table)
    else:
        WithTable.__dlpack_c_exchange_api__ = _capsule_new(ctypes.addressof(table), b"dlpack_exchange_api", None)
    return WithTable


def test_a_table_that_keeps_to_the_rules_passes():
    """The control: every exchange rule passes on the honest table (its allocator refuses everything,
    through SetError, as the header allows)."""
    table_type = exchange_type()
    report = check_producer(lambda source: table_type(aligned(source)))
    assert report.ok, str(report)
    assert all(report[rule].status == "passed" for rule in RULES if rule.startswith("exchange.")), str(report)


@pytest.mark.parametrize(
    ("breakage", "rule"),
    [
        ("not a capsule", "exchange.table"),
        ("major version 2", "exchange.version"),
        ("no current_work_stream", "exchange.functions"),
        ("dltensor shape", "exchange.dltensor"),
        ("managed flags", "exchange.managed"),
        ("another type", "exchange.to_py_object"),
        ("silent allocator", "exchange.allocator"),
        ("a stream on the host", "exchange.stream"),
    ],
)
def test_exchange_rules_fail_on_a_table_that_breaks_them(breakage, rule):
    table_type = exchange_type(breakage)
    report = check_producer(lambda source: table_type(aligned(source)), examples=6)
    assert rule in report.failed, str(report)
