// The C ABI (anydev/c_api.h): each entry converts its arguments to anydev's
// C++ types, calls the runtime and turns the absl::Status into a code plus a
// thread-local message, so that no Abseil type crosses the boundary.
#include "anydev/c_api.h"

#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "anydev/memory.h"
#include "anydev/runtime.h"
#include "anydev/stream.h"
#include "internal/errors.h"

namespace anydev {
namespace {

struct LastError {
  std::string message;
  int python_exception = ANYDEV_PY_RUNTIME_ERROR;
};
thread_local LastError tls_last_error;

// Records `status` (not ok) as the calling thread's last error; returns its code.
AnydevStatus Fail(const absl::Status& status) {
  LastError& e = tls_last_error;
  e.message = std::string(status.message());
  e.python_exception = ANYDEV_PY_RUNTIME_ERROR;
  if (std::optional<std::string> py = internal::PyExceptionOf(status)) {
    if (*py == "ValueError") e.python_exception = ANYDEV_PY_VALUE_ERROR;
    if (*py == "TypeError") e.python_exception = ANYDEV_PY_TYPE_ERROR;
  }
  return static_cast<AnydevStatus>(status.code());
}

AnydevStatus Done(const absl::Status& status) {
  return status.ok() ? ANYDEV_OK : Fail(status);
}

absl::StatusOr<DeviceType> TypeOf(int type) { return DeviceTypeFromInt(type); }

// The backend of `type`, with `device` checked against its device count.
absl::StatusOr<Backend*> BackendFor(int type, int device) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType t, TypeOf(type));
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(t));
  const int count = DeviceCountOf(t);
  if (device < 0 || device >= count) {
    return absl::OutOfRangeError(absl::StrCat("device index ", device, " is out of range for ",
                                              DeviceTypeName(t), ": ", count, " device",
                                              count == 1 ? " is" : "s are", " available"));
  }
  return backend;
}

// `device`, or the calling thread's current device of `type` for -1; checked.
absl::StatusOr<Device> DeviceOf(int type, int device) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType t, TypeOf(type));
  if (device < -1 || device >= kMaxDevicesPerType) {
    return absl::OutOfRangeError(
        absl::StrCat("device index ", device, " is out of range for ", DeviceTypeName(t)));
  }
  return ResolveDevice(Device(t, static_cast<int8_t>(device)));
}

// The stream `stream` of `device` (-1: the current one), checked.
absl::StatusOr<Stream> StreamOf(int type, int device, int64_t stream) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, DeviceOf(type, device));
  if (stream == -1) return CurrentStream(d);
  return Stream::Unpack3(stream, d.index(), type);
}

// --- the entries ------------------------------------------------------------------

const char* LastErrorMessage(int* python_exception) {
  if (python_exception != nullptr) *python_exception = tls_last_error.python_exception;
  return tls_last_error.message.c_str();
}

AnydevStatus DeviceCountEntry(int type, int* count) {
  absl::StatusOr<DeviceType> t = TypeOf(type);
  if (!t.ok()) return Fail(t.status());
  absl::StatusOr<Backend*> backend = GetBackend(*t);
  if (!backend.ok()) return Fail(backend.status());
  *count = DeviceCountOf(*t);
  return ANYDEV_OK;
}

AnydevStatus CurrentDeviceEntry(int type, int* device) {
  absl::StatusOr<DeviceType> t = TypeOf(type);
  if (!t.ok()) return Fail(t.status());
  absl::StatusOr<int> index = CurrentDeviceIndex(*t);
  if (!index.ok()) return Fail(index.status());
  *device = *index;
  return ANYDEV_OK;
}

AnydevStatus SetDeviceEntry(int type, int device) {
  absl::StatusOr<DeviceType> t = TypeOf(type);
  if (!t.ok()) return Fail(t.status());
  return Done(SetDeviceIndex(*t, device));
}

