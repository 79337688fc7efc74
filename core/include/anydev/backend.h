// anydev/backend.h: the interface every device backend implements, and the
// registry that holds one backend per device type.
//
// The model is c10's DeviceGuardImplInterface and TVM's DeviceAPI: a backend
// knows how many devices it has (or why it has none), their properties, and
// how to create streams and events, allocate raw memory, copy, fill and
// synchronise. The generic layer (anydev::acc, anydev::Stream, anydev::Event)
// validates device indices, keeps the per-thread current device and stream,
// and calls into the backend, so a backend method may assume that
// `device` is in [0, device_count) and that a `StreamId` it receives was
// produced by this backend for that device (ValidateStream checks user input).
//
// Contracts common to every method:
//   * A backend whose Probe() failed is never called for anything else.
//   * An operation the backend lacks answers Unimplemented("<name> does not
//     support X"), never a silent no-op.
//   * Errors use the canonical codes: ResourceExhausted for out of memory,
//     Unavailable for a driver that cannot start, InvalidArgument for bad
//     input, Internal for a vendor call that failed unexpectedly.
//
// Registration is one line at the bottom of the backend's .cc:
//   ANYDEV_REGISTER_BACKEND(DeviceType::kSim, [] { return MakeSimBackend(); });
#ifndef ANYDEV_BACKEND_H_
#define ANYDEV_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "anydev/device.h"

namespace anydev {

// A stream's identity within one device of one backend. 0 is always the
// device's default stream; other values are backend-defined.
using StreamId = int64_t;

// What a backend knows about one device. Fields a backend cannot answer stay
// at their defaults (0 or empty).
struct DeviceProperties {
  std::string name;                  // "NVIDIA H200", "anydev simulated device"
  uint64_t total_memory = 0;         // bytes
  int multi_processor_count = 0;     // SMs / compute units / cores
  int major = 0;                     // compute capability (CUDA), gfx major (HIP)
  int minor = 0;
  std::string arch;                  // "sm_90", "gfx90a", "x86_64"
  std::string uuid;
  std::string driver_version;
  int pci_bus_id = -1;
  // Anything else the backend knows, as (key, value) text pairs, in a stable
  // order (vendor-specific properties: clock rates, warp size, ...).
  std::vector<std::pair<std::string, std::string>> extra;
};

// The direction of a copy. Device pointers come from Backend::Allocate.
enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

// How strictly a stream capture forbids calls that could interfere with it
// (cudaStreamCaptureMode): kGlobal is CUDA's and PyTorch's default.
enum class CaptureMode { kGlobal, kThreadLocal, kRelaxed };

// Priorities: lower numbers are higher priorities, as in CUDA. A backend
// clamps a requested priority into [greatest, least].
struct PriorityRange {
  int least = 0;     // the default, lowest priority
  int greatest = 0;  // the highest priority (<= least)
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Returns the device type this backend serves.
  virtual DeviceType type() const = 0;

  // Returns the number of devices (>= 1), or the reason there are none:
  // Unavailable for a missing library, driver or device (the message names
  // the vendor's error), InvalidArgument for a malformed configuration
  // variable, FailedPrecondition for a configuration that disables it.
  // Called once, from the registry, which caches the answer.
  virtual absl::StatusOr<int> Probe() = 0;

  // Returns the properties of `device`.
  virtual absl::StatusOr<DeviceProperties> GetDeviceProperties(int device) = 0;

  // Makes `device` current for the calling thread in the vendor runtime
  // (cudaSetDevice). The generic layer keeps its own per-thread index and
  // calls this only when it changes. Backends without such a notion return Ok.
  virtual absl::Status SetDevice(int device) = 0;

  // --- streams -----------------------------------------------------------

  virtual PriorityRange GetPriorityRange() const = 0;

  // Returns a stream of `device` with `priority` (clamped), as
  // torch.Stream(device, priority=p) does: from a pool, round robin.
  virtual absl::StatusOr<StreamId> NewStream(int device, int priority) = 0;

