"""What `anydev fix` does not do, and must give the same answer without:
the files it does not parse (Note [Nothing to fix] in
anydev/_migrate/fix/engine.py), the walks it shares. Each shortcut is checked
against the fixer without it, on every Python file of the fixtures, in every
mode, reason for reason."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

import anydev._migrate.fix.engine as engine
from anydev.fix import fix_source
from anydev.scan import scan_source
from fix_default import newest_default_target  # noqa: F401 (autouse)

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(p for d in ("tests/fixtures/scan", "tests/fixtures/fix",
                             "tests/fixtures/fix_literals", "tests/fixtures/projects", "examples")
                 for p in (ROOT / d).rglob("*.py"))
MODES = [dict(unsafe=False, target_torch="2.6"), dict(unsafe=False, target_torch="2.13"),
         dict(unsafe=True, target_torch="2.6"), dict(unsafe=True, target_torch="2.13")]


def _outcome(data: bytes, path: str, findings, **kw):
    try:
        new, applied, skipped = fix_source(data, path, findings, **kw)
    except ValueError as e:
        return ("error", str(e))
    return (new, [(f.rule, f.start) for f in applied], [(f.rule, f.start, w) for f, w in skipped])


def _parses(data: bytes) -> bool:
    try:
        compile(data, "x.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def test_the_fixtures_are_there():
    assert len(SOURCES) > 40


def _cases():
    """Each fixture file that parses, and each of its top-level functions and
    classes as a module of its own (with the file's top-level imports): the
    small files a real tree has many of."""
    for p in SOURCES:
        data = p.read_bytes()
        if not _parses(data):
            continue
        path = str(p.relative_to(ROOT))
        yield path, data
        text = data.decode("utf-8", "replace")
        tree = ast.parse(data)
        head = "".join(ast.get_source_segment(text, n) + "\n" for n in tree.body
                       if isinstance(n, (ast.Import, ast.ImportFrom)))
        for k, n in enumerate(tree.body):
            if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                lines = text.splitlines(keepends=True)[n.lineno - 1:n.end_lineno]
                part = (head + "\n" + "".join(lines)).encode()
                if _parses(part):
                    yield f"{path[:-3]}_{k}.py", part


def test_a_file_not_parsed_gets_what_the_parse_gives(monkeypatch):
    """Note [Nothing to fix]: every file the fixer leaves unparsed is answered,
    finding for finding and reason for reason, as the whole driver answers it
    (files that parse; one that does not is left with the table's reasons)."""
    not_parsed = 0
    real = engine._none_fixable
    for path, data in _cases():
        findings, _ = scan_source(data, path)
        if not findings:
            continue
        for kw in MODES:
            seen: list = []
            monkeypatch.setattr(engine, "_none_fixable",
                                lambda fs, u: seen.append(real(fs, u)) or seen[-1])
            fast = _outcome(data, path, findings, **kw)
            monkeypatch.setattr(engine, "_none_fixable", lambda fs, u: False)
            full = _outcome(data, path, findings, **kw)
            assert fast == full, (path, kw)
            not_parsed += any(seen)
    # a file's unsafe device literals (safe mode) and the target's refusals of
    # literals and checks no longer make it parsed (44 cases of the fixtures
    # are not parsed; 24 were before)
    assert not_parsed > 30, not_parsed


def test_literals_and_the_targets_refusals_do_not_make_a_file_parsed(tmp_path, monkeypatch):
    """A file whose device literals are all unsafe (safe mode) and whose other
    findings the table or the target refuse is not parsed, whatever units the
    target's refusals would block: the reasons are the table's."""
    parsed = []
    real = engine._fix_python
    monkeypatch.setattr(engine, "_fix_python", lambda *a, **k: parsed.append(1) or real(*a, **k))
    data = (b"import torch\n\n\ndef f(x):\n"
            b"    s = torch.cuda.Stream()\n"            # AD113: unsafe
            b"    x = x.cuda()\n"                       # AD907: unsafe
            b"    torch.cuda.set_device(1)\n"          # AD104: refused by the target 2.6
            b"    return x.to(\"cuda\")\n")           # AD903: unsafe
    findings, _ = scan_source(data, "m.py")
    assert {f.rule for f in findings} == {"AD113", "AD907", "AD104", "AD903"}
    new, applied, skipped = fix_source(data, "m.py", findings, target_torch="2.6")
    assert parsed == [] and new == data and applied == []
    why = {f.rule: w for f, w in skipped}
    assert why["AD907"].startswith("AD907 changes behaviour on accelerators other than CUDA")
    assert why["AD113"].startswith("AD113's fix changes behaviour")
    assert why["AD104"].startswith("needs torch >= 2.7")
    assert why["AD903"].startswith("needs torch >= 2.7")
    # where a literal may be rewritten (unsafe), the file is parsed
    fix_source(data, "m.py", findings, target_torch="2.13", unsafe=True)
    assert parsed


@pytest.mark.parametrize("unsafe", [False, True])
def test_an_import_still_makes_a_file_parsed(monkeypatch, unsafe):
    parsed = []
    real = engine._fix_python
    monkeypatch.setattr(engine, "_fix_python", lambda *a, **k: parsed.append(1) or real(*a, **k))
    data = b"from torch.cuda import synchronize\nx = y.cuda()\n"
    findings, _ = scan_source(data, "m.py")
    fix_source(data, "m.py", findings, target_torch="2.13", unsafe=unsafe)
    assert parsed


def _local_names_reference(scope):
    """analysis._local_names as it was written first (every child of every
    node, by isinstance), to check the walk by node type against."""
    from anydev._migrate.fix.analysis import _COMPREHENSIONS
    from anydev._migrate.fix.python_tree import walk

    out: dict = {}
    declared: set = set()
    if isinstance(scope, _COMPREHENSIONS):
        for g in scope.generators:
            for n in walk(g.target):
                if isinstance(n, ast.Name):
                    out.setdefault(n.id, ("a comprehension variable", n.lineno))
        return out
    a = scope.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None:
            out.setdefault(arg.arg, ("a parameter", arg.lineno))
    todo = list(scope.body if isinstance(scope.body, list) else [scope.body])
    while todo:
        n = todo.pop()
        if type(n) is ast.Name and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.setdefault(n.id, ("assigned", n.lineno))
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
            continue
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for al in n.names:
                torch = al.name == "torch" or al.name.startswith("torch.") \
                    if isinstance(n, ast.Import) else \
                    (n.level == 0 and (n.module or "").split(".")[0] == "torch")
                out.setdefault(al.asname or al.name.split(".")[0],
                               ("torch" if torch else "imported", n.lineno))
            continue
        if isinstance(n, ast.ExceptHandler) and n.name:
            out.setdefault(n.name, ("an `except ... as` name", n.lineno))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(n.name, ("a nested definition", n.lineno))
            todo.extend(n.decorator_list)
            continue
        if isinstance(n, (ast.Lambda,) + _COMPREHENSIONS):
            continue
        if type(n).__name__ in ("MatchAs", "MatchStar") and getattr(n, "name", None):
            out.setdefault(n.name, ("a match pattern", n.lineno))
        for name in n._fields:
            v = getattr(n, name, None)
            if isinstance(v, ast.AST):
                todo.append(v)
            elif type(v) is list:
                todo.extend(x for x in v if isinstance(x, ast.AST))
    for name in declared:
        out.pop(name, None)
    return out


_BINDINGS = '''
import torch as t
def f(a, /, b, *c, d, **e):
    g = h = 1
    (i, [j, *k]) = z
    l += 1
    m: int = 2
    del n
    for o in p:
        with q as (r, s):
            pass
    try:
        pass
    except E as u:
        pass
    if (v := 3):
        import os.path
        from . import w as x
        from torch import cuda as tc
    global y
    def inner(): aa = 1
    class C: bb = 1
    lambda cc: cc
    [dd for dd in ee if (ff := dd)]
    match zz:
        case [gg, *hh] | {"k": gg, **hh}:
            pass
        case Point(x=ii) as jj:
            pass
    t = t.cuda
    y = 1
    g = 2
    async def ai(): pass
'''


def test_the_names_a_scope_binds_are_found_in_the_same_order():
    """analysis._local_names (a walk by node type) against the first walk, on
    every scope of the fixtures and a module with every kind of binding: the
    same names, hows and lines (the first binding found is the one a message
    names)."""
    from anydev._migrate.fix.analysis import _SCOPES, _local_names

    trees = [ast.parse(_BINDINGS)] + [ast.parse(data) for _, data in _cases()]
    scopes = 0
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, _SCOPES):
                assert list(_local_names(node).items()) == \
                    list(_local_names_reference(node).items()), ast.dump(node)[:200]
                scopes += 1
    assert scopes > 300
    got = _local_names(trees[0].body[1])
    assert got["ii"] == ("a match pattern", 28) and got["u"][0] == "an `except ... as` name"
    assert got["t"] == ("assigned", 30) and got["tc"] == ("torch", 19) and "y" not in got
    assert got["g"] == ("assigned", 32)  # the last of the body is found first


def test_the_statements_are_walks_statements_in_its_order():
    """analysis.statements (the statement lists only) visits the statements
    of a module in python_tree.walk's order (breadth first over every node):
    PyAnalysis.bindings lists a name's bindings in that order, which picks
    the binding a message names."""
    from anydev._migrate.fix.analysis import statements
    from anydev._migrate.fix.python_tree import walk

    kinds = (ast.stmt, ast.ExceptHandler, ast.match_case)
    n = 0
    for tree in [ast.parse(_BINDINGS)] + [ast.parse(data) for _, data in _cases()]:
        want = [x for x in walk(tree) if isinstance(x, kinds)]
        got = [x for x in statements(tree) if x is not tree]
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want))
        n += len(got)
    assert n > 2000


