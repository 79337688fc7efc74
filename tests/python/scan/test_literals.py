"""Device literals and idioms (the AD9xx rules of compat_map/literals.toml):
what the scanner reports beyond the fixtures (opt-in rules, the detectors'
needles, bad rule sets), `anydev rule` for each rule, the statistics per
module, and the runtime counts of .cuda() calls on the real PyTorch."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import uuid
import importlib
import warnings
from pathlib import Path

import pytest

from anydev import _C
from anydev._compat import table as _compat_table
from anydev.scan import rule_filter, scan_paths, scan_source
from conftest import run_cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "scan"
LITERAL_ROWS = [r for r in _compat_table.ROWS if r.status == "literal"]


def _rules(findings) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in findings]


# --- the scanner -----------------------------------------------------------------------


def test_every_literal_row_has_a_finding_in_the_fixtures():
    found = set()
    for p in FIXTURES.iterdir():
        if p.name.endswith(".expected.json"):
            found |= {f["rule"] for f in json.loads(p.read_text())["findings"]}
    missing = {r.code for r in LITERAL_ROWS if not r.opt_in} - found
    assert missing == set()


def test_the_hint_rule_is_off_unless_selected():
    src = "import torch\nname = torch.cuda.get_device_name(0)\np = torch.cuda.get_device_properties(0)\n"
    assert scan_source(src, "m.py")[0] == []  # kept rows, and AD911 is opt-in
    for select in (["AD911"], ["AD9"], ["ALL"]):
        found = scan_source(src, "m.py", select=select)[0]
        assert _rules(found) == [(2, "AD911"), (3, "AD911")], select
        assert found[0].symbol == "torch.cuda.get_device_name" and found[0].kind == "call"
        assert "torch.get_device_module" in found[0].message
    assert scan_source(src, "m.py", select=["AD1"])[0] == []
    keep = rule_filter()
    assert keep("AD901") and not keep("AD911")
    assert rule_filter(["AD9"])("AD911") and not rule_filter(["AD9"], ["AD911"])("AD911")


def test_scan_paths_applies_the_same_default(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nx = torch.cuda.get_device_name()\ny = t.cuda()\n")
    assert _rules(scan_paths([str(tmp_path)]).findings) == [(3, "AD907")]
    assert _rules(scan_paths([str(tmp_path)], select=["AD911"]).findings) == [(2, "AD911")]


def test_half_migrated_idiom_is_still_the_idiom():
    """What the API fixer leaves: "cuda" behind an accelerator-generic check."""
    src = 'import torch\nd = "cuda:0" if torch.accelerator.is_available() else "cpu"\n'
    (f,) = scan_source(src, "m.py")[0]
    assert (f.rule, f.kind, f.text) == (
        "AD905", "idiom", '"cuda:0" if torch.accelerator.is_available() else "cpu"')


def test_a_literal_not_in_a_device_position_is_no_finding():
    src = textwrap.dedent("""\
        import torch
        print("cuda")
        d = {"cuda": 1}
        d["cuda"]
        if args.device == "cuda":
            pass
        x = "cuda" if flag else "cpu"
        y = torch.zeros(2, device=dev)
        """)
    assert scan_source(src, "m.py")[0] == []


def test_device_keywords_of_config_containers_are_no_finding():
    """Issue 12: a device= keyword stored in a container of settings is a
    value for later, not a device position; torch factories, module
    constructors and the user's own functions still are."""
    src = textwrap.dedent("""\
        import argparse, collections, types
        import torch
        a = types.SimpleNamespace(device="cuda")
        b = SimpleNamespace(device="cuda:0")
        c = dict(device="cuda", n=1)
        d = collections.OrderedDict(device="cuda")
        e = collections.defaultdict(int, device="cuda")
        parser.add_argument("--device", default="cuda")
        parser.add_argument("--x", device="cuda")
        parser.set_defaults(device="cuda")
        ns = argparse.Namespace(device="cuda")
        cfg.update(device="cuda")
        cfg.setdefault("device", "cuda")
        f = EasyDict(device="cuda")
        g = edict(device="cuda")
        """)
    assert scan_source(src, "m.py")[0] == []
    src = textwrap.dedent("""\
        import torch
        x = torch.zeros(2, device="cuda")
        m = torch.nn.Linear(2, 2, device="cuda:0")
        y = make_model(device="cuda")
        z = dict(model=torch.zeros(1, device="cuda"))
        w = cfg.build(device="cuda")
        """)
    assert _rules(scan_source(src, "m.py")[0]) == [(2, "AD902"), (3, "AD902"), (4, "AD902"),
                                                   (5, "AD902"), (6, "AD902")]


