// @generated from compat_map/cpp.toml by compat_map/generate.py -- do not edit
//
// <anydev/torch_deprecations.h>: compiler warnings at every legacy device-specific
// call (c10::cuda, at::cuda, c10::xpu) of C++ code built against the real PyTorch
// headers, such as an extension's kernels. Force-include it before each source:
//
//   g++ / clang++ / nvcc:     -include /path/to/anydev/torch_deprecations.h
//   torch.utils.cpp_extension: extra_compile_args=anydev.cpp_extension.extra_compile_args()
//   CMake:                    anydev_deprecate_legacy_torch(my_target)
//
// It includes the PyTorch headers that declare the legacy functions, where the
// build can (the CUDA or SYCL headers and PyTorch's generated ones are on the include
// path), and redeclares each function with [[deprecated("use <replacement> [ADxxx]")]],
// which C++ allows on a redeclaration. Each redeclaration is guarded by the PyTorch
// releases whose headers declare the function with that signature
// (TORCH_VERSION_MAJOR/MINOR), so against any other PyTorch it is left out and the
// header still compiles. PyTorch's own headers should be system headers (-isystem,
// as CMake's imported targets and anydev.cpp_extension make them), or the legacy
// calls inside them warn too. `anydev report show build.log` turns the warnings into
// the report `anydev run` writes. Define ANYDEV_NO_TORCH_DEPRECATIONS to turn it off.
//
// Covered: 38 functions (40 declarations): AD601, AD602, AD603, AD604, AD605, AD606, AD607, AD608, AD609, AD610, AD611, AD621, AD624, AD625, AD626, AD634, AD635, AD701, AD702, AD703, AD704, AD705, AD706, AD801, AD802, AD803, AD804, AD805, AD806, AD817, AD818, AD819, AD820, AD821, AD822, AD823, AD824, AD825.
// Not covered: 10:
//   classes c10::cuda::CUDAStream (AD619), c10::cuda::CUDAGuard (AD627), c10::cuda::OptionalCUDAGuard (AD628), c10::cuda::CUDAStreamGuard (AD629), c10::cuda::OptionalCUDAStreamGuard (AD630), c10::cuda::CUDAMultiStreamGuard (AD631), at::cuda::CUDAEvent (AD632), at::cuda::CUDAGraph (AD633), c10::xpu::XPUStream (AD815):
//     a class takes [[deprecated]] only on a declaration before its definition, and such a forward declaration would make PyTorch's own headers, which use the class throughout, warn at each use; `anydev scan` reports it.
//   c10::xpu::device_synchronize (AD807): c10::xpu::device_synchronize is not declared by the PyTorch 2.13 headers (c10/xpu has syncStreamsOnDevice, AD820), so there is nothing to redeclare; the scanner still reports it.
#ifndef ANYDEV_TORCH_DEPRECATIONS_H_
#define ANYDEV_TORCH_DEPRECATIONS_H_

#if defined(__cplusplus) && defined(__has_include) && \
    !defined(ANYDEV_NO_TORCH_DEPRECATIONS) && !defined(TORCH_STABLE_ONLY) && \
    !defined(TORCH_TARGET_VERSION)
// Probes spell a header <./name> (Note [Probes that do not taint] in
// compat_map/generate.py): GCC 12 lets a later #include of a header that a
// failed __has_include(<name>) looked for pass without an error.
#if __has_include(<./torch/headeronly/version.h>)
#include <torch/headeronly/version.h>
#elif __has_include(<./torch/version.h>)
#include <torch/version.h>
#endif
#if defined(TORCH_VERSION_MAJOR) && defined(TORCH_VERSION_MINOR)
#define ANYDEV_TORCH_RELEASE_ (TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR)

