import torch

torch.cuda.synchronize()
# été in Latin-1
torch.cuda.empty_cache()
