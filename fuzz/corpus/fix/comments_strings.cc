// c10::cuda::current_device() in a line comment
/* c10::cuda::device_count() in a block comment,
   across lines: at::cuda::getCurrentCUDAStream() */
// a continued line comment \
   c10::cuda::device_synchronize()
#include <c10/cuda/CUDAFunctions.h>

const char* a = "c10::cuda::current_device()";
const char* b = "escaped \" c10::cuda::current_device() \\";
const wchar_t* w = L"c10::cuda::current_device()";
const char* u = u8"c10::cuda::current_device()";
const char* r = R"(c10::cuda::current_device())";
const char* d = R"delim(
  c10::cuda::current_device() )" still raw
)delim";
const char c = '"';
const char q = '\'';
long big = 1'000'000;  // digit separators are not character literals
int found = c10::cuda::current_device();
