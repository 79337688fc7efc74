# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
"""``torch.cuda.streams`` over anydev: the entry points of anydev.cuda that torch.cuda.streams holds,
the same objects (counted and warned as there)."""

from anydev.cuda import (
    Event,
    ExternalStream,
    Stream,
)

__all__ = ['Event', 'ExternalStream', 'Stream']
