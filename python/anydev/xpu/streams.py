# @generated from compat_map/xpu.toml by compat_map/generate.py -- do not edit
"""``torch.xpu.streams`` over anydev: the entry points of anydev.xpu that torch.xpu.streams holds,
the same objects (counted and warned as there)."""

from anydev.xpu import (
    Event,
    Stream,
)

__all__ = ['Event', 'Stream']
