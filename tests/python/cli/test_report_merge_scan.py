"""`anydev report merge/show --scan`: a call site that ran and that the
scanner found is one row (Note [One row per site] in anydev/_migrate/build_log.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import clean_env, run_cli

LEGACY = """\
import torch
from torch.cuda import current_device as cd


def f():
    torch.cuda.synchronize()
    return cd()


for _ in range(3):
    f()
"""


def test_a_site_that_ran_and_was_found_is_one_row(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(LEGACY)
    run = tmp_path / "run.json"
    p = subprocess.run([sys.executable, "-m", "anydev", "run", "--facade", "--report", str(run),
                        "pkg/m.py"], cwd=tmp_path, env=clean_env({"ANYDEV_SIM_DEVICES": "1"}),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # The run names the file as the interpreter saw it: absolute.
    assert {c["file"] for c in json.loads(run.read_text())["calls"]} == {
        str(tmp_path / "pkg" / "m.py")}
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli("report", "merge", "run.json", "--scan", ".", "-o", "all.json")
    assert rc == 0, err
    calls = json.loads((tmp_path / "all.json").read_text())["calls"]
    m = os.path.join("pkg", "m.py")
    assert sorted((c["file"], c["line"], c["rule"], c["seen_by"].get("run"),
                   c["seen_by"].get("scan")) for c in calls) == [
        (m, 2, "AD103", None, 1),        # the import: found, never a call
        (m, 6, "AD107", 3, 1),
        (m, 7, "AD103", 3, 1)]
    assert "from 3 call site(s)" in err
    rc, out, err = run_cli("report", "show", "run.json", "--scan", ".")
    assert rc == 0, err
    assert out.count(f"{m}:6 ") == 1 and "(run 3, scan 1)" in out


def test_a_site_is_its_rule_not_its_spelling(tmp_path, monkeypatch):
    # A C++ call written through an `also` spelling: the scanner reports the
    # spelling, a report the row's legacy name; the same site all the same.
    (tmp_path / "ops.cpp").write_text(
        "#include <ATen/cuda/CUDAContext.h>\nint n() { return at::cuda::device_count(); }\n")
    report = {"format": "anydev-report", "version": 1, "processes": [{"id": "p1"}],
              "calls": [{"file": str(tmp_path / "ops.cpp"), "line": 2, "module": "",
                         "legacy": "c10::cuda::device_count", "rule": "AD601",
                         "replacement": "at::accelerator::deviceCount", "count": 4,
                         "first_seen": "2026-01-01T00:00:00.000Z"}]}
    (tmp_path / "run.json").write_text(json.dumps(report))
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli("report", "show", "run.json", "--scan", ".", "--format", "json")
    assert rc == 0, err
    (site,) = json.loads(out)["calls"]
    assert (site["file"], site["line"], site["seen_by"]) == ("ops.cpp", 2, {"run": 4, "scan": 1})
