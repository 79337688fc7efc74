// backends/gpu_common/gpu_backend.h: one backend for CUDA and ROCm HIP, written
// once over a small policy struct of vendor types, constants and calls
// (alpaka's ApiCudaRt/ApiHipRt): CudaApi in backends/cuda/cuda_api.h, HipApi
// in backends/hip/hip_api.h. Each vendor's .cc instantiates GpuBackend<Api>
// and registers it with one line.
//
// What a policy provides (see CudaApi for the reference):
//   Table            the struct of function pointers filled from the library,
//                    with the shared field names GetDeviceCount, SetDevice, ...
//   Error, Stream, Event, MemcpyKind and the constants kSuccess, kNotReady,
//   kUnloading, kStreamNonBlocking, kEventDefault, kEventDisableTiming,
//   kHostToDevice, kDeviceToHost, kDeviceToDevice
//   kDeviceType, kLibrary
//   Load, CodeOf, ProbeHint, NoDeviceHint, FillProperties,
//   EnqueueHostFunction, IsDeviceMemory
//
// Streams. Stream id 0 is the device's legacy default stream (the null
// stream, cudaStreamLegacy semantics), as in PyTorch: it is the stream legacy
// code and libraries that know nothing of anydev use, so work anydev queues
// on "the default stream" is ordered with theirs. Other ids come from pools
// created lazily, one stream at a time, 32 per priority level, handed out
// round robin as PyTorch's CUDA stream pools are: id = 1 + level * 32 + k.
// Pool streams are created with the non-blocking flag (as PyTorch's), so they
// do not synchronise implicitly with the legacy default stream.
//
// Priorities. The runtime's range (cudaDeviceGetStreamPriorityRange, e.g.
// [0, -5]) is narrowed to at most three levels from the least priority: the
// range anydev reports is [least, least - 2], and a stream of level k has the
// vendor priority least - k.
//
// The current device. The generic layer keeps anydev's per-thread index and
// calls SetDevice when it changes, which makes the runtime's per-thread current
// device follow it. Calls that act on "the current device" in the runtime
// (allocation, stream and event creation, device synchronisation, and any use
// of the legacy default stream, which is per current device) switch to the
// device they are given for their duration and switch back (ScopedDevice), so
// they are right even when other code changed the runtime's current device.
//
// Graphs. Stream capture on a pool stream (cudaStreamBeginCapture ...
// EndCapture), made executable with cudaGraphInstantiateWithFlags and queued
// with cudaGraphLaunch; the HIP twins on ROCm. The graph entry points are
// optional symbols: a runtime without them answers Unimplemented.
//
// Memory. Every block Allocate hands out is recorded (DeviceBlocks), so a copy
// or fill that runs past the end of a block is OutOfRange and a double free is
// InvalidArgument, at the call. A device pointer in no block of anydev's
// (another library's allocation) is accepted when the runtime knows it as
// device memory, without a range check.
#ifndef ANYDEV_BACKENDS_GPU_COMMON_GPU_BACKEND_H_
#define ANYDEV_BACKENDS_GPU_COMMON_GPU_BACKEND_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "backends/common/device_blocks.h"
#include "backends/common/stream_ids.h"
#include "backends/common/vendor_library.h"
#include "backends/gpu_common/gpu_check.h"
#include "internal/errors.h"

namespace anydev::gpu {

inline constexpr int kMaxPriorityLevels = 3;
using stream_ids::kPoolSize;
inline constexpr int kStreamsPerDevice = 1 + kMaxPriorityLevels * kPoolSize;

// The host function SleepAsync queues: sleeps for the duration it owns.
inline void SleepHostFunction(void* arg) {
  auto* duration = static_cast<absl::Duration*>(arg);
  absl::SleepFor(*duration);
  delete duration;
}

template <typename Api>
class GpuBackend final : public Backend {
 public:
  using Table = typename Api::Table;
  using Error = typename Api::Error;
  using VendorStream = typename Api::Stream;
  using VendorEvent = typename Api::Event;
  using VendorGraph = typename Api::Graph;
  using VendorGraphExec = typename Api::GraphExec;

  DeviceType type() const override { return Api::kDeviceType; }

  // The loaded table, for in-tree benchmarks that time raw runtime calls
  // through the same pointers; null before a successful probe.
  const Table* table() const { return rt_.get(); }

