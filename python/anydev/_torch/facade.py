"""A stand-in ``torch`` module made of anydev, for ``anydev run --facade``.

It lets legacy code written against ``torch.cuda`` run, without PyTorch, on
anydev's legacy shims (so every legacy call is counted and warned once per call
site) and on the current accelerator, e.g. the simulated one. Only the device
runtime is there: ``torch.cuda``, ``torch.xpu``, ``torch.accelerator``,
``torch.Stream``, ``torch.Event``, ``torch.device``, ``torch.get_device_module``
and dtype names; anything else raises AttributeError saying so. It is installed
into ``sys.modules`` only by ``install()``, never on import of anydev.
"""

from __future__ import annotations

import sys
import types

import anydev
import anydev.cuda
import anydev.cuda.amp
import anydev.xpu

_DTYPES = ("float16", "bfloat16", "float32", "float64", "half", "float", "double",
           "int8", "int16", "int32", "int64", "uint8", "bool")


class _DType:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _module() -> types.ModuleType:
    torch = types.ModuleType("torch", "anydev's torch facade (see anydev._torch.facade).")
    torch.__dict__.update(
        cuda=anydev.cuda, xpu=anydev.xpu, accelerator=anydev.accelerator,
        Stream=anydev.Stream, Event=anydev.Event, device=anydev.device,
        get_device_module=anydev.get_device_module, __anydev_facade__=True,
        __version__="0.0+anydev.facade",
    )
    for name in _DTYPES:
        setattr(torch, name, _DType(name))

    def __getattr__(name: str):
        raise AttributeError(
            f"torch.{name} is not available under anydev's torch facade, which provides "
            "only the device runtime (torch.cuda, torch.accelerator, torch.Stream, ...)")

    torch.__getattr__ = __getattr__  # type: ignore[attr-defined]
    return torch


def install() -> types.ModuleType:
    """Installs the facade as ``torch`` (and ``torch.cuda``, ``torch.cuda.amp``,
    ``torch.xpu``, ``torch.accelerator``) in ``sys.modules``."""
    torch = _module()
    sys.modules["torch"] = torch
    sys.modules["torch.cuda"] = anydev.cuda
    sys.modules["torch.cuda.amp"] = anydev.cuda.amp
    sys.modules["torch.xpu"] = anydev.xpu
    sys.modules["torch.accelerator"] = anydev.accelerator
    return torch