  // Checks that `id` names a stream of `device` (user input: Stream(stream_id=...)).
  virtual absl::Status ValidateStream(int device, StreamId id) = 0;

  // Returns the priority `id` was created with.
  virtual absl::StatusOr<int> StreamPriority(int device, StreamId id) = 0;

  // True when all work queued on the stream so far has finished.
  virtual absl::StatusOr<bool> QueryStream(int device, StreamId id) = 0;

  // Blocks until all work queued on the stream so far has finished.
  virtual absl::Status SynchronizeStream(int device, StreamId id) = 0;

  // Blocks until all work queued on every stream of `device` has finished.
  virtual absl::Status SynchronizeDevice(int device) = 0;

  // --- events --------------------------------------------------------------
  // Events are opaque handles owned by the caller (anydev::Event), created on
  // first record as in c10.

  virtual absl::StatusOr<void*> CreateEvent(int device, bool enable_timing) = 0;
  // Never fails; tolerates teardown (see the backend's note).
  virtual void DestroyEvent(int device, void* event) noexcept = 0;
  // Marks the point the stream has reached; the event completes when the
  // stream gets there. Re-recording moves the event to the new point.
  virtual absl::Status RecordEvent(void* event, int device, StreamId stream) = 0;
  // Makes all future work on `stream` wait for the event's last record.
  virtual absl::Status StreamWaitEvent(int device, StreamId stream, void* event) = 0;
  virtual absl::StatusOr<bool> QueryEvent(void* event) = 0;
  virtual absl::Status SynchronizeEvent(void* event) = 0;
  // Milliseconds between two completed, timed events.
  virtual absl::StatusOr<double> ElapsedTime(void* start, void* end) = 0;

  // --- memory --------------------------------------------------------------

  // Allocates `nbytes` (> 0) of device memory; ResourceExhausted when the
  // device has no room.
  virtual absl::StatusOr<void*> Allocate(int device, size_t nbytes) = 0;
  // Frees memory from Allocate; InvalidArgument for a pointer it does not own.
  virtual absl::Status Free(int device, void* ptr) = 0;
  // (free, total) bytes of the device.
  virtual absl::StatusOr<std::pair<size_t, size_t>> MemoryInfo(int device) = 0;

  // Queues a copy of `nbytes` on the stream. Host memory must stay valid
  // until the stream reaches the copy.
  virtual absl::Status CopyAsync(void* dst, const void* src, size_t nbytes,
                                 CopyKind kind, int device, StreamId stream) = 0;
  // Queues setting `nbytes` bytes at `dst` to `value`.
  virtual absl::Status FillAsync(void* dst, uint8_t value, size_t nbytes,
                                 int device, StreamId stream) = 0;

  // Queues work that keeps the stream busy for `duration` (a test kernel, as
  // torch.cuda._sleep). Optional: Unimplemented where the backend cannot.
  virtual absl::Status SleepAsync(absl::Duration duration, int device,
                                  StreamId stream) = 0;

  // --- host memory -----------------------------------------------------------

  // Allocates `nbytes` (> 0) of host memory the device copies from and to
  // fastest: page-locked (cudaMallocHost, hipHostMalloc) where the runtime
  // has it. The default, for backends without page-locking (cpu, sim), is
  // ordinary host memory, 256-byte aligned. Used by the host caching
  // allocator (anydev::HostAlloc), which owns what it returns.
  virtual absl::StatusOr<void*> AllocateHost(size_t nbytes);
  // Frees memory from AllocateHost.
  virtual absl::Status FreeHost(void* ptr);

  // --- graphs (stream capture) ---------------------------------------------
  // Optional: the defaults answer Unimplemented("<name> does not support
  // graph capture"), and a stream of such a backend is never capturing.
  // While a stream captures, the work queued on it is recorded into a graph
  // instead of run; EndCapture returns that graph (an opaque handle), which
  // InstantiateGraph turns into an executable one that LaunchGraph queues on
  // a stream as one unit. The generic layer (anydev::Graph) owns the handles.