// PyTorch's headers (Note [Includes first] in compat_map/generate.py).
#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)
#include <c10/cuda/CUDAFunctions.h>
#endif
#endif  // c10/cuda/CUDAFunctions.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)
#include <c10/cuda/CUDAStream.h>
#endif
#endif  // c10/cuda/CUDAStream.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)
#if defined(__clang__)  // Note [Clang and inline definitions]
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/cuda/CUDAStream.h>
namespace c10::cuda::CUDACachingAllocator {
class CUDAAllocator;
}
namespace c10::cuda::CUDACachingAllocator {
// c10::cuda::CUDACachingAllocator::emptyCache -> at::accelerator::emptyCache (compat_map/cpp.toml:507)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::emptyCache [AD701]")]] void emptyCache(MempoolId_t mempool_id);
#endif
// c10::cuda::CUDACachingAllocator::getDeviceStats -> at::accelerator::getDeviceStats (compat_map/cpp.toml:524)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getDeviceStats [AD702]")]] c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device);
#endif
// c10::cuda::CUDACachingAllocator::resetAccumulatedStats -> at::accelerator::resetAccumulatedStats (compat_map/cpp.toml:540)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::resetAccumulatedStats [AD703]")]] void resetAccumulatedStats(c10::DeviceIndex device);
#endif
// c10::cuda::CUDACachingAllocator::resetPeakStats -> at::accelerator::resetPeakStats (compat_map/cpp.toml:556)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::resetPeakStats [AD704]")]] void resetPeakStats(c10::DeviceIndex device);
#endif
// c10::cuda::CUDACachingAllocator::recordStream -> c10::getDeviceAllocator (compat_map/cpp.toml:572)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::getDeviceAllocator [AD705]")]] void recordStream(const DataPtr& dataPtr, CUDAStream stream);
#endif
// c10::cuda::CUDACachingAllocator::get -> c10::getDeviceAllocator (compat_map/cpp.toml:586)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::getDeviceAllocator [AD706]")]] CUDAAllocator* get();
#endif
}  // namespace c10::cuda::CUDACachingAllocator
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#include <c10/cuda/CUDACachingAllocator.h>
#pragma clang diagnostic pop
#else
#include <c10/cuda/CUDACachingAllocator.h>
#endif  // __clang__
#endif
#endif  // c10/cuda/CUDACachingAllocator.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>) && __has_include(<./cusparse.h>) && __has_include(<./cublas_v2.h>) && __has_include(<./cublasLt.h>) && __has_include(<./cusolverDn.h>)
#if defined(__clang__)  // Note [Clang and inline definitions]
#include <cstdint>
namespace at::cuda {
// at::cuda::getNumGPUs -> at::accelerator::deviceCount (compat_map/cpp.toml:457)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD634]")]] int64_t getNumGPUs();
#endif
// at::cuda::is_available -> at::accelerator::deviceCount (compat_map/cpp.toml:472)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD635]")]] bool is_available();
#endif
}  // namespace at::cuda
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#include <ATen/cuda/CUDAContextLight.h>
#pragma clang diagnostic pop
#else
#include <ATen/cuda/CUDAContextLight.h>
#endif  // __clang__
#endif
#endif  // ATen/cuda/CUDAContextLight.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)
#include <c10/xpu/XPUFunctions.h>
#endif
#endif  // c10/xpu/XPUFunctions.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)
#include <c10/xpu/XPUStream.h>
#endif
#endif  // c10/xpu/XPUStream.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)
#if defined(__clang__)  // Note [Clang and inline definitions]
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/xpu/XPUStream.h>
namespace c10::xpu::XPUCachingAllocator {
// c10::xpu::XPUCachingAllocator::emptyCache -> at::accelerator::emptyCache (compat_map/cpp.toml:1005)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::emptyCache [AD821]")]] void emptyCache(MempoolId_t mempool_id);
#endif
// c10::xpu::XPUCachingAllocator::getDeviceStats -> at::accelerator::getDeviceStats (compat_map/cpp.toml:1022)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getDeviceStats [AD822]")]] c10::CachingDeviceAllocator::DeviceStats getDeviceStats(DeviceIndex device);
#endif
// c10::xpu::XPUCachingAllocator::resetAccumulatedStats -> at::accelerator::resetAccumulatedStats (compat_map/cpp.toml:1038)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::resetAccumulatedStats [AD823]")]] void resetAccumulatedStats(DeviceIndex device);
#endif
// c10::xpu::XPUCachingAllocator::resetPeakStats -> at::accelerator::resetPeakStats (compat_map/cpp.toml:1054)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::resetPeakStats [AD824]")]] void resetPeakStats(DeviceIndex device);
#endif
// c10::xpu::XPUCachingAllocator::recordStream -> c10::getDeviceAllocator (compat_map/cpp.toml:1070)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::getDeviceAllocator [AD825]")]] void recordStream(const DataPtr& dataPtr, XPUStream stream);
#endif
}  // namespace c10::xpu::XPUCachingAllocator
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#include <c10/xpu/XPUCachingAllocator.h>
#pragma clang diagnostic pop
#else
#include <c10/xpu/XPUCachingAllocator.h>
#endif  // __clang__
#endif
#endif  // c10/xpu/XPUCachingAllocator.h

