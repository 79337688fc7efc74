"""The CUDA-only sites of a run on another accelerator in the runtime report
(`"cuda_only": true`, `"raised": N`; anydev/_torch/cuda_only.py): kept by
merge and `anydev report merge`, checked when read, and listed first by `anydev
report show` in every format."""

from __future__ import annotations

import json

import pytest

from anydev import report
from conftest import run_cli


def _call(file: str, line: int, legacy: str, rule: str, count: int, **extra) -> dict:
    return dict({"file": file, "line": line, "module": "m", "legacy": legacy,
                 "replacement": "torch.accelerator.is_available", "rule": rule, "count": count,
                 "first_seen": "2026-01-01T00:00:00.000Z"}, **extra)


def _report(pid: str, calls: list[dict]) -> dict:
    return {"format": "anydev-report", "version": 1,
            "processes": [{"id": pid, "pid": 1, "rank": 0, "argv": []}], "calls": calls}


A = _report("a", [
    _call("/p/train.py", 3, "torch.cuda.synchronize", "AD105", 500),
    _call("/p/train.py", 9, "torch.cuda.is_available", "AD101", 2, cuda_only=True, raised=0),
    _call("/p/data.py", 4, "device=\"cuda\"", "AD902", 1, cuda_only=True, raised=1),
])
B = _report("b", [
    _call("/p/data.py", 4, "device=\"cuda\"", "AD902", 3, cuda_only=True, raised=2),
    _call("/p/train.py", 3, "torch.cuda.synchronize", "AD105", 5),
])


def test_merge_adds_up_what_raised_and_keeps_the_mark():
    merged = report.merge([A, B])
    by_line = {(c["file"], c["line"]): c for c in merged["calls"]}
    data = by_line[("/p/data.py", 4)]
    assert (data["count"], data["cuda_only"], data["raised"]) == (4, True, 3)
    assert "cuda_only" not in by_line[("/p/train.py", 3)]
    assert by_line[("/p/train.py", 3)]["count"] == 505
    # a site marked in one process only (it ran there with sim) is marked
    one = report.merge([B, _report("c", [_call("/p/data.py", 4, "device=\"cuda\"", "AD902", 1)])])
    assert one["calls"][0]["cuda_only"] and one["calls"][0]["raised"] == 2


def test_text_lists_cuda_only_sites_first_however_often_the_others_ran():
    text = report.render(report.merge([A, B]), root="/p")
    assert text.splitlines() == [
        "anydev: 511 legacy calls from 3 call sites; 2 of them CUDA-only (they asked for CUDA "
        "while another accelerator was current; listed first):",
        "    4  data.py:4  device=\"cuda\" -> torch.accelerator.is_available  [AD902]  "
        "CUDA-only, raised 3",
        "    2  train.py:9  torch.cuda.is_available -> torch.accelerator.is_available  [AD101]  "
        "CUDA-only",
        "  505  train.py:3  torch.cuda.synchronize -> torch.accelerator.is_available  [AD105]",
    ]


def test_a_report_without_cuda_only_sites_reads_as_before():
    plain = _report("p", [_call("/p/train.py", 3, "torch.cuda.synchronize", "AD105", 5)])
    assert report.render(plain, root="/p") == (
        "anydev: 5 legacy calls from 1 call site:\n"
        "  5  train.py:3  torch.cuda.synchronize -> torch.accelerator.is_available  [AD105]\n")


def test_markdown_and_sarif_say_cuda_only():
    merged = report.merge([A, B])
    md = report.render(merged, "markdown", root="/p").splitlines()
    assert md[2].endswith("2 of the call sites are CUDA-only: they asked for CUDA while another "
                          "accelerator was current (listed first).")
    rows = [ln for ln in md if ln.startswith("| ") and ln[2].isdigit()]
    assert rows[0].endswith("| AD902, CUDA-only, raised 3 |")
    assert rows[1].endswith("| AD101, CUDA-only |")
    assert rows[2].endswith("| AD105 |")
    sarif = json.loads(report.render(merged, "sarif", root="/p"))
    messages = {r["locations"][0]["physicalLocation"]["region"]["startLine"]:
                r["message"]["text"] for r in sarif["runs"][0]["results"]}
    assert messages[4].startswith("CUDA-only: device=\"cuda\" ran 4 times while another "
                                  "accelerator was current (3 raised); use")
    assert messages[3].startswith("torch.cuda.synchronize ran 505 times")


@pytest.mark.parametrize("field, value, problem", [
    ("cuda_only", "yes", "calls[0].cuda_only is not a bool"),
    ("raised", -1, "calls[0].raised is not a count"),
    ("raised", True, "calls[0].raised is not a count"),
    ("raised", "2", "calls[0].raised is not a count"),
])
def test_a_bad_cuda_only_field_is_a_clear_error(tmp_path, field, value, problem):
    bad = _report("x", [_call("/p/a.py", 1, "x", "AD101", 1, **{field: value})])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    rc, out, err = run_cli("report", "show", str(path))
    assert rc == 2
    assert err.strip() == f"anydev report show: {path}: {problem}"


def test_report_merge_and_show_from_files(tmp_path):
    for name, r in (("a.json", A), ("b.json", B)):
        (tmp_path / name).write_text(json.dumps(r))
    rc, _, err = run_cli("report", "merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                         "-o", str(tmp_path / "m.json"))
    assert rc == 0, err
    merged = json.loads((tmp_path / "m.json").read_text())
    assert sum(c.get("raised", 0) for c in merged["calls"]) == 3
    rc, out, err = run_cli("report", "show", "--root", "/p", str(tmp_path / "m.json"))
    assert rc == 0, err
    assert out.splitlines()[1].strip().startswith("4  data.py:4")
