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

--style real writes what real repositories have instead (RealGen: license
headers, long docstrings, runs of imports, deep indents, names with a needle
inside a word, `# noqa` comments, and configs, docs and data beside the
sources), and --compare TREE prints its statistics beside a real tree's:

    python benchmarks/scan/gen_corpus.py --style real --size-mb 20 \\
        --out build/scan-real-20 --compare /work/devset/Megatron-LM
"""

from __future__ import annotations

import argparse
import os
import random
import re
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
             legacy_share: float = 1.0, style: str = "gpu") -> tuple[int, int]:
    """Writes the corpus; returns (files, bytes). ``legacy_share``: the
    fraction of the files that use the GPU API (1: all, the default; a
    mixed real-style tree has 0.1 to 0.3); the others are :func:`plain`.
    ``style``: "gpu" (this generator's own files) or "real" (RealGen)."""
    if style == "real":
        return generate_real(out_dir, size_mb, seed, legacy_share)
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


# --- real-style trees ------------------------------------------------------------
#
# What the generated GPU tree lacks and real repositories have (measured on
# the development set's trees by `gen_corpus.py --style real --compare TREE`,
# which prints the statistics of both): license headers and long docstrings
# (Google style, with Args and Returns), a run of imports at the top of most
# modules (`from pkg.sub.module import A, B`, parenthesised over lines), code
# indented 8 to 16 spaces in classes, names that hold a needle inside a word
# (`cuda_graph`, `get_cuda_rng_tracker`: a line with one is no finding),
# `# noqa` comments (`# noqa: F401` on imports, `# noqa: E501`), and files
# the scanner never reads beside the sources (configs, docs, data).

REAL_PKGS = ["core", "models", "training", "data", "utils", "ops", "inference", "dist",
             "transformer", "optim", "tensor_parallel", "pipeline", "export", "tests"]
REAL_WORDS = ("config layer tensor parallel state group rank world size hidden seq batch "
              "attention mlp norm bias weight input output mask grad optimizer schedule "
              "checkpoint module spec params args kwargs dtype device stream buffer "
              "offset shape dim head token vocab expert router").split()
# Names with a needle inside a word (no finding), as real GPU code has them.
NEEDLE_WORDS = ["cuda_graph", "get_cuda_rng_tracker", "model_parallel_cuda_manual_seed",
                "num_cuda_graphs", "cudagraph_manager", "nccl_ub", "use_cuda_graphs",
                "CUDA_DEVICE_MAX_CONNECTIONS", "nccl_comm_cfgs", "enable_cuda_graph"]


class RealGen(Gen):
    def rname(self) -> str:
        r = self.r
        if r.random() < 0.012:
            return r.choice(NEEDLE_WORDS)
        return "_".join(r.choice(REAL_WORDS) for _ in range(r.randint(1, 3)))

    def sentence(self, n: int = 12) -> str:
        return " ".join(self.r.choice(REAL_WORDS) for _ in range(n)).capitalize() + "."

    def docstring(self, ind: str, args: list[str]) -> list[str]:
        r = self.r
        out = [f'{ind}"""{self.sentence(r.randint(5, 12))}', ""]
        for _ in range(r.randint(0, 2)):
            out.append(f"{ind}{self.sentence(r.randint(8, 14))}")
            if r.random() < 0.15:
                out.append(f"{ind}Call torch.cuda.synchronize() before timing this.")
        if args:
            out += ["", f"{ind}Args:"]
            for a in args:
                kind = r.choice(["int", "torch.Tensor", "Optional[str]", "bool"])
                out.append(f"{ind}    {a} ({kind}): {self.sentence(r.randint(4, 10))}")
        out += ["", f"{ind}Returns:", f"{ind}    {self.sentence(r.randint(3, 8))}", f'{ind}"""']
        return out

    def imports(self, pkg: str) -> list[str]:
        r = self.r
        out = ["from __future__ import annotations", ""]
        out += sorted(r.sample(["import functools", "import logging", "import math", "import os",
                                "import warnings", "from dataclasses import dataclass",
                                "from typing import Any, Dict, List, Optional, Tuple, Union",
                                "import dataclasses", "import inspect"], r.randint(2, 6)))
        out += ["", "import torch"]
        if r.random() < 0.4:
            out.append("import torch.distributed as dist")
        if r.random() < 0.15:
            out.append(r.choice(["from torch.cuda.amp import autocast",
                                 "from torch import cuda", "import torch.cuda as tc"]))
        out.append("")
        for _ in range(r.randint(2, 8)):
            mod = ".".join([pkg] + [r.choice(REAL_PKGS) for _ in range(r.randint(1, 3))])
            names = [self.rname().title().replace("_", "") if r.random() < 0.5 else self.rname()
                     for _ in range(r.randint(1, 6))]
            line = f"from {mod} import {', '.join(names)}"
            if len(line) > 100 or r.random() < 0.1:
                out += [f"from {mod} import ("] + [f"    {n}," for n in names] + [")"]
            else:
                out.append(line + ("  # noqa: F401" if r.random() < 0.004 else ""))
        return out

    def stmt(self, ind: str) -> str:
        r = self.r
        k = r.random()
        if k < 0.008:
            return f"{ind}{self.rname()} = {r.choice(PY_LEGACY[:14])}"
        if k < 0.012:
            return f"{ind}{self.rname()} = {r.choice(PY_LITERAL).format(x=self.rname())}"
        if k < 0.02:
            return f"{ind}{self.rname()} = {self.rname()}.cuda()"
        if k < 0.12:
            return f"{ind}# {self.sentence(r.randint(5, 14))[:-1]}"
        if k < 0.1208:
            return f"{ind}{self.rname()} = {self.expr()}  # noqa: E501"
        if k < 0.09:
            return (f"{ind}logger.info(f\"{self.rname()} {{{self.rname()}}} "
                    f"{{{self.rname()}.{self.rname()}:.3f}}\")")
        if k < 0.12:
            return f"{ind}self.{self.rname()} = {self.rname()}"
        if k < 0.16:
            args = ", ".join(f"{self.rname()}={self.rname()}" for _ in range(r.randint(2, 5)))
            return f"{ind}{self.rname()} = {self.rname()}(\n{ind}    {args},\n{ind})"
        if k < 0.5:
            return f"{ind}{self.rname()} = {self.expr()}"
        return f"{ind}{self.rname()}.{self.rname()}({self.expr()})"

    def block(self, ind: str, n: int, depth: int = 0) -> list[str]:
        out: list[str] = []
        r = self.r
        while len(out) < n:
            k = r.random()
            if k < 0.15 and depth < 4:
                out.append(f"{ind}if {self.rname()} is not None and {self.rname()}:")
                out += self.block(ind + "    ", r.randint(1, 5), depth + 1)
            elif k < 0.2 and depth < 4:
                out.append(f"{ind}for {self.rname()} in {self.rname()}:")
                out += self.block(ind + "    ", r.randint(1, 5), depth + 1)
            elif k < 0.23 and depth < 4:
                out.append(f"{ind}with torch.no_grad():")
                out += self.block(ind + "    ", r.randint(1, 4), depth + 1)
            else:
                out.append(self.stmt(ind))
        return out

    def function(self, ind: str, method: bool) -> list[str]:
        r = self.r
        args = [self.rname() for _ in range(r.randint(1, 5))]
        params = (["self"] if method else []) + [
            f"{a}: {r.choice(['int', 'bool', 'Optional[torch.Tensor]', 'TransformerConfig'])}"
            + (" = None" if r.random() < 0.3 else "") for a in args]
        result = r.choice(["None", "torch.Tensor", "int"])
        sig = f"{ind}def {self.rname()}({', '.join(params)}) -> {result}:"
        if len(sig) > 100:
            sig = (f"{ind}def {self.rname()}(\n" + "".join(f"{ind}    {p},\n" for p in params) +
                   f"{ind}) -> {result}:")
        out = [sig]
        if r.random() < 0.55:
            out += self.docstring(ind + "    ", args)
        if r.random() < 0.1:
            out.append(f"{ind}    from {self.rname()}.{self.rname()} import {self.rname()}")
        out += self.block(ind + "    ", r.randint(3, 28))
        out.append(f"{ind}    return {self.expr()}")
        return out + [""]

    def py_file(self, target: int, pkg: str = "megatron") -> str:  # type: ignore[override]
        r = self.r
        out = ["# Copyright (c) 2026, the authors. All rights reserved.", "#",
               "# Licensed under the Apache License, Version 2.0 (the \"License\");",
               "# you may not use this file except in compliance with the License.",
               "# You may obtain a copy of the License at the address in LICENSE.", "#",
               "# Unless required by applicable law or agreed to in writing, software",
               "# distributed under the License is distributed on an \"AS IS\" BASIS,",
               "# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.", ""]
        if r.random() < 0.7:
            out += [f'"""{self.sentence(10)}', ""] + \
                [self.sentence(r.randint(8, 14)) for _ in range(r.randint(1, 6))] + ['"""', ""]
        out += self.imports(pkg) + ["", "logger = logging.getLogger(__name__)", "", ""]
        size = sum(len(x) + 1 for x in out)
        while size < target:
            if r.random() < 0.5:
                block = [f"class {self.rname().title().replace('_', '')}(torch.nn.Module):"]
                block += self.docstring("    ", [])
                for _ in range(r.randint(1, 6)):
                    block.append("")
                    block += self.function("    ", True)
            else:
                block = self.function("", False)
            block += ["", ""]
            out += block
            size += sum(len(x) + 1 for x in block)
        return "\n".join(out) + "\n"

    def other_file(self) -> tuple[str, str]:
        """A file the scanner never reads: a config, a doc, a script, data."""
        r = self.r
        kind = r.choice(["json", "yaml", "yaml", "md", "sh", "txt"])
        n = r.randint(20, 3000)
        if kind == "json":
            body = "{\n" + ",\n".join(f'  "{self.rname()}": {r.randint(0, 4096)}'
                                      for _ in range(n)) + "\n}\n"
        elif kind == "yaml":
            body = "".join(f"{self.rname()}: {r.choice(['true', 'cuda', str(r.randint(0, 99))])}\n"
                           for _ in range(n))
        elif kind == "md":
            body = "".join(f"{self.sentence(r.randint(6, 18))}\n\n" for _ in range(n // 4 + 1))
        elif kind == "sh":
            body = "#!/bin/bash\n" + "".join(f"export {self.rname().upper()}={r.randint(0, 9)}\n"
                                            for _ in range(n // 4 + 1))
        else:
            body = "".join(f"{r.random():.6f} {r.random():.6f}\n" for _ in range(n))
        return kind, body


def generate_real(out_dir: str, size_mb: float, seed: int = 20250101,
                  legacy_share: float = 1.0) -> tuple[int, int]:
    """A real-style tree (RealGen); ``size_mb`` counts its source bytes, the
    files the scanner reads (the others come beside them, as in a real
    repository). Returns (source files, source bytes)."""
    g = RealGen(seed)
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    with open(os.path.join(out_dir, ".gitignore"), "w") as f:
        f.write("__pycache__\n*.so\nbuild\n*.egg-info\n*~\n*.swp\nlogs\n.vscode\nwandb/\n"
                "runs/\n/test_cases/\n**/dist/\ndocs/_build\n")
    target = int(size_mb * 1_000_000)
    total = files = 0
    while total < target:
        parts = [g.r.choice(REAL_PKGS) for _ in range(g.r.randint(1, 3))]
        pkg = os.path.join(out_dir, "megatron", *parts)
        os.makedirs(pkg, exist_ok=True)
        if g.r.random() < 0.96:
            text = g.py_file(int(g.r.lognormvariate(9.2, 0.9)))
            path = os.path.join(pkg, f"{g.rname()}_{files}.py")
        else:
            text = g.cpp_file(g.r.randint(2_000, 30_000), True)
            path = os.path.join(pkg, f"{g.rname()}_{files}.cu")
        if legacy_share < 1 and g.r.random() >= legacy_share:
            text = plain(text)
        data = text.encode("utf-8")
        with open(path, "wb") as f:
            f.write(data)
        total += len(data)
        files += 1
        for _ in range(g.r.choice([0, 1, 1, 2, 3])):  # configs, docs, data beside it
            kind, body = g.other_file()
            name = f"{g.rname()}_{files}_{g.r.randint(0, 999)}.{kind}"
            with open(os.path.join(pkg, name), "w") as f:
                f.write(body)
    return files, total


# --- statistics of a tree: a generated one against a real one --------------------

NEEDLE = re.compile(rb"cuda|xpu|accelerator|nccl")
WHOLE_NEEDLE = re.compile(rb"(?<![A-Za-z0-9_])(cuda|xpu|accelerator|nccl|is_cuda)(?![A-Za-z0-9_])")
SOURCES = (".py", ".pyi", ".h", ".hpp", ".hh", ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".hip")
TRIPLE = ('"' * 3, "'" * 3)


def tree_stats(top: str, sample: int = 400) -> dict[str, float]:
    """What a scanner meets in a tree: its kinds of files, and in (a sample
    of up to ``sample``) Python files the shares of docstrings and comments
    (by tokenize), the import, noqa and needle lines, and the indents."""
    import io
    import tokenize

    py, cpp, other = [], [], []
    for d, dirs, names in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != ".git")
        for n in names:
            p = os.path.join(d, n)
            if os.path.islink(p) or n == ".stamp":
                continue
            (py if n.endswith((".py", ".pyi")) else cpp if n.endswith(SOURCES) else other).append(p)

    def size(paths: list[str]) -> int:
        return sum(os.path.getsize(p) for p in paths)

    py.sort()
    picked = py[::max(1, len(py) // sample)]
    lines = nbytes = doc = com = imp = ind = nonblank = noqa = needle = whole = 0
    for p in picked:
        with open(p, "rb") as f:
            data = f.read()
        nbytes += len(data)
        for line in data.split(b"\n"):
            lines += 1
            s = line.lstrip(b" ")
            if s.strip():
                nonblank += 1
                ind += len(line) - len(s)
            if s.startswith(b"import ") or (s.startswith(b"from ") and b" import" in s):
                imp += 1
            noqa += b"noqa" in line.lower()
            if NEEDLE.search(line):
                needle += 1
                whole += WHOLE_NEEDLE.search(line) is not None
        try:
            for t in tokenize.tokenize(io.BytesIO(data).readline):
                if t.type == tokenize.STRING and t.string.lstrip("rbuRBUfF")[:3] in TRIPLE:
                    doc += len(t.string.encode())
                elif t.type == tokenize.COMMENT:
                    com += len(t.string.encode())
        except (tokenize.TokenError, SyntaxError):
            pass
    k = max(lines, 1) / 1000
    src = size(py) + size(cpp)
    return {
        "Python files": len(py), "C/C++ files": len(cpp), "other files": len(other),
        "source share of all bytes": src / max(1, src + size(other)),
        "Python share of source bytes": size(py) / max(1, src),
        "bytes a Python file": size(py) / max(1, len(py)),
        "lines a Python file": lines / max(1, len(picked)),
        "docstring (triple-quoted) share": doc / max(1, nbytes),
        "comment share": com / max(1, nbytes),
        "import lines a 1000": imp / k, "mean indent (spaces)": ind / max(1, nonblank),
        "noqa lines a 1000": noqa / k, "needle lines a 1000": needle / k,
        "of them whole-word a 1000": whole / k,
    }


def compare(generated: str, real: str) -> None:
    """Prints the statistics of a generated tree beside a real one's."""
    a, b = tree_stats(generated), tree_stats(real)
    print(f"{'':34} {'generated':>12} {'real':>12}")
    for key in a:
        print(f"{key:34} {a[key]:12.3f} {b[key]:12.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--out", default="build/scan-corpus")
    ap.add_argument("--seed", type=int, default=20250101)
    ap.add_argument("--legacy-share", type=float, default=1.0,
                    help="fraction of files that use the GPU API (default 1: all)")
    ap.add_argument("--style", choices=["gpu", "real"], default="gpu",
                    help="gpu: every file GPU code, no other file; real: what real "
                         "repositories have (RealGen)")
    ap.add_argument("--compare", metavar="TREE",
                    help="print the statistics of the tree written and of TREE, a real one")
    a = ap.parse_args()
    files, total = generate(a.out, a.size_mb, a.seed, a.legacy_share, style=a.style)
    print(f"wrote {files} source files, {total / 1e6:.1f} MB of sources to {a.out}")
    if a.compare:
        compare(a.out, a.compare)


if __name__ == "__main__":
    main()
