// The CUDA backend: the shared GPU backend (backends/gpu_common/gpu_backend.h)
// over the CUDA runtime, libcudart, opened with dlopen at probe time.
//
// Environment. CUDA_VISIBLE_DEVICES is applied by the CUDA runtime itself
// when it initialises (it decides which devices exist and their order, by
// index or by GPU-/MIG- UUID); anydev's device i is the runtime's device i.
// CUDA_DEVICE_ORDER and CUDA_MODULE_LOADING are the runtime's too.
// ANYDEV_CUDA_LIBRARY names the runtime library to load instead of the
// sonames in backends/common/vendor_libraries.h.
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "anydev/backend.h"
#include "backends/cuda/cuda_api.h"
#include "backends/gpu_common/gpu_backend.h"
#include "internal/env.h"

namespace anydev::cuda {
namespace {

// "13.0" for 13000.
std::string CudaVersion(int v) { return absl::StrCat(v / 1000, ".", (v % 1000) / 10); }

std::string FormatUuid(const unsigned char* b) {
  return absl::StrFormat(
      "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
      b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

// Note [cudaDeviceProp across runtime versions]: the struct's size and most of
// its fields differ between CUDA 11, 12 and 13 (13 removed clockRate and
// others), and the runtime anydev loads may be older or newer than the header
// it was built with. Its first fields (name, uuid, luid, luidDeviceNodeMask,
// totalGlobalMem) have had the same layout since CUDA 10, so only they are read
// from it, out of a buffer larger than any version's struct; everything else
// comes from cudaDeviceGetAttribute, whose attribute numbers never change.
union DevicePropBuffer {
  cudaDeviceProp prop;
  unsigned char bytes[16384];
};
static_assert(sizeof(cudaDeviceProp) < sizeof(DevicePropBuffer), "grow DevicePropBuffer");
static_assert(offsetof(cudaDeviceProp, name) == 0, "cudaDeviceProp layout changed");
static_assert(offsetof(cudaDeviceProp, uuid) == 256, "cudaDeviceProp layout changed");
static_assert(offsetof(cudaDeviceProp, totalGlobalMem) == 288, "cudaDeviceProp layout changed");

}  // namespace

const char* CudaRt::SymbolOf(absl::string_view field) {
#define ANYDEV_CUDA_SYMBOL_OF_(f, s) \
  if (field == #f) return f##Symbol;
  ANYDEV_CUDART_SYMBOLS(ANYDEV_CUDA_SYMBOL_OF_)
  ANYDEV_CUDART_GRAPH_SYMBOLS(ANYDEV_CUDA_SYMBOL_OF_)
#undef ANYDEV_CUDA_SYMBOL_OF_
  return nullptr;
}

absl::Status CudaApi::Load(const internal::VendorLibrary& lib, CudaRt* table) {
  ANYDEV_CUDART_SYMBOLS(ANYDEV_RESOLVE_VENDOR_FN)
  ANYDEV_CUDART_GRAPH_SYMBOLS(ANYDEV_RESOLVE_OPTIONAL_VENDOR_FN)
  return absl::OkStatus();
}

absl::StatusCode CudaApi::CodeOf(Error error) {
  switch (error) {
    case cudaErrorMemoryAllocation:
      return absl::StatusCode::kResourceExhausted;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorInitializationError:
    case cudaErrorCudartUnloading:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemNotReady:
      return absl::StatusCode::kUnavailable;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidResourceHandle:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

std::string CudaApi::ProbeHint(const CudaRt& rt, const internal::VendorLibrary& lib,
                               Error error) {
  int runtime = 0, driver = 0;
  if (rt.RuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  if (rt.DriverGetVersion(&driver) != cudaSuccess) driver = 0;
  (void)rt.GetLastError();
  std::string hint;
  if (error == cudaErrorInsufficientDriver || error == cudaErrorStubLibrary) {
    if (driver == 0) {
      hint = "; no NVIDIA driver is installed (libcuda.so.1 was not found)";
    } else {
      hint = absl::StrCat("; the NVIDIA driver supports CUDA ", CudaVersion(driver),
                          ", older than this runtime (", CudaVersion(runtime),
                          "): upgrade the driver");
    }
  } else if (error == cudaErrorNoDevice || error == cudaSuccess) {
    if (std::optional<std::string> visible = internal::GetEnv("CUDA_VISIBLE_DEVICES")) {
      hint = absl::StrCat("; CUDA_VISIBLE_DEVICES='", *visible, "' may hide them");
    } else if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v != nullptr) {
      hint = "; CUDA_VISIBLE_DEVICES is set to the empty string, which hides every device";
    }
  }
  absl::StrAppend(&hint, " [", lib.path(), ", CUDA runtime ", CudaVersion(runtime), "]");
  return hint;
}

absl::Status CudaApi::FillProperties(const CudaRt& rt, const internal::VendorLibrary& lib,
                                     int device, DeviceProperties* p) {
  auto* buffer = new DevicePropBuffer();
  std::unique_ptr<DevicePropBuffer> owned(buffer);
  ANYDEV_GPU_CHECK(rt, GetDeviceProperties(&buffer->prop, device));
  p->name = std::string(buffer->prop.name, strnlen(buffer->prop.name, sizeof(buffer->prop.name)));
  p->total_memory = buffer->prop.totalGlobalMem;
  p->uuid = FormatUuid(reinterpret_cast<const unsigned char*>(buffer->prop.uuid.bytes));

  auto attr = [&](cudaDeviceAttr a, int* out) -> absl::Status {
    ANYDEV_GPU_CHECK(rt, DeviceGetAttribute(out, a, device));
    return absl::OkStatus();
  };
  int sms = 0, major = 0, minor = 0, pci_bus = 0, warp = 0, l2 = 0, threads_per_sm = 0,
      bus_width = 0, integrated = 0;
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrMultiProcessorCount, &sms));
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrComputeCapabilityMajor, &major));
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrComputeCapabilityMinor, &minor));
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrPciBusId, &pci_bus));
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrWarpSize, &warp));
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrL2CacheSize, &l2));
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrMaxThreadsPerMultiProcessor, &threads_per_sm));
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrGlobalMemoryBusWidth, &bus_width));
  ANYDEV_RETURN_IF_ERROR(attr(cudaDevAttrIntegrated, &integrated));
  p->multi_processor_count = sms;
  p->major = major;
  p->minor = minor;
  p->arch = absl::StrCat("sm_", major, minor);
  p->pci_bus_id = pci_bus;

  int driver = 0, runtime = 0;
  ANYDEV_GPU_CHECK(rt, DriverGetVersion(&driver));
  ANYDEV_GPU_CHECK(rt, RuntimeGetVersion(&runtime));
  p->driver_version = CudaVersion(driver);

  char pci[64] = {};
  ANYDEV_GPU_CHECK(rt, DeviceGetPCIBusId(pci, static_cast<int>(sizeof(pci)) - 1, device));
  p->extra = {
      {"runtime_version", CudaVersion(runtime)},
      {"runtime_library", lib.path()},
      {"pci_address", pci},
      {"warp_size", absl::StrCat(warp)},
      {"l2_cache_size", absl::StrCat(l2)},
      {"max_threads_per_multi_processor", absl::StrCat(threads_per_sm)},
      {"memory_bus_width", absl::StrCat(bus_width)},
      {"is_integrated", absl::StrCat(integrated)},
  };
  return absl::OkStatus();
}

