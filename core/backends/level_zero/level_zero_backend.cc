// The Level Zero backend (device type xpu): Intel GPUs through the oneAPI
// Level Zero loader, libze_loader, opened with dlopen at probe time. Level
// Zero's model is not CUDA's (queues, command lists and event pools instead of
// streams and events), so this backend has its own implementation.
//
// Devices. Every GPU of every Level Zero driver, in driver order; one context
// per driver. ZE_AFFINITY_MASK (and ZE_FLAT_DEVICE_HIERARCHY) are applied by
// the loader and driver when zeInit runs, so anydev's device i is the i-th GPU
// they expose. ANYDEV_LEVEL_ZERO_LIBRARY names the loader to open instead of
// the sonames in backends/common/vendor_libraries.h.
//
// Streams. A stream is an immediate command list on the device's first
// compute queue group (asynchronous mode), created on first use: id 0 is the
// device's default stream, then 32 per priority level (0: normal, -1: high),
// handed out round robin. Level Zero 1.4 (the header anydev builds against)
// promises no order between commands of a command list, so each stream chains
// its commands itself: every command signals a fresh event and waits for the
// previous command's (the stream's tail), which is what an in-order SYCL queue
// does on Level Zero. A stream keeps its in-flight commands in order; querying
// a stream retires the finished ones from the front.
//
// Events. anydev events are host-side records pointing at a pool event, the
// signal event of the command that recorded them (a barrier, or for timing
// events a zeCommandListAppendWriteGlobalTimestamp into host memory paired with
// the pool event). Pool events are reference counted: the anydev event, the
// in-flight command that signals it, and every in-flight command that waits on
// it hold a reference, so an event is reset and reused only when no command
// can still wait on it (Note [Reusing Level Zero events]).
//
// Memory. zeMemAllocDevice and zeMemFree, recorded per device (DeviceBlocks).
// Free synchronises the device's streams first, as cudaFree does, since
// zeMemFree of memory a command still uses is undefined. Level Zero 1.4 core
// has no free-memory query (Sysman's needs ZES_ENABLE_SYSMAN=1), so MemoryInfo
// reports the total minus what anydev allocated in this process.
//
// SleepAsync (the testing sleep) queues a wait on an event that a host thread
// signals (zeEventHostSignal) the duration after the stream reached the sleep.
#include <dirent.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "backends/common/device_blocks.h"
#include "backends/common/stream_ids.h"
#include "backends/common/vendor_libraries.h"
#include "backends/common/vendor_library.h"
#include "backends/gpu_common/gpu_check.h"
#include "backends/level_zero/level_zero_api.h"
#include "internal/env.h"
#include "internal/errors.h"