def test_an_assignments_binding_is_spelled_when_a_message_needs_it():
    from anydev._migrate.fix.analysis import ASSIGNED, PyAnalysis

    tree = ast.parse("try:\n    import torch as tc\nexcept ImportError:\n"
                     "    tc = make_a_stub(1, 2)\nx: int\n")
    an = PyAnalysis(tree, "m.py")
    (what, line, node), = [b for b in an.bindings()["tc"] if b[0] == ASSIGNED]
    assert line == 4 and PyAnalysis.binding_text(what, node) == "`make_a_stub(1, 2)`"
    assert an.bindings()["x"][0][0] == "an annotation"
    assert "bound to `make_a_stub(1, 2)` on another branch (line 4)" in \
        an.other_binding("tc", "torch.cuda.synchronize")


def test_the_names_a_function_uses_are_those_of_ast_walk():
    """literals._names_in (one walk of python_tree's) against the two walks of
    ast it replaced: the names a unit's device-type name must not take."""
    from anydev._migrate.fix.literals import _names_in

    n = 0
    for tree in [ast.parse(_BINDINGS)] + [ast.parse(data) for _, data in _cases()]:
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                want = {x.id for x in ast.walk(fn) if isinstance(x, ast.Name)} | \
                    {a.arg for x in ast.walk(fn) if isinstance(x, ast.arguments)
                     for a in [*x.posonlyargs, *x.args, *x.kwonlyargs, x.vararg, x.kwarg] if a}
                assert _names_in(fn) == want
                n += 1
    assert n > 200


