"""The static scanner: fixtures with expected findings (tests/fixtures/scan, see
tests/fixtures/README.md), the Python API, and `anydev scan` / `anydev rule`
end to end. Pairs with tests/cpp/scan_test.cc (the lexers on small inputs).

Regenerate the expected files after a deliberate change with
``ANYDEV_UPDATE_FIXTURES=1 pytest tests/python/scan/test_scan.py -k fixture`` and
review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from anydev._compat import table as _compat_table
from anydev._cli import scan as _scan_cli
from anydev._migrate import formats as _formats, rules as _rules
from anydev.scan import Finding, ScanError, ScanResult, language_of, rule_filter, scan_paths, \
    scan_source

from conftest import run_cli, run_command

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "scan"
SOURCES = sorted(p for p in FIXTURES.iterdir()
                 if language_of(p.name) and not p.name.endswith(".expected.json"))
UPDATE = os.environ.get("ANYDEV_UPDATE_FIXTURES") == "1"
ANYDEV = [sys.executable, "-m", "anydev"]


# --- fixtures ----------------------------------------------------------------------


def _expected_path(src: Path) -> Path:
    return src.with_name(src.name.rsplit(".", 1)[0] + ".expected.json")


def _actual(src: Path) -> dict:
    findings, errors = scan_source(src.read_bytes(), src.name)
    return {
        "findings": [{"line": f.line, "column": f.column, "end_line": f.end_line,
                      "end_column": f.end_column, "rule": f.rule, "symbol": f.symbol,
                      "kind": f.kind, "text": f.text} for f in findings],
        "errors": [{"line": e.line, "message": e.message} for e in errors],
    }


def _dump(doc: dict) -> str:
    # One finding per line, for readable diffs.
    def block(items):
        if not items:
            return "[]"
        return "[\n" + ",\n".join("  " + json.dumps(i, ensure_ascii=False) for i in items) + "\n ]"
    return '{"findings": ' + block(doc["findings"]) + ',\n "errors": ' + block(doc["errors"]) + "}\n"


def test_fixture_stems_are_unique():
    stems = [p.name.rsplit(".", 1)[0] for p in SOURCES]
    assert len(stems) == len(set(stems))
    assert len(SOURCES) >= 25


@pytest.mark.parametrize("src", SOURCES, ids=[p.name for p in SOURCES])
def test_fixture(src: Path):
    actual = _actual(src)
    expected_file = _expected_path(src)
    if UPDATE:
        expected_file.write_text(_dump(actual), encoding="utf-8")
    assert expected_file.exists(), f"{expected_file.name} is missing (ANYDEV_UPDATE_FIXTURES=1)"
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    assert actual == expected


@pytest.mark.parametrize("src", SOURCES, ids=[p.name for p in SOURCES])
def test_fixture_offsets(src: Path):
    """start/end/text/call_end agree with the bytes, for the fixer."""
    data = src.read_bytes()
    findings, _ = scan_source(data, src.name)
    for f in findings:
        assert data[f.start:f.end].decode("utf-8", "replace") == f.text
        assert f.language == language_of(src.name)
        if f.kind == "call":
            assert f.call_end is not None and data[f.call_end - 1:f.call_end] == b")"
            assert data[f.end:f.call_end].lstrip().startswith(b"(")
        else:
            assert f.call_end is None


def test_every_deprecated_row_has_a_fixture_finding():
    found = set()
    for src in SOURCES:
        found |= {f["rule"] for f in json.loads(_expected_path(src).read_text())["findings"]}
    deprecated = {r.code for r in _compat_table.ROWS if r.status == "deprecated"}
    assert deprecated - found == set()
    kept = {r.code for r in _compat_table.ROWS if r.status == "kept"}
    assert found & kept == set()


def test_also_spellings_are_found():
    findings, _ = scan_source((FIXTURES / "rows_cpp.cc").read_bytes(), "rows_cpp.cc")
    symbols = {f.symbol for f in findings}
    assert any(s.startswith("at::cuda::") for s in symbols)
    assert any(s.startswith("c10::cuda::") for s in symbols)


def test_scan_paths_agrees_with_scan_source(monkeypatch):
    monkeypatch.chdir(FIXTURES)
    result = scan_paths(["."], jobs=2)
    assert result.files == len(SOURCES)  # read; binary.py is then reported, not lexed
    by_file: dict = {}
    for f in result.findings:
        by_file.setdefault(f.path, []).append(f)
    for src in SOURCES:
        one, _ = scan_source(src.read_bytes(), src.name)
        assert by_file.get(src.name, []) == one, src.name
    assert {e.path for e in result.errors} >= {"binary.py", "syntax_error.py", "latin1.cc"}


# --- the Python API ----------------------------------------------------------------


def test_scan_source_api():
    findings, errors = scan_source("from torch.cuda import current_device as cd\ncd()\n", "m.py")
    assert errors == []
    imp, call = findings
    assert isinstance(call, Finding)
    assert (call.path, call.line, call.column, call.end_line, call.end_column) == ("m.py", 2, 1, 2, 3)
    assert call.symbol == "torch.cuda.current_device"
    assert call.replacement == "torch.accelerator.current_device_index"
    assert (call.rule, call.fix, call.kind, call.text, call.language) == \
        ("AD103", "safe", "call", "cd", "python")
    assert (call.start, call.end, call.call_end) == (44, 46, 48)
    assert "torch.accelerator.current_device_index" in call.message
    assert imp.kind == "import" and imp.text == "current_device"
    with pytest.raises(Exception):
        call.line = 3  # frozen
    assert call == scan_source("from torch.cuda import current_device as cd\ncd()\n", "m.py")[0][1]
    with pytest.raises(ValueError):
        scan_source("x", "README.md")
    findings, _ = scan_source(b"int n = at::cuda::device_count();", "x", language="cpp")
    assert findings[0].symbol == "at::cuda::device_count"


def test_rule_filter():
    keep = rule_filter(["AD1"], ["AD103"])
    assert keep("AD101") and not keep("AD103") and not keep("AD201")
    keep = rule_filter(["AD103"], ["AD1"])  # the more specific entry wins
    assert keep("AD103") and not keep("AD101")
    keep = rule_filter(None, "AD2,AD6")
    assert keep("AD101") and not keep("AD201") and not keep("AD601")
    assert rule_filter(["ALL"], ["AD1"])("AD201")
    with pytest.raises(ValueError, match="AD999"):
        rule_filter(["AD999"])


def test_rule_filter_walks_each_entry_once():
    # `select = ["AD1", "AD1", ...]` 100,000 long made each of the ~300 rules walk
    # every entry at the start of a scan (30 s for 1,000,000 entries): repeats are one.
    from anydev._migrate.scan_table import NATIVE
    from anydev.scan import _prefixes

    codes = [t[0] for t in NATIVE]
    assert _prefixes(["AD1"] * 100_000 + ["ad1, AD1", "AD2"], codes, "select") == ["AD1", "AD2"]
    keep = rule_filter(["AD1"] * 100_000, ["AD103"] * 100_000)
    assert keep("AD101") and not keep("AD103") and not keep("AD201")


def test_scan_paths_select_ignore_and_result(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n")
    r = scan_paths(["."], select=["AD2"])
    assert isinstance(r, ScanResult) and r.files == 1 and r.bytes == 63
    assert [f.rule for f in r.findings] == ["AD201"]
    assert [f.rule for f in scan_paths(["a.py"], ignore=["AD201"]).findings] == ["AD107"]
    # Absolute paths under the current directory come back relative.
    assert scan_paths([str(tmp_path)]).findings[0].path == "a.py"


def test_errors_do_not_stop_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_bad.py").write_text("import torch\ntorch.cuda.synchronize()\nx = '''\n")
    (tmp_path / "b_bin.py").write_bytes(b"\x00\x01")
    (tmp_path / "c_big.py").write_text("import torch\n" + "#" * 2000 + "\n")
    (tmp_path / "d_ok.py").write_text("import torch\ntorch.cuda.empty_cache()\n")
    r = scan_paths(["."], max_file_size=1000)
    assert [(f.path, f.rule) for f in r.findings] == [("a_bad.py", "AD107"), ("d_ok.py", "AD201")]
    errors = {e.path: e for e in r.errors}
    assert isinstance(errors["a_bad.py"], ScanError) and errors["a_bad.py"].line == 3
    assert "unterminated triple-quoted" in errors["a_bad.py"].message
    assert "binary" in errors["b_bin.py"].message
    assert "over the limit" in errors["c_big.py"].message and errors["c_big.py"].line is None


def test_gitignore_and_excludes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = "import torch\ntorch.cuda.synchronize()\n"
    for rel in ["keep.py", "gen/out.py", "gen/keep_me.py", "sub/build/x.py", "sub/build.py",
                "sub/a/deep.pyi", "docs/x/y/z.py", "vendor/v.py", "top.py", "sub/top.py",
                "local.py", "sub/nested/n.py", ".venv/lib/t.py", "node_modules/m.py",
                "notes.txt"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("local.py\n")
    (tmp_path / ".gitignore").write_text(
        "# generated\ngen/*\n!gen/keep_me.py\nbuild/\n/top.py\ndocs/**/z.py\n")
    (tmp_path / "sub" / ".gitignore").write_text("nested/\n!build.py\n")
    files = lambda **kw: sorted(f.path for f in scan_paths(["."], **kw).findings)  # noqa: E731
    assert files() == ["gen/keep_me.py", "keep.py", "sub/a/deep.pyi", "sub/build.py",
                       "sub/top.py", "vendor/v.py"]
    assert files(exclude=["vendor"]) == ["gen/keep_me.py", "keep.py", "sub/a/deep.pyi",
                                         "sub/build.py", "sub/top.py"]
    assert "sub/a/deep.pyi" not in files(exclude=["sub/a/*.pyi"])
    everything = files(respect_gitignore=False)
    assert "gen/out.py" in everything and "local.py" in everything
    assert ".venv/lib/t.py" not in everything and "node_modules/m.py" not in everything
    # A sub-folder scan still honours the .gitignore files above it.
    assert sorted(f.path for f in scan_paths(["sub"]).findings) == \
        ["sub/a/deep.pyi", "sub/build.py", "sub/top.py"]
    # A file named explicitly is scanned even if ignored, unless excluded.
    assert [f.path for f in scan_paths(["gen/out.py"]).findings] == ["gen/out.py"]
    assert scan_paths(["vendor/v.py"], exclude=["vendor/"]).findings == []


def test_symlinks(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    tree = tmp_path / "tree"
    (tree / "real").mkdir(parents=True)
    (tree / "real" / "r.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    os.symlink(outside, tree / "out_link")
    os.symlink(tree / "real", tree / "in_link")
    os.symlink(tree, tree / "real" / "loop")
    monkeypatch.chdir(tree)
    assert sorted(f.path for f in scan_paths(["."]).findings) == ["in_link/r.py", "real/r.py"]


def test_jobs_do_not_change_the_result(monkeypatch):
    monkeypatch.chdir(FIXTURES)
    assert scan_paths(["."], jobs=1) == scan_paths(["."], jobs=4)


# --- the CLI, in process --------------------------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with one Python and one C++ file holding findings."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from torch.cuda.amp import autocast

        def step(model, x):
            with autocast():
                y = model(x)
            torch.cuda.synchronize()
            return y, torch.cuda.current_device()
        """))
    (tmp_path / "ops.cu").write_text("void f() {\n  auto s = at::cuda::getCurrentCUDAStream();\n}\n")
    return tmp_path


