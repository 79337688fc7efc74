"""Type stubs of the top namespace: device-generic calls (rule 2 of PyTorch's
device API proposal), the native classes, and the lazily loaded submodules."""

from collections import OrderedDict
from typing import Any, NamedTuple, Optional, Union

from typing_extensions import TypeAlias

from . import _C as _C
from . import accelerator as accelerator
from . import compat as compat
from . import cpu as cpu
from . import cuda as cuda
from . import hip as hip
from . import report as report
from . import sim as sim
from . import testing as testing
from . import xpu as xpu
from ._C import Buffer as Buffer
from ._C import HostBuffer as HostBuffer
from ._C import Event as Event
from ._C import OutOfMemoryError as OutOfMemoryError
from ._C import Stream as Stream
from ._C import device as device
from ._C import device_count as device_count
from ._C import get_device_properties as get_device_properties
from ._C import is_available as is_available
from ._C import synchronize as synchronize

_Device: TypeAlias = Union[device, str, int, None]

__version__: str
acc = accelerator

class BackendInfo(NamedTuple):
    name: str
    built: bool
    available: bool
    device_count: int
    reason: str

def backends() -> list[BackendInfo]: ...
def get_include() -> str: ...
def get_cmake_dir() -> str: ...
def get_device_module(device: Union[device, str, None] = None) -> Any: ...
def memory_stats(device: _Device = None) -> OrderedDict[str, int]: ...
def memory_allocated(device: _Device = None) -> int: ...
def max_memory_allocated(device: _Device = None) -> int: ...
def memory_reserved(device: _Device = None) -> int: ...
def max_memory_reserved(device: _Device = None) -> int: ...
def reset_peak_memory_stats(device: _Device = None) -> None: ...
def reset_accumulated_memory_stats(device: _Device = None) -> None: ...
def empty_cache(device: _Device = None) -> None: ...
def get_memory_info(device: _Device = None) -> tuple[int, int]: ...

__all__ = [
    "BackendInfo",
    "Buffer",
    "HostBuffer",
    "Event",
    "OutOfMemoryError",
    "Stream",
    "acc",
    "accelerator",
    "backends",
    "device",
    "device_count",
    "empty_cache",
    "get_device_module",
    "get_cmake_dir",
    "get_device_properties",
    "get_include",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "synchronize",
]
