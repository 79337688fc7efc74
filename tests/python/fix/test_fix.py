"""The fixer (anydev.fix, `anydev fix`): expected fixed output of every scanner
fixture and of the fixer's own cases (tests/fixtures/fix, see
tests/fixtures/README.md), its safety guarantees, the CLI, and a generated
repository end to end.

Regenerate the expected files after a deliberate change with
``ANYDEV_UPDATE_FIXTURES=1 pytest tests/python/fix/test_fix.py -k fixture`` and
review the diff.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from anydev._compat import table as _compat_table
from anydev import fix as fix_mod
from anydev._migrate.fix import engine as fix_engine
from anydev.fix import FixResult, fix_paths, fix_source
from anydev.scan import language_of, scan_source
from conftest import run_cli
from fix_default import newest_default_target  # noqa: F401 (autouse)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SCAN = FIXTURES / "scan"
FIX = FIXTURES / "fix"
CASES = FIX / "cases"
UPDATE = os.environ.get("ANYDEV_UPDATE_FIXTURES") == "1"
ANYDEV = [sys.executable, "-m", "anydev"]

# Scanner fixtures that only parse on Python 3.12+ (PEP 701 f-strings): before
# that the fixer reports them and leaves them alone; from 3.12 on it fixes
# them, and only the invariants are checked.
PEP701 = {"fstrings.py"}


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and language_of(p.name) and not p.name.endswith(".expected.json"))


SCAN_SOURCES = _sources(SCAN)
CASE_SOURCES = _sources(CASES)
ALL = [(p, FIX) for p in SCAN_SOURCES] + [(p, CASES) for p in CASE_SOURCES]
IDS = [f"{'scan' if d is FIX else 'cases'}/{p.name}" for p, d in ALL]


def _fixed_path(src: Path, out: Path, safe: bool = False) -> Path:
    return out / (src.name + (".safe.fixed" if safe else ".fixed"))


def _report_path(src: Path, out: Path) -> Path:
    return out / (src.name + ".fix.json")


def _normalize_error(message: str) -> str:
    # The parser's wording and the Python version vary; the kind of refusal does not.
    return re.sub(r" \([^()]*(\([^()]*\)[^()]*)*\)", "", re.sub(r" with Python \d+\.\d+", "", message))


def _run(data: bytes, name: str, unsafe: bool):
    # The API rows only: the device literals and idioms (AD9xx) are a family of
    # their own, which this fixer leaves to migrate by hand (and which its own
    # rewrites can introduce: torch.amp.autocast("cuda", ...)).
    findings, _ = scan_source(data, name, ignore=["AD9"])
    try:
        new, applied, skipped = fix_source(data, name, findings, unsafe=unsafe, ignore=["AD9"])
    except ValueError as e:
        return None, str(e), findings, [], []
    return new, None, findings, applied, skipped


def _report(src: Path) -> tuple[dict, bytes, bytes]:
    data = src.read_bytes()
    doc: dict = {"error": None}
    outputs = {}
    for mode in ("unsafe", "safe"):
        new, error, _, applied, skipped = _run(data, src.name, unsafe=mode == "unsafe")
        if error is not None:
            doc["error"] = _normalize_error(error)
            outputs[mode] = data
            continue
        outputs[mode] = new
        doc[mode] = {"applied": [[f.line, f.rule] for f in applied],
                     "skipped": [[f.line, f.rule, why] for f, why in skipped]}
    return doc, outputs["unsafe"], outputs["safe"]


def _dump(doc: dict) -> str:
    def block(items):
        if not items:
            return "[]"
        return "[\n" + ",\n".join("    " + json.dumps(i, ensure_ascii=False) for i in items) + "\n  ]"
    parts = [f'{{"error": {json.dumps(doc["error"])}']
    for mode in ("unsafe", "safe"):
        if mode in doc:
            parts.append(f' "{mode}": {{\n  "applied": {block(doc[mode]["applied"])},\n'
                         f'  "skipped": {block(doc[mode]["skipped"])}}}')
    return ",\n".join(parts) + "}\n"


def _write_or_remove(path: Path, data: bytes, needed: bool) -> None:
    if needed:
        path.write_bytes(data)
    elif path.exists():
        path.unlink()


# --- fixtures: expected fixed output -------------------------------------------------


def test_fixture_outputs_are_not_scanner_fixtures():
    # Expected outputs end in .fixed/.fix.json, which no language has, and the
    # fixer's own sources live outside tests/fixtures/scan.
    for p in FIX.iterdir():
        if p.is_file() and p.name != ".gitattributes":
            assert p.name.endswith((".fixed", ".fix.json")), p.name
            assert (SCAN / re.sub(r"(\.safe)?\.fixed$|\.fix\.json$", "", p.name)).exists(), p.name
    assert len(SCAN_SOURCES) >= 25 and len(CASE_SOURCES) >= 8


@pytest.mark.parametrize("src, out", ALL, ids=IDS)
def test_fixture(src: Path, out: Path):
    if src.name in PEP701 and sys.version_info >= (3, 12):
        pytest.skip("expected output recorded on Python < 3.12 (the file needs PEP 701)")
    doc, unsafe_out, safe_out = _report(src)
    data = src.read_bytes()
    report, fixed, safe_fixed = _report_path(src, out), _fixed_path(src, out), \
        _fixed_path(src, out, safe=True)
    if UPDATE:
        report.write_text(_dump(doc), encoding="utf-8")
        _write_or_remove(fixed, unsafe_out, unsafe_out != data)
        _write_or_remove(safe_fixed, safe_out, safe_out != unsafe_out)
    assert report.exists(), f"{report.name} is missing (ANYDEV_UPDATE_FIXTURES=1)"
    assert json.loads(report.read_text(encoding="utf-8")) == json.loads(_dump(doc))
    assert unsafe_out == (fixed.read_bytes() if fixed.exists() else data)
    assert safe_out == (safe_fixed.read_bytes() if safe_fixed.exists() else unsafe_out)


@pytest.mark.parametrize("src, out", ALL, ids=IDS)
def test_fixture_invariants(src: Path, out: Path):
    """For each mode: a fixed Python file compiles, a second run changes
    nothing, and a re-scan finds exactly the findings the fixer reported as
    left (for the scanner's fixtures with --unsafe-fixes: only rows without a
    fix)."""
    data = src.read_bytes()
    for unsafe in (True, False):
        new, error, findings, applied, skipped = _run(data, src.name, unsafe)
        if error is not None:
            assert findings, f"{src.name}: refused without findings: {error}"
            continue
        if src.suffix == ".py" and new != data:
            compile(new, src.name, "exec", dont_inherit=True)
        again, error2, findings2, applied2, skipped2 = _run(new, src.name, unsafe)
        assert error2 is None and again == new, f"{src.name}: a second run changed it"
        assert applied2 == []
        assert len(findings2) == len(skipped)
        assert sorted((f.rule, f.kind) for f in findings2) == sorted((f.rule, f.kind) for f, _ in skipped)
        # literals*: the availability checks guard CUDA literals, so the fixer leaves them
        # (Note [Half-migrated guards] in fix.py)
        if unsafe and out is FIX and not src.name.startswith("literals"):
            # patch targets (kind "mock") move only with the code they patch; a call
            # whose replacement raises without an accelerator moves only guarded, and
            # an object only where its uses are seen (Note [Guarded calls], cuda_only_use)
            assert [f for f in findings2 if f.fix != "none" and f.kind != "mock"
                    and not _unreleased(f) and not _by_design(f, skipped)] == [], \
                f"{src.name}: rows with a fix are left after --unsafe-fixes"
        for f, why in skipped:
            assert why and not why.endswith(".")


#: Reasons an unsafe fix leaves a row with a fix on purpose.
_BY_DESIGN = ("must be guarded", "the object is", "` is passed to", "` is used with",
              "kept in a container", "kept: ", "stays device-specific")


def _by_design(f, skipped) -> bool:
    """A finding of the fixed text left on purpose: its original (same rule,
    same text) was left for a reason of _BY_DESIGN."""
    return any(g.rule == f.rule and g.text == f.text and any(r in why for r in _BY_DESIGN)
               for g, why in skipped)


def _unreleased(f) -> bool:
    """A finding whose replacement no released PyTorch has (`since = "main"`):
    never applied, whatever the mode."""
    row = _compat_table.ROWS_BY_CODE.get(f.rule)
    return row is not None and row.since == "main"


def test_every_row_with_a_fix_is_fixed():
    """rows_python.py and rows_cpp.cc use every deprecated row once: each row
    with a fix is rewritten (safe ones without --unsafe-fixes too), each row
    without one is left."""
    for unsafe in (True, False):
        applied, skipped = set(), set()
        for name in ("rows_python.py", "rows_cpp.cc"):
            new, error, findings, a, s = _run((SCAN / name).read_bytes(), name, unsafe)
            assert error is None
            applied |= {f.rule for f in a}
            skipped |= {f.rule for f, _ in s}
        rows = [r for r in _compat_table.ROWS if r.status == "deprecated"]
        want = {r.code for r in rows if (r.fix == "safe" or (unsafe and r.fix == "unsafe"))
                and r.since != "main"}
        assert want - applied == set(), "rows with a fix the fixer left"
        assert applied - want == set(), "rows rewritten beyond what the mode allows"
        assert {r.code for r in rows} - want <= skipped


# --- the Python API ------------------------------------------------------------------


def fixed(src: str, name: str = "m.py", unsafe: bool = True) -> str:
    data = src.encode()
    findings, _ = scan_source(data, name)
    new, _, _ = fix_source(data, name, findings, unsafe=unsafe)
    return new.decode()


def test_imports_are_rewritten_with_their_uses():
    src = "from torch.cuda.amp import autocast\n\n\ndef f(x):\n    with autocast(dtype=x):\n        pass\n"
    # (under --unsafe-fixes the template's "cuda" is AD904's, rewritten in the same run)
    assert fixed(src) == ("import torch\n\n\ndef f(x):\n"
                          '    with torch.amp.autocast(getattr(torch.accelerator.current_accelerator(), "type", "cuda"), '
                          'dtype=x):\n        pass\n')
    assert fixed(src, unsafe=False) == ("import torch\n\n\ndef f(x):\n"
                                        '    with torch.amp.autocast("cuda", dtype=x):\n        pass\n')
    # an existing `import torch as th` is used, and no `import torch` added
    src = "import torch as th\nfrom torch.cuda.amp import autocast\nwith autocast(dtype=th.half):\n    pass\n"
    assert fixed(src, unsafe=False) == \
        'import torch as th\nwith th.amp.autocast("cuda", dtype=th.half):\n    pass\n'
    # a use that is not rewritten (unsafe, not asked for) keeps its import
    src = "import torch\nfrom torch.cuda import set_device, synchronize\nset_device(0)\nsynchronize()\n"
    assert fixed(src, unsafe=False) == \
        "import torch\nfrom torch.cuda import set_device\nset_device(0)\ntorch.accelerator.synchronize()\n"
    assert fixed(src, unsafe=True) == \
        "import torch\ntorch.accelerator.set_device_index(0)\ntorch.accelerator.synchronize()\n"


def test_skipped_findings_say_why():
    src = textwrap.dedent("""\
        import torch
        args = ()
        torch.cuda.synchronize(*args)
        torch.cuda.reset_peak_memory_stats(**{})
        torch.cuda.Stream(stream_id=3)
        torch.cuda.set_device(0)
        with torch.cuda.stream(None):
            pass
        """)
    findings, _ = scan_source(src, "m.py")
    new, applied, skipped = fix_source(src.encode(), "m.py", findings, unsafe=False)
    assert new == src.encode() and applied == []
    why = {f.line: w for f, w in skipped}
    assert "*args or **kwargs" in why[3] and "*args or **kwargs" in why[4]
    assert "--unsafe-fixes" in why[5] and "--unsafe-fixes" in why[6]
    assert why[7].startswith("AD111 has no mechanical fix")
    _, _, skipped = fix_source(src.encode(), "m.py", findings, unsafe=True)
    assert "keyword `stream_id` goes to the **kwargs" in dict((f.line, w) for f, w in skipped)[5]


def test_keyword_arguments_map_through_templates():
    # (private names: a public module-level object may be imported and used as the
    # CUDA class elsewhere, which the fixer cannot see)
    src = "import torch\n_s = torch.cuda.Stream(priority=-1)\n_t = torch.cuda.Stream(1, -1)\n" \
          "torch.cuda.synchronize(device=0)\n_e = torch.cuda.Event(True)\n"
    assert fixed(src) == "import torch\n_s = torch.Stream(priority=-1)\n" \
                         "_t = torch.Stream(1, priority=-1)\n" \
                         "torch.accelerator.synchronize(0)\n_e = torch.Event(enable_timing=True)\n"


def test_multi_line_calls_keep_their_layout():
    # (memory_allocated raises without an accelerator where the legacy call gave 0:
    # rewritten only where it is guarded, Note [Guarded calls])
    src = textwrap.dedent("""\
        import torch
        if torch.cuda.is_available():
            _x = torch.cuda.memory_allocated(  # which
                device=torch.cuda.current_device(),  # this one
            )
        with torch.cuda.amp.autocast(
            dtype=torch.bfloat16,
        ):
            pass
        """)
    assert fixed(src) == textwrap.dedent("""\
        import torch
        if torch.accelerator.is_available():
            _x = torch.accelerator.memory_allocated(  # which
                torch.accelerator.current_device_index(),  # this one
            )
        with torch.amp.autocast(
            getattr(torch.accelerator.current_accelerator(), "type", "cuda"),
            dtype=torch.bfloat16,
        ):
            pass
        """)


def test_calls_in_f_strings():
    src = 'import torch\nprint(f"{torch.cuda.current_device()} {torch.cuda.amp.GradScaler()}")\n' \
          "print(f'{torch.cuda.amp.GradScaler()}')\n"
    out = fixed(src, unsafe=False)
    assert out == ('import torch\nprint(f"{torch.accelerator.current_device_index()} '
                   "{torch.amp.GradScaler('cuda')}\")\n"
                   "print(f'{torch.amp.GradScaler(\"cuda\")}')\n")
    compile(out, "m.py", "exec")


def test_fix_source_refuses_findings_of_other_bytes():
    findings, _ = scan_source(b"import torch\ntorch.cuda.synchronize()\n", "m.py")
    with pytest.raises(ValueError, match="changed since it was scanned"):
        fix_source(b"import torch\ntorch.cuda.empty_cache()\n", "m.py", findings)
    assert fix_source(b"x", "m.py", []) == (b"x", [], [])


# --- safety --------------------------------------------------------------------------


def _fix_here(tmp_path, monkeypatch, name: str, data: bytes, **kw) -> tuple[bytes, FixResult]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(data)
    result = fix_paths([name], **kw)
    return (tmp_path / name).read_bytes(), result


def test_encoding_cookie_is_kept(tmp_path, monkeypatch):
    data = ('# -*- coding: latin-1 -*-\n"""Café."""\nimport torch\nname = "größe"  # été\n'
            'torch.cuda.synchronize()\nlabel = "à bientôt"\n').encode("latin-1")
    out, result = _fix_here(tmp_path, monkeypatch, "l1.py", data)
    assert result.files[0].error is None
    assert out == data.replace(b"torch.cuda.synchronize", b"torch.accelerator.synchronize")


def test_bom_is_kept(tmp_path, monkeypatch):
    data = b"\xef\xbb\xbfimport torch\nx = 'd\xc3\xa9j\xc3\xa0'; torch.cuda.synchronize()\n"
    out, _ = _fix_here(tmp_path, monkeypatch, "b.py", data)
    assert out == data.replace(b"torch.cuda.synchronize", b"torch.accelerator.synchronize")
    data = b"\xef\xbb\xbfint n = c10::cuda::device_count();\n"
    out, _ = _fix_here(tmp_path, monkeypatch, "b.cc", data)
    assert out == b"\xef\xbb\xbfint n = at::accelerator::deviceCount();\n"


def test_line_endings_are_kept(tmp_path, monkeypatch):
    data = b"from torch.cuda import synchronize\r\n\r\ndef f():\r\n    synchronize()\r\n"
    out, _ = _fix_here(tmp_path, monkeypatch, "crlf.py", data)
    assert out == b"import torch\r\n\r\ndef f():\r\n    torch.accelerator.synchronize()\r\n"
    data = b"import os\rfrom torch.cuda import synchronize\rsynchronize()\r"
    out, _ = _fix_here(tmp_path, monkeypatch, "cr.py", data)
    assert out == b"import os\rimport torch\rtorch.accelerator.synchronize()\r"


def test_file_mode_is_kept_and_no_temp_file_is_left(tmp_path, monkeypatch):
    (tmp_path / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    os.chmod(tmp_path / "x.py", 0o750)
    monkeypatch.chdir(tmp_path)
    before = os.stat("x.py").st_ino
    result = fix_paths(["."])
    assert result.files[0].changed and result.applied == 1
    assert stat.S_IMODE(os.stat("x.py").st_mode) == 0o750
    assert os.stat("x.py").st_ino != before  # a new file renamed over the old one
    assert sorted(os.listdir(tmp_path)) == ["x.py"]


def test_a_failed_rename_leaves_the_original(tmp_path, monkeypatch):
    data = b"import torch\ntorch.cuda.synchronize()\n"
    (tmp_path / "x.py").write_bytes(data)
    monkeypatch.chdir(tmp_path)

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    result = fix_paths(["x.py"])
    (fr,) = result.files
    assert fr.io_error and not fr.changed and "No space left on device" in fr.error
    assert result.applied == 0 and len(result.remaining) == 1
    assert (tmp_path / "x.py").read_bytes() == data
    assert os.listdir(tmp_path) == ["x.py"]
    rc, _, err = run_cli("fix", "x.py")
    assert rc == 2 and "x.py: error: could not write: No space left on device" in err


def test_symbolic_links_are_not_written_through(tmp_path, monkeypatch):
    legacy = b"import torch\ntorch.cuda.synchronize()\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_bytes(legacy)
    tree = tmp_path / "tree"
    (tree / "real").mkdir(parents=True)
    (tree / "real" / "r.py").write_bytes(legacy)
    os.symlink(outside / "o.py", tree / "out.py")
    os.symlink(tree / "real" / "r.py", tree / "in.py")
    os.symlink(tree / "real", tree / "in_dir")
    monkeypatch.chdir(tree)
    # named explicitly, a link is not written through
    result = fix_paths(["out.py", "in.py", "in_dir/r.py"])
    assert {fr.path: fr.error for fr in result.files} == {
        "in.py": "is a symbolic link; not written through",
        "in_dir/r.py": "is reached through the symbolic link in_dir; not written through",
        "out.py": "is a symbolic link; not written through"}
    result = fix_paths(["."])
    by_path = {fr.path: fr for fr in result.files}
    assert by_path["real/r.py"].changed
    for p in set(by_path) - {"real/r.py"}:
        assert not by_path[p].changed and "symbolic link" in by_path[p].error, p
    assert (outside / "o.py").read_bytes() == legacy
    assert os.path.islink(tree / "out.py") and os.path.islink(tree / "in.py")
    assert (tree / "real" / "r.py").read_bytes() == \
        legacy.replace(b"torch.cuda.synchronize", b"torch.accelerator.synchronize")
    rc, _, err = run_cli("fix", "out.py")
    assert rc == 1 and "out.py: not fixed: is a symbolic link; not written through" in err


def test_a_fix_that_would_break_the_file_is_not_written(tmp_path, monkeypatch):
    row = fix_mod.ROWS_BY_CODE["AD107"]
    monkeypatch.setitem(fix_mod.ROWS_BY_CODE, "AD107",
                        row._replace(template="torch.accelerator.synchronize(({device})"))
    data = b"import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n"
    out, result = _fix_here(tmp_path, monkeypatch, "x.py", data)
    assert out == data
    (fr,) = result.files
    # Python 3.9's parser reports the unclosed bracket where it gives up, a line later.
    line = 2 if sys.version_info >= (3, 10) else 3
    assert fr.error.startswith(f"the fixed file would not parse (line {line}:") and \
        fr.error.endswith("it was left as it was")
    assert not fr.changed and result.applied == 0
    assert [f.rule for f, _ in result.remaining] == ["AD107", "AD201"]


def test_a_file_that_does_not_parse_is_left_alone(tmp_path, monkeypatch):
    data = b"import torch\ntorch.cuda.synchronize()\nif x\n    pass\n"
    out, result = _fix_here(tmp_path, monkeypatch, "bad.py", data)
    assert out == data
    assert result.files[0].error.startswith("does not parse with Python ")
    rc, _, err = run_cli("fix", "bad.py")
    assert rc == 1 and "bad.py: not fixed: does not parse" in err
    data = b"import torch\ntorch.cuda.synchronize()\nx = '\xe9'\n"
    out, result = _fix_here(tmp_path, monkeypatch, "latin.py", data)
    assert out == data and "is not valid utf-8 (byte 43)" in result.files[0].error


def test_a_bug_of_the_fixer_leaves_the_file_and_the_run_goes_on(tmp_path, monkeypatch):
    data = b"import torch\ntorch.cuda.synchronize()\n"
    (tmp_path / "a.py").write_bytes(data)
    (tmp_path / "b.cc").write_bytes(b"int n = c10::cuda::device_count();\n")
    monkeypatch.chdir(tmp_path)

    def boom(*args, **kwargs):
        raise IndexError("list index out of range")

    monkeypatch.setattr(fix_engine, "_fix_python", boom)
    result = fix_paths(["."])
    errors = {fr.path: fr.error for fr in result.files}
    assert errors["a.py"].startswith("internal error of the fixer (IndexError: ")
    assert errors["b.cc"] is None and result.applied == 1
    assert (tmp_path / "a.py").read_bytes() == data


def test_hard_links_are_not_split(tmp_path, monkeypatch):
    # The file is rewritten in place (one inode), so its other name sees the fix too.
    data = b"import torch\ntorch.cuda.synchronize()\n"
    (tmp_path / "a.py").write_bytes(data)
    os.link(tmp_path / "a.py", tmp_path / "b.py")
    monkeypatch.chdir(tmp_path)
    ino = os.stat("a.py").st_ino
    result = fix_paths(["a.py"])
    assert result.files[0].error is None and result.applied == 1
    fixed = (tmp_path / "a.py").read_bytes()
    assert fixed != data and b"torch.accelerator.synchronize()" in fixed
    assert (tmp_path / "b.py").read_bytes() == fixed
    assert os.stat("a.py").st_ino == ino == os.stat("b.py").st_ino


# --- the command line -------------------------------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from torch.cuda.amp import autocast


        def step(model, x):
            with autocast(dtype=torch.float16):
                y = model(x)
            torch.cuda.synchronize()
            torch.cuda.set_device(0)
            return y
        """))
    (tmp_path / "ops.cu").write_text("void f() {\n  int n = at::cuda::device_count();\n}\n")
    return tmp_path


