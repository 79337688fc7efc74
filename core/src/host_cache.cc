// The host caching allocator (anydev/memory.h, "pinned host memory"): one
// cache per process over every backend's AllocateHost, as PyTorch's
// CachingHostAllocator.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "anydev/accelerator.h"
#include "anydev/backend.h"
#include "anydev/memory.h"
#include "anydev/runtime.h"
#include "internal/errors.h"

namespace anydev {
namespace {

constexpr size_t kMinBlock = 512;
constexpr int kSizeClasses = 64;

struct HostBlock {
  DeviceType type;
  int size_class;  // the block holds 1 << size_class bytes
  bool in_use;
};

// Returns the smallest power-of-two class that holds `nbytes`.
int SizeClassOf(size_t nbytes) {
  int c = 9;  // 512
  while ((size_t{1} << c) < nbytes) ++c;
  return c;
}

void Add(Stat& s, int64_t bytes) {
  s.current += bytes;
  s.allocated += bytes;
  if (s.current > s.peak) s.peak = s.current;
}
void Sub(Stat& s, int64_t bytes) {
  s.current -= bytes;
  s.freed += bytes;
}

class HostCache {
 public:
  absl::StatusOr<void*> Alloc(size_t nbytes, DeviceType type) {
    if (nbytes == 0) return absl::InvalidArgumentError("HostAlloc: cannot allocate 0 bytes");
    if (nbytes > (size_t{1} << (kSizeClasses - 2))) {
      return absl::InvalidArgumentError(absl::StrCat("HostAlloc: ", nbytes, " bytes is too large"));
    }
    const int c = SizeClassOf(std::max(nbytes, kMinBlock));
    const int64_t size = int64_t{1} << c;
    {
      absl::MutexLock lock(&mu_);
      std::vector<void*>& free_list = free_[static_cast<size_t>(DenseIndex(type))][c];
      if (!free_list.empty()) {
        void* p = free_list.back();
        free_list.pop_back();
        blocks_[p].in_use = true;
        Add(stats_.allocated_bytes, size);
        return p;
      }
    }
    ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(type));
    ANYDEV_ASSIGN_OR_RETURN(void* p, backend->AllocateHost(static_cast<size_t>(size)));
    absl::MutexLock lock(&mu_);
    blocks_[p] = HostBlock{type, c, true};
    Add(stats_.reserved_bytes, size);
    Add(stats_.allocated_bytes, size);
    ++stats_.num_host_alloc;
    return p;
  }

  absl::Status Free(void* ptr) {
    absl::MutexLock lock(&mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end() || !it->second.in_use) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "HostFree: %p is not a live block of the host caching allocator%s", ptr,
          it == blocks_.end() ? "" : " (freed twice)"));
    }
    it->second.in_use = false;
    Sub(stats_.allocated_bytes, int64_t{1} << it->second.size_class);
    free_[static_cast<size_t>(DenseIndex(it->second.type))][it->second.size_class].push_back(ptr);
    return absl::OkStatus();
  }

  size_t BlockSize(const void* ptr) {
    absl::MutexLock lock(&mu_);
    auto it = blocks_.find(const_cast<void*>(ptr));
    return it == blocks_.end() ? 0 : size_t{1} << it->second.size_class;
  }

  absl::Status Empty() {
    absl::MutexLock lock(&mu_);
    absl::Status first = absl::OkStatus();
    for (DeviceType type : kAllDeviceTypes) {
      for (std::vector<void*>& free_list : free_[static_cast<size_t>(DenseIndex(type))]) {
        for (void* p : free_list) {
          const int64_t size = int64_t{1} << blocks_[p].size_class;
          absl::StatusOr<Backend*> backend = GetBackend(type);
          absl::Status s = backend.ok() ? (*backend)->FreeHost(p) : backend.status();
          if (!s.ok() && first.ok()) first = s;
          blocks_.erase(p);
          Sub(stats_.reserved_bytes, size);
          ++stats_.num_host_free;
        }
        free_list.clear();
      }
    }
    return first;
  }

  HostMemoryStats Stats() {
    absl::MutexLock lock(&mu_);
    return stats_;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<void*, HostBlock> blocks_ ABSL_GUARDED_BY(mu_);
  std::vector<void*> free_[kNumDeviceTypes][kSizeClasses] ABSL_GUARDED_BY(mu_);
  HostMemoryStats stats_ ABSL_GUARDED_BY(mu_);
};

// Leaked on purpose, as the backends (see the registry's note).
HostCache& Cache() {
  static auto* cache = new HostCache();
  return *cache;
}

}  // namespace

absl::StatusOr<void*> HostAlloc(size_t nbytes, std::optional<DeviceType> type) {
  if (!type) {
    ANYDEV_ASSIGN_OR_RETURN(DeviceType t, DefaultDeviceType());
    type = t;
  }
  return Cache().Alloc(nbytes, *type);
}

absl::Status HostFree(void* ptr) { return Cache().Free(ptr); }

size_t HostBlockSize(const void* ptr) { return Cache().BlockSize(ptr); }

HostMemoryStats GetHostMemoryStats() { return Cache().Stats(); }

absl::Status EmptyHostCache() { return Cache().Empty(); }

absl::Status acc::EmptyHostCache() {
  // As at::accelerator::emptyHostCache (getAccelerator(true)): an error
  // without an accelerator.
  ANYDEV_RETURN_IF_ERROR(acc::GetAccelerator().status());
  return anydev::EmptyHostCache();
}

}  // namespace anydev
