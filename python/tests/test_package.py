"""The installed package: type stubs and `py.typed` ship in the wheel, and the stubs describe the
module as built — every public name, every parameter of every function and method."""

import ast
import inspect
import types
from importlib import resources

import pytest

import dlspan


def stub_tree():
    stub = resources.files("dlspan") / "__init__.pyi"
    assert stub.is_file(), "the wheel ships dlspan/__init__.pyi"
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


def test_stub_names_match_the_module():
    tree = stub_tree()
    stubbed = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    built = {n for n in public(dir(dlspan)) if not isinstance(getattr(dlspan, n), types.ModuleType)}
    assert public(stubbed) == built


def test_stub_functions_take_the_module_parameters():
    for node in stub_tree().body:
        if isinstance(node, ast.FunctionDef):
            assert stub_parameters(node) == runtime_parameters(getattr(dlspan, node.name)), node.name


@pytest.mark.parametrize("name", ["Tensor", "Particles"])
def test_stub_classes_match_the_module(name):
    node = next(n for n in stub_tree().body if isinstance(n, ast.ClassDef) and n.name == name)
    cls = getattr(dlspan, name)
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
