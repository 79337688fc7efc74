# @generated from compat_map/python.toml by compat_map/generate.py -- do not edit
"""Legacy ``torch.cuda`` entry points over anydev.

Every entry point with a device-generic replacement forwards to it and acts on
the current accelerator, whatever its type, so legacy CUDA code runs on any
accelerator; the first call from each call site warns with
anydev.compat.LegacyAPIWarning, and every call is counted (anydev.report).
Device-specific entry points that PyTorch keeps (rule 4) are here too, without
a warning; those anydev cannot answer raise NotImplementedError.
"""

from anydev._compat import shims as _rt

_M = _rt.ShimModule(__name__, 'torch.cuda', 'cuda')

BFloat16Storage = _M.klass('AD323')  # compat_map/python.toml:1061
BFloat16Tensor = _M.klass('AD324')  # compat_map/python.toml:1073
BoolStorage = _M.klass('AD325')  # compat_map/python.toml:1085
BoolTensor = _M.klass('AD326')  # compat_map/python.toml:1097
ByteStorage = _M.klass('AD327')  # compat_map/python.toml:1109
ByteTensor = _M.klass('AD328')  # compat_map/python.toml:1121
CUDAGraph = _M.klass('AD317')  # compat_map/python.toml:1000
CUDAPluggableAllocator = _M.kept('AD228')  # compat_map/python.toml:750
CharStorage = _M.klass('AD329')  # compat_map/python.toml:1133
CharTensor = _M.klass('AD330')  # compat_map/python.toml:1145
ComplexDoubleStorage = _M.klass('AD331')  # compat_map/python.toml:1157
ComplexFloatStorage = _M.klass('AD332')  # compat_map/python.toml:1169
CudaError = _M.kept('AD133')  # compat_map/python.toml:353
DeferredCudaCallError = _M.kept('AD119')  # compat_map/python.toml:231
DoubleStorage = _M.klass('AD333')  # compat_map/python.toml:1181
DoubleTensor = _M.klass('AD334')  # compat_map/python.toml:1193
Event = _M.klass('AD116')  # compat_map/python.toml:199
ExternalStream = _M.kept('AD114')  # compat_map/python.toml:181
FloatStorage = _M.klass('AD335')  # compat_map/python.toml:1205
FloatTensor = _M.klass('AD336')  # compat_map/python.toml:1217
GreenContext = _M.kept('AD350')  # compat_map/python.toml:1370
HalfStorage = _M.klass('AD337')  # compat_map/python.toml:1229
HalfTensor = _M.klass('AD338')  # compat_map/python.toml:1241
IntStorage = _M.klass('AD339')  # compat_map/python.toml:1253
IntTensor = _M.klass('AD340')  # compat_map/python.toml:1265
LongStorage = _M.klass('AD341')  # compat_map/python.toml:1277
LongTensor = _M.klass('AD342')  # compat_map/python.toml:1289
MemPool = _M.kept('AD230')  # compat_map/python.toml:768
ShortStorage = _M.klass('AD343')  # compat_map/python.toml:1301
ShortTensor = _M.klass('AD344')  # compat_map/python.toml:1313
Stream = _M.klass('AD113')  # compat_map/python.toml:167
StreamContext = _M.forwarder('AD112')  # compat_map/python.toml:154
caching_allocator_alloc = _M.kept('AD215')  # compat_map/python.toml:633
caching_allocator_delete = _M.kept('AD216')  # compat_map/python.toml:642
caching_allocator_enable = _M.kept('AD217')  # compat_map/python.toml:651
can_device_access_peer = _M.kept('AD125')  # compat_map/python.toml:284
change_current_allocator = _M.kept('AD229')  # compat_map/python.toml:759
check_error = _M.kept('AD131')  # compat_map/python.toml:336
clock_rate = _M.kept('AD349')  # compat_map/python.toml:1361
comm = _M.kept('AD355')  # compat_map/python.toml:1412
compile_kernel = _M.kept('AD351')  # compat_map/python.toml:1379
cudaStatus = _M.kept('AD132')  # compat_map/python.toml:345
cudart = _M.kept('AD130')  # compat_map/python.toml:327
current_blas_handle = _M.kept('AD134')  # compat_map/python.toml:361
current_device = _M.forwarder('AD103')  # compat_map/python.toml:31
current_stream = _M.forwarder('AD108')  # compat_map/python.toml:104
default_generators = _M.kept('AD310')  # compat_map/python.toml:913
default_stream = _M.kept('AD109')  # compat_map/python.toml:119
device = _M.forwarder('AD105')  # compat_map/python.toml:59
device_count = _M.forwarder('AD102')  # compat_map/python.toml:18
device_memory_used = _M.kept('AD232')  # compat_map/python.toml:786
device_of = _M.forwarder('AD106')  # compat_map/python.toml:74
empty_cache = _M.forwarder('AD201')  # compat_map/python.toml:428
gds = _M.kept('AD359')  # compat_map/python.toml:1444
get_allocator_backend = _M.kept('AD227')  # compat_map/python.toml:741
get_arch_list = _M.kept('AD126')  # compat_map/python.toml:293
get_device_capability = _M.kept('AD122')  # compat_map/python.toml:257
get_device_name = _M.kept('AD120')  # compat_map/python.toml:239
get_device_properties = _M.kept('AD121')  # compat_map/python.toml:248
get_gencode_flags = _M.kept('AD127')  # compat_map/python.toml:302
get_per_process_memory_fraction = _M.kept('AD219')  # compat_map/python.toml:669
get_rng_state = _M.forwarder('AD306')  # compat_map/python.toml:863
get_rng_state_all = _M.forwarder('AD307')  # compat_map/python.toml:877
get_stream_from_external = _M.kept('AD115')  # compat_map/python.toml:190
get_sync_debug_mode = _M.kept('AD136')  # compat_map/python.toml:379
graph = _M.forwarder('AD318')  # compat_map/python.toml:1013
graph_pool_handle = _M.kept('AD319')  # compat_map/python.toml:1026
has_half = _M.kept('AD128')  # compat_map/python.toml:311
has_magma = _M.kept('AD129')  # compat_map/python.toml:319
host_memory_stats = _M.kept('AD223')  # compat_map/python.toml:705
host_memory_stats_as_nested_dict = _M.kept('AD224')  # compat_map/python.toml:714
init = _M.kept('AD118')  # compat_map/python.toml:222
initial_seed = _M.forwarder('AD305')  # compat_map/python.toml:851
ipc_collect = _M.kept('AD137')  # compat_map/python.toml:388
is_available = _M.forwarder('AD101')  # compat_map/python.toml:5
is_bf16_supported = _M.kept('AD123')  # compat_map/python.toml:266
is_current_stream_capturing = _M.kept('AD321')  # compat_map/python.toml:1044
is_initialized = _M.kept('AD117')  # compat_map/python.toml:213
is_tf32_supported = _M.kept('AD124')  # compat_map/python.toml:275
jiterator = _M.kept('AD352')  # compat_map/python.toml:1388
list_gpu_processes = _M.kept('AD222')  # compat_map/python.toml:696
make_graphed_callables = _M.kept('AD320')  # compat_map/python.toml:1035
manual_seed = _M.forwarder('AD301')  # compat_map/python.toml:803
manual_seed_all = _M.forwarder('AD302')  # compat_map/python.toml:815
max_memory_allocated = _M.forwarder('AD205')  # compat_map/python.toml:480
max_memory_cached = _M.forwarder('AD212')  # compat_map/python.toml:586
max_memory_reserved = _M.forwarder('AD207')  # compat_map/python.toml:510
mem_get_info = _M.forwarder('AD210')  # compat_map/python.toml:555
memory_allocated = _M.forwarder('AD204')  # compat_map/python.toml:465
memory_cached = _M.forwarder('AD211')  # compat_map/python.toml:570
memory_reserved = _M.forwarder('AD206')  # compat_map/python.toml:495
memory_snapshot = _M.kept('AD220')  # compat_map/python.toml:678
memory_stats = _M.forwarder('AD202')  # compat_map/python.toml:441
memory_stats_as_nested_dict = _M.kept('AD203')  # compat_map/python.toml:456
memory_summary = _M.kept('AD221')  # compat_map/python.toml:687
memory_usage = _M.kept('AD345')  # compat_map/python.toml:1325
nccl = _M.kept('AD354')  # compat_map/python.toml:1404
nvtx = _M.kept('AD353')  # compat_map/python.toml:1396
power_draw = _M.kept('AD348')  # compat_map/python.toml:1352
profiler = _M.kept('AD358')  # compat_map/python.toml:1436
reset_accumulated_host_memory_stats = _M.kept('AD225')  # compat_map/python.toml:723
reset_accumulated_memory_stats = _M.forwarder('AD208')  # compat_map/python.toml:525
reset_max_memory_allocated = _M.forwarder('AD213')  # compat_map/python.toml:602
reset_max_memory_cached = _M.forwarder('AD214')  # compat_map/python.toml:617
reset_peak_host_memory_stats = _M.kept('AD226')  # compat_map/python.toml:732
reset_peak_memory_stats = _M.forwarder('AD209')  # compat_map/python.toml:540
seed = _M.forwarder('AD303')  # compat_map/python.toml:827
seed_all = _M.forwarder('AD304')  # compat_map/python.toml:839
set_device = _M.forwarder('AD104')  # compat_map/python.toml:44
set_per_process_memory_fraction = _M.kept('AD218')  # compat_map/python.toml:660
set_rng_state = _M.forwarder('AD308')  # compat_map/python.toml:889
set_rng_state_all = _M.forwarder('AD309')  # compat_map/python.toml:901
set_stream = _M.forwarder('AD110')  # compat_map/python.toml:128
set_sync_debug_mode = _M.kept('AD135')  # compat_map/python.toml:370
sparse = _M.kept('AD356')  # compat_map/python.toml:1420
stream = _M.forwarder('AD111')  # compat_map/python.toml:141
synchronize = _M.forwarder('AD107')  # compat_map/python.toml:89
temperature = _M.kept('AD347')  # compat_map/python.toml:1343
tunable = _M.kept('AD357')  # compat_map/python.toml:1428
use_mem_pool = _M.kept('AD231')  # compat_map/python.toml:777
utilization = _M.kept('AD346')  # compat_map/python.toml:1334

