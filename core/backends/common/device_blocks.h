// backends/common/device_blocks.h: the record of the device memory a vendor
// backend handed out, per device.
//
// A real GPU gives no error for a copy that runs a few bytes past the end of
// an allocation (allocations are rounded up), nor for a free of a pointer the
// caller does not own until much later; with this record both are errors that
// name the pointer when the call is made, as on the simulated accelerator.
//
// Example:
//   DeviceBlocks blocks("cuda:0");
//   blocks.Add(p, 4096);
//   blocks.CheckRange(p, 4097, "copy destination");  // OutOfRange: overruns its block
#ifndef ANYDEV_BACKENDS_COMMON_DEVICE_BLOCKS_H_
#define ANYDEV_BACKENDS_COMMON_DEVICE_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace anydev::internal {

class DeviceBlocks {
 public:
  // `name` ("cuda:0") prefixes messages.
  explicit DeviceBlocks(std::string name) : name_(std::move(name)) {}
  DeviceBlocks(const DeviceBlocks&) = delete;
  DeviceBlocks& operator=(const DeviceBlocks&) = delete;

  // Records a live block of `nbytes` at `ptr`.
  void Add(void* ptr, size_t nbytes);
  // Forgets the block at `ptr` and returns its size; InvalidArgument naming the
  // pointer when there is none (a double free or a foreign pointer).
  absl::StatusOr<size_t> Remove(void* ptr);
  // Ok when [ptr, ptr + nbytes) lies inside one live block; OutOfRange when it
  // starts in one and runs past its end; NotFound when `ptr` is in none.
  absl::Status CheckRange(const void* ptr, size_t nbytes, const char* what) const;
  // The bytes in live blocks.
  uint64_t bytes() const;

  const std::string& name() const { return name_; }

 private:
  const std::string name_;
  mutable absl::Mutex mu_;
  absl::btree_map<uintptr_t, size_t> blocks_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

// Checks [ptr, ptr + nbytes) against `own`, then against the record of each
// other device (`blocks_of(d)` for each `d` of `devices`), since a peer copy
// may read another device's memory: the first record that knows `ptr`
// answers (Ok, or OutOfRange for an overrun); NotFound when none does.
template <typename Devices, typename BlocksOf>
absl::Status CheckRangeOnAnyDevice(const DeviceBlocks& own, const Devices& devices,
                                   BlocksOf blocks_of, const void* ptr, size_t nbytes,
                                   const char* what) {
  absl::Status status = own.CheckRange(ptr, nbytes, what);
  if (status.code() != absl::StatusCode::kNotFound) return status;
  for (const auto& d : devices) {
    const DeviceBlocks& blocks = blocks_of(d);
    if (&blocks == &own) continue;
    absl::Status s = blocks.CheckRange(ptr, nbytes, what);
    if (s.code() != absl::StatusCode::kNotFound) return s;
  }
  return status;
}

}  // namespace anydev::internal

#endif  // ANYDEV_BACKENDS_COMMON_DEVICE_BLOCKS_H_
