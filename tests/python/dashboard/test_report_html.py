"""`anydev report html` and the page it writes (anydev._dashboard.model and
render), read as text: what the fixer refuses and why, what each release
unlocks, the baseline's share, the runtime join, the history, and a page
that loads nothing from elsewhere. tests/python/dashboard/test_browser.py
renders the same page in Chromium."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env, run_cli

from anydev import scan
from anydev._dashboard import model, render, stats

from dashboard_fixture import make_repo


@pytest.fixture
def repo(tmp_path, monkeypatch):
    r = make_repo(tmp_path / "proj")
    monkeypatch.chdir(r)
    return r


def runtime_report(repo: Path) -> Path:
    """A real runtime report: run.py run under anydev's torch facade."""
    out = repo / "run.json"
    p = subprocess.run([sys.executable, "-m", "anydev", "run", "--facade", "--report", str(out),
                        "run.py"], cwd=repo, env=clean_env({"ANYDEV_SIM_DEVICES": "2"}),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return out


def page_of(repo: Path, *args: str) -> str:
    rc, out, err = run_cli("report", "html", ".", "-o", str(repo / "page.html"), *args)
    assert rc == 0, err
    assert "anydev report html: wrote" in err
    return (repo / "page.html").read_text(encoding="utf-8")


def rows(page: str, table_id: str) -> list[list[str]]:
    """The cells' text of a table's body."""
    body = page.split(f'id="{table_id}"', 1)[1].split("</tbody>", 1)[0]
    out = []
    body = body.split("<tbody>", 1)[1]
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
        out.append([html.unescape(re.sub(r"<[^>]+>", "", td)).strip()
                    for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)])
    return out


def test_the_page_loads_nothing_from_elsewhere(repo):
    page = page_of(repo, "--no-fixer")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", page)
    assert "@import" not in page and "url(" not in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp
    # Only the page's own script runs: its hash is the policy's.
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp


def test_modules_and_files_count_the_findings(repo):
    page = page_of(repo, "--no-fixer")
    found = scan.scan_paths(["."]).findings
    s = stats.statistics(found)
    modules = {r[0]: r for r in rows(page, "modules")}
    assert set(modules) == set(s.by_module)
    for m, c in s.by_module.items():
        assert modules[m][2:6] == [str(c.api), str(c.literal), str(c.idiom), str(c.total)], m
    # Each file's tile carries its count, and links to its list.
    for path, c in s.by_file.items():
        tile = re.search(rf'<a href="#file-(\d+)" data-file="\1" data-path="{re.escape(path)}" '
                         rf'data-count="(\d+)"', page)
        assert tile and int(tile.group(2)) == c.total, path
        assert f'id="list-{tile.group(1)}" data-path="{path}"' in page
        assert f'<table id="file-{tile.group(1)}" class="findings">' in page


def test_the_fixer_says_what_it_refuses_and_why(repo):
    # pyproject.toml asks for torch>=2.1: torch.cuda.set_device's replacement
    # (AD104) came in 2.7, so the fixer refuses it, and says so.
    page = page_of(repo)
    assert "needs torch &gt;= 2.7 (target 2.1)" in page
    reasons = rows(page, "reasons")
    assert reasons and all(int(n) > 0 for n, _ in reasons)
    verdicts = {v: int(n) for v, n in re.findall(
        r'<tr data-verdict="(\w+)">.*?<td class="n">([\d,]+)</td>', page)}
    assert list(verdicts) == ["safe", "unsafe", "refused", "manual"]
    assert sum(verdicts.values()) == len(scan.scan_paths(["."]).findings)
    assert verdicts["refused"] > 0
    # torch.cuda.stream (AD111) has no automatic fix: a human's, with what to do.
    manual = {r[0]: r for r in rows(page, "manual")}
    assert list(manual) == ["AD111"] and manual["AD111"][1:3] == ["torch.cuda.stream", "1"]
    assert verdicts["manual"] == 1


