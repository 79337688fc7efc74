#include <c10/cuda/CUDAFunctions.h>

#if 0
c10::cuda::current_device();  // compiled out
#if defined(NESTED)
#endif
don't mind the apostrophe
#else
int a = c10::cuda::device_count();  // the #else of an #if 0 is code
#endif

#if 1
int b = 0;
#else
int c = c10::cuda::device_count();  // the #else of an #if 1 is not
#endif

#if false /* off */
int d = c10::cuda::device_count();
#elif defined(USE_ROCM)
int e = c10::cuda::device_count();  // an #elif we cannot decide: code
#endif

#define CURRENT() ::c10::cuda::current_device()
#define SYNC_ALL()                 \
  do {                             \
    c10::cuda::device_synchronize(); \
  } while (0)
#error don't ship this
#pragma once
