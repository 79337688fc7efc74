"""What `anydev fix` does not do, and must give the same answer without:
the files it does not parse (Note [Nothing to fix] in
anydev/_migrate/fix/engine.py), the walks it shares. Each shortcut is checked
against the fixer without it, on every Python file of the fixtures, in every
mode, reason for reason."""

from __future__ import annotations

import ast
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