def _snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}


def test_cli_diff_writes_nothing(project):
    before = _snapshot(project)
    rc, out, err = run_cli("fix", "--diff")
    assert rc == 1
    assert _snapshot(project) == before
    assert out.startswith("--- a/ops.cu\n+++ b/ops.cu\n@@ -1,3 +1,3 @@\n")
    assert "-  int n = at::cuda::device_count();\n+  int n = at::accelerator::deviceCount();\n" in out
    assert "--- a/train.py\n+++ b/train.py\n" in out
    assert '+    with torch.amp.autocast("cuda", dtype=torch.float16):\n' in out
    assert "-from torch.cuda.amp import autocast\n" in out
    assert "torch.accelerator.set_device_index" not in out  # unsafe: not asked for
    assert "would fix 4 finding(s) in 2 file(s); 1 left to migrate by hand " \
           "(--unsafe-fixes applies the unsafe ones)" in err
    rc, out, _ = run_cli("fix", "--diff", "--select", "AD104")
    assert rc == 0 and out == ""  # nothing to change: an empty diff
    # a last line without a line break is marked as git marks it
    (project / "nl.py").write_bytes(b"import torch\ntorch.cuda.synchronize()")
    rc, out, _ = run_cli("fix", "--diff", "nl.py")
    assert out.endswith("+torch.accelerator.synchronize()\n\\ No newline at end of file\n")


