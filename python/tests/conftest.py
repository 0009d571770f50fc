"""Shared helpers: a ctypes reader of DLPack capsules, recording producers, framework fixtures."""

import ctypes
import warnings

import numpy as np
import pytest

import dlspan
import dlspan.diagnostics

warnings.filterwarnings("ignore", message=".*not writable.*")  # torch.from_numpy of read-only arrays

_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]


class DLTensor(ctypes.Structure):
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


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class ManagedVersioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


class ManagedLegacy(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


READ_ONLY, IS_COPIED, IS_SUBBYTE_TYPE_PADDED = 1, 2, 4


def capsule_name(capsule):
    return _api.PyCapsule_GetName(capsule).decode()


def tensor_fields(t: DLTensor):
    shape = [t.shape[i] for i in range(t.ndim)] if t.shape else None
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    return {
        "data": t.data or 0,
        "device": (t.device_type, t.device_id),
        "dtype": (t.code, t.bits, t.lanes),
        "shape": shape,
        "strides": strides,
        "byte_offset": t.byte_offset,
    }


def capsule_info(capsule):
    """What an unconsumed capsule holds (it stays unconsumed)."""
    name = capsule_name(capsule)
    pointer = _api.PyCapsule_GetPointer(capsule, name.encode())
    if name == "dltensor_versioned":
        managed = ManagedVersioned.from_address(pointer)
        info = tensor_fields(managed.dl_tensor)
        info.update(name=name, version=(managed.major, managed.minor), flags=managed.flags, deleter=managed.deleter)
    else:
        managed = ManagedLegacy.from_address(pointer)
        info = tensor_fields(managed.dl_tensor)
        info.update(name=name, version=None, flags=0, deleter=managed.deleter)
    return info


class Recorder:
    """A producer that records how consumers call it, forwarding to `inner`."""

    def __init__(self, inner, with_device=True):
        self.inner = inner
        self.calls = []
        if not with_device:
            self.__dlpack_device__ = None

    def __dlpack_device__(self):
        self.calls.append(("__dlpack_device__",))
        return self.inner.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        self.calls.append(("__dlpack__", kwargs))
        return self.inner.__dlpack__(**kwargs)


class Returns:
    """A producer whose `__dlpack__` returns a given capsule (whatever it is asked)."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


class Only:
    """A producer that offers only `__dlpack__` (no exchange table, not NumPy's type): the protocol
    path of every consumer."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kwargs):
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()


def as_numpy(t):
    """A NumPy view of a dlspan tensor (through the buffer protocol)."""
    return np.asarray(t)


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


@pytest.fixture(scope="session")
def jnp():
    pytest.importorskip("jax", reason="JAX is not installed")
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy

    return jax.numpy


@pytest.fixture(autouse=True)
def no_borrow_left():
    """Every test leaves no view argument registered, whatever path it took out of dlspan."""
    yield
    assert dlspan.diagnostics.live_borrows() == 0
