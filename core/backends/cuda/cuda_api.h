// backends/cuda/cuda_api.h: the CUDA runtime as the shared GPU backend sees it
// (backends/gpu_common/gpu_backend.h): one symbol list for libcudart, the
// struct of pointers it fills, and the CudaApi policy of types, constants and
// the few calls that differ from HIP's.
//
// Only the vendor header's declarations are used (for the pointer types):
// libcudart is opened with dlopen when the backend is probed, never linked.
//
// Example (an in-tree benchmark timing raw calls through the same table):
//   const anydev::cuda::CudaRt* rt = anydev::cuda::LoadedRuntime();
//   if (rt != nullptr) rt->StreamSynchronize(stream);
#ifndef ANYDEV_BACKENDS_CUDA_CUDA_API_H_
#define ANYDEV_BACKENDS_CUDA_CUDA_API_H_

#include <cuda_runtime_api.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "backends/common/vendor_libraries.h"
#include "backends/common/vendor_library.h"

// Every libcudart entry point anydev calls: _(field in CudaRt, symbol).
#define ANYDEV_CUDART_SYMBOLS(_)                                     \
  _(GetErrorName, cudaGetErrorName)                                  \
  _(GetErrorString, cudaGetErrorString)                              \
  _(GetLastError, cudaGetLastError)                                  \
  _(DriverGetVersion, cudaDriverGetVersion)                          \
  _(RuntimeGetVersion, cudaRuntimeGetVersion)                        \
  _(GetDeviceCount, cudaGetDeviceCount)                              \
  _(GetDevice, cudaGetDevice)                                        \
  _(SetDevice, cudaSetDevice)                                        \
  _(GetDeviceProperties, cudaGetDeviceProperties)                    \
  _(DeviceGetAttribute, cudaDeviceGetAttribute)                      \
  _(DeviceGetPCIBusId, cudaDeviceGetPCIBusId)                        \
  _(DeviceGetStreamPriorityRange, cudaDeviceGetStreamPriorityRange)  \
  _(DeviceSynchronize, cudaDeviceSynchronize)                        \
  _(StreamCreateWithPriority, cudaStreamCreateWithPriority)          \
  _(StreamQuery, cudaStreamQuery)                                    \
  _(StreamSynchronize, cudaStreamSynchronize)                        \
  _(StreamWaitEvent, cudaStreamWaitEvent)                            \
  _(LaunchHostFunc, cudaLaunchHostFunc)                              \
  _(EventCreateWithFlags, cudaEventCreateWithFlags)                  \
  _(EventDestroy, cudaEventDestroy)                                  \
  _(EventRecord, cudaEventRecord)                                    \
  _(EventQuery, cudaEventQuery)                                      \
  _(EventSynchronize, cudaEventSynchronize)                          \
  _(EventElapsedTime, cudaEventElapsedTime)                          \
  _(Malloc, cudaMalloc)                                              \
  _(Free, cudaFree)                                                  \
  _(MemGetInfo, cudaMemGetInfo)                                      \
  _(MemcpyAsync, cudaMemcpyAsync)                                    \
  _(MemsetAsync, cudaMemsetAsync)                                    \
  _(PointerGetAttributes, cudaPointerGetAttributes)

// Stream capture (graphs) and page-locked host memory: optional, so a runtime
// without them still loads; Graph calls then answer Unimplemented and host
// memory is ordinary. Field names shared with HIP's where the calls match.
#define ANYDEV_CUDART_GRAPH_SYMBOLS(_)                               \
  _(StreamBeginCapture, cudaStreamBeginCapture)                      \
  _(StreamEndCapture, cudaStreamEndCapture)                          \
  _(StreamIsCapturing, cudaStreamIsCapturing)                        \
  _(GraphInstantiateWithFlags, cudaGraphInstantiateWithFlags)        \
  _(GraphLaunch, cudaGraphLaunch)                                    \
  _(GraphDestroy, cudaGraphDestroy)                                  \
  _(GraphExecDestroy, cudaGraphExecDestroy)                          \
  _(GraphDebugDotPrint, cudaGraphDebugDotPrint)                      \
  _(MallocHost, cudaMallocHost)                                      \
  _(FreeHost, cudaFreeHost)

