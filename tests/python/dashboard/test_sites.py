"""The join of runtime call sites and static findings
(anydev._dashboard.sites): one row per site, CUDA-only sites first."""

from __future__ import annotations

import os
from types import SimpleNamespace

from anydev._dashboard import sites


def item(path, line, rule="AD107", symbol="torch.cuda.synchronize"):
    return SimpleNamespace(path=path, line=line, rule=rule, symbol=symbol,
                           replacement="torch.accelerator.synchronize")


def call(file, line, count, rule="AD107", legacy="torch.cuda.synchronize", **extra):
    return dict({"file": file, "line": line, "module": "m", "legacy": legacy,
                 "replacement": "torch.accelerator.synchronize", "rule": rule, "count": count,
                 "first_seen": "2024-01-01T00:00:00.000Z"}, **extra)


def report(*calls):
    return {"format": "anydev-report", "version": 1, "processes": [], "calls": list(calls)}


def test_one_row_per_site_whatever_the_spelling_of_its_path(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("")
    items = [item("pkg/a.py", 3), item("pkg/a.py", 9), item("./pkg/a.py", 9)]
    # The run names the file as the interpreter saw it: absolute.
    runs = [report(call(str(tmp_path / "pkg" / "a.py"), 3, 100),
                   call(str(tmp_path / "pkg" / "a.py"), 12, 7))]
    got = sites.join(runs, items, str(tmp_path))
    assert [(s.path, s.line, s.status, s.calls, s.static) for s in got] == [
        (os.path.join("pkg", "a.py"), 3, "both", 100, 1),
        (os.path.join("pkg", "a.py"), 12, "run", 7, 0),
        (os.path.join("pkg", "a.py"), 9, "static", 0, 2)]


def test_the_rule_keys_a_site_not_the_spelling(tmp_path):
    # A finding of an alias (`cd()`) or an `also` spelling is the runtime's
    # call of the row's legacy name.
    items = [item("m.py", 2, rule="AD103", symbol="torch.cuda.current_device")]
    runs = [report(call(str(tmp_path / "m.py"), 2, 5, rule="AD103",
                        legacy="torch.cuda.current_device"),
                call(str(tmp_path / "m.py"), 2, 1, rule="AD107"))]
    got = sites.join(runs, items, str(tmp_path))
    assert [(s.rule, s.status) for s in got] == [("AD103", "both"), ("AD107", "run")]


def test_counts_of_several_reports_add_up(tmp_path):
    runs = [report(call("m.py", 2, 5)), report(call("m.py", 2, 6))]
    (s,) = sites.join(runs, [], str(tmp_path))
    assert (s.calls, s.reports) == (11, 2)


def test_cuda_only_sites_come_first_and_say_why(tmp_path):
    # the marker as anydev run --torch --accelerator sim writes it (Note [CUDA-only marker])
    items = [item("m.py", 1), item("m.py", 2)]
    runs = [report(call("m.py", 1, 1000), call("m.py", 2, 3, cuda_only=True, raised=1),
                   call("m.py", 5, 1, cuda_only=True, raised=0))]
    got = sites.join(runs, items, str(tmp_path))
    assert [(s.line, bool(s.cuda_only)) for s in got] == [(2, True), (5, True), (1, False)]
    assert got[0].cuda_only == ("asked for CUDA while another accelerator was current "
                                "(3 calls, 1 raised)")
    assert got[1].cuda_only == ("asked for CUDA while another accelerator was current "
                                "(1 call, none raised)")
    # two runs' reports of one site add up
    runs.append(report(call("m.py", 2, 4, cuda_only=True, raised=4)))
    got = sites.join(runs, items, str(tmp_path))
    assert (got[0].line, got[0].calls, got[0].cuda_calls, got[0].raised) == (2, 7, 7, 5)


def test_the_marker_forms():
    assert sites.cuda_only_of({"count": 2}) is None
    assert sites.cuda_only_of({"count": 2, "cuda_only": False}) is None
    assert sites.cuda_only_of({"count": 2, "cuda_only": True}) == (2, 0)
    assert sites.cuda_only_of({"count": 2, "cuda_only": True, "raised": 1}) == (2, 1)


def test_names_that_are_not_files_stay_as_they_are(tmp_path):
    (s,) = sites.join([report(call("<string>", 1, 2))], [], str(tmp_path))
    assert s.path == "<string>"
