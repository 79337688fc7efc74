"""A legacy project with a migration history, made by the tests with real git
commits: four commits a month apart, each fixing some of the legacy code,
two of them tagged. The tests of tests/python/dashboard scan it, walk its
history, run it under anydev for a runtime report and render its page.

    repo = make_repo(tmp_path / "proj")      # the work tree, at the last commit
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# The versions of the files, commit by commit (None: the file is deleted).
TRAIN_V1 = '''\
import torch
from torch.cuda import current_device as cd


def pick():
    return "cuda" if torch.cuda.is_available() else "cpu"


def hot():
    torch.cuda.set_device(0)
    n = cd() + torch.cuda.device_count()
    torch.cuda.synchronize()
    getattr(torch.cuda, "synchronize")()
    return n


def place(x):
    y = torch.zeros(8, device="cuda")
    return x.to("cuda"), y
'''

# Commit 3: the availability idiom and one literal migrated by hand.
TRAIN_V2 = '''\
import torch
from torch.cuda import current_device as cd


def pick():
    return torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")


def hot():
    torch.cuda.set_device(0)
    n = cd() + torch.cuda.device_count()
    torch.cuda.synchronize()
    getattr(torch.cuda, "synchronize")()
    return n


def place(x):
    y = torch.zeros(8, device=torch.accelerator.current_accelerator())
    return x.to("cuda"), y
'''

UTIL_V1 = '''\
import torch


def sync_all():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def stats():
    return torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated()


def stream():
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        pass
    return s
'''

# Commit 2: the safe fixes applied.
UTIL_V2 = '''\
import torch


def sync_all():
    torch.accelerator.synchronize()
    torch.cuda.empty_cache()


def stats():
    return torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated()


def stream():
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        pass
    return s
'''

OPS_CPP = '''\
#include <c10/cuda/CUDAFunctions.h>
#include <ATen/cuda/CUDAContext.h>

int devices() { return c10::cuda::device_count(); }

void sync() {
  auto s = at::cuda::getCurrentCUDAStream();
  c10::cuda::device_synchronize();
  (void)s;
}
'''

RUN_PY = '''\
import pkg.train as train

for _ in range(100):
    train.hot()
'''

PYPROJECT = '''\
[project]
name = "proj"
version = "0.1"
dependencies = ["torch>=2.1"]
'''

# (date, subject, tag, {path: content or None})
COMMITS = [
    ("2024-01-15T12:00:00Z", "the legacy project", "v1.0",
     {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "", "pkg/train.py": TRAIN_V1,
      "pkg/util.py": UTIL_V1, "csrc/ops.cpp": OPS_CPP, "run.py": RUN_PY,
      "README.md": "a legacy project\n"}),
    ("2024-02-15T12:00:00Z", "util: the safe fixes", None, {"pkg/util.py": UTIL_V2}),
    ("2024-03-15T12:00:00Z", "train: the availability idiom and a literal by hand", "v1.1",
     {"pkg/train.py": TRAIN_V2}),
    ("2024-04-15T12:00:00Z", "drop the C++ extension", None, {"csrc/ops.cpp": None}),
]


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = dict(os.environ)
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_CONFIG_NOSYSTEM="1")
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                          capture_output=True, text=True).stdout


def make_repo(repo: Path) -> Path:
    """The project of COMMITS as a git repository at ``repo`` (created)."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    for date, subject, tag, files in COMMITS:
        for path, text in files.items():
            p = repo / path
            if text is None:
                git(repo, "rm", "-q", path)
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
            git(repo, "add", path)
        git(repo, "commit", "-q", "-m", subject, date=date)
        if tag:
            git(repo, "tag", "-a", tag, "-m", tag, date=date)
    return repo


def commits(repo: Path) -> list[str]:
    """The commits of the fixture, oldest first."""
    return git(repo, "rev-list", "--reverse", "HEAD").split()
