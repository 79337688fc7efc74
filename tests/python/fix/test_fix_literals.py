"""The literal fixer (anydev._migrate.fix.literals): device literals and idioms (AD9xx)
rewritten under --unsafe-fixes, a function at a time, with the target torch's
spelling; expected findings and fixed output of every form (and of the strings
that are no device), the unit rule, and the fixed code run on the real torch.

Regenerate the expected files after a deliberate change with
``ANYDEV_UPDATE_FIXTURES=1 pytest tests/python/fix/test_fix_literals.py`` and review
the diff.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from anydev._migrate.fix import wrap as _wrap
from anydev.fix import fix_source
from anydev.scan import scan_source
from conftest import run_cli
from fix_default import newest_default_target  # noqa: F401 (autouse)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SCAN = FIXTURES / "scan"
OUT = FIXTURES / "fix_literals"
UPDATE = os.environ.get("ANYDEV_UPDATE_FIXTURES") == "1"

# (source, where its expected outputs live)
SOURCES = [SCAN / "literals.py", SCAN / "literals_negatives.py", OUT / "units.py"]
# mode -> (target torch, unsafe)
MODES = {"2.13": ("2.13", True), "2.6": ("2.6", True), "2.1": ("2.1", True),
         "safe": ("2.13", False)}


def _fix(data: bytes, name: str, target: str, unsafe: bool):
    findings, errors = scan_source(data, name)
    assert not errors
    new, applied, skipped = fix_source(data, name, findings, unsafe=unsafe, target_torch=target)
    return findings, new, applied, skipped


def _dump(findings, applied, skipped) -> str:
    doc = {"findings": [[f.line, f.rule] for f in findings],
           "applied": [[f.line, f.rule] for f in applied],
           "skipped": [[f.line, f.rule, why] for f, why in skipped]}
    return "{\n" + ",\n".join(
        f' "{k}": [' + ("\n" + ",\n".join("  " + json.dumps(i) for i in v) + "\n ]" if v else "]")
        for k, v in doc.items()) + "\n}\n"


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("src", SOURCES, ids=[p.name for p in SOURCES])
def test_fixture(src: Path, mode: str):
    target, unsafe = MODES[mode]
    data = src.read_bytes()
    findings, new, applied, skipped = _fix(data, src.name, target, unsafe)
    report = OUT / f"{src.name}.{mode}.fix.json"
    fixed = OUT / f"{src.name}.{mode}.fixed"
    if UPDATE:
        report.write_text(_dump(findings, applied, skipped), encoding="utf-8")
        if new != data:
            fixed.write_bytes(new)
        elif fixed.exists():
            fixed.unlink()
    assert report.read_text(encoding="utf-8") == _dump(findings, applied, skipped)
    assert new == (fixed.read_bytes() if fixed.exists() else data)


def _literal_findings(src: bytes, name: str):
    findings, _ = scan_source(src, name)
    return [f for f in findings if f.rule.startswith("AD9")]


def test_the_strings_that_are_no_device_are_no_findings_and_stay():
    data = (SCAN / "literals_negatives.py").read_bytes()
    assert _literal_findings(data, "n.py") == []
    _, new, applied, _ = _fix(data, "n.py", "2.13", True)
    # only the mock target's API finding may move: no "cuda" string is touched
    assert all(not f.rule.startswith("AD9") for f in applied)
    assert new.count(b'"cuda"') == data.count(b'"cuda"')


@pytest.mark.parametrize("src", SOURCES, ids=[p.name for p in SOURCES])
def test_fixed_code_compiles_is_stable_and_leaves_no_cuda_behind_a_generic_check(
        src: Path, monkeypatch):
    # the findings left are matched by line: no line is wrapped (anydev._migrate.fix.wrap)
    monkeypatch.setattr(_wrap, "DEFAULT_LENGTH", 10_000)
    data = src.read_bytes()
    _, new, applied, skipped = _fix(data, src.name, "2.13", True)
    compile(new, src.name, "exec", dont_inherit=True)
    # a second run changes nothing
    _, again, applied2, _ = _fix(new, src.name, "2.13", True)
    assert again == new and applied2 == []
    # the literals left are exactly those reported as left
    left = sorted((f.line, f.rule) for f, _ in skipped if f.rule.startswith("AD9"))
    tree = ast.parse(new)
    # no function with a generic check keeps a literal finding
    remaining = _literal_findings(new, src.name)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        body = fn.body if not isinstance(fn, ast.Module) else \
            [s for s in fn.body if not isinstance(s, (ast.FunctionDef, ast.ClassDef))]
        generic = any("torch.accelerator.is_available" in ast.unparse(s)
                      or "torch.accelerator.device_count" in ast.unparse(s) for s in body)
        if not generic:
            continue
        lines = {ln for s in body for ln in range(s.lineno, s.end_lineno + 1)}
        behind = [f for f in remaining if f.line in lines]
        assert not behind, (src.name, getattr(fn, "name", "<module>"), behind)
    if src.name == "units.py":  # (its one collapsed statement is the last)
        # every literal still there was reported as left (the `# noqa` one is no finding)
        assert {(f.line, f.rule) for f in remaining} <= set(left)
        assert len(left) - len(remaining) == 1


def _why(skipped, line, rule):
    return next(w for f, w in skipped if f.line == line and f.rule == rule)


def test_a_unit_falls_whole_and_each_finding_names_the_blocker():
    data = (OUT / "units.py").read_bytes()
    _, new, applied, skipped = _fix(data, "units.py", "2.13", True)
    text = new.decode()
    # migrates: the guard, the idiom (str form) and the guarded literals together
    assert 'device = (\n        torch.accelerator.current_accelerator(check_available=True)\n' \
           '        or torch.device("cpu")\n    ).type' in text
    assert "    if torch.accelerator.is_available():\n        model = model.to(" in text
    # blocked_by_noqa: a suppressed literal keeps its whole function
    why = _why(skipped, 19, "AD101")
    assert "`def blocked_by_noqa`" in why and "suppressed by a `# noqa` comment" in why
    assert "        x = x.cuda()\n        y = torch.zeros(2, device=\"cuda\")  # noqa" in text
    # an unreadable .cuda(dev) keeps the guard and the .to("cuda") after it
    assert "cannot tell that `dev` is a device index" in _why(skipped, 29, "AD903")
    # a kept torch.cuda call under the guard: the guard is refused, so the unit falls
    assert "torch.cuda.get_device_properties" in _why(skipped, 35, "AD903")
    # a CUDA stream keeps its device without blocking the rest of its function
    assert "CUDA-only object" in _why(skipped, 40, "AD902")
    assert "return x.to(torch.accelerator.current_accelerator())" in text
    # device homes and version-guarded fallbacks keep their literals
    assert "named for cuda" in _why(skipped, 47, "AD907")
    assert "version-guarded fallback" in _why(skipped, 54, "AD901")
    # a module-level if/else statement form
    assert 'DEFAULT = (\n    torch.accelerator.current_accelerator(check_available=True) or ' \
           'torch.device("cpu")\n)' in text


def test_without_unsafe_fixes_nothing_of_a_unit_moves():
    data = (OUT / "units.py").read_bytes()
    _, new, applied, skipped = _fix(data, "units.py", "2.13", False)
    assert not [f for f in applied if f.rule.startswith("AD9")]
    why = _why(skipped, 12, "AD101")  # the guard of `migrates` stays with its literals
    assert "--unsafe-fixes" in why and "`def migrates`" in why


def test_the_target_torch_decides_the_spelling_and_refuses_what_it_lacks():
    src = ("import torch\n\n\ndef f(x):\n"
           "    device = \"cuda\" if torch.cuda.is_available() else \"cpu\"\n"
           "    return x.cuda(), device\n\n\ndef g(x):\n    return x.cuda()\n")
    for target, moved in (("2.1", False), ("2.6", False), ("2.7", True)):
        _, new, applied, skipped = _fix(src.encode(), "t.py", target, True)
        assert (b"current_accelerator(check_available=True)" in new) is moved, target
        if not moved:
            why = _why(skipped, 5, "AD905")
            assert why == f"needs torch >= 2.7 (target {target})"
            # .cuda() in the same function is left with it: for its own reason
            # where the target lacks it too, else naming the blocker
            why = _why(skipped, 6, "AD907")
            assert why == f"needs torch >= 2.6 (target {target})" if target == "2.1" else \
                "`def f`" in why and "AD905" in why and "needs torch >= 2.7" in why
    # g has only .cuda() (since 2.6): 2.6 rewrites it, 2.1 does not
    _, new, _, skipped = _fix(src.encode(), "t.py", "2.6", True)
    assert (b'    return x.to(\n        torch.device(getattr(torch.accelerator.current_accelerator(), '
            b'"type", "cuda"))\n    )\n') in new
    _, new, _, skipped = _fix(src.encode(), "t.py", "2.1", True)
    assert _why(skipped, 10, "AD907") == "needs torch >= 2.6 (target 2.1)"


def test_fixed_literals_run_on_the_real_torch_and_give_the_cpu_results():
    torch = pytest.importorskip("torch")
    if torch.accelerator.is_available():
        pytest.skip("the CPU-machine results need a machine without an accelerator")
    data = (SCAN / "literals.py").read_bytes()
    _, new, _, _ = _fix(data, "literals.py", "2.13", True)
    ns: dict = {"__name__": "fixed_literals"}
    exec(compile(new, "literals.py", "exec"), ns)  # module level: the idioms run
    assert ns["device"] == "cpu" and ns["self_device"] == torch.device("cpu")
    assert ns["x"].device.type == "cpu"
    # torch.device("cuda:0") became torch.device(<accelerator type, else "cuda">, 0):
    # without an accelerator it gives the CUDA devices it gave before, as AD901's note says
    assert ns["devices"](0, 1) == (torch.device("cuda"), torch.device("cuda", 1),
                                   torch.device("cuda", 0), torch.device("cuda", 0),
                                   torch.device("cuda"), torch.device("cuda", 1))
    # x.to("cuda") became x.to(<accelerator>): the CPU tensor stays where it is
    x = torch.ones(2)
    assert ns["moves"].__code__.co_name == "moves"
    src = ("import torch\n\ndef checks(x: torch.Tensor):\n    return x.is_cuda, x.device.type == \"cuda\", "
           "x.to(\"cuda\").device.type\n")
    _, fixed, applied, _ = _fix(src.encode(), "c.py", "2.13", True)
    assert len(applied) == 3
    ns = {}
    exec(compile(fixed, "c.py", "exec"), ns)
    assert ns["checks"](x) == (False, False, "cpu")


def test_cli_summary_says_the_literal_rewrites_are_unsafe(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("import torch\n\n\ndef f(x):\n    return x.cuda()\n")
    rc, out, err = run_cli("fix", str(p), "--target-torch", "2.13")
    assert "AD907" in err and "--unsafe-fixes" in err and "x.cuda()" in p.read_text()
    rc, out, err = run_cli("fix", "--unsafe-fixes", str(p), "--target-torch", "2.13")
    assert rc == 0, err
    assert "rewrote 1 device literal(s) and idiom(s) (AD907)" in err and "unsafe" in err
    assert 'x.to(\n        torch.device(getattr(torch.accelerator.current_accelerator(), "type", ' \
        '"cuda"))\n    )' in p.read_text()


def test_rule_docs_say_how_literals_are_fixed_and_proven():
    rc, out, _ = run_cli("rule", "AD905")
    assert rc == 0
    assert "needs torch >= 2.7" in out and "a unit:" in out
    assert "as the note says, on torch 2.13" in out
    rc, out, _ = run_cli("rule", "AD951")
    assert "C++ literals are hints" in out


# --- one run is final (Note [Rounds] in _fix/engine.py) -------------------------------

AMP = ("import torch\n\n\ndef train(model, x):\n"
       "    scaler = torch.cuda.amp.GradScaler(init_scale=2.0)\n"
       "    with torch.cuda.amp.autocast(dtype=torch.bfloat16):\n"
       "        y = model(x)\n"
       "    return scaler, y\n")
# (the device type named once: Note [Named once] in anydev/_migrate/fix/literals.py)
AMP_GENERIC = ("import torch\n\n\ndef train(model, x):\n"
               '    device_type = getattr(torch.accelerator.current_accelerator(), "type", "cuda")\n'
               "    scaler = torch.amp.GradScaler(device_type, init_scale=2.0)\n"
               "    with torch.amp.autocast(device_type, dtype=torch.bfloat16):\n"
               "        y = model(x)\n"
               "    return scaler, y\n")


def test_the_cuda_a_template_writes_is_fixed_in_the_same_run():
    findings, new, applied, skipped = _fix(AMP.encode(), "amp.py", "2.13", True)
    assert new.decode() == AMP_GENERIC
    compile(new, "amp.py", "exec", dont_inherit=True)
    # each finding once: the two API calls of the file, then the two "cuda" their
    # templates wrote, fixed in a further round
    assert sorted(f.rule for f in applied) == ["AD313", "AD314", "AD904", "AD904"]
    assert skipped == []
    # idempotent: a second run finds nothing to change
    findings2, again, applied2, skipped2 = _fix(new, "amp.py", "2.13", True)
    assert again == new and applied2 == [] and skipped2 == []
    assert not [f for f in findings2 if f.rule != "AD904" or "cuda" in f.text]


def test_without_unsafe_fixes_the_template_cuda_stays():
    _, new, applied, skipped = _fix(AMP.encode(), "amp.py", "2.13", False)
    text = new.decode()
    assert 'torch.amp.GradScaler("cuda", init_scale=2.0)' in text
    assert 'torch.amp.autocast("cuda", dtype=torch.bfloat16)' in text
    assert sorted(f.rule for f in applied) == ["AD313", "AD314"] and skipped == []
    # a scan of the fixed file reports the two literals, left for --unsafe-fixes
    left, _ = scan_source(new, "amp.py")
    assert sorted(f.rule for f in left) == ["AD904", "AD904"]
    _, again, applied2, skipped2 = _fix(new, "amp.py", "2.13", False)
    assert again == new and applied2 == []
    assert all("--unsafe-fixes" in why for _, why in skipped2) and len(skipped2) == 2


def test_the_rounds_keep_the_selection():
    # AD904 not selected: the template's "cuda" stays, in one round or many
    findings, _ = scan_source(AMP.encode(), "amp.py", ignore=["AD9"])
    new, applied, _ = fix_source(AMP.encode(), "amp.py", findings, unsafe=True,
                                 target_torch="2.13", ignore=["AD9"])
    assert new.count(b'"cuda"') == 2 and {f.rule for f in applied} == {"AD313", "AD314"}


def test_cli_one_run_is_final_and_says_so(tmp_path):
    p = tmp_path / "amp.py"
    p.write_text(AMP)
    rc, out, err = run_cli("fix", "--unsafe-fixes", str(p), "--target-torch", "2.13")
    assert rc == 0, err
    assert p.read_text() == AMP_GENERIC
    assert "fixed 4 finding(s) (2 of them written by the fixes themselves and fixed in a " \
           "further round) in 1 file(s)" in err
    rc, out, err = run_cli("fix", "--unsafe-fixes", str(p), "--target-torch", "2.13")
    assert rc == 0 and p.read_text() == AMP_GENERIC
    assert "fixed 0 finding(s) in 0 file(s)" in err


def test_the_literal_rewrites_are_no_findings_themselves():
    # a fixed file is a fixed point: what each literal row writes (its template, its
    # example's "after", the constants the planners use) is reported by no rule
    from anydev._compat import table as _compat_table
    from anydev._migrate.fix import literals as lit

    texts = [lit.ACC, lit.ACC_TYPE, lit.IDIOM]
    for row in _compat_table.ROWS:
        if row.status == "literal" and row.language == "python":
            texts.append(row.example[1] if row.example else "")
    for text in texts:
        src = "import torch\n" + text.replace("{", "(").replace("}", ")") + "\n"
        findings, errors = scan_source(src.encode(), "after.py")
        assert [f.rule for f in findings if f.rule.startswith("AD9")] == [], text


def test_rounds_run_only_where_a_template_wrote_a_literal(monkeypatch):
    # the further round (a rescan and a second fix) is for the "cuda" AD313/AD314 write;
    # a file without such a call is fixed once and never rescanned
    from anydev import scan as scan_mod

    calls = []
    real = scan_mod.scan_source
    monkeypatch.setattr(scan_mod, "scan_source", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    src = b"import torch\n\n\ndef f(x):\n    torch.cuda.synchronize()\n    return x.cuda()\n"
    findings, _ = real(src, "plain.py")
    new, applied, _ = fix_source(src, "plain.py", findings, unsafe=True, target_torch="2.13")
    assert {f.rule for f in applied} == {"AD107", "AD907"} and calls == []
    findings, _ = real(AMP.encode(), "amp.py")
    fix_source(AMP.encode(), "amp.py", findings, unsafe=True, target_torch="2.13")
    assert calls == ["amp.py"]
    calls.clear()
    fix_source(AMP.encode(), "amp.py", findings, unsafe=False, target_torch="2.13")
    assert calls == []  # without --unsafe-fixes the template's "cuda" stays: no round


def test_an_added_import_torch_is_a_further_round():
    # the module never bound `torch`, so the scanner did not resolve its
    # torch.cuda.synchronize(); the import the first rewrite adds makes it a finding,
    # fixed in the same run (found by fuzz/fix_fuzz.py: a second run changed the file)
    src = (b"from torch.cuda import synchronize\n\n\ndef f():\n    synchronize()\n"
           b"    torch.cuda.synchronize()\n")
    findings, _ = scan_source(src, "m.py")
    assert [f.text for f in findings] == ["synchronize", "synchronize"]  # import, call
    new, applied, skipped = fix_source(src, "m.py", findings, target_torch="2.13")
    assert new == (b"import torch\n\n\ndef f():\n    torch.accelerator.synchronize()\n"
                   b"    torch.accelerator.synchronize()\n"), new
    assert len(applied) == 3 and skipped == []
    again, _ = scan_source(new, "m.py")
    assert again == [] and fix_source(new, "m.py", again, target_torch="2.13")[0] == new


# --- Note [No fallback under a check] ---------------------------------------------

GUARDED = '''import torch


def under_if(x):
    if torch.cuda.is_available():
        return x.cuda(), torch.device("cuda"), torch.device("cuda", 0)
    return x, torch.device("cpu"), torch.device("cpu")


def after_raise(x):
    if not torch.cuda.is_available():
        raise RuntimeError("needs an accelerator")
    with torch.autocast("cuda"):
        return x.cuda()


def in_else(x):
    if not torch.cuda.is_available():
        return "cpu"
    else:
        return torch.device("cuda").type


def in_and(x: torch.Tensor):
    return torch.cuda.is_available() and x.to("cuda:0").device.type == "cuda"


def in_ifexp(x):
    return x.cuda() if torch.cuda.device_count() > 0 else x
'''

SURE = "torch.accelerator.current_accelerator()"
FALLBACK = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'


def _fixed_text(src: str, name: str = "m.py") -> str:
    findings, errors = scan_source(src.encode(), name)
    assert not errors
    new, applied, skipped = fix_source(src.encode(), name, findings, unsafe=True,
                                       target_torch="2.13")
    assert skipped == [], skipped
    return new.decode()


def test_no_cuda_fallback_where_a_check_says_there_is_an_accelerator():
    fixed = _fixed_text(GUARDED)
    assert "getattr(" not in fixed and "cuda" not in fixed.replace("torch.cuda", ""), fixed
    code = ast.unparse(ast.parse(fixed))  # as written, without the wrapping
    assert "return (x.to(torch.accelerator.current_accelerator()), " \
           "torch.accelerator.current_accelerator(), " \
           "torch.device(torch.accelerator.current_accelerator().type, 0))" in code
    assert "with torch.autocast(torch.accelerator.current_accelerator().type):" in code
    assert "return torch.accelerator.current_accelerator().type" in code
    assert "x.to(torch.device(torch.accelerator.current_accelerator().type, 0))" \
           ".device.type == torch.accelerator.current_accelerator().type" in code
    # one run is final
    again, _ = scan_source(fixed.encode(), "m.py")
    assert [f.rule for f in again] == []


@pytest.mark.parametrize("src", [
    # another device's check says nothing of the accelerator
    "import torch\n\n\ndef f(x):\n    if torch.xpu.is_available():\n        return x.cuda()\n"
    "    return x\n",
    # `python -O` drops an assert
    "import torch\n\n\ndef f(x):\n    assert torch.cuda.is_available()\n    return x.cuda()\n",
    # the check is in an `or`: the body also runs without one
    "import torch\n\n\ndef f(x, force):\n    if force or torch.cuda.is_available():\n"
    "        return x.cuda()\n    return x\n",
    # the `if not` falls through
    "import torch\n\n\ndef f(x):\n    if not torch.cuda.is_available():\n        print('cpu')\n"
    "    return x.cuda()\n",
    # in the `else` of the check itself
    "import torch\n\n\ndef f(x):\n    if torch.cuda.is_available():\n        return x\n"
    "    else:\n        return x.cuda()\n",
])
def test_the_fallback_stays_without_evidence(src):
    assert FALLBACK in _fixed_text(src)


def test_a_patched_check_keeps_the_fallback(tmp_path, monkeypatch):
    # a test that patches torch.cuda.is_available makes the check true without an
    # accelerator: the guarded code must still make torch.device("cuda") there
    pkg = tmp_path / "proj"
    (pkg / "tests").mkdir(parents=True)
    code = ("import torch\n\n\ndef pick():\n    if torch.cuda.is_available():\n"
            "        return torch.device(\"cuda\")\n    return torch.device(\"cpu\")\n")
    (pkg / "dev.py").write_text(code)
    (pkg / "tests" / "test_dev.py").write_text(
        "from unittest import mock\n\nimport dev\n\n\ndef test_gpu():\n"
        "    with mock.patch(\"torch.cuda.is_available\", return_value=True):\n"
        "        assert str(dev.pick()) == \"cuda\"\n")
    monkeypatch.chdir(pkg)
    rc, out, err = run_cli("fix", "--unsafe-fixes", "--target-torch", "2.13", ".")
    assert rc == 0, err
    fixed = (pkg / "dev.py").read_text()
    assert f"torch.device({FALLBACK})" in ast.unparse(ast.parse(fixed)).replace("'", '"'), fixed
    assert 'mock.patch("torch.accelerator.is_available"' in \
        (pkg / "tests" / "test_dev.py").read_text()
    # and the patched test still passes on this CPU-only machine
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                       cwd=pkg, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(pkg)})
    assert r.returncode == 0, r.stdout + r.stderr
    # the same file fixed alone (the editor) has no test beside it: the check is evidence
    assert "return torch.accelerator.current_accelerator()\n" in _fixed_text(code, "dev.py")


def test_guarded_forms_run_alike_on_cpu_and_on_sim():
    pytest.importorskip("torch")
    from conftest import run_python  # noqa: PLC0415
    before, after = GUARDED, _fixed_text(GUARDED)
    probe = ("import torch\nx = torch.ones(2)\n"
             "print([str(v) for v in under_if(x)[1:]], in_else(x), bool(in_and(x)), "
             "after_raise(x).device.type, in_ifexp(x).device.type)\n")
    import_sim = "import anydev.torch\nanydev.torch.register_sim(devices=1)\n"
    # CPU: the legacy code and the fixed code take the same branch, to the same values
    got = {}
    for name, src in (("before", before), ("after", after)):
        rc, out, err = run_python(src + "\ntry:\n    after_raise(None)\nexcept RuntimeError as e:"
                                  "\n    print(e)\nprint(under_if(torch.ones(1))[1:], "
                                  "in_else(None), in_and(None), in_ifexp(torch.ones(1)).device)\n")
        assert rc == 0, err
        got[name] = out
    assert got["before"] == got["after"]
    assert got["after"].splitlines()[0] == "needs an accelerator"
    # sim: the fixed code runs on the accelerator, as code written for sim would
    rc, out, err = run_python(import_sim + after + probe, timeout=300)
    assert rc == 0, err
    assert out.strip() == "['sim', 'sim:0'] sim True sim sim", out


# --- Note [A block that repeats] ----------------------------------------------------

SEED = ("import random\n\nimport torch\n\n\ndef seed_everything(seed):\n    random.seed(seed)\n"
        "    torch.manual_seed(seed)\n    if torch.cuda.is_available():\n"
        "        torch.cuda.manual_seed_all(seed)\n")


def test_a_guarded_block_that_repeats_the_line_before_it_goes():
    fixed = _fixed_text(SEED)
    assert fixed == SEED.split("    if torch")[0], fixed
    assert scan_source(fixed.encode(), "m.py")[0] == []


@pytest.mark.parametrize("src", [
    # the seed differs: the block does more than repeat
    SEED.replace("manual_seed_all(seed)", "manual_seed_all(seed + 1)"),
    # a statement between them
    SEED.replace("    if torch", "    print(seed)\n    if torch"),
    # a comment in the block would be lost
    SEED.replace("manual_seed_all(seed)\n", "manual_seed_all(seed)  # all GPUs\n"),
    # an else branch
    SEED + "    else:\n        print('cpu')\n",
])
def test_a_block_that_does_more_stays(src):
    fixed = _fixed_text(src)
    assert "    if torch.accelerator.is_available():\n        torch.manual_seed(seed" in fixed


def test_the_projects_own_repeat_is_left():
    from anydev._migrate.fix.repeats import drop_repeats  # noqa: PLC0415
    own = ("import torch\n\n\ndef f(seed):\n    torch.manual_seed(seed)\n"
           "    if torch.accelerator.is_available():\n        torch.manual_seed(seed)\n")
    changed = own.replace("def f", "def g")
    assert drop_repeats(own.encode(), changed.encode()) == changed.encode()