namespace anydev::level_zero {

// --- the loader table and results ---------------------------------------------

absl::Status LoadZeLoader(const internal::VendorLibrary& lib, ZeLoader* table) {
#define ANYDEV_ZE_RESOLVE_(symbol) ANYDEV_RESOLVE_VENDOR_FN(symbol, symbol)
#define ANYDEV_ZE_RESOLVE_OPTIONAL_(symbol) ANYDEV_RESOLVE_OPTIONAL_VENDOR_FN(symbol, symbol)
  ANYDEV_ZE_SYMBOLS(ANYDEV_ZE_RESOLVE_)
  ANYDEV_ZE_OPTIONAL_SYMBOLS(ANYDEV_ZE_RESOLVE_OPTIONAL_)
#undef ANYDEV_ZE_RESOLVE_
#undef ANYDEV_ZE_RESOLVE_OPTIONAL_
  return absl::OkStatus();
}

// Every ze_result_t of the Level Zero 1.4 header: _(value, name, description).
// Values rather than enumerators, so that an older or newer header builds too.
#define ANYDEV_ZE_RESULTS(_) \
  _(0, ZE_RESULT_SUCCESS, "success") \
  _(1, ZE_RESULT_NOT_READY, "synchronization primitive not signaled") \
  _(0x70000001, ZE_RESULT_ERROR_DEVICE_LOST, "device hung, reset, was removed, or driver update occurred") \
  _(0x70000002, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, "insufficient host memory to satisfy call") \
  _(0x70000003, ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, "insufficient device memory to satisfy call") \
  _(0x70000004, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "error occurred when building module, see build log for details") \
  _(0x70000005, ZE_RESULT_ERROR_MODULE_LINK_FAILURE, "error occurred when linking modules, see build log for details") \
  _(0x70000006, ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET, "device requires a reset") \
  _(0x70000007, ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE, "device currently in low power state") \
  _(0x7ff00001, ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX, "device is not represented by a fabric vertex") \
  _(0x7ff00002, ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE, "fabric vertex does not represent a device") \
  _(0x7ff00003, ZE_RESULT_EXP_ERROR_REMOTE_DEVICE, "fabric vertex represents a remote device or subdevice") \
  _(0x70010000, ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, "access denied due to permission level") \
  _(0x70010001, ZE_RESULT_ERROR_NOT_AVAILABLE, "resource already in use and simultaneous access not allowed or resource was removed") \
  _(0x70020000, ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, "external required dependency is unavailable or missing") \
  _(0x70020001, ZE_RESULT_WARNING_DROPPED_DATA, "data may have been dropped") \
  _(0x78000001, ZE_RESULT_ERROR_UNINITIALIZED, "driver is not initialized") \
  _(0x78000002, ZE_RESULT_ERROR_UNSUPPORTED_VERSION, "generic error code for unsupported versions") \
  _(0x78000003, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, "generic error code for unsupported features") \
  _(0x78000004, ZE_RESULT_ERROR_INVALID_ARGUMENT, "generic error code for invalid arguments") \
  _(0x78000005, ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "handle argument is not valid") \
  _(0x78000006, ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, "object pointed to by handle still in-use by device") \
  _(0x78000007, ZE_RESULT_ERROR_INVALID_NULL_POINTER, "pointer argument may not be nullptr") \
  _(0x78000008, ZE_RESULT_ERROR_INVALID_SIZE, "size argument is invalid (e.g., must not be zero)") \
  _(0x78000009, ZE_RESULT_ERROR_UNSUPPORTED_SIZE, "size argument is not supported by the device (e.g., too large)") \
  _(0x7800000a, ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, "alignment argument is not supported by the device (e.g., too small)") \
  _(0x7800000b, ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT, "synchronization object in invalid state") \
  _(0x7800000c, ZE_RESULT_ERROR_INVALID_ENUMERATION, "enumerator argument is not valid") \
  _(0x7800000d, ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION, "enumerator argument is not supported by the device") \
  _(0x7800000e, ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT, "image format is not supported by the device") \
  _(0x7800000f, ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "native binary is not supported by the device") \
  _(0x78000010, ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, "global variable is not found in the module") \
  _(0x78000011, ZE_RESULT_ERROR_INVALID_KERNEL_NAME, "kernel name is not found in the module") \
  _(0x78000012, ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, "function name is not found in the module") \
  _(0x78000013, ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, "group size dimension is not valid for the kernel or device") \
  _(0x78000014, ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION, "global width dimension is not valid for the kernel or device") \
  _(0x78000015, ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, "kernel argument index is not valid for kernel") \
  _(0x78000016, ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, "kernel argument size does not match kernel") \
  _(0x78000017, ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE, "value of kernel attribute is not valid for the kernel or device") \
  _(0x78000018, ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, "module with imports needs to be linked before kernels can be created from it.") \
  _(0x78000019, ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE, "command list type does not match command queue type") \
  _(0x7800001a, ZE_RESULT_ERROR_OVERLAPPING_REGIONS, "copy operations do not support overlapping regions of memory") \
  _(0x7800001b, ZE_RESULT_WARNING_ACTION_REQUIRED, "an action is required to complete the desired operation") \
  _(0x7ffffffe, ZE_RESULT_ERROR_UNKNOWN, "unknown or internal error")

const char* ZeResultName(ze_result_t result) {
  switch (static_cast<uint32_t>(result)) {
#define ANYDEV_ZE_RESULT_NAME_(value, name, text) \
  case value:                                     \
    return #name;
    ANYDEV_ZE_RESULTS(ANYDEV_ZE_RESULT_NAME_)
#undef ANYDEV_ZE_RESULT_NAME_
  }
  return nullptr;
}

const char* ZeResultText(ze_result_t result) {
  switch (static_cast<uint32_t>(result)) {
#define ANYDEV_ZE_RESULT_TEXT_(value, name, text) \
  case value:                                     \
    return text;
    ANYDEV_ZE_RESULTS(ANYDEV_ZE_RESULT_TEXT_)
#undef ANYDEV_ZE_RESULT_TEXT_
  }
  return nullptr;
}

std::string ZeResultString(ze_result_t result) {
  const char* name = ZeResultName(result);
  const char* text = ZeResultText(result);
  if (name == nullptr) {
    return absl::StrFormat("ze_result_t 0x%08x", static_cast<uint32_t>(result));
  }
  return absl::StrCat(name, " (", text, ")");
}

absl::StatusCode ZeResultCode(ze_result_t result) {
  switch (static_cast<uint32_t>(result)) {
    case 0x70000002:  // ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
    case 0x70000003:  // ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
      return absl::StatusCode::kResourceExhausted;
    case 0x70000001:  // ZE_RESULT_ERROR_DEVICE_LOST
    case 0x70000006:  // ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET
    case 0x70000007:  // ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE
    case 0x78000001:  // ZE_RESULT_ERROR_UNINITIALIZED
    case 0x78000002:  // ZE_RESULT_ERROR_UNSUPPORTED_VERSION
      return absl::StatusCode::kUnavailable;
    case 0x78000003:  // ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
      return absl::StatusCode::kUnimplemented;
    case 0x78000004:  // ZE_RESULT_ERROR_INVALID_ARGUMENT
    case 0x78000005:  // ZE_RESULT_ERROR_INVALID_NULL_HANDLE
    case 0x78000007:  // ZE_RESULT_ERROR_INVALID_NULL_POINTER
    case 0x78000008:  // ZE_RESULT_ERROR_INVALID_SIZE
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status ZeCallFailed(ze_result_t result, const char* call, const char* file, int line) {
  return absl::Status(ZeResultCode(result),
                      absl::StrCat(call, ": ", ZeResultString(result), " [",
                                   gpu::ShortFile(file), ":", line, "]"));
}

namespace {

constexpr int kPriorityLevels = 2;  // 0: normal, -1: high
using stream_ids::kPoolSize;
constexpr int kStreamsPerDevice = 1 + kPriorityLevels * kPoolSize;
constexpr uint32_t kEventsPerChunk = 256;
constexpr uint64_t kForever = UINT64_MAX;

// --- pool events ----------------------------------------------------------------

class EventPool;

// One event of a pool and the host-memory slot a timestamp command writes.
struct PoolEvent {
  ze_event_handle_t handle = nullptr;
  uint64_t* timestamp = nullptr;
};

// Note [Reusing Level Zero events]: a Level Zero event must not be reset
// while a command may still wait on it, or the waiter would wait for a signal
// that never comes. Every holder keeps a shared reference: the anydev event
// (until re-recorded or destroyed), the in-flight command that signals it, and
// every in-flight command that waits on it (until that command is seen
// finished). The last reference resets the event and returns it to its pool.
using EventRef = std::shared_ptr<PoolEvent>;

// The events of one context: HOST_VISIBLE pools created in chunks as needed
// and never destroyed, each event paired with an 8-byte host slot.
class EventPool {
 public:
  EventPool(const ZeLoader* ze, ze_context_handle_t context) : ze_(ze), context_(context) {}

  absl::StatusOr<EventRef> Acquire() {
    PoolEvent* e = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (free_.empty()) ANYDEV_RETURN_IF_ERROR(Grow());
      e = free_.back();
      free_.pop_back();
    }
    return EventRef(e, [this](PoolEvent* released) { Release(released); });
  }

 private:
  void Release(PoolEvent* e) {
    // A reset cannot fail for a valid event; if it did, the event is dropped
    // rather than handed out signalled.
    if (ze_->zeEventHostReset(e->handle) != ZE_RESULT_SUCCESS) return;
    absl::MutexLock lock(&mu_);
    free_.push_back(e);
  }

  absl::Status Grow() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ze_event_pool_desc_t pool_desc = {};
    pool_desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    pool_desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
    pool_desc.count = kEventsPerChunk;
    ze_event_pool_handle_t pool = nullptr;
    // No device list: the events are usable by every device of the context,
    // so a stream can wait on another device's event.
    ANYDEV_ZE_CHECK(*ze_, zeEventPoolCreate(context_, &pool_desc, 0, nullptr, &pool));
    pools_.push_back(pool);
    ze_host_mem_alloc_desc_t host_desc = {};
    host_desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
    void* slots = nullptr;
    ANYDEV_ZE_CHECK(*ze_, zeMemAllocHost(context_, &host_desc, kEventsPerChunk * sizeof(uint64_t),
                                         sizeof(uint64_t), &slots));
    std::memset(slots, 0, kEventsPerChunk * sizeof(uint64_t));
    auto* chunk = new PoolEvent[kEventsPerChunk];  // never freed, as the pool
    for (uint32_t i = 0; i < kEventsPerChunk; ++i) {
      ze_event_desc_t desc = {};
      desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
      desc.index = i;
      // Host scope: what a command wrote is visible to the host once its
      // event is signalled (device-to-host copies read right after a wait).
      desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
      desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
      ANYDEV_ZE_CHECK(*ze_, zeEventCreate(pool, &desc, &chunk[i].handle));
      chunk[i].timestamp = static_cast<uint64_t*>(slots) + i;
      free_.push_back(&chunk[i]);
    }
    return absl::OkStatus();
  }

  const ZeLoader* const ze_;
  const ze_context_handle_t context_;
  absl::Mutex mu_;
  std::vector<PoolEvent*> free_ ABSL_GUARDED_BY(mu_);
  // Every pool created, kept (never destroyed) so that the handles stay owned
  // here rather than reachable only through the driver's bookkeeping (a leak
  // checker sees a pool whose events are all that is left of it as lost).
  std::vector<ze_event_pool_handle_t> pools_ ABSL_GUARDED_BY(mu_);
};

// --- streams --------------------------------------------------------------------

// A command in flight: the event it signals and the references it keeps alive
// until it has finished (the events it waits on, a fill's pattern).
struct InFlight {
  EventRef signal;
  std::vector<EventRef> keep;
  std::shared_ptr<uint8_t> pattern;
};

class ZeStream {
 public:
  ZeStream(const ZeLoader* ze, EventPool* pool, ze_command_list_handle_t list)
      : ze_(ze), pool_(pool), list_(list) {}

  // The immediate command list (torch's xpu native_handle is its queue's).
  ze_command_list_handle_t list() const { return list_; }

  // Appends a command: `append(list, signal, num_waits, waits)` with a fresh
  // pool event to signal, which becomes the stream's tail, and the previous
  // tail and `extra_waits` to wait on. Returns the signal event.
  template <typename AppendFn>
  absl::StatusOr<EventRef> Append(AppendFn append, std::vector<EventRef> extra_waits = {},
                                  std::shared_ptr<uint8_t> pattern = nullptr) {
    ANYDEV_ASSIGN_OR_RETURN(EventRef signal, pool_->Acquire());
    absl::MutexLock lock(&mu_);
    ANYDEV_RETURN_IF_ERROR(RetireLocked());
    InFlight command;
    command.signal = signal;
    command.keep = std::move(extra_waits);
    if (tail_ != nullptr) command.keep.push_back(tail_);
    command.pattern = std::move(pattern);
    std::vector<ze_event_handle_t> waits;
    waits.reserve(command.keep.size());
    for (const EventRef& e : command.keep) waits.push_back(e->handle);
    ANYDEV_RETURN_IF_ERROR(append(list_, *signal, static_cast<uint32_t>(waits.size()),
                                  waits.empty() ? nullptr : waits.data()));
    tail_ = signal;
    in_flight_.push_back(std::move(command));
    return signal;
  }

  // True when every command appended so far has finished.
  absl::StatusOr<bool> Query() {
    absl::MutexLock lock(&mu_);
    ANYDEV_RETURN_IF_ERROR(RetireLocked());
    return in_flight_.empty();
  }

  absl::Status Synchronize() {
    EventRef tail;
    {
      absl::MutexLock lock(&mu_);
      tail = tail_;
    }
    if (tail == nullptr) return absl::OkStatus();
    ANYDEV_ZE_CHECK(*ze_, zeEventHostSynchronize(tail->handle, kForever));
    absl::MutexLock lock(&mu_);
    return RetireLocked();
  }

 private:
  // Drops the finished commands from the front (the chain makes them finish
  // in order), releasing what they kept.
  absl::Status RetireLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!in_flight_.empty()) {
      const ze_result_t r = ze_->zeEventQueryStatus(in_flight_.front().signal->handle);
      if (r == ZE_RESULT_NOT_READY) break;
      if (r != ZE_RESULT_SUCCESS) {
        return ZeCallFailed(r, "zeEventQueryStatus(command's signal event)", __FILE__, __LINE__);
      }
      in_flight_.pop_front();
    }
    if (in_flight_.empty()) tail_ = nullptr;  // nothing left to wait for
    return absl::OkStatus();
  }

