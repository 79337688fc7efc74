// fake_level_zero: a stand-in for libze_loader made of host memory and host
// threads, exporting the entry points anydev's Level Zero backend resolves.
//
// It lets the xpu backend run the accelerator conformance suite on a machine
// without an Intel GPU: ANYDEV_LEVEL_ZERO_LIBRARY=.../libanydev_fake_ze_loader.so
// ANYDEV_ACCELERATOR=xpu. It is deliberately unforgiving where Level Zero is:
//   * commands of a command list run in no particular order (each on its own
//     thread, after a short random delay), honouring only their wait events,
//     so a backend that does not chain its commands sees them reordered;
//   * resetting an event that a queued command still waits on, or signalling
//     an event twice without a reset, aborts the process with a message (both
//     are silent hangs or races on a real GPU);
//   * a command list must be created on a compute queue group (group 1 here;
//     group 0 is copy-only).
// Timestamps are steady-clock nanoseconds (timerResolution 1e9 cycles/s).
//
// Environment: FAKE_ZE_DEVICES (default 2), FAKE_ZE_FAIL=1 makes zeInit fail
// with ZE_RESULT_ERROR_UNINITIALIZED.
#include <level_zero/ze_api.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

// The opaque handle types are pointers to these.
struct _ze_driver_handle_t {};
struct _ze_device_handle_t {
  int index = 0;
};
struct _ze_context_handle_t {};
struct _ze_command_list_handle_t {
  int device = 0;
};
struct _ze_event_handle_t {
  std::mutex mu;
  std::condition_variable cv;
  bool signaled = false;
  int waiters = 0;  // queued commands that have not yet seen this event signalled
};
struct _ze_event_pool_handle_t {
  std::vector<_ze_event_handle_t> events;
  explicit _ze_event_pool_handle_t(size_t n) : events(n) {}
};

