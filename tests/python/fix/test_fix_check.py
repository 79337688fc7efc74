"""The fixer's check that a fixed Python file parses (Note [Checking the
rewrite] in anydev/_migrate/fix/python_tree.py): it parses again only the top-level
statements the edits fall in, and must give the verdict a parse of the whole
file gives, for any edit. Checked on the fixtures with generated edits that
break code in the ways a bad template could (an unclosed bracket or string, a
stray line break or colon, a dedent, a continuation)."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from anydev._migrate.fix.edits import _Edit, _Edits
from anydev._migrate.fix.engine import _parses
from anydev._migrate.fix.python_tree import _changed_statements, _token_safe_rename
from anydev._migrate.fix.text import _Text
from fix_default import newest_default_target  # noqa: F401 (autouse)

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(p for d in ("tests/fixtures/scan", "tests/fixtures/fix/cases",
                             "tests/fixtures/projects", "examples")
                 for p in (ROOT / d).rglob("*.py"))
BREAKERS = ["(", ")", "[", "]", ":", "'", '"', '"""', "\n", "\\\n", "\n    ", "\nx", "#", ",",
            " if ", " else ", "lambda", "=", "\t", "\r", "@", "import", "pass\n", "\n\n  y = 1\n"]


def _parsed(path: Path):
    text = _Text(path.read_bytes(), "python")
    try:
        return text, ast.parse(text.text)
    except (SyntaxError, ValueError):
        return text, None


def _verdicts(text: _Text, tree: ast.Module, batch: list[_Edit]) -> tuple[bool, bool, bool]:
    """(the check's verdict, the whole file's, whether the check parsed pieces only)."""
    edits = _Edits(text.text)
    edits.add(batch)
    new = edits.apply()
    whole = _parses(new, "x.py") is None
    pieces = _changed_statements(tree, text.line_starts(), len(text.text), edits)
    if pieces is not None and all(_parses(p, "x.py") is None for p in pieces):
        return True, whole, True
    return _parses(new, "x.py") is None, whole, pieces is not None


def test_there_are_sources_to_check():
    assert len([p for p in SOURCES if _parsed(p)[1] is not None]) >= 20


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_check_of_changed_statements_agrees_with_a_whole_parse(path):
    text, tree = _parsed(path)
    if tree is None or not text.text:
        pytest.skip("does not parse to begin with")
    rng = random.Random(str(path.relative_to(ROOT)))
    n = len(text.text)
    pieces_used = broken = 0
    for _ in range(60):
        batch = []
        for _ in range(rng.choice((1, 1, 2))):
            s = rng.randrange(n + 1)
            e = min(n, s + rng.choice((0, 0, 0, 1, 3, 12)))
            if any(not (e < b.start or s > b.end) for b in batch):
                continue
            batch.append(_Edit(s, e, rng.choice(BREAKERS)))
        check, whole, only_pieces = _verdicts(text, tree, batch)
        assert check == whole, (path.name, [(b.start, b.end, b.text) for b in batch])
        pieces_used += only_pieces
        broken += not whole
    assert broken > 0  # the edits do break files, so the check is tested on both verdicts
    if len(tree.body) > 3:
        assert pieces_used > 0


def test_an_edit_on_a_comment_line_checks_the_whole_file():
    text = _Text(b"import torch\n# a comment\nx = 1\n", "python")
    tree = ast.parse(text.text)
    edits = _Edits(text.text)
    edits.add([_Edit(15, 15, "(")])  # inside the comment: the whole file is parsed
    assert _changed_statements(tree, text.line_starts(), len(text.text), edits) is None
    assert _parses(edits.apply(), "x.py") is None
    edits = _Edits(text.text)
    edits.add([_Edit(13, 13, "(")])  # at the start of the comment line: the same
    assert _changed_statements(tree, text.line_starts(), len(text.text), edits) is None
    assert _parses(edits.apply(), "x.py") is not None
    edits = _Edits(text.text)
    edits.add([_Edit(12, 13, " x")])  # the statement's line break
    assert _changed_statements(tree, text.line_starts(), len(text.text), edits) is None
    assert _parses(edits.apply(), "x.py") is not None  # `import torch x# a comment`
    edits = _Edits(text.text)
    edits.add([_Edit(0, 13, "")])  # the whole statement, line break and all
    assert _changed_statements(tree, text.line_starts(), len(text.text), edits) == [""]


