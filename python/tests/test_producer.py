"""dlspan as a producer: `__dlpack__` by the array API's rules, and what NumPy, PyTorch and JAX do
with dlspan's capsules."""

import gc
import weakref

import pickle

import numpy as np
import pytest
from conftest import IS_COPIED, READ_ONLY, Recorder, Returns, capsule_info

import dlspan


def read_only_tensor():
    a = np.arange(4.0)
    a.flags.writeable = False
    return dlspan.from_dlpack(a)


def test_legacy_without_max_version():
    t = dlspan.arange(4, "int32")
    info = capsule_info(t.__dlpack__())
    assert (info["name"], info["version"], info["dtype"]) == ("dltensor", None, (0, 32, 1))
    assert info["deleter"], "JAX needs a deleter"
    info = capsule_info(t.__dlpack__(max_version=(0, 8)))
    assert info["name"] == "dltensor"


def test_versioned_at_the_version_asked():
    t = dlspan.arange(4, "int32")
    assert capsule_info(t.__dlpack__(max_version=(1, 0)))["version"] == (1, 0)
    assert capsule_info(t.__dlpack__(max_version=(1, 2)))["version"] == (1, 2)
    assert capsule_info(t.__dlpack__(max_version=(1, 3)))["version"] == (1, 3)
    assert capsule_info(t.__dlpack__(max_version=(1, 9)))["version"] == (1, 3)
    assert capsule_info(t.__dlpack__(max_version=(2, 0)))["version"] == (1, 3)
    info = capsule_info(t.__dlpack__(max_version=(1, 3)))
    assert (info["strides"], info["flags"]) == ([1], 0), "strides always filled"


def test_read_only_rules():
    t = read_only_tensor()
    assert capsule_info(t.__dlpack__(max_version=(1, 0)))["flags"] & READ_ONLY
    with pytest.raises(BufferError) as err:
        t.__dlpack__()
    assert err.value.kind == "ReadOnly"
    copied = capsule_info(t.__dlpack__(copy=True))  # a writable copy may go legacy
    assert copied["name"] == "dltensor"
    assert not np.from_dlpack(t).flags.writeable


def test_copy_modes():
    t = dlspan.arange(6, "float64")
    shared = capsule_info(t.__dlpack__(max_version=(1, 0)))
    copied = capsule_info(t.__dlpack__(max_version=(1, 0), copy=True))
    assert shared["flags"] & IS_COPIED == 0 and copied["flags"] & IS_COPIED
    assert shared["data"] != copied["data"] and copied["data"] % 64 == 0
    assert capsule_info(t.__dlpack__(max_version=(1, 0), copy=False))["data"] == shared["data"]
    a = np.from_dlpack(Returns(t.__dlpack__(max_version=(1, 0), copy=True)))
    a[0] = 7.0
    assert np.asarray(t)[0] == 0.0
    b = np.from_dlpack(t, copy=False)
    b[0] = 7.0
    assert np.asarray(t)[0] == 7.0


def test_stream_and_device_checks():
    t = dlspan.zeros(2)
    t.__dlpack__(stream=None)
    t.__dlpack__(stream=-1)  # PyTorch passes -1 for "no synchronisation"
    for stream in (0, 1, 2, 12345):
        with pytest.raises(ValueError) as err:
            t.__dlpack__(stream=stream)
        assert err.value.kind == "InvalidStream"
        # Also what NumPy and JAX raise, so that code (and tests) written against them catch it.
        assert isinstance(err.value, RuntimeError) and type(err.value) is dlspan.InvalidStreamError
    back = pickle.loads(pickle.dumps(err.value))  # a process pool hands it back
    assert type(back) is dlspan.InvalidStreamError and back.args == err.value.args
    with pytest.raises(TypeError):
        t.__dlpack__(stream="default")
    t.__dlpack__(dl_device=(1, 0))
    with pytest.raises(BufferError) as err:
        t.__dlpack__(dl_device=(2, 0))
    assert (err.value.kind, err.value.expected, err.value.found) == ("DeviceUnavailable", (2, 0), (1, 0))
    with pytest.raises(BufferError) as err:
        t.__dlpack__(dl_device=(2, 0), copy=False)
    assert err.value.kind == "CopyRequired"


def test_capsule_released_once_when_never_consumed():
    t = dlspan.zeros(3)
    alive = weakref.ref(t)
    capsules = [t.__dlpack__(max_version=(1, 0)), t.__dlpack__()]
    del t
    gc.collect()
    assert alive() is not None, "unconsumed capsules keep the tensor alive"
    capsules.clear()
    gc.collect()
    assert alive() is None, "their destructors released it"


