"""The package's layout (docs/architecture.md, "The map"): every module of
python/anydev belongs to one subsystem, imports run one way between the
subsystems, and no modules import each other in a circle.

The imports are read from the sources with ``ast`` (every ``import`` and
``from ... import``, at module level, in functions and under
``TYPE_CHECKING`` alike), so the test needs no build. An import under ``if
TYPE_CHECKING:`` must follow the direction too, but it is left out of the
cycle check: it names a type for an annotation and never runs, which is what
typing.TYPE_CHECKING exists for. Run it as a script for
the map in numbers: ``python tests/python/test_layout.py``.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from typing import Optional

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "python", "anydev")

# Subsystem -> (the modules it owns, the subsystems it may import), lowest first.
# A module belongs to the first subsystem with a prefix that names it or a
# package above it. The native extensions (anydev._C, anydev._scanner) are the
# floor every subsystem may import.
SUBSYSTEMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "native": (("anydev._C", "anydev._scanner"), ()),
    "common": (("anydev._common",), ("native",)),
    "compat": (("anydev._compat", "anydev.compat", "anydev.report", "anydev.cuda", "anydev.xpu"),
               ("common", "native")),
    "runtime": (("anydev._runtime", "anydev.accelerator", "anydev.acc", "anydev.cpu",
                 "anydev.hip", "anydev.sim", "anydev.testing", "anydev"),
                ("compat", "common", "native")),
    "migrate": (("anydev._migrate", "anydev.scan", "anydev.fix"), ("compat", "common", "native")),
    "torch": (("anydev._torch", "anydev.torch", "anydev.cpp_extension"),
              ("migrate", "runtime", "compat", "common", "native")),
    "dashboard": (("anydev._dashboard",), ("migrate", "compat", "common", "native")),
    "server": (("anydev._server",), ("migrate", "compat", "common", "native")),
    "cli": (("anydev._cli", "anydev.__main__"),
            ("server", "dashboard", "torch", "migrate", "runtime", "compat", "common", "native")),
}

# The subpackages, each the home of one subsystem's internals.
SUBPACKAGES = {"common": "_common", "compat": "_compat", "runtime": "_runtime",
               "migrate": "_migrate", "torch": "_torch", "dashboard": "_dashboard",
               "server": "_server", "cli": "_cli"}


def subsystem_of(module: str) -> Optional[str]:
    """The subsystem that owns ``module`` (the longest prefix wins)."""
    best, best_len = None, -1
    for name, (prefixes, _) in SUBSYSTEMS.items():
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = name, len(p)
    return best


def modules() -> dict[str, tuple[str, bool]]:
    """Every module of the package: name -> (path, is a package)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(PACKAGE):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "examples", "include", "lib")]
        for f in filenames:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3].split(os.sep)
            is_pkg = rel[-1] == "__init__"
            if is_pkg:
                rel = rel[:-1]
            out[".".join(rel)] = (path, is_pkg)
    return out


