"""The sim device module: the device API of type `sim`, whatever the current
accelerator is (see ``anydev._runtime.device_module``)."""

from __future__ import annotations

from ._runtime.device_module import populate as _populate

_populate(globals(), "sim")
