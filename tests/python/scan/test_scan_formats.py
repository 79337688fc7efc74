"""The outputs CI systems read (issue 32): the JSON report against its JSON
Schema (docs/scan-report.schema.json) with each finding's kind and, with
--show-fixes, the fix's edits (equal to what `anydev fix` writes for that
finding); JSON Lines; the statistics as JSON (docs/scan-statistics.schema.json);
GitLab Code Quality; JUnit XML; ruff's concise and full text; SARIF rules with
helpUri, and docs/rules.md, the page they link to. Each from a real
`anydev scan` run on a small project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import run_cli

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[3]
REPORT_SCHEMA = json.loads((ROOT / "docs" / "scan-report.schema.json").read_text())
STATS_SCHEMA = json.loads((ROOT / "docs" / "scan-statistics.schema.json").read_text())

TRAIN = textwrap.dedent("""\
    import torch
    from torch.cuda import current_device
    from unittest import mock


    def step(x):
        torch.cuda.synchronize()
        d = current_device()
        y = x.to("cuda")
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        with mock.patch("torch.cuda.empty_cache"):
            pass
        t = torch.cuda.BoolTensor([True])
        return torch.cuda.get_rng_state(), y, d, dev, t
    """)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(TRAIN)
    # the project declares its torch: the fixer's target (undeclared, it is the
    # oldest release the table knows, which has few of these rewrites)
    (tmp_path / "requirements.txt").write_text("torch>=2.13\n")
    (tmp_path / "ops.cu").write_text("#include <c10/cuda/CUDAStream.h>\n"
                                     "auto s = at::cuda::getCurrentCUDAStream();\n")
    (tmp_path / "bad.py").write_text("import torch\nx = '\ntorch.cuda.synchronize()\n")
    return tmp_path


def scan(*argv: str) -> tuple[int, str, str]:
    rc, out, err = run_cli("scan", *argv)
    assert rc in (0, 1), err
    return rc, out, err


def validate(doc, schema) -> None:
    jsonschema.validate(doc, schema, format_checker=jsonschema.FormatChecker())


def test_json_report_has_kinds_and_validates(project):
    rc, out, _ = scan("--format", "json")
    doc = json.loads(out)
    validate(doc, REPORT_SCHEMA)
    kinds = {(f["rule"], f["kind"], f["usage"]) for f in doc["findings"]}
    assert ("AD107", "api", "call") in kinds
    assert ("AD103", "import", "import") in kinds
    assert ("AD903", "literal", "literal") in kinds
    assert ("AD905", "idiom", "idiom") in kinds
    assert ("AD201", "mock", "mock") in kinds
    assert all(f["url"].endswith("docs/rules.md#" + f["rule"].lower()) for f in doc["findings"])
    assert [e["kind"] for e in doc["errors"]] == ["unscanned"]
    assert "edits" not in doc["findings"][0]
    # an object that breaks the schema is refused by it: the test can fail
    doc["findings"][0]["kind"] = "call"
    with pytest.raises(jsonschema.ValidationError):
        validate(doc, REPORT_SCHEMA)


def test_edits_are_what_anydev_fix_writes_for_each_finding(project):
    from anydev import fix as _fix
    from anydev import scan as _scan
    from anydev._migrate.fix_edits import apply_edits

    rc, out, _ = scan("--format", "json", "--show-fixes", "train.py")
    doc = json.loads(out)
    validate(doc, REPORT_SCHEMA)
    data = (project / "train.py").read_bytes()
    findings, _ = _scan.scan_source(data, "train.py")
    by_pos = {(f.line, f.column, f.rule): f for f in findings}
    fixed = 0
    for rec in doc["findings"]:
        f = by_pos[(rec["line"], rec["column"], rec["rule"])]
        # anydev fix of this finding alone (stdin, as an editor would ask)
        new, applied, skipped = _fix.fix_source(data, "train.py", [f], unsafe=f.fix == "unsafe",
                                                rules=lambda fs: [], target_torch="2.13")
        if rec["edits"] is None:
            assert not applied and rec["not_fixed"]
            continue
        fixed += 1
        assert apply_edits(data, rec["edits"]) == new, rec
        # the positions name the same text as the byte offsets
        lines = data.decode().splitlines(keepends=True)
        for e in rec["edits"]:
            at = sum(len(x.encode()) for x in lines[:e["line"] - 1]) + \
                len(lines[e["line"] - 1][:e["column"] - 1].encode())
            assert at == e["start"]
    assert fixed >= 3
    # a rule without a fix says so
    none = [r for r in doc["findings"] if r["fix"] == "none"]
    assert none and all(r["edits"] is None and "no automatic fix" in r["not_fixed"]
                        for r in none)


def test_edits_of_a_finding_the_target_refuses(project):
    (project / "pyproject.toml").write_text('[tool.anydev]\ntarget-torch = "2.1"\n')
    doc = json.loads(scan("--format", "json", "--show-fixes", "train.py")[1])
    rec = next(r for r in doc["findings"] if r["rule"] == "AD107")
    assert rec["edits"] is None and rec["not_fixed"] == "needs torch >= 2.6 (target 2.1)"


def test_json_lines_are_the_json_reports_findings(project):
    doc = json.loads(scan("--format", "json")[1])
    rc, out, err = scan("--format", "json-lines")
    lines = out.splitlines()
    assert [json.loads(x) for x in lines] == doc["findings"]
    for x in lines:
        validate(json.loads(x), {"$defs": REPORT_SCHEMA["$defs"], "$ref": "#/$defs/finding"})
    assert "bad.py:2: error: unterminated string literal" in err  # errors on stderr
    rc, out, _ = scan("--format", "json-lines", "--show-fixes", "train.py")
    assert all("edits" in json.loads(x) for x in out.splitlines())


def test_statistics_as_json(project):
    rc, out, err = scan("--statistics", "--format", "json")
    doc = json.loads(out)
    validate(doc, STATS_SCHEMA)
    findings = json.loads(scan("--format", "json")[1])["findings"]
    assert doc["findings"] == len(findings) and err.count("error:") == 1
    assert sum(r["count"] for r in doc["by_rule"]) == len(findings)
    assert sum(doc["by_kind"].values()) == len(findings) == sum(doc["by_fix"].values())
    assert doc["by_kind"]["mock"] == 1 and doc["by_kind"]["idiom"] == 1
    assert doc["files_scanned"] == 3 and doc["files_with_findings"] == 2
    assert {m["module"] for m in doc["by_module"]} == {"."}
    text = scan("--statistics")[1]
    assert f"Total: {len(findings)} in 2 files; 3 files scanned" in text
    [target] = doc["target"]["targets"]
    assert target["torch"] == "2.13" and target["files"] == 1
    assert target["source"].endswith("requirements.txt (torch>=2.13)"), target
    # to a file, as the other reports
    assert run_cli("scan", "--statistics", "--format", "json", "-o", "s.json")[1] == ""
    assert json.loads((project / "s.json").read_text()) == doc


def test_gitlab_code_quality(project):
    rc, out, _ = scan("--format", "gitlab")
    issues = json.loads(out)
    findings = json.loads(scan("--format", "json")[1])["findings"]
    assert len(issues) == len(findings) + 1  # and the unscanned file
    for i in issues:
        assert set(i) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert i["severity"] in ("minor", "major")
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    first = issues[0]
    assert first["location"]["positions"]["begin"]["line"] >= 1
    bad = [i for i in issues if i["check_name"] == "anydev/unscanned"]
    assert bad[0]["location"] == {"path": "bad.py", "lines": {"begin": 2}}
    # a fingerprint does not change when lines move above the finding
    (project / "train.py").write_text("# a comment\n\n" + TRAIN)
    moved = json.loads(scan("--format", "gitlab")[1])
    assert {i["fingerprint"] for i in moved} == {i["fingerprint"] for i in issues}


def test_junit(project):
    rc, out, _ = scan("--format", "junit")
    root = ET.fromstring(out)
    findings = json.loads(scan("--format", "json")[1])["findings"]
    assert root.tag == "testsuites" and root.get("failures") == str(len(findings))
    assert root.get("errors") == "1"
    cases = root.findall("./testsuite/testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == len(findings)
    c = next(c for c in failed if c.get("name") == "anydev.AD107")
    assert c.get("file") == "train.py" and c.get("line") == "7" and c.get("column") == "5"
    assert "torch.cuda.synchronize" in c.find("failure").get("message")
    (project / "bad.py").unlink()
    os.remove(project / "ops.cu")
    (project / "train.py").write_text("x = 1\n")
    rc, out, _ = run_cli("scan", "--format", "junit")
    root = ET.fromstring(out)
    assert rc == 0 and root.get("failures") == "0" and len(root.findall(".//testcase")) == 1


def test_concise_and_full(project):
    rc, text, _ = scan()
    rc, concise, _ = scan("--format", "concise")
    assert concise == text
    rc, full, _ = scan("--format", "full", "train.py")
    assert "AD107 [*] `torch.cuda.synchronize` is device-specific" in full
    block = full[full.index("AD107 [*]"):]
    assert " --> train.py:7:5\n" in block
    assert "7 |     torch.cuda.synchronize()\n  |     ^^^^^^^^^^^^^^^^^^^^^^\n" in block
    assert "help: use `torch.accelerator.synchronize` (`anydev fix` rewrites it)" in block
    assert full.splitlines()[-1].startswith("Found 9 legacy references in 1 file")


def test_sarif_rules_link_to_their_page_and_the_page_is_current(project):
    from anydev._migrate import rules as _rules

    doc = json.loads(scan("--format", "sarif")[1])
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert page == _rules.rules_markdown(), "docs/rules.md is stale: run " \
        "`anydev rule --all --format markdown > docs/rules.md`"
    headings = {line[3:] for line in page.splitlines() if line.startswith("## ")}
    for r in rules:
        assert r["helpUri"].endswith(f"docs/rules.md#{r['id'].lower()}")
        assert r["id"] in headings
    # AD001 is a rule of its own when selected
    doc = json.loads(scan("--format", "sarif", "--extend-select", "AD001")[1])
    assert "AD001" in {r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]}


def test_rule_command_knows_ad001_and_writes_the_page(project):
    rc, out, _ = run_cli("rule", "AD001")
    assert rc == 0 and out.startswith("AD001: unused `# noqa: ADxxx` (unused-noqa)")
    rc, out, _ = run_cli("rule", "AD001", "--format", "json")
    assert rc == 0 and json.loads(out)["name"] == "unused-noqa"
    rc, out, _ = run_cli("rule", "--all")
    assert out.startswith("AD001  opt-in")
    rc, _, err = run_cli("rule", "--format", "markdown")
    assert rc == 2 and "give --all" in err


def test_a_new_format_from_the_configuration(project):
    (project / "pyproject.toml").write_text('[tool.anydev]\noutput-format = "gitlab"\n')
    assert isinstance(json.loads(scan()[1]), list)
    (project / "pyproject.toml").write_text('[tool.anydev]\noutput-format = "xml"\n')
    rc, _, err = run_cli("scan")
    assert rc == 2 and "'xml' is not one of text, concise, full, json, json-lines" in err


def test_formats_from_a_real_process(project):
    # the installed command, as CI runs it (its fast argv path takes the new names)
    for fmt in ("gitlab", "junit", "json-lines", "full", "concise"):
        p = subprocess.run([sys.executable, "-m", "anydev", "scan", "--format", fmt, "ops.cu"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 1, (fmt, p.stderr)
        assert "getCurrentCUDAStream" in p.stdout or "AD625" in p.stdout, fmt
