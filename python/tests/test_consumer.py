"""dlspan as a consumer: each producer's dialect, capsules, copy modes, devices."""

import gc

import numpy as np
import pytest
from conftest import IS_COPIED, READ_ONLY, Only, Recorder, Returns, capsule_info, capsule_name

import dlspan
import dlspan.examples


def test_calls_dlpack_device_then_dlpack_with_max_version_only():
    producer = Recorder(np.arange(6, dtype=np.int32))
    t = dlspan.from_dlpack(producer)
    assert producer.calls == [("__dlpack_device__",), ("__dlpack__", {"max_version": (1, 3)})]
    assert (t.shape, t.dtype) == ((6,), "int32")


def test_copy_and_device_are_passed_only_when_they_mean_something():
    producer = Recorder(np.arange(3.0))
    dlspan.from_dlpack(producer, copy=False)
    assert producer.calls[-1] == ("__dlpack__", {"max_version": (1, 3), "copy": False})
    # copy=True of host memory is not asked of the producer: dlspan copies itself.
    dlspan.from_dlpack(producer, copy=True)
    assert producer.calls[-1] == ("__dlpack__", {"max_version": (1, 3)})
    # The tensor's own device is not passed; another one is.
    dlspan.from_dlpack(producer, device="cpu")
    assert producer.calls[-1] == ("__dlpack__", {"max_version": (1, 3)})
    with pytest.raises(BufferError, match="unsupported device"):  # NumPy's own refusal, passed on
        dlspan.from_dlpack(producer, device=(2, 0))
    assert producer.calls[-1] == ("__dlpack__", {"max_version": (1, 3), "dl_device": (2, 0)})


def test_no_dlpack_device_method_is_fine():
    class NoDevice:
        def __init__(self, inner):
            self.inner = inner

        def __dlpack__(self, **kwargs):
            return self.inner.__dlpack__(**kwargs)

    assert dlspan.from_dlpack(NoDevice(np.ones(2))).shape == (2,)


def test_retries_with_fewer_keywords_on_type_error():
    class Old:
        """A producer of the 2021 array API: no keywords at all."""

        def __init__(self):
            self.calls = 0
            self.inner = np.arange(4, dtype=np.int16)

        def __dlpack__(self):
            self.calls += 1
            return self.inner.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    old = Old()
    t = dlspan.from_dlpack(old)
    assert old.calls == 1 and t.dtype == "int16"
    np.testing.assert_array_equal(np.asarray(t), old.inner)


def test_type_error_everywhere_is_raised():
    class Broken:
        def __dlpack__(self, **kwargs):
            raise TypeError("no")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match="no"):
        dlspan.from_dlpack(Broken())


def test_not_a_producer_is_a_type_error():
    with pytest.raises(TypeError):
        dlspan.from_dlpack([1, 2, 3])


def test_versioned_legacy_and_bare_capsules():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    versioned = a.__dlpack__(max_version=(1, 0))
    legacy = a.__dlpack__()
    assert (capsule_name(versioned), capsule_name(legacy)) == ("dltensor_versioned", "dltensor")
    for capsule in (versioned, legacy):
        t = dlspan.from_dlpack(capsule)  # a bare capsule
        np.testing.assert_array_equal(np.asarray(t), a)
        assert capsule_name(capsule).startswith("used_")
    # A capsule returned by a producer, in either form.
    for form in ({"max_version": (1, 0)}, {}):
        t = dlspan.from_dlpack(Returns(a.__dlpack__(**form)))
        np.testing.assert_array_equal(np.asarray(t), a)


def test_consumed_capsule_is_refused():
    capsule = np.arange(3).__dlpack__(max_version=(1, 0))
    dlspan.from_dlpack(capsule)
    with pytest.raises(BufferError) as err:
        dlspan.from_dlpack(capsule)
    assert err.value.kind == "CapsuleConsumed"
    with pytest.raises(ValueError):  # NumPy refuses it too, as a ValueError
        np.from_dlpack(Returns(capsule))


def test_other_capsules_are_refused():
    import ctypes

    ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
    ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    foreign = ctypes.pythonapi.PyCapsule_New(ctypes.c_void_p(8), b"something_else", None)
    with pytest.raises(TypeError) as err:
        dlspan.from_dlpack(foreign)
    assert err.value.kind == "NotDlpackCapsule"


def test_legacy_capsule_is_writable_versioned_flags_are_kept():
    a = np.arange(4.0)
    t = dlspan.from_dlpack(Returns(a.__dlpack__()))
    assert not t.readonly
    ro = np.arange(4.0)
    ro.flags.writeable = False
    t = dlspan.from_dlpack(ro)
    assert t.readonly
    assert not np.from_dlpack(t).flags.writeable


