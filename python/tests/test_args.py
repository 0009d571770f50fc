"""Typed and dynamic view arguments: every framework and path gives the same view; wrong
arguments are exceptions naming the argument, the expected and the found; borrow checking."""

import numpy as np
import pytest
from conftest import Only

import dlspan
import dlspan.diagnostics
import dlspan.examples


def f32(values):
    return np.asarray(values, dtype=np.float32)


def test_axpy_on_every_source(torch, jnp):
    x = f32([1, 2, 3, 4])
    for source in (x, torch.from_numpy(x.copy()), jnp.asarray(x), dlspan.from_dlpack(x.copy()), Only(x.copy())):
        y = f32([10, 10, 10, 10])
        dlspan.examples.axpy(2.0, source, y)
        np.testing.assert_array_equal(y, [12, 14, 16, 18])
    for out, before in ((torch.ones(4), 1), (dlspan.zeros(4), 0), (Only(np.zeros(4, np.float32)), 0)):
        dlspan.examples.axpy(1.0, x, out)
        after = out.inner if isinstance(out, Only) else np.from_dlpack(out)
        np.testing.assert_array_equal(after, x + before)


def test_every_path_gives_the_same_view(torch):
    base = np.arange(48, dtype=np.float64).reshape(6, 8)
    views = [base[1:5:2, ::-3], base.T[::2], np.broadcast_to(base[:1, :3], (4, 3)), base[2:3, 4:5]]
    for a in views:
        expected = (dlspan.signature(a), dlspan.sum(a))
        assert (dlspan.signature(Only(a)), dlspan.sum(Only(a))) == expected, "the __dlpack__ path"
        t = dlspan.from_dlpack(a)
        assert (dlspan.signature(t), dlspan.sum(t)) == expected, "the dlspan.Tensor path"
        if all(s >= 0 for s in a.strides):
            x = torch.from_numpy(a)
            assert (dlspan.signature(x) & ~(1 << 58), dlspan.sum(x)) == (expected[0] & ~(1 << 58), expected[1]), (
                "the exchange-table path (PyTorch knows no read-only tensors)"
            )
        assert np.isclose(dlspan.sum(a), a.sum())


def test_det3_static_extents(torch):
    m = np.array([[2.0, 0, 0], [0, 3, 0], [1, 0, 4]])
    assert dlspan.examples.det3(m) == 24.0
    assert dlspan.examples.det3(torch.from_numpy(m)) == 24.0
    assert dlspan.examples.det3(np.asfortranarray(m)) == 24.0, "any positive strides"
    with pytest.raises(ValueError) as err:
        dlspan.examples.det3(np.eye(4))
    assert (err.value.kind, err.value.expected, err.value.found) == ("ExtentMismatch", 3, 4)
    assert "while processing 'm'" in err.value.__notes__
    with pytest.raises(ValueError) as err:
        dlspan.examples.det3(m[::-1])
    assert err.value.kind == "NonPositiveStride"


def test_trace_compact_layout():
    m = np.arange(9.0).reshape(3, 3)
    assert dlspan.examples.trace(m) == 12.0
    with pytest.raises(ValueError) as err:
        dlspan.examples.trace(m.T)
    assert err.value.kind == "StridesIncompatible"
    with pytest.raises(ValueError) as err:
        dlspan.examples.trace(np.zeros((2, 3)))
    assert err.value.kind == "ShapeMismatch"


def test_wrong_dtype_rank_device_layout():
    with pytest.raises(TypeError) as err:
        dlspan.examples.axpy(1.0, np.ones(3), f32([1, 2, 3]))
    assert (err.value.kind, err.value.expected, err.value.found) == ("DtypeMismatch", "float32", "float64")
    assert "while processing 'x'" in err.value.__notes__
    with pytest.raises(TypeError) as err:
        dlspan.examples.axpy(1.0, f32([1, 2]), np.ones((2, 2), np.float32))
    assert (err.value.kind, err.value.expected, err.value.found) == ("RankMismatch", 1, 2)
    assert "while processing 'y'" in err.value.__notes__
    with pytest.raises(ValueError) as err:
        dlspan.examples.axpy(1.0, f32([1, 2]), f32([1, 2, 3]))
    assert err.value.kind == "ShapeMismatch"


