// The extension's host side, written against c10::cuda / at::cuda as many
// PyTorch extensions are. `anydev scan` reports each legacy symbol here.
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDACachingAllocator.h>

namespace legacy_ops {

void launch_on(int device, void (*launch)(void* stream)) {
  at::cuda::CUDAGuard guard(device);                           // AD6xx
  c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream();
  launch(stream.stream());
  stream.synchronize();
}

void release_cache() {
  // "c10::cuda::CUDACachingAllocator::emptyCache()" in a string is not a call,
  /* and neither is c10::cuda::device_synchronize() in a comment. */
  c10::cuda::CUDACachingAllocator::emptyCache();
}

int pick(int rank) {
  namespace cu = c10::cuda;
  const int n = cu::device_count();
  cu::set_device(rank % n);
  return cu::current_device();
}

#if 0
void dead_code() { c10::cuda::device_synchronize(); }   // never compiled, not a finding
#endif

}  // namespace legacy_ops