  const ZeLoader* const ze_;
  EventPool* const pool_;
  const ze_command_list_handle_t list_;  // guarded by mu_: appends are not thread-safe
  absl::Mutex mu_;
  EventRef tail_ ABSL_GUARDED_BY(mu_);
  std::deque<InFlight> in_flight_ ABSL_GUARDED_BY(mu_);
};

// What anydev::Event holds: the pool event of its last record.
struct ZeUserEvent {
  int device = 0;
  bool timing = false;
  absl::Mutex mu;
  EventRef recorded ABSL_GUARDED_BY(mu);

  EventRef Current() {
    absl::MutexLock lock(&mu);
    return recorded;
  }
};

struct ZeContext {
  ze_driver_handle_t driver = nullptr;
  ze_context_handle_t context = nullptr;
  std::string driver_version;
  std::unique_ptr<EventPool> events;
};

struct ZeDevice {
  explicit ZeDevice(std::string name) : blocks(std::move(name)) {}
  ZeContext* context = nullptr;
  ze_device_handle_t device = nullptr;
  uint32_t compute_ordinal = 0;
  ze_device_properties_t props = {};
  uint64_t total_memory = 0;
  std::array<std::atomic<ZeStream*>, kStreamsPerDevice> streams{};
  std::array<std::atomic<uint32_t>, kPriorityLevels> next_in_pool{};
  absl::Mutex create_mu;
  internal::DeviceBlocks blocks;
};

