"""`fix = "safe"` is proven, not asserted: the differential proof
(tools/prove_fixes.py) runs each safe row's legacy call and the real fixer's
rewrite of it on the real PyTorch builds at hand, and its record
(compat_map/proofs.json) is current."""

from __future__ import annotations

import json
import os
import sys

import pytest

# The proof runs each row on the PyTorch builds at hand; without one it has
# nothing to compare.
pytest.importorskip(
    "torch", reason="PyTorch is not installed for this interpreter (tools/setup.sh installs "
                    "torch==2.13.0 into .venv, and Debian's python3-torch for /usr/bin/python3)")

from conftest import run_cli  # noqa: E402

from anydev._compat import table as _compat_table  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import prove_fixes as pf  # noqa: E402
from fix_default import newest_default_target  # noqa: F401 (autouse)


@pytest.fixture(scope="module")
def doc():
    return pf.prove()


def test_every_safe_row_behaves_the_same_on_every_build_tried(doc):
    safe = [r.code for r in _compat_table.ROWS if r.language == "python"
            and r.status == "deprecated" and r.fix == "safe"]
    assert safe and all(code in doc["rows"] for code in safe)
    for code in safe:
        entry = doc["rows"][code]
        assert entry["torch"], f"{code} is marked safe but ran on no build: {entry['verdict']}"
        assert entry["verdict"] == "same", f"{code} is marked safe but {entry['verdict']}"
        # every case was rewritten and ran on every build the row was tried on
        for case in entry["cases"]:
            assert case["rewrite"], f"{code}: `{case['call']}` was not rewritten"
            assert sorted(case["outcomes"]) == sorted(entry["torch"]), (code, case)


def test_a_safe_row_runs_on_torch_1_13_where_it_has_the_replacement(doc):
    if len(doc["torch"]) < 2:
        pytest.skip(f"only torch {doc['torch']} at hand ({pf.OLD_PYTHON} has no torch)")
    old = [v for v in doc["torch"] if pf.split_version(v) <= (1, 13)]
    assert old, doc["torch"]
    # torch.amp.autocast("cuda", ...) is in 1.13, so AD313 runs there too
    assert old[0] in doc["rows"]["AD313"]["torch"]
    # torch.accelerator is not, so AD101 does not
    assert old[0] not in doc["rows"]["AD101"]["torch"]


def test_proofs_json_is_current(doc):
    with open(pf.PROOFS, encoding="utf-8") as f:
        recorded = f.read()
    if json.loads(recorded)["torch"] != doc["torch"]:
        pytest.skip(f"proofs.json was made on torch {json.loads(recorded)['torch']}, "
                    f"this machine has {doc['torch']}")
    assert pf.dumps(doc) == recorded, \
        "compat_map/proofs.json is stale; run `.venv/bin/python tools/prove_fixes.py --write`"


def _one(legacy: str, rewrite: str, kind: str = "call") -> dict:
    return pf.child_run([{"id": "x", "kind": kind, "legacy": legacy, "rewrite": rewrite}])[
        "cases"][0]


def test_the_comparison_tells_a_difference():
    assert _one("_result = 0", "_result = 0")["same"]
    assert not _one("_result = 0", "_result = 1")["same"]
    got = _one("_result = None", "raise RuntimeError('no device')")
    assert not got["same"] and got["rewrite"] == "raises RuntimeError"
    # both raise: the same, whatever the types (recorded)
    got = _one("raise AssertionError", "raise RuntimeError")
    assert got["same"] and (got["legacy"], got["rewrite"]) == ("raises AssertionError",
                                                               "raises RuntimeError")
    # references: the same object, not an equal name
    assert _one("import torch\n_result = torch.Tensor", "import torch\n_result = torch.Tensor",
                "attribute")["same"]
    assert not _one("import torch\n_result = torch.Tensor", "import torch\n_result = torch.Size",
                    "attribute")["same"]


def test_the_comparison_of_objects_uses_the_type_and_primitive_attributes():
    # the classes live in one module, as torch's do, so both sides see the same ones
    classes = ("class Base:\n    def __init__(self, n): self.n = n; self.items = [n]\n"
               "    def __enter__(self): return self\n    def __exit__(self, *a): return None\n"
               "class Legacy(Base):\n    pass\n"
               "class Other:\n    def __init__(self, n): self.n = n\n"
               "class Odd(Base):\n"
               "    def __init__(self, n, mode): super().__init__(n); self.mode = [mode]\n"
               "    def __enter__(self): return self if self.mode[0] else 1\n")
    cls = ("import sys, types\n"
           "m = sys.modules.get('_proof_fixture')\n"
           "if m is None:\n"
           "    m = sys.modules['_proof_fixture'] = types.ModuleType('_proof_fixture')\n"
           f"    exec({classes!r}, m.__dict__)\n"
           "Base, Legacy, Other, Odd = m.Base, m.Legacy, m.Other, m.Odd\n")
    same = _one(cls + "_result = Legacy(1)", cls + "_result = Base(1)", "class")
    assert same["same"] and same["relation"] == "legacy type subclasses the replacement's"
    assert not _one(cls + "_result = Legacy(1)", cls + "_result = Base(2)", "class")["same"]
    assert not _one(cls + "_result = Base(1)", cls + "_result = Legacy(1)", "class")["same"]
    assert not _one(cls + "_result = Base(1)", cls + "_result = Other(1)", "class")["same"]
    # a context manager is also entered and left
    assert _one(cls + "_result = Base(1)", cls + "_result = Legacy(1)", "context_manager")[
        "same"] is False  # the replacement's type must not be narrower
    # (the list attributes are not compared: only the primitive-valued ones)
    assert _one(cls + "_result = Odd(1, True)", cls + "_result = Odd(1, True)",
                "context_manager")["same"]
    assert not _one(cls + "_result = Odd(1, True)", cls + "_result = Odd(1, False)",
                    "context_manager")["same"]


