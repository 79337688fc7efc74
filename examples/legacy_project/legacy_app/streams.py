"""Overlapping a "copy" stream with the compute stream, the legacy way."""

import torch


def overlapped_step(work_seconds: float) -> float:
    """Queues work on a side stream, makes the current stream wait for it, and
    returns the side stream's time in milliseconds."""
    side = torch.cuda.Stream()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(side):
        start.record()
        _busy(work_seconds)
        end.record()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def _busy(seconds: float) -> None:
    """Stands in for a kernel: keeps the current stream busy."""
    try:
        import anydev.testing
    except ImportError:  # real PyTorch: a sleep kernel
        torch.cuda._sleep(int(seconds * 1e9))
    else:
        anydev.testing.sleep(seconds)
