"""The installed package: type stubs and `py.typed` ship in the wheel, and the stubs describe the
modules as built — the package, its submodules `dlspan.examples` and `dlspan.diagnostics`, and the
Python module `dlspan.testing`: every public name, every parameter of every function and method."""

import ast
import importlib
import inspect
import subprocess
import sys
import types
from importlib import resources

import pytest

import dlspan

# Each module of the package and the stub that describes it.
STUBS = {
    "dlspan": "__init__.pyi",
    "dlspan.examples": "examples.pyi",
    "dlspan.diagnostics": "diagnostics.pyi",
    "dlspan.testing": "testing.pyi",
}
SUBMODULES = {"examples", "diagnostics"}


def stub_tree(module_name):
    stub = resources.files("dlspan") / STUBS[module_name]
    assert stub.is_file(), f"the wheel ships dlspan/{STUBS[module_name]}"
    return ast.parse(stub.read_text())


def stub_parameters(node: ast.FunctionDef):
    args = node.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    return positional + [a.arg for a in args.kwonlyargs]


def runtime_parameters(function):
    return list(inspect.signature(function).parameters)


def public(names):
    return {n for n in names if not n.startswith("_")}


def test_py_typed_marker_ships():
    assert (resources.files("dlspan") / "py.typed").is_file(), "PEP 561: the package says it is typed"


def test_submodules_import_by_name():
    # In a fresh interpreter: `import dlspan.examples` must not depend on an earlier `import dlspan`.
    for name in sorted(SUBMODULES):
        code = f"import dlspan.{name} as m, sys; assert sys.modules['dlspan.{name}'] is m; print(m.__name__)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert out.strip() == f"dlspan.{name}"
        assert getattr(dlspan, name) is importlib.import_module(f"dlspan.{name}")
    from dlspan.examples import Particles, axpy

    assert axpy.__module__ == "dlspan.examples" and Particles.__module__ == "dlspan.examples"


def test_the_top_level_holds_api_not_demos():
    for name in ("axpy", "det3", "trace", "Particles", "live_borrows", "_sum_during"):
        assert not hasattr(dlspan, name), name


def test_stub_submodules_match_the_package():
    stubbed = {
        alias.asname or alias.name
        for node in stub_tree("dlspan").body
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None
        for alias in node.names
    }
    built = {n for n in dir(dlspan) if isinstance(getattr(dlspan, n), types.ModuleType) and n in SUBMODULES}
    assert stubbed == built == SUBMODULES


@pytest.mark.parametrize("module_name", STUBS)
def test_stub_names_match_the_module(module_name):
    module = importlib.import_module(module_name)
    body = stub_tree(module_name).body
    stubbed = {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    # Constants (`RULES: dict[str, str]`), not type aliases, which the stubs alone define.
    stubbed |= {
        node.target.id
        for node in body
        if isinstance(node, ast.AnnAssign)
        and not (isinstance(node.annotation, ast.Name) and node.annotation.id == "TypeAlias")
    }
    built = {n for n in public(dir(module)) if not isinstance(getattr(module, n), types.ModuleType)}
    assert public(stubbed) == built


@pytest.mark.parametrize("module_name", STUBS)
def test_stub_functions_take_the_module_parameters(module_name):
    module = importlib.import_module(module_name)
    for node in stub_tree(module_name).body:
        if isinstance(node, ast.FunctionDef):
            assert stub_parameters(node) == runtime_parameters(getattr(module, node.name)), node.name


@pytest.mark.parametrize(
    ("module_name", "name"),
    [
        ("dlspan", "Tensor"),
        ("dlspan.examples", "Particles"),
        ("dlspan.testing", "Report"),
        ("dlspan.testing", "RuleResult"),
    ],
)
def test_stub_classes_match_the_module(module_name, name):
    node = next(n for n in stub_tree(module_name).body if isinstance(n, ast.ClassDef) and n.name == name)
    cls = getattr(importlib.import_module(module_name), name)
    methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
    assert public(methods) == public(dir(cls)), "public attributes"
    for method_name, method in methods.items():
        if method_name == "__buffer__":
            continue  # a slot (bf_getbuffer): Python 3.11 exposes no attribute to read
        member = inspect.getattr_static(cls, method_name)
        decorators = [d.id for d in method.decorator_list if isinstance(d, ast.Name)]
        if "property" in decorators:
            assert inspect.isdatadescriptor(member), f"{name}.{method_name} is a property"
        elif method_name == "__init__":
            # PyO3's #[new] signature is the class's own.
            assert stub_parameters(method)[1:] == runtime_parameters(cls), f"{name}()"
        else:
            assert stub_parameters(method) == runtime_parameters(member), f"{name}.{method_name}"