// The redeclarations.
#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)
namespace c10::cuda {
// c10::cuda::device_count -> at::accelerator::deviceCount (compat_map/cpp.toml:6)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD601]")]] DeviceIndex device_count() noexcept;
#endif
// c10::cuda::device_count_ensure_non_zero -> at::accelerator::deviceCount (compat_map/cpp.toml:22)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD602]")]] DeviceIndex device_count_ensure_non_zero();
#endif
// c10::cuda::current_device -> at::accelerator::getDeviceIndex (compat_map/cpp.toml:39)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getDeviceIndex [AD603]")]] DeviceIndex current_device();
#endif
// c10::cuda::set_device -> at::accelerator::setDeviceIndex (compat_map/cpp.toml:56)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::setDeviceIndex [AD604]")]] void set_device(DeviceIndex device, const bool force);
#endif
// c10::cuda::device_synchronize -> at::accelerator::synchronizeDevice (compat_map/cpp.toml:73)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::synchronizeDevice [AD605]")]] void device_synchronize();
#endif
// c10::cuda::ExchangeDevice -> at::accelerator::exchangeDevice (compat_map/cpp.toml:91)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::exchangeDevice [AD606]")]] DeviceIndex ExchangeDevice(DeviceIndex device);
#endif
// c10::cuda::MaybeExchangeDevice -> at::accelerator::maybeExchangeDevice (compat_map/cpp.toml:107)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::maybeExchangeDevice [AD607]")]] DeviceIndex MaybeExchangeDevice(DeviceIndex device);
#endif
// c10::cuda::GetDeviceCount -> at::accelerator::deviceCount (compat_map/cpp.toml:123)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD608]")]] cudaError_t GetDeviceCount(int* dev_count);
#endif
// c10::cuda::GetDevice -> at::accelerator::getDeviceIndex (compat_map/cpp.toml:137)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getDeviceIndex [AD609]")]] cudaError_t GetDevice(DeviceIndex* device);
#endif
// c10::cuda::SetDevice -> at::accelerator::setDeviceIndex (compat_map/cpp.toml:151)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::setDeviceIndex [AD610]")]] cudaError_t SetDevice(DeviceIndex device, const bool force);
#endif
// c10::cuda::MaybeSetDevice -> at::accelerator::maybeExchangeDevice (compat_map/cpp.toml:165)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::maybeExchangeDevice [AD611]")]] cudaError_t MaybeSetDevice(DeviceIndex device);
#endif
}  // namespace c10::cuda
#endif
#endif  // c10/cuda/CUDAFunctions.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)
namespace c10::cuda {
// c10::cuda::getStreamFromPool -> c10::impl::VirtualGuardImpl::getNewStream (compat_map/cpp.toml:274)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::impl::VirtualGuardImpl::getNewStream [AD621]")]] CUDAStream getStreamFromPool(const bool isHighPriority, DeviceIndex device);
#endif
// c10::cuda::getStreamFromPool -> c10::impl::VirtualGuardImpl::getNewStream (compat_map/cpp.toml:274)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::impl::VirtualGuardImpl::getNewStream [AD621]")]] CUDAStream getStreamFromPool(const int priority, DeviceIndex device);
#endif
// c10::cuda::getDefaultCUDAStream -> c10::impl::VirtualGuardImpl::getDefaultStream (compat_map/cpp.toml:310)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::impl::VirtualGuardImpl::getDefaultStream [AD624]")]] CUDAStream getDefaultCUDAStream(DeviceIndex device_index);
#endif
// c10::cuda::getCurrentCUDAStream -> at::accelerator::getCurrentStream (compat_map/cpp.toml:326)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getCurrentStream [AD625]")]] CUDAStream getCurrentCUDAStream(DeviceIndex device_index);
#endif
// c10::cuda::setCurrentCUDAStream -> at::accelerator::setCurrentStream (compat_map/cpp.toml:342)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::setCurrentStream [AD626]")]] void setCurrentCUDAStream(CUDAStream stream);
#endif
}  // namespace c10::cuda
#endif
#endif  // c10/cuda/CUDAStream.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)
#if !defined(__clang__)  // Clang's are above
namespace c10::cuda::CUDACachingAllocator {
// c10::cuda::CUDACachingAllocator::emptyCache -> at::accelerator::emptyCache (compat_map/cpp.toml:507)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::emptyCache [AD701]")]] void emptyCache(MempoolId_t mempool_id);
#endif
// c10::cuda::CUDACachingAllocator::getDeviceStats -> at::accelerator::getDeviceStats (compat_map/cpp.toml:524)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getDeviceStats [AD702]")]] c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device);
#endif
// c10::cuda::CUDACachingAllocator::resetAccumulatedStats -> at::accelerator::resetAccumulatedStats (compat_map/cpp.toml:540)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::resetAccumulatedStats [AD703]")]] void resetAccumulatedStats(c10::DeviceIndex device);
#endif
// c10::cuda::CUDACachingAllocator::resetPeakStats -> at::accelerator::resetPeakStats (compat_map/cpp.toml:556)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::resetPeakStats [AD704]")]] void resetPeakStats(c10::DeviceIndex device);
#endif
// c10::cuda::CUDACachingAllocator::recordStream -> c10::getDeviceAllocator (compat_map/cpp.toml:572)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::getDeviceAllocator [AD705]")]] void recordStream(const DataPtr& dataPtr, CUDAStream stream);
#endif
// c10::cuda::CUDACachingAllocator::get -> c10::getDeviceAllocator (compat_map/cpp.toml:586)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::getDeviceAllocator [AD706]")]] CUDAAllocator* get();
#endif
}  // namespace c10::cuda::CUDACachingAllocator
#endif
#endif
#endif  // c10/cuda/CUDACachingAllocator.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>) && __has_include(<./cusparse.h>) && __has_include(<./cublas_v2.h>) && __has_include(<./cublasLt.h>) && __has_include(<./cusolverDn.h>)
#if !defined(__clang__)  // Clang's are above
namespace at::cuda {
// at::cuda::getNumGPUs -> at::accelerator::deviceCount (compat_map/cpp.toml:457)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD634]")]] int64_t getNumGPUs();
#endif
// at::cuda::is_available -> at::accelerator::deviceCount (compat_map/cpp.toml:472)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD635]")]] bool is_available();
#endif
}  // namespace at::cuda
#endif
#endif
#endif  // ATen/cuda/CUDAContextLight.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)
namespace c10::xpu {
// c10::xpu::device_count -> at::accelerator::deviceCount (compat_map/cpp.toml:732)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD801]")]] DeviceIndex device_count();
#endif
// c10::xpu::device_count_ensure_non_zero -> at::accelerator::deviceCount (compat_map/cpp.toml:748)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::deviceCount [AD802]")]] DeviceIndex device_count_ensure_non_zero();
#endif
// c10::xpu::current_device -> at::accelerator::getDeviceIndex (compat_map/cpp.toml:765)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getDeviceIndex [AD803]")]] DeviceIndex current_device();
#endif
// c10::xpu::set_device -> at::accelerator::setDeviceIndex (compat_map/cpp.toml:782)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::setDeviceIndex [AD804]")]] void set_device(DeviceIndex device);
#endif
// c10::xpu::exchange_device -> at::accelerator::exchangeDevice (compat_map/cpp.toml:798)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::exchangeDevice [AD805]")]] DeviceIndex exchange_device(DeviceIndex device);
#endif
// c10::xpu::maybe_exchange_device -> at::accelerator::maybeExchangeDevice (compat_map/cpp.toml:814)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::maybeExchangeDevice [AD806]")]] DeviceIndex maybe_exchange_device(DeviceIndex to_device);
#endif
}  // namespace c10::xpu
#endif
#endif  // c10/xpu/XPUFunctions.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)
namespace c10::xpu {
// c10::xpu::getStreamFromPool -> c10::impl::VirtualGuardImpl::getNewStream (compat_map/cpp.toml:941)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::impl::VirtualGuardImpl::getNewStream [AD817]")]] XPUStream getStreamFromPool(const bool isHighPriority, DeviceIndex device);
#endif
// c10::xpu::getStreamFromPool -> c10::impl::VirtualGuardImpl::getNewStream (compat_map/cpp.toml:941)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::impl::VirtualGuardImpl::getNewStream [AD817]")]] XPUStream getStreamFromPool(const int priority, DeviceIndex device);
#endif
// c10::xpu::getCurrentXPUStream -> at::accelerator::getCurrentStream (compat_map/cpp.toml:957)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getCurrentStream [AD818]")]] XPUStream getCurrentXPUStream(DeviceIndex device);
#endif
// c10::xpu::setCurrentXPUStream -> at::accelerator::setCurrentStream (compat_map/cpp.toml:973)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::setCurrentStream [AD819]")]] void setCurrentXPUStream(XPUStream stream);
#endif
// c10::xpu::syncStreamsOnDevice -> at::accelerator::synchronizeDevice (compat_map/cpp.toml:989)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::synchronizeDevice [AD820]")]] void syncStreamsOnDevice(DeviceIndex device);
#endif
}  // namespace c10::xpu
#endif
#endif  // c10/xpu/XPUStream.h

