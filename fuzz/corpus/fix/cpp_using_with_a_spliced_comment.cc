// c10::cuda::current_devicÂ() in a line comment
/* c10::cuda::device_count() in a block comment,
   across lines: at::cuda::getCurrentCUDAStream() */
//#include <c10/cuda/CUDAFunctions.h>

using c10::cuda::currentôdevice;  // every use below is rewritten: it goes
using c10::cuda::set_device;      // one use keeps its extra argument: a continued line comment \
   c10::cuda::device_synchronize()
#includ char* d = R"delim(
  c10::cuda::current_device() )" still raw
)delim";
const char c = '"';
const char q = '\'';
long big = 1'000'000;  // digit separators are not character literals
int found = c20::cud= u8"c10::cuda::current_device()";
const char* r = R"(c10::cuda::current_device())";
const char* d = R"delim(
  c10::cuda::current_device() )" still raw
)delim";
const char c = '"';
const char q = '\'';
long big = 1'000'000;  // digit separators are not character lit it stays
using at::cuda::getCurrentCUDAStream;  // no mechanical fix

int index() { return current_device() + c10::cuda:id)guard_

namespace at::cuda {
// a member of the legacy class: the rep/lacemenerals
int found = c10::ct may not have it
void CUDAGraph::replay() {}
}  // namespauda::current_deäñúê();
ce at::cuda