def test_the_fixer_imports_no_more_than_it_needs():
    """`anydev fix` of one file pays its imports per save (the editor server,
    pre-commit): dataclasses (and inspect, dis), difflib, configparser and the
    C++ fixer are imported where used, not at start-up."""
    import subprocess
    import sys

    code = ("import sys, anydev.fix, anydev._cli.fix, anydev._cli.main; "
            "print(sorted(m for m in ('dataclasses', 'inspect', 'dis', 'difflib', 'configparser', "
            "'anydev._migrate.fix.cpp', 'anydev._migrate.fix.cpp_classes') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]", p.stdout


def test_an_edit_is_equal_to_one_with_the_same_span_and_text():
    from anydev._migrate.fix.edits import _Edit

    assert _Edit(1, 2, "x") == _Edit(1, 2, "x", proven=True) != _Edit(1, 3, "x")
    assert repr(_Edit(1, 2, "x")) == "_Edit(start=1, end=2, text='x', proven=False)"
    e = _Edit(1, 2, "x")
    e.text = "y"
    assert e.text == "y" and _Edit.__hash__ is None


def test_the_results_are_still_dataclasses_to_their_users():
    import dataclasses

    from anydev._migrate import torch_versions as versions
    from anydev.fix import FileResult, FixResult

    fr = FileResult("a.py")
    assert fr.applied == [] and fr.applied is not FileResult("a.py").applied and fr.later == 0
    assert [f.name for f in dataclasses.fields(FileResult)][:3] == ["path", "applied", "skipped"]
    r = FixResult(files=[fr])
    assert r.applied == 0 and r.diff == "" and dataclasses.asdict(r)["files"][0]["path"] == "a.py"
    t = versions.Target((2, 6), "default")
    assert t == versions.Target((2, 6), "default") and hash(t) and t.text == "2.6"
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.source = "x"  # type: ignore[misc]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fixes in processes on Linux")
def test_files_fixed_again_for_their_mocks_in_processes_give_what_one_process_gives(
        tmp_path, monkeypatch):
    """_settle_mocks fixes the files of a frozen symbol again as the first fix
    was, in processes where there are many: the same results as one process."""
    from anydev.fix import fix_paths

    monkeypatch.setattr(engine, "_FILES_PER_PROCESS", 2)
    used = []
    real = engine._fix_in_processes
    monkeypatch.setattr(engine, "_fix_in_processes", lambda *a: used.append(a[-2]) or real(*a))
    plain = b"import torch\n\n\ndef step():\n    torch.cuda.synchronize()\n"
    home = b"import torch\n\n\nclass CUDABackend:\n    def sync(self):\n        torch.cuda.synchronize()\n"
    test = (b"from unittest import mock\n\n\n"
            b"@mock.patch(\"torch.cuda.synchronize\")\ndef test_step(m):\n    pass\n")
    for tree in ("one", "many"):
        for i in range(8):
            p = tmp_path / tree / f"pkg{i % 2}" / f"m{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(home if i == 5 else plain)
        (tmp_path / tree / "test_m.py").write_bytes(test)
    monkeypatch.chdir(tmp_path)

    def summary(r):
        return ([(fr.path.split("/", 1)[1], fr.error, fr.changed,
                  [(f.rule, f.start) for f in fr.applied],
                  [(f.rule, f.start, why.replace("many/", "one/")) for f, why in fr.skipped])
                 for fr in r.files],
                r.diff.replace("one/", "X/").replace("many/", "X/"))

    a = fix_paths(["one"], diff=True, target_torch="2.13", jobs=1)
    b = fix_paths(["many"], diff=True, target_torch="2.13", jobs=3)
    assert summary(a) == summary(b)
    assert a.diff == "" and any("a test patches torch.cuda.synchronize" in why
                                for _, why in a.remaining)
    # the first fix and the files fixed again for the frozen symbol, both in processes
    assert used[0] is None and used[1] == {"torch.cuda.synchronize": used[1]["torch.cuda.synchronize"]}


def test_a_cpp_file_not_lexed_gets_what_the_driver_gives(monkeypatch):
    """Note [Nothing to fix], C++: every fixture C++ file and function-sized
    piece of it, in every mode, answered as the C++ driver answers it."""
    real = engine._none_fixable_cpp
    sources = sorted(p for d in ("tests/fixtures/scan", "tests/fixtures/fix", "tests/fixtures/cpp_ext",
                                 "tests/fixtures/cpp_compile", "tests/fixtures/projects")
                     for ext in ("*.cc", "*.cpp", "*.cu", "*.h", "*.cuh")
                     for p in (ROOT / d).rglob(ext))
    cases = []
    for p in sources:
        data = p.read_bytes()
        path = str(p.relative_to(ROOT))
        cases.append((path, data))
        lines = data.splitlines(keepends=True)
        for k in range(0, len(lines), 12):  # pieces: fewer findings, more of them unfixable
            cases.append((path, b"".join(lines[k:k + 12])))
    not_lexed = 0
    for path, data in cases:
        findings, _ = scan_source(data, path)
        if not findings:
            continue
        for kw in MODES:
            seen: list = []
            monkeypatch.setattr(engine, "_none_fixable_cpp",
                                lambda fs, u: seen.append(real(fs, u)) or seen[-1])
            fast = _outcome(data, path, findings, **kw)
            monkeypatch.setattr(engine, "_none_fixable_cpp", lambda fs, u: False)
            full = _outcome(data, path, findings, **kw)
            assert fast == full, (path, kw)
            not_lexed += any(seen)
    assert len(sources) > 5 and not_lexed > 20, (len(sources), not_lexed)


def _cpp_code_mask_reference(text: str) -> str:
    """cpp_lex._cpp_code_mask as first written (a step per character)."""
    out = list(text)
    i, n = 0, len(text)

    def blank(s: int, e: int) -> None:
        for k in range(s, min(e, n)):
            if out[k] not in "\r\n":
                out[k] = " "

    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            j = i
            while j < n and text[j] not in "\r\n":
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif ch == '"' and i > 0 and text[i - 1] == "R" and re.match(r'"[^()\\ ]{0,16}\(', text[i:i + 20]):
            delim = re.match(r'"([^()\\ ]{0,16})\(', text[i:]).group(1)  # type: ignore[union-attr]
            j = text.find(")" + delim + '"', i)
            j = n if j < 0 else j + len(delim) + 2
            blank(i, j)
            i = j
        elif ch in "\"'" and not (ch == "'" and i > 0 and text[i - 1].isalnum()):
            j = i + 1
            while j < n and text[j] != ch and text[j] not in "\r\n":
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def test_the_cpp_code_mask_is_the_one_a_step_per_character_gives():
    """cpp_lex._cpp_code_mask (a search for the next `/`, `"` or `'`, spans
    blanked at once) against the loop it replaced: random texts of the
    characters that matter, and every C++ fixture."""
    import random

    from anydev._migrate.fix.cpp_lex import _cpp_code_mask

    rng = random.Random(31)
    alphabet = ["/", "*", '"', "'", "\\", "R", "(", ")", "a", "1", "\n", "\r", " ", "d", "x"]
    for _ in range(20000):
        t = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert _cpp_code_mask(t) == _cpp_code_mask_reference(t), repr(t)
    n = 0
    for ext in ("*.cc", "*.cpp", "*.cu", "*.h", "*.cuh"):
        for p in (ROOT / "tests" / "fixtures").rglob(ext):
            t = p.read_text(encoding="utf-8", errors="surrogateescape")
            assert _cpp_code_mask(t) == _cpp_code_mask_reference(t), p
            n += 1
    assert n > 5
    assert _cpp_code_mask('a = "x//y"; // c\nR"d(/*)d" b /* \n */ c') == \
        'a =       ;     \nR         b    \n    c'


def test_the_target_reader_walks_as_ast_walk():
    """torch_versions._walk (a list, no generator per node) visits ast.walk's
    nodes in its order: the first version check found is the one a target
    names."""
    from anydev._migrate import torch_versions

    n = 0
    for tree in [ast.parse(_BINDINGS)] + [ast.parse(data) for _, data in _cases()]:
        want = list(ast.walk(tree))
        got = torch_versions._walk(tree)
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want))
        n += 1
    assert n > 40


