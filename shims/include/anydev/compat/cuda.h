// @generated from compat_map/cpp.toml by compat_map/generate.py -- do not edit
//
// <anydev/compat/cuda.h>: the legacy c10::cuda/at::cuda API
// as [[deprecated]] inline forwarders in anydev::cuda onto anydev::acc. Each
// deprecation message names the replacement and the table row it came from.
// Legacy-style code compiles unchanged against anydev::cuda::..., and the
// compiler lists every line to migrate. Errors throw anydev::compat::Error,
// as the legacy API throws c10::Error.
#ifndef ANYDEV_COMPAT_CUDA_H_
#define ANYDEV_COMPAT_CUDA_H_

#include <anydev/compat/support.h>

namespace anydev::cuda {

// c10::cuda::device_count -> at::accelerator::deviceCount [AD601]
[[deprecated("use anydev::acc::DeviceCount (compat_map/cpp.toml:6)")]] inline int device_count() {
  return ::anydev::acc::DeviceCount();
}

// c10::cuda::device_count_ensure_non_zero -> at::accelerator::deviceCount [AD602]
[[deprecated("use anydev::acc::DeviceCount (compat_map/cpp.toml:21)")]] inline int device_count_ensure_non_zero() {
  const int count = ::anydev::acc::DeviceCount(); if (count == 0) ::anydev::compat::Check(::absl::FailedPreconditionError("No CUDA GPUs are available")); return count;
}

// c10::cuda::current_device -> at::accelerator::getDeviceIndex [AD603]
[[deprecated("use anydev::acc::CurrentDeviceIndex (compat_map/cpp.toml:37)")]] inline int current_device() {
  return ::anydev::compat::Value(::anydev::acc::CurrentDeviceIndex());
}

// c10::cuda::set_device -> at::accelerator::setDeviceIndex [AD604]
[[deprecated("use anydev::acc::SetDeviceIndex (compat_map/cpp.toml:53)")]] inline void set_device(int device, bool force = false) {
  static_cast<void>(force); ::anydev::compat::Check(::anydev::acc::SetDeviceIndex(device));
}

// c10::cuda::device_synchronize -> at::accelerator::synchronizeDevice [AD605]
[[deprecated("use anydev::acc::Synchronize (compat_map/cpp.toml:69)")]] inline void device_synchronize() {
  ::anydev::compat::Check(::anydev::acc::Synchronize());
}

// c10::cuda::ExchangeDevice -> at::accelerator::exchangeDevice [AD606]
[[deprecated("use anydev::acc::ExchangeDeviceIndex (compat_map/cpp.toml:86)")]] inline int ExchangeDevice(int device) {
  return ::anydev::compat::Value(::anydev::acc::ExchangeDeviceIndex(device));
}

// c10::cuda::MaybeExchangeDevice -> at::accelerator::maybeExchangeDevice [AD607]
[[deprecated("use anydev::acc::MaybeExchangeDeviceIndex (compat_map/cpp.toml:101)")]] inline int MaybeExchangeDevice(int to_device) {
  return ::anydev::compat::Value(::anydev::acc::MaybeExchangeDeviceIndex(to_device));
}

// c10::cuda::CUDAStream -> c10::Stream [AD619]
using CUDAStream [[deprecated("use anydev::Stream (compat_map/cpp.toml:238)")]] = ::anydev::Stream;

// c10::cuda::getStreamFromPool -> c10::impl::VirtualGuardImpl::getNewStream [AD621]
[[deprecated("use anydev::Stream::New (compat_map/cpp.toml:263)")]] inline ::anydev::Stream getStreamFromPool(bool isHighPriority = false, int device = -1) {
  return ::anydev::compat::NewStream(isHighPriority ? -1 : 0, device);
}

// c10::cuda::getDefaultCUDAStream -> c10::impl::VirtualGuardImpl::getDefaultStream [AD624]
[[deprecated("use anydev::Stream (compat_map/cpp.toml:298)")]] inline ::anydev::Stream getDefaultCUDAStream(int device_index = -1) {
  return ::anydev::Stream::Default(::anydev::compat::Value(::anydev::acc::CurrentStream(device_index)).device());
}

// c10::cuda::getCurrentCUDAStream -> at::accelerator::getCurrentStream [AD625]
[[deprecated("use anydev::acc::CurrentStream (compat_map/cpp.toml:313)")]] inline ::anydev::Stream getCurrentCUDAStream(int device_index = -1) {
  return ::anydev::compat::Value(::anydev::acc::CurrentStream(device_index));
}

// c10::cuda::setCurrentCUDAStream -> at::accelerator::setCurrentStream [AD626]
[[deprecated("use anydev::acc::SetCurrentStream (compat_map/cpp.toml:328)")]] inline void setCurrentCUDAStream(::anydev::Stream stream) {
  const int device = ::anydev::compat::Value(::anydev::acc::CurrentDeviceIndex()); ::anydev::compat::Check(::anydev::acc::SetCurrentStream(stream)); ::anydev::compat::Check(::anydev::acc::SetDeviceIndex(device));
}

// c10::cuda::CUDAGuard -> c10::DeviceGuard [AD627]
using CUDAGuard [[deprecated("use anydev::compat::DeviceGuard (compat_map/cpp.toml:343)")]] = ::anydev::compat::DeviceGuard;

// c10::cuda::OptionalCUDAGuard -> c10::OptionalDeviceGuard [AD628]
using OptionalCUDAGuard [[deprecated("use anydev::compat::OptionalDeviceGuard (compat_map/cpp.toml:358)")]] = ::anydev::compat::OptionalDeviceGuard;

// c10::cuda::CUDAStreamGuard -> c10::StreamGuard [AD629]
using CUDAStreamGuard [[deprecated("use anydev::compat::StreamGuard (compat_map/cpp.toml:373)")]] = ::anydev::compat::StreamGuard;

// c10::cuda::OptionalCUDAStreamGuard -> c10::OptionalStreamGuard [AD630]
using OptionalCUDAStreamGuard [[deprecated("use anydev::compat::OptionalStreamGuard (compat_map/cpp.toml:388)")]] = ::anydev::compat::OptionalStreamGuard;

// at::cuda::CUDAEvent -> c10::Event [AD632]
using CUDAEvent [[deprecated("use anydev::compat::Event (compat_map/cpp.toml:416)")]] = ::anydev::compat::Event;

// at::cuda::getNumGPUs -> at::accelerator::deviceCount [AD634]
[[deprecated("use anydev::acc::DeviceCount (compat_map/cpp.toml:442)")]] inline int64_t getNumGPUs() {
  return ::anydev::acc::DeviceCount();
}

// at::cuda::is_available -> at::accelerator::deviceCount [AD635]
[[deprecated("use anydev::acc::IsAvailable (compat_map/cpp.toml:456)")]] inline bool is_available() {
  return ::anydev::acc::IsAvailable();
}

namespace CUDACachingAllocator {

// c10::cuda::CUDACachingAllocator::emptyCache -> at::accelerator::emptyCache [AD701]
[[deprecated("use anydev::acc::EmptyCache (compat_map/cpp.toml:490)")]] inline void emptyCache() {
  ::anydev::compat::Check(::anydev::acc::EmptyCache());
}

// c10::cuda::CUDACachingAllocator::getDeviceStats -> at::accelerator::getDeviceStats [AD702]
[[deprecated("use anydev::acc::GetDeviceStats (compat_map/cpp.toml:506)")]] inline auto getDeviceStats(int device) {
  return ::anydev::compat::Value(::anydev::acc::GetDeviceStats(device));
}

// c10::cuda::CUDACachingAllocator::resetAccumulatedStats -> at::accelerator::resetAccumulatedStats [AD703]
[[deprecated("use anydev::acc::ResetAccumulatedStats (compat_map/cpp.toml:521)")]] inline void resetAccumulatedStats(int device) {
  ::anydev::compat::Check(::anydev::acc::ResetAccumulatedStats(device));
}

// c10::cuda::CUDACachingAllocator::resetPeakStats -> at::accelerator::resetPeakStats [AD704]
[[deprecated("use anydev::acc::ResetPeakStats (compat_map/cpp.toml:536)")]] inline void resetPeakStats(int device) {
  ::anydev::compat::Check(::anydev::acc::ResetPeakStats(device));
}

}  // namespace CUDACachingAllocator

}  // namespace anydev::cuda

#endif  // ANYDEV_COMPAT_CUDA_H_
