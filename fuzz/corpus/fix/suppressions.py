import torch

torch.cuda.synchronize()  # anydev: ignore
torch.cuda.synchronize()  # anydev: ignore[AD107]
torch.cuda.synchronize()  # noqa: E501  # anydev: ignore[AD201, AD107]
torch.cuda.synchronize()  # anydev: ignore[AD1]
torch.cuda.synchronize()  # anydev: ignore[AD201]   (another rule: reported)
torch.cuda.synchronize()  # anydev: ignored         (not the marker: reported)
torch.cuda.synchronize()  # anydev:ignore[AD107]