def test_device_type_comparison_in_either_order():
    """Issue 12: `"cuda" != torch.zeros(2).device.type` had no finding, its
    mirror image had one."""
    src = textwrap.dedent("""\
        import torch
        a = torch.zeros(2).device.type != "cuda"
        b = "cuda" != torch.zeros(2).device.type
        c = "cuda" == x.device.type
        d = "cuda" == xs[0].device.type
        e = "cuda" == model(x)[0].device.type
        f = "cuda" == x.device.type.upper()
        g = "cuda" == args.device
        h = "cuda" == x.type
        i = "cuda" == torch.zeros(2).device
        """)
    found = scan_source(src, "m.py")[0]
    assert _rules(found) == [(2, "AD909"), (3, "AD909"), (4, "AD909"), (5, "AD909"),
                             (6, "AD909")]
    assert all(f.text == '"cuda"' for f in found)


# One of each device position (and two that are none), as the arguments of one call.
LONG_LINE_ITEMS = ['device="cuda"', '"cuda"', 'torch.device("cuda")', 'x.to("cuda")',
                   '["cuda", "cpu"]', 'y.cuda(z.cuda())', 'torch.device(type="cuda")',
                   'torch.autocast("cuda")',
                   'g("cuda" if torch.cuda.is_available() else "cpu")']


def _long_line(n: int) -> str:
    return "import torch\nf(" + ", ".join(LONG_LINE_ITEMS * n) + ")\n"


def test_many_literals_on_one_line_each_in_its_own_call():
    """Issue 14: each string's enclosing call was found by reading back to the
    start of the call, so one line of 40,000 "cuda" arguments took seconds.
    On a line of n copies of the same arguments, copy i has the findings of
    the one-copy line, shifted by i copies (benchmarks/scan/bench_costs.py
    checks that the time grows linearly)."""
    def key(f, shift):
        return (f.line, f.column - shift, f.end_column - shift, f.rule, f.kind, f.text,
                None if f.call_end is None else f.call_end - shift)

    one = scan_source(_long_line(1), "m.py")[0]
    assert [f.rule for f in one] == ["AD902", "AD901", "AD903", "AD907", "AD907", "AD901",
                                     "AD904", "AD905", "AD101"]
    width = len(", ".join(LONG_LINE_ITEMS)) + 2  # one copy and its ", "
    n = 2000
    many = scan_source(_long_line(n), "m.py")[0]
    assert len(many) == n * len(one)
    for i in range(n):
        got = [key(f, i * width) for f in many[i * len(one):(i + 1) * len(one)]]
        assert got == [key(f, 0) for f in one], i


def test_nested_cuda_calls_end_where_their_brackets_close():
    """Each call's end used to be found by a scan forwards from its '('."""
    n = 3000
    src = "import torch\nx" + ".cuda(y" * n + ")" * n + "\n"
    found = scan_source(src, "m.py")[0]
    line_start = len("import torch\n")
    assert [(f.rule, f.start - line_start, f.call_end - line_start) for f in found] == [
        ("AD907", 2 + 7 * i, 1 + 7 * n + (n - i)) for i in range(n)]
    src = "void f() {\n  x" + ".cuda(y" * n + ")" * n + ";\n}\n"
    found = scan_source(src, "m.cpp")[0]
    line_start = len("void f() {\n  ")
    assert {f.rule for f in found} == {"AD952"} and len(found) == n
    assert [(f.start - line_start, f.call_end - line_start) for f in found] == [
        (2 + 7 * i, 1 + 7 * n + (n - i)) for i in range(n)]
    src = "import torch\n" + "torch.cuda.synchronize(" * n + ")" * n + "\n"
    found = scan_source(src, "m.py")[0]
    width, line_start = len("torch.cuda.synchronize("), len("import torch\n")
    assert [(f.start - line_start, f.call_end - line_start) for f in found] == [
        (width * i, width * n + (n - i)) for i in range(n)]


