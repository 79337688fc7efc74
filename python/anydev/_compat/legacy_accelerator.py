# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
"""The deprecated ``torch.accelerator`` aliases, as forwarders.
"""

from anydev._compat import shims as _rt

_M = _rt.ShimModule(__name__, 'torch.accelerator', '')

current_device_idx = _M.forwarder('AD501')  # compat_map/python.toml:1452
set_device_idx = _M.forwarder('AD502')  # compat_map/python.toml:1466

__getattr__ = _M.lazy_getattr(globals(), {})
__all__ = ['current_device_idx', 'set_device_idx']
