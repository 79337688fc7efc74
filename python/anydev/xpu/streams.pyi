# @generated from compat_map/xpu.toml by compat_map/generate.py -- do not edit
from anydev.xpu import (
    Event as Event,
    Stream as Stream,
)

__all__ = ['Event', 'Stream']