def test_malformed_nested_conditionals_cost_their_length_once():
    """Issue 14: each value of `"cuda" if "cuda" if ... else X` (invalid
    Python) scanned forwards for its `else`, so n of them on one line cost
    n^2 (benchmarks/scan/bench_costs.py prints the ratio). The findings are
    those of one copy, shifted: each call of the condition, and the idiom
    only where its `else` branch is the CPU."""
    cond = "torch.cuda.is_available()"
    n = 3000
    src = "import torch\nd = " + ('"cuda" if ' + cond + " if ") * n + ' else "gpu"\n'
    found = scan_source(src, "m.py")[0]
    width = len('"cuda" if ' + cond + " if ")
    assert [(f.rule, f.line, f.column) for f in found] == [
        ("AD101", 2, 15 + width * i) for i in range(n)]
    src = "import torch\nd = " + '"cuda" if ' * n + cond + ' else "cpu"\n'
    found = scan_source(src, "m.py")[0]
    assert [(f.rule, f.kind, f.column, f.end_column) for f in found] == [
        ("AD905", "idiom", 5, 5 + len(src) - len("import torch\nd = ") - 1),
        ("AD101", "call", 5 + 10 * n, 5 + 10 * n + len("torch.cuda.is_available"))]
    # The same in brackets, each level a bracket of its own, and a valid
    # idiom after every malformed one.
    src = "import torch\nd = " + '("cuda" if ' * n + cond + ' else "gpu")' * n + "\n"
    assert [f.rule for f in scan_source(src, "m.py")[0]] == ["AD101"]
    one = '"cuda" if ' + cond + ' if x else "gpu", "cuda" if ' + cond + ' else "cpu", '
    src = "import torch\nf(" + one * n + ")\n"
    found = scan_source(src, "m.py")[0]
    first = [(f.rule, f.column) for f in scan_source("import torch\nf(" + one + ")\n", "m.py")[0]]
    assert [rule for rule, _ in first] == ["AD101", "AD905", "AD101"]
    assert [(f.rule, f.column) for f in found] == [
        (rule, col + len(one) * i) for i in range(n) for rule, col in first]


def test_suppression_comments_apply_to_literal_rules():
    src = ('import torch\nx = torch.zeros(1, device="cuda")  # anydev: ignore[AD902]\n'
           'y = t.cuda()  # anydev: ignore[AD9]\nz = t.cuda()\n')
    assert _rules(scan_source(src, "m.py")[0]) == [(4, "AD907")]


def test_detector_needles_cover_every_literal_finding():
    """The strings the native RuleSet says its detectors need (for a
    prefilter that skips files without them) occur in every literal finding's
    span: skipping a file without any of them loses no finding."""
    from anydev.scan import _rules as native_rules

    native, _ = native_rules()
    needles = {lang: native.detector_needles(lang) for lang in ("python", "cpp")}
    assert set(needles["python"]) == {"cuda", "is_cuda", "nccl"}
    assert set(needles["cpp"]) == {"CUDA", "cuda", "is_cuda"}
    seen = 0
    for p in FIXTURES.iterdir():
        if p.name.endswith(".expected.json") or p.name.endswith(".md"):
            continue
        data = p.read_bytes()
        try:
            found, _ = scan_source(data, p.name, select=["ALL"])
        except ValueError:
            continue
        for f in found:
            if not f.rule.startswith("AD9") or f.rule == "AD911":
                continue
            span = data[f.start:max(f.end, f.call_end or 0)].decode("utf-8", "replace")
            assert any(n in span for n in needles[f.language]), (p.name, f)
            seen += 1
    assert seen >= 50


