"""Docstrings are written for Python: every public name of the package, and every method and
attribute of its classes, has a docstring in Python's words (NumPy style for what takes
parameters), and none shows Rust (PyO3 turns Rust doc comments into docstrings: doctests and
Rust types would leak into `help()`)."""

import inspect
import pydoc

import pytest

import dlspan
import dlspan.diagnostics
import dlspan.examples

RUST = ("```", "Ok::<", "PyErr", "PyResult", "#[", "&self", "Bound<", "::<", "pyo3", "Python<'")
MODULES = [dlspan, dlspan.examples, dlspan.diagnostics]
# Methods of `dlspan.Tensor` that are protocols other frameworks call, documented as API.
PROTOCOLS = ("__dlpack__", "__dlpack_device__")


def public(module):
    """`(qualified name, object)` of the module's public functions and classes, and of the public
    methods and attributes of those classes (and the DLPack protocol methods)."""
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or inspect.ismodule(value):
            continue
        yield f"{module.__name__}.{name}", value
        if inspect.isclass(value):
            for attribute, member in vars(value).items():
                if not attribute.startswith("_") or attribute in PROTOCOLS:
                    yield f"{module.__name__}.{name}.{attribute}", member


NAMES = [pytest.param(value, id=name) for module in MODULES for name, value in public(module)]


def assert_python(text, what):
    assert text and text.strip(), f"{what} has no docstring"
    leaked = [marker for marker in RUST if marker in text]
    assert not leaked, f"{what}'s docstring shows Rust ({leaked}):\n{text}"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_module_docstrings(module):
    assert_python(module.__doc__, module.__name__)
    assert_python(pydoc.render_doc(module, renderer=pydoc.plaintext), f"help({module.__name__})")


def test_the_package_says_what_it_is():
    first = dlspan.__doc__.strip().splitlines()[0]
    assert "NumPy" in first and "PyTorch" in first and "JAX" in first, first
    for name in ("Tensor", "from_dlpack", "add", "sum", "dlspan.examples"):
        assert name in dlspan.__doc__, name


@pytest.mark.parametrize("value", NAMES)
def test_public_names_have_python_docstrings(value):
    assert_python(inspect.getdoc(value), repr(value))
    if inspect.isclass(value):
        assert_python(pydoc.render_doc(value, renderer=pydoc.plaintext), f"help({value.__name__})")


def parameters(value):
    """The parameters a caller passes (`self` excluded), or None when the signature is unknown."""
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    return [p for p in signature.parameters.values() if p.name not in ("self", "cls")]


@pytest.mark.parametrize("value", NAMES)
def test_callables_document_their_parameters_numpy_style(value):
    if not callable(value) or isinstance(value, type) and parameters(value) is None:
        pytest.skip("not called with parameters")
    taken = parameters(value)
    if not taken:
        return
    doc = inspect.getdoc(value)
    assert "Parameters\n----------" in doc, doc
    for parameter in taken:
        assert parameter.name in doc.split("----------", 1)[1], (parameter.name, doc)