def test_copy_true_copies_once_and_marks_is_copied():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::-1]
    t = dlspan.from_dlpack(a, copy=True)
    assert t.strides == (3, 1), "a compact row-major copy"
    np.testing.assert_array_equal(np.asarray(t), a)
    a[0, 0] = 99
    assert np.asarray(t)[0, 0] != 99, "independent of the source"
    info = capsule_info(t.__dlpack__(max_version=(1, 3)))
    assert info["flags"] & READ_ONLY == 0
    assert np.asarray(t).ctypes.data % 64 == 0, "copies are 64-byte aligned"


def test_copy_false_shares():
    a = np.arange(6.0)
    t = dlspan.from_dlpack(a, copy=False)
    np.from_dlpack(t)[0] = 42.0
    assert a[0] == 42.0


def test_copy_false_refused_when_the_producer_copies():
    a = np.arange(3.0)
    copied = Returns(a.__dlpack__(max_version=(1, 0), copy=True))
    assert capsule_info(copied.capsule)["flags"] & IS_COPIED
    with pytest.raises(ValueError) as err:
        dlspan.from_dlpack(copied, copy=False)
    assert err.value.kind == "CopyRequired"


def _numpy_edge_cases():
    """Exact NumPy arrays of every kind the struct reader meets, and those it leaves to
    `__dlpack__` (whose refusals are NumPy's)."""
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    read_only = np.arange(5, dtype=np.int16)
    read_only.flags.writeable = False
    misaligned = np.frombuffer(bytearray(21), dtype=np.float32, offset=1, count=5)
    record = np.zeros(4, dtype=[("a", "i1"), ("b", "<f4")])
    cases = {
        "contiguous": base,
        "transposed": base.T,
        "reversed": base[::-1, :, ::-2],
        "broadcast": np.broadcast_to(np.arange(3.0), (4, 3)),
        "rank 0": np.array(7, dtype=np.uint8),
        "empty": np.zeros((0, 3), dtype=np.complex64),
        "unit axes": np.arange(6.0)[:, None][::2],
        "read-only": read_only,
        "bytes": np.frombuffer(b"\x01\x00\x01", dtype=np.bool_),
        "misaligned": misaligned,
        "rank 40": np.zeros((1,) * 39 + (2,), dtype=np.int64),
        "byte-swapped": np.arange(3, dtype=">f4"),
        "long double": np.zeros(2, dtype=np.longdouble),
        "object": np.array([None, 1], dtype=object),
        "strides not whole elements": record["b"],
        "datetime": np.zeros(2, dtype="datetime64[s]"),
    }
    for dtype in ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f8", "c16", np.int_, np.uint):
        cases[f"dtype {np.dtype(dtype).name}"] = np.arange(3).astype(dtype)
    return cases


def _described(t):
    values = np.asarray(t)
    fields = (t.shape, t.strides, t.dtype, t.device, t.readonly, t.ndim, t.size, t.nbytes)
    return fields + (values.__array_interface__["data"][0], values.tobytes())


@pytest.mark.parametrize("case", sorted(_numpy_edge_cases()))
def test_numpy_arrays_read_from_the_struct_agree_with_the_capsule_path(case):
    # An exact ndarray is read from NumPy's struct; the same array behind a wrapper goes through
    # `__dlpack__` and a capsule. Same tensor (shape, strides, flags, the very memory), same errors.
    a = _numpy_edge_cases()[case]
    try:
        expected = _described(dlspan.from_dlpack(Recorder(a)))
    except Exception as err:  # noqa: BLE001 - the capsule path's error is the expected one
        with pytest.raises(type(err)) as raised:
            dlspan.from_dlpack(a)
        assert str(raised.value) == str(err)
        return
    for kwargs in ({}, {"copy": False}, {"device": "cpu"}):
        assert _described(dlspan.from_dlpack(a, **kwargs)) == expected, kwargs


def test_numpy_arrays_read_from_the_struct_keep_the_array_alive():
    import weakref

    a = np.arange(8, dtype=np.float64)
    alive = weakref.ref(a)
    t = dlspan.from_dlpack(a)
    del a
    gc.collect()
    assert alive() is not None, "the tensor holds the array"
    np.testing.assert_array_equal(np.asarray(t), np.arange(8.0))
    del t
    gc.collect()
    assert alive() is None, "and lets it go"


def test_torch_dialect(torch):
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    producer = Recorder(x)
    t = dlspan.from_dlpack(producer)
    assert producer.calls[-1] == ("__dlpack__", {"max_version": (1, 3)})
    assert (t.shape, t.strides, t.dtype) == ((2, 3), (3, 1), "float32")
    assert np.asarray(t).ctypes.data == x.data_ptr()


def test_torch_copy_true_is_a_real_copy(torch):
    """PyTorch never sets IS_COPIED: dlspan copies itself and says so."""
    x = torch.arange(4.0)
    t = dlspan.from_dlpack(x, copy=True)
    x[0] = 100.0
    assert np.asarray(t)[0] == 0.0
    assert capsule_info(t.__dlpack__(max_version=(1, 3)))["flags"] & READ_ONLY == 0


