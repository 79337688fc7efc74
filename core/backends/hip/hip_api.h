// backends/hip/hip_api.h: the ROCm HIP runtime as the shared GPU backend sees
// it (backends/gpu_common/gpu_backend.h): one symbol list for libamdhip64, the
// struct of pointers it fills, and the HipApi policy of types, constants and
// the few calls that differ from CUDA's.
//
// Only the vendor header's declarations are used (built with
// __HIP_PLATFORM_AMD__ against Debian's libamdhip64-dev or /opt/rocm):
// libamdhip64 is opened with dlopen when the backend is probed, never linked.
#ifndef ANYDEV_BACKENDS_HIP_HIP_API_H_
#define ANYDEV_BACKENDS_HIP_HIP_API_H_

#include <hip/hip_runtime_api.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "backends/common/vendor_libraries.h"
#include "backends/common/vendor_library.h"

// Every libamdhip64 entry point anydev needs: _(field in HipRt, symbol). The
// field names match CudaRt's where the call is the same.
#define ANYDEV_HIP_SYMBOLS(_)                                        \
  _(GetErrorName, hipGetErrorName)                                   \
  _(GetErrorString, hipGetErrorString)                               \
  _(GetLastError, hipGetLastError)                                   \
  _(DriverGetVersion, hipDriverGetVersion)                           \
  _(RuntimeGetVersion, hipRuntimeGetVersion)                         \
  _(GetDeviceCount, hipGetDeviceCount)                               \
  _(GetDevice, hipGetDevice)                                         \
  _(SetDevice, hipSetDevice)                                         \
  _(DeviceGetName, hipDeviceGetName)                                 \
  _(DeviceTotalMem, hipDeviceTotalMem)                               \
  _(DeviceGetAttribute, hipDeviceGetAttribute)                       \
  _(DeviceGetPCIBusId, hipDeviceGetPCIBusId)                         \
  _(DeviceGetStreamPriorityRange, hipDeviceGetStreamPriorityRange)   \
  _(DeviceSynchronize, hipDeviceSynchronize)                         \
  _(StreamCreateWithPriority, hipStreamCreateWithPriority)           \
  _(StreamQuery, hipStreamQuery)                                     \
  _(StreamSynchronize, hipStreamSynchronize)                         \
  _(StreamWaitEvent, hipStreamWaitEvent)                             \
  _(StreamAddCallback, hipStreamAddCallback)                         \
  _(EventCreateWithFlags, hipEventCreateWithFlags)                   \
  _(EventDestroy, hipEventDestroy)                                   \
  _(EventRecord, hipEventRecord)                                     \
  _(EventQuery, hipEventQuery)                                       \
  _(EventSynchronize, hipEventSynchronize)                           \
  _(EventElapsedTime, hipEventElapsedTime)                           \
  _(Free, hipFree)                                                   \
  _(MemGetInfo, hipMemGetInfo)                                       \
  _(MemcpyAsync, hipMemcpyAsync)                                     \
  _(MemsetAsync, hipMemsetAsync)                                     \
  _(MemGetAddressRange, hipMemGetAddressRange)

// Entry points the header overloads with C++ templates, with the C entry
// point's type: _(field, symbol, type).
#define ANYDEV_HIP_TYPED_SYMBOLS(_) \
  _(Malloc, hipMalloc, ::anydev::hip::HipMallocFn)

// Entry points that older or newer runtimes may lack; null when absent.
#define ANYDEV_HIP_OPTIONAL_SYMBOLS(_)            \
  _(DeviceGetUuid, hipDeviceGetUuid)              \
  _(GetDeviceProperties, hipGetDeviceProperties)                  \
  _(StreamBeginCapture, hipStreamBeginCapture)                    \
  _(StreamEndCapture, hipStreamEndCapture)                        \
  _(StreamIsCapturing, hipStreamIsCapturing)                      \
  _(GraphInstantiateWithFlags, hipGraphInstantiateWithFlags)      \
  _(GraphLaunch, hipGraphLaunch)                                  \
  _(GraphDestroy, hipGraphDestroy)                                \
  _(GraphExecDestroy, hipGraphExecDestroy)                        \
  _(FreeHost, hipHostFree)

// Optional entry points the header overloads: _(field, symbol, type).
#define ANYDEV_HIP_OPTIONAL_TYPED_SYMBOLS(_) \
  _(HostMalloc, hipHostMalloc, ::anydev::hip::HipHostMallocFn)