def test_cuda_tensor_is_refused_by_host_views(torch):
    class FakeCuda:
        """Claims CUDA memory; the view refuses it before touching it."""

        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kwargs):
            raise BufferError("no CUDA here")

    with pytest.raises(BufferError, match="no CUDA here"):
        dlspan.examples.axpy(1.0, FakeCuda(), np.ones(2, np.float32))


def test_read_only_sources_never_give_mutable_views(torch):
    ro = np.ones(3, np.float32)
    ro.flags.writeable = False
    for target in (ro, dlspan.from_dlpack(ro), Only(ro), np.broadcast_to(np.float32(1), (3,))):
        with pytest.raises(ValueError) as err:
            dlspan.examples.axpy(1.0, f32([1, 2, 3]), target)
        assert err.value.kind == "ReadOnly"
    # NumPy's import of a legacy capsule is read-only too.
    legacy = np.from_dlpack(_Legacy(torch.ones(3)))
    assert not legacy.flags.writeable
    with pytest.raises(ValueError):
        dlspan.scale_(legacy, 2.0)


class _Legacy:
    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kwargs):
        return self.inner.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


def test_overlapping_strides_refused_for_writes(torch):
    with pytest.raises(ValueError) as err:
        dlspan.examples.axpy(1.0, f32([1, 2, 3]), torch.ones(1).expand(3))
    assert err.value.kind == "OverlappingStrides"
    with pytest.raises(ValueError) as err:
        dlspan.scale_(torch.ones(1).expand(3), 2.0)
    assert err.value.kind == "OverlappingStrides"


def test_borrow_conflicts(torch):
    y = f32([1, 2, 3, 4])
    with pytest.raises(ValueError) as err:
        dlspan.examples.axpy(1.0, y, y)
    assert (err.value.kind, err.value.__notes__) == ("BorrowConflict", ["while processing 'y'"])
    with pytest.raises(ValueError) as err:
        dlspan.examples.axpy(1.0, torch.from_numpy(y), y)  # a torch tensor sharing NumPy's memory
    assert err.value.kind == "BorrowConflict"
    with pytest.raises(ValueError):
        dlspan.add(y, y, y)
    with pytest.raises(ValueError):
        dlspan.add(y[:2], y[1:3], y[2:])
    # Disjoint parts and interleaved views are fine; shared views may overlap.
    dlspan.add(y[:2], y[:2], y[2:])
    np.testing.assert_array_equal(y, [1, 2, 2, 4])
    z = np.arange(8, dtype=np.float32)
    dlspan.add(z[::2], z[::2], z[1::2])
    np.testing.assert_array_equal(z[1::2], [0, 4, 8, 12])
    assert dlspan.diagnostics.live_borrows() == 0


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_blocks_of_columns_do_not_conflict(framework, torch):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = x if framework == "numpy" else torch.from_numpy(x)
    dlspan.add(m[:, :2], m[:, :2], m[:, 2:])  # the left half doubled into the right half
    np.testing.assert_array_equal(x[:, 2:], 2 * x[:, :2])
    dlspan.add(m[:, 0], m[:, 1], m[:, 3])  # single columns
    np.testing.assert_array_equal(x[:, 3], x[:, 0] + x[:, 1])
    dlspan.add(m.T[:2], m.T[:2], m.T[2:])  # rows of the transpose: the same blocks
    np.testing.assert_array_equal(x[:, 2:], 2 * x[:, :2])
    if framework == "numpy":  # columns 1, 0 (reversed) and 0, 1 into 2, 3
        dlspan.add(x[:, 1::-1], x[:, :2], x[:, 2:])
        np.testing.assert_array_equal(x[:, 2:], x[:, [1, 0]] + x[:, :2])
    # Blocks sharing a column still conflict.
    with pytest.raises(ValueError) as err:
        dlspan.add(m[:, :3], m[:, :3], m[:, 1:])
    assert err.value.kind == "BorrowConflict"
    assert dlspan.diagnostics.live_borrows() == 0


