// The ROCm HIP backend: the shared GPU backend (backends/gpu_common/
// gpu_backend.h) over the HIP runtime, libamdhip64, opened with dlopen at
// probe time.
//
// Environment. HIP_VISIBLE_DEVICES (and CUDA_VISIBLE_DEVICES, which HIP
// accepts too) is applied by the HIP runtime, ROCR_VISIBLE_DEVICES by the
// ROCr runtime below it, both when HIP initialises; anydev's device i is the
// runtime's device i. ANYDEV_HIP_LIBRARY names the runtime library to load
// instead of the sonames in backends/common/vendor_libraries.h.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "anydev/backend.h"
#include "backends/gpu_common/gpu_backend.h"
#include "backends/hip/hip_api.h"
#include "internal/env.h"

namespace anydev::hip {
namespace {

// "5.2.21153" for HIP_VERSION-style 50221153 (major * 10^7 + minor * 10^5 + patch).
std::string HipVersion(int v) {
  return absl::StrCat(v / 10000000, ".", (v / 100000) % 100, ".", v % 100000);
}

// Note [hipDeviceProp_t across runtime versions]: ROCm 6 changed the struct
// (hipDeviceProp_tR0600) and kept the old entry point, hipGetDeviceProperties,
// filling the ROCm 5 layout this header declares. Only gcnArchName is read
// from it, out of a buffer larger than either layout, and only when the
// runtime has the entry point; everything else comes from attribute calls.
union DevicePropBuffer {
  hipDeviceProp_t prop;
  unsigned char bytes[16384];
};
static_assert(sizeof(hipDeviceProp_t) < sizeof(DevicePropBuffer), "grow DevicePropBuffer");

struct HostCall {
  void (*fn)(void*);
  void* arg;
};

void HostCallTrampoline(hipStream_t, hipError_t, void* data) {
  std::unique_ptr<HostCall> call(static_cast<HostCall*>(data));
  call->fn(call->arg);
}

}  // namespace

const char* HipRt::SymbolOf(absl::string_view field) {
#define ANYDEV_HIP_SYMBOL_OF_(f, s) \
  if (field == #f) return f##Symbol;
#define ANYDEV_HIP_TYPED_SYMBOL_OF_(f, s, t) ANYDEV_HIP_SYMBOL_OF_(f, s)
  ANYDEV_HIP_SYMBOLS(ANYDEV_HIP_SYMBOL_OF_)
  ANYDEV_HIP_TYPED_SYMBOLS(ANYDEV_HIP_TYPED_SYMBOL_OF_)
  ANYDEV_HIP_OPTIONAL_SYMBOLS(ANYDEV_HIP_SYMBOL_OF_)
  ANYDEV_HIP_OPTIONAL_TYPED_SYMBOLS(ANYDEV_HIP_TYPED_SYMBOL_OF_)
#undef ANYDEV_HIP_TYPED_SYMBOL_OF_
#undef ANYDEV_HIP_SYMBOL_OF_
  return nullptr;
}

absl::Status HipApi::Load(const internal::VendorLibrary& lib, HipRt* table) {
  ANYDEV_HIP_SYMBOLS(ANYDEV_RESOLVE_VENDOR_FN)
  ANYDEV_HIP_TYPED_SYMBOLS(ANYDEV_RESOLVE_TYPED_VENDOR_FN)
  ANYDEV_HIP_OPTIONAL_SYMBOLS(ANYDEV_RESOLVE_OPTIONAL_VENDOR_FN)
#define ANYDEV_HIP_RESOLVE_OPTIONAL_TYPED_(f, s, t) ANYDEV_RESOLVE_OPTIONAL_VENDOR_FN(f, s)
  ANYDEV_HIP_OPTIONAL_TYPED_SYMBOLS(ANYDEV_HIP_RESOLVE_OPTIONAL_TYPED_)
#undef ANYDEV_HIP_RESOLVE_OPTIONAL_TYPED_
  return absl::OkStatus();
}

absl::StatusCode HipApi::CodeOf(Error error) {
  switch (error) {
    case hipErrorOutOfMemory:
      return absl::StatusCode::kResourceExhausted;
    case hipErrorInsufficientDriver:
    case hipErrorNoDevice:
    case hipErrorNotInitialized:
    case hipErrorDeinitialized:
      return absl::StatusCode::kUnavailable;
    case hipErrorInvalidValue:
    case hipErrorInvalidDevice:
    case hipErrorInvalidDevicePointer:
    case hipErrorInvalidHandle:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

std::string HipApi::ProbeHint(const HipRt& rt, const internal::VendorLibrary& lib, Error error) {
  int runtime = 0;
  if (rt.RuntimeGetVersion(&runtime) != hipSuccess) runtime = 0;
  (void)rt.GetLastError();
  std::string hint;
  if (error == hipErrorNoDevice || error == hipErrorInsufficientDriver || error == hipSuccess) {
    if (access("/dev/kfd", F_OK) != 0) {
      hint = "; /dev/kfd is missing: the amdgpu kernel driver is not loaded";
    } else if (access("/dev/kfd", R_OK | W_OK) != 0) {
      hint = "; /dev/kfd is not accessible to this user (add it to the 'render' and 'video' groups)";
    }
    std::vector<std::string> masks;
    for (const char* var : {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                            "GPU_DEVICE_ORDINAL"}) {
      if (const char* v = std::getenv(var); v != nullptr) {
        masks.push_back(absl::StrCat(var, "='", v, "'"));
      }
    }
    if (!masks.empty()) {
      absl::StrAppend(&hint, "; ", absl::StrJoin(masks, ", "), " may hide devices");
    }
  }
  absl::StrAppend(&hint, " [", lib.path(), ", HIP runtime ", HipVersion(runtime), "]");
  return hint;
}

absl::Status HipApi::FillProperties(const HipRt& rt, const internal::VendorLibrary& lib,
                                    int device, DeviceProperties* p) {
  char name[256] = {};
  ANYDEV_GPU_CHECK(rt, DeviceGetName(name, static_cast<int>(sizeof(name)) - 1, device));
  p->name = name;
  size_t total = 0;
  ANYDEV_GPU_CHECK(rt, DeviceTotalMem(&total, device));
  p->total_memory = total;

  auto attr = [&](hipDeviceAttribute_t a, int* out) -> absl::Status {
    ANYDEV_GPU_CHECK(rt, DeviceGetAttribute(out, a, device));
    return absl::OkStatus();
  };
  int cus = 0, major = 0, minor = 0, pci_bus = 0, warp = 0, l2 = 0, threads_per_cu = 0,
      integrated = 0;
  ANYDEV_RETURN_IF_ERROR(attr(hipDeviceAttributeMultiprocessorCount, &cus));
  ANYDEV_RETURN_IF_ERROR(attr(hipDeviceAttributeComputeCapabilityMajor, &major));
  ANYDEV_RETURN_IF_ERROR(attr(hipDeviceAttributeComputeCapabilityMinor, &minor));
  ANYDEV_RETURN_IF_ERROR(attr(hipDeviceAttributePciBusId, &pci_bus));
  ANYDEV_RETURN_IF_ERROR(attr(hipDeviceAttributeWarpSize, &warp));
  ANYDEV_RETURN_IF_ERROR(attr(hipDeviceAttributeL2CacheSize, &l2));
  ANYDEV_RETURN_IF_ERROR(attr(hipDeviceAttributeMaxThreadsPerMultiProcessor, &threads_per_cu));
  ANYDEV_RETURN_IF_ERROR(attr(hipDeviceAttributeIntegrated, &integrated));
  p->multi_processor_count = cus;
  p->major = major;
  p->minor = minor;
  p->pci_bus_id = pci_bus;

  std::string gcn_arch_name;
  if (rt.GetDeviceProperties != nullptr) {
    auto buffer = std::make_unique<DevicePropBuffer>();
    ANYDEV_GPU_CHECK(rt, GetDeviceProperties(&buffer->prop, device));
    gcn_arch_name = std::string(
        buffer->prop.gcnArchName,
        strnlen(buffer->prop.gcnArchName, sizeof(buffer->prop.gcnArchName)));
  }
  // "gfx90a:sramecc+:xnack-" -> "gfx90a"; the features stay in extra.
  p->arch = gcn_arch_name.substr(0, gcn_arch_name.find(':'));

  if (rt.DeviceGetUuid != nullptr) {
    hipUUID uuid;
    std::memset(&uuid, 0, sizeof(uuid));
    ANYDEV_GPU_CHECK(rt, DeviceGetUuid(&uuid, device));
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    p->uuid = absl::StrFormat(
        "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
        b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  }

  int driver = 0, runtime = 0;
  ANYDEV_GPU_CHECK(rt, DriverGetVersion(&driver));
  ANYDEV_GPU_CHECK(rt, RuntimeGetVersion(&runtime));
  p->driver_version = HipVersion(driver);

  char pci[64] = {};
  ANYDEV_GPU_CHECK(rt, DeviceGetPCIBusId(pci, static_cast<int>(sizeof(pci)) - 1, device));
  p->extra = {
      {"runtime_version", HipVersion(runtime)},
      {"runtime_library", lib.path()},
      {"gcn_arch_name", gcn_arch_name},
      {"pci_address", pci},
      {"warp_size", absl::StrCat(warp)},
      {"l2_cache_size", absl::StrCat(l2)},
      {"max_threads_per_multi_processor", absl::StrCat(threads_per_cu)},
      {"is_integrated", absl::StrCat(integrated)},
  };
  return absl::OkStatus();
}

absl::Status HipApi::EnqueueHostFunction(const HipRt& rt, Stream stream, void (*fn)(void*),
                                         void* arg) {
  auto* call = new HostCall{fn, arg};
  absl::Status status = ANYDEV_GPU_STATUS(rt, StreamAddCallback(stream, &HostCallTrampoline, call, 0));
  if (!status.ok()) delete call;
  return status;
}

bool HipApi::IsDeviceMemory(const HipRt& rt, const void* ptr) {
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  if (rt.MemGetAddressRange(&base, &size, const_cast<void*>(ptr)) != hipSuccess) {
    (void)rt.GetLastError();
    return false;
  }
  return base != nullptr;
}

absl::Status HipApi::DumpGraph(const HipRt&, Graph, const std::string&) {
  return absl::UnimplementedError(
      "hip: debug_dump is not supported (no hipGraphDebugDotPrint in the HIP headers anydev "
      "is built with)");
}

using HipBackend = gpu::GpuBackend<HipApi>;

ANYDEV_REGISTER_BACKEND(DeviceType::kHIP, [] { return std::make_unique<HipBackend>(); });

}  // namespace anydev::hip