def _ladders_reference(tree, text, roots):
    """ladders._ladders as it was written first (two ast.walk of every node),
    to check the walk of the statement lists against."""
    from anydev._migrate.fix import ladders
    from anydev._migrate.fix.text import split_lines

    out = []
    lines = split_lines(text)
    inner = {id(n.orelse[0]) for n in ast.walk(tree)
             if isinstance(n, ast.If) and len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)
             and lines[n.orelse[0].lineno - 1][n.orelse[0].col_offset:].startswith("elif")}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or id(node) in inner:
            continue
        branches, cur, root = [], node, None
        while True:
            got = ladders._check_device(cur.test, roots)
            if got is None or (root is not None and got[1] != root):
                branches = []
                break
            root = got[1]
            branches.append((got[0], cur.body))
            nxt = cur.orelse[0] if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) \
                else None
            if nxt is not None and id(nxt) in inner:
                cur = nxt
                continue
            orelse = cur.orelse
            break
        if len(branches) >= 2:
            out.append((node, [(d, b) for d, b in branches], orelse, root))
    return out


_LADDERS = '''
import torch


def pick(rank):
    if torch.cuda.is_available():
        device = torch.device("cuda")
    elif torch.xpu.is_available():
        device = torch.device("xpu")
    else:
        device = torch.device("cpu")
    for _ in range(2):
        try:
            if torch.cuda.is_available():
                x = f"cuda:{rank}"
                print("cuda")
            elif torch.backends.mps.is_available():
                x = f"mps:{rank}"
        except RuntimeError:
            if torch.cuda.is_available():
                y = 1
            else:
                if torch.xpu.is_available():
                    y = 2
                elif torch.cuda.is_available():
                    y = 3
    match rank:
        case 0:
            if torch.cuda.is_available():
                z = "cuda"
            elif torch.mps.is_available():
                z = "mps"
    return device, lambda: [x for x in (1 if torch.cuda.is_available() else 2,)]
'''