// "1.3.26918" for Intel's packed driver version (major.minor.build).
std::string ZeDriverVersion(uint32_t v) {
  return absl::StrCat(v >> 24, ".", (v >> 16) & 0xff, ".", v & 0xffff);
}

// What to add to a failed probe's reason.
std::string ProbeHint(const internal::VendorLibrary& lib) {
  std::string hint;
  bool render_node = false;
  if (DIR* dri = opendir("/dev/dri")) {
    while (const dirent* entry = readdir(dri)) {
      if (absl::StartsWith(entry->d_name, "renderD")) render_node = true;
    }
    closedir(dri);
  }
  if (!render_node) {
    hint = "; /dev/dri has no render node: no GPU kernel driver (i915, xe) is loaded";
  } else {
    hint = "; install the Intel GPU Level Zero driver (libze-intel-gpu1 or intel-level-zero-gpu)";
  }
  if (const char* mask = std::getenv("ZE_AFFINITY_MASK"); mask != nullptr) {
    absl::StrAppend(&hint, "; ZE_AFFINITY_MASK='", mask, "' may hide devices");
  }
  absl::StrAppend(&hint, " [", lib.path(), "]");
  return hint;
}

class LevelZeroBackend final : public Backend {
 public:
  DeviceType type() const override { return DeviceType::kXPU; }

  absl::StatusOr<int> Probe() override {
    ANYDEV_ASSIGN_OR_RETURN(internal::VendorLibrary lib,
                            internal::VendorLibrary::Open(internal::kLevelZeroLibrary));
    auto ze = std::make_unique<ZeLoader>();
    ANYDEV_RETURN_IF_ERROR(LoadZeLoader(lib, ze.get()));
    lib_ = std::make_unique<internal::VendorLibrary>(lib);
    const ze_result_t init = ze->zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (init != ZE_RESULT_SUCCESS) {
      return absl::UnavailableError(
          absl::StrCat("xpu: ", ZeResultString(init), " from zeInit", ProbeHint(lib)));
    }
    uint32_t num_drivers = 0;
    ANYDEV_RETURN_IF_ERROR(ProbeStep(ze->zeDriverGet(&num_drivers, nullptr), "zeDriverGet", lib));
    std::vector<ze_driver_handle_t> drivers(num_drivers);
    if (num_drivers > 0) {
      ANYDEV_RETURN_IF_ERROR(
          ProbeStep(ze->zeDriverGet(&num_drivers, drivers.data()), "zeDriverGet", lib));
    }
    for (ze_driver_handle_t driver : drivers) {
      uint32_t num_devices = 0;
      ANYDEV_RETURN_IF_ERROR(
          ProbeStep(ze->zeDeviceGet(driver, &num_devices, nullptr), "zeDeviceGet", lib));
      std::vector<ze_device_handle_t> handles(num_devices);
      if (num_devices > 0) {
        ANYDEV_RETURN_IF_ERROR(
            ProbeStep(ze->zeDeviceGet(driver, &num_devices, handles.data()), "zeDeviceGet", lib));
      }
      ZeContext* context = nullptr;
      for (ze_device_handle_t handle : handles) {
        if (devices_.size() >= static_cast<size_t>(kMaxDevicesPerType)) break;
        auto d = std::make_unique<ZeDevice>(absl::StrCat("xpu:", devices_.size()));
        d->device = handle;
        // 1.2 properties: timerResolution in cycles per second.
        d->props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
        ANYDEV_RETURN_IF_ERROR(ProbeStep(ze->zeDeviceGetProperties(handle, &d->props),
                                         "zeDeviceGetProperties", lib));
        if (d->props.type != ZE_DEVICE_TYPE_GPU) continue;
        ANYDEV_ASSIGN_OR_RETURN(d->compute_ordinal, ComputeOrdinal(*ze, handle));
        ANYDEV_ASSIGN_OR_RETURN(d->total_memory, TotalMemory(*ze, handle));
        if (context == nullptr) {
          ANYDEV_ASSIGN_OR_RETURN(context, CreateContext(*ze, driver));
        }
        d->context = context;
        devices_.push_back(std::move(d));
      }
    }
    if (devices_.empty()) {
      return absl::UnavailableError(absl::StrCat(
          "xpu: no GPU devices (zeInit succeeded, but zeDeviceGet found no GPU in ", num_drivers,
          num_drivers == 1 ? " driver)" : " drivers)", ProbeHint(lib)));
    }
    ze_ = std::move(ze);
    return static_cast<int>(devices_.size());
  }

