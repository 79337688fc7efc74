"""Device selection, the legacy way."""

import torch
import torch.cuda as tc
from torch.cuda import current_device as cd


def pick_device(rank: int) -> int:
    """Binds this process to a device (one per rank, round robin)."""
    if not torch.cuda.is_available():
        raise SystemExit("no GPU available")
    index = rank % tc.device_count()
    torch.cuda.set_device(index)
    return cd()


def describe() -> str:
    # torch.cuda.get_device_name is device-specific and stays (rule 4).
    name = torch.cuda.get_device_name(cd())
    return f"device {cd()} of {tc.device_count()}: {name}"
