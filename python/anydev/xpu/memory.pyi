# @generated from compat_map/xpu.toml by compat_map/generate.py -- do not edit
from anydev.xpu import (
    MemPool as MemPool,
    XPUPluggableAllocator as XPUPluggableAllocator,
    change_current_allocator as change_current_allocator,
    empty_cache as empty_cache,
    get_per_process_memory_fraction as get_per_process_memory_fraction,
    max_memory_allocated as max_memory_allocated,
    max_memory_reserved as max_memory_reserved,
    mem_get_info as mem_get_info,
    memory_allocated as memory_allocated,
    memory_reserved as memory_reserved,
    memory_snapshot as memory_snapshot,
    memory_stats as memory_stats,
    memory_stats_as_nested_dict as memory_stats_as_nested_dict,
    reset_accumulated_memory_stats as reset_accumulated_memory_stats,
    reset_peak_memory_stats as reset_peak_memory_stats,
    set_per_process_memory_fraction as set_per_process_memory_fraction,
    use_mem_pool as use_mem_pool,
)

__all__ = ['MemPool', 'XPUPluggableAllocator', 'change_current_allocator', 'empty_cache', 'get_per_process_memory_fraction', 'max_memory_allocated', 'max_memory_reserved', 'mem_get_info', 'memory_allocated', 'memory_reserved', 'memory_snapshot', 'memory_stats', 'memory_stats_as_nested_dict', 'reset_accumulated_memory_stats', 'reset_peak_memory_stats', 'set_per_process_memory_fraction', 'use_mem_pool']