def test_cli_exit_codes(project):
    rc, _, err = run_cli("fix")
    assert rc == 1, err  # the unsafe set_device is left
    assert "train.py: fixed 4" not in err and "train.py: fixed 3" in err and "ops.cu: fixed 1" in err
    assert "train.py:9:5: AD104 torch.cuda.set_device: not fixed: AD104's fix changes behaviour" in err
    # The API rows only (--ignore AD9): the "cuda" of torch.amp.autocast("cuda", ...),
    # which the AD313 rewrite writes, is a device literal (AD904) this fixer leaves.
    rc, _, err = run_cli("fix", "--unsafe-fixes", "--ignore", "AD9")
    assert rc == 0, err
    assert "fixed 1 finding(s) in 1 file(s); 0 left to migrate by hand" in err
    rc, _, _ = run_cli("fix", "--ignore", "AD9")
    assert rc == 0  # nothing left
    rc, _, err = run_cli("fix")
    assert rc == 1 and 'AD904 torch.amp.autocast("cuda"): not fixed' in err
    (project / "s.py").write_text("import torch\nwith torch.cuda.stream(None):\n    pass\n")
    assert run_cli("fix", "--unsafe-fixes")[0] == 1  # a row without a fix is left
    rc, _, err = run_cli("fix", "missing.py")
    assert rc == 2 and "missing.py: no such file or directory" in err
    rc, _, err = run_cli("fix", "--select", "AD09")
    assert rc == 2 and "'AD09' is not a rule code" in err
    (project / "pyproject.toml").write_text("[tool.anydev]\nselect = [\n")
    rc, _, err = run_cli("fix")
    assert rc == 2 and "not valid TOML" in err


