"""dlspan.Tensor: construction, metadata, the buffer protocol, every dtype dlspan holds."""

import ctypes

import numpy as np
import pytest

import dlspan

PyBUF_ND, PyBUF_STRIDES = 0x0008, 0x0018
PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS = 0x0020 | PyBUF_STRIDES, 0x0040 | PyBUF_STRIDES


def get_buffer(obj, flags):
    """PyObject_GetBuffer with explicit flags (memoryview always asks for strides)."""
    buffer = (ctypes.c_byte * 80)()  # sizeof(Py_buffer) on 64-bit targets
    ctypes.pythonapi.PyObject_GetBuffer.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
    ctypes.pythonapi.PyBuffer_Release.argtypes = [ctypes.c_void_p]
    ctypes.pythonapi.PyObject_GetBuffer(obj, buffer, flags)
    ctypes.pythonapi.PyBuffer_Release(buffer)

NUMPY_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"]
OTHER_NAMES = ["int128", "uint128", "bfloat16", "complex32", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
               "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
               "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "float4_e2m1fn_x2"]


@pytest.mark.parametrize("name", NUMPY_NAMES + OTHER_NAMES)
def test_zeros_of_every_dtype(name):
    t = dlspan.zeros((2, 3), name)
    assert (t.shape, t.strides, t.dtype, t.device, t.readonly, t.ndim, t.size) == ((2, 3), (3, 1), name, "cpu", False, 2, 6)
    info = t.__dlpack__(max_version=(1, 3))
    from conftest import capsule_info

    fields = capsule_info(info)
    assert fields["data"] % 64 == 0, "64-byte aligned: JAX imports without copying"
    assert fields["shape"] == [2, 3] and fields["strides"] == [3, 1]


def test_packed_sub_byte_sizes():
    assert dlspan.zeros(3, "float4_e2m1fn").nbytes == 2, "three FP4 values in two bytes"
    assert dlspan.zeros(4, "float6_e2m3fn").nbytes == 3
    assert dlspan.zeros(3, "float4_e2m1fn_x2").nbytes == 3


def test_dtype_descriptions(torch):
    assert dlspan.zeros(1, np.float32).dtype == "float32"
    assert dlspan.zeros(1, np.dtype("int16")).dtype == "int16"
    assert dlspan.zeros(1, np.intc).dtype == "int32"
    assert dlspan.zeros(1, torch.bfloat16).dtype == "bfloat16"
    assert dlspan.zeros(1, torch.float8_e4m3fn).dtype == "float8_e4m3fn"
    assert dlspan.zeros(1, float).dtype == "float64"
    assert dlspan.zeros(1, bool).dtype == "bool"
    assert dlspan.zeros(1, complex).dtype == "complex128"
    assert dlspan.zeros(1).dtype == "float32"
    with pytest.raises(TypeError) as err:
        dlspan.zeros(1, "float33")
    assert err.value.kind == "UnknownDtype"


def test_shapes():
    assert dlspan.zeros(()).shape == ()
    assert dlspan.zeros(()).size == 1
    assert dlspan.zeros(5).shape == (5,)
    assert dlspan.zeros([2, 0, 3]).size == 0
    with pytest.raises(ValueError):
        dlspan.zeros((-1,))
    with pytest.raises(BufferError) as err:
        dlspan.zeros((1 << 62, 4), "float64")
    assert err.value.kind == "SpanOverflow"
    with pytest.raises(BufferError) as err:
        dlspan.zeros((1 << 45,), "uint8")  # 32 TiB: the allocator refuses
    assert err.value.kind == "AllocationFailed"


def test_repr_and_len():
    assert repr(dlspan.zeros((2, 3))) == "Tensor([[0., 0., 0.],\n        [0., 0., 0.]], dtype=float32)"
    assert repr(dlspan.zeros(4, "int8")) == "Tensor([0, 0, 0, 0], dtype=int8)"
    assert len(dlspan.zeros((7, 2))) == 7
    with pytest.raises(TypeError):
        len(dlspan.zeros(()))


@pytest.mark.parametrize("name", NUMPY_NAMES)
def test_buffer_protocol(name):
    t = dlspan.from_dlpack(np.arange(6).astype(name).reshape(2, 3))
    view = memoryview(t)
    assert (view.shape, view.ndim, view.readonly) == ((2, 3), 2, False)
    np.testing.assert_array_equal(np.asarray(t), np.arange(6).astype(name).reshape(2, 3))
    np.asarray(t)[1, 2] = np.asarray(t)[0, 1]
    assert np.asarray(t)[1, 2] == np.asarray(t)[0, 1]


def test_buffer_protocol_strided_and_read_only():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[::-1, ::2]
    t = dlspan.from_dlpack(a)
    np.testing.assert_array_equal(np.asarray(t), a)
    assert memoryview(t).strides == a.strides
    assert not memoryview(t).c_contiguous
    for flags in (PyBUF_C_CONTIGUOUS, PyBUF_ND):  # a contiguous buffer asked of strided memory
        with pytest.raises(BufferError):
            get_buffer(t, flags)
    get_buffer(dlspan.from_dlpack(np.asfortranarray(np.ones((2, 3)))), PyBUF_F_CONTIGUOUS)
    with pytest.raises(BufferError):
        get_buffer(dlspan.zeros((2, 3)), PyBUF_F_CONTIGUOUS)
    ro = np.ones(3)
    ro.flags.writeable = False
    t = dlspan.from_dlpack(ro)
    assert memoryview(t).readonly
    assert not np.asarray(t).flags.writeable


def test_buffer_protocol_refuses_formatless_dtypes():
    with pytest.raises(BufferError):
        memoryview(dlspan.zeros(2, "bfloat16"))
    with pytest.raises(BufferError):
        memoryview(dlspan.zeros(3, "float4_e2m1fn"))


def test_arange():
    np.testing.assert_array_equal(np.asarray(dlspan.arange(5)), np.arange(5))
    np.testing.assert_array_equal(np.asarray(dlspan.arange(4, "float32")), np.arange(4, dtype=np.float32))
    assert dlspan.arange(0).size == 0
    np.testing.assert_array_equal(np.asarray(dlspan.arange(300, "uint8")), np.arange(300).astype(np.uint8))


def test_dlpack_device():
    assert dlspan.zeros(1).__dlpack_device__() == (1, 0)


def test_exchange_api_capsule():
    capsule = dlspan.Tensor.__dlpack_c_exchange_api__
    assert type(capsule).__name__ == "PyCapsule"
    from conftest import capsule_name

    assert capsule_name(capsule) == "dlpack_exchange_api"
    assert dlspan.Tensor.__dict__["__dlpack_c_exchange_api__"] is capsule