def test_rule_shows_since_fix_level_and_the_proof():
    rc, out, _ = run_cli("rule", "AD314")
    assert rc == 0
    assert "needs torch >= 2.4" in out and "fix level:      safe" in out
    assert "proven:         same behaviour on torch 2.13" in out
    assert _compat_table.PROOFS["AD314"].startswith("same behaviour on torch ")
    # a row the proof found to differ says how, and is not safe
    rc, out, _ = run_cli("rule", "AD201")
    assert "fix level:      unsafe" in out and "raises RuntimeError" in out
    # a row whose replacement raises without an accelerator is proven as the fixer
    # writes it, under a check (Note [Guarded calls]); its note says why it is unsafe
    rc, out, _ = run_cli("rule", "AD204")
    assert "fix level:      unsafe" in out and "RuntimeError" in out
    assert _compat_table.ROWS_BY_CODE["AD204"].fix == "unsafe"
    rc, out, _ = run_cli("rule", "AD301", "--format", "json")
    doc = json.loads(out)
    assert doc["since"] == "main" and "never applied" in doc["needs"]
    assert doc["proof"].startswith("not run: ")


# --- the third machine: a non-CUDA accelerator (sim inside the real torch) -------------------


def test_the_proof_runs_on_a_non_cuda_accelerator(doc):
    # Note [Three machines]: sim registered in the real torch by anydev.torch.register_sim();
    # tools/setup.sh builds it for the .venv's torch, so it is there wherever the suite runs.
    acc = doc["accelerator"]
    assert acc.get("name") == "sim", f"the accelerator leg did not run: {acc}"
    assert acc["torch"] in doc["torch"] and acc["torch"].endswith("+sim")
    # is_available answers for sim there: the child really had sim as PyTorch's accelerator
    leg = doc["rows"]["AD101"]["accelerator"]
    assert leg["verdict"] == "correct" and "own device module" in leg["correct"]
    case = doc["rows"]["AD101"]["cases"][0]["accelerator"]
    assert (case["legacy"], case["rewrite"], case["own"], case["correct"]) == (
        "returns False", "returns True", "returns True", True)
    assert "the meaning changes there" in leg["summary"]
    # the literal rows too: a tensor made with the rewritten device lives on sim
    lit = doc["rows"]["AD902"]["cases"][0]["accelerator"]
    assert lit["rewrite"] == "returns device sim:0" and lit["correct"], lit
    # a rewrite that keeps the CUDA device must do there what the legacy call does
    assert "the legacy call does there" in doc["rows"]["AD313"]["accelerator"]["correct"]


def test_every_safe_row_is_correct_on_the_non_cuda_accelerator(doc):
    for r in _compat_table.ROWS:
        if r.language == "python" and r.status == "deprecated" and r.fix == "safe":
            leg = doc["rows"][r.code]["accelerator"]
            assert leg["verdict"] == "correct", (r.code, leg)
            assert all(c["accelerator"]["correct"] for c in doc["rows"][r.code]["cases"])


def test_a_rewrite_wrong_on_the_accelerator_is_not_safe():
    # the same rows judged with a child that answers otherwise on sim
    entry = {"replacement": "torch.accelerator.synchronize", "torch": ["2.13.0+cpu"],
             "accelerator": {"torch": "2.13.0+cpu+sim", "correct": "..."},
             "cases": [{"call": "torch.cuda.synchronize()", "rewrite": "torch.accelerator."
                        "synchronize()", "outcomes": {}}]}
    answers = {"2.13.0+cpu+sim": {"accelerator": "sim", "cases": [
        {"id": "X/0", "legacy": "raises AssertionError", "rewrite": "raises RuntimeError",
         "own": "returns None", "correct": False, "same": True}]}}
    build = pf.Build("py", "2.13.0+cpu+sim", pf.ACCELERATOR_SETUP, "sim")
    wrong = pf._judge_accelerator("X", entry, answers, build, "")
    assert wrong.startswith("wrong on a non-CUDA accelerator (sim, torch 2.13.0+cpu+sim): "
                            "`torch.accelerator.synchronize()` raises RuntimeError where the "
                            "accelerator's own answer returns None")
    assert entry["accelerator"]["verdict"].startswith("wrong on sim")
    # a child that did not have the accelerator current answered for another machine
    answer = {"accelerator": None, "cases": []}
    pf._check_accelerator(build, answer)
    assert answer == {"error": "the child was to run with sim as PyTorch's accelerator, and "
                               "had None"}
    # without the accelerator's build, the leg says why it did not run
    entry = {"replacement": "r", "cases": []}
    assert pf._judge_accelerator("X", entry, {}, None, "no compiler") == ""
    assert entry["accelerator"] == {"verdict": "not run: no compiler"}


def test_the_output_names_the_accelerator_leg(capsys, monkeypatch):
    # one row, so the run is short; the line on stderr says where the leg ran
    real = pf.prove
    monkeypatch.setattr(pf, "prove", lambda extra=None: real(extra, only={"AD101"}))
    assert pf.main([]) == 0
    out, err = capsys.readouterr()
    assert "a non-CUDA accelerator: sim inside the real torch" in err
    assert "1 rows ran there, 1 correct, 1 of them with a meaning that changes there" in err
    assert "on a non-CUDA accelerator (sim, torch" in out
