// Device memory: the public allocator calls (anydev::, anydev::acc::) and
// Buffer, over the per-device caching allocators (caching_allocator.cc).
#include "anydev/memory.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "anydev/accelerator.h"
#include "anydev/runtime.h"
#include "internal/caching_allocator.h"
#include "internal/errors.h"
#include "internal/graph_capture.h"
#include "internal/thread_state.h"

namespace anydev {
namespace {

using internal::DeviceCachingAllocator;

// The device a rule-2 call acts on: `device`, else the current device of the
// current accelerator, else the CPU; resolved and checked.
absl::StatusOr<Device> GenericDevice(std::optional<Device> device) {
  if (device) return ResolveDevice(*device);
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, DefaultDeviceType());
  return ResolveDevice(Device(type));
}

// The device of the current accelerator with `index` (-1: the current one).
absl::StatusOr<Device> AccDevice(int index) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, acc::GetAccelerator());
  return ResolveDevice(Device(type, index < 0 ? -1 : index));
}

// Checks a caller's stream for `device`: of that device, and an id the
// backend knows (a Stream built with the unchecked constructor may not be).
absl::Status CheckStreamOf(const Stream& stream, Device device, absl::string_view what) {
  if (stream.device() != device) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", stream.ToString(),
                                                   " is not a stream of ", device.ToString(),
                                                   ", the memory's device"));
  }
  if (stream.id() == 0) return absl::OkStatus();
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device.type()));
  return backend->ValidateStream(device.index(), stream.id());
}

std::string PtrText(const void* p) { return absl::StrFormat("%p", p); }

}  // namespace

std::vector<std::pair<std::string, int64_t>> FlattenDeviceStats(const DeviceStats& s) {
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(122);
  out.emplace_back("num_alloc_retries", s.num_alloc_retries);
  out.emplace_back("num_ooms", s.num_ooms);
  out.emplace_back("max_split_size", s.max_split_size);
  out.emplace_back("num_sync_all_streams", s.num_sync_all_streams);
  out.emplace_back("num_device_alloc", s.num_device_alloc);
  out.emplace_back("num_device_free", s.num_device_free);
  auto add_stat = [&out](const std::string& prefix, const Stat& stat) {
    out.emplace_back(absl::StrCat(prefix, ".current"), stat.current);
    out.emplace_back(absl::StrCat(prefix, ".peak"), stat.peak);
    out.emplace_back(absl::StrCat(prefix, ".allocated"), stat.allocated);
    out.emplace_back(absl::StrCat(prefix, ".freed"), stat.freed);
  };
  const std::pair<const char*, const StatArray*> arrays[] = {
      {"allocation", &s.allocation},
      {"segment", &s.segment},
      {"active", &s.active},
      {"inactive_split", &s.inactive_split},
      {"allocated_bytes", &s.allocated_bytes},
      {"reserved_bytes", &s.reserved_bytes},
      {"active_bytes", &s.active_bytes},
      {"inactive_split_bytes", &s.inactive_split_bytes},
      {"requested_bytes", &s.requested_bytes},
  };
  const char* const pools[] = {"all", "small_pool", "large_pool"};
  for (const auto& [name, array] : arrays) {
    for (size_t t = 0; t < array->size(); ++t) {
      add_stat(absl::StrCat(name, ".", pools[t]), (*array)[t]);
    }
  }
  add_stat("oversize_allocations", s.oversize_allocations);
  add_stat("oversize_segments", s.oversize_segments);
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<DeviceStats> MemoryStats(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, GenericDevice(device));
  DeviceCachingAllocator* a = internal::FindCachingAllocator(d);
  if (a == nullptr) return DeviceStats{};
  return a->GetStats();
}

absl::StatusOr<int64_t> MemoryAllocated(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceStats s, MemoryStats(device));
  return s.allocated_bytes[0].current;
}

absl::StatusOr<int64_t> MaxMemoryAllocated(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceStats s, MemoryStats(device));
  return s.allocated_bytes[0].peak;
}

absl::StatusOr<int64_t> MemoryReserved(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceStats s, MemoryStats(device));
  return s.reserved_bytes[0].current;
}

