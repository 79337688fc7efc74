"""Runs the conformance suite again in a process with one simulated device,
so that one pytest command covers both one device and several."""

from __future__ import annotations

import os
import sys

import pytest

from conftest import run_command

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.join(HERE, "test_accelerator_conformance.py")


def test_conformance_with_one_sim_device():
    if os.environ.get("ANYDEV_ACCELERATOR", "sim") != "sim":
        pytest.skip("this run targets another accelerator")
    rc, out, err = run_command(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", CONFORMANCE],
        env={"ANYDEV_SIM_DEVICES": "1", "ANYDEV_SIM_MEMORY": "256MiB"},
    )
    assert rc == 0, f"conformance suite failed with one device:\n{out}\n{err}"
    assert " passed" in out and "failed" not in out and "error" not in out.lower(), out
    # The multi-device tests are skipped, for the right reason.
    assert "needs 2 devices, have 1" in out, out
