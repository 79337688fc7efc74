import torch

torch.cuda.synchronize()  # found: before the error
s = """an unterminated triple-quoted string
torch.cuda.empty_cache()
