# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
"""Legacy ``torch.cuda.amp`` entry points. anydev has no tensors and so no
autocast: each entry point counts, warns, and raises
anydev.compat.NoEquivalentError naming PyTorch's replacement.
"""

from anydev._compat import shims as _rt

_M = _rt.ShimModule(__name__, 'torch.cuda.amp', 'cuda')

GradScaler = _M.klass('AD314')  # compat_map/python.toml:956
autocast = _M.forwarder('AD313')  # compat_map/python.toml:941
custom_bwd = _M.forwarder('AD316')  # compat_map/python.toml:985
custom_fwd = _M.forwarder('AD315')  # compat_map/python.toml:970

__getattr__ = _M.lazy_getattr(globals(), {})
__all__ = ['GradScaler', 'autocast', 'custom_bwd', 'custom_fwd']
