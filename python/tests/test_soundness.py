"""Reproducers of memory-safety holes, each a test that failed before its fix: copies of broadcast
and overlapping tensors sized by the memory they span, the borrow registry fooled by device labels,
read-only memory written through an exchange table, PyTorch's negation bit on real dtypes, and a
view's storage freed by Python code run during the call."""

import ctypes
import gc
import weakref

import numpy as np
import pytest
from conftest import DLTensor, Returns, ManagedVersioned, READ_ONLY, capsule_info

import dlspan
import dlspan.diagnostics
import dlspan.examples


def test_copies_of_broadcast_tensors_hold_every_element():
    a = np.broadcast_to(np.arange(4.0), (1_000_000, 4))
    t = dlspan.from_dlpack(a, copy=True)
    assert t.nbytes == a.nbytes == 32_000_000
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    shared = dlspan.from_dlpack(a)
    assert shared.nbytes == a.nbytes, "NumPy's nbytes: every element counts"
    for copy in (np.from_dlpack(shared, copy=True), np.asarray(dlspan.from_dlpack(shared, copy=True))):
        assert copy.shape == a.shape
        np.testing.assert_array_equal(copy, a)
    capsule = shared.__dlpack__(max_version=(1, 3), copy=True)
    assert capsule_info(capsule)["strides"] == [4, 1]


def test_copies_of_overlapping_and_reversed_tensors():
    base = np.arange(12.0)
    overlapping = np.lib.stride_tricks.as_strided(base, shape=(5, 4), strides=(16, 8))  # rows share elements
    for a in (overlapping, overlapping[::-1, ::-2], np.broadcast_to(base[3:4], (3, 0, 2))):
        np.testing.assert_array_equal(np.from_dlpack(dlspan.from_dlpack(a, copy=True)), a)
        np.testing.assert_array_equal(np.from_dlpack(dlspan.from_dlpack(a), copy=True), a)


def _cuda_driver():
    for name in ("libcuda.so.1", "libcuda.so"):
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False


def _relabelled(x, device):
    """A capsule of `x`'s memory whose tensor says it lives on `device`."""
    capsule = x.__dlpack__(max_version=(1, 3))
    pointer = ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    managed = ManagedVersioned.from_address(pointer)
    managed.dl_tensor.device_type, managed.dl_tensor.device_id = device
    return Returns(capsule, device=device)


def test_device_labels_do_not_hide_overlaps():
    x = dlspan.from_dlpack(np.arange(4.0))
    with pytest.raises(ValueError) as err:
        dlspan.add(x, x, _relabelled(x, (1, 1)))  # host memory, device id 1
    assert err.value.kind == "BorrowConflict"
    np.testing.assert_array_equal(np.from_dlpack(x), [0, 1, 2, 3])


@pytest.mark.parametrize("device", [(3, 0), (13, 0)], ids=["cuda_host", "cuda_managed"])
def test_pinned_and_managed_memory_is_read_only_after_the_device(device):
    # Without a CUDA driver the package cannot wait for the device's work on such memory, so it does
    # not read it on the host (rule Y16). With one it synchronises the device first, and reads: the
    # relabelled memory here is plain host memory, which a kernel must not be given.
    if _cuda_driver():
        pytest.skip("skipped: a CUDA driver is installed (this test covers machines without one)")
    x = dlspan.from_dlpack(np.arange(4.0))
    host_view = [lambda: dlspan.sum(_relabelled(x, device))] if device == (3, 0) else []  # pinned: a host view
    for attempt in host_view + [
        lambda: dlspan.from_dlpack(_relabelled(x, device), copy=True),
        lambda: np.from_dlpack(dlspan.from_dlpack(_relabelled(x, device)), copy=True),
        lambda: memoryview(dlspan.from_dlpack(_relabelled(x, device))),
    ]:
        with pytest.raises(BufferError) as err:
            attempt()
        assert err.value.kind == "HostAccessUnordered"


# A producer with a DLPack C exchange table (not PyTorch's) over read-only memory: `bytes`.
_FILL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(DLTensor))
_MANAGED = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Table(ctypes.Structure):
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