absl::StatusOr<int64_t> MaxMemoryReserved(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceStats s, MemoryStats(device));
  return s.reserved_bytes[0].peak;
}

absl::Status ResetPeakMemoryStats(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, GenericDevice(device));
  if (DeviceCachingAllocator* a = internal::FindCachingAllocator(d)) a->ResetPeakStats();
  return absl::OkStatus();
}

absl::Status ResetAccumulatedMemoryStats(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, GenericDevice(device));
  if (DeviceCachingAllocator* a = internal::FindCachingAllocator(d)) a->ResetAccumulatedStats();
  return absl::OkStatus();
}

absl::Status EmptyCache(std::optional<Device> device) {
  Device d(DeviceType::kCPU);
  if (device) {
    d = *device;
  } else {
    ANYDEV_ASSIGN_OR_RETURN(DeviceType type, DefaultDeviceType());
    d = Device(type);
  }
  ANYDEV_RETURN_IF_ERROR(CheckDevice(d));
  int first = d.index();
  int last = d.index();
  if (!d.has_index()) {
    first = 0;
    last = DeviceCountOf(d.type()) - 1;
  }
  absl::Status status;
  for (int i = first; i <= last; ++i) {
    if (DeviceCachingAllocator* a = internal::FindCachingAllocator(Device(d.type(), i))) {
      absl::Status s = a->EmptyCache();
      if (status.ok()) status = s;
    }
  }
  return status;
}

absl::StatusOr<void*> RawAlloc(size_t nbytes, Device device) {
  // The hot path: an allocator exists only for a device that was checked.
  DeviceCachingAllocator* a = internal::FindCachingAllocator(device);
  if (ABSL_PREDICT_TRUE(a != nullptr && nbytes != 0)) {
    return a->Allocate(nbytes, internal::CurrentStreamIdUnchecked(device.type(), device.index()));
  }
  if (a == nullptr) {
    ANYDEV_ASSIGN_OR_RETURN(a, internal::GetCachingAllocator(device));
  }
  ANYDEV_ASSIGN_OR_RETURN(Stream s, CurrentStream(a->device()));
  if (nbytes == 0) return nullptr;
  return a->Allocate(nbytes, s.id());
}

absl::StatusOr<void*> RawAlloc(size_t nbytes, Device device, const Stream& stream) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceCachingAllocator * a, internal::GetCachingAllocator(device));
  ANYDEV_RETURN_IF_ERROR(CheckStreamOf(stream, a->device(), "allocation"));
  if (nbytes == 0) return nullptr;
  return a->Allocate(nbytes, stream.id());
}

absl::Status RawDelete(void* ptr, Device device) {
  DeviceCachingAllocator* a = internal::FindCachingAllocator(device);
  if (a == nullptr) {
    ANYDEV_ASSIGN_OR_RETURN(Device d, ResolveDevice(device));
    if (ptr == nullptr) return absl::OkStatus();
    a = internal::FindCachingAllocator(d);
    if (a == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          d.ToString(), ": free of ", PtrText(ptr),
          ", which is not a live allocation of this device's caching allocator (nothing was "
          "ever allocated on it)"));
    }
  }
  if (ptr == nullptr) return absl::OkStatus();
  return a->Free(ptr);
}

absl::Status RecordStream(void* ptr, Device device, const Stream& stream) {
  ANYDEV_RETURN_IF_ERROR(CheckDevice(stream.device()));
  if (stream.device_type() == device.type() && stream.id() != 0) {
    ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(stream.device_type()));
    ANYDEV_RETURN_IF_ERROR(backend->ValidateStream(stream.device_index(), stream.id()));
  }
  ANYDEV_ASSIGN_OR_RETURN(Device d, ResolveDevice(device));
  DeviceCachingAllocator* a = internal::FindCachingAllocator(d);
  if (a == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        d.ToString(), ": record_stream of ", PtrText(ptr),
        ", which is not a live allocation of this device's caching allocator"));
  }
  return a->RecordStream(ptr, stream);
}

// --- Buffer --------------------------------------------------------------------