AnydevStatus CurrentStreamEntry(int type, int device, int64_t* stream) {
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  absl::StatusOr<Stream> s = CurrentStream(*d);
  if (!s.ok()) return Fail(s.status());
  *stream = s->id();
  return ANYDEV_OK;
}

AnydevStatus SetCurrentStreamEntry(int type, int device, int64_t stream) {
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  return Done(SetCurrentStream(*s));
}

AnydevStatus NewStreamEntry(int type, int device, int priority, int64_t* stream) {
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  absl::StatusOr<Stream> s = Stream::New(*d, priority);
  if (!s.ok()) return Fail(s.status());
  *stream = s->id();
  return ANYDEV_OK;
}

AnydevStatus StreamPriorityRangeEntry(int type, int* least, int* greatest) {
  absl::StatusOr<DeviceType> t = TypeOf(type);
  if (!t.ok()) return Fail(t.status());
  absl::StatusOr<Backend*> backend = GetBackend(*t);
  if (!backend.ok()) return Fail(backend.status());
  const PriorityRange range = (*backend)->GetPriorityRange();
  *least = range.least;
  *greatest = range.greatest;
  return ANYDEV_OK;
}

AnydevStatus StreamPriorityEntry(int type, int device, int64_t stream, int* priority) {
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  absl::StatusOr<int> p = s->Priority();
  if (!p.ok()) return Fail(p.status());
  *priority = *p;
  return ANYDEV_OK;
}

AnydevStatus StreamQueryEntry(int type, int device, int64_t stream, int* done) {
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  absl::StatusOr<bool> q = s->Query();
  if (!q.ok()) return Fail(q.status());
  *done = *q ? 1 : 0;
  return ANYDEV_OK;
}

AnydevStatus StreamSynchronizeEntry(int type, int device, int64_t stream) {
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  return Done(s->Synchronize());
}

AnydevStatus DeviceSynchronizeEntry(int type, int device) {
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  return Done(Synchronize(*d));
}

AnydevStatus StreamSleepEntry(int type, int device, int64_t stream, double seconds) {
  if (!(seconds >= 0 && seconds <= 3600)) {
    return Fail(internal::ValueError(
        absl::StrCat("sleep: seconds must be in [0, 3600], got ", seconds)));
  }
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  return Done(s->Sleep(absl::Seconds(seconds)));
}

AnydevStatus EventCreateEntry(int type, int device, int enable_timing, void** event) {
  absl::StatusOr<Backend*> backend = BackendFor(type, device);
  if (!backend.ok()) return Fail(backend.status());
  absl::StatusOr<void*> e = (*backend)->CreateEvent(device, enable_timing != 0);
  if (!e.ok()) return Fail(e.status());
  *event = *e;
  return ANYDEV_OK;
}

void EventDestroyEntry(int type, int device, void* event) {
  if (event == nullptr) return;
  absl::StatusOr<Backend*> backend = BackendFor(type, device);
  if (backend.ok()) (*backend)->DestroyEvent(device, event);
}

AnydevStatus EventRecordEntry(int type, void* event, int device, int64_t stream) {
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  absl::StatusOr<Backend*> backend = GetBackend(s->device_type());
  if (!backend.ok()) return Fail(backend.status());
  return Done((*backend)->RecordEvent(event, s->device_index(), s->id()));
}

AnydevStatus EventBlockEntry(int type, void* event, int device, int64_t stream) {
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  absl::StatusOr<Backend*> backend = GetBackend(s->device_type());
  if (!backend.ok()) return Fail(backend.status());
  return Done((*backend)->StreamWaitEvent(s->device_index(), s->id(), event));
}

// The backend of an available `type`, for calls on an event handle.
absl::StatusOr<Backend*> EventBackend(int type, void* event) {
  if (event == nullptr) return absl::InvalidArgumentError("event: null handle");
  ANYDEV_ASSIGN_OR_RETURN(DeviceType t, TypeOf(type));
  return GetBackend(t);
}

