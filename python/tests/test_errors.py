"""Every error a Python caller can meet: its class (BufferError, TypeError, ValueError), its `kind`,
and the producer's deleter called exactly once for malformed tensors (built here with ctypes)."""

import ctypes

import numpy as np
import pytest
from conftest import DLTensor, ManagedVersioned

import dlspan
import dlspan.examples

ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Crafted:
    """A hand-made versioned capsule over `buffer`, counting its deleter's calls."""

    def __init__(self, shape, strides, dtype=(2, 32, 1), data_offset=0, byte_offset=0, version=(1, 3), ndim=None,
                 null_data=False, data_address=None):
        self.buffer = (ctypes.c_uint8 * 256)()
        self.shape = (ctypes.c_int64 * max(len(shape or []), 1))(*(shape or []))
        self.strides = (ctypes.c_int64 * max(len(strides or []), 1))(*(strides or []))
        self.deleted = 0
        self._deleter = DELETER(self._delete)
        self.managed = ManagedVersioned()
        self.managed.major, self.managed.minor = version
        self.managed.deleter = ctypes.cast(self._deleter, ctypes.c_void_p)
        t = self.managed.dl_tensor
        aligned = (ctypes.addressof(self.buffer) + 63) // 64 * 64
        t.data = None if null_data else (data_address if data_address is not None else aligned + data_offset)
        t.device_type, t.device_id = 1, 0
        t.ndim = len(shape or []) if ndim is None else ndim
        t.code, t.bits, t.lanes = dtype
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)) if shape is not None else None
        t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None
        t.byte_offset = byte_offset
        self.capsule = ctypes.pythonapi.PyCapsule_New(ctypes.addressof(self.managed), b"dltensor_versioned", None)

    def _delete(self, _pointer):
        self.deleted += 1


MALFORMED = {
    "NullData": dict(shape=[2], strides=[1], null_data=True),
    "NegativeExtent": dict(shape=[-1], strides=[1]),
    "NullShape": dict(shape=None, strides=[1], ndim=1),
    "NullStrides": dict(shape=[2], strides=None),
    "UnsupportedVersion": dict(shape=[2], strides=[1], version=(2, 0)),
    "UnsupportedDtype": dict(shape=[2], strides=[1], dtype=(99, 8, 1)),
    "NegativeNdim": dict(shape=[2], strides=[1], ndim=-1),
    "UnsupportedRank": dict(shape=[1] * 65, strides=[1] * 65),
    "SpanOverflow": dict(shape=[1 << 62], strides=[4]),
    "NegativeReach": dict(shape=[4], strides=[-1], data_address=8),
}


@pytest.mark.parametrize("kind", MALFORMED)
def test_malformed_tensors_are_buffer_or_type_errors(kind):
    crafted = Crafted(**MALFORMED[kind])
    expected = TypeError if kind in ("UnsupportedDtype", "NegativeNdim", "UnsupportedRank") else BufferError
    with pytest.raises(expected) as err:
        dlspan.from_dlpack(crafted.capsule)
    assert err.value.kind == kind
    assert crafted.deleted == 1, "the deleter runs exactly once, refused or not"


def test_typed_import_errors():
    misaligned = Crafted(shape=[2], strides=[1], data_offset=1)
    t = dlspan.from_dlpack(misaligned.capsule)
    with pytest.raises(BufferError) as err:
        dlspan.examples.axpy(1.0, t, np.zeros(2, np.float32))
    assert err.value.kind == "Misaligned"
    odd_offset = Crafted(shape=[2], strides=[1], byte_offset=2)
    with pytest.raises(BufferError) as err:
        dlspan.examples.axpy(1.0, dlspan.from_dlpack(odd_offset.capsule), np.zeros(2, np.float32))
    assert err.value.kind == "ByteOffsetNotElementMultiple"
    del t
    assert misaligned.deleted == 1 and odd_offset.deleted == 1


