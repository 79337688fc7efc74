#!/usr/bin/env python3
"""Writes a deterministic, valid Python repository of legacy torch.cuda code for
measuring `anydev fix` (benchmarks/fix/fix_targets.py): every file parses, and
the code takes the shapes real projects have — training loops, memory reports,
version-guarded AMP fallbacks, CUDA backend classes, guards around "cuda"
literals, streams whose raw handles are used, vendor-switched imports.

    python benchmarks/fix/gen_repo.py --modules 200 --out build/fix-repo
"""

from __future__ import annotations

import argparse
import os
import random
import shutil

SNIPPETS = {
    "plain": '''
def sync_{i}():
    torch.cuda.synchronize()
    return torch.cuda.current_device(), torch.cuda.device_count()
''',
    "memory": '''
def memory_{i}(dev=None):
    torch.cuda.empty_cache()
    return torch.cuda.memory_allocated(dev), torch.cuda.max_memory_reserved(dev)
''',
    "seed": '''
def seed_{i}(seed):
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    return torch.cuda.get_rng_state()
''',
    "guard_literal": '''
def device_{i}():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
''',
    "guard_generic": '''
def maybe_sync_{i}():
    if torch.cuda.is_available():
        torch.cuda.synchronize()
''',
    "amp_guard": '''
def scaler_{i}(enabled=True):
    if _TORCH_GREATER_EQUAL_2_4:
        return torch.amp.GradScaler("cuda", enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)
''',
    "amp": '''
def step_{i}(model, x, opt):
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast(dtype=torch.bfloat16):
        loss = model(x).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
''',
    "stream_raw": '''
def raw_stream_{i}(lib):
    s = torch.cuda.Stream()
    lib.launch(s.cuda_stream)
    return s
''',
    "stream": '''
def timed_{i}(fn):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)
''',
    "device_ctx": '''
def on_{i}(p, index: int, fn):
    with torch.cuda.device(index):
        fn()
    with torch.cuda.device(p.device):
        fn()
''',
    "home": '''
class CUDABackend{i}:
    def is_available(self):
        return torch.cuda.is_available()

    def count(self):
        return torch.cuda.device_count()
''',
}
HEADER = '''"""Generated module {n} of a legacy training code base."""

import torch

_TORCH_GREATER_EQUAL_2_4 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 4)

try:
    from torch.amp import GradScaler as _GradScaler
except ImportError:
    from torch.cuda.amp import GradScaler as _GradScaler
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", required=True)
    ap.add_argument("--torch", default="torch>=2.1", help="the project's torch requirement")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shutil.rmtree(args.out, ignore_errors=True)
    pkg = os.path.join(args.out, "src", "genpkg")
    os.makedirs(pkg)
    with open(os.path.join(args.out, "pyproject.toml"), "w") as f:
        f.write(f'[project]\nname = "genpkg"\nversion = "0"\ndependencies = ["{args.torch}"]\n')
    open(os.path.join(pkg, "__init__.py"), "w").close()
    kinds = sorted(SNIPPETS)
    for n in range(args.modules):
        parts = [HEADER.format(n=n)]
        for i in range(rng.randint(3, 8)):
            parts.append(SNIPPETS[rng.choice(kinds)].format(i=i))
        with open(os.path.join(pkg, f"mod_{n:04d}.py"), "w") as f:
            f.write("\n".join(parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
