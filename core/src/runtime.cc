// Device-generic calls (anydev::), the current accelerator (anydev::acc::) and
// the per-thread state both are built on.
#include "anydev/runtime.h"

#include <atomic>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "anydev/accelerator.h"
#include "internal/env.h"
#include "internal/errors.h"
#include "internal/thread_state.h"

namespace anydev {
namespace {

// Note [Per-thread device state]: as in CUDA and PyTorch, the current device
// and the current stream of each device belong to the calling thread; a new
// thread starts on index 0 with default streams (id 0), as in CUDA.
//
// The device indices are a tiny zero-initialised thread-local with the
// initial-exec TLS model, so reading one is a single %fs-relative load rather
// than a call to __tls_get_addr (that call was 60% of
// acc::CurrentDeviceIndex's time). initial-exec TLS of a dlopen'ed library
// comes out of glibc's small static-TLS surplus, so it must stay small: the
// stream table (2.5 KB) lives on the heap, allocated on a thread's first
// SetCurrentStream; until then every current stream is the default one. Its
// address is kept next to the indices, so reading a current stream (each
// allocation does) is a load or two with no call either; a second,
// general-dynamic thread_local owns it and frees it at thread exit.
struct StreamTable {
  StreamId id[kNumDeviceTypes][kMaxDevicesPerType] = {};
};
struct ThreadDevices {
  int8_t index[kNumDeviceTypes];
  StreamTable* streams;  // owned by tls_streams_owner; nullptr until needed
};
__attribute__((tls_model("initial-exec"))) thread_local ThreadDevices tls_devices;
// Frees the table at thread exit and forgets it, so that code run later in
// the thread's teardown sees the default streams again.
struct StreamTableOwner {
  bool armed = false;
  ~StreamTableOwner() {
    delete tls_devices.streams;
    tls_devices.streams = nullptr;
  }
};
thread_local StreamTableOwner tls_streams_owner;

inline int8_t& CurrentIndexRef(DeviceType type) { return tls_devices.index[DenseIndex(type)]; }

inline StreamId CurrentStreamId(DeviceType type, int index) {
  const StreamTable* t = tls_devices.streams;
  return t == nullptr ? 0 : t->id[DenseIndex(type)][index];
}

// The current accelerator, resolved once.
struct AcceleratorChoice {
  absl::Status status;                // a bad configuration
  std::optional<DeviceType> type;     // nullopt: none
  // ANYDEV_ACCELERATOR's type when its backend is built but has no usable
  // device (what current_accelerator() names, as torch's compile-time answer).
  std::optional<DeviceType> configured;
  int dense = -1;                     // DenseIndex(*type) when usable, else -1
  int count = 0;                      // its device count
  Backend* backend = nullptr;         // its backend, when usable
};

std::atomic<const AcceleratorChoice*> g_choice{nullptr};

const AcceleratorChoice& ResolveAccelerator() {
  static absl::once_flag once;
  static AcceleratorChoice* choice = nullptr;
  absl::call_once(once, [] {
    auto* c = new AcceleratorChoice();
    std::optional<std::string> forced = internal::GetEnv("ANYDEV_ACCELERATOR");
    if (forced) {
      absl::StatusOr<DeviceType> type = ParseDeviceType(*forced);
      if (!type.ok()) {
        c->status = absl::InvalidArgumentError(absl::StrCat(
            "ANYDEV_ACCELERATOR='", *forced,
            "' is not a device type; expected one of cuda, hip, xpu, sim"));
      } else if (*type == DeviceType::kCPU) {
        c->status = absl::InvalidArgumentError(
            "ANYDEV_ACCELERATOR='cpu': the CPU is never an accelerator; unset "
            "ANYDEV_ACCELERATOR to run without one");
      } else if (absl::StatusOr<Backend*> b = GetBackend(*type);
                 !b.ok() && internal::BackendLostToFork(*type) == nullptr) {
        if (b.status().code() == absl::StatusCode::kUnavailable) c->configured = *type;
        // A malformed configuration of the forced backend keeps its code
        // (InvalidArgument), as it has without ANYDEV_ACCELERATOR.
        c->status = absl::Status(
            b.status().code() == absl::StatusCode::kInvalidArgument
                ? absl::StatusCode::kInvalidArgument
                : absl::StatusCode::kFailedPrecondition,
            absl::StrCat("ANYDEV_ACCELERATOR=", *forced, " but ", *forced,
                         " is not available: ", b.status().message()));
      } else {
        c->type = *type;
      }
    } else {
      for (DeviceType type : kAllDeviceTypes) {
        if (type == DeviceType::kCPU) continue;
        absl::StatusOr<Backend*> b = GetBackend(type);
        // A backend lost to a fork is still the accelerator: its calls say
        // why they cannot run here (Note [Fork] in registry.cc).
        if (b.ok() || internal::BackendLostToFork(type) != nullptr) {
          c->type = type;
          break;
        }
        // A malformed configuration (ANYDEV_SIM_DEVICES=abc) is an error, not
        // a silent fall-through to the next type or to the CPU.
        if (b.status().code() == absl::StatusCode::kInvalidArgument) {
          c->status = b.status();
          break;
        }
      }
    }
    if (c->status.ok() && c->type) {
      c->dense = DenseIndex(*c->type);
      c->count = DeviceCountOf(*c->type);
      absl::StatusOr<Backend*> b = GetBackend(*c->type);
      c->backend = b.ok() ? *b : internal::BackendLostToFork(*c->type);
    }
    choice = c;
    g_choice.store(c, std::memory_order_release);
  });
  return *choice;
}

inline const AcceleratorChoice& Choice() {
  const AcceleratorChoice* c = g_choice.load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(c != nullptr)) return *c;
  return ResolveAccelerator();
}

absl::Status NoAccelerator() {
  return absl::FailedPreconditionError(
      "Cannot access accelerator device when none is available.");
}

absl::Status OutOfRange(DeviceType type, int index, int count) {
  return absl::OutOfRangeError(absl::StrCat(
      "device index ", index, " is out of range for ", DeviceTypeName(type),
      ": ", count, count == 1 ? " device is" : " devices are", " available",
      count > 0 ? absl::StrCat(" (valid indices: 0..", count - 1, ")") : ""));
}

// Returns the backend of an available type and checks `index` against it.
absl::StatusOr<Backend*> BackendFor(DeviceType type, int index) {
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(type));
  if (index >= 0) {
    const int count = DeviceCountOf(type);
    if (index >= count) return OutOfRange(type, index, count);
  }
  return backend;
}

}  // namespace

