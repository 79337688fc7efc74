"""The cpu device module: the device API of type `cpu`, whatever the current
accelerator is (see ``anydev._device_module``)."""

from __future__ import annotations

from ._device_module import populate as _populate

_populate(globals(), "cpu")
