import torch

name = "größe"; torch.cuda.synchronize()
émoji = "🎉🎉"; torch.cuda.empty_cache()