  absl::StatusOr<int> Probe() override {
    const std::string name(DeviceTypeName(Api::kDeviceType));
    ANYDEV_ASSIGN_OR_RETURN(internal::VendorLibrary lib,
                            internal::VendorLibrary::Open(Api::kLibrary));
    auto rt = std::make_unique<Table>();
    ANYDEV_RETURN_IF_ERROR(Api::Load(lib, rt.get()));
    int count = 0;
    const Error error = rt->GetDeviceCount(&count);
    if (error != Api::kSuccess) {
      (void)rt->GetLastError();  // not sticky; leave the runtime clean
      return absl::UnavailableError(absl::StrCat(name, ": ", ErrorText(*rt, error), " from ",
                                                 Table::GetDeviceCountSymbol,
                                                 Api::ProbeHint(*rt, lib, error)));
    }
    if (count <= 0) {
      return absl::UnavailableError(absl::StrCat(name, ": no devices (",
                                                 Table::GetDeviceCountSymbol, " found 0)",
                                                 Api::ProbeHint(*rt, lib, error)));
    }
    // More devices than anydev addresses: the first kMaxDevicesPerType are used.
    count = std::min(count, kMaxDevicesPerType);
    for (int i = 0; i < count; ++i) {
      devices_.push_back(std::make_unique<PerDevice>(absl::StrCat(name, ":", i)));
    }
    lib_ = std::make_unique<internal::VendorLibrary>(std::move(lib));
    rt_ = std::move(rt);
    return count;
  }

  absl::StatusOr<DeviceProperties> GetDeviceProperties(int device) override {
    DeviceProperties p;
    ANYDEV_RETURN_IF_ERROR(Api::FillProperties(*rt_, *lib_, device, &p));
    return p;
  }

  absl::Status SetDevice(int device) override {
    ANYDEV_GPU_CHECK(*rt_, SetDevice(device));
    return absl::OkStatus();
  }

  // --- streams -------------------------------------------------------------

  PriorityRange GetPriorityRange() const override {
    const Priorities& p = GetPriorities();
    return {p.least, p.least - (p.levels - 1)};
  }

  absl::StatusOr<StreamId> NewStream(int device, int priority) override {
    const Priorities& p = GetPriorities();
    const int level = stream_ids::LevelOf(priority, p.least, p.levels);
    const StreamId id = stream_ids::Next(level, devices_[device]->next_in_pool[level]);
    ANYDEV_RETURN_IF_ERROR(GetStream(device, id).status());
    return id;
  }

  absl::Status ValidateStream(int device, StreamId id) override {
    return stream_ids::Validate(id, GetPriorities().levels, devices_[device]->blocks.name());
  }

  absl::StatusOr<int> StreamPriority(int, StreamId id) override {
    return GetPriorities().least - stream_ids::LevelOfId(id);
  }

  absl::StatusOr<bool> QueryStream(int device, StreamId id) override {
    if (VendorStream s = PoolStream(device, id); ABSL_PREDICT_TRUE(s != nullptr)) {
      return Ready(rt_->StreamQuery(s), "StreamQuery(stream)");
    }
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, id));
    ScopedDevice guard;
    if (id == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    return Ready(rt_->StreamQuery(s), "StreamQuery(stream)");
  }

