"""The runtime's Python side, behind its public modules (``anydev``,
``anydev.accelerator`` = ``anydev.acc``, the device modules ``anydev.cpu``,
``anydev.hip``, ``anydev.sim``, ``anydev.testing``): device memory in the top
namespace (``memory``), the memory calls of the current accelerator
(``accelerator_memory``), ``Graph`` (``graph``) and the builder of the
per-type device modules (``device_module``). Everything else is native
(``anydev._C``, python/src/).

The runtime needs no migration tool and no command line: ``import anydev``
loads this layer and what it may import, nothing more.

May import: compat, common, the native extensions.
"""
