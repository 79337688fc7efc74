#pragma once
#include <c10/cuda/CUDAStream.h>

namespace mylib {
inline c10::cuda::CUDAStream current() { return c10::cuda::getCurrentCUDAStream(); }
}  // namespace mylib
