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
  // When no soname loads from the loader's path: the same sonames in these
  // directories, first under each installation-root variable that is set,
  // then in the vendor's default installation (a toolkit the loader was not
  // told about, as /usr/local/cuda often is).
  std::array<const char*, 2> root_variables;   // "CUDA_HOME": tries $CUDA_HOME/<lib_subdirs>
  std::array<const char*, 2> lib_subdirs;      // "lib64", "lib"
  const char* default_root;                    // "/usr/local/cuda"
};

// The CUDA runtime: CUDA 13 first (the headers anydev is built with), then 12,
// whose runtime API anydev uses is the same, then whatever libcudart.so is.
inline constexpr VendorLibrarySpec kCudaRuntimeLibrary = {
    "cuda", "ANYDEV_CUDA_LIBRARY", {"libcudart.so.13", "libcudart.so.12", "libcudart.so"},
    {"CUDA_HOME", "CUDA_PATH"}, {"lib64", "lib"}, "/usr/local/cuda"};

// The ROCm HIP runtime: ROCm 6, then ROCm 5 (Debian's libamdhip64-5), then the
// development symlink.
inline constexpr VendorLibrarySpec kHipRuntimeLibrary = {
    "hip", "ANYDEV_HIP_LIBRARY", {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"},
    {"ROCM_PATH", "HIP_PATH"}, {"lib", "lib64"}, "/opt/rocm"};

// The oneAPI Level Zero loader, which finds the GPU driver (libze_intel_gpu)
// itself and applies ZE_AFFINITY_MASK.
inline constexpr VendorLibrarySpec kLevelZeroLibrary = {
    "xpu", "ANYDEV_LEVEL_ZERO_LIBRARY", {"libze_loader.so.1", "libze_loader.so", nullptr},
    {"LEVEL_ZERO_ROOT", nullptr}, {"lib", "lib64"}, nullptr};

}  // namespace anydev::internal

#endif  // ANYDEV_BACKENDS_COMMON_VENDOR_LIBRARIES_H_
