"""Every Python sample of the project's pages still holds against the package: it parses, what it
imports from ``sluice`` exists, and each call of a class or method the package has binds to that
callable's signature (its arguments' names and count). A sample that names a class, a method or
a keyword the code no longer has fails here, not in a user's first hour; the Java samples and
job specs are checked by printing/'s DocSamplesTest, the SQL samples by flink-connector/'s
DocSqlSamplesTest."""

import ast
import inspect
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import sluice

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "python" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def samples() -> List[Tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text("utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start(1)) + 1
            found.append((f"{page.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def package_callables() -> Dict[str, List[object]]:
    """The package's classes by name, and their public methods by name (several classes may
    share a method's name)."""
    callables: Dict[str, List[object]] = {}
    for name in sluice.__all__:
        value = getattr(sluice, name)
        callables.setdefault(name, []).append(value)
        if inspect.isclass(value):
            for method, function in inspect.getmembers(value, inspect.isfunction):
                if not method.startswith("_"):
                    callables.setdefault(method, []).append(function)
    return callables


def binds(function: object, call: ast.Call, is_method: bool) -> bool:
    signature = inspect.signature(function)
    positional = [None] * len(call.args)
    keywords = {k.arg: None for k in call.keywords if k.arg is not None}
    try:
        if is_method and inspect.isfunction(function):
            signature.bind(None, *positional, **keywords)
        else:
            signature.bind(*positional, **keywords)
        return True
    except TypeError:
        return False


def test_the_pages_have_python_samples():
    assert len(samples()) >= 2


@pytest.mark.parametrize("where, code", samples(), ids=[w for w, _ in samples()])
def test_a_sample_holds_against_the_package(where, code):
    tree = ast.parse(code, filename=where)
    callables = package_callables()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "sluice":
            for alias in node.names:
                assert hasattr(sluice, alias.name), f"{where}: sluice has no {alias.name}"
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in callables:
            name, is_method = node.func.id, False
        elif isinstance(node.func, ast.Attribute) and node.func.attr in callables:
            name, is_method = node.func.attr, True
        else:
            continue
        assert any(binds(f, node, is_method) for f in callables[name]), (
            f"{where}, line {node.lineno}: {ast.unparse(node)} matches no signature of "
            f"{name}: {[str(inspect.signature(f)) for f in callables[name]]}")
