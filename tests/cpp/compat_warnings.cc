// Legacy-style code against <anydev/compat/cuda.h>: compat_warnings.cmake
// compiles it and checks that every legacy call is flagged with its
// replacement and the table row it came from.
#include <anydev/compat/cuda.h>

int LegacyCaller() {
  int n = anydev::cuda::device_count();
  anydev::cuda::set_device(0);
  anydev::cuda::CUDAGuard guard(0);
  anydev::Stream s = anydev::cuda::getCurrentCUDAStream();
  anydev::cuda::CUDACachingAllocator::emptyCache();
  (void)s;
  return n + anydev::cuda::current_device();
}
