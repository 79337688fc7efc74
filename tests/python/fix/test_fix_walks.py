"""The analysis' own walks of a syntax tree (anydev/_migrate/fix/analysis.py) must
see what ast's do: scope_facts' child list is ast.iter_child_nodes' (the same
nodes in the same order), and the node types each walk passes without a look
are none it looks for. Checked on every Python file of the fixtures."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from anydev._migrate.fix import analysis
from fix_default import newest_default_target  # noqa: F401 (autouse)

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(p for d in ("tests/fixtures/scan", "tests/fixtures/fix/cases",
                             "tests/fixtures/fix_literals", "tests/fixtures/projects", "examples")
                 for p in (ROOT / d).rglob("*.py"))


def _trees():
    for p in SOURCES:
        try:
            yield p, ast.parse(p.read_bytes())
        except (SyntaxError, ValueError):
            continue


def test_the_fixtures_are_there():
    assert len(list(_trees())) > 20


def test_child_nodes_are_iter_child_nodes():
    for p, tree in _trees():
        for node in ast.walk(tree):
            got = analysis._child_nodes(node, [])
            want = list(ast.iter_child_nodes(node))
            assert len(got) == len(want) and all(a is b for a, b in zip(got, want)), p


@pytest.mark.parametrize("plain, looked_at", [
    # scope_facts: what binds a name or opens a scope of its own
    ("_PLAIN", (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Assign,
                ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.AugAssign)),
    # guarded_cuda_code: what may be CUDA-specific
    ("_NOT_GUARDED", (ast.Constant, ast.JoinedStr, ast.Attribute)),
])
def test_passed_types_are_none_looked_at(plain, looked_at):
    for t in getattr(analysis, plain):
        assert not issubclass(t, looked_at), (plain, t)


def test_scope_facts_of_the_fixtures():
    """Every scope's facts against a plain walk of it (ast.iter_child_nodes),
    in the same order: the values of a name are kept in the order found."""
    def reference(scope):
        assigned, annotated = {}, {}
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = scope.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                if arg.annotation is not None and analysis._dotted(arg.annotation) == "int":
                    annotated[arg.arg] = "int"
                else:
                    assigned.setdefault(arg.arg, []).append("?")
        todo = list(ast.iter_child_nodes(scope))
        while todo:
            n = todo.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        assigned.setdefault(t.id, []).append(n.value)
            elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                if (analysis._dotted(n.annotation) or "") == "int":
                    annotated[n.target.id] = "int"
                elif n.value is not None:
                    assigned.setdefault(n.target.id, []).append(n.value)
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                for t in ast.walk(n.target):
                    if isinstance(t, ast.Name):
                        assigned.setdefault(t.id, []).append("?")
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                assigned.setdefault(n.target.id, []).append(n.value)
            todo.extend(ast.iter_child_nodes(n))
        return assigned, annotated

    def plain(values):  # the placeholder of a value that is no int, by what it is
        return [v if not (isinstance(v, ast.Name) and v.id == "<unknown>") else "?"
                for v in values]

    scopes = 0
    for p, tree in _trees():
        for scope in [tree, *(n for n in ast.walk(tree)
                              if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
            assigned, annotated = analysis.scope_facts(scope)
            want_assigned, want_annotated = reference(scope)
            assert annotated == want_annotated, p
            assert {k: plain(v) for k, v in assigned.items()} == want_assigned, p
            scopes += 1
    assert scopes > 100
