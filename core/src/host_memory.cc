#include "internal/host_memory.h"

#include <cstdlib>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace anydev::internal {
namespace {
constexpr size_t kAlignment = 256;

std::string Ptr(const void* p) { return absl::StrFormat("%p", p); }
}  // namespace

absl::StatusOr<void*> TrackedHostMemory::Allocate(size_t nbytes) {
  if (nbytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": cannot allocate 0 bytes"));
  }
  {
    absl::MutexLock lock(&mu_);
    if (nbytes > capacity_ - used_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          name_, " out of memory: tried to allocate ", nbytes, " bytes; ", used_,
          " of ", capacity_, " bytes in use, ", capacity_ - used_, " free"));
    }
    used_ += nbytes;
  }
  const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  absl::MutexLock lock(&mu_);
  if (p == nullptr) {
    used_ -= nbytes;
    return absl::ResourceExhaustedError(absl::StrCat(
        name_, " out of memory: the host could not provide ", nbytes, " bytes"));
  }
  blocks_.emplace(reinterpret_cast<uintptr_t>(p), nbytes);
  return p;
}

absl::Status TrackedHostMemory::Free(void* ptr) {
  {
    absl::MutexLock lock(&mu_);
    auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == blocks_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": free of ", Ptr(ptr),
          ", which is not a live allocation of this device (a double free or a foreign pointer)"));
    }
    used_ -= it->second;
    blocks_.erase(it);
  }
  std::free(ptr);
  return absl::OkStatus();
}

absl::Status TrackedHostMemory::CheckRange(const void* ptr, size_t nbytes,
                                           const char* what) const {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  absl::MutexLock lock(&mu_);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": ", what, " ", Ptr(ptr), " is not device memory of this device"));
  }
  --it;
  const uintptr_t base = it->first;
  const size_t size = it->second;
  if (p >= base + size) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": ", what, " ", Ptr(ptr), " is not device memory of this device"));
  }
  if (nbytes > base + size - p) {
    return absl::OutOfRangeError(absl::StrCat(
        name_, ": ", what, " of ", nbytes, " bytes at ", Ptr(ptr), " overruns its block ",
        Ptr(reinterpret_cast<void*>(base)), " of ", size, " bytes by ",
        nbytes - (base + size - p), " bytes"));
  }
  return absl::OkStatus();
}

uint64_t TrackedHostMemory::used() const {
  absl::MutexLock lock(&mu_);
  return used_;
}

}  // namespace anydev::internal
