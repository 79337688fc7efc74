// backends/gpu_common/gpu_check.h: the checked call for the CUDA and HIP
// runtimes, whose tables of function pointers (CudaRt, HipRt) share field
// names (SetDevice, StreamQuery, ...).
//
// The macro records the call as written, with the vendor's symbol in place of
// the table's field name, the vendor's error name and text, and file:line;
// the fast path is one compare, the message is built out of line:
//
//   ANYDEV_GPU_CHECK(rt, SetDevice(device));
//   // -> Internal: cudaSetDevice(device): cudaErrorInvalidDevice (invalid device
//   //    ordinal) [backends/gpu_common/gpu_backend.h:123]
#ifndef ANYDEV_BACKENDS_GPU_COMMON_GPU_CHECK_H_
#define ANYDEV_BACKENDS_GPU_COMMON_GPU_CHECK_H_

#include <string>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace anydev::gpu {

// Returns the part of a __FILE__ path from "backends/" on, for messages.
inline absl::string_view ShortFile(absl::string_view file) {
  const size_t at = file.rfind("backends/");
  return at == absl::string_view::npos ? file : file.substr(at);
}

// Returns "cudaErrorInvalidValue (invalid argument)": the vendor's name for
// `error` and its text, through the loaded library (the text is left out when
// the runtime gives only the name again, as HIP 5 does).
template <typename Table>
std::string ErrorText(const Table& rt, typename Table::Api::Error error) {
  const char* name = rt.GetErrorName != nullptr ? rt.GetErrorName(error) : nullptr;
  const char* text = rt.GetErrorString != nullptr ? rt.GetErrorString(error) : nullptr;
  std::string out = name != nullptr ? name : absl::StrCat("error ", static_cast<int>(error));
  if (text != nullptr && out != text) absl::StrAppend(&out, " (", text, ")");
  return out;
}

// The slow path of ANYDEV_GPU_CHECK: `call` is the text of the call as
// written against the table ("SetDevice(device)").
template <typename Table>
ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status CallFailed(
    const Table& rt, typename Table::Api::Error error, absl::string_view call,
    const char* file, int line) {
  const size_t paren = call.find('(');
  const absl::string_view field = call.substr(0, paren);
  const char* symbol = Table::SymbolOf(field);
  return absl::Status(
      Table::Api::CodeOf(error),
      absl::StrCat(symbol != nullptr ? absl::string_view(symbol) : field,
                   paren == absl::string_view::npos ? "" : call.substr(paren), ": ",
                   ErrorText(rt, error), " [", ShortFile(file), ":", line, "]"));
}

// Returns OK for success, else CallFailed's status.
template <typename Table>
inline absl::Status CheckResult(const Table& rt, typename Table::Api::Error error,
                                const char* call, const char* file, int line) {
  if (ABSL_PREDICT_TRUE(error == Table::Api::kSuccess)) return absl::OkStatus();
  return CallFailed(rt, error, call, file, line);
}

}  // namespace anydev::gpu

// Evaluates `rt.call` and returns its absl::Status.
#define ANYDEV_GPU_STATUS(rt, call) \
  ::anydev::gpu::CheckResult((rt), (rt).call, #call, __FILE__, __LINE__)

// Evaluates `rt.call` and returns its error from the enclosing function.
#define ANYDEV_GPU_CHECK(rt, call)                                       \
  do {                                                                   \
    ::absl::Status anydev_gpu_status_ = ANYDEV_GPU_STATUS(rt, call);     \
    if (ABSL_PREDICT_FALSE(!anydev_gpu_status_.ok())) return anydev_gpu_status_; \
  } while (0)

// The status for an error already in hand, from the call written as `call`.
#define ANYDEV_GPU_FAILED(rt, error, call) \
  ::anydev::gpu::CallFailed((rt), (error), #call, __FILE__, __LINE__)

#endif  // ANYDEV_BACKENDS_GPU_COMMON_GPU_CHECK_H_
