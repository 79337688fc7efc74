"""Entry point: python -m legacy_app.train [--steps N] [--amp]

Written against torch.cuda, as much code still is. `anydev scan` finds every
legacy call here; `anydev fix` rewrites the mechanical ones.
"""

import argparse
import os

import torch
from torch.cuda.amp import autocast

from .devices import describe, pick_device
from .streams import overlapped_step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--amp", action="store_true", help="mixed precision (needs real PyTorch)")
    args = ap.parse_args()

    rank = int(os.environ.get("RANK", "0"))
    device = pick_device(rank)
    print(describe())

    for step in range(args.steps):
        with torch.cuda.device(device):
            if args.amp:
                with autocast(dtype=torch.float16):
                    pass  # the model's forward pass would go here
            ms = overlapped_step(0.01)
        print(f"step {step}: side stream {ms:.1f} ms, "
              f"{torch.cuda.memory_allocated()} bytes allocated")

    torch.cuda.empty_cache()
    print("peak reserved:", torch.cuda.max_memory_reserved())


if __name__ == "__main__":
    main()
