// backends/level_zero/level_zero_api.h: the Level Zero loader as the xpu
// backend sees it: one symbol list for libze_loader, the struct of pointers it
// fills (fields named as the symbols), the result-name table the loader lacks
// (zeDriverGetLastErrorDescription is Level Zero 1.6; anydev builds against
// 1.4), and the checked-call macro.
//
// Only the vendor header's declarations are used: the loader is opened with
// dlopen when the backend is probed, never linked.
//
// Example:
//   ANYDEV_ZE_CHECK(ze, zeMemFree(context, ptr));
//   // -> Internal: zeMemFree(context, ptr): ZE_RESULT_ERROR_INVALID_ARGUMENT
//   //    (generic error code for invalid arguments) [backends/level_zero/...:123]
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LEVEL_ZERO_API_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LEVEL_ZERO_API_H_

#include <level_zero/ze_api.h>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "backends/common/vendor_library.h"

// Every loader entry point anydev calls.
#define ANYDEV_ZE_SYMBOLS(_)                     \
  _(zeInit)                                      \
  _(zeDriverGet)                                 \
  _(zeDriverGetProperties)                       \
  _(zeDriverGetApiVersion)                       \
  _(zeDeviceGet)                                 \
  _(zeDeviceGetProperties)                       \
  _(zeDeviceGetMemoryProperties)                 \
  _(zeDeviceGetCommandQueueGroupProperties)      \
  _(zeContextCreate)                             \
  _(zeCommandListCreateImmediate)                \
  _(zeCommandListAppendBarrier)                  \
  _(zeCommandListAppendMemoryCopy)               \
  _(zeCommandListAppendMemoryFill)               \
  _(zeCommandListAppendWriteGlobalTimestamp)     \
  _(zeEventPoolCreate)                           \
  _(zeEventCreate)                               \
  _(zeEventHostSignal)                           \
  _(zeEventHostSynchronize)                      \
  _(zeEventQueryStatus)                          \
  _(zeEventHostReset)                            \
  _(zeMemAllocDevice)                            \
  _(zeMemAllocHost)                              \
  _(zeMemFree)                                   \
  _(zeMemGetAllocProperties)

// Extensions a driver may lack; null when the loader does not export them.
#define ANYDEV_ZE_OPTIONAL_SYMBOLS(_) \
  _(zeDevicePciGetPropertiesExt)

namespace anydev::level_zero {

#define ANYDEV_ZE_DECLARE_(symbol) ANYDEV_DECLARE_VENDOR_FN(symbol, symbol)
// The loader's entry points, resolved from the loaded libze_loader.
struct ZeLoader {
  ANYDEV_ZE_SYMBOLS(ANYDEV_ZE_DECLARE_)
  ANYDEV_ZE_OPTIONAL_SYMBOLS(ANYDEV_ZE_DECLARE_)
};
#undef ANYDEV_ZE_DECLARE_

// Resolves every symbol of ANYDEV_ZE_SYMBOLS (and the optional ones) from `lib`.
absl::Status LoadZeLoader(const internal::VendorLibrary& lib, ZeLoader* table);

// Returns "ZE_RESULT_ERROR_DEVICE_LOST" for a result.
const char* ZeResultName(ze_result_t result);
// Returns the header's description of a result ("device hung, reset, was
// removed, or driver update occurred").
const char* ZeResultText(ze_result_t result);
// Returns "ZE_RESULT_X (text)".
std::string ZeResultString(ze_result_t result);
// The canonical code for a result.
absl::StatusCode ZeResultCode(ze_result_t result);

// The slow path of ANYDEV_ZE_CHECK.
ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status ZeCallFailed(ze_result_t result,
                                                                      const char* call,
                                                                      const char* file, int line);

inline absl::Status ZeCheckResult(ze_result_t result, const char* call, const char* file,
                                  int line) {
  if (ABSL_PREDICT_TRUE(result == ZE_RESULT_SUCCESS)) return absl::OkStatus();
  return ZeCallFailed(result, call, file, line);
}

}  // namespace anydev::level_zero

// Evaluates `table.call` (a ZeLoader field named as the symbol) and returns its status.
#define ANYDEV_ZE_STATUS(table, call) \
  ::anydev::level_zero::ZeCheckResult((table).call, #call, __FILE__, __LINE__)

// Evaluates `table.call` and returns its error from the enclosing function.
#define ANYDEV_ZE_CHECK(table, call)                                    \
  do {                                                                  \
    ::absl::Status anydev_ze_status_ = ANYDEV_ZE_STATUS(table, call);   \
    if (ABSL_PREDICT_FALSE(!anydev_ze_status_.ok())) return anydev_ze_status_; \
  } while (0)

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LEVEL_ZERO_API_H_
