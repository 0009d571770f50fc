"""The README's Python extension (examples/python-extension, module `my_kernels`), built by
scripts/python.sh with `maturin develop`: the README's calls run as written, and its functions
take NumPy, PyTorch and JAX arrays — strided, reversed, transposed — and refuse the wrong ones."""

import re
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import my_kernels

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_calls():
    text = README.read_text()
    section = text[text.index("## Write a Python extension") :]
    section = section[: section.find("\n## ", 1)]
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.S | re.M)


def test_the_readme_calls_run_as_written():
    blocks = readme_calls()
    assert len(blocks) == 1, "the README's section has one Python block"
    exec(compile(blocks[0], f"{README} (Write a Python extension)", "exec"), {})


def test_axpy_writes_numpy_arrays_in_place_through_reversed_views():
    y = np.zeros(4, dtype=np.float32)
    my_kernels.axpy(2.0, np.arange(4, dtype=np.float32), y[::-1])
    assert y.tolist() == [6.0, 4.0, 2.0, 0.0]


def test_axpy_mixes_frameworks():
    x = jnp.arange(3, dtype=jnp.float32)
    y = torch.ones(3)
    my_kernels.axpy(0.5, x, y)
    assert y.tolist() == [1.0, 1.5, 2.0]
    z = np.ones(3, dtype=np.float32)
    my_kernels.axpy(1.0, torch.arange(3.0), z)
    assert z.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(6, dtype=np.float32).reshape(3, 2).T,
        lambda: torch.arange(6.0).reshape(3, 2).T,
        lambda: jnp.arange(6, dtype=jnp.float32).reshape(3, 2).T,
    ],
    ids=["numpy", "torch", "jax"],
)
def test_row_sums_of_transposed_matrices(make):
    # Rows of the transposed [[0, 1], [2, 3], [4, 5]]: [0, 2, 4] and [1, 3, 5].
    assert my_kernels.row_sums(make()) == [6.0, 9.0]


def test_a_dlspan_tensor_is_an_argument_too():
    dlspan = pytest.importorskip("dlspan")
    y = np.zeros(3, dtype=np.float32)
    my_kernels.axpy(1.0, dlspan.arange(3, "float32"), y)
    assert y.tolist() == [0.0, 1.0, 2.0]


def test_a_wrong_dtype_or_rank_is_a_type_error():
    y = np.zeros(3, dtype=np.float32)
    with pytest.raises(TypeError):
        my_kernels.axpy(1.0, np.zeros(3), y)  # float64
    with pytest.raises(TypeError):
        my_kernels.axpy(1.0, torch.zeros(3, dtype=torch.int32), y)
    with pytest.raises(TypeError):
        my_kernels.row_sums(np.zeros(3, dtype=np.float32))  # rank 1


def test_read_only_aliased_or_mismatched_outputs_are_value_errors():
    x = np.ones(3, dtype=np.float32)
    with pytest.raises(ValueError):
        my_kernels.axpy(1.0, x, jnp.zeros(3))  # JAX arrays are immutable
    with pytest.raises(ValueError):
        my_kernels.axpy(1.0, x, x)  # the same memory as x and y
    with pytest.raises(ValueError) as mismatched:
        my_kernels.axpy(1.0, x, np.zeros(4, dtype=np.float32))
    assert "while processing 'x'" in getattr(mismatched.value, "__notes__", [])
    assert x.tolist() == [1.0, 1.0, 1.0]