AnydevStatus EventQueryEntry(int type, void* event, int* done) {
  absl::StatusOr<Backend*> backend = EventBackend(type, event);
  if (!backend.ok()) return Fail(backend.status());
  absl::StatusOr<bool> q = (*backend)->QueryEvent(event);
  if (!q.ok()) return Fail(q.status());
  *done = *q ? 1 : 0;
  return ANYDEV_OK;
}

AnydevStatus EventSynchronizeEntry(int type, void* event) {
  absl::StatusOr<Backend*> backend = EventBackend(type, event);
  if (!backend.ok()) return Fail(backend.status());
  return Done((*backend)->SynchronizeEvent(event));
}

AnydevStatus EventElapsedEntry(int type, void* start, void* end, double* ms) {
  absl::StatusOr<Backend*> backend = EventBackend(type, start);
  if (!backend.ok()) return Fail(backend.status());
  if (end == nullptr) return Fail(absl::InvalidArgumentError("event: null handle"));
  absl::StatusOr<double> t = (*backend)->ElapsedTime(start, end);
  if (!t.ok()) return Fail(t.status());
  *ms = *t;
  return ANYDEV_OK;
}

AnydevStatus RawAllocEntry(int type, int device, size_t nbytes, void** ptr) {
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  absl::StatusOr<void*> p = RawAlloc(nbytes, *d);
  if (!p.ok()) return Fail(p.status());
  *ptr = *p;
  return ANYDEV_OK;
}

AnydevStatus RawFreeEntry(int type, int device, void* ptr) {
  absl::StatusOr<DeviceType> t = TypeOf(type);
  if (!t.ok()) return Fail(t.status());
  if (device < 0 || device >= kMaxDevicesPerType) {
    return Fail(absl::OutOfRangeError(absl::StrCat("free: device index ", device,
                                                   " is out of range")));
  }
  return Done(RawDelete(ptr, Device(*t, static_cast<int8_t>(device))));
}

AnydevStatus RecordStreamEntry(int type, int device, void* ptr, int64_t stream) {
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  return Done(RecordStream(ptr, s->device(), *s));
}

void CopyStat(const Stat& from, AnydevStat& to) {
  to.current = from.current;
  to.peak = from.peak;
  to.allocated = from.allocated;
  to.freed = from.freed;
}

void CopyStats(const StatArray& from, AnydevStat (&to)[3]) {
  for (size_t i = 0; i < 3; ++i) CopyStat(from[i], to[i]);
}

AnydevStatus MemoryStatsEntry(int type, int device, AnydevDeviceStats* out) {
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  absl::StatusOr<DeviceStats> s = MemoryStats(*d);
  if (!s.ok()) return Fail(s.status());
  CopyStats(s->allocation, out->allocation);
  CopyStats(s->segment, out->segment);
  CopyStats(s->active, out->active);
  CopyStats(s->inactive_split, out->inactive_split);
  CopyStats(s->allocated_bytes, out->allocated_bytes);
  CopyStats(s->reserved_bytes, out->reserved_bytes);
  CopyStats(s->active_bytes, out->active_bytes);
  CopyStats(s->inactive_split_bytes, out->inactive_split_bytes);
  CopyStats(s->requested_bytes, out->requested_bytes);
  out->num_alloc_retries = s->num_alloc_retries;
  out->num_ooms = s->num_ooms;
  CopyStat(s->oversize_allocations, out->oversize_allocations);
  CopyStat(s->oversize_segments, out->oversize_segments);
  out->num_sync_all_streams = s->num_sync_all_streams;
  out->num_device_alloc = s->num_device_alloc;
  out->num_device_free = s->num_device_free;
  out->max_split_size = s->max_split_size;
  return ANYDEV_OK;
}

AnydevStatus ResetPeakStatsEntry(int type, int device) {
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  return Done(ResetPeakMemoryStats(*d));
}

AnydevStatus ResetAccumulatedStatsEntry(int type, int device) {
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  return Done(ResetAccumulatedMemoryStats(*d));
}

