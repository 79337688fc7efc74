"""Shared setup for anydev's Python tests.

The accelerator is resolved once per process, from the ANYDEV_* variables, so
they are set here, before anything imports anydev: by default the simulated
accelerator with 4 devices of 256 MiB. A run can choose otherwise by setting
them itself (ANYDEV_SIM_DEVICES=1 for one device, or a real accelerator with
ANYDEV_ACCELERATOR). Tests of other configurations run a fresh interpreter
through the ``run_python`` fixture.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Mapping

os.environ.setdefault("ANYDEV_SIM_DEVICES", "4")
os.environ.setdefault("ANYDEV_SIM_MEMORY", "256MiB")

import pytest  # noqa: E402

import anydev  # noqa: E402

def pytest_addoption(parser):
    # pyproject.toml sets pytest-asyncio's loop scope (for pytest-lsp's tests,
    # tests/python/server); where pytest-asyncio is not installed (a wheel's
    # fresh venv, Debian's Python) the option is declared here, so that pytest
    # does not warn of an unknown option.
    import importlib.util

    if importlib.util.find_spec("pytest_asyncio") is None:
        parser.addini("asyncio_default_fixture_loop_scope",
                      "pytest-asyncio's loop scope (unused without it)")


# Variables a subprocess must not inherit unless a test sets them.
ANYDEV_VARS = ("ANYDEV_SIM_DEVICES", "ANYDEV_SIM_MEMORY", "ANYDEV_ACCELERATOR",
               "ANYDEV_CUDA_LIBRARY", "ANYDEV_HIP_LIBRARY", "ANYDEV_LEVEL_ZERO_LIBRARY")


def accelerator_type() -> str | None:
    """The current accelerator's type, or None when there is none (or the
    configuration is broken)."""
    try:
        d = anydev.accelerator.current_accelerator()
    except RuntimeError:
        return None
    return None if d is None else d.type


def _accelerator_state() -> tuple[int, list]:
    """The calling thread's current index and current stream of every device."""
    acc = anydev.accelerator
    return acc.current_device_index(), [acc.current_stream(i) for i in range(acc.device_count())]


@pytest.fixture
def acc():
    """anydev.accelerator, for a test that needs an accelerator (skipped
    without one)."""
    if anydev.accelerator.current_accelerator() is None:
        pytest.skip("no accelerator (set ANYDEV_SIM_DEVICES=N)")
    return anydev.accelerator


@pytest.fixture(autouse=True)
def restore_accelerator_state():
    """Leaves the main thread as the test found it: on its device, with the
    same current stream on every device, and no work in flight."""
    try:
        have_acc = anydev.accelerator.current_accelerator() is not None
    except RuntimeError:  # a broken configuration: nothing to restore
        have_acc = False
    if not have_acc:
        yield
        return
    index, streams = _accelerator_state()
    yield
    acc = anydev.accelerator
    for i in range(acc.device_count()):
        acc.synchronize(i)
    for s in streams:
        acc.set_stream(s)  # also makes s's device current
    acc.set_device_index(index)
    assert _accelerator_state() == (index, streams)


@pytest.fixture
def multi_device(acc):
    """Skips a test that needs two or more devices."""
    if acc.device_count() < 2:
        pytest.skip(f"needs 2 devices, have {acc.device_count()}")
    return acc


def clean_env(env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """os.environ without the ANYDEV_* variables, updated with ``env`` (a
    value of None removes the variable)."""
    out = {k: v for k, v in os.environ.items() if k not in ANYDEV_VARS}
    for k, v in (env or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def run_python(code: str, env: Mapping[str, str | None] | None = None,
               args: list[str] | None = None, timeout: float = 60) -> tuple[int, str, str]:
    """Runs ``code`` (dedented) in a fresh interpreter whose environment has
    no ANYDEV_* variables but those in ``env``; returns (returncode, stdout,
    stderr)."""
    cmd = [sys.executable, *(args or []), "-c", textwrap.dedent(code)]
    p = subprocess.run(cmd, env=clean_env(env), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_command(argv: list[str], env: Mapping[str, str | None] | None = None,
                timeout: float = 120) -> tuple[int, str, str]:
    """Runs ``argv`` with the environment of ``run_python``."""
    p = subprocess.run(argv, env=clean_env(env), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(name="run_python")
def run_python_fixture():
    """``run_python(code, env=None, args=None)``: see :func:`run_python`."""
    return run_python


# --- helpers for the device tests ------------------------------------------------


def sleep_or_skip(seconds: float, stream: anydev.Stream) -> None:
    """Queues ``seconds`` of busy work on ``stream``, or skips the test when
    the backend cannot."""
    try:
        anydev.testing.sleep(seconds, stream)
    except NotImplementedError as e:
        pytest.skip(f"the backend cannot queue busy work: {e}")


def acc_dev(index: int) -> anydev.device:
    """Device ``index`` of the current accelerator."""
    return anydev.device(anydev.accelerator.current_accelerator().type, index)


def run_cli(*argv: str) -> tuple[int, str, str]:
    """Runs ``anydev <argv>`` in this process: (exit status, stdout, stderr)."""
    from contextlib import redirect_stderr, redirect_stdout
    import io

    from anydev._cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli.main(list(argv))
    return rc, out.getvalue(), err.getvalue()
