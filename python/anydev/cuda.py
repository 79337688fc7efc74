"""The cuda device module: the device API of type `cuda`, whatever the current
accelerator is (see ``anydev._device_module``)."""

from __future__ import annotations

from ._device_module import populate as _populate

_populate(globals(), "cuda")