absl::StatusOr<Buffer> Buffer::Create(size_t nbytes, Device device, std::optional<Stream> stream) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, ResolveDevice(device));
  Stream s = Stream::Default(d);
  if (stream) {
    ANYDEV_RETURN_IF_ERROR(CheckStreamOf(*stream, d, "Buffer"));
    s = *stream;
  } else {
    ANYDEV_ASSIGN_OR_RETURN(s, CurrentStream(d));
  }
  ANYDEV_ASSIGN_OR_RETURN(void* p, RawAlloc(nbytes, d, s));
  Buffer b;
  b.device_ = d;
  b.data_ = p;
  b.nbytes_ = nbytes;
  b.stream_ = s.id();
  b.live_ = true;
  return b;
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(other.device_),
      data_(other.data_),
      nbytes_(other.nbytes_),
      stream_(other.stream_),
      live_(other.live_) {
  other.data_ = nullptr;
  other.nbytes_ = 0;
  other.live_ = false;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Free().IgnoreError();
    device_ = other.device_;
    data_ = other.data_;
    nbytes_ = other.nbytes_;
    stream_ = other.stream_;
    live_ = other.live_;
    other.data_ = nullptr;
    other.nbytes_ = 0;
    other.live_ = false;
  }
  return *this;
}

Buffer::~Buffer() { Free().IgnoreError(); }

absl::Status Buffer::Free() {
  if (!live_) return absl::OkStatus();
  live_ = false;
  void* p = data_;
  data_ = nullptr;
  nbytes_ = 0;
  return RawDelete(p, device_);
}

absl::StatusOr<std::pair<Stream, bool>> Buffer::PrepareStream(std::optional<Stream> stream,
                                                              const char* what) const {
  if (!live_) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": the buffer has been freed"));
  }
  if (stream) {
    ANYDEV_RETURN_IF_ERROR(CheckStreamOf(*stream, device_, what));
    return std::make_pair(*stream, false);
  }
  ANYDEV_ASSIGN_OR_RETURN(Stream s, CurrentStream(device_));
  // On a stream that a graph is capturing, the call is recorded for the
  // replays and returns: it cannot complete now.
  if (ABSL_PREDICT_FALSE(internal::AnyCapture()) && internal::IsCapturing(s)) {
    return std::make_pair(s, false);
  }
  return std::make_pair(s, true);
}

absl::Status Buffer::Finish(const Stream& stream, bool sync) const {
  if (sync) return stream.Synchronize();
  return absl::OkStatus();
}

