#!/usr/bin/env python3
"""Writes a small runnable Python project that mixes legacy torch.cuda API calls,
device literals and the availability idiom in the shapes real code has, with its
own tests, for tests/python/fix/test_fix_generated_repo.py (``anydev fix`` at
targets 2.1 and 2.13, the project's tests run before and after).

    python tests/gen_literal_repo.py --out /tmp/repo [--modules 6]

The project declares ``torch>=1.13`` and its code runs on a machine without a
GPU: on PyTorch 1.13 and 2.13. Its tests are plain ``test_*`` functions with
asserts and ``unittest.mock`` (pytest collects them; ``run_tests.py`` runs them
where pytest is not installed).

Each module ``genpkg/mod_N.py`` holds every form below once (N in the names):
device selection (the idiom as an expression, in torch.device(...), as an
if/else statement, with device_count() > 0), guarded moves (``.cuda()``,
``.to("cuda")``, ``device="cuda"``), checks (``x.is_cuda``, ``x.device.type ==
"cuda"``), AMP with a device type, a "nccl" backend, API calls (synchronize and
current_device under a guard, torch.cuda.amp.autocast), strings that are no
device (a log message, a dict key, a comparison with the user's config), a
function whose ``# noqa`` line keeps its whole unit, and a CUDA backend module
(``genpkg/backends/cuda_backend.py``), a device home.
"""

from __future__ import annotations

import argparse
import os
import shutil

MODULE = '''"""Generated module {i}: API calls, device literals and idioms mixed."""

import logging

import torch

log = logging.getLogger(__name__)
CONFIG = {{"device": "cuda", "cuda": True}}


def pick_device_{i}():
    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_torch_device_{i}():
    return torch.device("cuda:0" if torch.cuda.device_count() > 0 else "cpu")


def pick_statement_{i}():
    if torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        device = torch.device("cpu")
    return device


def to_accelerator_{i}(model, x):
    if torch.cuda.is_available():
        model = model.cuda()
        x = x.to("cuda", non_blocking=True)
        torch.cuda.synchronize()
    return model, x


def zeros_{i}(n):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.zeros(n, device=device)


def on_gpu_{i}(x):
    return x.is_cuda or x.device.type == "cuda"


def current_{i}():
    if torch.cuda.is_available():
        return torch.cuda.current_device()
    return -1


def autocast_step_{i}(model, x):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        return model(x)


def legacy_amp_{i}(model, x):
    with torch.cuda.amp.autocast(enabled=False):
        return model(x)


def backend_{i}():
    return "nccl" if False else None


def init_{i}(init):
    # `init` stands in for torch.distributed.init_process_group in the tests
    torch.distributed.init_process_group = init
    return torch.distributed.init_process_group(backend="nccl")


def needs_gpu_{i}(x):
    return x.cuda()


def user_config_{i}(args):
    log.info("running on cuda")
    if args.device == "cuda":
        return CONFIG["cuda"]
    return False


def kept_by_noqa_{i}(x):
    if torch.cuda.is_available():
        x = x.cuda()  # noqa: AD907
    return x
'''

BACKEND = '''"""A CUDA backend: a device home, it keeps its CUDA-specific code."""

import torch


class CUDABackend:
    def device(self):
        return torch.device("cuda")

    def available(self):
        return torch.cuda.is_available()

    def move(self, x):
        return x.cuda()
'''

TESTS = '''"""Tests of genpkg.mod_{i}, on a machine without a GPU."""

import types
from unittest import mock

import torch

from genpkg import mod_{i} as m


def test_device_selection():
    assert str(m.pick_device_{i}()) == "cpu"
    assert m.pick_torch_device_{i}() == torch.device("cpu")
    assert m.pick_statement_{i}() == torch.device("cpu")


def test_moves_stay_on_the_cpu():
    model, x = m.to_accelerator_{i}(torch.nn.Linear(2, 2), torch.ones(2))
    assert x.device.type == "cpu" and next(model.parameters()).device.type == "cpu"
    assert m.zeros_{i}(3).device.type == "cpu"
    assert m.current_{i}() == -1


def test_checks():
    assert m.on_gpu_{i}(torch.ones(1)) is False


def test_amp_on_the_cpu():
    model = torch.nn.Linear(2, 2)
    assert m.autocast_step_{i}(model, torch.ones(1, 2)).shape == (1, 2)
    assert m.legacy_amp_{i}(model, torch.ones(1, 2)).dtype == torch.float32


def test_backend_is_one_for_this_machine():
    got = m.init_{i}(lambda backend=None, **kw: backend)
    assert got in ("nccl", "gloo")


def test_needs_a_gpu():
    try:
        m.needs_gpu_{i}(torch.ones(1))
    except Exception:  # noqa: BLE001 - CUDA's error before, the accelerator's after
        return
    raise AssertionError("moved to a GPU on a machine without one")


def test_user_config():
    assert m.user_config_{i}(types.SimpleNamespace(device="cuda")) is True
    assert m.user_config_{i}(types.SimpleNamespace(device="cpu")) is False


def test_noqa_unit():
    assert m.kept_by_noqa_{i}(torch.ones(1)).device.type == "cpu"


def test_pretend_no_gpu():
    with mock.patch("torch.cuda.is_available", return_value=False):
        assert str(m.pick_device_{i}()) == "cpu"
'''

BACKEND_TESTS = '''from genpkg.backends.cuda_backend import CUDABackend


def test_backend_is_cuda():
    assert CUDABackend().device().type == "cuda"
'''

RUNNER = '''"""Runs the tests without pytest (Debian's python3 has torch but no pytest)."""

import importlib
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
failed = passed = 0
for name in sorted(os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))):
    if not (name.startswith("test_") and name.endswith(".py")):
        continue
    mod = importlib.import_module("tests." + name[:-3])
    for attr in sorted(dir(mod)):
        if attr.startswith("test_"):
            try:
                getattr(mod, attr)()
                passed += 1
            except Exception:  # noqa: BLE001
                failed += 1
                print(f"FAILED {{name}}::{{attr}}")
                traceback.print_exc()
print(f"{{passed}} passed, {{failed}} failed")
sys.exit(1 if failed else 0)
'''

PYPROJECT = '''[project]
name = "genpkg"
version = "0.1"
dependencies = ["torch>=1.13"]
'''


def write(out: str, modules: int) -> None:
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "genpkg", "backends"))
    os.makedirs(os.path.join(out, "tests"))

    def put(rel: str, text: str) -> None:
        with open(os.path.join(out, rel), "w", encoding="utf-8") as f:
            f.write(text)

    put("pyproject.toml", PYPROJECT)
    put("run_tests.py", RUNNER.replace("{{", "{").replace("}}", "}"))
    put("genpkg/__init__.py", "")
    put("genpkg/backends/__init__.py", "")
    put("genpkg/backends/cuda_backend.py", BACKEND)
    put("tests/__init__.py", "")
    put("tests/test_backend.py", BACKEND_TESTS)
    for i in range(modules):
        put(f"genpkg/mod_{i}.py", MODULE.format(i=i))
        put(f"tests/test_mod_{i}.py", TESTS.format(i=i))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--modules", type=int, default=6)
    args = ap.parse_args()
    write(args.out, args.modules)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