  absl::StatusOr<DeviceProperties> GetDeviceProperties(int device) override {
    const ZeDevice& d = *devices_[static_cast<size_t>(device)];
    const ze_device_properties_t& props = d.props;
    DeviceProperties p;
    p.name = std::string(props.name, strnlen(props.name, sizeof(props.name)));
    p.total_memory = d.total_memory;
    p.multi_processor_count = static_cast<int>(props.numSlices * props.numSubslicesPerSlice);
    p.uuid = FormatUuid(props.uuid.id);
    p.driver_version = d.context->driver_version;
    std::string pci_address;
    if (ze_->zeDevicePciGetPropertiesExt != nullptr) {
      ze_pci_ext_properties_t pci = {};
      pci.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
      if (ze_->zeDevicePciGetPropertiesExt(d.device, &pci) == ZE_RESULT_SUCCESS) {
        p.pci_bus_id = static_cast<int>(pci.address.bus);
        pci_address = absl::StrFormat("%04x:%02x:%02x.%x", pci.address.domain, pci.address.bus,
                                      pci.address.device, pci.address.function);
      }
    }
    ze_api_version_t api = ZE_API_VERSION_1_0;
    if (ze_->zeDriverGetApiVersion(d.context->driver, &api) != ZE_RESULT_SUCCESS) {
      api = ZE_API_VERSION_1_0;
    }
    p.extra = {
        {"device_id", absl::StrFormat("0x%04x", props.deviceId)},
        {"vendor_id", absl::StrFormat("0x%04x", props.vendorId)},
        {"eu_count", absl::StrCat(props.numSlices * props.numSubslicesPerSlice *
                                  props.numEUsPerSubslice)},
        {"threads_per_eu", absl::StrCat(props.numThreadsPerEU)},
        {"core_clock_mhz", absl::StrCat(props.coreClockRate)},
        {"max_mem_alloc_size", absl::StrCat(props.maxMemAllocSize)},
        {"pci_address", pci_address},
        {"api_version", absl::StrCat(ZE_MAJOR_VERSION(api), ".", ZE_MINOR_VERSION(api))},
        {"loader_library", lib_->path()},
    };
    return p;
  }

  // Level Zero has no current device; every call names its device.
  absl::Status SetDevice(int) override { return absl::OkStatus(); }

  // --- streams -------------------------------------------------------------

  PriorityRange GetPriorityRange() const override { return {0, -(kPriorityLevels - 1)}; }

  absl::StatusOr<StreamId> NewStream(int device, int priority) override {
    const int level = stream_ids::LevelOf(priority, 0, kPriorityLevels);
    const StreamId id = stream_ids::Next(
        level, devices_[static_cast<size_t>(device)]->next_in_pool[static_cast<size_t>(level)]);
    ANYDEV_RETURN_IF_ERROR(GetStream(device, id).status());
    return id;
  }

  absl::Status ValidateStream(int device, StreamId id) override {
    return stream_ids::Validate(id, kPriorityLevels, absl::StrCat("xpu:", device));
  }

  absl::StatusOr<int> StreamPriority(int, StreamId id) override {
    return -stream_ids::LevelOfId(id);
  }

  absl::StatusOr<bool> QueryStream(int device, StreamId id) override {
    ANYDEV_ASSIGN_OR_RETURN(ZeStream * s, GetStream(device, id));
    return s->Query();
  }

  absl::Status SynchronizeStream(int device, StreamId id) override {
    ANYDEV_ASSIGN_OR_RETURN(ZeStream * s, GetStream(device, id));
    return s->Synchronize();
  }

  absl::Status SynchronizeDevice(int device) override {
    for (auto& slot : devices_[static_cast<size_t>(device)]->streams) {
      if (ZeStream* s = slot.load(std::memory_order_acquire)) {
        ANYDEV_RETURN_IF_ERROR(s->Synchronize());
      }
    }
    return absl::OkStatus();
  }

  // --- events --------------------------------------------------------------

  absl::StatusOr<void*> CreateEvent(int device, bool enable_timing) override {
    auto* e = new ZeUserEvent();
    e->device = device;
    e->timing = enable_timing;
    return static_cast<void*>(e);
  }

  // Dropping the reference is all: the pool event is reused once nothing
  // waits on it (Note [Reusing Level Zero events]).
  void DestroyEvent(int, void* event) noexcept override {
    delete static_cast<ZeUserEvent*>(event);
  }