def test_cli_select_ignore_exclude_and_config(project):
    rc, _, err = run_cli("fix", "--select", "AD6", "--diff")
    assert rc == 1 and "would fix 1 finding(s) in 1 file(s)" in err
    rc, out, err = run_cli("fix", "--ignore", "AD3,AD6", "--select", "AD1", "--diff")
    assert "ops.cu" not in out and "torch.amp" not in out and "torch.accelerator.synchronize" in out
    rc, out, _ = run_cli("fix", "--diff", "--exclude", "*.cu")
    assert "ops.cu" not in out and "train.py" in out
    (project / "pyproject.toml").write_text(
        '[tool.anydev]\nselect = ["AD1", "AD3"]\nignore = ["AD107"]\nexclude = ["ops.cu"]\n')
    rc, out, err = run_cli("fix")
    assert rc == 1
    text = (project / "train.py").read_text()
    assert 'torch.amp.autocast("cuda"' in text and "torch.cuda.synchronize()" in text
    assert "at::cuda::device_count" in (project / "ops.cu").read_text()
    assert run_cli("fix", "--no-config", "--unsafe-fixes", "--ignore", "AD9")[0] == 0
    assert "at::accelerator::deviceCount" in (project / "ops.cu").read_text()


# --- end to end ----------------------------------------------------------------------------