def test_the_ladders_are_found_without_a_walk_of_every_node(monkeypatch):
    """ladders._ladders looks at the statement lists only (an `if` is a
    statement): no ast.walk of the module (two were a third of a safe fix of
    Megatron-LM), and the same ladders in the same order as the two walks
    found, on every fixture file and a module of nested ladders."""
    from anydev._migrate.fix import ladders

    trees = [(_LADDERS, ast.parse(_LADDERS))] + \
        [(data.decode("utf-8", "replace"), ast.parse(data)) for _, data in _cases()]
    found = 0
    for text, tree in trees:
        roots = ladders._torch_roots(tree) or {"torch"}
        want = _ladders_reference(tree, text, roots)
        visited = []
        real_walk = ast.walk
        monkeypatch.setattr(ast, "walk", lambda n: visited.append(n) or real_walk(n))
        got = ladders._ladders(tree, text, roots)
        monkeypatch.setattr(ast, "walk", real_walk)
        assert visited == []
        assert [(lad.node, lad.branches, lad.orelse, lad.root) for lad in got] == want
        found += len(got)
    assert found >= 5, found


_SHARED_PARSES = '''import torch


def pick():
    if torch.cuda.is_available():
        d = "cuda"
        print("only on CUDA")
    elif torch.xpu.is_available():
        d = "xpu"
    return d


def step(model, batch):
    value = model.forward_long(batch, device_index=torch.cuda.current_device())
    torch.cuda.synchronize()
    return value
'''