  absl::Status RecordEvent(void* event, int device, StreamId stream) override {
    auto* e = static_cast<ZeUserEvent*>(event);
    ANYDEV_ASSIGN_OR_RETURN(ZeStream * s, GetStream(device, stream));
    const ZeLoader& ze = *ze_;
    absl::StatusOr<EventRef> signal;
    if (e->timing) {
      // The timestamp goes into the slot of the very event it signals.
      signal = s->Append([&ze](ze_command_list_handle_t list, const PoolEvent& signal_event,
                               uint32_t n, ze_event_handle_t* waits) -> absl::Status {
        ANYDEV_ZE_CHECK(ze, zeCommandListAppendWriteGlobalTimestamp(
                                list, signal_event.timestamp, signal_event.handle, n, waits));
        return absl::OkStatus();
      });
    } else {
      signal = s->Append([&ze](ze_command_list_handle_t list, const PoolEvent& signal_event,
                               uint32_t n, ze_event_handle_t* waits) -> absl::Status {
        ANYDEV_ZE_CHECK(ze, zeCommandListAppendBarrier(list, signal_event.handle, n, waits));
        return absl::OkStatus();
      });
    }
    ANYDEV_RETURN_IF_ERROR(signal.status());
    absl::MutexLock lock(&e->mu);
    e->recorded = *std::move(signal);
    return absl::OkStatus();
  }

  absl::Status StreamWaitEvent(int device, StreamId stream, void* event) override {
    EventRef target = static_cast<ZeUserEvent*>(event)->Current();
    if (target == nullptr) return absl::OkStatus();
    ANYDEV_ASSIGN_OR_RETURN(ZeStream * s, GetStream(device, stream));
    return AppendBarrier(s, {std::move(target)}).status();
  }

  absl::StatusOr<bool> QueryEvent(void* event) override {
    EventRef current = static_cast<ZeUserEvent*>(event)->Current();
    if (current == nullptr) return true;
    const ze_result_t r = ze_->zeEventQueryStatus(current->handle);
    if (r == ZE_RESULT_SUCCESS) return true;
    if (r == ZE_RESULT_NOT_READY) return false;
    return ZeCallFailed(r, "zeEventQueryStatus(event)", __FILE__, __LINE__);
  }

  absl::Status SynchronizeEvent(void* event) override {
    EventRef current = static_cast<ZeUserEvent*>(event)->Current();
    if (current == nullptr) return absl::OkStatus();
    ANYDEV_ZE_CHECK(*ze_, zeEventHostSynchronize(current->handle, kForever));
    return absl::OkStatus();
  }

  absl::StatusOr<double> ElapsedTime(void* start, void* end) override {
    auto* a = static_cast<ZeUserEvent*>(start);
    auto* b = static_cast<ZeUserEvent*>(end);
    if (!a->timing || !b->timing) {
      return internal::ValueError(
          "Both events must be created with argument 'enable_timing=True'.");
    }
    EventRef ra = a->Current(), rb = b->Current();
    for (const EventRef& r : {ra, rb}) {
      if (r == nullptr || ze_->zeEventQueryStatus(r->handle) != ZE_RESULT_SUCCESS) {
        return absl::FailedPreconditionError(
            "Both events must be completed before calculating elapsed time.");
      }
    }
    const ze_device_properties_t& props = devices_[static_cast<size_t>(a->device)]->props;
    const uint64_t mask = props.timestampValidBits >= 64
                              ? ~uint64_t{0}
                              : (uint64_t{1} << props.timestampValidBits) - 1;
    // Signed, so that an end recorded before the start gives a negative time.
    uint64_t ticks = (*rb->timestamp - *ra->timestamp) & mask;
    double sign = 1;
    if (ticks > mask / 2) {
      ticks = (mask - ticks + 1) & mask;
      sign = -1;
    }
    return sign * static_cast<double>(ticks) * NanosecondsPerTick(props) / 1e6;
  }

  // --- memory --------------------------------------------------------------

  absl::StatusOr<void*> Allocate(int device, size_t nbytes) override {
    ZeDevice& d = *devices_[static_cast<size_t>(device)];
    if (nbytes == 0) {
      return absl::InvalidArgumentError(absl::StrCat(d.blocks.name(), ": cannot allocate 0 bytes"));
    }
    ze_device_mem_alloc_desc_t desc = {};
    desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
    void* ptr = nullptr;
    const ze_result_t r =
        ze_->zeMemAllocDevice(d.context->context, &desc, nbytes, 256, d.device, &ptr);
    if (r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY || r == ZE_RESULT_ERROR_UNSUPPORTED_SIZE) {
      return absl::ResourceExhaustedError(absl::StrCat(
          d.blocks.name(), " out of memory: tried to allocate ", nbytes, " bytes; ",
          d.blocks.bytes(), " of ", d.total_memory, " bytes allocated by anydev (zeMemAllocDevice: ",
          ZeResultString(r), ")"));
    }
    if (r != ZE_RESULT_SUCCESS) {
      return ZeCallFailed(r, "zeMemAllocDevice(context, &desc, nbytes, 256, device, &ptr)",
                          __FILE__, __LINE__);
    }
    d.blocks.Add(ptr, nbytes);
    return ptr;
  }

  absl::Status Free(int device, void* ptr) override {
    ZeDevice& d = *devices_[static_cast<size_t>(device)];
    ANYDEV_RETURN_IF_ERROR(d.blocks.Remove(ptr).status());
    ANYDEV_RETURN_IF_ERROR(SynchronizeDevice(device));  // as cudaFree
    ANYDEV_ZE_CHECK(*ze_, zeMemFree(d.context->context, ptr));
    return absl::OkStatus();
  }

