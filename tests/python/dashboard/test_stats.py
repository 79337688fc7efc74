"""The statistics model (anydev._dashboard.stats): one count per finding in
each breakdown, and what raising the floor unlocks."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from anydev import scan
from anydev._dashboard import stats


def F(path: str, rule: str, kind: str = "call"):
    return SimpleNamespace(path=path, rule=rule, kind=kind)


# AD101 is_available: safe since 2.6; AD103 current_device: safe since 2.7;
# AD204 memory_allocated: unsafe since 2.9; AD111 torch.cuda.stream: no fix;
# AD902 device="cuda": a literal, unsafe since 2.7; AD905 the idiom, unsafe since 2.7.
FINDINGS = [F("a/x.py", "AD101")] * 3 + [F("a/x.py", "AD204"), F("a/x.py", "AD111"),
                                         F("a/b/y.py", "AD902", "literal"),
                                         F("a/b/y.py", "AD902", "literal"),
                                         F("a/b/y.py", "AD905", "idiom"), F("z.py", "AD103")]


def test_counts_by_category_fix_module_file_kind_and_rule():
    s = stats.statistics(FINDINGS, files=10, nbytes=1234, target="2.6")
    assert s.total.to_dict() == {"total": 9, "api": 6, "literal": 2, "idiom": 1, "safe": 4,
                                 "unsafe": 4, "none": 1}
    assert {m: c.total for m, c in s.by_module.items()} == {"a": 5, "a/b": 3, ".": 1}
    assert (s.by_module["a/b"].literal, s.by_module["a/b"].idiom) == (2, 1)
    assert {p: c.total for p, c in s.by_file.items()} == {"a/x.py": 5, "a/b/y.py": 3, "z.py": 1}
    assert s.files == 3
    assert s.by_kind == {"call": 6, "literal": 2, "idiom": 1}
    assert s.by_rule["AD101"].count == 3
    assert (s.by_rule["AD101"].fix, s.by_rule["AD101"].since) == ("safe", "2.6")
    assert (s.by_rule["AD111"].fix, s.by_rule["AD111"].since) == ("none", None)
    assert s.by_rule["AD905"].category == "idiom"


def test_releases_and_what_raising_the_floor_unlocks():
    s = stats.statistics(FINDINGS, target="2.6")
    assert {r: (c.safe, c.unsafe) for r, c in s.by_release.items()} == {
        "2.6": (3, 0), "2.7": (1, 3), "2.9": (0, 1)}
    assert s.at_target == {"safe": 3, "unsafe": 0}
    assert [u.to_dict() for u in s.unlocks] == [
        {"torch": "2.7", "safe": 1, "unsafe": 3, "more_safe": 1, "more_unsafe": 3},
        {"torch": "2.9", "safe": 0, "unsafe": 1, "more_safe": 1, "more_unsafe": 4}]
    assert s.unlock("2.8").torch == "2.7"
    assert s.unlock("2.6") is None
    # A lower floor: everything the releases bring is still ahead.
    low = stats.statistics(FINDINGS, target="2.1")
    assert low.at_target == {"safe": 0, "unsafe": 0}
    assert [(u.torch, u.more_safe, u.more_unsafe) for u in low.unlocks] == [
        ("2.6", 3, 0), ("2.7", 4, 3), ("2.9", 4, 4)]


def test_without_a_target_the_floor_is_the_newest_release():
    s = stats.statistics(FINDINGS)
    assert (s.target_source, s.unlocks) == ("default", [])
    assert s.at_target == {"safe": 4, "unsafe": 4}


def test_a_malformed_target_is_an_error():
    with pytest.raises(ValueError, match="not a PyTorch version"):
        stats.statistics(FINDINGS, target="two")


def test_the_json_form():
    d = stats.statistics(FINDINGS, files=10, nbytes=1234, target="2.6").to_dict()
    assert json.loads(json.dumps(d)) == d
    assert (d["format"], d["version"]) == ("anydev-statistics", 1)
    assert [m["name"] for m in d["by_module"]] == ["a", "a/b", "."]  # most first
    assert d["by_rule"][0] == {"code": "AD101", "count": 3, "legacy": "torch.cuda.is_available",
                               "replacement": "torch.accelerator.is_available", "fix": "safe",
                               "category": "api", "since": "2.6"}
    assert [r["torch"] for r in d["by_release"]] == ["2.6", "2.7", "2.9"]
    assert d["target"] == {"torch": "2.6", "source": "--target-torch",
                           "fixable": {"safe": 3, "unsafe": 0}}
    assert (d["files"], d["files_scanned"], d["bytes_scanned"]) == (3, 10, 1234)


def test_real_findings_agree_with_the_scan_statistics_text():
    # The model counts a real scan's findings as `anydev scan --statistics`
    # groups them (API | literals and idioms, per folder).
    from anydev._compat.table import ROWS_BY_CODE
    from anydev._migrate.literals import statistics_lines

    src = ('import torch\n'
           'd = "cuda" if torch.cuda.is_available() else "cpu"\n'
           'torch.cuda.synchronize()\nx = torch.zeros(2, device="cuda").to("cuda")\n')
    found, errors = scan.scan_source(src, "pkg/m.py")
    assert errors == []
    s = stats.statistics(found)
    line = [ln for ln in statistics_lines(found, ROWS_BY_CODE) if ln.endswith("pkg")][0]
    api, lit = map(int, line.split()[:2])
    c = s.by_module["pkg"]
    assert (c.api, c.literal + c.idiom) == (api, lit) == (2, 3)  # is_available in the idiom too
    assert c.idiom == 1
