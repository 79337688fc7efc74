# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
from anydev.cuda import (
    Event as Event,
    ExternalStream as ExternalStream,
    Stream as Stream,
)

__all__ = ['Event', 'ExternalStream', 'Stream']