#if (ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)
#if __has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)
#if !defined(__clang__)  // Clang's are above
namespace c10::xpu::XPUCachingAllocator {
// c10::xpu::XPUCachingAllocator::emptyCache -> at::accelerator::emptyCache (compat_map/cpp.toml:1005)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::emptyCache [AD821]")]] void emptyCache(MempoolId_t mempool_id);
#endif
// c10::xpu::XPUCachingAllocator::getDeviceStats -> at::accelerator::getDeviceStats (compat_map/cpp.toml:1022)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::getDeviceStats [AD822]")]] c10::CachingDeviceAllocator::DeviceStats getDeviceStats(DeviceIndex device);
#endif
// c10::xpu::XPUCachingAllocator::resetAccumulatedStats -> at::accelerator::resetAccumulatedStats (compat_map/cpp.toml:1038)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::resetAccumulatedStats [AD823]")]] void resetAccumulatedStats(DeviceIndex device);
#endif
// c10::xpu::XPUCachingAllocator::resetPeakStats -> at::accelerator::resetPeakStats (compat_map/cpp.toml:1054)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use at::accelerator::resetPeakStats [AD824]")]] void resetPeakStats(DeviceIndex device);
#endif
// c10::xpu::XPUCachingAllocator::recordStream -> c10::getDeviceAllocator (compat_map/cpp.toml:1070)
#if ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213
[[deprecated("use c10::getDeviceAllocator [AD825]")]] void recordStream(const DataPtr& dataPtr, XPUStream stream);
#endif
}  // namespace c10::xpu::XPUCachingAllocator
#endif
#endif
#endif  // c10/xpu/XPUCachingAllocator.h