StreamId internal::CurrentStreamIdUnchecked(DeviceType type, int index) {
  return CurrentStreamId(type, index);
}

const char* Version() { return "0.1.0"; }

absl::StatusOr<DeviceType> DefaultDeviceType() {
  const AcceleratorChoice& c = Choice();
  if (!c.status.ok()) return c.status;
  return c.type.value_or(DeviceType::kCPU);
}

int DeviceCount(std::optional<DeviceType> type) {
  if (!type) {
    absl::StatusOr<DeviceType> t = DefaultDeviceType();
    if (!t.ok()) return 0;
    type = *t;
  }
  return DeviceCountOf(*type);
}

bool IsAvailable(std::optional<DeviceType> type) { return DeviceCount(type) > 0; }

absl::Status CheckDevice(Device device) {
  return BackendFor(device.type(), device.index()).status();
}

absl::StatusOr<Device> ResolveDevice(Device device) {
  ANYDEV_RETURN_IF_ERROR(CheckDevice(device));
  if (device.has_index()) return device;
  return Device(device.type(), CurrentIndexRef(device.type()));
}

absl::StatusOr<int> CurrentDeviceIndex(DeviceType type) {
  ANYDEV_RETURN_IF_ERROR(GetBackend(type).status());
  return CurrentIndexRef(type);
}

absl::Status SetDeviceIndex(DeviceType type, int index) {
  if (index < 0) return absl::OkStatus();
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, BackendFor(type, index));
  int8_t& current = CurrentIndexRef(type);
  if (current != index) {
    ANYDEV_RETURN_IF_ERROR(backend->SetDevice(index));
    current = static_cast<int8_t>(index);
  }
  return absl::OkStatus();
}

absl::StatusOr<Stream> CurrentStream(Device device) {
  ANYDEV_ASSIGN_OR_RETURN(Device d, ResolveDevice(device));
  return Stream(d, CurrentStreamId(d.type(), d.index()));
}