def test_what_raising_the_floor_unlocks(repo):
    page = page_of(repo, "--no-fixer")
    s = stats.statistics(scan.scan_paths(["."]).findings, target="2.1")
    first = next(u for u in s.unlocks if u.more_safe)
    headline = html.unescape(re.sub(r"<[^>]+>", "", re.search(
        r'<p class="headline" id="unlock">(.*?)</p>', page).group(1)))
    assert headline.startswith(f"Raising the floor to torch {first.torch} makes "
                               f"{first.more_safe} more fix")
    releases = {r[0]: r for r in rows(page, "releases")}
    assert set(releases) == set(s.by_release)
    for u in s.unlocks:
        assert releases[u.torch][4] == f"+{u.more_safe} safe, +{u.more_unsafe} unsafe"


def test_the_baseline_share(repo):
    rc, _, err = run_cli("scan", "--write-baseline", "base.json", "pkg/util.py")
    assert rc == 0, err
    (repo / "pkg" / "new.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    page = page_of(repo, "--no-fixer", "--baseline", "base.json")
    util = len(scan.scan_paths(["pkg/util.py"]).findings)
    total = len(scan.scan_paths(["."]).findings)
    text = html.unescape(re.sub(r"<[^>]+>", "", re.search(r'<p id="baseline">(.*?)</p>',
                                                         page, re.S).group(1)))
    assert f"accepts {util} findings; {total - util} findings are new" in text
    assert "0 entries of it no longer match" in text
    modules = {r[0]: r for r in rows(page, "modules")}
    assert modules["pkg"][-1] == str(util)  # the accepted column


def test_what_really_runs(repo):
    report = runtime_report(repo)
    page = page_of(repo, "--no-fixer", "--report", str(report))
    sites = {(r[1], r[2]): r for r in rows(page, "sites")}
    train = os.path.join("pkg", "train.py")
    # hot() ran 100 times: each of its legacy calls is one row, with its count.
    assert sites[(f"{train}:10", "AD104")][4:7] == ["100", "1", "run and scan"]
    # cd() and torch.cuda.device_count() on one line: two sites, by their rules.
    assert sites[(f"{train}:11", "AD103")][4:6] == ["100", "1"]
    assert sites[(f"{train}:11", "AD102")][4:6] == ["100", "1"]
    # getattr(torch.cuda, "synchronize")() is invisible to the scanner.
    assert sites[(f"{train}:13", "AD107")][4:7] == ["100", "0", "run only"]
    assert len(sites) == len(rows(page, "sites"))  # one row per site
    # place() never ran: its findings are in the list of sites that never ran,
    # and marked so in the file's own list.
    never = page.split('id="static-sites"', 1)[1].split("</details>", 1)[0]
    assert re.search(rf"{re.escape(train)}:19</a></td><td>AD903</td>", never)
    n = re.search(rf'<details class="file" id="list-(\d+)" data-path="{re.escape(train)}"',
                  page).group(1)
    mine = {(r[0], r[1]): r[-1] for r in rows(page, f"file-{n}")}
    assert mine[("19", "AD903")] == "never" and mine[("10", "AD104")] == "100×"
    # The modules: the sites found, how many of them ran, how many never did.
    by_module = {r[0]: r[1:] for r in rows(page, "sites-by-module")}
    both = page.count('<tr data-status="both">')
    static = page.count('<tr data-status="static">')
    assert both == 4 and static > 0  # hot()'s four sites the scanner sees
    assert by_module["pkg"][:4] == [str(both + static), str(both), str(static), "1"]


def test_sites_join_into_one_row_in_the_page(repo):
    # Two spellings of one site (the run's absolute path, the scan's relative
    # one) and the CUDA-only marker of a run on sim (Note [CUDA-only marker]).
    report = json.loads(runtime_report(repo).read_text())
    for c in report["calls"]:
        if c["line"] == 12:
            c["cuda_only"], c["raised"] = True, 0
    (repo / "sim.json").write_text(json.dumps(report))
    page = page_of(repo, "--no-fixer", "--report", "sim.json")
    body = rows(page, "sites")
    assert body[0][0] == "CUDA-only" and body[0][1].endswith("train.py:12")
    assert "asked for CUDA while another accelerator was current" in body[0][6]
    assert len({r[1] + r[2] for r in body}) == len(body)
    assert 'id="cuda-only"' in page


SIM_APP = """\
import torch


def pick():
    return "cuda" if torch.cuda.is_available() else "cpu"


def move(x):
    try:
        return x.cuda()
    except (AssertionError, RuntimeError):
        return x


for _ in range(3):
    pick()
move(torch.zeros(2))
torch.accelerator.synchronize()
"""


def test_the_cuda_only_sites_of_a_run_on_sim_come_first_and_marked(tmp_path, monkeypatch):
    # A real run on sim inside PyTorch (anydev run --torch --accelerator sim): the report's
    # CUDA-only sites, as anydev._torch.cuda_only writes them, are first on the page,
    # marked, with their calls and how many raised.
    pytest.importorskip("torch")
    (tmp_path / "app.py").write_text(SIM_APP)
    p = subprocess.run([sys.executable, "-m", "anydev", "run", "--torch", "--accelerator", "sim",
                        "--report", "run.json", "app.py"], cwd=tmp_path, env=clean_env(),
                       capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    monkeypatch.chdir(tmp_path)
    page = page_of(tmp_path, "--no-fixer", "--report", "run.json")
    body = rows(page, "sites")
    flagged = [(r[0], r[1], r[2], r[6]) for r in body if r[0] == "CUDA-only"]
    assert flagged == [
        ("CUDA-only", "app.py:5", "AD101", "run and scan — asked for CUDA while another "
         "accelerator was current (3 calls, none raised)"),
        ("CUDA-only", "app.py:10", "AD907", "run and scan — asked for CUDA while another "
         "accelerator was current (1 call, 1 raised)")]
    assert [r[0] for r in body[:2]] == ["CUDA-only", "CUDA-only"]
    assert '<p class="callout" id="cuda-only">2 sites asked for CUDA' in page


def test_history_in_the_page(repo):
    page = page_of(repo, "--no-fixer", "--history")
    hist = rows(page, "history")
    assert [r[0] for r in hist] == ["2024-01-15", "2024-02-15", "2024-03-15", "2024-04-15"]
    totals = [int(r[-1]) for r in hist]
    assert totals[-1] == len(scan.scan_paths(["."]).findings)
    points = re.findall(r'<circle class="p-total"[^>]* data-value="(\d+)"', page)
    assert [int(v) for v in points] == totals
    page = page_of(repo, "--no-fixer", "--history-tags")
    assert [r[1] for r in rows(page, "history")] == ["v1.0", "v1.1", "HEAD"]


def test_file_names_are_text_not_markup(repo):
    odd = repo / "pkg" / "<b>&odd\".py"
    odd.write_text("import torch\ntorch.cuda.synchronize()\n")
    page = page_of(repo, "--no-fixer")
    assert "&lt;b&gt;&amp;odd&quot;.py" in page
    assert "<b>&" not in page


def test_bad_input_is_a_clear_error(repo, tmp_path):
    (repo / "bad.json").write_text("{not json")
    rc, _, err = run_cli("report", "html", ".", "--no-fixer", "--report", "bad.json",
                         "-o", str(tmp_path / "x.html"))
    assert rc == 2 and "anydev report html: bad.json: corrupt JSON" in err
    rc, _, err = run_cli("report", "html", "missing", "-o", str(tmp_path / "x.html"))
    assert rc == 2 and "missing: no such file or directory" in err
    rc, _, err = run_cli("report", "html", ".", "--baseline", "nope.json", "--no-fixer",
                         "-o", str(tmp_path / "x.html"))
    assert rc == 2 and "baseline not found" in err
    rc, _, err = run_cli("report", "html", ".", "--no-fixer", "-o",
                         str(tmp_path / "no" / "such" / "dir.html"))
    assert rc == 2 and "cannot write" in err
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    os.chdir(outside)
    rc, _, err = run_cli("report", "html", ".", "--history", "--no-fixer", "-o", "x.html")
    assert rc == 2 and "not in a git work tree" in err
    assert not (outside / "x.html").exists()


def test_an_empty_tree_is_a_page_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_cli("report", "html", ".", "-o", "page.html")
    assert rc == 0, err
    page = (tmp_path / "page.html").read_text()
    assert "No legacy finding" in page and "</html>" in page


def test_the_model_without_the_cli(repo):
    found = scan.scan_paths(["."])
    d = model.build(found, paths=["."], fixer=False, version="x")
    assert len(d.items) == len(found.findings)
    assert {i.verdict for i in d.items} <= {"safe", "unsafe", "manual"}
    page = render.page(d)
    assert page.endswith("</html>\n")
