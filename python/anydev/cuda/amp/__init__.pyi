# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
from typing import Any, Union

from typing_extensions import deprecated

import anydev
import anydev.compat

@deprecated('anydev.cuda.amp.GradScaler is a legacy device-specific API (torch.cuda.amp.GradScaler); in PyTorch use torch.amp.GradScaler [AD314]')
class GradScaler:
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
@deprecated('anydev.cuda.amp.autocast is a legacy device-specific API (torch.cuda.amp.autocast); in PyTorch use torch.amp.autocast [AD313]')
def autocast(enabled: Any=..., dtype: Any=..., cache_enabled: Any=...) -> Any: ...
@deprecated('anydev.cuda.amp.custom_bwd is a legacy device-specific API (torch.cuda.amp.custom_bwd); in PyTorch use torch.amp.custom_bwd [AD316]')
def custom_bwd(bwd: Any) -> Any: ...
@deprecated('anydev.cuda.amp.custom_fwd is a legacy device-specific API (torch.cuda.amp.custom_fwd); in PyTorch use torch.amp.custom_fwd [AD315]')
def custom_fwd(fwd: Any=..., *, cast_inputs: Any=...) -> Any: ...

__all__ = ['GradScaler', 'autocast', 'custom_bwd', 'custom_fwd']