def test_class_of_every_kind(torch):
    """One line per kind: how a caller meets it, and the class it raises."""
    y = np.zeros(3, np.float32)
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    cases = [
        (TypeError, "DtypeMismatch", lambda: dlspan.examples.axpy(1.0, np.zeros(3), y)),
        (TypeError, "RankMismatch", lambda: dlspan.examples.axpy(1.0, np.zeros((3, 1), np.float32), y)),
        (ValueError, "ExtentMismatch", lambda: dlspan.examples.det3(np.zeros((2, 3)))),
        (ValueError, "StridesIncompatible", lambda: dlspan.examples.trace(np.zeros((3, 3)).T)),
        (ValueError, "NonPositiveStride", lambda: dlspan.examples.det3(np.zeros((3, 3))[::-1])),
        (ValueError, "OverlappingStrides", lambda: dlspan.examples.axpy(1.0, y, torch.zeros(1).expand(3))),
        (ValueError, "ShapeMismatch", lambda: dlspan.add(y, y[:2], np.zeros(3, np.float32))),
        (ValueError, "ReadOnly", lambda: dlspan.examples.axpy(1.0, y, ro)),
        (ValueError, "BorrowConflict", lambda: dlspan.examples.axpy(1.0, y, y)),
        (ValueError, "RequiresGrad", lambda: dlspan.scale_(torch.ones(2, requires_grad=True), 2.0)),
        (ValueError, "InvalidStream", lambda: dlspan.zeros(1).__dlpack__(stream=0)),
        (ValueError, "CopyRequired", lambda: dlspan.from_dlpack(_Copies(), copy=False)),
        (BufferError, "ConjugateBit", lambda: dlspan.sum(torch.ones(2, dtype=torch.complex64).conj())),
        (BufferError, "NegativeBit", lambda: dlspan.from_dlpack(torch.ones(2, dtype=torch.complex64).conj().imag)),
        (BufferError, "CapsuleConsumed", _consumed),
        (TypeError, "NotDlpackCapsule", lambda: dlspan.from_dlpack(ctypes.pythonapi.PyCapsule_New(8, b"x", None))),
        (BufferError, "DeviceUnavailable", lambda: dlspan.zeros(1).__dlpack__(dl_device=(2, 0))),
        (BufferError, "ReadOnly", lambda: dlspan.from_dlpack(ro).__dlpack__()),
        (BufferError, "SpanOverflow", lambda: dlspan.zeros((1 << 62, 8))),
        (TypeError, "UnknownDtype", lambda: dlspan.zeros(1, "float33")),
        (TypeError, "ScalarKind", lambda: dlspan.scale_(np.zeros(2, np.int8), 1.5)),
    ]
    for exception, kind, call in cases:
        with pytest.raises(exception) as err:
            call()
        assert err.value.kind == kind, (kind, err.value)
        assert str(err.value), "dlspan's message"


class _Copies:
    def __dlpack__(self, **kwargs):
        return np.zeros(2).__dlpack__(max_version=(1, 0), copy=True)

    def __dlpack_device__(self):
        return (1, 0)


def _consumed():
    capsule = np.zeros(2).__dlpack__(max_version=(1, 0))
    dlspan.from_dlpack(capsule)
    dlspan.from_dlpack(capsule)


# Words of the Rust API that a Python caller never chose: view types, layouts, Rust types, DLPack's
# enum names.
JARGON = ("view's rank", "ndim is", "layout_right", "layout_left", "layout_stride", "LayoutStride", "Mdspan",
          "PyView", "dtype::Bool", "Rust bool", "proven", "kDL", "feature `cuda`", "static extent")


def test_messages_speak_python(torch):
    y = np.zeros(3, np.float32)
    cases = [
        (lambda: dlspan.examples.axpy(1.0, np.zeros((3, 1), np.float32), y), "expected a 1-d array, got 2-d"),
        (lambda: dlspan.examples.axpy(1.0, np.zeros(3), y), "expected a float32 array, got float64"),
        (lambda: dlspan.examples.det3(np.zeros((2, 3))), "expected 3 elements along axis 0, got 2"),
        (lambda: dlspan.examples.trace(np.zeros((3, 3)).T), "expected a C-contiguous (row-major) array"),
        (lambda: dlspan.examples.trace(np.zeros((3, 3)).T), "x.copy() in NumPy"),
        (lambda: dlspan.examples.det3(np.zeros((3, 3))[::-1]), "expected positive strides, got -3 on axis 0"),
        (lambda: dlspan.examples.axpy(1.0, y, torch.zeros(1).expand(3)), "elements may share memory"),
        (lambda: dlspan.zeros(1).__dlpack__(dl_device=(2, 0)), "a tensor on cpu cannot be delivered to cuda:0"),
        (lambda: dlspan.examples.trace(np.zeros((2, 3))), "expected a square matrix, got shape (2, 3)"),
        (lambda: dlspan.zeros(1, "float33"), "bfloat16, complex32"),  # unknown names list the known ones
    ]
    for call, words in cases:
        with pytest.raises(Exception) as err:
            call()
        assert words in str(err.value), (words, str(err.value))


