# @generated from compat_map/xpu.toml by compat_map/generate.py -- do not edit
"""Legacy ``torch.xpu`` entry points over anydev (see anydev.cuda).
"""

from anydev._compat import shims as _rt

_M = _rt.ShimModule(__name__, 'torch.xpu', 'xpu')

Event = _M.klass('AD413')  # compat_map/xpu.toml:172
MemPool = _M.kept('AD438')  # compat_map/xpu.toml:454
Stream = _M.klass('AD412')  # compat_map/xpu.toml:158
StreamContext = _M.forwarder('AD411')  # compat_map/xpu.toml:145
XPUGraph = _M.klass('AD452')  # compat_map/xpu.toml:608
XPUPluggableAllocator = _M.kept('AD440')  # compat_map/xpu.toml:472
can_device_access_peer = _M.kept('AD422')  # compat_map/xpu.toml:258
change_current_allocator = _M.kept('AD441')  # compat_map/xpu.toml:481
current_device = _M.forwarder('AD403')  # compat_map/xpu.toml:31
current_stream = _M.forwarder('AD408')  # compat_map/xpu.toml:104
default_generators = _M.kept('AD451')  # compat_map/xpu.toml:600
device = _M.forwarder('AD405')  # compat_map/xpu.toml:59
device_count = _M.forwarder('AD402')  # compat_map/xpu.toml:18
device_of = _M.forwarder('AD406')  # compat_map/xpu.toml:74
empty_cache = _M.forwarder('AD425')  # compat_map/xpu.toml:285
get_arch_list = _M.kept('AD423')  # compat_map/xpu.toml:267
get_device_capability = _M.kept('AD419')  # compat_map/xpu.toml:231
get_device_name = _M.kept('AD417')  # compat_map/xpu.toml:213
get_device_properties = _M.kept('AD418')  # compat_map/xpu.toml:222
get_gencode_flags = _M.kept('AD424')  # compat_map/xpu.toml:276
get_per_process_memory_fraction = _M.kept('AD436')  # compat_map/xpu.toml:436
get_rng_state = _M.forwarder('AD447')  # compat_map/xpu.toml:550
get_rng_state_all = _M.forwarder('AD448')  # compat_map/xpu.toml:564
get_stream_from_external = _M.kept('AD414')  # compat_map/xpu.toml:186
graph = _M.forwarder('AD453')  # compat_map/xpu.toml:621
graph_pool_handle = _M.kept('AD454')  # compat_map/xpu.toml:634
init = _M.kept('AD415')  # compat_map/xpu.toml:195
initial_seed = _M.forwarder('AD446')  # compat_map/xpu.toml:538
is_available = _M.forwarder('AD401')  # compat_map/xpu.toml:5
is_bf16_supported = _M.kept('AD420')  # compat_map/xpu.toml:240
is_current_stream_capturing = _M.kept('AD456')  # compat_map/xpu.toml:652
is_initialized = _M.kept('AD416')  # compat_map/xpu.toml:204
is_tf32_supported = _M.kept('AD421')  # compat_map/xpu.toml:249
make_graphed_callables = _M.kept('AD455')  # compat_map/xpu.toml:643
manual_seed = _M.forwarder('AD442')  # compat_map/xpu.toml:490
manual_seed_all = _M.forwarder('AD443')  # compat_map/xpu.toml:502
max_memory_allocated = _M.forwarder('AD429')  # compat_map/xpu.toml:337
max_memory_reserved = _M.forwarder('AD431')  # compat_map/xpu.toml:367
mem_get_info = _M.forwarder('AD434')  # compat_map/xpu.toml:412
memory_allocated = _M.forwarder('AD428')  # compat_map/xpu.toml:322
memory_reserved = _M.forwarder('AD430')  # compat_map/xpu.toml:352
memory_snapshot = _M.kept('AD435')  # compat_map/xpu.toml:427
memory_stats = _M.forwarder('AD426')  # compat_map/xpu.toml:298
memory_stats_as_nested_dict = _M.kept('AD427')  # compat_map/xpu.toml:313
reset_accumulated_memory_stats = _M.forwarder('AD432')  # compat_map/xpu.toml:382
reset_peak_memory_stats = _M.forwarder('AD433')  # compat_map/xpu.toml:397
seed = _M.forwarder('AD444')  # compat_map/xpu.toml:514
seed_all = _M.forwarder('AD445')  # compat_map/xpu.toml:526
set_device = _M.forwarder('AD404')  # compat_map/xpu.toml:44
set_per_process_memory_fraction = _M.kept('AD437')  # compat_map/xpu.toml:445
set_rng_state = _M.forwarder('AD449')  # compat_map/xpu.toml:576
set_rng_state_all = _M.forwarder('AD450')  # compat_map/xpu.toml:588
set_stream = _M.forwarder('AD409')  # compat_map/xpu.toml:119
stream = _M.forwarder('AD410')  # compat_map/xpu.toml:132
synchronize = _M.forwarder('AD407')  # compat_map/xpu.toml:89
use_mem_pool = _M.kept('AD439')  # compat_map/xpu.toml:463

__getattr__ = _M.lazy_getattr(globals(), {}, submodules=('graphs', 'memory', 'random', 'streams'))
__all__ = ['Event', 'MemPool', 'Stream', 'StreamContext', 'XPUGraph', 'XPUPluggableAllocator', 'can_device_access_peer', 'change_current_allocator', 'current_device', 'current_stream', 'default_generators', 'device', 'device_count', 'device_of', 'empty_cache', 'get_arch_list', 'get_device_capability', 'get_device_name', 'get_device_properties', 'get_gencode_flags', 'get_per_process_memory_fraction', 'get_rng_state', 'get_rng_state_all', 'get_stream_from_external', 'graph', 'graph_pool_handle', 'graphs', 'init', 'initial_seed', 'is_available', 'is_bf16_supported', 'is_current_stream_capturing', 'is_initialized', 'is_tf32_supported', 'make_graphed_callables', 'manual_seed', 'manual_seed_all', 'max_memory_allocated', 'max_memory_reserved', 'mem_get_info', 'memory', 'memory_allocated', 'memory_reserved', 'memory_snapshot', 'memory_stats', 'memory_stats_as_nested_dict', 'random', 'reset_accumulated_memory_stats', 'reset_peak_memory_stats', 'seed', 'seed_all', 'set_device', 'set_per_process_memory_fraction', 'set_rng_state', 'set_rng_state_all', 'set_stream', 'stream', 'streams', 'synchronize', 'use_mem_pool']