absl::Status CudaApi::EnqueueHostFunction(const CudaRt& rt, Stream stream, void (*fn)(void*),
                                          void* arg) {
  ANYDEV_GPU_CHECK(rt, LaunchHostFunc(stream, fn, arg));
  return absl::OkStatus();
}

bool CudaApi::IsDeviceMemory(const CudaRt& rt, const void* ptr) {
  cudaPointerAttributes attributes;
  std::memset(&attributes, 0, sizeof(attributes));
  if (rt.PointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)rt.GetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

absl::Status CudaApi::DumpGraph(const CudaRt& rt, Graph graph, const std::string& path) {
  if (rt.GraphDebugDotPrint == nullptr) {
    return absl::UnimplementedError("cuda: this runtime has no cudaGraphDebugDotPrint");
  }
  ANYDEV_GPU_CHECK(rt, GraphDebugDotPrint(graph, path.c_str(), 1u /* verbose */));
  return absl::OkStatus();
}

using CudaBackend = gpu::GpuBackend<CudaApi>;

const CudaRt* LoadedRuntime() {
  absl::StatusOr<Backend*> backend = GetBackend(DeviceType::kCUDA);
  if (!backend.ok()) return nullptr;
  return static_cast<CudaBackend*>(*backend)->table();
}

ANYDEV_REGISTER_BACKEND(DeviceType::kCUDA, [] { return std::make_unique<CudaBackend>(); });

}  // namespace anydev::cuda