def test_cli_text(project):
    rc, out, err = run_cli("scan")
    assert rc == 1, err
    lines = out.splitlines()
    assert lines[0] == "ops.cu:2:12: AD625 `at::cuda::getCurrentCUDAStream` is device-specific; " \
                       "use `at::accelerator::getCurrentStream` (torch >= 2.6)"
    # no torch declared: every release the table knows is the target, and 1.13 lacks
    # two of the replacements; the summary says what a newer target would fix
    assert "train.py:7:5: AD107 `torch.cuda.synchronize` is device-specific" in out
    assert lines[-1] == ("Found 5 legacy references in 2 files (2 fixable with `anydev fix`, "
                         "2 more with a newer "
                         "`--target-torch`). Target torch: 1.13, from the default: every "
                         "release the table knows.")
    rc, out, err = run_cli("scan", "--target-torch", "2.13")
    assert "train.py:7:5: AD107 [*] `torch.cuda.synchronize` is device-specific" in out
    assert out.splitlines()[-1] == ("Found 5 legacy references in 2 files (4 fixable with "
                                    "`anydev fix`).")


def test_cli_exit_codes(project, tmp_path):
    assert run_cli("scan", "--select", "AD09")[0] == 2
    rc, out, err = run_cli("scan", "--select", "AD4")
    assert rc == 0 and "No legacy references found (2 files scanned)." in out
    rc, _, err = run_cli("scan", "missing.py")
    assert rc == 2 and "missing.py: no such file or directory" in err
    rc, _, err = run_cli("scan", "--output", str(tmp_path / "no" / "such" / "dir.json"))
    assert rc == 2 and "cannot write" in err
    (project / "bad.py").write_text("import torch\nx = '\ntorch.cuda.synchronize()\n")
    rc, _, err = run_cli("scan", "bad.py")
    # the rest of the file went unscanned: an error, and the run fails (issue 14)
    assert rc == 1 and "bad.py:2: error: unterminated string literal" in err


