#!/usr/bin/env python3
"""Makes docs/images/report-html.png: the page of `anydev report html` for the
bundled example project (examples/legacy_project), with a migration history.

The example ships as one commit of this repository, so the script gives it a
history of its own in a temporary repository: the project as shipped, then
the steps a team would take with anydev, each a dated commit (the safe fixes
of one module, the unsafe fixes of another, the C++ extension's safe fixes),
all for a project that still supports torch 2.6 (--target-torch 2.6). It
then runs the migrated-so-far entry point under anydev's torch facade for a
runtime report, renders the page with --history and the report, and takes a
picture of it with headless Chromium.

    .venv/bin/python tools/report_html_example.py                 # docs/images/report-html.png
    .venv/bin/python tools/report_html_example.py --keep /tmp/ex  # keep the project and page
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = "2.6"

# (date, subject, the anydev fix arguments of the step; None: the project as shipped)
STEPS = [
    ("2025-01-06T10:00:00Z", "the legacy project, as shipped", None),
    ("2025-02-03T10:00:00Z", "devices: the safe fixes", ["legacy_app/devices.py"]),
    ("2025-03-03T10:00:00Z", "streams: the safe and unsafe fixes",
     ["--unsafe-fixes", "legacy_app/streams.py"]),
    ("2025-04-07T10:00:00Z", "the C++ extension: the safe fixes", ["csrc"]),
]
TAGS = {0: "v0.1", 2: "v0.2"}


def run(cmd: list[str], cwd: str, env: dict | None = None) -> str:
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode not in (0, 1):  # `anydev fix` exits 1 when findings are left
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def git(repo: str, *args: str, date: str | None = None) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="anydev", GIT_AUTHOR_EMAIL="anydev@example.com",
               GIT_COMMITTER_NAME="anydev", GIT_COMMITTER_EMAIL="anydev@example.com",
               GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", "-C", repo, *args], env=env, check=True, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "images", "report-html.png"))
    ap.add_argument("--keep", metavar="DIR", help="make the project here and keep it")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = ap.parse_args()
    anydev = [sys.executable, "-m", "anydev"]
    work = args.keep or tempfile.mkdtemp(prefix="anydev-report-html-")
    repo = os.path.join(work, "legacy_project")
    if os.path.exists(repo):
        sys.exit(f"{repo} exists; give another --keep folder")
    shutil.copytree(os.path.join(ROOT, "examples", "legacy_project"), repo,
                    ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    for n, (date, subject, fix) in enumerate(STEPS):
        if fix is not None:
            run(anydev + ["fix", "--target-torch", TARGET, *fix], repo)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", subject, date=date)
        if n in TAGS:
            git(repo, "tag", "-a", TAGS[n], "-m", TAGS[n], date=date)
    env = dict(os.environ, ANYDEV_SIM_DEVICES="2")
    run(anydev + ["run", "--facade", "--report", "run.json", "-m", "legacy_app.train",
                  "--steps", "2"], repo, env)
    page = os.path.join(repo, "report.html")
    run(anydev + ["report", "html", ".", "--history", "--report", "run.json",
                  "--target-torch", TARGET, "-o", page, "--title",
                  "examples/legacy_project: the migration so far"], repo)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    cmd = [args.chromium, "--headless", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", f"--user-data-dir={os.path.join(work, 'chromium')}",
           # the whole page, at three quarters of its size
           f"--screenshot={os.path.abspath(args.out)}", "--window-size=1280,3560",
           "--force-device-scale-factor=0.75",
           "file://" + page + "#file=legacy_app/train.py"]
    if os.geteuid() == 0:
        cmd.insert(1, "--no-sandbox")
    subprocess.run(cmd, check=True, capture_output=True)
    print(f"wrote {args.out} (the page: {page})")
    if not args.keep:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
