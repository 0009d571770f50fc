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