def test_requires_grad_policy(torch):
    w = torch.nn.Parameter(torch.ones(3))
    g = torch.ones(3, requires_grad=True)
    assert dlspan.sum(w) == 3.0 and dlspan.sum(g) == 3.0, "shared views read detached"
    with pytest.raises(ValueError) as err:
        dlspan.scale_(w, 2.0)
    assert err.value.kind == "RequiresGrad"
    with pytest.raises(ValueError):
        dlspan.examples.axpy(1.0, f32([1, 1, 1]), g)
    with torch.no_grad():
        dlspan.scale_(w, 2.0)  # an optimiser's in-place update
    assert torch.equal(w.detach(), torch.full((3,), 2.0))
    with pytest.raises(BufferError):
        w.__dlpack__()  # what PyTorch's own protocol says


def test_torch_lazy_bits(torch):
    c = torch.tensor([1 + 2j, 3 - 1j])
    with pytest.raises(BufferError) as err:
        dlspan.sum(c.conj())
    assert err.value.kind == "ConjugateBit"
    with pytest.raises(BufferError) as err:
        dlspan.sum(torch._neg_view(c))
    assert err.value.kind == "NegativeBit"
    assert dlspan.sum(c.conj().resolve_conj()) == complex(4, -1)


def test_subclass_overriding_dlpack_goes_through_it(torch):
    class Tracked(torch.Tensor):
        calls = 0

        def __dlpack__(self, **kwargs):
            Tracked.calls += 1
            return super().__dlpack__(**kwargs)

    x = torch.ones(3).as_subclass(Tracked)
    assert dlspan.sum(x) == 3.0
    assert Tracked.calls == 1


def test_dynamic_functions(torch):
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = np.zeros((2, 3), np.int16)
    dlspan.add(a, a.T.T, out)
    np.testing.assert_array_equal(out, 2 * a)
    dlspan.mul(a, a, out)
    np.testing.assert_array_equal(out, a * a)
    dlspan.scale_(out, 3)
    np.testing.assert_array_equal(out, 3 * a * a)
    with pytest.raises(TypeError) as err:
        dlspan.scale_(out, 0.5)
    assert err.value.kind == "ScalarKind"
    c = torch.ones(2, 2, dtype=torch.complex64)
    dlspan.scale_(c, 1j)
    assert torch.equal(c, torch.full((2, 2), 1j, dtype=torch.complex64))
    with pytest.raises(TypeError) as err:
        dlspan.add(a, np.zeros((2, 3)), out)
    assert err.value.kind == "DtypeMismatch"
    assert dlspan.sum(np.ones(5, bool)) == 5
    any_bytes = np.array([2, 1, 0, 255], np.uint8).view(np.bool_)
    assert dlspan.sum(any_bytes) == int(any_bytes.sum()) == 3, "a nonzero byte is True, as NumPy reads it"
    assert isinstance(dlspan.sum(np.ones(3, np.float16)), float)
    wrapping = np.array([2**62, 2**62], np.int64)
    assert dlspan.sum(wrapping) == int(wrapping.sum()) == -(2**63), "integers wrap as NumPy's do"


def test_signature(torch):
    a = np.zeros((2, 3), np.float32)
    key = dlspan.signature(a)
    assert key == dlspan.signature(torch.zeros(2, 3)) == dlspan.signature(dlspan.zeros((2, 3)))
    assert key & 0xFFFFFFFF == 2 | 32 << 8 | 1 << 16
    assert (key >> 32) & 0xFF == 2
    layouts = [dlspan.signature(x) >> 40 & 3 for x in (a, a.T, a[:, ::2], a[:, ::-1])]
    assert layouts == [0, 1, 2, 3]
    ro = np.zeros(2)
    ro.flags.writeable = False
    assert dlspan.signature(ro) >> 58 & 1 == 1
    assert len({dlspan.signature(x) for x in (a, a.T, np.zeros((2, 3)), np.zeros(3))}) == 4