def test_cli_json(project):
    rc, out, _ = run_cli("scan", "--format", "json")
    assert rc == 1
    doc = json.loads(out)
    assert doc["version"] == 1 and doc["errors"] == []
    assert [f["rule"] for f in doc["findings"]] == ["AD625", "AD313", "AD313", "AD107", "AD103"]
    assert set(doc["findings"][0]) == {"path", "line", "column", "end_line", "end_column",
                                       "symbol", "replacement", "rule", "fix", "message",
                                       "kind", "usage", "url"}
    assert doc["findings"][1] == {
        "path": "train.py", "line": 2, "column": 28, "end_line": 2, "end_column": 36,
        "symbol": "torch.cuda.amp.autocast", "replacement": "torch.amp.autocast",
        "rule": "AD313", "fix": "safe",
        "message": "`torch.cuda.amp.autocast` is deprecated; use `torch.amp.autocast`",
        "kind": "import", "usage": "import",
        "url": "https://github.com/anydev/anydev/blob/main/docs/rules.md#ad313"}


def test_cli_output_is_written_atomically(project):
    rc, out, _ = run_cli("scan", "--format", "json", "--output", "report.json")
    assert rc == 1 and out == ""
    assert len(json.loads((project / "report.json").read_text())["findings"]) == 5
    assert not [p for p in os.listdir(project) if p.startswith(".anydev-")]
    assert run_cli("scan", "--format", "json", "--output", os.devnull)[0] == 1
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