absl::Status SetCurrentStream(const Stream& stream) {
  if (!stream.device().has_index()) {
    return absl::InvalidArgumentError(
        absl::StrCat("stream ", stream.ToString(), " has no device index"));
  }
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend,
                          BackendFor(stream.device_type(), stream.device_index()));
  if (stream.id() != 0) {
    ANYDEV_RETURN_IF_ERROR(backend->ValidateStream(stream.device_index(), stream.id()));
  }
  if (tls_devices.streams == nullptr) {
    if (stream.id() == 0) return absl::OkStatus();  // already the default
    tls_streams_owner.armed = true;  // the first use registers its destructor
    tls_devices.streams = new StreamTable();
  }
  tls_devices.streams->id[DenseIndex(stream.device_type())][stream.device_index()] = stream.id();
  return absl::OkStatus();
}

namespace {

// A rule-2 call's device: `device`, else the default type's current device;
// checked and resolved to an index, with its backend.
struct Target {
  Device device;
  Backend* backend;
};

absl::StatusOr<Target> TargetOf(std::optional<Device> device) {
  Device d = Device(DeviceType::kCPU);
  if (device) {
    d = *device;
  } else {
    ANYDEV_ASSIGN_OR_RETURN(DeviceType t, DefaultDeviceType());
    d = Device(t);
  }
  ANYDEV_ASSIGN_OR_RETURN(d, ResolveDevice(d));
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(d.type()));
  return Target{d, backend};
}

}  // namespace

absl::Status Synchronize(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(Target t, TargetOf(device));
  return t.backend->SynchronizeDevice(t.device.index());
}

absl::StatusOr<DeviceProperties> GetDeviceProperties(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(Target t, TargetOf(device));
  return t.backend->GetDeviceProperties(t.device.index());
}

absl::StatusOr<std::pair<size_t, size_t>> GetMemoryInfo(std::optional<Device> device) {
  ANYDEV_ASSIGN_OR_RETURN(Target t, TargetOf(device));
  return t.backend->MemoryInfo(t.device.index());
}

namespace acc {

absl::StatusOr<DeviceType> GetAccelerator() {
  const AcceleratorChoice& c = Choice();
  if (ABSL_PREDICT_FALSE(!c.status.ok())) return c.status;
  if (ABSL_PREDICT_FALSE(!c.type)) return NoAccelerator();
  return *c.type;
}

absl::StatusOr<std::optional<DeviceType>> CurrentAccelerator() {
  const AcceleratorChoice& c = Choice();
  if (!c.status.ok()) return c.status;
  return c.type;
}

std::optional<DeviceType> ConfiguredAccelerator() {
  const AcceleratorChoice& c = Choice();
  if (c.status.ok()) return c.type;
  return c.configured;
}

int DeviceCount() {
  const AcceleratorChoice& c = Choice();
  if (!c.status.ok() || !c.type) return 0;
  return DeviceCountOf(*c.type);
}

bool IsAvailable() { return DeviceCount() > 0; }

namespace {
ABSL_ATTRIBUTE_NOINLINE absl::StatusOr<int> CurrentDeviceIndexSlow() {
  const AcceleratorChoice& c = Choice();
  if (!c.status.ok()) return c.status;
  if (!c.type) return NoAccelerator();
  return CurrentIndexRef(*c.type);
}
}  // namespace

absl::StatusOr<int> CurrentDeviceIndex() {
  // The hot path: one acquire load and one thread-local load.
  const AcceleratorChoice* c = g_choice.load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(c != nullptr && c->dense >= 0)) return tls_devices.index[c->dense];
  return CurrentDeviceIndexSlow();
}

// Note [Same-index fast path]: the accelerator has at least one device and
// the current index is always one that was valid, so setting the index that
// is already current needs no check and no vendor call. Device guards in hot
// loops mostly hit this.
absl::Status SetDeviceIndex(int index) {
  // The hot path, for a resolved accelerator and an index in range: the
  // device-count check and the backend come from the resolved choice.
  const AcceleratorChoice* c = g_choice.load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(c != nullptr && c->dense >= 0)) {
    int8_t& current = tls_devices.index[c->dense];
    if (current == index) return absl::OkStatus();
    if (ABSL_PREDICT_TRUE(index >= 0 && index < c->count)) {
      ANYDEV_RETURN_IF_ERROR(c->backend->SetDevice(index));
      current = static_cast<int8_t>(index);
      return absl::OkStatus();
    }
  }
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, GetAccelerator());
  if (CurrentIndexRef(type) == index) return absl::OkStatus();
  return anydev::SetDeviceIndex(type, index);
}