def test_only_the_statements_an_edit_falls_in_are_parsed_again():
    src = "import torch\n\n\ndef f():\n    return torch.cuda.synchronize()\n\n\ny = 2; z = 3\n"
    text = _Text(src.encode(), "python")
    tree = ast.parse(text.text)
    at = src.index("torch.cuda.synchronize")
    edits = _Edits(text.text)
    edits.add([_Edit(at, at + len("torch.cuda.synchronize"), "torch.accelerator.synchronize")])
    assert _changed_statements(tree, text.line_starts(), len(text.text), edits) == [
        "def f():\n    return torch.accelerator.synchronize()\n"]
    at = src.index("3")
    edits = _Edits(text.text)
    edits.add([_Edit(at, at + 1, "(")])
    pieces = _changed_statements(tree, text.line_starts(), len(text.text), edits)
    assert pieces == ["y = 2; z = (\n"] and _parses(pieces[0], "x.py") is not None


RENAMES = ["torch.accelerator.synchronize", "x", "th.xpu", "_a.b_.c9", "match.x", "None",
           "a.if", "type.x", "rf"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_rename_proven_token_safe_never_breaks_the_file(path):
    """The statements of proven renames are not parsed again (Note [Checking
    the rewrite]): every dotted name put in place of every name and attribute
    of the fixtures that the proof accepts leaves the whole file parsing."""
    text, tree = _parsed(path)
    if tree is None or not text.text:
        pytest.skip("does not parse to begin with")
    in_fstring = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            in_fstring.update(id(x) for x in ast.walk(n))
    proven = 0
    for n in ast.walk(tree):
        if not isinstance(n, (ast.Name, ast.Attribute)):
            continue
        s, e = text.span(n)
        for new in RENAMES:
            if not _token_safe_rename(text.text, s, e, n, new, id(n) in in_fstring):
                continue
            proven += 1
            edits = _Edits(text.text)
            edits.add([_Edit(s, e, new, proven=True)])
            assert _parses(edits.apply(), "x.py") is None, (path.name, n.lineno, new)
            pieces = _changed_statements(tree, text.line_starts(), len(text.text), edits)
            assert pieces == []
    assert proven > 0 or not any(isinstance(n, ast.Attribute) for n in ast.walk(tree))


@pytest.mark.parametrize("src, old, new, safe", [
    ("x = torch.cuda.synchronize()\n", "torch.cuda.synchronize", "torch.accelerator.synchronize",
     True),
    ("x = torch . cuda.synchronize()\n", "torch . cuda.synchronize", "a.b", True),
    ("x = not(torch).cuda.y\n", "(torch).cuda.y", "t.y", False),   # would join `not`
    ("x = (torch.\n     cuda.y)\n", "torch.\n     cuda.y", "t.y", False),  # a line inside
    ("x = torch.cuda.y\n", "torch.cuda.y", "t.if", False),          # a keyword
    ("x = torch.cuda.y\n", "torch.cuda.y", "match.y", False),       # a soft keyword first
    ("x = torch.cuda.y\n", "torch.cuda.y", "t.y()", False),         # not a dotted name
    ("x = torch.cuda.y\n", "torch.cuda.y", "t.ü", False),           # not ASCII
    ("torch.cuda.y = 1\n", "torch.cuda.y", "t.y", False),           # stored, not loaded
    ("x = f'{torch.cuda.y}'\n", "torch.cuda.y", "t.y", False),      # in an f-string
    ("x = g(torch.cuda.y).z\n", "g(torch.cuda.y).z", "t.z", False),  # not a dotted name
])
def test_which_renames_are_proven_token_safe(src, old, new, safe):
    text = _Text(src.encode(), "python")
    tree = ast.parse(text.text)
    s = src.index(old)
    e = s + len(old)
    node = next(n for n in ast.walk(tree) if isinstance(n, (ast.Name, ast.Attribute, ast.Call))
                and text.span(n) == (s, e))
    in_fstring = any(isinstance(n, ast.JoinedStr) for n in ast.walk(tree))
    assert _token_safe_rename(text.text, s, e, node, new, in_fstring) is safe


def test_a_statement_with_an_unproven_edit_is_parsed_again():
    src = "import torch\n\n\ndef f():\n    return torch.cuda.synchronize(x)\n"
    text = _Text(src.encode(), "python")
    tree = ast.parse(text.text)
    at = src.index("torch.cuda.synchronize")
    x = src.index("x)")
    edits = _Edits(text.text)
    edits.add([_Edit(at, at + len("torch.cuda.synchronize"), "torch.accelerator.synchronize",
                     proven=True), _Edit(x, x + 1, "(")])
    assert _changed_statements(tree, text.line_starts(), len(text.text), edits) == [
        "def f():\n    return torch.accelerator.synchronize(()\n"]


@pytest.mark.parametrize("path", SOURCES[::4], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_fixers_walk_gives_ast_walks_nodes_in_its_order(path):
    """python_tree.walk stands in for ast.walk where the first node found
    decides a reason: the same nodes, in the same order."""
    from anydev._migrate.fix.python_tree import walk

    _, tree = _parsed(path)
    if tree is None:
        pytest.skip("does not parse to begin with")
    a, b = list(ast.walk(tree)), list(walk(tree))
    assert len(a) == len(b) and all(x is y for x, y in zip(a, b))


def test_import_names_from_the_tree_are_where_the_tokenizer_puts_them():
    """imports._alias_spans_of reads an import's names from the syntax tree
    (Python 3.10 on), _alias_spans from the tokens: the same names, aliases
    and spans on every import statement of the fixtures and of anydev itself."""
    from anydev._migrate.fix.imports import _alias_spans, _alias_spans_of

    extra = [b"import a . b as c, d\n", b"from x import (a as b,\n    c)  # note\n",
             b"from . import *\n", b"if x:\n    import a, \\\n        b.c as d; y = 1\n"]
    sources = [p.read_bytes() for p in SOURCES + sorted((ROOT / "python" / "anydev").rglob(
        "*.py"))] + extra
    checked = 0
    for data in sources:
        text = _Text(data, "python")
        try:
            tree = ast.parse(text.text)
        except (SyntaxError, ValueError):
            continue
        for stmt in ast.walk(tree):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                assert _alias_spans_of(text, stmt) == _alias_spans(text.text, *text.span(stmt))
                checked += 1
    assert checked > 100


@pytest.mark.parametrize("src", [
    "x = 1\n", "def f():\n    return 1\n", "x = (\n", "def f(:\n    pass\n", "a\0b = 1\n",
    # the symbol table refuses these, the parse does not: the parse's verdict stands
    "nonlocal x\n", "def f(a, a):\n    pass\n", "x = 1\nglobal x\n",
    "from __future__ import braces\n", "def f():\n    x = 1\n    global x\n",
    # what only the compiler refuses
    "return 1\n", "await x\n", "yield 1\n", "break\n",
])
def test_the_symbol_table_check_gives_the_parses_verdict(src):
    try:
        compile(src, "x.py", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        parses = True
    except (SyntaxError, ValueError):
        parses = False
    assert (_parses(src, "x.py") is None) is parses


def test_the_walk_keeps_positions_only_on_the_findings_lines():
    from anydev._migrate.fix.analysis import PyAnalysis
    from anydev._migrate.fix.python_tree import _chain

    src = ("import torch\nx = torch.cuda.current_device()\n"
           "y = torch.cuda.current_device()\n")
    tree = ast.parse(src)
    a, b = tree.body[1].value.func, tree.body[2].value.func

    def key(n):
        return (n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)

    an = PyAnalysis(tree, "m.py", lines={2})
    assert an.node_at(key(a)) is a
    assert an.node_at(key(b)) is None  # not a finding's line: the caller descends
    assert _chain(tree, key(b)[:2], key(b)[2:])[-1] is b
    assert PyAnalysis(tree, "m.py").node_at(key(b)) is b  # no lines: every node


def test_the_count_of_import_torch_lines_is_the_regular_expressions():
    """engine._imports_of_torch (whether a fix added `import torch`, Note
    [Rounds]) tries the expression only where the words are: the same count."""
    from anydev._migrate.fix.engine import _IMPORT_TORCH, _imports_of_torch

    rng = random.Random(14)
    parts = [b"import torch", b"  ", b"\t", b"\n", b"\r\n", b"\r", b"# import torch", b"x",
             b";", b"import torchvision", b"#c"]
    for _ in range(20000):
        data = b"".join(rng.choice(parts) for _ in range(rng.randrange(12)))
        assert _imports_of_torch(data) == len(_IMPORT_TORCH.findall(data)), data
