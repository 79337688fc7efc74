// backends/common/vendor_libraries.h: the one place that names the vendor
// runtimes anydev opens with dlopen, in the order it tries them, and the
// variable that overrides each (for a runtime outside the loader's path, or
// for a test that makes the library unloadable).
//
// Example:
//   absl::StatusOr<VendorLibrary> lib = VendorLibrary::Open(kCudaRuntimeLibrary);
#ifndef ANYDEV_BACKENDS_COMMON_VENDOR_LIBRARIES_H_
#define ANYDEV_BACKENDS_COMMON_VENDOR_LIBRARIES_H_

#include <array>

namespace anydev::internal {

struct VendorLibrarySpec {
  const char* backend;       // the device type's name, prefixes every reason: "cuda"
  const char* env_override;  // when set, the only name or path tried
  std::array<const char*, 3> sonames;  // tried in order; the first that loads wins
};

// The CUDA runtime: CUDA 13 first (the headers anydev is built with), then 12,
// whose runtime API anydev uses is the same, then whatever libcudart.so is.
inline constexpr VendorLibrarySpec kCudaRuntimeLibrary = {
    "cuda", "ANYDEV_CUDA_LIBRARY", {"libcudart.so.13", "libcudart.so.12", "libcudart.so"}};

// The ROCm HIP runtime: ROCm 6, then ROCm 5 (Debian's libamdhip64-5), then the
// development symlink.
inline constexpr VendorLibrarySpec kHipRuntimeLibrary = {
    "hip", "ANYDEV_HIP_LIBRARY", {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}};

// The oneAPI Level Zero loader, which finds the GPU driver (libze_intel_gpu)
// itself and applies ZE_AFFINITY_MASK.
inline constexpr VendorLibrarySpec kLevelZeroLibrary = {
    "xpu", "ANYDEV_LEVEL_ZERO_LIBRARY", {"libze_loader.so.1", "libze_loader.so", nullptr}};

}  // namespace anydev::internal

#endif  // ANYDEV_BACKENDS_COMMON_VENDOR_LIBRARIES_H_