__getattr__ = _M.lazy_getattr(globals(), {'AcceleratorError': 'AD138', 'OutOfMemoryError': 'AD139', 'amp': 'AD312'}, submodules=('graphs', 'memory', 'random', 'streams'))
__all__ = ['AcceleratorError', 'BFloat16Storage', 'BFloat16Tensor', 'BoolStorage', 'BoolTensor', 'ByteStorage', 'ByteTensor', 'CUDAGraph', 'CUDAPluggableAllocator', 'CharStorage', 'CharTensor', 'ComplexDoubleStorage', 'ComplexFloatStorage', 'CudaError', 'DeferredCudaCallError', 'DoubleStorage', 'DoubleTensor', 'Event', 'ExternalStream', 'FloatStorage', 'FloatTensor', 'GreenContext', 'HalfStorage', 'HalfTensor', 'IntStorage', 'IntTensor', 'LongStorage', 'LongTensor', 'MemPool', 'OutOfMemoryError', 'ShortStorage', 'ShortTensor', 'Stream', 'StreamContext', 'amp', 'caching_allocator_alloc', 'caching_allocator_delete', 'caching_allocator_enable', 'can_device_access_peer', 'change_current_allocator', 'check_error', 'clock_rate', 'comm', 'compile_kernel', 'cudaStatus', 'cudart', 'current_blas_handle', 'current_device', 'current_stream', 'default_generators', 'default_stream', 'device', 'device_count', 'device_memory_used', 'device_of', 'empty_cache', 'gds', 'get_allocator_backend', 'get_arch_list', 'get_device_capability', 'get_device_name', 'get_device_properties', 'get_gencode_flags', 'get_per_process_memory_fraction', 'get_rng_state', 'get_rng_state_all', 'get_stream_from_external', 'get_sync_debug_mode', 'graph', 'graph_pool_handle', 'graphs', 'has_half', 'has_magma', 'host_memory_stats', 'host_memory_stats_as_nested_dict', 'init', 'initial_seed', 'ipc_collect', 'is_available', 'is_bf16_supported', 'is_current_stream_capturing', 'is_initialized', 'is_tf32_supported', 'jiterator', 'list_gpu_processes', 'make_graphed_callables', 'manual_seed', 'manual_seed_all', 'max_memory_allocated', 'max_memory_cached', 'max_memory_reserved', 'mem_get_info', 'memory', 'memory_allocated', 'memory_cached', 'memory_reserved', 'memory_snapshot', 'memory_stats', 'memory_stats_as_nested_dict', 'memory_summary', 'memory_usage', 'nccl', 'nvtx', 'power_draw', 'profiler', 'random', 'reset_accumulated_host_memory_stats', 'reset_accumulated_memory_stats', 'reset_max_memory_allocated', 'reset_max_memory_cached', 'reset_peak_host_memory_stats', 'reset_peak_memory_stats', 'seed', 'seed_all', 'set_device', 'set_per_process_memory_fraction', 'set_rng_state', 'set_rng_state_all', 'set_stream', 'set_sync_debug_mode', 'sparse', 'stream', 'streams', 'synchronize', 'temperature', 'tunable', 'use_mem_pool', 'utilization']
