"""The runtime report: ANYDEV_REPORT at exit, anydev.report.snapshot(),
``anydev report merge|show`` (text, markdown, json, SARIF 2.1.0), bad report
files, and ``anydev run``."""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import anydev
import anydev.cuda
import anydev.report
from anydev._cli import main as cli

from conftest import clean_env

ANYDEV = [sys.executable, "-m", "anydev"]
SIM = {"ANYDEV_SIM_DEVICES": "2"}

CALL_KEYS = {"file", "line", "module", "legacy", "replacement", "rule", "count", "first_seen"}
PROCESS_KEYS = {"pid", "rank", "argv", "started", "written"}

# A legacy script: 3 calls from line 5, 1 from line 6, a kept call (not reported),
# then it ends as its first argument says.
SCRIPT = """\
import os, sys
import anydev.cuda
print("args", sys.argv[1:], "pid", os.getpid())
for _ in range(3):
    anydev.cuda.current_device()
anydev.cuda.synchronize()
anydev.cuda.get_device_name()
if sys.argv[1:2] == ["exit"]:
    sys.exit(3)
if sys.argv[1:2] == ["raise"]:
    raise ValueError("the script failed")
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    p = tmp_path / "legacy_script.py"
    p.write_text(SCRIPT)
    return p


def run(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=clean_env({**SIM, **(env or {})}), cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def check_report(data: Any) -> None:
    """The documented format (anydev/report.py)."""
    assert data["format"] == "anydev-report" and data["version"] == 1
    assert set(data) == {"format", "version", "processes", "calls"}
    for p in data["processes"]:
        assert set(p) - {"id", "world_size"} == PROCESS_KEYS, p  # id: absent in old reports
        assert isinstance(p["pid"], int) and isinstance(p["rank"], int)
        assert p["started"].endswith("Z") and p["written"] >= p["started"]
    for c in data["calls"]:
        assert set(c) == CALL_KEYS, c
        assert c["count"] >= 1 and c["line"] >= 1 and c["first_seen"].endswith("Z")
        assert c["rule"].startswith("AD")


def by_line(data: dict, file: str) -> dict[int, tuple[str, int]]:
    return {c["line"]: (c["legacy"], c["count"]) for c in data["calls"] if c["file"] == file}


# --- ANYDEV_REPORT -------------------------------------------------------------------------


@pytest.mark.parametrize("how, rc", [("normal", 0), ("exit", 3), ("raise", 1)])
def test_report_written_at_exit(script: Path, tmp_path: Path, how: str, rc: int):
    out = tmp_path / "report.json"
    p = run([sys.executable, str(script), how], {"ANYDEV_REPORT": str(out)})
    assert p.returncode == rc, p.stderr
    if how == "raise":
        assert "ValueError: the script failed" in p.stderr
    data = json.loads(out.read_text())
    check_report(data)
    assert by_line(data, str(script)) == {5: ("torch.cuda.current_device", 3),
                                          6: ("torch.cuda.synchronize", 1)}
    (proc,) = data["processes"]
    assert proc["pid"] == int(p.stdout.split()[-1]) and proc["rank"] == 0
    assert proc["argv"] == [str(script), how]
    (five,) = [c for c in data["calls"] if c["line"] == 5]
    assert five["module"] == "__main__" and five["rule"] == "AD103"
    assert five["replacement"] == "torch.accelerator.current_device_index"
    assert sorted(os.listdir(tmp_path)) == ["legacy_script.py", "report.json"]  # no temp file


@pytest.mark.parametrize("env, rank", [({"RANK": "3", "LOCAL_RANK": "1"}, 3),
                                       ({"LOCAL_RANK": "2"}, 2), ({}, 0)])
def test_report_path_expands_pid_and_rank(script: Path, tmp_path: Path, env: dict, rank: int):
    p = run([sys.executable, str(script)],
            {"ANYDEV_REPORT": str(tmp_path / "r-{rank}-{pid}.json"), **env})
    assert p.returncode == 0, p.stderr
    pid = int(p.stdout.split()[-1])
    out = tmp_path / f"r-{rank}-{pid}.json"
    data = json.loads(out.read_text())
    assert data["processes"][0]["rank"] == rank and data["processes"][0]["pid"] == pid


def test_report_path_in_missing_directory(script: Path, tmp_path: Path):
    target = tmp_path / "no" / "such" / "dir" / "report.json"
    p = run([sys.executable, str(script)], {"ANYDEV_REPORT": str(target)})
    assert p.returncode == 0  # the program itself runs
    assert f"report path {target}: the directory {target.parent} does not exist" in p.stderr
    assert p.stderr.count("does not exist") == 1  # said once, at start-up, not again at exit
    assert sorted(os.listdir(tmp_path)) == ["legacy_script.py"]


def test_report_path_with_a_bad_placeholder(script: Path, tmp_path: Path):
    p = run([sys.executable, str(script)], {"ANYDEV_REPORT": str(tmp_path / "r-{host}.json")})
    assert p.returncode == 0
    assert "only {pid} and {rank} may be expanded" in p.stderr
    assert sorted(os.listdir(tmp_path)) == ["legacy_script.py"]


def test_report_path_that_is_a_directory(script: Path, tmp_path: Path):
    (tmp_path / "adir").mkdir()
    p = run([sys.executable, str(script)], {"ANYDEV_REPORT": str(tmp_path / "adir")})
    assert "is a directory" in p.stderr
    assert os.listdir(tmp_path / "adir") == []


@pytest.mark.filterwarnings("ignore::anydev.compat.LegacyAPIWarning")
def test_snapshot_in_code():
    line = sys._getframe().f_lineno + 2
    for _ in range(4):
        anydev.cuda.device_count()
    data = anydev.report.snapshot()
    check_report(data)
    assert anydev.report.validate(data) is data
    assert by_line(data, __file__)[line] == ("torch.cuda.device_count", 4)
    assert data["processes"][0]["pid"] == os.getpid()
    # Kept entry points are never reported.
    anydev.cuda.get_device_properties()
    assert not [c for c in anydev.report.snapshot()["calls"]
                if c["legacy"] == "torch.cuda.get_device_properties"]
    json.dumps(data)  # JSON-serialisable as is


def test_write_is_atomic_and_cleans_up(tmp_path: Path, monkeypatch):
    out = tmp_path / "r.json"
    out.write_text("previous")

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        anydev.report.write(str(out))
    assert out.read_text() == "previous"
    assert os.listdir(tmp_path) == ["r.json"]
    monkeypatch.undo()
    anydev.report.write(str(out))
    check_report(json.loads(out.read_text()))
    assert os.listdir(tmp_path) == ["r.json"]


# --- merge ---------------------------------------------------------------------------------


def make_report(rank: int, calls: list[tuple[str, int, str, int, str]]) -> dict:
    """A report of one process; calls are (file, line, legacy, count, first_seen)."""
    return {
        "format": "anydev-report", "version": 1,
        "processes": [{"pid": 1000 + rank, "rank": rank, "argv": ["train.py"],
                       "started": "2026-01-01T00:00:00.000Z",
                       "written": "2026-01-01T01:00:00.000Z"}],
        "calls": [{"file": f, "line": ln, "module": "__main__", "legacy": lg,
                   "replacement": "torch.accelerator.current_device_index", "rule": "AD103",
                   "count": n, "first_seen": ts} for f, ln, lg, n, ts in calls],
    }


CD = "torch.cuda.current_device"
RANKS = [
    make_report(0, [("train.py", 10, CD, 100, "2026-01-01T00:00:05.000Z"),
                    ("train.py", 20, CD, 1, "2026-01-01T00:00:09.000Z")]),
    make_report(1, [("train.py", 10, CD, 200, "2026-01-01T00:00:03.000Z"),
                    ("model.py", 7, CD, 5, "2026-01-01T00:00:04.000Z")]),
    make_report(2, [("train.py", 10, CD, 300, "2026-01-01T00:00:04.000Z"),
                    ("train.py", 20, CD, 2, "2026-01-01T00:00:01.000Z")]),
]


def write_ranks(tmp_path: Path) -> list[str]:
    paths = []
    for r in RANKS:
        p = tmp_path / f"rank{r['processes'][0]['rank']}.json"
        p.write_text(json.dumps(r))
        paths.append(str(p))
    return paths


def cli_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli.main(argv)
    return rc, out.getvalue(), err.getvalue()


def test_merge_sums_counts_and_keeps_earliest_first_seen(tmp_path: Path):
    paths = write_ranks(tmp_path)
    out = tmp_path / "merged" / "all.json"
    out.parent.mkdir()
    p = run([*ANYDEV, "report", "merge", *paths, "-o", str(out)])
    assert p.returncode == 0, p.stderr
    assert f"merged 3 report(s): 608 legacy call(s) from 3 call site(s) -> {out}" in p.stderr
    data = json.loads(out.read_text())
    check_report(data)
    calls = {(c["file"], c["line"]): (c["count"], c["first_seen"]) for c in data["calls"]}
    assert calls == {("train.py", 10): (600, "2026-01-01T00:00:03.000Z"),
                     ("train.py", 20): (3, "2026-01-01T00:00:01.000Z"),
                     ("model.py", 7): (5, "2026-01-01T00:00:04.000Z")}
    assert sorted(p["rank"] for p in data["processes"]) == [0, 1, 2]
    assert os.listdir(out.parent) == ["all.json"]  # no temp file left
    # Merging is associative: merging the merged report with nothing changes nothing.
    again = tmp_path / "again.json"
    assert cli_main(["report", "merge", str(out), "-o", str(again)])[0] == 0
    assert json.loads(again.read_text())["calls"] == data["calls"]


def test_merge_of_real_reports(script: Path, tmp_path: Path):
    for rank in (0, 1):
        p = run([sys.executable, str(script)],
                {"ANYDEV_REPORT": str(tmp_path / "r{rank}.json"), "RANK": str(rank)})
        assert p.returncode == 0, p.stderr
    rc, _, err = cli_main(["report", "merge", str(tmp_path / "r0.json"), str(tmp_path / "r1.json"),
                           "-o", str(tmp_path / "all.json")])
    assert rc == 0, err
    data = json.loads((tmp_path / "all.json").read_text())
    assert by_line(data, str(script)) == {5: (CD, 6), 6: ("torch.cuda.synchronize", 2)}


def test_merge_failure_while_writing_leaves_output_unchanged(tmp_path: Path, monkeypatch):
    paths = write_ranks(tmp_path)
    out = tmp_path / "out" / "all.json"
    out.parent.mkdir()
    out.write_text("old")
    monkeypatch.setattr(os, "replace", lambda a, b: (_ for _ in ()).throw(OSError(5, "I/O error")))
    rc, _, err = cli_main(["report", "merge", *paths, "-o", str(out)])
    assert rc == 2 and "I/O error" in err
    assert out.read_text() == "old" and os.listdir(out.parent) == ["all.json"]


# --- bad input --------------------------------------------------------------------------------

BAD_INPUTS: dict[str, tuple[Any, str]] = {
    # name: (file content (bytes, str, dict or None for missing), problem in the message)
    "missing": (None, "cannot read: No such file or directory"),
    "not json": ("{ this is not JSON", "corrupt JSON at line 1, column 3"),
    "truncated": ('{"format": "anydev-report", "version": 1, "calls": [', "corrupt JSON"),
    "empty": ("", "corrupt JSON at line 1, column 1"),
    "json list": ("[1, 2, 3]", "not an anydev report (the top level is not a JSON object)"),
    "other json": ({"name": "package.json"}, "not an anydev report (format is None"),
    "wrong version": ({**RANKS[0], "version": 2}, "unsupported report version 2"),
    "negative count": (None, "calls[0].count is negative"),
    "count not int": (None, "calls[1].count is missing or not a int"),
    "calls missing": ({k: v for k, v in RANKS[0].items() if k != "calls"},
                      "`calls` is missing or not a list"),
    "binary": (bytes(range(256)) * 4, "not UTF-8 text (byte 128)"),
}


def bad_file(tmp_path: Path, name: str) -> tuple[Path, str]:
    content, problem = BAD_INPUTS[name]
    path = tmp_path / f"bad-{name.replace(' ', '-')}.json"
    if name == "negative count":
        content = copy.deepcopy(RANKS[0])
        content["calls"][0]["count"] = -4
    if name == "count not int":
        content = copy.deepcopy(RANKS[0])
        content["calls"][1]["count"] = "2"
    if isinstance(content, dict):
        content = json.dumps(content)
    if isinstance(content, str):
        path.write_text(content)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    return path, problem


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_show_rejects_bad_input(tmp_path: Path, name: str):
    path, problem = bad_file(tmp_path, name)
    rc, out, err = cli_main(["report", "show", str(path)])
    assert rc == 2 and out == ""
    assert err.startswith(f"anydev report show: {path}: "), err
    assert problem in err, err


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_merge_rejects_bad_input_and_writes_nothing(tmp_path: Path, name: str):
    good = write_ranks(tmp_path)
    path, problem = bad_file(tmp_path, name)
    out = tmp_path / "merged.json"
    before = sorted(os.listdir(tmp_path))
    rc, _, err = cli_main(["report", "merge", good[0], str(path), good[1], "-o", str(out)])
    assert rc == 2
    assert f"{path}: " in err and problem in err, err
    assert sorted(os.listdir(tmp_path)) == before  # no output, no temp file
    out.write_text("existing")
    rc, _, err = cli_main(["report", "merge", good[0], str(path), "-o", str(out)])
    assert rc == 2 and out.read_text() == "existing"


def test_bad_input_exit_status_of_the_command(tmp_path: Path):
    path, _ = bad_file(tmp_path, "binary")
    out = tmp_path / "o.json"
    p = run([*ANYDEV, "report", "merge", str(path), "-o", str(out)])
    assert p.returncode == 2 and str(path) in p.stderr and "not UTF-8" in p.stderr
    assert not out.exists()
    p = run([*ANYDEV, "report", "show", str(tmp_path / "absent.json")])
    assert p.returncode == 2 and "absent.json: cannot read" in p.stderr
    p = run([*ANYDEV, "report", "merge", *write_ranks(tmp_path),
             "-o", str(tmp_path / "missing-dir" / "o.json")])
    assert p.returncode == 2 and "does not exist" in p.stderr


# --- show ----------------------------------------------------------------------------------


@pytest.fixture
def merged(tmp_path: Path) -> Path:
    out = tmp_path / "merged.json"
    assert cli_main(["report", "merge", *write_ranks(tmp_path), "-o", str(out)])[0] == 0
    return out


def test_show_text(merged: Path):
    rc, out, err = cli_main(["report", "show", str(merged)])
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "anydev: 608 legacy calls from 3 call sites:"
    assert lines[1].split() == ["600", "train.py:10", CD, "->",
                                "torch.accelerator.current_device_index", "[AD103]"]
    assert [ln.split()[0] for ln in lines[1:]] == ["600", "5", "3"]  # most calls first


def test_show_markdown(merged: Path):
    rc, out, _ = cli_main(["report", "show", str(merged), "--format", "markdown"])
    assert rc == 0
    assert "608 legacy calls from 3 call sites in 3 processes." in out
    assert "| count | call site | legacy | replacement | rule |" in out
    assert f"| 600 | `train.py:10` | `{CD}` | `torch.accelerator.current_device_index` | AD103 |" in out


def test_show_json_round_trips(merged: Path):
    rc, out, _ = cli_main(["report", "show", str(merged), "--format", "json"])
    assert rc == 0 and json.loads(out) == json.loads(merged.read_text())


def test_show_empty_report(tmp_path: Path):
    p = tmp_path / "empty.json"
    p.write_text(json.dumps({**RANKS[0], "calls": []}))
    assert cli_main(["report", "show", str(p)])[1] == "anydev: no legacy calls ran.\n"
    rc, out, _ = cli_main(["report", "show", str(p), "--format", "sarif"])
    assert rc == 0 and json.loads(out)["runs"][0]["results"] == []


def validate_sarif(doc: dict) -> None:
    """The parts of SARIF 2.1.0 (OASIS; required properties) that GitHub code
    scanning reads."""
    assert doc["version"] == "2.1.0"
    assert "sarif-2.1.0" in doc.get("$schema", "sarif-2.1.0")
    assert isinstance(doc["runs"], list) and doc["runs"]
    for run_ in doc["runs"]:
        driver = run_["tool"]["driver"]
        assert isinstance(driver["name"], str) and driver["name"]
        rules = driver.get("rules", [])
        ids = [r["id"] for r in rules]
        assert len(ids) == len(set(ids)), "one rule per rule code"
        for r in rules:
            assert isinstance(r["id"], str)
            for key in ("shortDescription", "fullDescription", "help"):
                if key in r:
                    assert isinstance(r[key]["text"], str) and r[key]["text"]
            assert r.get("defaultConfiguration", {}).get("level", "warning") in (
                "none", "note", "warning", "error")
        assert isinstance(run_["results"], list)
        for res in run_["results"]:
            assert isinstance(res["message"]["text"], str) and res["message"]["text"]
            if "ruleIndex" in res:
                assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
            assert res.get("level", "warning") in ("none", "note", "warning", "error")
            for loc in res["locations"]:
                phys = loc["physicalLocation"]
                assert isinstance(phys["artifactLocation"]["uri"], str)
                region = phys.get("region", {})
                assert isinstance(region.get("startLine", 1), int) and region.get("startLine", 1) >= 1
            for v in res.get("partialFingerprints", {}).values():
                assert isinstance(v, str)


SARIF_SCHEMA = {  # a minimal JSON schema of the same, for jsonschema when it is installed
    "type": "object", "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string"}, "rules": {"type": "array", "items": {
                        "type": "object", "required": ["id"]}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message", "locations"],
                    "properties": {
                        "message": {"type": "object", "required": ["text"]},
                        "locations": {"type": "array", "items": {
                            "type": "object", "required": ["physicalLocation"],
                            "properties": {"physicalLocation": {
                                "type": "object", "required": ["artifactLocation"],
                                "properties": {
                                    "artifactLocation": {"type": "object", "required": ["uri"]},
                                    "region": {"type": "object", "properties": {
                                        "startLine": {"type": "integer", "minimum": 1}}}}}}}}}}}}}},
    },
}


def test_show_sarif(tmp_path: Path, merged: Path):
    # Two rules: add a call of another rule to the merged report.
    data = json.loads(merged.read_text())
    data["calls"].append({"file": str(tmp_path / "pkg" / "sync.py"), "line": 3, "module": "pkg.sync",
                          "legacy": "torch.cuda.synchronize",
                          "replacement": "torch.accelerator.synchronize", "rule": "AD107",
                          "count": 1, "first_seen": "2026-01-01T00:00:00.000Z"})
    merged.write_text(json.dumps(data))
    rc, out, err = cli_main(["report", "show", str(merged), "--format", "sarif",
                             "--root", str(tmp_path)])
    assert rc == 0, err
    doc = json.loads(out)
    validate_sarif(doc)
    try:
        import jsonschema
    except ImportError:
        pass
    else:
        jsonschema.validate(doc, SARIF_SCHEMA)
    (run_,) = doc["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert sorted(r["id"] for r in rules) == ["AD103", "AD107"]
    ad107 = next(r for r in rules if r["id"] == "AD107")
    assert "torch.accelerator.synchronize" in ad107["help"]["text"]
    assert "Waits for every stream" in ad107["help"]["text"]  # the row's note
    results = run_["results"]
    assert len(results) == 4
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results)
    assert uris == ["model.py", "pkg/sync.py", "train.py", "train.py"]  # relative, with /
    for r in results:
        assert not os.path.isabs(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
    fps = [r["partialFingerprints"] for r in results]
    assert all(fp for fp in fps) and len({json.dumps(fp) for fp in fps}) == 4
    top = next(r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 10)
    assert top["ruleId"] == "AD103" and "600 times" in top["message"]["text"]
    # Fingerprints do not depend on counts, so code scanning tracks a site across runs.
    data["calls"][0]["count"] += 1
    merged.write_text(json.dumps(data))
    again = json.loads(cli_main(["report", "show", str(merged), "--format", "sarif",
                                 "--root", str(tmp_path)])[1])
    assert sorted(json.dumps(r["partialFingerprints"]) for r in again["runs"][0]["results"]) == \
        sorted(json.dumps(fp) for fp in fps)


def test_sarif_uri_outside_the_root_is_a_file_uri(tmp_path: Path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps(make_report(0, [("/elsewhere/x.py", 2, CD, 1,
                                             "2026-01-01T00:00:00.000Z")])))
    rc, out, _ = cli_main(["report", "show", str(p), "--format", "sarif", "--root", str(tmp_path)])
    doc = json.loads(out)
    validate_sarif(doc)
    loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc["uri"] == "file:///elsewhere/x.py" and "uriBaseId" not in loc


def test_show_unknown_format_is_a_usage_error(merged: Path):
    p = run([*ANYDEV, "report", "show", str(merged), "--format", "html"])
    assert p.returncode == 2 and "invalid choice: 'html'" in p.stderr


# --- anydev run -----------------------------------------------------------------------------


def test_run_passes_args_and_prints_the_summary(script: Path, tmp_path: Path):
    p = run([*ANYDEV, "run", str(script), "a", "--b", "c"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "args ['a', '--b', 'c']" in p.stdout
    assert "anydev: 4 legacy calls from 2 call sites:" in p.stderr
    summary = p.stderr[p.stderr.index("anydev: 4 legacy calls"):].splitlines()
    assert summary[1].split()[:3] == ["3", "legacy_script.py:5", CD]
    assert summary[2].split()[:3] == ["1", "legacy_script.py:6", "torch.cuda.synchronize"]


@pytest.mark.parametrize("how, rc", [("exit", 3), ("raise", 1)])
def test_run_exits_with_the_scripts_status(script: Path, tmp_path: Path, how: str, rc: int):
    p = run([*ANYDEV, "run", str(script), how], cwd=tmp_path)
    assert p.returncode == rc, p.stderr
    assert "anydev: 4 legacy calls" in p.stderr
    if how == "raise":
        assert "Traceback (most recent call last)" in p.stderr
        assert "ValueError: the script failed" in p.stderr
        assert p.stderr.index("ValueError") < p.stderr.index("anydev: 4 legacy calls")


def test_run_writes_the_report(script: Path, tmp_path: Path):
    out = tmp_path / "run-{rank}.json"
    p = run([*ANYDEV, "run", "--report", str(out), str(script), "exit"], {"RANK": "4"})
    assert p.returncode == 3, p.stderr
    data = json.loads((tmp_path / "run-4.json").read_text())
    check_report(data)
    assert data["processes"][0]["rank"] == 4
    assert sorted((c["line"], c["count"]) for c in data["calls"]) == [(5, 3), (6, 1)]
    # The script's file is recorded as `python script.py` would: an absolute path.
    assert {c["file"] for c in data["calls"]} == {str(script)}


def test_run_records_a_relative_script_by_its_absolute_path(script: Path, tmp_path: Path):
    p = run([*ANYDEV, "run", "--report", "r.json", script.name], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert {c["file"] for c in data["calls"]} == {str(script)}
    assert f"{script}:5: LegacyAPIWarning" in p.stderr  # as `python legacy_script.py` says
    assert "  3  legacy_script.py:5  " in p.stderr  # the summary: relative to the cwd


def test_run_with_the_console_script(script: Path, tmp_path: Path):
    exe = Path(sys.executable).parent / "anydev"
    if not exe.exists():
        pytest.skip("the anydev console script is not installed next to this interpreter")
    p = run([str(exe), "run", str(script), "x"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "args ['x']" in p.stdout and "anydev: 4 legacy calls" in p.stderr


def test_run_module(tmp_path: Path):
    (tmp_path / "legacy_mod_main.py").write_text(
        "import anydev.cuda\nanydev.cuda.current_device()\nprint('ran')\n")
    p = run([*ANYDEV, "run", "-m", "legacy_mod_main"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "ran\n" and "anydev: 1 legacy call from 1 call site:" in p.stderr


def test_run_missing_script(tmp_path: Path):
    p = run([*ANYDEV, "run", "missing.py"], cwd=tmp_path)
    assert p.returncode == 2
    assert "anydev run: missing.py: no such file" in p.stderr


def test_run_with_an_unwritable_report_path_does_not_run(script: Path, tmp_path: Path):
    target = tmp_path / "nope" / "r.json"
    p = run([*ANYDEV, "run", "--report", str(target), str(script)])
    assert p.returncode == 2
    assert f"report path {target}" in p.stderr and "does not exist" in p.stderr
    assert "args" not in p.stdout
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize("text", [
    '"' + '\\"' * 200_000,            # an unclosed string of escaped quotes
    '[1, "' + 'x\\"' * 150_000,         # in an array, after a value
    '{"a": "' + '\\\\\\"' * 100_000,  # escaped backslashes and quotes, unclosed
])
def test_a_report_with_an_unclosed_string_is_refused_in_linear_time(tmp_path, text):
    # _max_depth's string pattern required the closing quote: each `"` of an
    # unclosed run started a scan to the end, so 80 KB took 18 s and these
    # (400 KB) would take minutes. The depth is still counted where it
    # matters, before the first unclosed string.
    import time

    path = tmp_path / "r.json"
    path.write_text(text)
    start = time.perf_counter()
    with pytest.raises(anydev.report.ReportError, match="corrupt JSON"):
        anydev.report.load(str(path))
    assert time.perf_counter() - start < 5
    deep = "[" * 100 + '"' + '\\"' * 1000
    with pytest.raises(anydev.report.ReportError, match="nested 100 levels deep"):
        anydev.report.parse(deep.encode())


def _pipe_path(data: bytes) -> tuple[str, int]:
    r, w = os.pipe()
    os.write(w, data)  # less than a pipe's buffer
    os.close(w)
    return f"/dev/fd/{r}", r


@pytest.mark.parametrize("data, calls", [
    (b'{"format": "anydev-report", "version": 1, "processes": [], "calls": []}\n', 0),
    (b"x.cu:3:5: warning: foo is deprecated [AD101]\n" * 3, 1),
    (b"\n" * 600 + b"x.cu:3:5: warning: foo is deprecated [AD101]\n", 1),
])
def test_report_inputs_from_a_pipe_are_read_once(data, calls):
    # `anydev report show <(zcat build.log.gz)`: the kind of the input was
    # judged by reading its start, then the input was opened again, and a pipe
    # had lost those bytes: a report was "corrupt JSON at line 1", and a build
    # log lost its first 512 bytes without a word.
    from anydev._migrate import build_log as _build_log

    path, fd = _pipe_path(data)
    try:
        got = _build_log.load_input(path)
    finally:
        os.close(fd)
    assert len(got["calls"]) == calls
    path, fd = _pipe_path(data)
    try:
        rc, out, err = _run_cli_text("report", "show", path)
    finally:
        os.close(fd)
    assert rc == 0, err
    assert ("no legacy calls ran" in out + err) == (calls == 0)


def _run_cli_text(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_a_binary_input_is_refused_before_it_is_read_whole(tmp_path):
    # A NUL in the first 4 KiB refuses a build log before the rest is read:
    # a sparse 2 GB file was read whole (2 GB of memory, 6 s) first, and
    # /dev/zero, which has no end, until the memory ran out.
    from anydev._migrate import build_log as _build_log

    sparse = tmp_path / "core.dump"
    with open(sparse, "wb") as f:
        f.truncate(2 << 30)
    for path in (str(sparse), "/dev/zero"):
        with pytest.raises(anydev.report.ReportError, match="not a text file"):
            _build_log.load_input(path)
    rc, _, err = _run_cli_text("report", "show", "/dev/zero")
    assert rc == 2 and "/dev/zero: not a text file" in err


def test_an_empty_report_path_is_refused_by_name(tmp_path):
    # `report merge x.json -o ''` said "[Errno 2] No such file or directory:
    # '/tmp/.anydev-report-qb66vjot.tmp' -> ''"
    report = tmp_path / "r.json"
    report.write_text('{"format": "anydev-report", "version": 1, "processes": [], '
                      '"calls": []}\n')
    rc, _, err = _run_cli_text("report", "merge", str(report), "-o", "")
    assert rc == 2 and err == "anydev report merge: report path '' is empty\n", err