def test_a_text_is_parsed_once(monkeypatch, tmp_path):
    """Note [One parse a text] in ladders.py: the collapse's parse of a file
    (two `is_available` and an `elif`: it looks for ladders) is the first
    round's, and its parse of the fixed text (after the rounds) is the
    wrap's: no text is parsed twice."""
    path = tmp_path / "m.py"
    data = _SHARED_PARSES.encode()
    path.write_bytes(data)
    findings, _ = scan_source(data, str(path))
    texts: list = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda src, *a, **k: texts.append(src) or
                        real_parse(src, *a, **k))
    new, applied, skipped = fix_source(data, str(path), findings, target_torch="2.13")
    monkeypatch.setattr(ast, "parse", real_parse)
    assert {f.rule for f in applied} == {"AD103", "AD107"}, (applied, skipped)
    # the ladder is left (its CUDA branch has one more statement), the call's
    # line was taken over 88 columns and is wrapped
    assert b"elif torch.xpu.is_available()" in new and \
        b"device_index=torch.accelerator.current_device_index()" in new
    assert all(len(ln) <= 88 for ln in new.splitlines()), new.decode()
    # the file and its fixed text before the wrap, once each (the wrap parses
    # the statement it wrapped, alone: Note [Checking the wrap] in wrap.py)
    whole = [t for t in texts if t.startswith("import torch")]
    assert len(whole) == 2 and whole[0] == _SHARED_PARSES, [t[:40] for t in texts]
    assert len(texts) == len(set(texts)), [t[:40] for t in texts]


def _mutations(line: str):
    """Texts a wrap could make of ``line``: a break after its first bracket
    (the same code), a bracket left open, an operand changed, a second
    statement, a parenthesized value."""
    i = line.find("(")
    if i >= 0:
        yield line[:i + 1] + "\n" + line[i + 1:]
        yield line[:i + 1] + "\n" + line[i + 1:].replace(")", "", 1)
        yield line[:i + 1] + "(" + line[i + 1:].replace(")", "),", 1)
    yield line.replace("=", "==", 1)
    yield line + "; z = 1"
    yield "(" + line.lstrip() + ")"