namespace anydev::cuda {

struct CudaApi;

// The CUDA runtime's entry points, resolved from the loaded libcudart.
struct CudaRt {
  using Api = CudaApi;
  ANYDEV_CUDART_SYMBOLS(ANYDEV_DECLARE_VENDOR_FN)
  ANYDEV_CUDART_GRAPH_SYMBOLS(ANYDEV_DECLARE_VENDOR_FN)

  // Returns the symbol behind a field name ("SetDevice" -> "cudaSetDevice").
  static const char* SymbolOf(absl::string_view field);
};

struct CudaApi {
  using Table = CudaRt;
  using Error = cudaError_t;
  using Stream = cudaStream_t;
  using Event = cudaEvent_t;
  using MemcpyKind = cudaMemcpyKind;
  using Graph = cudaGraph_t;
  using GraphExec = cudaGraphExec_t;
  using CaptureStatus = cudaStreamCaptureStatus;
  using VendorCaptureMode = cudaStreamCaptureMode;

  static constexpr DeviceType kDeviceType = DeviceType::kCUDA;
  static constexpr const internal::VendorLibrarySpec& kLibrary = internal::kCudaRuntimeLibrary;

  static constexpr Error kSuccess = cudaSuccess;
  static constexpr Error kNotReady = cudaErrorNotReady;
  static constexpr Error kOutOfMemory = cudaErrorMemoryAllocation;
  // See Note [Runtime unloading at exit] in gpu_backend.h.
  static constexpr Error kUnloading = cudaErrorCudartUnloading;
  static constexpr unsigned kStreamNonBlocking = cudaStreamNonBlocking;
  static constexpr unsigned kEventDefault = cudaEventDefault;
  static constexpr unsigned kEventDisableTiming = cudaEventDisableTiming;
  static constexpr MemcpyKind kHostToDevice = cudaMemcpyHostToDevice;
  static constexpr MemcpyKind kDeviceToHost = cudaMemcpyDeviceToHost;
  static constexpr MemcpyKind kDeviceToDevice = cudaMemcpyDeviceToDevice;
  static constexpr CaptureStatus kCaptureNone = cudaStreamCaptureStatusNone;
  static constexpr VendorCaptureMode kCaptureGlobal = cudaStreamCaptureModeGlobal;
  static constexpr VendorCaptureMode kCaptureThreadLocal = cudaStreamCaptureModeThreadLocal;
  static constexpr VendorCaptureMode kCaptureRelaxed = cudaStreamCaptureModeRelaxed;

  // Resolves every symbol of ANYDEV_CUDART_SYMBOLS from `lib` into `table`.
  static absl::Status Load(const internal::VendorLibrary& lib, CudaRt* table);
  // The canonical code for a runtime error.
  static absl::StatusCode CodeOf(Error error);
  // What to add to a failed probe's reason: which of "no driver", "driver too
  // old" or "devices hidden" it is, and the library and runtime version.
  static std::string ProbeHint(const CudaRt& rt, const internal::VendorLibrary& lib, Error error);
  static absl::Status FillProperties(const CudaRt& rt, const internal::VendorLibrary& lib,
                                     int device, DeviceProperties* p);
  // Queues fn(arg) on the stream (cudaLaunchHostFunc).
  static absl::Status EnqueueHostFunction(const CudaRt& rt, Stream stream, void (*fn)(void*),
                                          void* arg);
  // True when the runtime knows `ptr` as device or managed memory.
  static bool IsDeviceMemory(const CudaRt& rt, const void* ptr);
  // Page-locked host memory (cudaMallocHost); false when the runtime lacks it.
  static bool HasPinnedHost(const CudaRt& rt) {
    return rt.MallocHost != nullptr && rt.FreeHost != nullptr;
  }
  static Error MallocHost(const CudaRt& rt, void** ptr, size_t nbytes) {
    return rt.MallocHost(ptr, nbytes);
  }
  // Writes `graph` as Graphviz DOT (cudaGraphDebugDotPrint, verbose).
  static absl::Status DumpGraph(const CudaRt& rt, Graph graph, const std::string& path);
};

// Returns the loaded runtime's table when the CUDA backend probed available,
// else nullptr (for in-tree benchmarks and tests).
const CudaRt* LoadedRuntime();

}  // namespace anydev::cuda

#endif  // ANYDEV_BACKENDS_CUDA_CUDA_API_H_
