"""Imports go with their uses: removed when every use was rewritten, kept (and
reported) when one was not."""
from __future__ import annotations

import os
from torch.cuda import current_device as cd, synchronize
from torch.cuda.amp import autocast  # mixed precision
from torch.cuda import (  # the memory calls
    empty_cache,  # frees the cache
    memory_allocated as allocated,  # kept alive below
    set_device,
)
from torch.cuda import memory_reserved; import sys
from torch.cuda import max_memory_reserved
from torch.cuda import seed


def step(model, x, dtype):
    with autocast(dtype=dtype):
        y = model(x)
    synchronize()
    set_device(cd())  # unsafe: only with --unsafe-fixes
    empty_cache()
    used = allocated()
    peak = max_memory_reserved()  # anydev: ignore[AD207]
    return y, used, peak, memory_reserved(), os.getpid(), sys.argv, seed()


def only_imports():
    from torch.cuda import is_available
    from torch.cuda import device_count


def imports_then_code():
    from torch.cuda import is_available as ok
    return ok()


def shadowed(seed=None):
    # this `seed` is the parameter, not torch.cuda.seed: the import stays
    return seed


class Timer:
    # an import in a class body is also a class attribute (self.sync): it stays
    from torch.cuda import synchronize as sync

    def stop(self):
        self.sync()