namespace {

constexpr uint64_t kMemory = uint64_t{256} << 20;

[[noreturn]] void Violation(const char* what) {
  std::fprintf(stderr, "fake level zero: protocol violation: %s\n", what);
  std::abort();
}

struct State {
  int count = 2;
  bool fail = false;
  _ze_driver_handle_t driver;
  std::vector<_ze_device_handle_t> devices;
  std::mutex mu;
  std::map<uintptr_t, size_t> device_blocks;
};

State& S() {
  static State* state = [] {
    auto* s = new State();
    if (const char* n = std::getenv("FAKE_ZE_DEVICES")) s->count = std::atoi(n);
    s->fail = std::getenv("FAKE_ZE_FAIL") != nullptr;
    s->devices.resize(static_cast<size_t>(s->count > 0 ? s->count : 0));
    for (size_t i = 0; i < s->devices.size(); ++i) s->devices[i].index = static_cast<int>(i);
    return s;
  }();
  return *state;
}

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void Signal(ze_event_handle_t e) {
  std::lock_guard<std::mutex> lock(e->mu);
  if (e->signaled) Violation("an event was signalled twice without a reset");
  e->signaled = true;
  e->cv.notify_all();
}

void WaitSignaled(ze_event_handle_t e) {
  std::unique_lock<std::mutex> lock(e->mu);
  e->cv.wait(lock, [e] { return e->signaled; });
}

// Queues `op` to run on its own thread once every wait event is signalled,
// then signals `signal`.
ze_result_t Submit(ze_event_handle_t signal, uint32_t n, ze_event_handle_t* waits,
                   std::function<void()> op) {
  if (n > 0 && waits == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::vector<ze_event_handle_t> wait_list(waits, waits + n);
  for (ze_event_handle_t e : wait_list) {
    std::lock_guard<std::mutex> lock(e->mu);
    ++e->waiters;
  }
  static std::atomic<uint32_t> seed{1};
  const uint32_t delay_us = std::minstd_rand(seed.fetch_add(1))() % 300;
  std::thread([signal, wait_list, op, delay_us] {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    for (ze_event_handle_t e : wait_list) {
      std::unique_lock<std::mutex> lock(e->mu);
      e->cv.wait(lock, [e] { return e->signaled; });
      --e->waiters;
    }
    op();
    if (signal != nullptr) Signal(signal);
  }).detach();
  return ZE_RESULT_SUCCESS;
}

}  // namespace

FAKE_EXPORT ze_result_t zeInit(ze_init_flags_t) {
  return S().fail ? ZE_RESULT_ERROR_UNINITIALIZED : ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeDriverGet(uint32_t* count, ze_driver_handle_t* drivers) {
  if (S().fail) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (drivers != nullptr && *count >= 1) drivers[0] = &S().driver;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeDriverGetProperties(ze_driver_handle_t, ze_driver_properties_t* p) {
  p->driverVersion = (1u << 24) | (3u << 16) | 12345u;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeDriverGetApiVersion(ze_driver_handle_t, ze_api_version_t* v) {
  *v = ZE_API_VERSION_1_4;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeDeviceGet(ze_driver_handle_t, uint32_t* count,
                                    ze_device_handle_t* devices) {
  const uint32_t n = static_cast<uint32_t>(S().devices.size());
  if (devices != nullptr) {
    for (uint32_t i = 0; i < n && i < *count; ++i) devices[i] = &S().devices[i];
  }
  *count = n;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeDeviceGetProperties(ze_device_handle_t d, ze_device_properties_t* p) {
  const ze_structure_type_t stype = p->stype;
  std::memset(p, 0, sizeof(*p));
  p->stype = stype;
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0x8086;
  p->deviceId = 0x0bd5;
  p->coreClockRate = 1600;
  p->maxMemAllocSize = kMemory;
  p->numThreadsPerEU = 8;
  p->numEUsPerSubslice = 8;
  p->numSubslicesPerSlice = 4;
  p->numSlices = 2;
  // 1.2 properties: cycles per second; 1.0: nanoseconds per cycle.
  p->timerResolution = stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? 1000000000u : 1u;
  p->timestampValidBits = 64;
  p->kernelTimestampValidBits = 32;
  for (int i = 0; i < ZE_MAX_DEVICE_UUID_SIZE; ++i) {
    p->uuid.id[i] = static_cast<uint8_t>(d->index * 16 + i);
  }
  std::snprintf(p->name, sizeof(p->name), "anydev fake Level Zero GPU %d", d->index);
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t, uint32_t* count,
                                                    ze_device_memory_properties_t* p) {
  if (p != nullptr && *count >= 1) p[0].totalSize = kMemory;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeDeviceGetCommandQueueGroupProperties(
    ze_device_handle_t, uint32_t* count, ze_command_queue_group_properties_t* p) {
  if (p != nullptr && *count >= 2) {
    p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p[0].numQueues = 1;
    p[1].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                 ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p[1].numQueues = 4;
  }
  *count = 2;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeDevicePciGetPropertiesExt(ze_device_handle_t d,
                                                    ze_pci_ext_properties_t* p) {
  p->address.domain = 0;
  p->address.bus = static_cast<uint32_t>(0x20 + d->index);
  p->address.device = 0;
  p->address.function = 0;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeContextCreate(ze_driver_handle_t, const ze_context_desc_t*,
                                        ze_context_handle_t* context) {
  *context = new _ze_context_handle_t();
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeCommandListCreateImmediate(ze_context_handle_t, ze_device_handle_t d,
                                                     const ze_command_queue_desc_t* desc,
                                                     ze_command_list_handle_t* list) {
  if (desc->ordinal != 1) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // group 0 is copy-only
  auto* l = new _ze_command_list_handle_t();
  l->device = d->index;
  *list = l;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t,
                                                   ze_event_handle_t signal, uint32_t n,
                                                   ze_event_handle_t* waits) {
  return Submit(signal, n, waits, [] {});
}

FAKE_EXPORT ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t, void* dst,
                                                      const void* src, size_t size,
                                                      ze_event_handle_t signal, uint32_t n,
                                                      ze_event_handle_t* waits) {
  return Submit(signal, n, waits, [dst, src, size] { std::memmove(dst, src, size); });
}

FAKE_EXPORT ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t, void* ptr,
                                                      const void* pattern, size_t pattern_size,
                                                      size_t size, ze_event_handle_t signal,
                                                      uint32_t n, ze_event_handle_t* waits) {
  if (pattern_size != 1) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  // Read when the command runs, so the caller must keep the pattern alive.
  return Submit(signal, n, waits, [ptr, pattern, size] {
    std::memset(ptr, *static_cast<const uint8_t*>(pattern), size);
  });
}

FAKE_EXPORT ze_result_t zeCommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t,
                                                                uint64_t* dst,
                                                                ze_event_handle_t signal,
                                                                uint32_t n,
                                                                ze_event_handle_t* waits) {
  if (dst == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return Submit(signal, n, waits, [dst] { *dst = NowNs(); });
}

FAKE_EXPORT ze_result_t zeEventPoolCreate(ze_context_handle_t, const ze_event_pool_desc_t* desc,
                                          uint32_t, ze_device_handle_t*,
                                          ze_event_pool_handle_t* pool) {
  if ((desc->flags & ZE_EVENT_POOL_FLAG_HOST_VISIBLE) == 0) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // anydev waits on events from the host
  }
  *pool = new _ze_event_pool_handle_t(desc->count);
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeEventCreate(ze_event_pool_handle_t pool, const ze_event_desc_t* desc,
                                      ze_event_handle_t* event) {
  if (desc->index >= pool->events.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *event = &pool->events[desc->index];
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeEventHostSignal(ze_event_handle_t e) {
  Signal(e);
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeEventHostSynchronize(ze_event_handle_t e, uint64_t timeout) {
  if (timeout == UINT64_MAX) {
    WaitSignaled(e);
    return ZE_RESULT_SUCCESS;
  }
  std::unique_lock<std::mutex> lock(e->mu);
  return e->cv.wait_for(lock, std::chrono::nanoseconds(timeout), [e] { return e->signaled; })
             ? ZE_RESULT_SUCCESS
             : ZE_RESULT_NOT_READY;
}

FAKE_EXPORT ze_result_t zeEventQueryStatus(ze_event_handle_t e) {
  std::lock_guard<std::mutex> lock(e->mu);
  return e->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

FAKE_EXPORT ze_result_t zeEventHostReset(ze_event_handle_t e) {
  std::lock_guard<std::mutex> lock(e->mu);
  if (e->waiters > 0) Violation("an event was reset while a queued command still waits on it");
  e->signaled = false;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeMemAllocDevice(ze_context_handle_t, const ze_device_mem_alloc_desc_t*,
                                         size_t size, size_t alignment, ze_device_handle_t,
                                         void** ptr) {
  std::lock_guard<std::mutex> lock(S().mu);
  size_t used = 0;
  for (const auto& b : S().device_blocks) used += b.second;
  if (size > kMemory * S().devices.size() - used) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  const size_t align = alignment < 64 ? 64 : alignment;
  void* p = std::aligned_alloc(align, (size + align - 1) / align * align);
  if (p == nullptr) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  S().device_blocks[reinterpret_cast<uintptr_t>(p)] = size;
  *ptr = p;
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeMemAllocHost(ze_context_handle_t, const ze_host_mem_alloc_desc_t*,
                                       size_t size, size_t alignment, void** ptr) {
  const size_t align = alignment < 64 ? 64 : alignment;
  *ptr = std::aligned_alloc(align, (size + align - 1) / align * align);
  return *ptr == nullptr ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeMemFree(ze_context_handle_t, void* ptr) {
  std::lock_guard<std::mutex> lock(S().mu);
  S().device_blocks.erase(reinterpret_cast<uintptr_t>(ptr));
  std::free(ptr);
  return ZE_RESULT_SUCCESS;
}

FAKE_EXPORT ze_result_t zeMemGetAllocProperties(ze_context_handle_t, const void* ptr,
                                                ze_memory_allocation_properties_t* props,
                                                ze_device_handle_t* device) {
  std::lock_guard<std::mutex> lock(S().mu);
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  props->type = ZE_MEMORY_TYPE_UNKNOWN;
  auto it = S().device_blocks.upper_bound(p);
  if (it != S().device_blocks.begin()) {
    --it;
    if (p < it->first + it->second) props->type = ZE_MEMORY_TYPE_DEVICE;
  }
  if (device != nullptr) *device = nullptr;
  return ZE_RESULT_SUCCESS;
}