def test_cli_sarif(project):
    rc, out, _ = run_cli("scan", "--format", "sarif")
    assert rc == 1
    doc = json.loads(out)
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "anydev" and driver["version"]
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    # every rule that can be a finding by default (not kept rows, not opt-in hints)
    reported = [r.code for r in _compat_table.ROWS if r.status != "kept" and not r.opt_in]
    assert ids == reported
    for r in rules:
        assert r["name"] and r["shortDescription"]["text"] and r["help"]["text"]
        assert r["defaultConfiguration"]["level"] == "warning"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///")
    assert run["columnKind"] == "unicodeCodePoints"
    assert len(run["results"]) == 5
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] == "warning" and res["message"]["text"]
        (loc,) = res["locations"]
        art = loc["physicalLocation"]["artifactLocation"]
        assert art["uriBaseId"] == "%SRCROOT%" and not art["uri"].startswith("/")
        region = loc["physicalLocation"]["region"]
        assert set(region) == {"startLine", "startColumn", "endLine", "endColumn"}
        assert len(res["partialFingerprints"]["anydevFingerprint/v1"]) == 32
    assert run["invocations"][0]["executionSuccessful"] is True
    # Fingerprints do not change when lines move.
    before = {r["partialFingerprints"]["anydevFingerprint/v1"] for r in run["results"]}
    text = (project / "train.py").read_text()
    (project / "train.py").write_text("# a new first line\n\n" + text)
    after = json.loads(run_cli("scan", "--format", "sarif")[1])["runs"][0]["results"]
    assert {r["partialFingerprints"]["anydevFingerprint/v1"] for r in after} == before
    # --select narrows the rules too.
    doc = json.loads(run_cli("scan", "--format", "sarif", "--select", "AD6")[1])
    assert all(r["id"].startswith("AD6") for r in doc["runs"][0]["tool"]["driver"]["rules"])


