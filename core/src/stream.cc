#include "anydev/stream.h"

#include <ostream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "anydev/runtime.h"
#include "internal/errors.h"

namespace anydev {

absl::StatusOr<Stream> Stream::New(Device device, int priority) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, ResolveDevice(device));
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(d.type()));
  ANYDEV_ASSIGN_OR_RETURN(StreamId id, backend->NewStream(d.index(), priority));
  return Stream(d, id);
}

absl::StatusOr<Stream> Stream::Unpack3(StreamId stream_id, int64_t device_index,
                                       int64_t device_type) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, DeviceTypeFromInt(device_type));
  ANYDEV_ASSIGN_OR_RETURN(Device device, Device::Create(type, device_index));
  ANYDEV_ASSIGN_OR_RETURN(device, ResolveDevice(device));
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(type));
  if (stream_id != 0) {
    ANYDEV_RETURN_IF_ERROR(backend->ValidateStream(device.index(), stream_id));
  }
  return Stream(device, stream_id);
}

absl::StatusOr<bool> Stream::Query() const {
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_type()));
  return backend->QueryStream(device_index(), id_);
}

absl::Status Stream::Synchronize() const {
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_type()));
  return backend->SynchronizeStream(device_index(), id_);
}

absl::Status Stream::WaitEvent(const Event& event) const { return event.Block(*this); }

absl::Status Stream::WaitStream(const Stream& other) const {
  // As torch.Stream.wait_stream: a fresh event recorded on `other`, waited on
  // here. Backends keep what a pending wait needs, so the event may go now.
  Event marker(other.device_type());
  ANYDEV_RETURN_IF_ERROR(marker.Record(other));
  return marker.Block(*this);
}

absl::StatusOr<int> Stream::Priority() const {
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_type()));
  return backend->StreamPriority(device_index(), id_);
}

absl::Status Stream::Sleep(absl::Duration duration) const {
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_type()));
  return backend->SleepAsync(duration, device_index(), id_);
}

absl::StatusOr<bool> Stream::IsCapturing() const {
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_type()));
  return backend->IsCapturing(device_index(), id_);
}

absl::StatusOr<uintptr_t> Stream::NativeHandle() const {
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_type()));
  return backend->NativeStreamHandle(device_index(), id_);
}

std::string Stream::ToString() const {
  return absl::StrCat("stream ", id_, " on ", device_.ToString());
}

std::ostream& operator<<(std::ostream& os, const Stream& s) { return os << s.ToString(); }

// --- Event -------------------------------------------------------------------

Event::~Event() { Reset(); }

Event::Event(Event&& other) noexcept
    : device_(other.device_),
      enable_timing_(other.enable_timing_),
      recorded_(other.recorded_),
      handle_(other.handle_) {
  other.handle_ = nullptr;
  other.recorded_ = false;
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = other.device_;
    enable_timing_ = other.enable_timing_;
    recorded_ = other.recorded_;
    handle_ = other.handle_;
    other.handle_ = nullptr;
    other.recorded_ = false;
  }
  return *this;
}

void Event::Reset() noexcept {
  if (handle_ != nullptr) {
    absl::StatusOr<Backend*> backend = GetBackend(device_.type());
    if (backend.ok()) (*backend)->DestroyEvent(device_.index(), handle_);
    handle_ = nullptr;
  }
}

absl::Status Event::Record(const Stream& stream) {
  if (stream.device_type() != device_.type()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Event device type ", DeviceTypeName(device_.type()),
        " does not match recording stream's device type ",
        DeviceTypeName(stream.device_type()), "."));
  }
  if (device_.has_index() && device_.index() != stream.device_index()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Event device index ", device_.index(),
        " does not match recording stream's device index ", stream.device_index(), "."));
  }
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  if (handle_ == nullptr) {
    ANYDEV_ASSIGN_OR_RETURN(handle_, backend->CreateEvent(stream.device_index(), enable_timing_));
    device_ = stream.device();
  }
  ANYDEV_RETURN_IF_ERROR(backend->RecordEvent(handle_, stream.device_index(), stream.id()));
  recorded_ = true;
  return absl::OkStatus();
}

absl::Status Event::Block(const Stream& stream) const {
  if (stream.device_type() != device_.type()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Event device type ", DeviceTypeName(device_.type()),
        " does not match blocking stream's device type ",
        DeviceTypeName(stream.device_type()), "."));
  }
  if (!recorded_) return absl::OkStatus();
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  return backend->StreamWaitEvent(stream.device_index(), stream.id(), handle_);
}

absl::StatusOr<bool> Event::Query() const {
  if (!recorded_) return true;
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  return backend->QueryEvent(handle_);
}

absl::Status Event::Synchronize() const {
  if (!recorded_) return absl::OkStatus();
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  return backend->SynchronizeEvent(handle_);
}

absl::StatusOr<double> Event::ElapsedTime(const Event& end) const {
  if (!enable_timing_ || !end.enable_timing_) {
    return internal::ValueError(
        "Both events must be created with argument 'enable_timing=True'.");
  }
  if (!recorded_ || !end.recorded_) {
    return internal::ValueError(
        "Both events must be recorded before calculating elapsed time.");
  }
  if (device_.type() != end.device_.type()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Both events must be of the same device type, got ",
        DeviceTypeName(device_.type()), " and ", DeviceTypeName(end.device_.type()), "."));
  }
  // The two events' clocks are one device's (cudaEventElapsedTime refuses
  // events of two devices, and torch raises its error).
  if (device_ != end.device_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Both events must be recorded on the same device to calculate the elapsed time "
        "between them, got ",
        device_.ToString(), " and ", end.device_.ToString(), "."));
  }
  ANYDEV_ASSIGN_OR_RETURN(bool start_done, Query());
  ANYDEV_ASSIGN_OR_RETURN(bool end_done, end.Query());
  if (!start_done || !end_done) {
    return absl::FailedPreconditionError(
        "Both events must be completed before calculating elapsed time.");
  }
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(device_.type()));
  return backend->ElapsedTime(handle_, end.handle_);
}

}  // namespace anydev
