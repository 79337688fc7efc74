// @generated from compat_map/cpp.toml by compat_map/generate.py -- do not edit
//
// <anydev/compat/xpu.h>: the legacy c10::xpu API
// as [[deprecated]] inline forwarders in anydev::xpu onto anydev::acc. Each
// deprecation message names the replacement and the table row it came from.
// Legacy-style code compiles unchanged against anydev::xpu::..., and the
// compiler lists every line to migrate. Errors throw anydev::compat::Error,
// as the legacy API throws c10::Error.
#ifndef ANYDEV_COMPAT_XPU_H_
#define ANYDEV_COMPAT_XPU_H_

#include <anydev/compat/support.h>

namespace anydev::xpu {

// c10::xpu::device_count -> at::accelerator::deviceCount [AD801]
[[deprecated("use anydev::acc::DeviceCount (compat_map/cpp.toml:709)")]] inline int device_count() {
  return ::anydev::acc::DeviceCount();
}

// c10::xpu::device_count_ensure_non_zero -> at::accelerator::deviceCount [AD802]
[[deprecated("use anydev::acc::DeviceCount (compat_map/cpp.toml:724)")]] inline int device_count_ensure_non_zero() {
  const int count = ::anydev::acc::DeviceCount(); if (count == 0) ::anydev::compat::Check(::absl::FailedPreconditionError("No XPU devices are available.")); return count;
}

// c10::xpu::current_device -> at::accelerator::getDeviceIndex [AD803]
[[deprecated("use anydev::acc::CurrentDeviceIndex (compat_map/cpp.toml:740)")]] inline int current_device() {
  return ::anydev::compat::Value(::anydev::acc::CurrentDeviceIndex());
}

// c10::xpu::set_device -> at::accelerator::setDeviceIndex [AD804]
[[deprecated("use anydev::acc::SetDeviceIndex (compat_map/cpp.toml:756)")]] inline void set_device(int device) {
  ::anydev::compat::Check(::anydev::acc::SetDeviceIndex(device));
}

// c10::xpu::exchange_device -> at::accelerator::exchangeDevice [AD805]
[[deprecated("use anydev::acc::ExchangeDeviceIndex (compat_map/cpp.toml:771)")]] inline int exchange_device(int device) {
  return ::anydev::compat::Value(::anydev::acc::ExchangeDeviceIndex(device));
}

// c10::xpu::maybe_exchange_device -> at::accelerator::maybeExchangeDevice [AD806]
[[deprecated("use anydev::acc::MaybeExchangeDeviceIndex (compat_map/cpp.toml:786)")]] inline int maybe_exchange_device(int to_device) {
  return ::anydev::compat::Value(::anydev::acc::MaybeExchangeDeviceIndex(to_device));
}

// c10::xpu::device_synchronize -> at::accelerator::synchronizeDevice [AD807]
[[deprecated("use anydev::acc::Synchronize (compat_map/cpp.toml:801)")]] inline void device_synchronize(int device = -1) {
  ::anydev::compat::Check(::anydev::acc::Synchronize(device));
}

// c10::xpu::XPUStream -> c10::Stream [AD815]
using XPUStream [[deprecated("use anydev::Stream (compat_map/cpp.toml:886)")]] = ::anydev::Stream;

// c10::xpu::getStreamFromPool -> c10::impl::VirtualGuardImpl::getNewStream [AD817]
[[deprecated("use anydev::Stream::New (compat_map/cpp.toml:911)")]] inline ::anydev::Stream getStreamFromPool(bool isHighPriority = false, int device = -1) {
  return ::anydev::compat::NewStream(isHighPriority ? -1 : 0, device);
}

// c10::xpu::getCurrentXPUStream -> at::accelerator::getCurrentStream [AD818]
[[deprecated("use anydev::acc::CurrentStream (compat_map/cpp.toml:926)")]] inline ::anydev::Stream getCurrentXPUStream(int device = -1) {
  return ::anydev::compat::Value(::anydev::acc::CurrentStream(device));
}

// c10::xpu::setCurrentXPUStream -> at::accelerator::setCurrentStream [AD819]
[[deprecated("use anydev::acc::SetCurrentStream (compat_map/cpp.toml:941)")]] inline void setCurrentXPUStream(::anydev::Stream stream) {
  const int device = ::anydev::compat::Value(::anydev::acc::CurrentDeviceIndex()); ::anydev::compat::Check(::anydev::acc::SetCurrentStream(stream)); ::anydev::compat::Check(::anydev::acc::SetDeviceIndex(device));
}

// c10::xpu::syncStreamsOnDevice -> at::accelerator::synchronizeDevice [AD820]
[[deprecated("use anydev::acc::Synchronize (compat_map/cpp.toml:956)")]] inline void syncStreamsOnDevice(int device = -1) {
  ::anydev::compat::Check(::anydev::acc::Synchronize(device));
}

namespace XPUCachingAllocator {

// c10::xpu::XPUCachingAllocator::emptyCache -> at::accelerator::emptyCache [AD821]
[[deprecated("use anydev::acc::EmptyCache (compat_map/cpp.toml:971)")]] inline void emptyCache() {
  ::anydev::compat::Check(::anydev::acc::EmptyCache());
}

// c10::xpu::XPUCachingAllocator::getDeviceStats -> at::accelerator::getDeviceStats [AD822]
[[deprecated("use anydev::acc::GetDeviceStats (compat_map/cpp.toml:987)")]] inline auto getDeviceStats(int device) {
  return ::anydev::compat::Value(::anydev::acc::GetDeviceStats(device));
}

// c10::xpu::XPUCachingAllocator::resetAccumulatedStats -> at::accelerator::resetAccumulatedStats [AD823]
[[deprecated("use anydev::acc::ResetAccumulatedStats (compat_map/cpp.toml:1002)")]] inline void resetAccumulatedStats(int device) {
  ::anydev::compat::Check(::anydev::acc::ResetAccumulatedStats(device));
}

// c10::xpu::XPUCachingAllocator::resetPeakStats -> at::accelerator::resetPeakStats [AD824]
[[deprecated("use anydev::acc::ResetPeakStats (compat_map/cpp.toml:1017)")]] inline void resetPeakStats(int device) {
  ::anydev::compat::Check(::anydev::acc::ResetPeakStats(device));
}

}  // namespace XPUCachingAllocator

}  // namespace anydev::xpu

#endif  // ANYDEV_COMPAT_XPU_H_