def test_torch_lazy_bits_are_refused(torch):
    c = torch.tensor([1 + 2j, 3 - 1j])
    with pytest.raises(BufferError) as err:
        dlspan.from_dlpack(c.conj())
    assert err.value.kind == "ConjugateBit"
    with pytest.raises(BufferError) as err:
        dlspan.from_dlpack(c.conj().imag)
    assert err.value.kind == "NegativeBit"
    np.testing.assert_array_equal(np.asarray(dlspan.from_dlpack(c.conj().imag.resolve_neg())), [-2.0, 1.0])


def test_torch_host_tensors_are_shared_holding_their_storage(torch):
    """A PyTorch tensor in host memory is read as a view argument reads it, and the Tensor holds
    its storage: `set_` pointing the PyTorch tensor at other memory frees nothing the Tensor reads
    (through `__dlpack__`, whose export holds the same TensorImpl, and NumPy's views of it, the
    old values were freed memory)."""
    x = torch.arange(4.0) + 10
    t = dlspan.from_dlpack(x)
    assert np.asarray(t).ctypes.data == x.data_ptr(), "shared, not copied"
    x.set_(torch.zeros(100))
    gc.collect()
    churn = [torch.full((4,), 7.0) for _ in range(64)]
    assert t.tolist() == [10.0, 11.0, 12.0, 13.0]
    del churn
    # Strided, 0-d, empty, bool and bfloat16 tensors take the same path.
    m = torch.arange(6.0).reshape(2, 3).t()
    assert dlspan.from_dlpack(m).strides == (1, 3)
    assert dlspan.from_dlpack(torch.tensor(5.0)).tolist() == 5.0
    assert dlspan.from_dlpack(torch.ones(0, 3)).shape == (0, 3)
    assert dlspan.from_dlpack(torch.tensor([True, False])).tolist() == [True, False]
    assert dlspan.from_dlpack(torch.ones(2, dtype=torch.bfloat16)).dtype == "bfloat16"


def test_torch_refusals_and_modes_stay_pytorchs(torch):
    """What `torch.Tensor.__dlpack__` treats otherwise goes through it: its refusals are PyTorch's,
    and a `__torch_function__` mode sees the call."""
    with pytest.raises(BufferError, match="require gradient"):
        dlspan.from_dlpack(torch.ones(3, requires_grad=True))
    with pytest.raises(BufferError, match="strided"):
        dlspan.from_dlpack(torch.eye(3).to_sparse())
    seen = []

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    x = torch.ones(2)
    with Mode():
        dlspan.from_dlpack(x)
    assert "__dlpack__" in seen


def test_jax_arrays_are_read_only(jnp):
    j = jnp.arange(6.0, dtype=jnp.float32)
    producer = Recorder(j)
    dlspan.from_dlpack(producer)
    assert producer.calls[-1] == ("__dlpack__", {"max_version": (1, 3)})
    t = dlspan.from_dlpack(j)
    assert t.readonly, "JAX arrays are immutable although their legacy capsules cannot say so"
    np.testing.assert_array_equal(np.asarray(t), np.arange(6.0, dtype=np.float32))
    with pytest.raises(ValueError) as err:
        dlspan.examples.axpy(1.0, np.ones(6, np.float32), j)
    assert err.value.kind == "ReadOnly"


def test_imported_tensor_outlives_its_producer(torch):
    x = torch.arange(1000, dtype=torch.int64)
    t = dlspan.from_dlpack(x)
    del x
    gc.collect()
    np.testing.assert_array_equal(np.asarray(t), np.arange(1000))
    a = np.asarray(t)
    del t
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(1000))


def test_protocol_path_for_any_producer():
    a = np.arange(10, dtype=np.uint8)[::3]
    t = dlspan.from_dlpack(Only(a))
    assert (t.shape, t.strides) == ((4,), (3,))
    np.testing.assert_array_equal(np.asarray(t), a)


def test_pytorchs_read_only_wrapper_is_a_read_only_producer(torch):
    """PyTorch's ReadOnlyTensorWrapper (2.15) exports through a read-only exchange table of its own
    and raises for every other method: it is read through that table and `__dlpack__` as a producer
    of its own, never written."""
    wrapper = getattr(torch.utils.dlpack, "ReadOnlyTensorWrapper", None)
    if wrapper is None:
        pytest.skip(f"skipped: PyTorch {torch.__version__} has no torch.utils.dlpack.ReadOnlyTensorWrapper")
    x = torch.arange(4.0)
    ro = wrapper(x)
    t = dlspan.from_dlpack(ro)
    assert t.readonly and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.asarray(t).ctypes.data == x.data_ptr(), "shared, not copied"
    assert dlspan.sum(ro) == 6.0
    with pytest.raises(ValueError) as err:
        dlspan.scale_(ro, 2.0)
    assert err.value.kind == "ReadOnly"
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
