// anydev/accelerator.h: the current accelerator, as at::accelerator.
//
// `anydev::acc::` acts on the current accelerator: the first available of
// cuda, hip, xpu, sim, or the type named by ANYDEV_ACCELERATOR. The CPU is
// never an accelerator. The current device index and the current stream of
// each device are per thread, as in CUDA and PyTorch; a new thread starts on
// device 0 with default streams.
//
// Example:
//   absl::StatusOr<anydev::acc::DeviceIndexGuard> g = anydev::acc::DeviceIndexGuard::Make(1);
//   // ... device 1 is current here ...
//   // on scope exit the previous index is restored
#ifndef ANYDEV_ACCELERATOR_H_
#define ANYDEV_ACCELERATOR_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "anydev/device.h"
#include "anydev/stream.h"

namespace anydev::acc {

// Returns the current accelerator type, or the reason there is none:
// FailedPrecondition "Cannot access accelerator device when none is
// available." or the error ANYDEV_ACCELERATOR caused. Resolved once.
[[nodiscard]] absl::StatusOr<DeviceType> GetAccelerator();

// Returns the current accelerator, or nullopt when there is none. With
// `check_available`, a configured-but-unusable accelerator is also nullopt.
// Fails only when ANYDEV_ACCELERATOR (or another ANYDEV_ variable) is bad.
[[nodiscard]] absl::StatusOr<std::optional<DeviceType>> CurrentAccelerator();

// Returns the accelerator torch.accelerator.current_accelerator() names: the
// current one, or the type ANYDEV_ACCELERATOR forces when its backend is built
// but has no usable device (torch's compile-time answer); nullopt otherwise,
// a bad configuration included. Never fails.
std::optional<DeviceType> ConfiguredAccelerator();

// Returns the number of devices of the current accelerator, 0 if none.
// Never fails (as at::accelerator::deviceCount).
int DeviceCount();

// True when there is a current accelerator with at least one device.
bool IsAvailable();

// Returns the calling thread's current device index.
[[nodiscard]] absl::StatusOr<int> CurrentDeviceIndex();

// Makes `index` the calling thread's current device. A negative index is a
// no-op (as PyTorch); an index past the device count is OutOfRange.
[[nodiscard]] absl::Status SetDeviceIndex(int index);

// Sets the current device to `index` and returns the previous one.
[[nodiscard]] absl::StatusOr<int> ExchangeDeviceIndex(int index);

// As ExchangeDeviceIndex, but a negative index only reads the current one.
[[nodiscard]] absl::StatusOr<int> MaybeExchangeDeviceIndex(int index);

// Returns the calling thread's current stream of `index` (-1: current device).
[[nodiscard]] absl::StatusOr<Stream> CurrentStream(int index = -1);

// Makes `stream` the calling thread's current stream of its device. As
// torch.accelerator.set_stream, it also makes that device current. The
// stream's type must be the current accelerator.
[[nodiscard]] absl::Status SetCurrentStream(const Stream& stream);

// Waits for all work on every stream of `index` (-1: current device).
[[nodiscard]] absl::Status Synchronize(int index = -1);

// Makes a device index current for a scope, then restores the previous one.
class DeviceIndexGuard {
 public:
  // Switches to `index` (negative: no switch, as device_index(None)).
  [[nodiscard]] static absl::StatusOr<DeviceIndexGuard> Make(int index);
  DeviceIndexGuard(DeviceIndexGuard&& other) noexcept;
  DeviceIndexGuard& operator=(DeviceIndexGuard&&) = delete;
  DeviceIndexGuard(const DeviceIndexGuard&) = delete;
  ~DeviceIndexGuard();
  int original_index() const { return original_; }

 private:
  explicit DeviceIndexGuard(int original) : original_(original) {}
  int original_;  // -1: nothing to restore
};

// Makes a stream (and its device) current for a scope, then restores the
// previous device and that device's previous stream.
class StreamGuard {
 public:
  [[nodiscard]] static absl::StatusOr<StreamGuard> Make(const Stream& stream);
  StreamGuard(StreamGuard&& other) noexcept;
  StreamGuard& operator=(StreamGuard&&) = delete;
  StreamGuard(const StreamGuard&) = delete;
  ~StreamGuard();

 private:
  StreamGuard(int device, Stream prev) : original_device_(device), prev_stream_(prev) {}
  int original_device_;   // -1 once moved from
  Stream prev_stream_;
};

}  // namespace anydev::acc

#endif  // ANYDEV_ACCELERATOR_H_