def _read_only_producer(with_managed):
    """A class whose objects hold a `bytes` of float64 values, read through an exchange table."""
    live = {}  # what the C side points into, kept alive until the deleter runs
    deleted = []

    def describe(obj, out):
        values = np.frombuffer(obj.data, np.float64)
        shape = (ctypes.c_int64 * 1)(values.size)
        strides = (ctypes.c_int64 * 1)(1)
        out.data, out.device_type, out.device_id, out.ndim = values.ctypes.data, 1, 0, 1
        out.code, out.bits, out.lanes = 2, 64, 1
        out.shape, out.strides, out.byte_offset = shape, strides, 0
        return shape, strides

    @_FILL
    def fill(obj, out):
        # The arrays stay valid while the object lives (the exchange API's promise).
        obj = ctypes.cast(obj, ctypes.py_object).value
        obj.dims = describe(obj, out.contents)
        return 0

    @_DELETER
    def delete(managed):
        deleted.append(managed)
        live.pop(managed)

    @_MANAGED
    def managed_from(obj, out):
        managed = ManagedVersioned(major=1, minor=3, deleter=ctypes.cast(delete, ctypes.c_void_p), flags=READ_ONLY)
        dims = describe(ctypes.cast(obj, ctypes.py_object).value, managed.dl_tensor)
        address = ctypes.addressof(managed)
        live[address] = (managed, dims)
        out[0] = address
        return 0

    table = _Table(major=1, minor=3)
    table.dltensor_from_py_object_no_sync = ctypes.cast(fill, ctypes.c_void_p)
    if with_managed:
        table.managed_tensor_from_py_object_no_sync = ctypes.cast(managed_from, ctypes.c_void_p)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = new_capsule(ctypes.addressof(table), b"dlpack_exchange_api", None)

    class ReadOnly:
        __dlpack_c_exchange_api__ = capsule
        _keep = (table, fill, managed_from, delete)

        def __init__(self, values):
            self.data = np.asarray(values, np.float64).tobytes()

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            view = np.frombuffer(self.data, np.float64)
            return view.__dlpack__(**kwargs)

    return ReadOnly, deleted


@pytest.mark.parametrize("with_managed", [True, False], ids=["managed path", "no managed path"])
def test_exchange_tables_of_other_producers_keep_read_only(with_managed):
    ReadOnly, deleted = _read_only_producer(with_managed)
    x = ReadOnly([1.0, 2.0, 3.0])
    before = x.data
    assert dlspan.sum(x) == 6.0, "shared views read through the table"
    with pytest.raises(ValueError) as err:
        dlspan.scale_(x, 2.0)
    assert err.value.kind == "ReadOnly"
    assert x.data == before == np.array([1.0, 2.0, 3.0]).tobytes(), "immutable bytes stay unwritten"
    if with_managed:
        assert len(deleted) == 1, "the managed tensor taken for the check was released once"


def test_reversed_axes_read_through_a_table_as_through_dlpack():
    # Rule Y5: every path gives the same view. A table describing a reversed axis with `data` at
    # index 0 (the highest address) and stride -1, as NumPy's `__dlpack__` does, is rebased too.
    values = np.array([1.0, 2.0, 3.0, 4.0])
    dims = []

    @_FILL
    def fill(obj, out):
        shape, strides = (ctypes.c_int64 * 1)(4), (ctypes.c_int64 * 1)(-1)
        dims.append((shape, strides))
        t = out.contents
        t.data, t.device_type, t.device_id, t.ndim = values.ctypes.data + 24, 1, 0, 1
        t.code, t.bits, t.lanes = 2, 64, 1
        t.shape, t.strides, t.byte_offset = shape, strides, 0
        return 0

    table = _Table(major=1, minor=3)
    table.dltensor_from_py_object_no_sync = ctypes.cast(fill, ctypes.c_void_p)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

    class Reversed:
        __dlpack_c_exchange_api__ = new_capsule(ctypes.addressof(table), b"dlpack_exchange_api", None)
        _keep = (table, fill)

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            return values[::-1].__dlpack__(**kwargs)

    x = Reversed()
    assert dlspan.sum(x) == 10.0
    assert dlspan.add(x, x).tolist() == [8.0, 6.0, 4.0, 2.0]
    assert dlspan.from_dlpack(x).tolist() == [4.0, 3.0, 2.0, 1.0]