def test_an_unknown_detector_is_refused():
    with pytest.raises(ValueError, match="AD999: unknown detector 'py.nothing'"):
        _C._scan.RuleSet([("AD999", "python", False, [], "py.nothing")])


# --- anydev rule ---------------------------------------------------------------------------


@pytest.mark.parametrize("row", LITERAL_ROWS, ids=[r.code for r in LITERAL_ROWS])
def test_rule_docs_for_every_literal_rule(row):
    rc, out, _ = run_cli("rule", row.code)
    assert rc == 0
    assert out.startswith(f"{row.code}: {row.legacy}\n")
    assert f"replacement:    {row.replacement}" in out and "fix:            unsafe:" in out
    assert f"defined at:     compat_map/literals.toml:" in out
    assert "\nWhy\n" in out and row.note.split()[0] in out
    before, after = row.example
    assert "\nExample\n  before:\n" in out
    assert all(f"    {line}" in out for line in before.splitlines())
    assert all(f"    {line}" in out for line in after.splitlines())
    # the template names what PyTorch `since` has (the replacement, at least)
    assert row.replacement.rsplit(".", 1)[-1].split("::")[-1] in row.template + row.note
    rc, out, _ = run_cli("rule", row.code, "--format", "json")
    doc = json.loads(out)
    assert doc["status"] == "literal" and doc["example"] == {"before": [before], "after": [after]}


def test_rule_list_shows_the_literal_rules_with_their_fix():
    rc, out, _ = run_cli("rule", "--all")
    assert rc == 0
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert lines["AD905"].split()[1] == "unsafe" and lines["AD120"].split()[1] == "kept"


# --- anydev scan --statistics --------------------------------------------------------------


def test_statistics_separate_api_and_literal_findings_per_module(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(textwrap.dedent("""\
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
        x = torch.zeros(2, device="cuda").cuda()
        torch.cuda.synchronize()
        """))
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "op.cc").write_text("void f(at::Tensor x) { TORCH_CHECK(x.is_cuda()); }\n")
    (tmp_path / "top.py").write_text("import torch\ntorch.cuda.empty_cache()\n")
    rc, out, _ = run_cli("scan", "--statistics")
    assert rc == 1
    section = out[out.index("By module: API references | device literals and idioms:"):]
    rows = [line.split() for line in section.splitlines()[1:6]]
    assert rows == [["api", "lit", "module"], ["2", "3", "pkg"], ["1", "0", "."],
                    ["0", "1", "csrc"], ["3", "4", "(all)"]]
    assert "By kind: 5 calls, 0 references, 0 imports, 1 literals, 1 idioms." in out


# --- anydev run --torch: .cuda() calls counted ------------------------------------------


CALLS = """\
import torch


def tensor_cuda(x, n):
    for _ in range(n):
        try:
            x.cuda()
        except (AssertionError, RuntimeError):
            pass


def module_cuda(m):
    try:
        m.cuda()
    except (AssertionError, RuntimeError):
        pass
    return m
"""


@pytest.fixture
def counted(tmp_path, monkeypatch):
    from anydev._torch import adapter
    from anydev import compat

    uid = uuid.uuid4().hex[:8]
    mods = {}
    for role in ("inside", "outside"):
        name = f"ad_lit_{role}_{uid}"
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
        (tmp_path / name / "calls.py").write_text(CALLS)
        mods[role] = name
    monkeypatch.syspath_prepend(str(tmp_path))
    _C._compat.reset()
    yield adapter, mods, {r: importlib.import_module(f"{n}.calls") for r, n in mods.items()}
    adapter.uninstall()
    compat.reset_policy()
    _C._compat.reset()


def _counts(pkg: str) -> set:
    return {(c["line"], c["legacy"], c["scope"], c["count"]) for c in _C._compat.snapshot()
            if f"{os.sep}{pkg}{os.sep}" in c["file"]}