def test_no_rust_jargon_in_any_message(torch):
    """Every case of `test_class_of_every_kind`, and the malformed tensors, in Python's words."""
    y = np.zeros(3, np.float32)
    calls = [
        lambda: dlspan.examples.axpy(1.0, np.zeros(3), y),
        lambda: dlspan.examples.axpy(1.0, np.zeros((3, 1), np.float32), y),
        lambda: dlspan.examples.det3(np.zeros((2, 3))),
        lambda: dlspan.examples.trace(np.zeros((3, 3)).T),
        lambda: dlspan.examples.trace(np.broadcast_to(np.zeros(3), (3, 3))),
        lambda: dlspan.examples.det3(np.zeros((3, 3))[::-1]),
        lambda: dlspan.examples.axpy(1.0, y, torch.zeros(1).expand(3)),
        lambda: dlspan.add(y, y[:2], np.zeros(3, np.float32)),
        lambda: dlspan.examples.axpy(1.0, y, y),
        lambda: dlspan.sum(np.array([2], np.uint8).view(np.bool_)),  # fine: a nonzero byte is True
        lambda: dlspan.zeros(1).__dlpack__(dl_device=(2, 0)),
        lambda: dlspan.from_dlpack(np.zeros(2)).__dlpack__(),
    ] + [lambda kind=kind: dlspan.from_dlpack(Crafted(**MALFORMED[kind]).capsule) for kind in MALFORMED]
    for call in calls:
        try:
            call()
        except Exception as err:  # noqa: BLE001 - every exception's message is checked
            message = str(err)
            assert not any(word in message for word in JARGON), message


def test_layout_errors_suggest_a_copy_of_the_right_layout():
    with pytest.raises(ValueError) as err:
        dlspan.examples.trace(np.asfortranarray(np.eye(3)))
    assert "np.ascontiguousarray" in str(err.value)
    assert (err.value.expected, err.value.found) == (3, 1)


def test_borrow_conflicts_name_both_arguments():
    y = np.arange(4, dtype=np.float32)
    with pytest.raises(ValueError) as err:
        dlspan.add(y, y, y)
    message = str(err.value)
    assert "argument 'out' would be written" in message and "read through argument 'a'" in message, message
    assert (err.value.argument, err.value.holder) == ("out", "a")
    assert (err.value.requested_mutable, err.value.held_mutable) == (True, False)
    assert err.value.__notes__ == ["while processing 'out'"]
    with pytest.raises(ValueError) as err:
        dlspan.add(y[:2], y[1:3], y[2:])  # out overlaps b only (at y[2])
    assert err.value.holder == "b"
    # Arguments PyO3 extracts are named by its note when refused; the holder, which PyO3 never
    # named, is described (here: the same array, passed twice).
    with pytest.raises(ValueError) as err:
        dlspan.examples.axpy(1.0, y, y)
    assert "the same numpy.ndarray" in str(err.value) and err.value.__notes__ == ["while processing 'y'"]
    assert err.value.holder is None


def test_errors_raised_inside_a_function_name_their_argument(torch):
    y = np.zeros(3, np.float32)
    cases = [
        (lambda: dlspan.add(y, y, np.zeros(3)), TypeError, "DtypeMismatch", "out"),  # the output's dtype
        (lambda: dlspan.add(y, np.zeros(3), np.zeros(3, np.float32)), TypeError, "DtypeMismatch", "b"),
        (lambda: dlspan.add(y, y[:2], np.zeros(3, np.float32)), ValueError, "ShapeMismatch", "b"),
        (lambda: dlspan.mul(y[:2], y, np.zeros(3, np.float32)), ValueError, "ShapeMismatch", "a"),
        (lambda: dlspan.examples.axpy(1.0, y[:2], np.zeros(3, np.float32)), ValueError, "ShapeMismatch", "x"),
        (lambda: dlspan.examples.trace(np.zeros((2, 3))), ValueError, "ShapeMismatch", "m"),
        (lambda: dlspan.scale_(np.zeros(2, np.int8), 1.5), TypeError, "ScalarKind", "alpha"),
        (lambda: dlspan.sum(torch.ones(2, dtype=torch.complex64).conj()), BufferError, "ConjugateBit", "x"),
        (lambda: dlspan.scale_(torch.ones(2, requires_grad=True), 2.0), ValueError, "RequiresGrad", "x"),
    ]
    for call, exception, kind, argument in cases:
        with pytest.raises(exception) as err:
            call()
        assert err.value.kind == kind, (kind, err.value)
        assert err.value.__notes__ == [f"while processing '{argument}'"], (kind, err.value.__notes__)


