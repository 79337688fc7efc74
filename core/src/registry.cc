// The backend registry: one slot per device type, filled by the one
// ANYDEV_REGISTER_BACKEND line of each backend that is built. Probing is lazy
// and happens once per type; its answer (device count or reason) is cached.
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

}  // namespace internal

absl::StatusOr<Backend*> GetBackend(DeviceType type) {
  if (Backend* ready = internal::g_ready[DenseIndex(type)].load(std::memory_order_acquire);
      ABSL_PREDICT_TRUE(ready != nullptr)) {
    return ready;
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
    info.available = slot.status.ok();
    info.device_count = slot.count;
    info.reason = slot.status.ok() ? "" : std::string(slot.status.message());
    info.code = slot.status.code();
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace anydev
