// internal/host_memory.h: host memory handed out as "device" memory by the
// cpu and sim backends, with a capacity and a record of every live block, so
// that a foreign pointer, a double free or a copy that runs past the end of a
// block is an error that names the pointer (as compute-sanitizer would say on
// a GPU) instead of silent corruption.
#ifndef ANYDEV_INTERNAL_HOST_MEMORY_H_
#define ANYDEV_INTERNAL_HOST_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace anydev::internal {

class TrackedHostMemory {
 public:
  // `name` ("sim:0") prefixes messages; `capacity` bounds the bytes in use.
  TrackedHostMemory(std::string name, uint64_t capacity)
      : name_(std::move(name)), capacity_(capacity) {}
  TrackedHostMemory(const TrackedHostMemory&) = delete;
  TrackedHostMemory& operator=(const TrackedHostMemory&) = delete;

  // Allocates `nbytes` (> 0), 256-byte aligned as cudaMalloc's blocks are;
  // ResourceExhausted beyond the capacity.
  absl::StatusOr<void*> Allocate(size_t nbytes);
  // Frees a block from Allocate; InvalidArgument for anything else.
  absl::Status Free(void* ptr);
  // Checks that [ptr, ptr + nbytes) lies inside one live block.
  absl::Status CheckRange(const void* ptr, size_t nbytes, const char* what) const;

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const;

 private:
  const std::string name_;
  const uint64_t capacity_;
  mutable absl::Mutex mu_;
  uint64_t used_ ABSL_GUARDED_BY(mu_) = 0;
  absl::btree_map<uintptr_t, size_t> blocks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace anydev::internal

#endif  // ANYDEV_INTERNAL_HOST_MEMORY_H_
