"""``anydev run --torch --accelerator sim[:N]``: every Python process of the run
gets anydev's simulated accelerator as PyTorch's device ``sim`` (N devices)
before the user's code runs, and counts the call sites that ask for CUDA
while it is the accelerator (:mod:`anydev._torch.cuda_only`).

The run's own process calls :func:`start` before the script runs; each
other Python of the run (spawned, forkserver and torchrun children,
subprocesses of the same Python: :mod:`anydev._cli.run_child`) calls
:func:`start_child` from its bootstrap, with the same N. A forked child
inherits both from its parent.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

MAX_DEVICES = 64
USAGE = f"sim or sim:N (N simulated devices, 1..{MAX_DEVICES})"


class AcceleratorError(ValueError):
    """An --accelerator value anydev run cannot give PyTorch."""


def parse_accelerator(text: str, env: Optional[dict] = None) -> int:
    """The device count of an ``--accelerator`` value: ``sim:N`` gives N,
    ``sim`` gives ANYDEV_SIM_DEVICES where it is set, else 1. Raises
    AcceleratorError saying what is wrong."""
    env = os.environ if env is None else env
    kind, sep, count = text.partition(":")
    if kind != "sim":
        raise AcceleratorError(f"{text!r} is not an accelerator anydev run can give PyTorch: "
                               f"use {USAGE}")
    if not sep:
        value = env.get("ANYDEV_SIM_DEVICES", "")
        if not value:
            return 1
        n = _count(value)
        if n is None:
            raise AcceleratorError(f"'sim' takes its device count from ANYDEV_SIM_DEVICES, "
                                   f"which is {value!r}: set it to a count in 1..{MAX_DEVICES} "
                                   "or give sim:N")
        return n
    n = _count(count)
    if n is None:
        raise AcceleratorError(f"{text!r}: {count!r} is not a device count in "
                               f"1..{MAX_DEVICES} (use {USAGE})")
    return n


def _count(text: str) -> Optional[int]:
    if not text.isascii() or not text.isdigit():
        return None
    n = int(text)
    return n if 1 <= n <= MAX_DEVICES else None


def argument_type(text: str) -> int:
    """argparse's type of --accelerator: a usage error for a bad value."""
    import argparse

    try:
        return parse_accelerator(text)
    except AcceleratorError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _one_line(error: BaseException) -> str:
    """The first line of an error's message, without anydev's own prefix (a
    failed build's message goes on with the compiler's output, which its
    log file keeps)."""
    text = str(error).strip() or type(error).__name__
    line = text.splitlines()[0].rstrip(":")
    return line.removeprefix("anydev.torch.register_sim: ")


def start(devices: int) -> Optional[str]:
    """Registers sim with ``devices`` devices in this process and counts the
    requests for CUDA from now on; returns why it cannot (one line), or None."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        return f"PyTorch cannot be imported here ({e}); --accelerator sim needs it"
    from anydev._torch import cuda_only, sim

    try:
        sim.register_sim(devices=devices)
        cuda_only.install()
    except (RuntimeError, ValueError, TypeError, OSError) as e:
        return _one_line(e)
    return None


def start_child(devices: int) -> None:
    """:func:`start` in another Python of the run, before its code runs: one
    that cannot have sim says why and exits 2, since its code would run
    without the accelerator the run asked for."""
    error = start(devices)
    if error is None:
        return
    try:
        sys.stderr.write(f"anydev run --accelerator sim: {error}\n")
        sys.stderr.flush()
    finally:
        os._exit(2)