// Note [Say once what is marked] in compat_map/generate.py.
#define ANYDEV_TD_STR2_(x) #x
#define ANYDEV_TD_STR_(x) ANYDEV_TD_STR2_(x)
#if (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>))) || (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)))
#define ANYDEV_TD_YES0_ " c10::cuda"
#define ANYDEV_TD_NO0_ ""
#elif ((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) || ((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213))
#define ANYDEV_TD_YES0_ ""
#define ANYDEV_TD_NO0_ "; not c10::cuda (needs cuda_runtime_api.h, c10/cuda/impl/cuda_cmake_macros.h on the include path)"
#else
#define ANYDEV_TD_YES0_ ""
#define ANYDEV_TD_NO0_ "; not c10::cuda (not recorded for this PyTorch release)"
#endif
#if (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)))
#define ANYDEV_TD_YES1_ " c10::cuda::CUDACachingAllocator"
#define ANYDEV_TD_NO1_ ""
#elif ((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213))
#define ANYDEV_TD_YES1_ ""
#define ANYDEV_TD_NO1_ "; not c10::cuda::CUDACachingAllocator (needs cuda_runtime_api.h, c10/cuda/impl/cuda_cmake_macros.h on the include path)"
#else
#define ANYDEV_TD_YES1_ ""
#define ANYDEV_TD_NO1_ "; not c10::cuda::CUDACachingAllocator (not recorded for this PyTorch release)"
#endif
#if (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>) && __has_include(<./cusparse.h>) && __has_include(<./cublas_v2.h>) && __has_include(<./cublasLt.h>) && __has_include(<./cusolverDn.h>)))
#define ANYDEV_TD_YES2_ " at::cuda"
#define ANYDEV_TD_NO2_ ""
#elif ((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213))
#define ANYDEV_TD_YES2_ ""
#define ANYDEV_TD_NO2_ "; not at::cuda (needs cuda_runtime_api.h, c10/cuda/impl/cuda_cmake_macros.h, cusparse.h, cublas_v2.h, cublasLt.h, cusolverDn.h on the include path)"
#else
#define ANYDEV_TD_YES2_ ""
#define ANYDEV_TD_NO2_ "; not at::cuda (not recorded for this PyTorch release)"
#endif
#if (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>))) || (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)))
#define ANYDEV_TD_YES3_ " c10::xpu"
#define ANYDEV_TD_NO3_ ""
#elif ((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) || ((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213))
#define ANYDEV_TD_YES3_ ""
#define ANYDEV_TD_NO3_ "; not c10::xpu (needs sycl/sycl.hpp, c10/xpu/impl/xpu_cmake_macros.h on the include path)"
#else
#define ANYDEV_TD_YES3_ ""
#define ANYDEV_TD_NO3_ "; not c10::xpu (not recorded for this PyTorch release)"
#endif
#if (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)))
#define ANYDEV_TD_YES4_ " c10::xpu::XPUCachingAllocator"
#define ANYDEV_TD_NO4_ ""
#elif ((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213))
#define ANYDEV_TD_YES4_ ""
#define ANYDEV_TD_NO4_ "; not c10::xpu::XPUCachingAllocator (needs sycl/sycl.hpp, c10/xpu/impl/xpu_cmake_macros.h on the include path)"
#else
#define ANYDEV_TD_YES4_ ""
#define ANYDEV_TD_NO4_ "; not c10::xpu::XPUCachingAllocator (not recorded for this PyTorch release)"
#endif
#if ((((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>))) || (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)))) || ((((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>)))) || ((((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./cuda_runtime_api.h>) && __has_include(<./c10/cuda/impl/cuda_cmake_macros.h>) && __has_include(<./cusparse.h>) && __has_include(<./cublas_v2.h>) && __has_include(<./cublasLt.h>) && __has_include(<./cusolverDn.h>)))) || ((((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>))) || (((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>)))) || ((((ANYDEV_TORCH_RELEASE_ >= 213 && ANYDEV_TORCH_RELEASE_ <= 213)) && (__has_include(<./sycl/sycl.hpp>) && __has_include(<./c10/xpu/impl/xpu_cmake_macros.h>))))
#if !defined(ANYDEV_TORCH_DEPRECATIONS_QUIET) && !defined(__NVCC__)
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic warning "-W#pragma-messages"
#pragma message("anydev/torch_deprecations.h: PyTorch " ANYDEV_TD_STR_(TORCH_VERSION_MAJOR) "." ANYDEV_TD_STR_(TORCH_VERSION_MINOR) ": marks the legacy calls of" ANYDEV_TD_YES0_ ANYDEV_TD_YES1_ ANYDEV_TD_YES2_ ANYDEV_TD_YES3_ ANYDEV_TD_YES4_ ANYDEV_TD_NO0_ ANYDEV_TD_NO1_ ANYDEV_TD_NO2_ ANYDEV_TD_NO3_ ANYDEV_TD_NO4_)
#pragma clang diagnostic pop
#else
#pragma message("anydev/torch_deprecations.h: PyTorch " ANYDEV_TD_STR_(TORCH_VERSION_MAJOR) "." ANYDEV_TD_STR_(TORCH_VERSION_MINOR) ": marks the legacy calls of" ANYDEV_TD_YES0_ ANYDEV_TD_YES1_ ANYDEV_TD_YES2_ ANYDEV_TD_YES3_ ANYDEV_TD_YES4_ ANYDEV_TD_NO0_ ANYDEV_TD_NO1_ ANYDEV_TD_NO2_ ANYDEV_TD_NO3_ ANYDEV_TD_NO4_)
#endif
#endif  // Note [Say once what is marked]
#else
#if !defined(ANYDEV_TORCH_DEPRECATIONS_QUIET) && !defined(__NVCC__)
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic warning "-W#pragma-messages"
#pragma message("anydev/torch_deprecations.h: PyTorch " ANYDEV_TD_STR_(TORCH_VERSION_MAJOR) "." ANYDEV_TD_STR_(TORCH_VERSION_MINOR) ": marks nothing" ANYDEV_TD_NO0_ ANYDEV_TD_NO1_ ANYDEV_TD_NO2_ ANYDEV_TD_NO3_ ANYDEV_TD_NO4_ " (`anydev scan` still reports their calls)")
#pragma clang diagnostic pop
#else
#pragma message("anydev/torch_deprecations.h: PyTorch " ANYDEV_TD_STR_(TORCH_VERSION_MAJOR) "." ANYDEV_TD_STR_(TORCH_VERSION_MINOR) ": marks nothing" ANYDEV_TD_NO0_ ANYDEV_TD_NO1_ ANYDEV_TD_NO2_ ANYDEV_TD_NO3_ ANYDEV_TD_NO4_ " (`anydev scan` still reports their calls)")
#endif
#endif  // Note [Say once what is marked]
#endif
#undef ANYDEV_TD_YES0_
#undef ANYDEV_TD_NO0_
#undef ANYDEV_TD_YES1_
#undef ANYDEV_TD_NO1_
#undef ANYDEV_TD_YES2_
#undef ANYDEV_TD_NO2_
#undef ANYDEV_TD_YES3_
#undef ANYDEV_TD_NO3_
#undef ANYDEV_TD_YES4_
#undef ANYDEV_TD_NO4_
#undef ANYDEV_TD_STR_
#undef ANYDEV_TD_STR2_

#undef ANYDEV_TORCH_RELEASE_
#else  // no TORCH_VERSION_MAJOR
#if !defined(ANYDEV_TORCH_DEPRECATIONS_QUIET) && !defined(__NVCC__)
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic warning "-W#pragma-messages"
#pragma message("anydev/torch_deprecations.h: no PyTorch headers (torch/version.h) on the include path: nothing is marked")
#pragma clang diagnostic pop
#else
#pragma message("anydev/torch_deprecations.h: no PyTorch headers (torch/version.h) on the include path: nothing is marked")
#endif
#endif  // Note [Say once what is marked]
#endif  // TORCH_VERSION_MAJOR
#endif  // __cplusplus && __has_include

#endif  // ANYDEV_TORCH_DEPRECATIONS_H_
