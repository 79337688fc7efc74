#include "backends/common/device_blocks.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace anydev::internal {
namespace {
std::string Ptr(const void* p) { return absl::StrFormat("%p", p); }
}  // namespace

void DeviceBlocks::Add(void* ptr, size_t nbytes) {
  absl::MutexLock lock(&mu_);
  blocks_[reinterpret_cast<uintptr_t>(ptr)] = nbytes;
  bytes_ += nbytes;
}

absl::StatusOr<size_t> DeviceBlocks::Remove(void* ptr) {
  absl::MutexLock lock(&mu_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name_, ": free of ", Ptr(ptr),
        ", which is not a live allocation of this device (a double free or a foreign pointer)"));
  }
  const size_t nbytes = it->second;
  bytes_ -= nbytes;
  blocks_.erase(it);
  return nbytes;
}

absl::Status DeviceBlocks::CheckRange(const void* ptr, size_t nbytes, const char* what) const {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  absl::MutexLock lock(&mu_);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin() || p >= std::prev(it)->first + std::prev(it)->second) {
    return absl::NotFoundError(
        absl::StrCat(name_, ": ", what, " ", Ptr(ptr), " is not in a block of this device"));
  }
  --it;
  const uintptr_t base = it->first;
  const size_t size = it->second;
  if (nbytes > base + size - p) {
    return absl::OutOfRangeError(absl::StrCat(
        name_, ": ", what, " of ", nbytes, " bytes at ", Ptr(ptr), " overruns its block ",
        Ptr(reinterpret_cast<void*>(base)), " of ", size, " bytes by ",
        nbytes - (base + size - p), " bytes"));
  }
  return absl::OkStatus();
}

uint64_t DeviceBlocks::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace anydev::internal
