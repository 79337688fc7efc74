#include <ATen/cuda/CUDAContext.h>

namespace cu = c10::cuda;
namespace alloc = cu::CUDACachingAllocator;

void aliases() {
  cu::set_device(0);
  alloc::emptyCache();
}

void directive() {
  current_device();  // not yet: no using-directive
  {
    using namespace c10::cuda;
    current_device();
    stream.current_device();  // a member
  }
  current_device();  // the directive ended with its block
}

using at::cuda::getCurrentCUDAStream;

auto declared() { return getCurrentCUDAStream(); }

namespace at {
namespace native {
void relative() {
  cuda::getCurrentCUDAStream();  // at::cuda, from inside namespace at
  auto s = ::at::cuda::getCurrentCUDAStream();
}
}  // namespace native
}  // namespace at

namespace mine {
namespace cuda {
int device_count();
}
void own() { cuda::device_count(); }  // mine::cuda, not c10::cuda
}  // namespace mine

using Stream = c10 :: cuda :: CUDAStream;
std::optional<at::cuda::CUDAStream> maybe;
int priority = c10::cuda::CUDAStream::priority_range().first;  // kept row