def test_meta_tensors_are_refused_cleanly(torch):
    meta = torch.zeros(3, device="meta")
    for call in (
        lambda: dlspan.sum(meta),
        lambda: dlspan.add(meta, meta, torch.zeros(3)),
        lambda: dlspan.examples.axpy(1.0, meta, np.zeros(3, np.float32)),
        lambda: dlspan.from_dlpack(meta),
    ):
        with pytest.raises(BufferError) as err:
            call()
        assert err.value.kind == "MetaTensor"
        message = str(err.value)
        assert "meta device" in message and "\n" not in message and "frame #" not in message, message
        assert err.value.__cause__ is None and err.value.__context__ is None


def _guarded_int64_pair():
    """Two int64 values (an extent and a stride) ending right before a page nothing may read."""
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = mmap.PAGESIZE
    base = libc.mmap(None, 2 * page, 3, 0x22, -1, 0)  # read-write, private and anonymous
    assert base not in (None, ctypes.c_void_p(-1).value) and libc.mprotect(base + page, page, 0) == 0
    shape, strides = base + page - 16, base + page - 8
    ctypes.c_int64.from_address(shape).value = 4
    ctypes.c_int64.from_address(strides).value = 1
    return shape, strides


@pytest.mark.parametrize("entry", ["from_dlpack", "sum", "scale_", "add", "typed"])
def test_a_rank_beyond_the_limit_is_refused_before_its_arrays_are_read(entry):
    # A producer claiming 100 axes whose shape and strides hold one entry each, at the end of
    # readable memory: reading 100 entries would fault. The rank alone refuses it (UnsupportedRank).
    shape, strides = _guarded_int64_pair()
    crafted = Crafted(shape=[4], strides=[1], ndim=100)
    t = crafted.managed.dl_tensor
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))

    class Producer:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            return crafted.capsule

    call = {
        "from_dlpack": dlspan.from_dlpack,
        "sum": dlspan.sum,
        "scale_": lambda x: dlspan.scale_(x, 2.0),
        "add": lambda x: dlspan.add(x, x),
        "typed": lambda x: dlspan.examples.axpy(1.0, x, np.zeros(4, np.float32)),
    }[entry]
    with pytest.raises(TypeError) as err:
        call(Producer())
    assert err.value.kind == "UnsupportedRank"
    assert crafted.deleted == 1


@pytest.mark.parametrize("returned", ["cpu", None, [1, 0], (1,), (1, 0, 0), (1, 2**40), (1.0, 0)])
def test_a_malformed_dlpack_device_is_a_type_error_with_a_kind(returned):
    crafted = Crafted(shape=[2], strides=[1])

    class Producer:
        def __dlpack_device__(self):
            return returned

        def __dlpack__(self, **kwargs):
            return crafted.capsule

    for call in (dlspan.from_dlpack, dlspan.sum):
        with pytest.raises(TypeError) as err:
            call(Producer())
        assert err.value.kind == "NotADevice"
        assert any(repr(returned)[:20] in note for note in err.value.__notes__), err.value.__notes__


def test_host_memory_of_any_device_id_is_delivered_to_the_host():
    # Rule I2: a host device's id names no other memory (JAX numbers its host devices).
    for asked in ("cpu", (1, 0)):
        crafted = Crafted(shape=[2], strides=[1])
        crafted.managed.dl_tensor.device_id = 1

        class Producer:
            def __dlpack_device__(self):
                return (1, 1)

            def __dlpack__(self, **kwargs):
                assert "dl_device" not in kwargs, "no move asked between ids of the host"
                return crafted.capsule

        t = dlspan.from_dlpack(Producer(), device=asked)
        assert t.shape == (2,)
        del t
        assert crafted.deleted == 1


