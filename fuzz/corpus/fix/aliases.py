"""Every import form the scanner resolves; each use below is a finding."""

import torch
import torch as th
import torch.cuda as tc
import torch.cuda.amp as amp  # AD312: the module is deprecated
from torch import cuda
from torch import cuda as c
from torch.cuda import current_device as cd, synchronize
from torch.cuda.amp import autocast
from torch.cuda import (
    empty_cache,
    memory_allocated as allocated,
)
from torch import accelerator
from torch.xpu import device_count as xpu_count

torch.cuda.current_device()
th.cuda.is_available()
tc.synchronize()
amp.GradScaler()
cuda.empty_cache()
c.device_count()
cd()
synchronize()
with autocast(dtype=torch.bfloat16):
    pass
empty_cache()
allocated(0)
accelerator.current_device_idx()
xpu_count()


def late():
    import torch.cuda as late_cuda
    from torch.cuda import memory_reserved

    late_cuda.synchronize()
    return memory_reserved()


def elsewhere():
    # late_cuda was bound in late() only: not a finding here.
    late_cuda.synchronize()
