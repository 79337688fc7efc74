# @generated from compat_map/xpu.toml by compat_map/generate.py -- do not edit
"""``torch.xpu.memory`` over anydev: the entry points of anydev.xpu that torch.xpu.memory holds,
the same objects (counted and warned as there)."""

from anydev.xpu import (
    MemPool,
    XPUPluggableAllocator,
    change_current_allocator,
    empty_cache,
    get_per_process_memory_fraction,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    use_mem_pool,
)

__all__ = ['MemPool', 'XPUPluggableAllocator', 'change_current_allocator', 'empty_cache', 'get_per_process_memory_fraction', 'max_memory_allocated', 'max_memory_reserved', 'mem_get_info', 'memory_allocated', 'memory_reserved', 'memory_snapshot', 'memory_stats', 'memory_stats_as_nested_dict', 'reset_accumulated_memory_stats', 'reset_peak_memory_stats', 'set_per_process_memory_fraction', 'use_mem_pool']