def test_a_wrap_checked_by_its_statements_is_what_the_whole_file_check_says(monkeypatch):
    """Note [Checking the wrap]: wherever the statements that hold the wrapped
    lines, parsed alone, say "the same tree", the whole file's check says so
    too (on changed lines of every fixture file), and a wrap of an ordinary
    line is checked without parsing the file."""
    from anydev._migrate.fix import wrap

    shown = checked = 0
    for _, data in _cases():
        text = data.decode("utf-8-sig", "replace")
        tree = ast.parse(text)
        lines = text.splitlines(keepends=True)
        for k, line in enumerate(lines[:80]):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            for m in _mutations(line.rstrip("\n")):
                out = list(lines)
                out[k] = m + "\n"
                if wrap._same_statements(tree, out, [k + 1]):
                    shown += 1
                    assert wrap._same_tree(tree, "".join(out), [k + 1]), (k, m)
                checked += 1
    assert shown > 500 and checked > 5 * shown // 4, (shown, checked)
    parsed = []
    real = wrap._same_tree
    monkeypatch.setattr(wrap, "_same_tree", lambda *a: parsed.append(1) or real(*a))
    old = "def f(model, batch):\n    value = model.forward_long(batch, index=torch.cuda.current_device())\n"
    new = old.replace("torch.cuda.current_device()", "torch.accelerator.current_device_index()")
    got = wrap.wrap_new_long_lines(old, new, 80)
    assert got != new and ast.dump(ast.parse(got)) == ast.dump(ast.parse(new)) and parsed == []
    # an `elif` line is no statement alone: the whole file is checked
    old = "if a:\n    pass\nelif torch.cuda.current_device() == some_long_function_name(alpha, beta):\n    pass\n"
    new = old.replace("torch.cuda.current_device()", "torch.accelerator.current_device_index()")
    got = wrap.wrap_new_long_lines(old, new, 80)
    assert got != new and parsed == [1]


def test_the_wrap_parses_what_the_rewrite_changed_and_wraps_as_before(monkeypatch):
    """Note [Parsing what the rewrite changed]: with the file's tree, the wrap
    parses the top-level statements between the unchanged first and last
    lines, not the whole fixed text, and wraps every fixture file's lines as
    the whole text's parse does (a long argument added to a call in one place
    of a file, then in two places far apart)."""
    from anydev._migrate.fix import wrap

    extra = ", a_rather_long_keyword_argument=another_rather_long_value_name"
    compared = wrapped = 0
    for _, data in _cases():
        old = data.decode("utf-8-sig", "replace")
        try:
            tree = ast.parse(old)
        except SyntaxError:
            continue
        lines = old.splitlines(keepends=True)
        calls = [k for k, ln in enumerate(lines) if "(" in ln and ln.rstrip().endswith(")")
                 and len(ln) < 80 and not ln.lstrip().startswith(("#", "@", "def ", "class "))]
        for picks in [[k] for k in calls[:6]] + ([[calls[0], calls[-1]]] if calls else []):
            out = list(lines)
            for k in picks:
                ln = out[k].rstrip("\r\n")
                out[k] = ln[:-1] + extra + ")" + out[k][len(ln):]
            new = "".join(out)
            try:
                ast.parse(new)
            except SyntaxError:
                continue
            want = wrap.wrap_new_long_lines(old, new, 88)
            assert wrap.wrap_new_long_lines(old, new, 88, old_tree=tree) == want, picks
            compared += 1
            wrapped += want != new
    assert compared > 100 and wrapped > 50, (compared, wrapped)
    # one function of many changed: the region is that function's, not the file
    body = "".join(f"def f{i}(x):\n    return g(x, {i})\n\n\n" for i in range(40))
    old = "import torch\n\n\n" + body
    new = old.replace("return g(x, 7)", "return g(x, 7" + extra + ")")
    parsed = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda src, *a, **k: parsed.append(src) or real(src, *a, **k))
    got = wrap.wrap_new_long_lines(old, new, 80, old_tree=real(old))
    monkeypatch.setattr(ast, "parse", real)
    assert got != new and ast.dump(ast.parse(got)) == ast.dump(ast.parse(new))
    assert new not in parsed and got not in parsed and \
        all(len(p.strip().splitlines()) <= 6 for p in parsed), parsed