AnydevStatus EmptyCacheEntry(int type, int device) {
  absl::StatusOr<DeviceType> t = TypeOf(type);
  if (!t.ok()) return Fail(t.status());
  if (device == -1) return Done(EmptyCache(Device(*t)));
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  return Done(EmptyCache(*d));
}

AnydevStatus MemoryInfoEntry(int type, int device, size_t* free_bytes, size_t* total_bytes) {
  absl::StatusOr<Device> d = DeviceOf(type, device);
  if (!d.ok()) return Fail(d.status());
  absl::StatusOr<std::pair<size_t, size_t>> info = GetMemoryInfo(*d);
  if (!info.ok()) return Fail(info.status());
  *free_bytes = info->first;
  *total_bytes = info->second;
  return ANYDEV_OK;
}

AnydevStatus CopyAsyncEntry(int type, int device, int64_t stream, void* dst, const void* src,
                            size_t nbytes, int kind) {
  if (kind < ANYDEV_HOST_TO_DEVICE || kind > ANYDEV_DEVICE_TO_DEVICE) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("copy_async: bad copy kind ", kind)));
  }
  absl::StatusOr<Stream> s = StreamOf(type, device, stream);
  if (!s.ok()) return Fail(s.status());
  absl::StatusOr<Backend*> backend = GetBackend(s->device_type());
  if (!backend.ok()) return Fail(backend.status());
  return Done((*backend)->CopyAsync(dst, src, nbytes, static_cast<CopyKind>(kind),
                                    s->device_index(), s->id()));
}

AnydevStatus HostAllocEntry(int type, size_t nbytes, void** ptr) {
  absl::StatusOr<DeviceType> t = TypeOf(type);
  if (!t.ok()) return Fail(t.status());
  absl::StatusOr<void*> p = HostAlloc(nbytes, *t);
  if (!p.ok()) return Fail(p.status());
  *ptr = *p;
  return ANYDEV_OK;
}

AnydevStatus HostFreeEntry(void* ptr) { return Done(HostFree(ptr)); }

size_t HostBlockSizeEntry(const void* ptr) { return HostBlockSize(ptr); }

void HostStatsEntry(AnydevHostStats* out) {
  const HostMemoryStats s = GetHostMemoryStats();
  CopyStat(s.allocated_bytes, out->allocated_bytes);
  CopyStat(s.reserved_bytes, out->reserved_bytes);
  out->num_host_alloc = s.num_host_alloc;
  out->num_host_free = s.num_host_free;
}

AnydevStatus EmptyHostCacheEntry() { return Done(EmptyHostCache()); }

const AnydevCApi kApi = {
    ANYDEV_C_ABI_VERSION,
    sizeof(AnydevCApi),
    Version(),
    &LastErrorMessage,
    &DeviceCountEntry,
    &CurrentDeviceEntry,
    &SetDeviceEntry,
    &CurrentStreamEntry,
    &SetCurrentStreamEntry,
    &NewStreamEntry,
    &StreamPriorityRangeEntry,
    &StreamPriorityEntry,
    &StreamQueryEntry,
    &StreamSynchronizeEntry,
    &DeviceSynchronizeEntry,
    &StreamSleepEntry,
    &EventCreateEntry,
    &EventDestroyEntry,
    &EventRecordEntry,
    &EventBlockEntry,
    &EventQueryEntry,
    &EventSynchronizeEntry,
    &EventElapsedEntry,
    &RawAllocEntry,
    &RawFreeEntry,
    &RecordStreamEntry,
    &MemoryStatsEntry,
    &ResetPeakStatsEntry,
    &ResetAccumulatedStatsEntry,
    &EmptyCacheEntry,
    &MemoryInfoEntry,
    &CopyAsyncEntry,
    &HostAllocEntry,
    &HostFreeEntry,
    &HostBlockSizeEntry,
    &HostStatsEntry,
    &EmptyHostCacheEntry,
};

}  // namespace
}  // namespace anydev

extern "C" const AnydevCApi* anydev_c_api(void) { return &anydev::kApi; }
