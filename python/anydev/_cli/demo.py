"""``anydev demo``: the migration demo on the bundled legacy project.

1. scan it, with statistics (``anydev scan --statistics``);
2. fix a copy (``anydev fix --unsafe-fixes``) and show the diff;
3. scan the copy again: what is left needs a human (rows without a fix);
4. run the legacy entry point under anydev's shims on the simulated
   accelerator, with the runtime report printed (``anydev run --facade``),
   then the migrated copy;
5. where PyTorch is installed, the same on a non-CUDA accelerator inside the
   real PyTorch (``anydev run --torch --accelerator sim``): the legacy code
   fails there and the report names its CUDA-only call sites; the migrated
   copy, finished by hand where the fixer left findings, runs there with
   none.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Optional

# The example ships inside the package (the wheel installs it as
# anydev/examples/legacy_project); a source checkout has it at the top.
PACKAGED_PROJECT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                                "legacy_project")
CHECKOUT_PROJECT = os.path.join("examples", "legacy_project")


def default_project() -> str:
    """Returns the example project installed with the package, else the one of
    the source checkout in the current directory."""
    if os.path.isdir(os.path.join(PACKAGED_PROJECT, "legacy_app")):
        return PACKAGED_PROJECT
    return os.path.abspath(CHECKOUT_PROJECT)


def _banner(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)), flush=True)


def _run(cmd: list[str], cwd: str, env: dict[str, str]) -> int:
    print("$ " + " ".join(cmd[2:] if cmd[:3] == [sys.executable, "-m", "anydev"] else cmd),
          flush=True)
    return subprocess.run(cmd, cwd=cwd, env=env).returncode


def run(project: Optional[str], devices: int, steps: int) -> int:
    project = os.path.abspath(project) if project else default_project()
    if not os.path.isdir(os.path.join(project, "legacy_app")):
        print(f"anydev demo: {project} is not the legacy example project (no legacy_app/); "
              "pass --project", file=sys.stderr)
        return 2
    anydev_cmd = [sys.executable, "-m", "anydev"]
    env = dict(os.environ)
    env.setdefault("ANYDEV_SIM_DEVICES", str(devices))

    with tempfile.TemporaryDirectory(prefix="anydev-demo-") as tmp:
        # Everything runs on copies: the installed example may be read-only,
        # and running it must not leave byte code beside it.
        legacy = os.path.join(tmp, "legacy_project")
        copy = os.path.join(tmp, "migrated_project")
        for dest in (legacy, copy):
            shutil.copytree(project, dest, ignore=shutil.ignore_patterns("__pycache__"))

        _banner("1. scan the legacy project")
        _run(anydev_cmd + ["scan", "--statistics", "."], legacy, env)

        _banner("2. fix a copy (safe and unsafe fixes), showing the diff")
        _run(anydev_cmd + ["fix", "--unsafe-fixes", "--diff", "."], copy, env)
        _run(anydev_cmd + ["fix", "--unsafe-fixes", "."], copy, env)

        _banner("3. scan the fixed copy: what is left needs a human")
        _run(anydev_cmd + ["scan", "."], copy, env)

        _banner("4. run the legacy entry point on the simulated accelerator")
        rc = _run(anydev_cmd + ["run", "--facade", "-m", "legacy_app.train", "--steps",
                                str(steps)], legacy, env)
        if rc != 0:
            print(f"anydev demo: the legacy program failed ({rc})", file=sys.stderr)
            return 1

        _banner("5. run the migrated copy: what is left on its path")
        rc = _run(anydev_cmd + ["run", "--facade", "-m", "legacy_app.train", "--steps",
                                str(steps)], copy, env)
        if rc != 0:
            print(f"anydev demo: the migrated program failed ({rc})", file=sys.stderr)
            return 1

        if not _have_torch():
            print("\n(PyTorch is not installed for this Python: the runs on a non-CUDA "
                  "accelerator inside PyTorch, `anydev run --torch --accelerator sim`, are "
                  "left out)")
        elif _on_sim(anydev_cmd, legacy, copy, tmp, env, devices, steps) != 0:
            return 1
    print("\nok")
    return 0


def _have_torch() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


# What a person does with the findings the fixer leaves in the example
# (`anydev scan` of the fixed copy, `anydev rule CODE`): the device-generic
# spelling of each, as docs/migration-guide.md gives it.
_BY_HAND = [
    (re.compile(r"torch\.cuda\.get_device_name\("), "torch.get_device_module().get_device_name(",
     "AD911: the current accelerator's device module has it"),
    (re.compile(r"torch\.cuda\.Stream\("), "torch.Stream(", "torch.Stream of the accelerator"),
    (re.compile(r"with torch\.cuda\.stream\((\w+)\):"), r"with \1:",
     "AD111: a torch.Stream is its own context manager"),
    # the fixer leaves these: the generic call raises where there is no accelerator
    (re.compile(r"torch\.cuda\.(memory_allocated|max_memory_reserved)\(\)"),
     r"(torch.accelerator.\1() if torch.accelerator.is_available() else 0)",
     "AD204, AD207: guarded, as `anydev fix` says"),
]


def _finish_by_hand(root: str) -> None:
    """Applies _BY_HAND to the Python files under ``root``, showing the diff."""
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                before = f.read()
            after = before
            for pattern, replacement, _ in _BY_HAND:
                after = pattern.sub(replacement, after)
            if after == before:
                continue
            with open(path, "w", encoding="utf-8") as f:
                f.write(after)
            rel = os.path.relpath(path, root)
            sys.stdout.writelines(difflib.unified_diff(
                before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}"))
    sys.stdout.flush()


def _cuda_only_sites(report_path: str) -> Optional[list]:
    try:
        with open(report_path, encoding="utf-8") as f:
            return [c for c in json.load(f)["calls"] if c.get("cuda_only")]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _on_sim(anydev_cmd: list[str], legacy: str, copy: str, tmp: str, env: dict[str, str],
            devices: int, steps: int) -> int:
    """Steps 6 to 8: the legacy and the migrated code on sim inside PyTorch."""
    run_sim = anydev_cmd + ["run", "--torch", "--accelerator", f"sim:{devices}"]
    _banner("6. the legacy code on a non-CUDA accelerator: sim inside PyTorch")
    legacy_report = os.path.join(tmp, "legacy-on-sim.json")
    rc = _run(run_sim + ["--report", legacy_report, "-m", "legacy_app.train", "--steps",
                         str(steps)], legacy, env)
    sites = _cuda_only_sites(legacy_report)
    if rc == 2 and sites is None:  # sim could not be registered: said why on stderr
        print("anydev demo: sim cannot be registered in this PyTorch (see above)",
              file=sys.stderr)
        return 1
    print(f"-> the legacy code {'failed' if rc else 'ran'} on sim; CUDA-only call sites it "
          f"reached: {len(sites or [])}", flush=True)
    if rc == 0 and not sites:
        print("anydev demo: the legacy program neither failed nor asked for CUDA on sim",
              file=sys.stderr)
        return 1

    _banner("7. finish the migration by hand: what `anydev scan` left in the fixed copy")
    _finish_by_hand(copy)

    _banner("8. the migrated code on sim inside PyTorch: no CUDA-only code on its path")
    migrated_report = os.path.join(tmp, "migrated-on-sim.json")
    rc = _run(run_sim + ["--report", migrated_report, "-m", "legacy_app.train", "--steps",
                         str(steps)], copy, env)
    sites = _cuda_only_sites(migrated_report)
    if rc != 0 or sites is None or sites:
        print(f"anydev demo: the migrated program on sim exited {rc} with "
              f"{'no report' if sites is None else f'{len(sites)} CUDA-only call site(s)'}",
              file=sys.stderr)
        return 1
    print("-> the migrated code ran on sim and asked for CUDA nowhere", flush=True)
    return 0
