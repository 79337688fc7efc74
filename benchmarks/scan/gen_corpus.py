#!/usr/bin/env python3
"""Writes a deterministic corpus of realistic Python and C++/CUDA sources for
benchmarking `anydev scan` (benchmarks/scan/bench_scan.py).

    python benchmarks/scan/gen_corpus.py --size-mb 100 --out build/scan-corpus-100

The files look like a training code base and its extension kernels: module
docstrings, imports in every form the scanner resolves (`import torch as th`,
`from torch.cuda import ...`, imports inside functions), classes and functions
of ordinary code (arithmetic, loops, logging, f-strings), legacy calls here and
there (about one line in 60), device literals and idioms (`device="cuda"`, the
availability idiom, `at::kCUDA`: about one line in 100), and the look-alikes and non-code a scanner must
skip: `x.cuda()`, `self.cuda.synchronize()`, legacy names in comments, strings,
docstrings and `#if 0` groups. About 70% of the bytes are Python, 30% C++.
The same seed and size give the same bytes. Do not commit the output.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil

PY_LEGACY = [
    "torch.cuda.synchronize()", "torch.cuda.current_device()", "torch.cuda.device_count()",
    "torch.cuda.is_available()", "torch.cuda.empty_cache()", "torch.cuda.memory_allocated(dev)",
    "torch.cuda.max_memory_allocated()", "torch.cuda.reset_peak_memory_stats()",
    "torch.cuda.set_device(rank)", "torch.cuda.manual_seed(seed)", "torch.cuda.Stream()",
    "torch.cuda.Event(enable_timing=True)", "torch.cuda.current_stream()",
    "torch.cuda.get_rng_state()", "th.cuda.synchronize()", "th.cuda.memory_reserved(dev)",
    "tc.current_device()", "tc.empty_cache()", "cuda.device_count()", "sync()", "cd()",
]
PY_KEPT = ["torch.cuda.get_device_name(0)", "torch.cuda.get_device_properties(dev)",
           "torch.cuda.default_stream()", "torch.cuda.ipc_collect()"]
WORDS = ("loss batch model optim sched step grad weight bias input output hidden state "
         "mask logits target epoch rank world scale norm layer block head token embed "
         "value key query cache buffer param metric total count index shape size").split()
# Device literals and idioms (the AD9xx rules): about one line in 100 of each language.
PY_LITERAL = [
    'torch.zeros(8, device="cuda")', 'torch.device("cuda", rank)', '{x}.to("cuda")',
    '"cuda" if torch.cuda.is_available() else "cpu"', '{x}.is_cuda',
    'torch.device(f"cuda:{{rank}}")', 'torch.load(path, map_location="cuda")',
    'torch.autocast("cuda")', '{x}.device.type == "cuda"',
    'torch.empty(4, device="cuda:0" if torch.cuda.device_count() > 0 else "cpu")',
]
CPP_LITERAL = [
    "{x}.options().device(at::kCUDA)", "{x}.is_cuda()", "{x}.cuda()",
    "{x}.device().type() == c10::DeviceType::CUDA", "torch::Device(torch::kCUDA, 0)",
]
CPP_LEGACY = [
    "at::cuda::getCurrentCUDAStream()", "c10::cuda::current_device()",
    "c10::cuda::device_count()", "at::cuda::getStreamFromPool()",
    "c10::cuda::CUDACachingAllocator::emptyCache()", "c10::cuda::device_synchronize()",
    "cu::set_device(dev)", "getCurrentCUDAStream()", "at::cuda::is_available()",
]


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def w(self) -> str:
        return self.r.choice(WORDS)

    def name(self) -> str:
        return "_".join(self.w() for _ in range(self.r.randint(1, 3)))

    def expr(self, depth: int = 0) -> str:
        r = self.r
        k = r.random()
        if depth > 2 or k < 0.3:
            return self.name() if r.random() < 0.7 else str(r.randint(0, 4096))
        if k < 0.55:
            return f"{self.expr(depth + 1)} {r.choice('+-*/')} {self.expr(depth + 1)}"
        if k < 0.75:
            return f"{self.name()}({', '.join(self.expr(depth + 1) for _ in range(r.randint(0, 3)))})"
        if k < 0.85:
            return f"{self.name()}.{self.w()}({self.expr(depth + 1)})"
        if k < 0.93:
            return f"[{self.expr(depth + 1)} for {self.w()} in range({r.randint(1, 64)})]"
        return f"{self.name()}[{self.expr(depth + 1)}]"

    # --- Python ---------------------------------------------------------------

    def py_line(self, ind: str) -> str:
        r = self.r
        k = r.random()
        if k < 1 / 60:
            return f"{ind}{self.name()} = {r.choice(PY_LEGACY)}"
        if k < 1.5 / 60:
            return f"{ind}{self.name()} = {r.choice(PY_KEPT)}"
        if k < 0.05:
            return f"{ind}# TODO: drop torch.cuda.synchronize() once {self.name()} is async"
        if k < 0.08:
            return (f"{ind}logger.info(f\"{self.w()} {{{self.name()}:.3f}} on "
                    f"torch.cuda device {{{self.name()}}}\")")
        if k < 0.10:
            return f"{ind}{self.name()} = {self.name()}.cuda()"
        if k < 0.11:
            return f"{ind}self.cuda.synchronize()  # not torch's"
        if k < 0.13:
            return f"{ind}msg = \"call torch.cuda.empty_cache() between {self.w()}s\""
        if k < 0.14:
            return f"{ind}{self.name()} = {r.choice(PY_LITERAL).format(x=self.name())}"
        if k < 0.40:
            return f"{ind}{self.name()} = {self.expr()}"
        if k < 0.50:
            return f"{ind}{self.name()} += {self.expr()}"
        if k < 0.60:
            return f"{ind}{self.expr()}"
        if k < 0.68:
            return f"{ind}assert {self.name()} is not None, \"{self.w()} {self.w()} missing\""
        return f"{ind}{self.name()}.{self.w()} = {self.expr()}"

    def py_block(self, ind: str, n: int) -> list[str]:
        out = []
        r = self.r
        while len(out) < n:
            k = r.random()
            if k < 0.12 and len(ind) < 12:
                out.append(f"{ind}for {self.w()} in range({self.expr()}):")
                out += self.py_block(ind + "    ", r.randint(1, 6))
            elif k < 0.2 and len(ind) < 12:
                out.append(f"{ind}if {self.name()} > {r.randint(0, 100)}:")
                out += self.py_block(ind + "    ", r.randint(1, 4))
            else:
                out.append(self.py_line(ind))
        return out

    def py_file(self, target: int) -> str:
        r = self.r
        out = ["# Copyright (c) the authors. Licensed under the Apache License 2.0.",
               f'"""{self.w().capitalize()} utilities: {" ".join(self.w() for _ in range(8))}.',
               "",
               "Call torch.cuda.synchronize() before timing; torch.cuda.current_device()",
               'is read once per process."""', "",
               "from __future__ import annotations", "", "import os", "import math",
               "import logging", "import numpy as np", "import torch"]
        out += r.sample(["import torch as th", "import torch.cuda as tc",
                         "from torch import cuda",
                         "from torch.cuda import synchronize as sync, current_device as cd",
                         "from torch.cuda.amp import autocast, GradScaler"], 3)
        out += ["", "logger = logging.getLogger(__name__)", ""]
        size = sum(len(x) + 1 for x in out)
        while size < target:
            block = []
            if r.random() < 0.3:
                block.append(f"class {self.w().capitalize()}{self.w().capitalize()}(torch.nn.Module):")
                block.append(f'    """{" ".join(self.w() for _ in range(10))}."""')
                for _ in range(r.randint(2, 5)):
                    block.append("")
                    block.append(f"    def {self.name()}(self, {self.w()}, {self.w()}=None):")
                    if r.random() < 0.2:
                        block.append("        import torch.cuda as tc")
                    block += self.py_block("        ", r.randint(4, 30))
                    block.append(f"        return {self.expr()}")
            else:
                block.append(f"def {self.name()}({self.w()}, *, {self.w()}: int = {r.randint(0, 9)}):")
                block.append(f'    """{" ".join(self.w() for _ in range(12))}."""')
                if r.random() < 0.1:
                    block.append("    with autocast(dtype=torch.float16):")
                    block += self.py_block("        ", r.randint(2, 8))
                block += self.py_block("    ", r.randint(5, 40))
                block.append(f"    return {self.expr()}")
            block += ["", ""]
            out += block
            size += sum(len(x) + 1 for x in block)
        return "\n".join(out) + "\n"

    # --- C++ ------------------------------------------------------------------------

    def cpp_stmt(self, ind: str) -> str:
        r = self.r
        k = r.random()
        if k < 1 / 50:
            return f"{ind}auto {self.name()} = {r.choice(CPP_LEGACY)};"
        if k < 0.04:
            return f"{ind}// keep c10::cuda::current_device() in sync with {self.w()}"
        if k < 0.05:
            return f"{ind}TORCH_CHECK({self.name()} >= 0, \"at::cuda::{self.w()} failed\");"
        if k < 0.055:
            return f"{ind}auto {self.name()} = {r.choice(CPP_LITERAL).format(x=self.name())};"
        if k < 0.06:
            return f"{ind}c10::cuda::CUDAGuard guard({self.name()});"
        if k < 0.35:
            return f"{ind}const int64_t {self.name()} = {self.expr()};"
        if k < 0.55:
            return f"{ind}{self.name()}[{self.name()}] += {self.expr()};"
        if k < 0.7:
            return f"{ind}{self.name()}.{self.w()}({self.expr()});"
        return f"{ind}{self.name()} = std::max<int64_t>({self.expr()}, {r.randint(0, 9)});"

    def cpp_file(self, target: int, cuda: bool) -> str:
        r = self.r
        out = ["// Copyright (c) the authors. Licensed under the Apache License 2.0.",
               "#include <ATen/ATen.h>", "#include <ATen/cuda/CUDAContext.h>",
               "#include <c10/cuda/CUDAGuard.h>", "#include <vector>", "",
               "namespace cu = c10::cuda;", "", "namespace at {", "namespace native {",
               "using c10::cuda::getCurrentCUDAStream;", ""]
        size = sum(len(x) + 1 for x in out)
        while size < target:
            block = []
            k = r.random()
            if k < 0.05:
                block += ["#if 0", f"  c10::cuda::device_synchronize();  // {self.w()}", "#endif"]
            if cuda and k < 0.3:
                block.append(f"__global__ void {self.name()}_kernel(const float* __restrict__ in, "
                             "float* out, int64_t n) {")
                block.append("  const int64_t i = blockIdx.x * blockDim.x + threadIdx.x;")
                block.append("  if (i >= n) return;")
                block += [self.cpp_stmt("  ") for _ in range(r.randint(3, 12))]
                block.append("}")
            else:
                block.append(f"/* {' '.join(self.w() for _ in range(9))}:")
                block.append(f" * at::cuda::getCurrentCUDAStream() is {self.w()} here. */")
                block.append(f"Tensor {self.name()}(const Tensor& self, int64_t {self.w()}) {{")
                for _ in range(r.randint(4, 40)):
                    if r.random() < 0.1:
                        block.append(f"  for (int64_t {self.w()} = 0; {self.w()} < {r.randint(2, 99)}; ++{self.w()}) {{")
                        block += [self.cpp_stmt("    ") for _ in range(r.randint(1, 5))]
                        block.append("  }")
                    else:
                        block.append(self.cpp_stmt("  "))
                block.append(f"  return {self.name()};")
                block.append("}")
            block.append("")
            out += block
            size += sum(len(x) + 1 for x in block)
        out += ["}  // namespace native", "}  // namespace at"]
        return "\n".join(out) + "\n"