def test_negation_bit_is_refused_on_real_dtypes(torch):
    z = torch.tensor([1 + 2j, 3 - 1j, 2 + 5j])
    imag = z.conj().imag
    assert imag.is_neg() and not imag.is_complex()
    with pytest.raises(BufferError) as err:
        dlspan.sum(imag)
    assert err.value.kind == "NegativeBit"
    assert dlspan.sum(imag.resolve_neg()) == pytest.approx(-6.0)
    with pytest.raises(BufferError):
        dlspan.from_dlpack(imag)
    for dtype in (torch.float32, torch.int64, torch.int8):
        with pytest.raises(BufferError):
            dlspan.sum(torch._neg_view(torch.ones(3, dtype=dtype)))


def test_storage_outlives_set_during_the_call(torch):
    a = np.arange(4.0)
    alive = weakref.ref(a)
    t = torch.from_numpy(a)
    del a
    seen = []

    def callback():
        t.set_(torch.zeros(2, dtype=torch.float64))  # the tensor now points at other memory
        gc.collect()
        seen.append(alive() is not None)

    assert dlspan.diagnostics._sum_during(t, callback) == 6.0, "the view reads the memory it was given"
    assert seen == [True], "the old storage stayed alive while the view did"
    gc.collect()
    assert alive() is None, "and was released with the argument"


def test_a_collection_while_the_storage_is_taken_cannot_swap_it(torch):
    # Python code may run between taking a tensor's storage and reading the tensor: a subclass's
    # `untyped_storage()` goes through `torch.Tensor.__torch_function__` (Python), whose allocations
    # may start a collection whose callbacks (and finalizers) run on this thread. A callback that
    # swaps the tensor's storage there must not leave the view reading memory nothing it holds
    # keeps alive. Every collection of the call is tried in turn as the one that swaps.
    class Sub(torch.Tensor):
        pass

    def trial(when):
        a = np.ones(1 << 12)
        old = weakref.ref(a)
        x = torch.from_numpy(a).as_subclass(Sub)
        del a
        new, collections = [], [0]

        def swap(phase, info):
            collections[0] += phase == "start"
            if collections[0] == when and not new:
                y = np.full(1 << 12, 2.0)
                new.append(weakref.ref(y))
                x.set_(torch.from_numpy(y))

        seen = []

        def callback():
            x.set_(torch.zeros(2, dtype=torch.float64))
            gc.collect()
            seen.append((old() is not None, bool(new) and new[0]() is not None))

        threshold = gc.get_threshold()
        gc.collect()
        gc.callbacks.append(swap)
        gc.set_threshold(1)
        try:
            total = dlspan.diagnostics._sum_during(x, callback)
        finally:
            gc.set_threshold(*threshold)
            gc.callbacks.remove(swap)
        return total, seen[0], collections[0]

    for when in range(1, 40):
        total, (old_held, new_held), collections = trial(when)
        assert total in (4096.0, 8192.0), "either storage, read whole"
        assert old_held if total == 4096.0 else new_held, f"the storage read is held (swap at collection {when})"
        if when > collections:
            break


def test_a_planted_numpy_module_is_not_read_as_numpy():
    import sys
    import types

    class ndarray(int):  # an int subclass: chosen numbers where NumPy's struct has pointers
        pass

    fake = types.ModuleType("numpy")
    fake.ndarray = ndarray
    real = sys.modules["numpy"]
    sys.modules["numpy"] = fake
    try:
        digits = [1, 0, 0, 0, 0x1000, 0, 0, 0, 0x2000, 0, 0x400]
        planted = ndarray(sum(v << (30 * k) for k, v in enumerate(digits)))
        with pytest.raises(TypeError):
            dlspan.examples.trace(planted)  # no `__dlpack__`: not a tensor at all
    finally:
        sys.modules["numpy"] = real
    assert dlspan.examples.trace(np.eye(3)) == 3.0, "the real NumPy is still read as NumPy"