namespace anydev::hip {

struct HipApi;
using HipMallocFn = hipError_t (*)(void**, size_t);
using HipHostMallocFn = hipError_t (*)(void**, size_t, unsigned int);

// The HIP runtime's entry points, resolved from the loaded libamdhip64.
struct HipRt {
  using Api = HipApi;
  ANYDEV_HIP_SYMBOLS(ANYDEV_DECLARE_VENDOR_FN)
  ANYDEV_HIP_TYPED_SYMBOLS(ANYDEV_DECLARE_TYPED_VENDOR_FN)
  ANYDEV_HIP_OPTIONAL_SYMBOLS(ANYDEV_DECLARE_VENDOR_FN)
  ANYDEV_HIP_OPTIONAL_TYPED_SYMBOLS(ANYDEV_DECLARE_TYPED_VENDOR_FN)

  // Returns the symbol behind a field name ("SetDevice" -> "hipSetDevice").
  static const char* SymbolOf(absl::string_view field);
};

struct HipApi {
  using Table = HipRt;
  using Error = hipError_t;
  using Stream = hipStream_t;
  using Event = hipEvent_t;
  using MemcpyKind = hipMemcpyKind;
  using Graph = hipGraph_t;
  using GraphExec = hipGraphExec_t;
  using CaptureStatus = hipStreamCaptureStatus;
  using VendorCaptureMode = hipStreamCaptureMode;

  static constexpr DeviceType kDeviceType = DeviceType::kHIP;
  static constexpr const internal::VendorLibrarySpec& kLibrary = internal::kHipRuntimeLibrary;

  static constexpr Error kSuccess = hipSuccess;
  static constexpr Error kNotReady = hipErrorNotReady;
  static constexpr Error kOutOfMemory = hipErrorOutOfMemory;
  // See Note [Runtime unloading at exit] in gpu_backend.h.
  static constexpr Error kUnloading = hipErrorDeinitialized;
  static constexpr unsigned kStreamNonBlocking = hipStreamNonBlocking;
  static constexpr unsigned kEventDefault = hipEventDefault;
  static constexpr unsigned kEventDisableTiming = hipEventDisableTiming;
  static constexpr MemcpyKind kHostToDevice = hipMemcpyHostToDevice;
  static constexpr MemcpyKind kDeviceToHost = hipMemcpyDeviceToHost;
  static constexpr MemcpyKind kDeviceToDevice = hipMemcpyDeviceToDevice;
  static constexpr CaptureStatus kCaptureNone = hipStreamCaptureStatusNone;
  static constexpr VendorCaptureMode kCaptureGlobal = hipStreamCaptureModeGlobal;
  static constexpr VendorCaptureMode kCaptureThreadLocal = hipStreamCaptureModeThreadLocal;
  static constexpr VendorCaptureMode kCaptureRelaxed = hipStreamCaptureModeRelaxed;

  static absl::Status Load(const internal::VendorLibrary& lib, HipRt* table);
  static absl::StatusCode CodeOf(Error error);
  static std::string ProbeHint(const HipRt& rt, const internal::VendorLibrary& lib, Error error);
  static absl::Status FillProperties(const HipRt& rt, const internal::VendorLibrary& lib,
                                     int device, DeviceProperties* p);
  // Queues fn(arg) on the stream (hipStreamAddCallback: libamdhip64 5.x
  // declares hipLaunchHostFunc but does not export it).
  static absl::Status EnqueueHostFunction(const HipRt& rt, Stream stream, void (*fn)(void*),
                                          void* arg);
  // True when the runtime knows `ptr` as device memory.
  static bool IsDeviceMemory(const HipRt& rt, const void* ptr);
  // Page-locked host memory (hipHostMalloc); false when the runtime lacks it.
  static bool HasPinnedHost(const HipRt& rt) {
    return rt.HostMalloc != nullptr && rt.FreeHost != nullptr;
  }
  static Error MallocHost(const HipRt& rt, void** ptr, size_t nbytes) {
    return rt.HostMalloc(ptr, nbytes, 0u /* hipHostMallocDefault */);
  }
  // Unimplemented: the HIP headers anydev builds with declare no
  // hipGraphDebugDotPrint.
  static absl::Status DumpGraph(const HipRt& rt, Graph graph, const std::string& path);
};

}  // namespace anydev::hip

#endif  // ANYDEV_BACKENDS_HIP_HIP_API_H_
