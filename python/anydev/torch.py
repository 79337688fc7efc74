"""``import anydev.torch``: anydev's legacy forwarders on the real PyTorch.

Importing this module installs them with the defaults (mode ``observe``, the
scope from ``[tool.anydev]`` in the nearest pyproject.toml, else the
``__main__`` script) and backports the ``torch.accelerator`` functions this
PyTorch lacks. Call :func:`install` to choose the mode or the scope (it
reinstalls), :func:`uninstall` to put every original object back. See
``docs/torch.md`` and :mod:`anydev._torch.adapter`.

    import anydev.torch                                   # observe, default scope
    anydev.torch.install(mode="forward", packages=["myproj"])
    anydev.torch.uninstall()
    anydev.torch.register_sim(devices=2)                  # torch gets the device "sim"
"""

from ._torch.adapter import MODES, ScopeError, install, installed, status, uninstall
from ._torch.backport import NAMES as BACKPORT_NAMES
from ._torch.sim import register_sim, registered_sim_devices
from .cpp_extension import extra_compile_args  # C++ extensions: docs/compat.md

__all__ = ["BACKPORT_NAMES", "MODES", "ScopeError", "extra_compile_args", "install",
           "installed", "register_sim", "registered_sim_devices", "status", "uninstall"]

install()
