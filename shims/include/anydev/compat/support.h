// <anydev/compat/support.h>: what the generated legacy forwarders
// (<anydev/compat/cuda.h>, <anydev/compat/xpu.h>) are written with.
//
// Legacy device APIs (c10::cuda::current_device(), CUDAGuard, ...) return
// plain values and throw on error; anydev's API returns absl::Status. These
// helpers bridge the two so legacy-style code compiles unchanged against the
// shims: Value() unwraps a StatusOr or throws anydev::compat::Error, and the
// guards are RAII classes with the legacy constructors.
//
// Example:
//   #include <anydev/compat/cuda.h>
//   int dev = anydev::cuda::current_device();   // warning: use anydev::acc::CurrentDeviceIndex
//   anydev::cuda::CUDAGuard g(1);               // warning: use anydev::compat::DeviceGuard
#ifndef ANYDEV_COMPAT_SUPPORT_H_
#define ANYDEV_COMPAT_SUPPORT_H_

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "anydev/anydev.h"

namespace anydev::compat {

// What a legacy forwarder throws where anydev returned an error; carries the
// status.
class Error : public std::runtime_error {
 public:
  explicit Error(absl::Status status)
      : std::runtime_error(std::string(status.message())), status_(std::move(status)) {}
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

// Throws Error for a non-OK status.
inline void Check(absl::Status status) {
  if (!status.ok()) throw Error(std::move(status));
}

// Returns the value of `v`, or throws Error.
template <typename T>
T Value(absl::StatusOr<T> v) {
  if (!v.ok()) throw Error(std::move(v).status());
  return *std::move(v);
}

// A new stream of the current accelerator's device `device` (-1: current)
// with `priority`, as c10::cuda::getStreamFromPool.
inline Stream NewStream(int priority, int device = -1) {
  const DeviceType type = Value(acc::GetAccelerator());
  const int index = device < 0 ? Value(acc::CurrentDeviceIndex()) : device;
  return Value(Stream::New(Device(type, index), priority));
}

// Makes a device index current for a scope (as c10::cuda::CUDAGuard).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index) : guard_(Value(acc::DeviceIndexGuard::Make(index))) {}
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  int original_device() const { return guard_.original_index(); }
  int current_device() const { return Value(acc::CurrentDeviceIndex()); }

 private:
  acc::DeviceIndexGuard guard_;
};

// As DeviceGuard, or nothing for nullopt (c10::cuda::OptionalCUDAGuard).
class OptionalDeviceGuard {
 public:
  OptionalDeviceGuard() = default;
  explicit OptionalDeviceGuard(std::optional<int> index) { reset_device(index); }
  void reset_device(std::optional<int> index) {
    guard_.reset();
    if (index) guard_.emplace(Value(acc::DeviceIndexGuard::Make(*index)));
  }
  void reset() { guard_.reset(); }

 private:
  std::optional<acc::DeviceIndexGuard> guard_;
};

// Makes a stream and its device current for a scope (c10::cuda::CUDAStreamGuard).
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream) : guard_(Value(acc::StreamGuard::Make(stream))) {}
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  acc::StreamGuard guard_;
};

// As StreamGuard, or nothing for nullopt (c10::cuda::OptionalCUDAStreamGuard).
class OptionalStreamGuard {
 public:
  OptionalStreamGuard() = default;
  explicit OptionalStreamGuard(std::optional<Stream> stream) { reset_stream(stream); }
  void reset_stream(std::optional<Stream> stream) {
    guard_.reset();
    if (stream) guard_.emplace(Value(acc::StreamGuard::Make(*stream)));
  }
  void reset() { guard_.reset(); }

 private:
  std::optional<acc::StreamGuard> guard_;
};

// An event of the current accelerator with the legacy (at::cuda::CUDAEvent)
// surface: record, block, query, synchronize, elapsed_time.
class Event {
 public:
  explicit Event(bool enable_timing = false)
      : event_(Value(acc::GetAccelerator()), enable_timing) {}
  void record() { Check(event_.Record(Value(acc::CurrentStream()))); }
  void record(const Stream& stream) { Check(event_.Record(stream)); }
  void block(const Stream& stream) const { Check(event_.Block(stream)); }
  bool query() const { return Value(event_.Query()); }
  void synchronize() const { Check(event_.Synchronize()); }
  float elapsed_time(const Event& end) const {
    return static_cast<float>(Value(event_.ElapsedTime(end.event_)));
  }
  bool isCreated() const { return event_.handle() != nullptr; }
  const anydev::Event& event() const { return event_; }

 private:
  anydev::Event event_;
};

}  // namespace anydev::compat

#endif  // ANYDEV_COMPAT_SUPPORT_H_
