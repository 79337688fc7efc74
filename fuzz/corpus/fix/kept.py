"""Device-specific APIs that rule 4 keeps: never findings."""

import torch
from torch.cuda import memory, ExternalStream

torch.cuda.default_stream()
torch.cuda.get_device_name(0)
torch.cuda.get_device_properties(0).total_memory
torch.cuda.memory.empty_cache()          # the kept module row wins the longest match
memory.memory_summary()
ExternalStream(ptr)
torch.cuda.ipc_collect()
torch.cuda.nvtx.range_push("x")
torch.xpu.get_device_properties(0)
torch.cuda.not_in_the_table()            # not a row at all