def _make_repo(root: Path) -> None:
    files = {
        "pyproject.toml": '[project]\nname = "demo"\n\n[tool.anydev]\nexclude = ["vendored/"]\n',
        ".gitignore": "build/\n",
        "pkg_a/__init__.py": "",
        "pkg_a/train.py": textwrap.dedent("""\
            import torch
            from torch.cuda.amp import GradScaler, autocast

            scaler = GradScaler()


            def run(model, batches, rank):
                torch.cuda.set_device(rank)
                for b in batches:
                    with autocast(dtype=torch.float16):
                        loss = model(b)
                    scaler.scale(loss).backward()
                    torch.cuda.synchronize()
                print(f"peak {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
            """),
        "pkg_a/streams.py": textwrap.dedent("""\
            import torch.cuda as tc


            def side():
                s = tc.Stream(priority=-1)
                with tc.stream(s):  # no mechanical fix
                    pass
                return s, tc.current_stream()
            """),
        "pkg_b/mem.py": "from torch import cuda\n\n\ndef free():\n    cuda.empty_cache()\n"
                        "    return cuda.memory_reserved(0)\n",
        "pkg_b/csrc/ops.cpp": textwrap.dedent("""\
            #include <ATen/cuda/CUDAContext.h>
            using c10::cuda::current_device;
            namespace cu = c10::cuda;
            void f() {
              cu::CUDAGuard guard(current_device());
              auto s = at::cuda::getCurrentCUDAStream();  // no mechanical fix
              c10::cuda::CUDACachingAllocator::emptyCache();
            }
            """),
        "build/lib/copy.py": "import torch\ntorch.cuda.synchronize()\n",
        "vendored/lib/legacy.py": "import torch\ntorch.cuda.synchronize()\n",
        "vendored/lib/legacy.cc": "int n = c10::cuda::device_count();\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=False, capture_output=True)


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    if args and args[0] == "fix" and "--target-torch" not in args:
        args = (*args, "--target-torch", "2.13")  # the newest, as this test was written for
    return subprocess.run([*ANYDEV, *args], cwd=root, capture_output=True, text=True, timeout=120)


def test_end_to_end_on_a_generated_repository(tmp_path):
    _make_repo(tmp_path)
    untouched = {p: (tmp_path / p).read_bytes() for p in
                 ("build/lib/copy.py", "vendored/lib/legacy.py", "vendored/lib/legacy.cc")}
    p = _cli(tmp_path, "scan")
    assert p.returncode == 1, p.stderr
    before = _snapshot(tmp_path)

    p = _cli(tmp_path, "fix", "--diff")
    assert p.returncode == 1, p.stderr
    assert _snapshot(tmp_path) == before
    assert "+++ b/pkg_a/train.py" in p.stdout and "+++ b/pkg_b/csrc/ops.cpp" in p.stdout
    assert "build/" not in p.stdout and "vendored/" not in p.stdout

    p = _cli(tmp_path, "fix")  # safe fixes only: the unsafe ones are left
    assert p.returncode == 1, p.stderr
    assert "(--unsafe-fixes applies the unsafe ones)" in p.stderr
    train = (tmp_path / "pkg_a/train.py").read_text()
    assert 'torch.amp.GradScaler("cuda")' in train and "torch.cuda.set_device(rank)" in train
    assert "from torch.cuda.amp" not in train

    p = _cli(tmp_path, "fix", "--unsafe-fixes")
    assert p.returncode == 1, p.stderr  # rows without a fix remain
    # the "cuda" the safe rewrites wrote (AD904) is made generic too, and said so
    assert "device literal(s) and idiom(s) (AD904)" in p.stderr
    train = (tmp_path / "pkg_a/train.py").read_text()
    assert train == textwrap.dedent("""\
        import torch

        scaler = torch.amp.GradScaler(getattr(torch.accelerator.current_accelerator(), "type", "cuda"))


        def run(model, batches, rank):
            torch.accelerator.set_device_index(rank)
            for b in batches:
                with torch.amp.autocast(getattr(torch.accelerator.current_accelerator(), "type", "cuda"), dtype=torch.float16):
                    loss = model(b)
                scaler.scale(loss).backward()
                torch.accelerator.synchronize()
            print(f"peak {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
        """)
    # the stream goes to tc.stream(s) and both streams are returned, where the fixer
    # cannot follow them (they may be used as torch.cuda.Stream): left
    streams = (tmp_path / "pkg_a/streams.py").read_text()
    assert "s = tc.Stream(priority=-1)" in streams and "tc.current_stream()" in streams
    assert (tmp_path / "pkg_b/csrc/ops.cpp").read_text() == textwrap.dedent("""\
        #include <ATen/cuda/CUDAContext.h>
        #include <ATen/DeviceAccelerator.h>
        #include <c10/core/DeviceGuard.h>
        namespace cu = c10::cuda;
        void f() {
          c10::DeviceGuard guard(c10::Device(at::accelerator::getAccelerator(true).value(), at::accelerator::getDeviceIndex()));
          auto s = at::cuda::getCurrentCUDAStream();  // no mechanical fix
          at::accelerator::emptyCache();
        }
        """)
    for path in (tmp_path / "pkg_a/train.py", tmp_path / "pkg_a/streams.py", tmp_path / "pkg_b/mem.py"):
        compile(path.read_text(), str(path), "exec")
    for rel, data in untouched.items():
        assert (tmp_path / rel).read_bytes() == data, rel

    p = _cli(tmp_path, "scan", "--format", "json")
    assert p.returncode == 1
    left = json.loads(p.stdout)["findings"]
    # The API rows without a fix (the "cuda" the autocast/GradScaler rewrites wrote,
    # AD904, was made generic by the unsafe run), the streams the fixer cannot
    # follow, and the peak memory whose value is used unguarded.
    got = sorted((f["path"], f["rule"]) for f in left)
    assert [x for x in got if x[0] != "pkg_a/streams.py"] == [
        ("pkg_a/train.py", "AD205"), ("pkg_b/csrc/ops.cpp", "AD625"), ("pkg_b/mem.py", "AD206")], got
    assert ("pkg_a/streams.py", "AD111") in got

    after = _snapshot(tmp_path)
    p = _cli(tmp_path, "fix", "--unsafe-fixes")
    assert p.returncode == 1 and "fixed 0 finding(s) in 0 file(s)" in p.stderr
    assert _snapshot(tmp_path) == after


def test_a_file_with_nothing_the_table_lets_rewrite_is_not_parsed(tmp_path, monkeypatch):
    """Note [Nothing to fix]: findings whose rows forbid a rewrite (no
    mechanical fix, an unsafe fix not asked for) are reported with the row's
    reason without a parse of the file; with --unsafe-fixes it is parsed."""
    import anydev._migrate.fix.engine as engine

    parsed = []
    real = engine._fix_python
    monkeypatch.setattr(engine, "_fix_python", lambda *a, **k: parsed.append(1) or real(*a, **k))
    data = b"import torch\ntorch.cuda.set_device(1)\nif x\n"
    out, result = _fix_here(tmp_path, monkeypatch, "odd.py", data)
    assert out == data and parsed == []
    (fr,) = result.files
    assert fr.error is None and fr.applied == []
    assert [f.rule for f, _ in fr.skipped] == ["AD104"]
    assert "apply it with --unsafe-fixes" in fr.skipped[0][1]
    out, result = _fix_here(tmp_path, monkeypatch, "odd.py", data, unsafe=True)
    assert parsed == [1] and result.files[0].error.startswith("does not parse")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fixes in processes on Linux")
def test_many_files_fixed_in_processes_give_what_one_process_gives(tmp_path, monkeypatch):
    """Note [Fixing in processes]: the files, their order, the rewrites, the
    reasons and the errors are the same with jobs=3 (forked processes) as
    with jobs=1, byte for byte, for a diff and for the written files."""
    import anydev._migrate.fix.engine as engine

    monkeypatch.setattr(engine, "_FILES_PER_PROCESS", 2)
    used = []
    real = engine._fix_in_processes
    monkeypatch.setattr(engine, "_fix_in_processes",
                        lambda *a: used.append(a[-1]) or real(*a))
    sources = [b"import torch\ntorch.cuda.synchronize()\nx = torch.cuda.current_device()\n",
               b"import torch\nwith torch.cuda.device(1):\n    torch.cuda.set_device(0)\n",
               b"import torch\ntorch.cuda.synchronize()\nif x\n",  # does not parse
               b"import torch\nd = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
               b"import torch.cuda\nfrom torch.cuda import synchronize\nsynchronize()\n"]
    for tree in ("one", "many"):
        for i in range(11):
            p = tmp_path / tree / f"pkg{i % 3}" / f"m{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(sources[i % len(sources)])
    monkeypatch.chdir(tmp_path)

    def summary(r):
        return ([(fr.path.split("/", 1)[1], fr.error, fr.changed,
                  [(f.rule, f.start) for f in fr.applied],
                  [(f.rule, f.start, why) for f, why in fr.skipped]) for fr in r.files],
                r.diff.replace("one/", "X/").replace("many/", "X/"))

    for unsafe in (False, True):
        a = fix_paths(["one"], diff=True, unsafe=unsafe, jobs=1)
        b = fix_paths(["many"], diff=True, unsafe=unsafe, jobs=3)
        assert summary(a) == summary(b) and a.diff
    assert used == [3, 3]
    a = fix_paths(["one"], unsafe=True, jobs=1)
    b = fix_paths(["many"], unsafe=True, jobs=3)
    assert summary(a)[0] == summary(b)[0] and used == [3, 3, 3]
    for p in (tmp_path / "one").rglob("*.py"):
        assert p.read_bytes() == (tmp_path / "many" / p.relative_to(tmp_path / "one")).read_bytes()
    assert sum(fr.error is not None for fr in b.files) == 2  # the two that do not parse


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fixes in processes on Linux")
def test_a_process_of_the_fix_that_dies_leaves_the_fix_to_this_one(tmp_path, monkeypatch):
    import anydev._migrate.fix.engine as engine

    monkeypatch.setattr(engine, "_FILES_PER_PROCESS", 1)
    parent = os.getpid()
    real = engine._fix_one
    monkeypatch.setattr(engine, "_fix_one",
                        lambda *a: os._exit(3) if os.getpid() != parent else real(*a))
    for i in range(4):
        (tmp_path / f"m{i}.py").write_bytes(b"import torch\ntorch.cuda.synchronize()\n")
    monkeypatch.chdir(tmp_path)
    r = fix_paths(["."], jobs=2)
    assert r.applied == 4 and all(fr.changed and fr.error is None for fr in r.files)
    assert (tmp_path / "m3.py").read_bytes() == b"import torch\ntorch.accelerator.synchronize()\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fixes in processes on Linux")
