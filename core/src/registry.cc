// The backend registry: one slot per device type, filled by the one
// ANYDEV_REGISTER_BACKEND line of each backend that is built. Probing is lazy
// and happens once per type; its answer (device count or reason) is cached.
//
// Note [Fork]: a process forked from one that used a device runtime has a
// copy of its memory but none of its other threads, and a vendor driver's
// state does not survive the fork (CUDA's documentation: a child cannot use
// a context its parent created). The sim backend's streams are worker
// threads, so a child that waited on one waited forever. PyTorch poisons the
// fork: after torch.cuda is initialised, a forked child's first CUDA call
// raises "Cannot re-initialize CUDA in forked subprocess. To use CUDA with
// multiprocessing, you must use the 'spawn' start method"
// (torch/cuda/__init__.py, _lazy_init; the pthread_atfork handler of
// torch/csrc/cuda/Module.cpp). anydev does the same for each backend that
// says it cannot go on (Backend::UsableAfterFork): the handler below, run in
// the child, marks it lost, and every call that needs it answers that error
// instead of reaching the backend; the device count is still known, as
// torch's device_count() still answers in such a child. The caching
// allocators of a lost backend are forgotten (leaked), so nothing reaches its
// state through them. The CPU, and sim before it has started a thread, go on.
#include <pthread.h>

#include <array>
#include <atomic>
#include <memory>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "internal/caching_allocator.h"

namespace anydev {
namespace internal {
namespace {

struct Slot {
  BackendFactory factory;
  absl::once_flag once;
  std::unique_ptr<Backend> backend;
  absl::Status status = absl::OkStatus();
  int count = 0;
};

// Leaked on purpose: backends own worker threads and vendor handles that must
// outlive every static destructor (a stream worker may still be running when
// the process exits).
std::array<Slot, kNumDeviceTypes>& Slots() {
  static auto* slots = new std::array<Slot, kNumDeviceTypes>();
  return *slots;
}

// The backends whose probe succeeded, for GetBackend's fast path: an acquire
// load instead of the once-flag and status checks (vendor hot paths, such as
// an event record, go through GetBackend on every call). Zero-initialised
// before any dynamic initialisation, so registration order does not matter.
std::atomic<Backend*> g_ready[kNumDeviceTypes];

// The backends a fork made unusable in this process (Note [Fork]).
std::atomic<Backend*> g_lost_to_fork[kNumDeviceTypes];

// How PyTorch names a device runtime in its fork error ("CUDA").
absl::string_view ForkName(DeviceType type) {
  switch (type) {
    case DeviceType::kCUDA:
      return "CUDA";
    case DeviceType::kHIP:
      return "HIP";
    case DeviceType::kXPU:
      return "XPU";
    default:
      return DeviceTypeName(type);
  }
}

absl::Status ForkError(DeviceType type) {
  const absl::string_view name = ForkName(type);
  return absl::FailedPreconditionError(absl::StrCat(
      "Cannot re-initialize ", name, " in forked subprocess. To use ", name,
      " with multiprocessing, you must use the 'spawn' start method (this process was forked "
      "from one that had started using ",
      name,
      type == DeviceType::kSim ? ", whose streams are threads a forked child does not have)"
                               : ", whose driver state a forked child cannot use)"));
}

// pthread_atfork's child handler: runs in the child, in the thread that
// forked, before fork() returns there.
void ChildAfterFork() {
  for (DeviceType type : kAllDeviceTypes) {
    const int i = DenseIndex(type);
    Backend* backend = g_ready[i].load(std::memory_order_acquire);
    if (backend == nullptr || backend->UsableAfterFork()) continue;
    g_lost_to_fork[i].store(backend, std::memory_order_release);
    g_ready[i].store(nullptr, std::memory_order_release);
    ForgetCachingAllocatorsAfterFork(type);
  }
}

[[maybe_unused]] const int g_at_fork = pthread_atfork(nullptr, nullptr, &ChildAfterFork);

Slot& ProbedSlot(DeviceType type) {
  Slot& slot = Slots()[DenseIndex(type)];
  absl::call_once(slot.once, [&slot, type] {
    if (!slot.factory) {
      slot.status = absl::FailedPreconditionError(absl::StrCat(
          "backend '", DeviceTypeName(type), "' is not enabled in this build"));
      return;
    }
    slot.backend = slot.factory();
    absl::StatusOr<int> count = slot.backend->Probe();
    if (!count.ok()) {
      slot.status = count.status();
    } else if (*count <= 0) {
      slot.status = absl::UnavailableError(
          absl::StrCat(DeviceTypeName(type), ": no devices found"));
    } else {
      slot.count = *count;
      g_ready[DenseIndex(type)].store(slot.backend.get(), std::memory_order_release);
    }
  });
  return slot;
}

}  // namespace

bool RegisterBackend(DeviceType type, BackendFactory factory) {
  Slots()[DenseIndex(type)].factory = std::move(factory);
  return true;
}

Backend* BackendLostToFork(DeviceType type) {
  return g_lost_to_fork[DenseIndex(type)].load(std::memory_order_acquire);
}

}  // namespace internal

absl::StatusOr<Backend*> GetBackend(DeviceType type) {
  if (Backend* ready = internal::g_ready[DenseIndex(type)].load(std::memory_order_acquire);
      ABSL_PREDICT_TRUE(ready != nullptr)) {
    return ready;
  }
  if (ABSL_PREDICT_FALSE(internal::BackendLostToFork(type) != nullptr)) {
    return internal::ForkError(type);
  }
  internal::Slot& slot = internal::ProbedSlot(type);
  if (!slot.status.ok()) return slot.status;
  return slot.backend.get();
}

int DeviceCountOf(DeviceType type) { return internal::ProbedSlot(type).count; }

std::vector<BackendInfo> ListBackends() {
  std::vector<BackendInfo> out;
  for (DeviceType type : kBackendTypes) {
    internal::Slot& slot = internal::ProbedSlot(type);
    BackendInfo info;
    info.type = type;
    info.built = static_cast<bool>(slot.factory);
    const absl::Status status =
        internal::BackendLostToFork(type) != nullptr ? internal::ForkError(type) : slot.status;
    info.available = status.ok();
    info.device_count = slot.count;
    info.reason = status.ok() ? "" : std::string(status.message());
    info.code = status.code();
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace anydev
