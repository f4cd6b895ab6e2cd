"""python/incast/_core.pyi against the compiled `incast._core`: the same names,
and for every function, constructor and method the same parameters and
defaults (read from the signatures PyO3 compiles in, `__text_signature__`), so
a change to the binding that the stubs miss fails here."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import incast
from incast import _core

STUB = Path(incast.__file__).parent / "_core.pyi"


def _stub_module() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"))


def _public(names: list[str]) -> set[str]:
    return {n for n in names if not n.startswith("_") or n == "__version__"}


def _stub_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return _public(sorted(names))


def _stub_parameters(function: ast.FunctionDef) -> list[tuple[str, str | None]]:
    """(name, default as source text or None) of a stub's parameters, without
    `self`/`cls`."""
    args = function.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = [(a.arg, None if d is None else ast.unparse(d)) for a, d in zip(positional, defaults)]
    params += [
        (a.arg, None if d is None else ast.unparse(d))
        for a, d in zip(args.kwonlyargs, args.kw_defaults)
    ]
    return [(name, default) for name, default in params if name not in ("self", "cls")]


def _core_parameters(obj: object) -> list[tuple[str, str | None]]:
    """The same from the compiled object's text signature."""
    signature = inspect.signature(obj)
    return [
        (p.name, None if p.default is inspect.Parameter.empty else repr(p.default))
        for p in signature.parameters.values()
        if p.name not in ("self", "cls")
    ]


def _is_property(function: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in function.decorator_list)


def test_stub_names_match_the_compiled_module():
    tree = _stub_module()
    assert _stub_names(tree) == _public(dir(_core))
    (exported,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
    ]
    assert ast.literal_eval(exported) == list(_core.__all__)


def test_function_signatures_match():
    functions = [n for n in _stub_module().body if isinstance(n, ast.FunctionDef)]
    assert functions
    for function in functions:
        assert _stub_parameters(function) == _core_parameters(getattr(_core, function.name)), (
            function.name
        )


@pytest.mark.parametrize("class_name", ["Simulation", "HpccRun"])
def test_class_members_and_signatures_match(class_name):
    (stub,) = [
        n for n in _stub_module().body if isinstance(n, ast.ClassDef) and n.name == class_name
    ]
    core_class = getattr(_core, class_name)
    members = {n.name: n for n in stub.body if isinstance(n, ast.FunctionDef)}
    # The constructor: the class's text signature is its `#[new]`'s.
    assert _stub_parameters(members.pop("__new__")) == _core_parameters(core_class)
    compiled = {name: value for name, value in vars(core_class).items() if not name.startswith("_")}
    assert set(members) == set(compiled)
    for name, function in members.items():
        value = compiled[name]
        if _is_property(function):
            assert inspect.isgetsetdescriptor(value), f"{class_name}.{name} is not a getter"
        else:
            assert inspect.ismethoddescriptor(value), f"{class_name}.{name} is not a method"
            assert _stub_parameters(function) == _core_parameters(value), f"{class_name}.{name}"


def test_scenario_error_as_stubbed():
    (stub,) = [
        n for n in _stub_module().body if isinstance(n, ast.ClassDef) and n.name == "ScenarioError"
    ]
    assert [ast.unparse(b) for b in stub.bases] == ["ValueError"]
    assert issubclass(_core.ScenarioError, ValueError)
    attributes = {
        n.target.id
        for n in stub.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    with pytest.raises(_core.ScenarioError) as caught:
        _core.validate("seed = 'one'", "toml", ".")
    assert attributes == {"path", "line", "detail"}
    for attribute in attributes:
        assert hasattr(caught.value, attribute), attribute


def test_the_wheel_carries_the_stubs():
    """maturin's mixed layout puts every file of the package directory
    (`python-source`/incast, beside the compiled `incast._core`) into the wheel
    unless `exclude` names it: the stubs and the PEP 561 marker are there."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib

    root = Path(__file__).resolve().parents[1]
    maturin = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "maturin"
    ]
    assert maturin["module-name"] == "incast._core"
    package = root / maturin["python-source"] / "incast"
    assert (package / "py.typed").is_file()
    assert (package / "_core.pyi").is_file()
    assert not maturin.get("exclude"), "check that `exclude` keeps the stubs"
