import torch

# CRLF line endings
x = torch.cuda.current_device()
y = torch.cuda.memory_stats(
    0,
)