def test_cli_github(project):
    (project / "odd, name.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    rc, out, _ = run_cli("scan", "--format", "github")
    assert rc == 1
    lines = out.splitlines()
    assert ("::warning file=ops.cu,line=2,col=12,endLine=2,endColumn=42,title=AD625::"
            "`at::cuda::getCurrentCUDAStream` is device-specific; use "
            "`at::accelerator::getCurrentStream` (torch >= 2.6)") in lines
    assert lines[0].startswith("::warning file=odd%2C name.py,line=2,col=1,endLine=2,")
    assert len(lines) == 6


def test_cli_statistics(project):
    rc, out, _ = run_cli("scan", "--statistics")
    assert rc == 1
    assert "Legacy references by rule:" in out and "Legacy references by symbol:" in out
    assert "  2  AD313  safe    torch.cuda.amp.autocast -> torch.amp.autocast" in out
    assert "  1  at::cuda::getCurrentCUDAStream" in out
    assert "By kind: 4 calls, 0 references, 1 imports, 0 literals, 0 idioms." in out
    # with --format json the statistics are the JSON document on stdout (issue 32)
    rc, out, err = run_cli("scan", "--statistics", "--format", "json")
    doc = json.loads(out)
    assert doc["version"] == 1 and doc["findings"] == 5 and err == ""
    rc, out, err = run_cli("scan", "--statistics", "--format", "sarif")
    assert json.loads(out)["version"] == "2.1.0" and "Legacy references by rule:" in err


def test_cli_select_ignore_exclude(project):
    def rules(*args):
        return [f["rule"] for f in json.loads(run_cli("scan", "--format", "json", *args)[1])["findings"]]
    assert rules("--select", "AD1,AD6") == ["AD625", "AD107", "AD103"]
    assert rules("--select", "AD1", "--select", "AD6") == ["AD625", "AD107", "AD103"]
    assert rules("--ignore", "AD3", "--ignore", "AD625") == ["AD107", "AD103"]
    assert rules("--select", "AD103", "--ignore", "AD1") == ["AD103"]
    assert rules("--exclude", "*.cu") == ["AD313", "AD313", "AD107", "AD103"]
    assert rules("--exclude", "*.cu", "--exclude", "train.py") == []


def test_cli_suppressions(project):
    (project / "train.py").write_text(
        "import torch\ntorch.cuda.synchronize()  # anydev: ignore[AD107]\n"
        "torch.cuda.empty_cache()  # anydev: ignore\ntorch.cuda.seed()  # anydev: ignore[AD2]\n")
    (project / "ops.cu").write_text("auto s = at::cuda::getCurrentCUDAStream();  // anydev: ignore[AD6]\n")
    rc, out, _ = run_cli("scan", "--format", "json")
    assert rc == 1
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["AD303"]


def test_cli_baseline_round_trip(project):
    rc, _, err = run_cli("scan", "--write-baseline", "baseline.json")
    assert rc == 0 and "wrote 5 finding(s)" in err
    doc = json.loads((project / "baseline.json").read_text())
    assert doc["version"] == 1 and len(doc["findings"]) == 5
    assert run_cli("scan", "--baseline", "baseline.json") [0] == 0
    # An edit elsewhere in the file keeps the baseline valid.
    text = (project / "train.py").read_text()
    text = "import os\n\n\n" + text.replace("def step", "def helper():\n    return 1\n\n\ndef step")
    (project / "train.py").write_text(text)
    rc, out, _ = run_cli("scan", "--baseline", "baseline.json")
    assert rc == 0, out
    # A new finding is reported, alone; a second copy of a known line too.
    (project / "train.py").write_text(text + "torch.cuda.empty_cache()\ntorch.cuda.synchronize()\n")
    rc, out, _ = run_cli("scan", "--baseline", "baseline.json", "--format", "json")
    assert rc == 1
    assert [(f["rule"], f["line"]) for f in json.loads(out)["findings"]] == \
        [("AD201", 16), ("AD107", 17)]
    # Paths in the baseline are relative to its folder: another cwd works.
    os.mkdir(project / "elsewhere")
    os.chdir(project / "elsewhere")
    rc, out, _ = run_cli("scan", "--baseline", "../baseline.json", "--format", "json", "..")
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["AD201", "AD107"]
    os.chdir(project)
    (project / "broken.json").write_text("{}")
    rc, _, err = run_cli("scan", "--baseline", "broken.json")
    assert rc == 2 and "not an anydev baseline" in err
    rc, _, err = run_cli("scan", "--baseline", "nope.json")
    assert rc == 2 and "baseline not found" in err


def test_cli_pyproject_defaults(project):
    (project / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "x"

        [tool.anydev]
        legacy = "warn"
        select = ["AD1", "AD3", "AD6"]
        ignore = ["AD103"]
        exclude = ["*.cu"]

        [[tool.anydev.legacy-override]]
        module = "x.*"
        policy = "error"
        """))
    rc, out, err = run_cli("scan", "--format", "json")
    assert rc == 1, err
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["AD313", "AD313", "AD107"]
    # The command line overrides select and adds to ignore and exclude.
    rc, out, _ = run_cli("scan", "--format", "json", "--select", "AD6,AD1", "--ignore", "AD107")
    assert [f["rule"] for f in json.loads(out)["findings"]] == []
    # From a sub-folder the same pyproject.toml applies, its excludes relative to it.
    (project / "sub").mkdir()
    shutil.copy(project / "ops.cu", project / "sub" / "more.cu")
    os.chdir(project / "sub")
    rc, out, _ = run_cli("scan", "--format", "json", "..")
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["AD313", "AD313", "AD107"]
    os.chdir(project)
    assert run_cli("scan", "--no-config", "--format", "json")[0] == 1
    # An unknown key is a warning; the run goes on (docs/configuration.md).
    with open(project / "pyproject.toml", "a") as f:
        f.write('\n[tool.anydev.extra]\n')
    rc, _, err = run_cli("scan")
    assert rc == 1 and "pyproject.toml: [tool.anydev]: unknown key 'extra'" in err


@pytest.mark.parametrize("body, message", [
    ('select = ["AD09"]', "'AD09' is not a rule code"),
    ("ignore = [1, 2]", "`ignore` must be a list of strings"),
    ("exclude = 3", "`exclude` must be a list of strings"),
    ("baseline = 3", "`baseline` must be a path"),
    ("select = [", "not valid TOML"),
])
def test_cli_bad_config(project, body, message):
    (project / "pyproject.toml").write_text(f"[tool.anydev]\n{body}\n")
    rc, out, err = run_cli("scan")
    assert rc == 2, (out, err)
    assert str(project / "pyproject.toml") in err and message in err


def test_cli_config_baseline(project):
    assert run_cli("scan", "--write-baseline", "anydev-baseline.json")[0] == 0
    (project / "pyproject.toml").write_text('[tool.anydev]\nbaseline = "anydev-baseline.json"\n')
    assert run_cli("scan")[0] == 0
    (project / "train.py").write_text("import torch\ntorch.cuda.seed()\n")
    rc, out, _ = run_cli("scan")
    assert rc == 1 and "AD303" in out


def test_rule_command():
    rc, out, _ = run_cli("rule", "AD313")
    assert rc == 0
    assert out.startswith("AD313: torch.cuda.amp.autocast\n")
    assert "replacement:    torch.amp.autocast" in out
    assert "fix:            safe" in out
    assert "with torch.cuda.amp.autocast():" in out
    assert 'with torch.amp.autocast("cuda"):' in out
    assert 'with torch.amp.autocast("cuda", enabled=enabled):' in out
    rc, out, _ = run_cli("rule", "ad625")
    assert rc == 0
    assert "spellings:      c10::cuda::getCurrentCUDAStream, at::cuda::getCurrentCUDAStream" in out
    assert "after (by hand):" in out
    rc, out, _ = run_cli("rule", "AD109")
    assert rc == 0 and "status:         kept" in out and "Example" not in out
    rc, out, _ = run_cli("rule", "AD315")
    assert '@torch.amp.custom_fwd(device_type="cuda")' in out
    rc, _, err = run_cli("rule", "AD999")
    assert rc == 2 and "unknown rule code" in err
    rc, out, _ = run_cli("rule", "--all")
    from anydev._migrate import meta_rules as _meta  # anydev's own rules (AD001) first

    assert rc == 0 and len(out.splitlines()) == len(_compat_table.ROWS) + len(_meta.ROWS_BY_CODE)
    rc, out, _ = run_cli("rule", "AD104", "--format", "json")
    doc = json.loads(out)
    assert doc["example"] == {"before": ["torch.cuda.set_device(device)"],
                              "after": ["torch.accelerator.set_device_index(device)"]}


@pytest.mark.parametrize("row", [r for r in _compat_table.ROWS if r.status == "deprecated"],
                         ids=lambda r: r.code)
def test_rule_examples_use_the_row(row):
    before, after = _rules.examples(row)
    assert before and len(before) == len(after)
    assert all(row.legacy in b for b in before)
    if row.replacement:
        assert all(row.replacement in a for a in after)


# --- end to end -------------------------------------------------------------------------


def _make_repo(root: Path) -> None:
    files = {
        "pyproject.toml": '[project]\nname = "demo"\n\n[tool.anydev]\nexclude = ["third_party/"]\n',
        ".gitignore": "build/\n*.gen.py\n",
        "demo/__init__.py": '"""Demo package: torch.cuda.synchronize() is mentioned, not called."""\n',
        "demo/train.py": textwrap.dedent("""\
            import torch
            import torch.cuda as tc
            from torch.cuda.amp import GradScaler

            scaler = GradScaler()


            def run(model, batches):
                torch.cuda.set_device(0)
                for b in batches:
                    loss = model(b.cuda())
                    tc.synchronize()
                print(f"peak {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")
            """),
        "demo/utils/mem.py": "from torch import cuda\n\n\ndef free():\n    cuda.empty_cache()  # anydev: ignore[AD201]\n    return cuda.memory_reserved()\n",
        "demo/utils/table.gen.py": "import torch\ntorch.cuda.synchronize()\n",
        "csrc/ops.cpp": textwrap.dedent("""\
            #include <ATen/cuda/CUDAContext.h>
            namespace cu = c10::cuda;
            void f() {
              cu::CUDAGuard guard(0);
              auto s = at::cuda::getCurrentCUDAStream();
            #if 0
              c10::cuda::device_synchronize();
            #endif
            }
            """),
        "third_party/lib/legacy.py": "import torch\ntorch.cuda.synchronize()\n",
        "build/lib/copy.py": "import torch\ntorch.cuda.synchronize()\n",
        "README.md": "torch.cuda.synchronize()\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=False, capture_output=True)


def test_end_to_end_on_a_generated_repository(tmp_path):
    _make_repo(tmp_path)
    cmd = [*ANYDEV, "scan", "--format", "json"]
    p = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    got = [(f["path"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
    assert got == [
        ("csrc/ops.cpp", 4, "AD627"),
        ("csrc/ops.cpp", 5, "AD625"),
        ("demo/train.py", 3, "AD314"),
        ("demo/train.py", 5, "AD314"),
        ("demo/train.py", 9, "AD104"),
        ("demo/train.py", 11, "AD907"),
        ("demo/train.py", 12, "AD107"),
        ("demo/train.py", 13, "AD205"),
        ("demo/utils/mem.py", 6, "AD206"),
    ]
    # SARIF to a file, then the baseline workflow, with the installed command line.
    rc, _, err = run_command([*ANYDEV, "scan", "--format", "sarif", "-o", str(tmp_path / "r.sarif"),
                              str(tmp_path / "demo")])
    assert rc == 1, err
    assert len(json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"]) == 7
    p = subprocess.run([*ANYDEV, "scan", "--write-baseline", "base.json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([*ANYDEV, "scan", "--baseline", "base.json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "No legacy references found" in p.stdout


def test_json_report_of_many_findings_is_one_finding_a_line(tmp_path):
    """The JSON report is written in chunks of many findings (one chunk per
    finding cost more than its text); the bytes are what one finding a line
    gives, across chunk boundaries."""
    src = "import torch\n" + "torch.cuda.synchronize()\n" * 5000
    findings, _ = scan_source(src, "m.py")
    text = "".join(_formats.render_json(findings, []))
    lines = text.split("\n")
    assert lines[:2] == ['{"version": 1,', ' "findings": [']
    assert len(lines) == 5000 + 5 and lines[-3:] == [" ],", ' "errors": []}', ""]
    assert all(line.startswith('  {"path": "m.py", "line": ') and line.endswith("},")
               for line in lines[2:5001]) and lines[5001].endswith("}")
    assert [f["line"] for f in json.loads(text)["findings"]] == list(range(2, 5002))
    empty = "".join(_formats.render_json([], []))
    assert empty == '{"version": 1,\n "findings": [],\n "errors": []}\n'
