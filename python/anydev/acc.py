"""``anydev.acc`` is ``anydev.accelerator``, the same module object (the name
PyTorch proposed, ``torch.acc``): importing this module puts that one in its
place (Note [Lazy top namespace] in anydev/__init__.py)."""

import sys

from . import accelerator

sys.modules[__name__] = accelerator