_SEEDS = ("import random\n\nimport torch\n\n\ndef seed_everything(seed):\n    random.seed(seed)\n"
          "    torch.manual_seed(seed)\n    if torch.cuda.is_available():\n"
          "        torch.cuda.manual_seed_all(seed)\n"
          "    try:\n        pass\n    except ValueError:\n        torch.manual_seed(seed)\n"
          "        if torch.cuda.is_available():\n            torch.cuda.manual_seed_all(seed)\n"
          "\n\ndef other(seed):\n    with open('x'):\n        torch.manual_seed(seed)\n"
          "        if torch.cuda.is_available():\n            torch.cuda.manual_seed_all(seed)\n")


def test_the_repeats_are_found_without_a_walk_of_every_node(monkeypatch):
    """Note [A block that repeats]: the blocks are looked for in the statement
    lists (in a function, an except handler, a with), with no ast.walk, and
    the fixed text's parse is the one the file's parses have (no second)."""
    from anydev._migrate.fix.repeats import drop_repeats

    new, _, _ = fix_source(_SEEDS.encode(), "m.py", scan_source(_SEEDS.encode(), "m.py")[0],
                           target_torch="2.13", unsafe=True)
    assert new.count(b"is_available") == 0 and new.count(b"torch.manual_seed(seed)") == 3, new
    current = _SEEDS.replace("torch.cuda.is_available", "torch.accelerator.is_available") \
        .replace("torch.cuda.manual_seed_all", "torch.manual_seed")
    walked, texts = [], []
    real_walk, real_parse = ast.walk, ast.parse
    monkeypatch.setattr(ast, "walk", lambda n: walked.append(n) or real_walk(n))
    monkeypatch.setattr(ast, "parse", lambda s, *a, **k: texts.append(s) or real_parse(s, *a, **k))
    parsed = [(current, real_parse(current))]
    got = drop_repeats(_SEEDS.encode(), current.encode(), parsed)
    monkeypatch.setattr(ast, "walk", real_walk)
    monkeypatch.setattr(ast, "parse", real_parse)
    assert got == new and walked == [] and texts == []


def _made_long_reference(old_lines, new_lines, limit):
    """wrap._made_long as it was written first (difflib's alignment always)."""
    import difflib

    long_new = [i for i, ln in enumerate(new_lines) if len(ln) > limit]
    if not long_new or all(new_lines[i] in set(old_lines) for i in long_new):
        return []
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes():
        if tag in ("equal", "delete"):
            continue
        for j in range(j1, j2):
            if j in long_new:
                was_ok = len(old_lines[i1 + j - j1]) <= limit if tag == "replace" and \
                    i2 - i1 == j2 - j1 else all(len(x) <= limit for x in old_lines[i1:i2])
                if was_ok:
                    out.append(j)
    return out


def test_the_lines_made_long_are_found_without_difflib_where_no_line_was_long(monkeypatch):
    """wrap._made_long: where no line of the file was over the limit, the
    long lines of the fixed text are the ones the rewrite made long, whatever
    difflib's alignment (which is not computed); the same lines as with it, on
    every fixture file lengthened in one, two or three places, at limits
    below and above the file's longest line."""
    import difflib

    from anydev._migrate.fix import wrap

    n = skipped = 0
    for _, data in _cases():
        old = data.decode("utf-8-sig", "replace").splitlines()
        if not old:
            continue
        for picks in ([0], [len(old) // 2], [1, len(old) - 1], [0, len(old) // 3, len(old) - 1]):
            new = list(old)
            for k in picks:
                if k < len(new):
                    new[k] = new[k] + "  # " + "x" * 60
            new.insert(len(new) // 2, "y = " + "z" * 90)
            for limit in (40, 88, max(map(len, old)) + 1):
                aligned = []
                real = difflib.SequenceMatcher
                monkeypatch.setattr(difflib, "SequenceMatcher",
                                    lambda *a, **k: aligned.append(1) or real(*a, **k))
                got = wrap._made_long(old, new, limit)
                monkeypatch.setattr(difflib, "SequenceMatcher", real)
                assert got == _made_long_reference(old, new, limit)
                n += 1
                if max(map(len, old)) <= limit:
                    assert aligned == []
                    skipped += 1
    assert n > 500 and skipped > 150, (n, skipped)
