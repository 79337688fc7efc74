import torch

torch.cuda.synchronize()
s = 'unterminated
torch.cuda.empty_cache()