def test_fix_paths_in_two_threads_at_once_gives_each_its_own_results(tmp_path, monkeypatch):
    import threading

    import anydev._migrate.fix.engine as engine

    monkeypatch.setattr(engine, "_FILES_PER_PROCESS", 1)
    for tree, call in (("a", b"synchronize"), ("b", b"empty_cache")):
        for i in range(6):
            p = tmp_path / tree / f"m{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"import torch\ntorch.cuda." + call + b"()\n")
    monkeypatch.chdir(tmp_path)
    out: dict = {}
    threads = [threading.Thread(target=lambda t=t: out.__setitem__(t, fix_paths(
        [t], diff=True, unsafe=True, jobs=2))) for t in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out["a"].diff.count("+torch.accelerator.synchronize()") == 6
    # (written with its guard: Note [Guarded calls])
    assert out["b"].diff.count("+    torch.accelerator.empty_cache()") == 6
    assert "empty_cache" not in out["a"].diff and "synchronize" not in out["b"].diff


def test_a_removed_using_keeps_a_comment_that_continues_onto_the_next_line():
    # `// ... \` splices the next line into the comment: dropping the whole line would
    # make that line code (found by fuzz/fix_fuzz.py)
    src = ("#include <c10/cuda/CUDAFunctions.h>\n"
           "using c10::cuda::set_device;  // a comment that goes on \\\n"
           "   c10::cuda::device_synchronize()\n"
           "void f(int d) { set_device(d); }\n")
    findings, _ = scan_source(src.encode(), "k.cpp")
    new, applied, _ = fix_source(src.encode(), "k.cpp", findings, unsafe=True)
    text = new.decode()
    assert "using c10::cuda::set_device" not in text
    assert "// a comment that goes on \\\n   c10::cuda::device_synchronize()\n" in text
    again, _ = scan_source(new, "k.cpp")
    assert fix_source(new, "k.cpp", again, unsafe=True)[0] == new
