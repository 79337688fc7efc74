// anydev/stream.h: streams and events of any device type, as c10::Stream and
// c10::Event.
//
// A `Stream` is a small value (device + id); copying it does not create a new
// stream. An `Event` owns a backend event, created at the first record.
//
// Example:
//   ASSIGN_OR_RETURN(anydev::Stream s, anydev::Stream::New(dev));
//   anydev::Event start(dev.type(), /*enable_timing=*/true), end(dev.type(), true);
//   RETURN_IF_ERROR(start.Record(s));
//   ... queue work on s ...
//   RETURN_IF_ERROR(end.Record(s));
//   RETURN_IF_ERROR(end.Synchronize());
//   absl::StatusOr<double> ms = start.ElapsedTime(end);
#ifndef ANYDEV_STREAM_H_
#define ANYDEV_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "anydev/backend.h"
#include "anydev/device.h"

namespace anydev {

class Event;

// The three numbers that identify a stream across the API boundary, as
// c10::StreamData3.
struct StreamData3 {
  StreamId stream_id;
  int64_t device_index;
  int64_t device_type;
};

class Stream {
 public:
  // Wraps an existing stream; unchecked (see Unpack3 for checked input).
  Stream(Device device, StreamId id) : device_(device), id_(id) {}

  // Returns the default stream (id 0) of `device`.
  static Stream Default(Device device) { return Stream(device, 0); }

  // Returns a new stream of `device` (which must have an index) with
  // `priority`, from the backend's pool.
  [[nodiscard]] static absl::StatusOr<Stream> New(Device device, int priority = 0);

  // Rebuilds a stream from its three numbers, checking each.
  [[nodiscard]] static absl::StatusOr<Stream> Unpack3(StreamId stream_id,
                                                      int64_t device_index,
                                                      int64_t device_type);

  Device device() const { return device_; }
  DeviceType device_type() const { return device_.type(); }
  int device_index() const { return device_.index(); }
  StreamId id() const { return id_; }
  StreamData3 Pack3() const {
    return {id_, device_.index(), static_cast<int64_t>(device_.type())};
  }

  // True when all work queued so far has finished.
  [[nodiscard]] absl::StatusOr<bool> Query() const;
  // Blocks until all work queued so far has finished.
  [[nodiscard]] absl::Status Synchronize() const;
  // Makes future work on this stream wait for `event`'s last record; a no-op
  // for an event that was never recorded (as c10::Event::block).
  [[nodiscard]] absl::Status WaitEvent(const Event& event) const;
  // Makes future work on this stream wait for all work queued on `other`.
  [[nodiscard]] absl::Status WaitStream(const Stream& other) const;
  // Returns this stream's priority.
  [[nodiscard]] absl::StatusOr<int> Priority() const;
  // Queues work that keeps the stream busy for `duration` (testing aid).
  [[nodiscard]] absl::Status Sleep(absl::Duration duration) const;
  // True while a graph capture (anydev::Graph) records this stream's work.
  [[nodiscard]] absl::StatusOr<bool> IsCapturing() const;
  // Returns the vendor's handle of this stream (cudaStream_t ...) as an
  // integer; Unimplemented for backends without one (the CPU, sim).
  [[nodiscard]] absl::StatusOr<uintptr_t> NativeHandle() const;

  std::string ToString() const;

  friend bool operator==(const Stream& a, const Stream& b) {
    return a.device_ == b.device_ && a.id_ == b.id_;
  }
  friend bool operator!=(const Stream& a, const Stream& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const Stream& s) {
    return H::combine(std::move(h), s.device_, s.id_);
  }

 private:
  Device device_;
  StreamId id_;
};

std::ostream& operator<<(std::ostream& os, const Stream& s);

// Event flags as c10::EventFlag: timing is off by default.
enum class EventFlag { kDefault, kEnableTiming };

class Event {
 public:
  // An event for devices of `type`; the device index is fixed by the first
  // record, or up front when `device` has one.
  explicit Event(DeviceType type, bool enable_timing = false)
      : Event(Device(type), enable_timing) {}
  explicit Event(Device device, bool enable_timing = false)
      : device_(device), enable_timing_(enable_timing) {}
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  Device device() const { return device_; }
  bool enable_timing() const { return enable_timing_; }
  bool was_recorded() const { return recorded_; }
  // The backend's handle, or nullptr before the first record.
  void* handle() const { return handle_; }

  // Records the current point of `stream`. The stream's device must match the
  // event's (type always; index once it is fixed).
  [[nodiscard]] absl::Status Record(const Stream& stream);
  // Makes `stream` wait for this event (a no-op if it was never recorded).
  [[nodiscard]] absl::Status Block(const Stream& stream) const;
  // True when the work before the last record has finished (true if never
  // recorded).
  [[nodiscard]] absl::StatusOr<bool> Query() const;
  // Blocks until the work before the last record has finished.
  [[nodiscard]] absl::Status Synchronize() const;
  // Milliseconds from this event to `end`. Both need timing (InvalidArgument),
  // a record (InvalidArgument) and completion (FailedPrecondition), with
  // PyTorch's messages.
  [[nodiscard]] absl::StatusOr<double> ElapsedTime(const Event& end) const;

 private:
  void Reset() noexcept;

  Device device_;
  bool enable_timing_;
  bool recorded_ = false;
  void* handle_ = nullptr;
};

}  // namespace anydev

#endif  // ANYDEV_STREAM_H_