  absl::Status SynchronizeStream(int device, StreamId id) override {
    if (VendorStream s = PoolStream(device, id); ABSL_PREDICT_TRUE(s != nullptr)) {
      return ANYDEV_GPU_STATUS(*rt_, StreamSynchronize(s));
    }
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, id));
    ScopedDevice guard;
    if (id == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    ANYDEV_GPU_CHECK(*rt_, StreamSynchronize(s));
    return absl::OkStatus();
  }

  absl::Status SynchronizeDevice(int device) override {
    ScopedDevice guard;
    ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    ANYDEV_GPU_CHECK(*rt_, DeviceSynchronize());
    return absl::OkStatus();
  }

  // --- events --------------------------------------------------------------
  // The handle anydev::Event holds is the vendor's event itself.

  absl::StatusOr<void*> CreateEvent(int device, bool enable_timing) override {
    ScopedDevice guard;
    ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    VendorEvent e{};
    ANYDEV_GPU_CHECK(*rt_, EventCreateWithFlags(
                               &e, enable_timing ? Api::kEventDefault : Api::kEventDisableTiming));
    return static_cast<void*>(e);
  }

  // Note [Runtime unloading at exit]: an anydev::Event destroyed by a static
  // destructor or by Python's teardown can run after the runtime began to
  // unload (cudaErrorCudartUnloading, hipErrorDeinitialized); the event went
  // with the runtime, so that answer is fine, and so is any other, since a
  // destructor has nowhere to report it (as c10's CUDA event destructor).
  void DestroyEvent(int, void* event) noexcept override {
    const Error error = rt_->EventDestroy(AsEvent(event));
    if (error != Api::kSuccess && error != Api::kUnloading) (void)rt_->GetLastError();
  }

  absl::Status RecordEvent(void* event, int device, StreamId stream) override {
    if (VendorStream s = PoolStream(device, stream); ABSL_PREDICT_TRUE(s != nullptr)) {
      return ANYDEV_GPU_STATUS(*rt_, EventRecord(AsEvent(event), s));
    }
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    ScopedDevice guard;
    if (stream == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    ANYDEV_GPU_CHECK(*rt_, EventRecord(AsEvent(event), s));
    return absl::OkStatus();
  }

  absl::Status StreamWaitEvent(int device, StreamId stream, void* event) override {
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    ScopedDevice guard;
    if (stream == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    ANYDEV_GPU_CHECK(*rt_, StreamWaitEvent(s, AsEvent(event), 0));
    return absl::OkStatus();
  }

  absl::StatusOr<bool> QueryEvent(void* event) override {
    return Ready(rt_->EventQuery(AsEvent(event)), "EventQuery(event)");
  }

  absl::Status SynchronizeEvent(void* event) override {
    ANYDEV_GPU_CHECK(*rt_, EventSynchronize(AsEvent(event)));
    return absl::OkStatus();
  }

  absl::StatusOr<double> ElapsedTime(void* start, void* end) override {
    float ms = 0;
    const Error error = rt_->EventElapsedTime(&ms, AsEvent(start), AsEvent(end));
    if (error == Api::kNotReady) {
      (void)rt_->GetLastError();
      return absl::FailedPreconditionError(
          "Both events must be completed before calculating elapsed time.");
    }
    if (error != Api::kSuccess) return ANYDEV_GPU_FAILED(*rt_, error, EventElapsedTime(&ms, start, end));
    return static_cast<double>(ms);
  }

  // --- memory --------------------------------------------------------------

  absl::StatusOr<void*> Allocate(int device, size_t nbytes) override {
    if (nbytes == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(devices_[device]->blocks.name(), ": cannot allocate 0 bytes"));
    }
    ScopedDevice guard;
    ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    void* ptr = nullptr;
    const Error error = rt_->Malloc(&ptr, nbytes);
    if (error == Api::kOutOfMemory) {
      (void)rt_->GetLastError();  // out of memory is not sticky; clear it (as c10 does)
      size_t free_bytes = 0, total_bytes = 0;
      std::string state;
      if (rt_->MemGetInfo(&free_bytes, &total_bytes) == Api::kSuccess) {
        state = absl::StrCat("; ", free_bytes, " of ", total_bytes, " bytes free, ",
                             devices_[device]->blocks.bytes(), " allocated by anydev");
      } else {
        (void)rt_->GetLastError();
      }
      return absl::ResourceExhaustedError(absl::StrCat(
          devices_[device]->blocks.name(), " out of memory: tried to allocate ", nbytes,
          " bytes", state, " (", Table::MallocSymbol, ": ", ErrorText(*rt_, error), ")"));
    }
    if (error != Api::kSuccess) return ANYDEV_GPU_FAILED(*rt_, error, Malloc(&ptr, nbytes));
    devices_[device]->blocks.Add(ptr, nbytes);
    return ptr;
  }

  absl::Status Free(int device, void* ptr) override {
    ANYDEV_RETURN_IF_ERROR(devices_[device]->blocks.Remove(ptr).status());
    ScopedDevice guard;
    ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    ANYDEV_GPU_CHECK(*rt_, Free(ptr));
    return absl::OkStatus();
  }

  absl::StatusOr<std::pair<size_t, size_t>> MemoryInfo(int device) override {
    ScopedDevice guard;
    ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    size_t free_bytes = 0, total_bytes = 0;
    ANYDEV_GPU_CHECK(*rt_, MemGetInfo(&free_bytes, &total_bytes));
    return std::make_pair(free_bytes, total_bytes);
  }

  absl::Status CopyAsync(void* dst, const void* src, size_t nbytes, CopyKind kind, int device,
                         StreamId stream) override {
    if (kind != CopyKind::kHostToDevice) {
      ANYDEV_RETURN_IF_ERROR(CheckDeviceRange(device, src, nbytes, "copy source"));
    }
    if (kind != CopyKind::kDeviceToHost) {
      ANYDEV_RETURN_IF_ERROR(CheckDeviceRange(device, dst, nbytes, "copy destination"));
    }
    if (nbytes == 0) return absl::OkStatus();
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    ScopedDevice guard;
    if (stream == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    const typename Api::MemcpyKind vendor_kind =
        kind == CopyKind::kHostToDevice   ? Api::kHostToDevice
        : kind == CopyKind::kDeviceToHost ? Api::kDeviceToHost
                                          : Api::kDeviceToDevice;
    ANYDEV_GPU_CHECK(*rt_, MemcpyAsync(dst, src, nbytes, vendor_kind, s));
    return absl::OkStatus();
  }

  absl::Status FillAsync(void* dst, uint8_t value, size_t nbytes, int device,
                         StreamId stream) override {
    ANYDEV_RETURN_IF_ERROR(CheckDeviceRange(device, dst, nbytes, "fill destination"));
    if (nbytes == 0) return absl::OkStatus();
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    ScopedDevice guard;
    if (stream == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    ANYDEV_GPU_CHECK(*rt_, MemsetAsync(dst, value, nbytes, s));
    return absl::OkStatus();
  }

  // Note [Sleeping without a kernel]: anydev compiles no device code, so the
  // testing sleep is a host function queued on the stream (cudaLaunchHostFunc,
  // hipStreamAddCallback) that sleeps on the runtime's callback thread. The
  // stream does not pass it until it returns, so it orders and times like a
  // kernel of that duration; unlike a kernel it occupies the host callback
  // thread, which the runtime may share between streams of a device.
  absl::Status SleepAsync(absl::Duration duration, int device, StreamId stream) override {
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    ScopedDevice guard;
    if (stream == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    auto* arg = new absl::Duration(duration);
    absl::Status status = Api::EnqueueHostFunction(*rt_, s, &SleepHostFunction, arg);
    if (!status.ok()) delete arg;
    return status;
  }

  // --- host memory -----------------------------------------------------------

  absl::StatusOr<void*> AllocateHost(size_t nbytes) override {
    if (!Api::HasPinnedHost(*rt_)) return Backend::AllocateHost(nbytes);
    void* ptr = nullptr;
    const Error error = Api::MallocHost(*rt_, &ptr, nbytes);
    if (error == Api::kOutOfMemory) {
      (void)rt_->GetLastError();
      return absl::ResourceExhaustedError(absl::StrCat(
          DeviceTypeName(Api::kDeviceType), ": out of page-locked host memory: tried to allocate ",
          nbytes, " bytes (", ErrorText(*rt_, error), ")"));
    }
    if (error != Api::kSuccess) return ANYDEV_GPU_FAILED(*rt_, error, MallocHost(&ptr, nbytes));
    return ptr;
  }

  absl::Status FreeHost(void* ptr) override {
    if (!Api::HasPinnedHost(*rt_)) return Backend::FreeHost(ptr);
    ANYDEV_GPU_CHECK(*rt_, FreeHost(ptr));
    return absl::OkStatus();
  }

  // --- graphs --------------------------------------------------------------

  absl::Status BeginCapture(int device, StreamId stream, CaptureMode mode) override {
    ANYDEV_RETURN_IF_ERROR(HasGraphs());
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    const typename Api::VendorCaptureMode m = mode == CaptureMode::kRelaxed ? Api::kCaptureRelaxed
                                              : mode == CaptureMode::kThreadLocal
                                                  ? Api::kCaptureThreadLocal
                                                  : Api::kCaptureGlobal;
    ANYDEV_GPU_CHECK(*rt_, StreamBeginCapture(s, m));
    return absl::OkStatus();
  }

  absl::StatusOr<void*> EndCapture(int device, StreamId stream) override {
    ANYDEV_RETURN_IF_ERROR(HasGraphs());
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    VendorGraph g{};
    ANYDEV_GPU_CHECK(*rt_, StreamEndCapture(s, &g));
    return static_cast<void*>(g);
  }

  absl::StatusOr<bool> IsCapturing(int device, StreamId stream) override {
    if (rt_->StreamIsCapturing == nullptr) return false;  // no graphs: never capturing
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    ScopedDevice guard;
    if (stream == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    typename Api::CaptureStatus status = Api::kCaptureNone;
    ANYDEV_GPU_CHECK(*rt_, StreamIsCapturing(s, &status));
    return status != Api::kCaptureNone;
  }

  absl::StatusOr<void*> InstantiateGraph(int device, void* graph) override {
    ANYDEV_RETURN_IF_ERROR(HasGraphs());
    ScopedDevice guard;
    ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    VendorGraphExec exec{};
    ANYDEV_GPU_CHECK(*rt_, GraphInstantiateWithFlags(&exec, static_cast<VendorGraph>(graph), 0));
    return static_cast<void*>(exec);
  }

  absl::Status LaunchGraph(int device, void* exec, StreamId stream) override {
    ANYDEV_RETURN_IF_ERROR(HasGraphs());
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    ScopedDevice guard;
    if (stream == 0) ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    ANYDEV_GPU_CHECK(*rt_, GraphLaunch(static_cast<VendorGraphExec>(exec), s));
    return absl::OkStatus();
  }

  // See Note [Runtime unloading at exit]: a destructor has nowhere to report.
  void DestroyGraph(int, void* graph, void* exec) noexcept override {
    if (rt_->GraphDestroy == nullptr) return;
    if (exec != nullptr && rt_->GraphExecDestroy(static_cast<VendorGraphExec>(exec)) !=
                               Api::kSuccess) {
      (void)rt_->GetLastError();
    }
    if (graph != nullptr && rt_->GraphDestroy(static_cast<VendorGraph>(graph)) != Api::kSuccess) {
      (void)rt_->GetLastError();
    }
  }

  absl::Status DumpGraph(int, void* graph, const std::string& path) override {
    return Api::DumpGraph(*rt_, static_cast<VendorGraph>(graph), path);
  }

  absl::StatusOr<uintptr_t> NativeStreamHandle(int device, StreamId stream) override {
    ANYDEV_ASSIGN_OR_RETURN(VendorStream s, GetStream(device, stream));
    return reinterpret_cast<uintptr_t>(s);  // 0: the legacy default stream
  }

 private:
  absl::Status HasGraphs() const {
    if (rt_->StreamBeginCapture == nullptr || rt_->StreamEndCapture == nullptr ||
        rt_->StreamIsCapturing == nullptr || rt_->GraphInstantiateWithFlags == nullptr ||
        rt_->GraphLaunch == nullptr || rt_->GraphDestroy == nullptr ||
        rt_->GraphExecDestroy == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          DeviceTypeName(Api::kDeviceType),
          " does not support graph capture: the loaded runtime lacks the stream-capture calls"));
    }
    return absl::OkStatus();
  }

  struct PerDevice {
    explicit PerDevice(std::string name) : blocks(std::move(name)) {}
    // Pool streams by id, created on first use; [0] (the default) stays null.
    std::array<std::atomic<VendorStream>, kStreamsPerDevice> streams{};
    std::array<std::atomic<uint32_t>, kMaxPriorityLevels> next_in_pool{};
    absl::Mutex create_mu;  // serialises stream creation
    internal::DeviceBlocks blocks;
  };

  struct Priorities {
    int least = 0;
    int levels = 1;
  };

  // Switches the runtime's current device for a scope, when it differs, and
  // switches back at the end.
  class ScopedDevice {
   public:
    ScopedDevice() = default;
    ScopedDevice(const ScopedDevice&) = delete;
    ScopedDevice& operator=(const ScopedDevice&) = delete;
    ~ScopedDevice() {
      if (rt_ != nullptr && rt_->SetDevice(previous_) != Api::kSuccess) {
        (void)rt_->GetLastError();  // a destructor has nowhere to report it
      }
    }
    absl::Status Enter(const Table& rt, int device) {
      int current = -1;
      ANYDEV_GPU_CHECK(rt, GetDevice(&current));
      if (current == device) return absl::OkStatus();
      ANYDEV_GPU_CHECK(rt, SetDevice(device));
      previous_ = current;
      rt_ = &rt;
      return absl::OkStatus();
    }

   private:
    const Table* rt_ = nullptr;
    int previous_ = -1;
  };

  static VendorEvent AsEvent(void* event) { return static_cast<VendorEvent>(event); }

  // Maps a query's answer: success is true, not-ready is false (and cleared,
  // as c10 does: the runtime records it as the last error).
  absl::StatusOr<bool> Ready(Error error, const char* call) const {
    if (ABSL_PREDICT_TRUE(error == Api::kSuccess)) return true;
    if (error == Api::kNotReady) {
      (void)rt_->GetLastError();
      return false;
    }
    return CallFailed(*rt_, error, call, __FILE__, __LINE__);
  }

  // The runtime's priority range, asked once (it needs a context, so not at
  // probe time); [0, 0] when the runtime cannot say.
  const Priorities& GetPriorities() const {
    absl::call_once(priorities_once_, [this] {
      int least = 0, greatest = 0;
      if (rt_->DeviceGetStreamPriorityRange(&least, &greatest) == Api::kSuccess &&
          greatest <= least) {
        priorities_.least = least;
        priorities_.levels = std::min(kMaxPriorityLevels, least - greatest + 1);
      } else {
        (void)rt_->GetLastError();
      }
    });
    return priorities_;
  }

  // The hot paths' lookup: the pool stream of `id` when it exists, else null
  // (the default stream, which needs its device current, or a stream not
  // created yet: both take the general path).
  VendorStream PoolStream(int device, StreamId id) const {
    return devices_[static_cast<size_t>(device)]->streams[static_cast<size_t>(id)].load(
        std::memory_order_acquire);
  }

  // Returns the vendor stream of `id` (validated by the caller), creating a
  // pool stream on first use.
  absl::StatusOr<VendorStream> GetStream(int device, StreamId id) {
    if (id == 0) return VendorStream{};  // the legacy default stream
    std::atomic<VendorStream>& slot = devices_[device]->streams[static_cast<size_t>(id)];
    VendorStream s = slot.load(std::memory_order_acquire);
    if (ABSL_PREDICT_TRUE(s != nullptr)) return s;
    return CreateStream(device, id);
  }

  ABSL_ATTRIBUTE_NOINLINE absl::StatusOr<VendorStream> CreateStream(int device, StreamId id) {
    PerDevice& d = *devices_[device];
    absl::MutexLock lock(&d.create_mu);
    std::atomic<VendorStream>& slot = d.streams[static_cast<size_t>(id)];
    VendorStream s = slot.load(std::memory_order_acquire);
    if (s != nullptr) return s;
    const int priority = GetPriorities().least - stream_ids::LevelOfId(id);
    ScopedDevice guard;
    ANYDEV_RETURN_IF_ERROR(guard.Enter(*rt_, device));
    ANYDEV_GPU_CHECK(*rt_, StreamCreateWithPriority(&s, Api::kStreamNonBlocking, priority));
    slot.store(s, std::memory_order_release);
    return s;
  }

  // Checks a device-side pointer of a copy or fill: inside a block anydev
  // handed out (on any device: peer copies) and not past its end; a pointer in
  // none of them must be device memory the runtime knows.
  absl::Status CheckDeviceRange(int device, const void* ptr, size_t nbytes, const char* what) {
    absl::Status s = internal::CheckRangeOnAnyDevice(
        devices_[device]->blocks, devices_,
        [](const auto& d) -> const internal::DeviceBlocks& { return d->blocks; }, ptr, nbytes,
        what);
    if (s.code() != absl::StatusCode::kNotFound) return s;
    if (Api::IsDeviceMemory(*rt_, ptr)) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(devices_[device]->blocks.name(), ": ", what,
                                                   " ", absl::StrFormat("%p", ptr),
                                                   " is not device memory"));
  }

  std::unique_ptr<const internal::VendorLibrary> lib_;
  std::unique_ptr<const Table> rt_;
  std::vector<std::unique_ptr<PerDevice>> devices_;
  mutable absl::once_flag priorities_once_;
  mutable Priorities priorities_;
};

}  // namespace anydev::gpu

#endif  // ANYDEV_BACKENDS_GPU_COMMON_GPU_BACKEND_H_
