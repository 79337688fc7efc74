// anydev/runtime.h: device-generic calls (rule 2): each takes an optional
// device type or device, whose default is the current accelerator, else the
// CPU. Also the per-type current device and stream that anydev::acc and the
// per-type device modules are built on.
//
// Example:
//   int n = anydev::DeviceCount();                       // current accelerator, else 1 (cpu)
//   int sims = anydev::DeviceCount(anydev::DeviceType::kSim);
//   absl::StatusOr<anydev::DeviceProperties> p =
//       anydev::GetDeviceProperties(anydev::Device(anydev::DeviceType::kSim, 0));
#ifndef ANYDEV_RUNTIME_H_
#define ANYDEV_RUNTIME_H_

#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "anydev/stream.h"

namespace anydev {

// The library version, "0.1.0".
const char* Version();

// Returns the current accelerator type, else the CPU. Fails only when the
// accelerator configuration is bad (ANYDEV_ACCELERATOR names nothing usable).
[[nodiscard]] absl::StatusOr<DeviceType> DefaultDeviceType();

// Returns the number of devices of `type` (default: DefaultDeviceType()); 0
// for a type that is not built or not available, 1 for the CPU.
int DeviceCount(std::optional<DeviceType> type = std::nullopt);

// True when `type` (default: the current accelerator, else the CPU) has a
// device.
bool IsAvailable(std::optional<DeviceType> type = std::nullopt);

// Checks that `device` is usable: its backend available and its index (if
// any) in range. OutOfRange names the index and the count.
[[nodiscard]] absl::Status CheckDevice(Device device);

// Returns `device` with its index filled in from the calling thread's current
// device of that type when it has none, after CheckDevice.
[[nodiscard]] absl::StatusOr<Device> ResolveDevice(Device device);

// Returns the calling thread's current device index for `type`.
[[nodiscard]] absl::StatusOr<int> CurrentDeviceIndex(DeviceType type);

// Sets the calling thread's current device index for `type`; negative: no-op.
[[nodiscard]] absl::Status SetDeviceIndex(DeviceType type, int index);

// Returns the calling thread's current stream of `device` (index resolved as
// in ResolveDevice).
[[nodiscard]] absl::StatusOr<Stream> CurrentStream(Device device);

// Makes `stream` the calling thread's current stream of its device; does not
// change the current device (as at::accelerator::setCurrentStream).
[[nodiscard]] absl::Status SetCurrentStream(const Stream& stream);

// Waits for all work on `device` (default: the current device of the default
// type). A no-op for the CPU.
[[nodiscard]] absl::Status Synchronize(std::optional<Device> device = std::nullopt);

// Returns the properties of `device` (default: the current device of the
// default type).
[[nodiscard]] absl::StatusOr<DeviceProperties> GetDeviceProperties(
    std::optional<Device> device = std::nullopt);

// Returns (free, total) bytes of `device`'s memory.
[[nodiscard]] absl::StatusOr<std::pair<size_t, size_t>> GetMemoryInfo(
    std::optional<Device> device = std::nullopt);

}  // namespace anydev

#endif  // ANYDEV_RUNTIME_H_