  absl::StatusOr<std::pair<size_t, size_t>> MemoryInfo(int device) override {
    const ZeDevice& d = *devices_[static_cast<size_t>(device)];
    const uint64_t used = std::min<uint64_t>(d.blocks.bytes(), d.total_memory);
    return std::make_pair(static_cast<size_t>(d.total_memory - used),
                          static_cast<size_t>(d.total_memory));
  }

  absl::Status CopyAsync(void* dst, const void* src, size_t nbytes, CopyKind kind, int device,
                         StreamId stream) override {
    if (kind != CopyKind::kHostToDevice) {
      ANYDEV_RETURN_IF_ERROR(CheckDeviceRange(device, src, nbytes, "copy source"));
    }
    if (kind != CopyKind::kDeviceToHost) {
      ANYDEV_RETURN_IF_ERROR(CheckDeviceRange(device, dst, nbytes, "copy destination"));
    }
    if (nbytes == 0) return absl::OkStatus();
    ANYDEV_ASSIGN_OR_RETURN(ZeStream * s, GetStream(device, stream));
    const ZeLoader& ze = *ze_;
    return s
        ->Append([&](ze_command_list_handle_t list, const PoolEvent& signal, uint32_t n,
                     ze_event_handle_t* waits) -> absl::Status {
          ANYDEV_ZE_CHECK(ze, zeCommandListAppendMemoryCopy(list, dst, src, nbytes, signal.handle,
                                                            n, waits));
          return absl::OkStatus();
        })
        .status();
  }

  absl::Status FillAsync(void* dst, uint8_t value, size_t nbytes, int device,
                         StreamId stream) override {
    ANYDEV_RETURN_IF_ERROR(CheckDeviceRange(device, dst, nbytes, "fill destination"));
    if (nbytes == 0) return absl::OkStatus();
    ANYDEV_ASSIGN_OR_RETURN(ZeStream * s, GetStream(device, stream));
    const ZeLoader& ze = *ze_;
    // The pattern stays alive until the fill has run.
    auto pattern = std::shared_ptr<uint8_t>(new uint8_t(value));
    const uint8_t* pattern_ptr = pattern.get();
    return s
        ->Append(
            [&](ze_command_list_handle_t list, const PoolEvent& signal, uint32_t n,
                ze_event_handle_t* waits) -> absl::Status {
              ANYDEV_ZE_CHECK(ze, zeCommandListAppendMemoryFill(list, dst, pattern_ptr, 1, nbytes,
                                                                signal.handle, n, waits));
              return absl::OkStatus();
            },
            {}, std::move(pattern))
        .status();
  }

  absl::Status SleepAsync(absl::Duration duration, int device, StreamId stream) override {
    ANYDEV_ASSIGN_OR_RETURN(ZeStream * s, GetStream(device, stream));
    ZeDevice& d = *devices_[static_cast<size_t>(device)];
    // The sleep starts when the stream gets to it, as a kernel's would: a
    // barrier signals `reached`, which the host thread waits for before it
    // sleeps. Counted from the call instead, the sleep overlapped the work
    // queued before it, and two events around it could time less than
    // `duration` (the conformance suite's EventTiming saw 3 ms for 20 ms).
    ANYDEV_ASSIGN_OR_RETURN(EventRef reached, AppendBarrier(s, {}));
    ANYDEV_ASSIGN_OR_RETURN(EventRef host_signalled, d.context->events->Acquire());
    ANYDEV_RETURN_IF_ERROR(AppendBarrier(s, {host_signalled}).status());
    const ZeLoader* ze = ze_.get();
    // Detached: the thread holds its own references to the events it uses.
    std::thread([ze, reached, host_signalled, duration] {
      (void)ze->zeEventHostSynchronize(reached->handle, kForever);
      absl::SleepFor(duration);
      (void)ze->zeEventHostSignal(host_signalled->handle);
    }).detach();
    return absl::OkStatus();
  }

  // Graphs. An anydev stream here is an immediate command list, which runs
  // what is appended at once and cannot record it for later, so there is no
  // capture to begin; a regular command list replayed on a queue could carry
  // a graph, and would need a stream model of its own.
  absl::Status BeginCapture(int, StreamId, CaptureMode) override {
    return absl::UnimplementedError(
        "xpu does not support graph capture: anydev's Level Zero streams are immediate command "
        "lists, which run work as it is queued and cannot record it for replay");
  }

  absl::StatusOr<uintptr_t> NativeStreamHandle(int device, StreamId stream) override {
    ANYDEV_ASSIGN_OR_RETURN(ZeStream * s, GetStream(device, stream));
    return reinterpret_cast<uintptr_t>(s->list());
  }

 private:
  static std::string FormatUuid(const uint8_t* b) {
    return absl::StrFormat(
        "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
        b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  }

  // 1.2 device properties give the timer in cycles per second; a driver that
  // answers with the 1.0 meaning (nanoseconds per cycle, small numbers) is
  // recognised by its magnitude, as no GPU timer runs below 1 MHz.
  static double NanosecondsPerTick(const ze_device_properties_t& props) {
    const double r = static_cast<double>(props.timerResolution);
    if (r <= 0) return 1;
    return r >= 1e6 ? 1e9 / r : r;
  }

  absl::Status ProbeStep(ze_result_t r, const char* call, const internal::VendorLibrary& lib) {
    if (r == ZE_RESULT_SUCCESS) return absl::OkStatus();
    return absl::UnavailableError(
        absl::StrCat("xpu: ", ZeResultString(r), " from ", call, ProbeHint(lib)));
  }

  static absl::StatusOr<uint32_t> ComputeOrdinal(const ZeLoader& ze, ze_device_handle_t device) {
    uint32_t count = 0;
    ANYDEV_ZE_CHECK(ze, zeDeviceGetCommandQueueGroupProperties(device, &count, nullptr));
    std::vector<ze_command_queue_group_properties_t> groups(count);
    for (auto& g : groups) {
      g = {};
      g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    }
    ANYDEV_ZE_CHECK(ze, zeDeviceGetCommandQueueGroupProperties(device, &count, groups.data()));
    for (uint32_t i = 0; i < count; ++i) {
      if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) return i;
    }
    return absl::UnavailableError("xpu: the device has no compute command queue group");
  }