@pytest.mark.parametrize("mode", ["observe", "forward"])
def test_cuda_calls_are_counted_per_site_and_reach_the_original(counted, mode):
    """On the CPU build .cuda() raises: each call is counted before the original raises."""
    import torch

    adapter, mods, calls = counted
    tensor_cuda = torch.Tensor.cuda  # the originals' behaviour: raise on a CPU build
    assert adapter.install(mode, packages=[mods["inside"]])["counted"] == {
        "torch.Tensor.cuda": "method", "torch.nn.Module.cuda": "method"}
    x = torch.zeros(2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        calls["inside"].tensor_cuda(x, 3)
        calls["outside"].tensor_cuda(x, 2)
        m = calls["inside"].module_cuda(torch.nn.Linear(2, 2))
        calls["inside"].module_cuda(torch.nn.Sequential())  # no parameters: succeeds
    assert isinstance(m, torch.nn.Linear) and next(m.parameters()).device.type == "cpu"
    assert _counts(mods["inside"]) == {(7, "torch.Tensor.cuda", "in", 3),
                                       (14, "torch.nn.Module.cuda", "in", 2)}
    assert _counts(mods["outside"]) == {(7, "torch.Tensor.cuda", "out", 2)}
    # Module.cuda's own Tensor.cuda calls are PyTorch's (internal): not counted as sites
    assert {c["legacy"] for c in _C._compat.snapshot() if "torch" + os.sep + "nn" in c["file"]} \
        == set()
    msgs = {str(r.message) for r in rec if r.filename.endswith("calls.py")}
    assert msgs == {
        "torch.Tensor.cuda() is CUDA-specific; use "
        "Tensor.to(torch.accelerator.current_accelerator()) [AD907]",
        "torch.nn.Module.cuda() is CUDA-specific; use "
        "Module.to(torch.accelerator.current_accelerator()) [AD907]"}
    adapter.uninstall()
    assert "cuda" not in torch.Tensor.__dict__ and torch.Tensor.cuda is tensor_cuda
    assert torch.nn.Module.__dict__["cuda"].__module__ == "torch.nn.modules.module"


def test_run_torch_reports_the_cuda_sites(tmp_path):
    import subprocess

    (tmp_path / "s.py").write_text(textwrap.dedent("""\
        import torch
        x = torch.zeros(1)
        for _ in range(4):
            try:
                x.cuda()
            except (AssertionError, RuntimeError):
                pass
        """))
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.run([sys.executable, "-m", "anydev", "run", "--torch", "s.py"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    assert "s.py:5" in p.stderr and "torch.Tensor.cuda" in p.stderr and "AD907" in p.stderr


def test_deselected_literal_rules_cost_nothing():
    """--ignore AD9 (or a --select without them) builds a RuleSet without the
    detectors: the native pass does not run."""
    from anydev.scan import _rules as native_rules

    assert native_rules(rule_filter(None, ["AD9"]))[0].detector_needles("python") == []
    assert native_rules(rule_filter(["AD1"]))[0].detector_needles("cpp") == []
    assert native_rules(rule_filter(["AD907"]))[0].detector_needles("python") == ["cuda"]
    assert native_rules(rule_filter())[0] is native_rules()[0]
    src = "import torch\nx = y.cuda()\ntorch.cuda.synchronize()\n"
    assert _rules(scan_source(src, "m.py", ignore=["AD9"])[0]) == [(3, "AD107")]


def test_the_prefilter_keeps_files_with_only_literal_findings(tmp_path):
    """A file whose only CUDA-specific code is a literal (no `cuda` API name):
    the native prefilter must not skip it (a literal rule's needle is its
    detector's: "CUDA", "nccl")."""
    (tmp_path / "op.cc").write_text("auto o = x.options().device(at::kCUDA);\n")
    (tmp_path / "dist.py").write_text(
        "import torch.distributed as dist\ndist.init_process_group('nccl')\n")
    got = [(os.path.basename(f.path), f.rule) for f in scan_paths([str(tmp_path)]).findings]
    assert got == [("dist.py", "AD910"), ("op.cc", "AD951")]
