"""The table's `since` claims, checked against the real PyTorch builds.

Every Python row with a replacement claims the first PyTorch release that has
it in the form the fix writes (compat_map/SCHEMA.md). On each build at hand,
the .venv's torch 2.13 here and Debian's 1.13 under /usr/bin/python3 in a
subprocess, a row claimed for that release or an older one must be available
in that form: its replacement's attribute path resolves after ``import torch``,
the template rendered for every argument form of the legacy signature binds to
the callee's signature, and a context manager's class replacement is a context
manager. A row claimed for a newer release, or "main", must not be.
"""

from __future__ import annotations

import os
import sys

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed for this interpreter (tools/setup.sh installs "
                    "torch==2.13.0 into .venv, and Debian's python3-torch for /usr/bin/python3)")

from anydev._compat import table as _compat_table  # noqa: E402
from anydev.fix import render_template  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import prove_fixes as pf  # noqa: E402

ROWS = [r for r in _compat_table.ROWS
        if r.language == "python" and r.status == "deprecated" and r.replacement]


def rendered_calls(row) -> list[str]:
    """The replacement call the fix writes for each argument form of the
    legacy call (none for a row without a mechanical fix)."""
    if row.fix == "none" or row.kind in ("attribute", "module"):
        return []
    cases, why = pf.cases_of(row.signature, row.legacy)
    assert why is None, f"{row.code}: {why} (add it to SAMPLES in tools/prove_fixes.py)"
    out = []
    for c in cases:
        if row.template:
            out.append(render_template(row.template, c.bound, c.args))
        else:
            out.append(f"{row.replacement}({c.args})")
    return out


def check_of(row) -> dict:
    cm = row.kind == "context_manager" and not row.template
    return {"id": row.code, "path": row.replacement, "calls": rendered_calls(row), "cm": cm}


@pytest.fixture(scope="module")
def checks():
    return [check_of(r) for r in ROWS]


@pytest.fixture(scope="module")
def here(checks):
    """The checks on the torch this test runs on (2.13 in .venv)."""
    return pf.child_forms(checks)


@pytest.fixture(scope="module")
def old(checks):
    """The checks on Debian's PyTorch 1.13 under /usr/bin/python3."""
    version = pf.torch_version_of(pf.OLD_PYTHON)
    if version is None:
        pytest.skip(f"{pf.OLD_PYTHON} is missing or has no torch "
                    "(Debian's python3-torch; tools/setup.sh installs it)")
    answer = pf.run_child(pf.OLD_PYTHON, "forms", checks)
    assert "error" not in answer, answer.get("error")
    return answer


def _verdict(row, answer) -> tuple[bool, list[str]]:
    rec = next(c for c in answer["checks"] if c["id"] == row.code)
    claimed = pf.split_version(row.since) <= pf.split_version(answer["torch"])
    return claimed, rec["problems"]


def test_every_row_with_a_replacement_has_since():
    assert ROWS and all(r.since for r in ROWS), [r.code for r in ROWS if not r.since]


def test_the_forms_cover_each_parameter_by_position_and_keyword():
    params, _ = pf.parameters("(a, b=1, *, c=2)")
    got = pf.forms(params)
    assert (("a", "pos"),) in got and (("a", "kw"),) in got
    assert (("a", "pos"), ("b", "pos")) in got and (("a", "pos"), ("b", "kw")) in got
    assert (("a", "pos"), ("c", "kw")) in got
    assert (("a", "kw"), ("b", "kw"), ("c", "kw")) in got
    # a positional-only parameter is never passed by keyword
    params, _ = pf.parameters("(device=None, /)")
    assert pf.forms(params) == [(), (("device", "pos"),)]


def test_a_rendered_call_that_does_not_bind_is_a_problem():
    answer = pf.child_forms([
        {"id": "x", "path": "torch.accelerator.synchronize",
         "calls": ["torch.accelerator.synchronize(device=0)"], "cm": False},
        {"id": "y", "path": "torch.accelerator.no_such_name", "calls": [], "cm": False},
        {"id": "z", "path": "torch.Stream", "calls": ["torch.Stream(1, 2)"], "cm": True},
    ])
    problems = {c["id"]: c["problems"] for c in answer["checks"]}
    assert "does not bind" in problems["x"][0]  # the parameter is positional-only
    assert "does not resolve" in problems["y"][0]
    assert "does not bind" in problems["z"][0]  # a builtin: the real call's TypeError


@pytest.mark.parametrize("row", ROWS, ids=[r.code for r in ROWS])
def test_since_holds_on_this_torch(row, here):
    claimed, problems = _verdict(row, here)
    if claimed:
        assert not problems, (f"{row.code} claims {row.replacement} since {row.since}, but on "
                              f"torch {here['torch']}: {'; '.join(problems)}")
    else:
        assert problems, (f"{row.code} claims {row.replacement} since {row.since}, but torch "
                          f"{here['torch']} already has it in the fix's form: the claim is "
                          "too new")


@pytest.mark.parametrize("row", ROWS, ids=[r.code for r in ROWS])
def test_since_holds_on_torch_1_13(row, old):
    claimed, problems = _verdict(row, old)
    if claimed:
        assert not problems, (f"{row.code} claims {row.replacement} since {row.since}, but on "
                              f"torch {old['torch']}: {'; '.join(problems)}")
    else:
        assert problems, (f"{row.code} claims {row.replacement} since {row.since}, but torch "
                          f"{old['torch']} already has it in the fix's form: the claim is too "
                          "new")

