// anydev/device.h: device types and `Device`, parsed and printed as torch.device.
//
// A `Device` is a device type plus an optional index (-1 means "no index", as
// in c10::Device). Strings follow c10's grammar exactly,
// `([a-zA-Z_]+)(?::([1-9]\d*|0))?`, so "sim:01", "sim:-1", "sim:1:2" and ""
// are rejected with the messages PyTorch gives.
//
// Example:
//   absl::StatusOr<anydev::Device> d = anydev::Device::Parse("sim:1");
//   if (d.ok()) std::cout << *d;   // prints "sim:1"
#ifndef ANYDEV_DEVICE_H_
#define ANYDEV_DEVICE_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace anydev {

// Device types anydev knows. The values are c10::DeviceType's, so packed
// streams and DLPack conversions line up with PyTorch; `kSim` takes the
// PrivateUse1 slot, which is what an out-of-tree backend uses in PyTorch.
//
// `kMPS`, `kMeta` and `kPrivateUse1` parse and print as torch.device does
// ("mps", "meta:0", "privateuseone:1") so that code naming them reads the
// same here; anydev has no backend for them, so they are never available
// ("backend 'mps' is not enabled in this build"). Because sim holds c10's
// PrivateUse1 number (20), `kPrivateUse1` has an anydev-only number (64):
// a packed stream of type 20 is a sim stream.
enum class DeviceType : int8_t {
  kCPU = 0,
  kCUDA = 1,
  kHIP = 6,
  kXPU = 12,
  kMPS = 13,
  kMeta = 14,
  kSim = 20,
  kPrivateUse1 = 64,
};

// The number of device types, and a dense 0..kNumDeviceTypes-1 numbering for
// per-type tables.
inline constexpr int kNumDeviceTypes = 8;
// Every device type in the order the accelerator is chosen (cpu last: it is
// never an accelerator).
inline constexpr DeviceType kAllDeviceTypes[kNumDeviceTypes] = {
    DeviceType::kCUDA, DeviceType::kHIP,  DeviceType::kXPU,          DeviceType::kSim,
    DeviceType::kMPS,  DeviceType::kMeta, DeviceType::kPrivateUse1, DeviceType::kCPU};

// The device types anydev has a backend folder for (what anydev.backends()
// and `anydev doctor` list), in the same order.
inline constexpr int kNumBackendTypes = 5;
inline constexpr DeviceType kBackendTypes[kNumBackendTypes] = {
    DeviceType::kCUDA, DeviceType::kHIP, DeviceType::kXPU, DeviceType::kSim,
    DeviceType::kCPU};

// The most devices of one type anydev addresses (the simulated accelerator's
// limit too).
inline constexpr int kMaxDevicesPerType = 64;

namespace device_internal {
constexpr int DenseIndexSlow(DeviceType t) {
  switch (t) {
    case DeviceType::kCUDA: return 0;
    case DeviceType::kHIP: return 1;
    case DeviceType::kXPU: return 2;
    case DeviceType::kSim: return 3;
    case DeviceType::kMPS: return 4;
    case DeviceType::kMeta: return 5;
    case DeviceType::kPrivateUse1: return 6;
    case DeviceType::kCPU: return 7;
  }
  return 7;
}
// DenseIndexSlow of every 8-bit value: one load where the switch compiles
// to a jump table (about 20 instructions on the allocator's hot path).
struct DenseTable {
  int8_t of[256] = {};
  constexpr DenseTable() {
    for (int v = 0; v < 256; ++v) {
      of[v] = static_cast<int8_t>(DenseIndexSlow(static_cast<DeviceType>(static_cast<int8_t>(v))));
    }
  }
};
inline constexpr DenseTable kDenseTable{};
}  // namespace device_internal

// Returns the dense index of `t` (0..kNumDeviceTypes-1).
constexpr int DenseIndex(DeviceType t) {
  return device_internal::kDenseTable.of[static_cast<uint8_t>(t)];
}

// Returns the lower-case name of `t` ("cuda").
absl::string_view DeviceTypeName(DeviceType t);

// Parses a bare type name ("cuda"); the error lists the valid names.
absl::StatusOr<DeviceType> ParseDeviceType(absl::string_view name);

// Converts a c10-style integer device type (1 for CUDA) to a DeviceType.
absl::StatusOr<DeviceType> DeviceTypeFromInt(int64_t value);

// True for the types that can be the current accelerator (all but the CPU
// and meta, as c10's isAccelerator).
constexpr bool IsAcceleratorType(DeviceType t) {
  return t != DeviceType::kCPU && t != DeviceType::kMeta;
}

class Device {
 public:
  // A device of type `type` with `index` (-1: no index). Unchecked: the index
  // is kept as given (never narrowed), so an out-of-range one is reported by
  // whatever call uses the device.
  constexpr explicit Device(DeviceType type, int index = -1)
      : type_(type), index_(index < -1 ? -1 : index) {}

  // Parses "type" or "type:index" exactly as c10::Device does. Errors are
  // InvalidArgument and quote the string.
  static absl::StatusOr<Device> Parse(absl::string_view text);

  // Builds a device from a type and an index, as torch.device("cuda", 1);
  // rejects negative indices (-1 means none) and indices above 127. Like
  // PyTorch's release builds, it accepts "cpu:1"; using it fails the range
  // check (the CPU has one device).
  static absl::StatusOr<Device> Create(DeviceType type, int64_t index);

  constexpr DeviceType type() const { return type_; }
  constexpr int index() const { return index_; }
  constexpr bool has_index() const { return index_ >= 0; }
  constexpr bool is_cpu() const { return type_ == DeviceType::kCPU; }

  // "cuda:1", or "cuda" without an index.
  std::string ToString() const;

  friend constexpr bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }
  friend constexpr bool operator!=(const Device& a, const Device& b) {
    return !(a == b);
  }
  template <typename H>
  friend H AbslHashValue(H h, const Device& d) {
    return H::combine(std::move(h), d.type_, d.index_);
  }

 private:
  DeviceType type_;
  int index_;
};

std::ostream& operator<<(std::ostream& os, const Device& d);
std::ostream& operator<<(std::ostream& os, DeviceType t);

}  // namespace anydev

#endif  // ANYDEV_DEVICE_H_
