// A project that keeps legacy names working with shims of its own: the names
// it defines in its own `namespace at { namespace cuda {` (or `c10::cuda`)
// block are its own, and its references to them are not findings. Names it
// does not define are.
#include <ATen/DeviceAccelerator.h>

namespace at {
namespace cuda {
inline int64_t getNumGPUs() { return at::accelerator::deviceCount(); }
struct CUDAEvent {
  void record() {}
};
int device_count();  // a declaration only: the real one
}  // namespace cuda
}  // namespace at

namespace c10::cuda {
inline c10::DeviceIndex current_device() noexcept { return at::accelerator::getDeviceIndex(); }
using CUDAGuard = c10::DeviceGuard;
}  // namespace c10::cuda

namespace mine {
inline void synchronize() { c10::cuda::device_synchronize(); }  // not a shim: reported
}  // namespace mine

void use() {
  int64_t n = at::cuda::getNumGPUs();          // the shim
  at::cuda::CUDAEvent e;                       // the shim
  auto i = c10::cuda::current_device();        // the shim
  c10::cuda::CUDAGuard g(c10::Device(c10::kCUDA, 0));  // the shim (an alias)
  int m = at::cuda::device_count();            // declared, not defined here: reported
  auto j = at::cuda::current_device();         // another spelling: reported
  (void)n, (void)i, (void)m, (void)j;
}

namespace at {
void later() { (void)cuda::getNumGPUs(); }     // the shim, unqualified inside namespace at
}  // namespace at