  static absl::StatusOr<uint64_t> TotalMemory(const ZeLoader& ze, ze_device_handle_t device) {
    uint32_t count = 0;
    ANYDEV_ZE_CHECK(ze, zeDeviceGetMemoryProperties(device, &count, nullptr));
    std::vector<ze_device_memory_properties_t> memories(count);
    for (auto& m : memories) {
      m = {};
      m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    }
    if (count > 0) ANYDEV_ZE_CHECK(ze, zeDeviceGetMemoryProperties(device, &count, memories.data()));
    uint64_t total = 0;
    for (const auto& m : memories) total += m.totalSize;
    return total;
  }

  absl::StatusOr<ZeContext*> CreateContext(const ZeLoader& ze, ze_driver_handle_t driver) {
    auto context = std::make_unique<ZeContext>();
    context->driver = driver;
    ze_context_desc_t desc = {};
    desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    ANYDEV_ZE_CHECK(ze, zeContextCreate(driver, &desc, &context->context));
    ze_driver_properties_t props = {};
    props.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    if (ze.zeDriverGetProperties(driver, &props) == ZE_RESULT_SUCCESS) {
      context->driver_version = ZeDriverVersion(props.driverVersion);
    }
    context->events = std::make_unique<EventPool>(&ze, context->context);
    contexts_.push_back(std::move(context));
    return contexts_.back().get();
  }

  absl::StatusOr<EventRef> AppendBarrier(ZeStream* s, std::vector<EventRef> waits) {
    const ZeLoader& ze = *ze_;
    return s->Append(
        [&ze](ze_command_list_handle_t list, const PoolEvent& signal, uint32_t n,
              ze_event_handle_t* wait_handles) -> absl::Status {
          ANYDEV_ZE_CHECK(ze, zeCommandListAppendBarrier(list, signal.handle, n, wait_handles));
          return absl::OkStatus();
        },
        std::move(waits));
  }

  absl::StatusOr<ZeStream*> GetStream(int device, StreamId id) {
    std::atomic<ZeStream*>& slot =
        devices_[static_cast<size_t>(device)]->streams[static_cast<size_t>(id)];
    ZeStream* s = slot.load(std::memory_order_acquire);
    if (ABSL_PREDICT_TRUE(s != nullptr)) return s;
    return CreateStream(device, id);
  }

  absl::StatusOr<ZeStream*> CreateStream(int device, StreamId id) {
    ZeDevice& d = *devices_[static_cast<size_t>(device)];
    absl::MutexLock lock(&d.create_mu);
    std::atomic<ZeStream*>& slot = d.streams[static_cast<size_t>(id)];
    if (ZeStream* s = slot.load(std::memory_order_acquire)) return s;
    const int level = stream_ids::LevelOfId(id);
    ze_command_queue_desc_t desc = {};
    desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
    desc.ordinal = d.compute_ordinal;
    desc.index = 0;
    desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    desc.priority =
        level == 0 ? ZE_COMMAND_QUEUE_PRIORITY_NORMAL : ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH;
    ze_command_list_handle_t list = nullptr;
    ANYDEV_ZE_CHECK(*ze_,
                    zeCommandListCreateImmediate(d.context->context, d.device, &desc, &list));
    auto* s = new ZeStream(ze_.get(), d.context->events.get(), list);  // never destroyed
    slot.store(s, std::memory_order_release);
    return s;
  }

  // As the CUDA and HIP backends: inside a block anydev handed out (on any
  // device), not past its end; else device or shared memory the driver knows.
  absl::Status CheckDeviceRange(int device, const void* ptr, size_t nbytes, const char* what) {
    const ZeDevice& d = *devices_[static_cast<size_t>(device)];
    absl::Status s = internal::CheckRangeOnAnyDevice(
        d.blocks, devices_,
        [](const auto& other) -> const internal::DeviceBlocks& { return other->blocks; }, ptr,
        nbytes, what);
    if (s.code() != absl::StatusCode::kNotFound) return s;
    ze_memory_allocation_properties_t props = {};
    props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
    ze_device_handle_t owner = nullptr;
    if (ze_->zeMemGetAllocProperties(d.context->context, ptr, &props, &owner) ==
            ZE_RESULT_SUCCESS &&
        (props.type == ZE_MEMORY_TYPE_DEVICE || props.type == ZE_MEMORY_TYPE_SHARED)) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(d.blocks.name(), ": ", what, " ",
                                                   absl::StrFormat("%p", ptr),
                                                   " is not device memory"));
  }

  std::unique_ptr<const internal::VendorLibrary> lib_;
  std::unique_ptr<const ZeLoader> ze_;
  std::vector<std::unique_ptr<ZeContext>> contexts_;
  std::vector<std::unique_ptr<ZeDevice>> devices_;
};

}  // namespace

ANYDEV_REGISTER_BACKEND(DeviceType::kXPU, [] { return std::make_unique<LevelZeroBackend>(); });

}  // namespace anydev::level_zero
