#!/usr/bin/env python3
"""The cost of counting CUDA-only code on sim (`anydev run --torch --accelerator
sim`, anydev._torch.cuda_only) when the code asks for no CUDA, in one run.

    .venv/bin/python benchmarks/python/bench_cuda_only.py [--json]

The counting is a TorchFunctionMode for the whole run: every PyTorch function
and tensor method called from Python goes through PyTorch's mode dispatch and
anydev's native __torch_function__ (python/src/bind_watch.cc). Two figures,
with the counting off and on, interleaved so both see the same machine load:

  * a small MLP's training step on sim (forward, cross-entropy, backward,
    Adam; 64 -> 256 -> 256 -> 10, batch 64, float32), as in
    bench_torch_sim.py: the best of --repeat runs of --number steps, wall and
    process CPU time (operators single-threaded);
  * one tensor method call (`x.add(x)` on a 4-element CPU tensor), ns a call:
    the dispatch cost alone, the best of --repeat runs of 20,000 calls.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--number", type=int, default=20, help="steps per timed run")
    ap.add_argument("--repeat", type=int, default=15, help="timed runs per setting")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args()

    import torch

    import anydev.torch
    from anydev._torch import cuda_only

    anydev.torch.register_sim(devices=1)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10)).to("sim")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(64, 64, device="sim")
    y = torch.randint(0, 10, (64,), device="sim")

    def step() -> None:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    small = torch.ones(4)

    def calls(n: int) -> None:
        for _ in range(n):
            small.add(small)

    for _ in range(10):  # warm up: allocator caches, optimizer state
        step()
    settings = ("off", "on")
    wall = {s: float("inf") for s in settings}
    cpu = {s: float("inf") for s in settings}
    per_call = {s: float("inf") for s in settings}
    for _ in range(args.repeat):
        for s in settings:
            if s == "on":
                cuda_only.install()
            w, c = time.perf_counter(), time.process_time()
            for _ in range(args.number):
                step()
            wall[s] = min(wall[s], (time.perf_counter() - w) / args.number)
            cpu[s] = min(cpu[s], (time.process_time() - c) / args.number)
            w = time.perf_counter()
            calls(20000)
            per_call[s] = min(per_call[s], (time.perf_counter() - w) / 20000)
            if s == "on":
                cuda_only.uninstall()
    torch.accelerator.synchronize()
    counted = [c for c in cuda_only.sites()]
    result = {
        "step_off_us": round(wall["off"] * 1e6, 1), "step_on_us": round(wall["on"] * 1e6, 1),
        "ratio": round(wall["on"] / wall["off"], 3),
        "step_off_us_cpu_time": round(cpu["off"] * 1e6, 1),
        "step_on_us_cpu_time": round(cpu["on"] * 1e6, 1),
        "ratio_cpu_time": round(cpu["on"] / cpu["off"], 3),
        "call_off_ns": round(per_call["off"] * 1e9), "call_on_ns": round(per_call["on"] * 1e9),
        "sites_counted": len(counted), "torch": torch.__version__,
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"torch {torch.__version__}, sim, operators single-threaded")
    print("                                   counting off   counting on   ratio")
    print(f"MLP training step, wall          {wall['off'] * 1e6:10.1f} us {wall['on'] * 1e6:10.1f} us"
          f"   {result['ratio']:.2f}")
    print(f"MLP training step, CPU time      {cpu['off'] * 1e6:10.1f} us {cpu['on'] * 1e6:10.1f} us"
          f"   {result['ratio_cpu_time']:.2f}")
    print(f"x.add(x), a call                 {per_call['off'] * 1e9:10.0f} ns "
          f"{per_call['on'] * 1e9:10.0f} ns   +{(per_call['on'] - per_call['off']) * 1e9:.0f} ns")
    print(f"CUDA-only sites counted: {len(counted)} (the code asks for none)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
