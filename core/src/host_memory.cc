#include "internal/host_memory.h"

#include <cstdlib>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace anydev::internal {
namespace {
constexpr size_t kAlignment = 256;
}  // namespace

absl::StatusOr<void*> TrackedHostMemory::Allocate(size_t nbytes) {
  const std::string& name = blocks_.name();
  if (nbytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cannot allocate 0 bytes"));
  }
  {
    absl::MutexLock lock(&mu_);
    if (nbytes > capacity_ - used_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          name, " out of memory: tried to allocate ", nbytes, " bytes; ", used_, " of ",
          capacity_, " bytes in use, ", capacity_ - used_, " free"));
    }
    used_ += nbytes;
  }
  const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    absl::MutexLock lock(&mu_);
    used_ -= nbytes;
    return absl::ResourceExhaustedError(
        absl::StrCat(name, " out of memory: the host could not provide ", nbytes, " bytes"));
  }
  blocks_.Add(p, nbytes);
  return p;
}

absl::Status TrackedHostMemory::Free(void* ptr) {
  absl::StatusOr<size_t> nbytes = blocks_.Remove(ptr);
  if (!nbytes.ok()) return nbytes.status();
  {
    absl::MutexLock lock(&mu_);
    used_ -= *nbytes;
  }
  std::free(ptr);
  return absl::OkStatus();
}

absl::Status TrackedHostMemory::NotDeviceMemory(const void* ptr, const char* what) const {
  return absl::InvalidArgumentError(absl::StrCat(blocks_.name(), ": ", what, " ",
                                                 absl::StrFormat("%p", ptr),
                                                 " is not device memory of this device"));
}

absl::Status TrackedHostMemory::CheckRange(const void* ptr, size_t nbytes,
                                           const char* what) const {
  absl::Status s = blocks_.CheckRange(ptr, nbytes, what);
  if (s.code() == absl::StatusCode::kNotFound) return NotDeviceMemory(ptr, what);
  return s;
}

uint64_t TrackedHostMemory::used() const {
  absl::MutexLock lock(&mu_);
  return used_;
}

}  // namespace anydev::internal