absl::StatusOr<int> ExchangeDeviceIndex(int index) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, GetAccelerator());
  const int previous = CurrentIndexRef(type);
  if (previous != index) ANYDEV_RETURN_IF_ERROR(anydev::SetDeviceIndex(type, index));
  return previous;
}

absl::StatusOr<int> MaybeExchangeDeviceIndex(int index) {
  return ExchangeDeviceIndex(index);
}

absl::StatusOr<Stream> CurrentStream(int index) {
  const AcceleratorChoice& c = Choice();
  if (ABSL_PREDICT_FALSE(c.dense < 0)) return GetAccelerator().status();
  if (index < 0) index = tls_devices.index[c.dense];
  if (ABSL_PREDICT_FALSE(index >= c.count)) return OutOfRange(*c.type, index, c.count);
  return Stream(Device(*c.type, index), CurrentStreamId(*c.type, index));
}

absl::Status SetCurrentStream(const Stream& stream) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, GetAccelerator());
  if (stream.device_type() != type) {
    return absl::InvalidArgumentError(
        absl::StrCat(DeviceTypeName(stream.device_type()),
                     " stream does not match the current ", DeviceTypeName(type),
                     " accelerator."));
  }
  ANYDEV_RETURN_IF_ERROR(anydev::SetCurrentStream(stream));
  return anydev::SetDeviceIndex(type, stream.device_index());
}

absl::Status Synchronize(int index) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, GetAccelerator());
  // Range-checked before a Device is built: its int8 index would wrap 128 and
  // up to a negative "no index" and synchronise the current device instead.
  ANYDEV_RETURN_IF_ERROR(BackendFor(type, index).status());
  return anydev::Synchronize(Device(type, index < 0 ? -1 : index));
}

absl::StatusOr<DeviceIndexGuard> DeviceIndexGuard::Make(int index) {
  if (index < 0) return DeviceIndexGuard(-1);
  ANYDEV_ASSIGN_OR_RETURN(int previous, ExchangeDeviceIndex(index));
  return DeviceIndexGuard(previous);
}

DeviceIndexGuard::DeviceIndexGuard(DeviceIndexGuard&& other) noexcept
    : original_(other.original_) {
  other.original_ = -1;
}

DeviceIndexGuard::~DeviceIndexGuard() {
  // The index was valid when saved and device counts never change, so the
  // restore cannot fail for a range reason; a vendor error here has nowhere
  // to go (a destructor), as in c10's InlineDeviceGuard.
  if (original_ >= 0) SetDeviceIndex(original_).IgnoreError();
}

absl::StatusOr<StreamGuard> StreamGuard::Make(const Stream& stream) {
  ANYDEV_ASSIGN_OR_RETURN(DeviceType type, GetAccelerator());
  if (stream.device_type() != type) {
    return absl::InvalidArgumentError(
        absl::StrCat(DeviceTypeName(stream.device_type()),
                     " stream does not match the current ", DeviceTypeName(type),
                     " accelerator."));
  }
  const int original_device = CurrentIndexRef(type);
  ANYDEV_ASSIGN_OR_RETURN(Stream prev, anydev::CurrentStream(stream.device()));
  ANYDEV_RETURN_IF_ERROR(acc::SetCurrentStream(stream));
  return StreamGuard(original_device, prev);
}

StreamGuard::StreamGuard(StreamGuard&& other) noexcept
    : original_device_(other.original_device_), prev_stream_(other.prev_stream_) {
  other.original_device_ = -1;
}

StreamGuard::~StreamGuard() {
  if (original_device_ < 0) return;
  anydev::SetCurrentStream(prev_stream_).IgnoreError();
  anydev::SetDeviceIndex(prev_stream_.device_type(), original_device_).IgnoreError();
}

}  // namespace acc
}  // namespace anydev