def _numpy_backed(torch, n):
    """A float64 PyTorch tensor whose storage keeps a NumPy array alive, and a weak reference to
    that array (alive exactly as long as the storage)."""
    a = np.ones(n)
    alive = weakref.ref(a)
    return torch.from_numpy(a), alive


def test_pytorch_is_known_without_the_torch_module(torch):
    import sys
    import types

    from conftest import Only

    # Evict torch.Tensor from dlspan's per-type cache (8 entries): 8 new types are classified.
    for i in range(8):
        dlspan.sum(type(f"Producer{i}", (Only,), {})(np.ones(2)))
    x, alive = _numpy_backed(torch, 1 << 10)
    real = sys.modules["torch"]
    sys.modules["torch"] = types.ModuleType("torch")
    try:
        assert dlspan.diagnostics._sum_during(x, lambda: None) == 1024.0  # classified while `torch` is planted
    finally:
        sys.modules["torch"] = real
    seen = []

    def callback():
        x.set_(torch.zeros(2, dtype=torch.float64))
        gc.collect()
        seen.append(alive() is not None)

    assert dlspan.diagnostics._sum_during(x, callback) == 1024.0
    assert seen == [True], "the storage is held: the type was known as PyTorch's"


def test_overridden_checks_run_before_the_tensor_is_read(torch):
    class T(torch.Tensor):
        def is_neg(self):
            with torch._C.DisableTorchFunctionSubclass():
                self.set_(torch.zeros(self.shape, dtype=self.dtype))  # frees the old storage
            return False

    x, alive = _numpy_backed(torch, 1 << 12)
    x = torch.Tensor._make_subclass(T, x)
    total = dlspan.diagnostics._sum_during(x, lambda: gc.collect())
    assert total in (4096.0, 0.0), "either storage, read whole, never freed memory"
    assert total == float(x.sum()) or alive() is not None


def test_a_torch_function_mode_cannot_hand_out_another_storage(torch):
    from torch.overrides import TorchFunctionMode

    other = torch.zeros(1, dtype=torch.float64).untyped_storage()

    class Liar(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") == "untyped_storage":
                return other
            return func(*args, **(kwargs or {}))

    x = torch.ones(64, dtype=torch.float64)
    with Liar():
        with pytest.raises(BufferError) as err:
            dlspan.diagnostics._sum_during(x, lambda: None)
    assert err.value.kind == "StorageMismatch"
    assert dlspan.diagnostics._sum_during(x, lambda: None) == 64.0


def test_a_torch_tensor_reaching_past_its_shrunk_storage_is_refused_everywhere(torch):
    # A storage shrunk under a view (`resize_` of the base's storage) leaves the view reaching
    # memory the storage no longer holds (PyTorch itself then reads freed memory). The view
    # arguments refused it; `from_dlpack` (shared, or copied) took PyTorch's export as it came.
    base = torch.arange(10, dtype=torch.float64)
    view = base[5:]
    base.untyped_storage().resize_(16)
    calls = {
        "sum": lambda: dlspan.sum(view),
        "from_dlpack": lambda: dlspan.from_dlpack(view),
        "from_dlpack copy=True": lambda: dlspan.from_dlpack(view, copy=True),
        "from_dlpack copy=False": lambda: dlspan.from_dlpack(view, copy=False),
        "from_dlpack device=cpu": lambda: dlspan.from_dlpack(view, device="cpu"),
    }
    for name, call in calls.items():
        with pytest.raises(BufferError) as err:
            call()
        assert err.value.kind == "StorageMismatch", name
    # What the storage still holds is read as before.
    assert dlspan.from_dlpack(base[:2]).tolist() == [0.0, 1.0]
    assert dlspan.from_dlpack(base[:2], copy=True).tolist() == [0.0, 1.0]