namespace {
absl::Status CheckRange(const char* what, size_t nbytes, size_t offset, size_t size) {
  if (offset > size || nbytes > size - offset) {
    return internal::ValueError(absl::StrCat(what, ": ", nbytes, " bytes at offset ", offset,
                                             " overrun the buffer of ", size, " bytes"));
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status Buffer::CopyFromHost(const void* src, size_t nbytes, std::optional<Stream> stream,
                                  size_t offset) {
  ANYDEV_ASSIGN_OR_RETURN(auto prepared, PrepareStream(stream, "CopyFromHost"));
  const auto& [s, sync] = prepared;
  ANYDEV_RETURN_IF_ERROR(CheckRange("CopyFromHost", nbytes, offset, nbytes_));
  if (nbytes == 0) return absl::OkStatus();
  if (src == nullptr) return internal::ValueError("CopyFromHost: the source is null");
  if (!sync && s.id() != stream_) ANYDEV_RETURN_IF_ERROR(RecordStream(s));
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  ANYDEV_RETURN_IF_ERROR(backend->CopyAsync(static_cast<char*>(data_) + offset, src, nbytes,
                                            CopyKind::kHostToDevice, device_.index(), s.id()));
  internal::NoteCapturedUse(s, device_, data_);
  return Finish(s, sync);
}

absl::Status Buffer::CopyToHost(void* dst, size_t nbytes, std::optional<Stream> stream,
                                size_t offset) const {
  ANYDEV_ASSIGN_OR_RETURN(auto prepared, PrepareStream(stream, "CopyToHost"));
  const auto& [s, sync] = prepared;
  ANYDEV_RETURN_IF_ERROR(CheckRange("CopyToHost", nbytes, offset, nbytes_));
  if (nbytes == 0) return absl::OkStatus();
  if (dst == nullptr) return internal::ValueError("CopyToHost: the destination is null");
  if (!sync && s.id() != stream_) ANYDEV_RETURN_IF_ERROR(RecordStream(s));
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  ANYDEV_RETURN_IF_ERROR(backend->CopyAsync(dst, static_cast<const char*>(data_) + offset, nbytes,
                                            CopyKind::kDeviceToHost, device_.index(), s.id()));
  internal::NoteCapturedUse(s, device_, data_);
  return Finish(s, sync);
}

absl::Status Buffer::CopyFrom(const Buffer& src, std::optional<Stream> stream) {
  ANYDEV_ASSIGN_OR_RETURN(auto prepared, PrepareStream(stream, "CopyFrom"));
  const auto& [s, sync] = prepared;
  if (!src.live_) {
    return absl::FailedPreconditionError("CopyFrom: the source buffer has been freed");
  }
  if (src.device_.type() != device_.type()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CopyFrom: cannot copy from ", src.device_.ToString(), " to ", device_.ToString(),
        " (devices of different types); copy through host memory"));
  }
  if (src.nbytes_ > nbytes_) {
    return internal::ValueError(absl::StrCat("CopyFrom: the source of ", src.nbytes_,
                                             " bytes overruns the destination of ", nbytes_,
                                             " bytes"));
  }
  if (src.nbytes_ == 0) return absl::OkStatus();
  if (src.device_ != device_) {
    // As PyTorch's cross-device copy: the copy waits for the work queued on
    // the source device's current stream.
    ANYDEV_ASSIGN_OR_RETURN(Stream src_current, CurrentStream(src.device_));
    ANYDEV_RETURN_IF_ERROR(s.WaitStream(src_current));
  }
  if (!sync) {
    if (s.id() != stream_) ANYDEV_RETURN_IF_ERROR(RecordStream(s));
    if (s != src.stream()) ANYDEV_RETURN_IF_ERROR(src.RecordStream(s));
  }
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  ANYDEV_RETURN_IF_ERROR(backend->CopyAsync(data_, src.data_, src.nbytes_,
                                            CopyKind::kDeviceToDevice, device_.index(), s.id()));
  internal::NoteCapturedUse(s, device_, data_);
  internal::NoteCapturedUse(s, src.device_, src.data_);
  return Finish(s, sync);
}

absl::Status Buffer::Fill(uint8_t value, std::optional<Stream> stream) {
  ANYDEV_ASSIGN_OR_RETURN(auto prepared, PrepareStream(stream, "Fill"));
  const auto& [s, sync] = prepared;
  if (nbytes_ == 0) return absl::OkStatus();
  if (!sync && s.id() != stream_) ANYDEV_RETURN_IF_ERROR(RecordStream(s));
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  ANYDEV_RETURN_IF_ERROR(backend->FillAsync(data_, value, nbytes_, device_.index(), s.id()));
  internal::NoteCapturedUse(s, device_, data_);
  return Finish(s, sync);
}

absl::Status Buffer::RecordStream(const Stream& stream) const {
  if (!live_) {
    return absl::FailedPreconditionError("RecordStream: the buffer has been freed");
  }
  if (data_ == nullptr) return CheckDevice(stream.device());
  return anydev::RecordStream(data_, device_, stream);
}

// --- anydev::acc ---------------------------------------------------------------

namespace acc {

absl::Status EmptyCache() {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, GetAccelerator());
  return anydev::EmptyCache(Device(type));
}

absl::StatusOr<DeviceStats> GetDeviceStats(int index) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, AccDevice(index));
  return MemoryStats(d);
}

absl::Status ResetPeakStats(int index) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, AccDevice(index));
  return ResetPeakMemoryStats(d);
}

absl::Status ResetAccumulatedStats(int index) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, AccDevice(index));
  return ResetAccumulatedMemoryStats(d);
}

absl::StatusOr<std::pair<size_t, size_t>> GetMemoryInfo(int index) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, AccDevice(index));
  return anydev::GetMemoryInfo(d);
}

}  // namespace acc
}  // namespace anydev