  // Starts capturing the work queued on `stream` (not the default stream;
  // the generic layer checks). FailedPrecondition if it is capturing.
  virtual absl::Status BeginCapture(int device, StreamId stream, CaptureMode mode);
  // Ends the capture of `stream` and returns the graph it recorded.
  virtual absl::StatusOr<void*> EndCapture(int device, StreamId stream);
  // True while `stream` is capturing.
  virtual absl::StatusOr<bool> IsCapturing(int device, StreamId stream);
  // Returns an executable graph made from `graph` (which stays valid).
  virtual absl::StatusOr<void*> InstantiateGraph(int device, void* graph);
  // Queues the executable graph `exec` on `stream`.
  virtual absl::Status LaunchGraph(int device, void* exec, StreamId stream);
  // Frees a graph from EndCapture / an executable one from InstantiateGraph
  // (either may be null). Never fails.
  virtual void DestroyGraph(int device, void* graph, void* exec) noexcept;
  // Writes a description of `graph` to `path` (Graphviz DOT where the vendor
  // writes one, as cudaGraphDebugDotPrint).
  virtual absl::Status DumpGraph(int device, void* graph, const std::string& path);

  // Returns the vendor's handle of `stream` (a cudaStream_t, hipStream_t,
  // ze_command_queue_handle_t) as an integer, as torch.Stream.native_handle.
  virtual absl::StatusOr<uintptr_t> NativeStreamHandle(int device, StreamId stream);

  // --- fork ------------------------------------------------------------------
  // Whether a process forked from this one can go on using the backend in
  // its current state. Called in the child, right after fork(), for a backend
  // that was probed available; when false, the registry makes the backend
  // unusable there: every call that needs it fails with PyTorch's
  // "Cannot re-initialize CUDA in forked subprocess" (Note [Fork] in
  // registry.cc). The default, for vendor runtimes whose driver state and
  // threads a child does not inherit, is false.
  virtual bool UsableAfterFork() const { return false; }
};

// What the registry knows about one device type.
struct BackendInfo {
  DeviceType type;
  bool built = false;       // compiled into this build
  bool available = false;   // probed with at least one device
  int device_count = 0;
  std::string reason;       // why it is not available ("" when it is)
  absl::StatusCode code = absl::StatusCode::kOk;  // the probe's status code
};

namespace internal {
using BackendFactory = std::function<std::unique_ptr<Backend>()>;
// Records the factory for `type`; returns true (for static registration).
bool RegisterBackend(DeviceType type, BackendFactory factory);
// The backend of `type` if it was available in the parent of this forked
// process and cannot be used here (Note [Fork] in registry.cc), else nullptr.
Backend* BackendLostToFork(DeviceType type);
}  // namespace internal

// Returns the backend of `type` if it is built and probed available, else the
// reason: FailedPrecondition "backend 'hip' is not enabled in this build", or
// the probe's error. Probes lazily, once, thread-safely.
absl::StatusOr<Backend*> GetBackend(DeviceType type);

// Returns the number of devices of `type` (0 when unavailable). Never fails.
int DeviceCountOf(DeviceType type);

// Returns one record per device type, in accelerator-choice order, cpu last.
std::vector<BackendInfo> ListBackends();

}  // namespace anydev

#define ANYDEV_CONCAT_INNER_(a, b) a##b
#define ANYDEV_CONCAT_(a, b) ANYDEV_CONCAT_INNER_(a, b)
// Registers a backend factory for a device type; one line per backend .cc.
#define ANYDEV_REGISTER_BACKEND(type, factory)                        \
  static const bool ANYDEV_CONCAT_(anydev_backend_registered_, __LINE__) \
      [[maybe_unused]] = ::anydev::internal::RegisterBackend(type, factory)

#endif  // ANYDEV_BACKEND_H_
