// Internal to core/scan: the detectors of the literal rules (device literals
// and idioms, compat_map/literals.toml, codes AD9xx). A Rule names its
// detector; the Python and C++ scanners run the detectors of the rules they
// were given over their token streams after resolving names (python_scan.cc:
// PyLiterals; cpp_scan.cc: CppLiterals).
#ifndef ANYDEV_SCAN_LITERAL_RULES_H_
#define ANYDEV_SCAN_LITERAL_RULES_H_

#include <cstdint>
#include <string_view>

#include "anydev/scan.h"

namespace anydev::scan::internal {

enum Detector : int {
  kPyDeviceCall,            // torch.device("cuda"[, i]), torch.device(f"cuda:{i}")
  kPyDeviceKeyword,         // device="cuda" / map_location="cuda" keyword of a call
  kPyToCall,                // .to("cuda"), .to(device="cuda")
  kPyAmpDevice,             // torch.autocast("cuda"), torch.amp.GradScaler("cuda")
  kPyAvailability,          // "cuda" if torch.cuda.is_available() else "cpu"
  kPyAvailabilityStatement, // if torch.cuda.is_available(): d = "cuda" / else: d = "cpu"
  kPyCudaMethod,            // x.cuda(...)
  kPyIsCuda,                // x.is_cuda
  kPyDeviceTypeCompare,     // x.device.type == "cuda"
  kPyNcclBackend,           // init_process_group("nccl"), backend="nccl"
  kCppDeviceType,           // at::kCUDA, c10::DeviceType::CUDA
  kCppCudaMethod,           // t.cuda()
  kCppIsCuda,               // t.is_cuda()
  kDetectorCount,
};

struct DetectorInfo {
  std::string_view name;  // as a Rule names it ("py.device_call")
  Language language;
  std::string_view needle;  // a string every finding of it contains
  // The whole identifiers (or, in a Python string, words: Note [Needles as
  // words] in python_scan.cc) one of which every finding of it holds:
  // `needle` and, where not empty, `also` (at::kCUDA holds "CUDA" inside a
  // word only).
  std::string_view also = {};
};

// Indexed by Detector.
extern const DetectorInfo kDetectors[kDetectorCount];

// Returns the detector named `name`, or -1.
int DetectorByName(std::string_view name);

// What a Python string literal holds, for the detectors. `body` is the text
// between the quotes of a plain (not f-, not bytes, not triple-quoted) string.
enum class DeviceText : uint8_t {
  kOther,
  kCuda,       // "cuda"
  kCudaIndex,  // "cuda:0"
  kCpu,        // "cpu"
  kNccl,       // "nccl"
};
DeviceText ClassifyDeviceText(std::string_view body);

}  // namespace anydev::scan::internal

#endif  // ANYDEV_SCAN_LITERAL_RULES_H_
