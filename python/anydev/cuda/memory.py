# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
"""``torch.cuda.memory`` over anydev: the entry points of anydev.cuda that torch.cuda.memory holds,
the same objects (counted and warned as there)."""

from anydev.cuda import (
    CUDAPluggableAllocator,
    MemPool,
    caching_allocator_alloc,
    caching_allocator_delete,
    caching_allocator_enable,
    change_current_allocator,
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    list_gpu_processes,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    use_mem_pool,
)

__all__ = ['CUDAPluggableAllocator', 'MemPool', 'caching_allocator_alloc', 'caching_allocator_delete', 'caching_allocator_enable', 'change_current_allocator', 'empty_cache', 'get_allocator_backend', 'get_per_process_memory_fraction', 'host_memory_stats', 'host_memory_stats_as_nested_dict', 'list_gpu_processes', 'max_memory_allocated', 'max_memory_cached', 'max_memory_reserved', 'mem_get_info', 'memory_allocated', 'memory_cached', 'memory_reserved', 'memory_snapshot', 'memory_stats', 'memory_stats_as_nested_dict', 'memory_summary', 'reset_accumulated_host_memory_stats', 'reset_accumulated_memory_stats', 'reset_max_memory_allocated', 'reset_max_memory_cached', 'reset_peak_host_memory_stats', 'reset_peak_memory_stats', 'set_per_process_memory_fraction', 'use_mem_pool']
