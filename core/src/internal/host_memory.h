// internal/host_memory.h: host memory handed out as "device" memory by the
// cpu and sim backends, with a capacity and a record of every live block (the
// DeviceBlocks the vendor backends keep too), so
// that a foreign pointer, a double free or a copy that runs past the end of a
// block is an error that names the pointer (as compute-sanitizer would say on
// a GPU) instead of silent corruption.
#ifndef ANYDEV_INTERNAL_HOST_MEMORY_H_
#define ANYDEV_INTERNAL_HOST_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "backends/common/device_blocks.h"

namespace anydev::internal {

class TrackedHostMemory {
 public:
  // `name` ("sim:0") prefixes messages; `capacity` bounds the bytes in use.
  TrackedHostMemory(std::string name, uint64_t capacity)
      : blocks_(std::move(name)), capacity_(capacity) {}
  TrackedHostMemory(const TrackedHostMemory&) = delete;
  TrackedHostMemory& operator=(const TrackedHostMemory&) = delete;

  // Allocates `nbytes` (> 0), 256-byte aligned as cudaMalloc's blocks are;
  // ResourceExhausted beyond the capacity.
  absl::StatusOr<void*> Allocate(size_t nbytes);
  // Frees a block from Allocate; InvalidArgument for anything else.
  absl::Status Free(void* ptr);
  // Checks that [ptr, ptr + nbytes) lies inside one live block:
  // InvalidArgument when `ptr` is in none, OutOfRange when it overruns one.
  absl::Status CheckRange(const void* ptr, size_t nbytes, const char* what) const;
  // The InvalidArgument CheckRange gives for a pointer in no block.
  absl::Status NotDeviceMemory(const void* ptr, const char* what) const;

  // The record of live blocks (for checks across devices).
  const DeviceBlocks& blocks() const { return blocks_; }

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const;

 private:
  DeviceBlocks blocks_;
  const uint64_t capacity_;
  // Bytes reserved against the capacity: taken before the host allocation so
  // that two threads cannot both pass the capacity check.
  mutable absl::Mutex mu_;
  uint64_t used_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace anydev::internal

#endif  // ANYDEV_INTERNAL_HOST_MEMORY_H_
