"""No import cycles inside a package: a module never imports, at run time, a module that imports it back.

Edges are every ``import``/``from ... import`` of the package's own modules, inside functions too (a lazy import
hides a circle, it does not remove it), except those under ``if TYPE_CHECKING:`` (never run). ``from pkg import
name`` is an edge to ``pkg`` unless ``name`` is a submodule (a ``.py`` file or a compiled extension).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "packages"
PACKAGES = {
    "android_gym": ROOT / "android-gym" / "src" / "android_gym",
    "coach_reward": ROOT / "coach-reward" / "src" / "coach_reward",
    "coach_rl": ROOT / "coach-rl" / "src" / "coach_rl",
}


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for f in root.rglob("*.py"):
        parts = f.relative_to(root.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _is_submodule(package_dir: Path, name: str) -> bool:
    return (package_dir / name).is_dir() or any(package_dir.glob(f"{name}.*"))


def import_graph(package: str, root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports at run time."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                     and "TYPE_CHECKING" in ast.unparse(node.test) for b in node.body for n in ast.walk(b)}
        for node in ast.walk(tree):
            if id(node) in type_only:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                pkg_dir = root.parent.joinpath(*node.module.split("."))
                subs = [a.name for a in node.names if _is_submodule(pkg_dir, a.name)]
                targets = [f"{node.module}.{s}" for s in subs]
                if len(subs) < len(node.names):
                    targets.append(node.module)
            for target in targets:
                if target.split(".")[0] == package and target in modules and target != module:
                    graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles(package):
    graph = import_graph(package, PACKAGES[package])
    assert len(graph) > 10
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_lazy_circle(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from pkg.b import B\nA = 1\n")
    (root / "b.py").write_text("def f():\n    from pkg.a import A\n    return A\nB = 2\n")
    (root / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.d import D\n")
    (root / "d.py").write_text("from pkg.c import *\n")
    graph = import_graph("pkg", root)
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"} and graph["pkg.c"] == set()
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
