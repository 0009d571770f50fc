"""One `dlspan.Tensor` class and one borrow registry per process (rule Y18): an extension built on the
crate separately from the package (`python/tests/extension`, built by the test command) registers its
borrows in the package's registry and makes its results of the package's class, through the
package's C API capsule `dlspan._C_API`; without the package it falls back to its own."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dlspan
import dlspan.diagnostics
import dlspan_test_extension as ext


@pytest.fixture(autouse=True)
def no_borrow_left_in_the_extension():
    yield
    assert ext.live_borrows() == 0


def test_the_package_exports_its_c_api():
    assert "dlspan._C_API" in repr(dlspan._C_API)


def test_results_of_a_separate_extension_are_dlspan_tensors():
    r = ext.tensor([1.0, 2.0, 3.0])
    assert isinstance(r, dlspan.Tensor) and type(r) is dlspan.Tensor
    assert r.tolist() == [1.0, 2.0, 3.0] and r.dtype == "float64"
    doubled, _ = ext.double(dlspan.arange(3, "float64"))
    assert type(doubled) is dlspan.Tensor and doubled.tolist() == [0.0, 2.0, 4.0]
    # The package reads them as its own: typed, mutable, exported.
    dlspan.scale_(r, 2.0)
    assert dlspan.sum(r) == 12.0
    np.testing.assert_array_equal(np.from_dlpack(r), [2.0, 4.0, 6.0])


def test_one_registry_for_both_extensions():
    x = np.arange(4.0)
    seen = []
    ext.hold_during(x, lambda: seen.append((dlspan.diagnostics.live_borrows(), ext.live_borrows())))
    assert seen == [(1, 1)], "the extension's view is in the package's registry"


def test_borrows_conflict_across_extensions():
    x = np.arange(4.0)
    # The extension holds a view while the package asks for a mutable one, and the other way round.
    with pytest.raises(ValueError) as err:
        ext.hold_during(x, lambda: dlspan.scale_(x, 2.0))
    assert err.value.kind == "BorrowConflict"
    with pytest.raises(ValueError) as err:
        dlspan.diagnostics._sum_during(x, lambda: ext.fill(x, 1.0))
    assert err.value.kind == "BorrowConflict"
    # A mutable view in the extension, a shared one in the package.
    with pytest.raises(ValueError) as err:
        ext.fill_during(x, 5.0, lambda: dlspan.sum(x))
    assert err.value.kind == "BorrowConflict"
    np.testing.assert_array_equal(x, [0, 1, 2, 3])
    # Across frameworks too: a torch tensor sharing the memory.
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError):
        ext.hold_during(x, lambda: dlspan.scale_(torch.from_numpy(x), 2.0))
    # Shared views together, and interleaved mutable ones, are fine.
    assert ext.hold_during(x, lambda: dlspan.sum(x)) == 6.0
    ext.fill_during(x[::2], 7.0, lambda: ext.fill(x[1::2], 8.0))
    np.testing.assert_array_equal(x, [7, 8, 7, 8])


def test_the_package_tensors_keep_their_flags_in_an_extension():
    shared = dlspan.Tensor._from_bytes(np.arange(4.0).tobytes(), "float64", (4,), True)
    assert shared.readonly
    assert ext.describe(shared) == (64, True)
    with pytest.raises(ValueError) as err:
        ext.fill(shared, 0.0)
    assert err.value.kind == "ReadOnly"
    # Padded FP4, one value per byte: read as 8-bit elements, not as packed pairs.
    padded = dlspan.Tensor._from_bytes(bytes([1, 2, 3]), "float4_e2m1fn", (3,), False, True)
    packed = dlspan.Tensor._from_bytes(bytes([0x21, 0x03]), "float4_e2m1fn", (3,))
    assert ext.describe(padded) == (8, False) and ext.describe(packed) == (4, False)
    assert padded.tolist() == packed.tolist() == [0.5, 1.0, 1.5]


def _run(code):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_an_extension_falls_back_without_the_package():
    out = _run(
        """
        import sys
        sys.modules["dlspan"] = None  # the package is absent: `import dlspan` fails
        import numpy as np
        import dlspan_test_extension as ext

        r = ext.tensor([1.0, 2.0])
        assert type(r).__name__ == "Tensor" and r.tolist() == [1.0, 2.0]
        x = np.arange(4.0)
        try:
            ext.hold_during(x, lambda: ext.fill(x, 1.0))
        except ValueError as err:
            assert err.kind == "BorrowConflict"  # its own registry
        else:
            raise AssertionError("no conflict")
        doubled, _ = ext.double(x)
        assert type(doubled) is np.ndarray and doubled.tolist() == [0.0, 2.0, 4.0, 6.0]
        assert ext.live_borrows() == 0

        # Decided once: the package imported afterwards has its own class and registry.
        del sys.modules["dlspan"]
        import dlspan
        assert not isinstance(ext.tensor([1.0]), dlspan.Tensor)
        print("fell back")
        """
    )
    assert out.strip() == "fell back"


def test_the_package_imported_on_first_use():
    # The extension imports `dlspan` itself at its first use: results are the package's class
    # even when the program never imported the package.
    out = _run(
        """
        import sys
        import dlspan_test_extension as ext
        r = ext.tensor([1.0])
        assert "dlspan" in sys.modules
        import dlspan
        assert type(r) is dlspan.Tensor
        print("package")
        """
    )
    assert out.strip() == "package"