def imports(module: str, path: str, is_pkg: bool,
            known: set[str]) -> set[tuple[str, int, bool]]:
    """The anydev modules ``module`` imports: (module, line of the import,
    whether it is only under ``if TYPE_CHECKING:``)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    here = module.split(".") if is_pkg else module.split(".")[:-1]
    found = set()
    typing_only = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for inner in node.body:
                typing_only.update(n.lineno for n in ast.walk(inner) if hasattr(n, "lineno"))

    def add(target: str, line: int) -> None:
        # The longest known module that names target or a package above it.
        parts = target.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        if parts:
            found.add((".".join(parts), line, line in typing_only))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "anydev" or a.name.startswith("anydev."):
                    add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1])
                full = base + ("." + node.module if node.module else "")
            else:
                full = node.module or ""
                if not (full == "anydev" or full.startswith("anydev.")):
                    continue
            for a in node.names:
                sub = f"{full}.{a.name}"
                add(sub if sub in known else full, node.lineno)
    return {(m, line, t) for m, line, t in found if m != module}


def graph() -> tuple[dict[str, tuple[str, bool]], dict[str, set[tuple[str, int, bool]]]]:
    mods = modules()
    known = set(mods) | set(SUBSYSTEMS["native"][0])
    return mods, {m: imports(m, p, pkg, known) for m, (p, pkg) in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_subsystem():
    mods, _ = graph()
    assert [m for m in mods if subsystem_of(m) is None] == []


def test_imports_run_one_way():
    mods, edges = graph()
    wrong = []
    for m, targets in sorted(edges.items()):
        own = subsystem_of(m)
        allowed = set(SUBSYSTEMS[own][1]) | {own}
        for t, line, _ in sorted(targets):
            other = subsystem_of(t)
            if other not in allowed:
                wrong.append(f"{os.path.relpath(mods[m][0], ROOT)}:{line}: {m} ({own}) "
                             f"imports {t} ({other})")
    assert wrong == [], "imports against the direction of docs/architecture.md:\n" + "\n".join(wrong)


def runtime_edges(edges) -> dict[str, set[str]]:
    """The imports that run (those under TYPE_CHECKING left out)."""
    return {m: {t for t, _, typing_only in ts if not typing_only} for m, ts in edges.items()}


def test_no_import_cycles():
    _, edges = graph()
    assert cycles(runtime_edges(edges)) == []


def test_the_allowed_imports_are_the_ones_the_docstrings_state():
    # Each subpackage's docstring says what it owns and ends with a line
    # "May import: a, b, the native extensions." naming the subsystems this
    # table allows, so the layout the test enforces is the one a reader is told.
    for name, sub in SUBPACKAGES.items():
        path = os.path.join(PACKAGE, sub, "__init__.py")
        with open(path, encoding="utf-8") as f:
            doc = ast.get_docstring(ast.parse(f.read())) or ""
        m = re.search(r"^May import: (.*?)\.$", doc, re.M)
        assert m, f"{path}: the docstring has no 'May import: ...' line"
        stated = {"native" if s.strip() == "the native extensions" else s.strip()
                  for s in m.group(1).split(",")}
        assert stated == set(SUBSYSTEMS[name][1]), path


def test_the_map_in_docs_names_every_subsystem_in_order():
    # docs/architecture.md opens with the map: its first section names every
    # subpackage, from the top (the command line) down, as imports run.
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    first = text.split("\n## ")[1]
    assert first.startswith("The map\n")
    positions = [first.find(f"`anydev/{sub}/`") for sub in reversed(SUBPACKAGES.values())]
    assert all(p >= 0 for p in positions), positions
    assert positions == sorted(positions), "the map lists the subsystems from the top down"


def test_the_checker_sees_a_wrong_import(tmp_path, monkeypatch):
    # The test above can fail: a migrate module that imports the command line.
    pkg = tmp_path / "anydev"
    for sub in ("_migrate", "_cli"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "_migrate" / "x.py").write_text("def f():\n    from anydev._cli import y\n")
    (pkg / "_cli" / "y.py").write_text("from .. import _migrate\nfrom anydev._migrate import x\n")
    (pkg / "_migrate" / "z.py").write_text(
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from anydev._cli import y\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", str(pkg))
    mods, edges = graph()
    assert ("anydev._cli.y", 2, False) in edges["anydev._migrate.x"]
    assert cycles(runtime_edges(edges)) == [
        ["anydev._cli.y", "anydev._migrate.x"]]
    with pytest.raises(AssertionError, match="anydev._migrate.x .migrate. imports anydev._cli.y"):
        test_imports_run_one_way()
    # An import for annotations only is no cycle, but it keeps the direction.
    assert ("anydev._cli.y", 3, True) in edges["anydev._migrate.z"]
    with pytest.raises(AssertionError, match="anydev._migrate.z .migrate. imports anydev._cli.y"):
        test_imports_run_one_way()


def _levels(edges: dict[str, set[str]]) -> int:
    depth: dict[str, int] = {}

    def d(m: str, seen: frozenset) -> int:
        if m in depth:
            return depth[m]
        if m in seen:
            return 0
        depth[m] = 1 + max((d(t, seen | {m}) for t in edges.get(m, ()) if t in edges), default=0)
        return depth[m]

    return max((d(m, frozenset()) for m in edges), default=0)


if __name__ == "__main__":
    mods, edges = graph()
    plain = {m: {t for t in ts if t in mods} for m, ts in runtime_edges(edges).items()}
    by_sub: dict[str, int] = {}
    for m in mods:
        by_sub[subsystem_of(m) or "?"] = by_sub.get(subsystem_of(m) or "?", 0) + 1
    print(f"{len(mods)} modules, {sum(len(v) for v in plain.values())} import edges between them, "
          f"{_levels(plain)} levels, {len(cycles(plain))} cycles")
    for name in SUBSYSTEMS:
        if name in by_sub:
            print(f"  {name:8} {by_sub[name]:3} modules, may import: "
                  f"{', '.join(SUBSYSTEMS[name][1]) or 'nothing'}")
    for c in cycles(plain):
        print("  cycle:", " -> ".join(c))