def test_numpy_imports(torch):
    t = dlspan.arange(6, "int16")
    producer = Recorder(t)
    a = np.from_dlpack(producer)
    assert producer.calls == [("__dlpack__", {"dl_device": None, "copy": None, "max_version": (1, 0)})]
    a[0] = 99
    assert np.asarray(t)[0] == 99, "writes through a versioned import"
    assert a.flags.writeable


def test_torch_imports(torch):
    t = dlspan.arange(6, "float32")
    producer = Recorder(t)
    x = torch.from_dlpack(producer)
    assert producer.calls[0] == ("__dlpack_device__",)
    x[5] = -1.0
    assert np.asarray(t)[5] == -1.0
    assert x.data_ptr() == np.asarray(t).ctypes.data


def test_torch_ignores_read_only_on_import(torch):
    """Recorded PyTorch behaviour: it writes through a READ_ONLY capsule (dlspan cannot stop it)."""
    base = np.arange(3.0)
    base.flags.writeable = False
    x = torch.from_dlpack(dlspan.from_dlpack(base))
    x[0] = 5.0
    assert base[0] == 5.0


def test_jax_imports_without_copying(jnp):
    t = dlspan.arange(64, "float32")
    producer = Recorder(t)
    j = jnp.from_dlpack(producer)
    assert producer.calls == [("__dlpack_device__",), ("__dlpack__", {"stream": None})]
    assert j.unsafe_buffer_pointer() == np.asarray(t).ctypes.data, "aligned: no copy"
    np.testing.assert_array_equal(np.asarray(j), np.arange(64, dtype=np.float32))
    with pytest.raises(BufferError):
        jnp.from_dlpack(read_only_tensor())


def test_tensor_outlives_consumers_and_the_reverse(torch):
    t = dlspan.arange(1000, "int64")
    alive = weakref.ref(t)
    a = np.from_dlpack(t)
    x = torch.from_dlpack(t)
    del t
    gc.collect()
    assert alive() is not None
    np.testing.assert_array_equal(a, np.arange(1000))
    assert int(x[999]) == 999
    del a
    gc.collect()
    assert alive() is not None, "torch still holds it"
    del x
    gc.collect()
    assert alive() is None, "the last consumer released it"


def misaligned_tensor():
    """A tensor of float32 memory one byte off its alignment: NumPy makes and exports such arrays."""
    values = np.zeros(4 * 4 + 1, np.uint8)[1:].view(np.float32)
    values[:] = [1.0, 2.0, 3.0, 4.0]
    t = dlspan.from_dlpack(values)
    assert np.asarray(t).ctypes.data % 4 == 1
    return t


def first_element(info):
    return info["data"] + info["byte_offset"]


def test_misaligned_memory_is_exported_as_an_aligned_copy():
    """`copy=None` copies when sharing is impossible (the array API: "copy otherwise"), flagged
    IS_COPIED; `copy=False` refuses; no export hands out an element address a typed consumer cannot
    read through."""
    t = misaligned_tensor()
    for kwargs in ({"max_version": (1, 3)}, {}):
        info = capsule_info(t.__dlpack__(**kwargs))
        assert first_element(info) % 4 == 0, kwargs
        assert info["version"] is None or info["flags"] & IS_COPIED
    np.testing.assert_array_equal(np.from_dlpack(t), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(BufferError) as err:
        t.__dlpack__(max_version=(1, 3), copy=False)
    assert err.value.kind == "CopyRequired"


def test_dlpack_keywords_as_pyo3_parsed_them():
    # `__dlpack__` is a hand-written METH_FASTCALL method (keywords matched by identity first):
    # names built at run time (not interned), refusals and the signature behave as before.
    import inspect

    t = dlspan.arange(4, "float32")
    name = "".join(["max_", "version"])  # an equal string, not the interned one
    assert np.from_dlpack(dlspan.from_dlpack(t.__dlpack__(**{name: (1, 0)}))).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 3), copy=None, dl_device=None, stream=None))
    assert "dltensor_versioned" not in repr(t.__dlpack__())
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        t.__dlpack__(bogus=1)
    with pytest.raises(TypeError, match="positional"):
        t.__dlpack__(None)
    with pytest.raises(TypeError, match="argument 'max_version'"):
        t.__dlpack__(max_version=5)
    with pytest.raises(TypeError, match="argument 'copy'"):
        t.__dlpack__(copy="yes")
    with pytest.raises(TypeError):
        dlspan.Tensor.__dlpack__(np.zeros(2))  # not a Tensor: refused by the descriptor
    assert str(inspect.signature(dlspan.Tensor.__dlpack__)) == "(self, /, *, stream=None, max_version=None, dl_device=None, copy=None)"