def _heuristic_overcommit():
    """Whether Linux refuses a single allocation larger than the machine's memory (the default
    heuristic, vm.overcommit_memory 0): only then can a test ask for terabytes without risk."""
    try:
        with open("/proc/sys/vm/overcommit_memory") as mode:
            return mode.read().strip() == "0"
    except OSError:
        return False


def test_allocations_too_large_are_buffer_errors_not_aborts(tmp_path):
    """Nothing aborts the interpreter on memory it cannot get: a cast whose intermediate values
    take terabytes (a broadcast source) and an example class asked for too many records raise
    BufferError (`AllocationFailed`), as `zeros` and copies do."""
    from dlspan.examples import Particles

    for n in (2**62, 2**63):  # more bytes than isize holds, whatever the allocator would do
        with pytest.raises(BufferError) as err:
            Particles(n)
        assert err.value.kind == "AllocationFailed"
    if not _heuristic_overcommit():
        pytest.skip("vm.overcommit_memory is not 0: a terabyte request might be granted and touched")
    with pytest.raises(BufferError) as err:
        Particles(2**40)  # 24 TiB of records
    assert err.value.kind == "AllocationFailed"
    n = 1 << 40
    source = np.broadcast_to(np.float64(1.0), (n,))  # 2**40 values over 8 bytes
    path = tmp_path / "out"
    try:
        with open(path, "wb") as f:
            f.truncate(n)  # a sparse file: no disk, no memory
        out = np.memmap(path, dtype=np.int8, mode="r+", shape=(n,))
    except (OSError, ValueError) as error:
        pytest.skip(f"no sparse terabyte file here ({error})")
    with pytest.raises(BufferError) as err:
        dlspan.cast(source, out=out)
    assert err.value.kind == "AllocationFailed"
    del out


def test_scale_takes_scalars_of_other_types_by_their_kind(torch):
    """NumPy scalars, 0-d tensors and other numbers keep their kind: a complex NumPy scalar is
    complex (its imaginary part is not dropped), a NumPy or PyTorch integer an integer."""
    from fractions import Fraction

    z = np.ones(3, np.complex64)
    dlspan.scale_(z, np.complex64(2j))
    assert z.tolist() == [2j, 2j, 2j]
    y = np.ones(3, np.float32)
    with pytest.raises(TypeError) as err:
        dlspan.scale_(y, np.complex64(2j))
    assert err.value.kind == "ScalarKind" and y.tolist() == [1.0, 1.0, 1.0]
    i = np.arange(3)
    dlspan.scale_(i, np.int64(2))
    dlspan.scale_(i, torch.tensor(3))
    assert i.tolist() == [0, 6, 12]
    with pytest.raises(TypeError) as err:
        dlspan.scale_(i, np.float32(2.0))
    assert err.value.kind == "ScalarKind"
    b = np.array([True, True])
    dlspan.scale_(b, np.bool_(False))
    assert b.tolist() == [False, False]
    f = np.ones(2, np.float32)
    dlspan.scale_(f, np.float32(0.5))
    dlspan.scale_(f, Fraction(1, 2))
    dlspan.scale_(f, torch.tensor(2.0))
    assert f.tolist() == [0.5, 0.5]
    dlspan.scale_(f, dlspan.from_dlpack(np.array(4.0)))  # a 0-d Tensor
    assert f.tolist() == [2.0, 2.0]
    for not_a_scalar in ("2", np.array([2.0]), torch.ones(2), np.array([True, False])):
        with pytest.raises(TypeError):
            dlspan.scale_(f, not_a_scalar)
    assert f.tolist() == [2.0, 2.0]


def test_shapes_are_ints_or_sequences_of_ints():
    assert dlspan.zeros(np.int64(2)).shape == (2,)
    assert dlspan.zeros(np.array(3)).shape == (3,)
    assert dlspan.zeros((np.int32(2), 3)).shape == (2, 3)
    assert dlspan.zeros(np.array([2, 3])).shape == (2, 3)
    assert dlspan.zeros([]).shape == ()
    for shape, words in (
        ("3", "got str"),
        ((2, 1.5), "got float"),
        (None, "got NoneType"),
        ({2, 3}, "got set"),  # no order
        (np.array(2.5), "got ndarray"),
    ):
        with pytest.raises(TypeError, match=words):
            dlspan.zeros(shape)
    for too_large in (2**63, (2, 2**64)):
        with pytest.raises(ValueError, match="too large"):
            dlspan.zeros(too_large)
