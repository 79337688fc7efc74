"""``anydev demo``: the migration demo on the bundled legacy project.

1. scan it, with statistics (``anydev scan --statistics``);
2. fix a copy (``anydev fix --unsafe-fixes``) and show the diff;
3. scan the copy again: what is left needs a human (rows without a fix);
4. run the legacy entry point under anydev's shims on the simulated
   accelerator, with the runtime report printed (``anydev run --facade``),
   then the migrated copy, which runs without a single legacy call.
"""

from __future__ import annotations

import os
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

        _banner("5. run the migrated copy: no legacy call left on its path")
        rc = _run(anydev_cmd + ["run", "--facade", "-m", "legacy_app.train", "--steps",
                                str(steps)], copy, env)
        if rc != 0:
            print(f"anydev demo: the migrated program failed ({rc})", file=sys.stderr)
            return 1
    print("\nok")
    return 0