def plain(text: str) -> str:
    """The same code with no GPU API in it: every `cuda` renamed (a file of
    a mixed tree that never touches the device)."""
    return text.replace("cuda", "core").replace("CUDA", "Core").replace("__global__ ", "")


def generate(out_dir: str, size_mb: float, seed: int = 20250101,
             legacy_share: float = 1.0) -> tuple[int, int]:
    """Writes the corpus; returns (files, bytes). ``legacy_share``: the
    fraction of the files that use the GPU API (1: all, the default; a
    mixed real-style tree has 0.1 to 0.3); the others are :func:`plain`."""
    g = Gen(seed)
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    target = int(size_mb * 1_000_000)
    total = files = 0
    while total < target:
        pkg = os.path.join(out_dir, f"pkg{files // 40:04d}",
                           g.r.choice(["models", "utils", "ops", "train", "data"]))
        os.makedirs(pkg, exist_ok=True)
        if g.r.random() < 0.7:
            text = g.py_file(g.r.randint(2_000, 60_000))
            path = os.path.join(pkg, f"{g.name()}_{files}.py")
        else:
            cuda = g.r.random() < 0.5
            text = g.cpp_file(g.r.randint(2_000, 60_000), cuda)
            path = os.path.join(pkg, f"{g.name()}_{files}.{'cu' if cuda else 'cpp'}")
        if legacy_share < 1 and g.r.random() >= legacy_share:
            text = plain(text)
            path = path.replace(".cu", ".cpp") if path.endswith(".cu") else path
        data = text.encode("utf-8")
        with open(path, "wb") as f:
            f.write(data)
        total += len(data)
        files += 1
    return files, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--out", default="build/scan-corpus")
    ap.add_argument("--seed", type=int, default=20250101)
    ap.add_argument("--legacy-share", type=float, default=1.0,
                    help="fraction of files that use the GPU API (default 1: all)")
    a = ap.parse_args()
    files, total = generate(a.out, a.size_mb, a.seed, a.legacy_share)
    print(f"wrote {files} files, {total / 1e6:.1f} MB to {a.out}")


if __name__ == "__main__":
    main()
