// The literal rules' detectors: their names, what a file must contain for
// each to find anything, and what the Python and C++ passes share.
#include "literal_rules.h"

#include <string_view>

namespace anydev::scan {

namespace internal {

const DetectorInfo kDetectors[kDetectorCount] = {
    {"py.device_call", Language::kPython, "cuda"},
    {"py.device_keyword", Language::kPython, "cuda"},
    {"py.to_call", Language::kPython, "cuda"},
    {"py.amp_device", Language::kPython, "cuda"},
    {"py.availability", Language::kPython, "cuda"},
    {"py.availability_statement", Language::kPython, "cuda"},
    {"py.cuda_method", Language::kPython, "cuda"},
    {"py.is_cuda", Language::kPython, "is_cuda"},
    {"py.device_type_compare", Language::kPython, "cuda"},
    {"py.nccl_backend", Language::kPython, "nccl"},
    {"cpp.device_type", Language::kCpp, "CUDA", "kCUDA"},
    {"cpp.cuda_method", Language::kCpp, "cuda"},
    {"cpp.is_cuda", Language::kCpp, "is_cuda"},
};

int DetectorByName(std::string_view name) {
  for (int d = 0; d < kDetectorCount; ++d) {
    if (kDetectors[d].name == name) return d;
  }
  return -1;
}

DeviceText ClassifyDeviceText(std::string_view body) {
  if (body == "cuda") return DeviceText::kCuda;
  if (body == "cpu") return DeviceText::kCpu;
  if (body == "nccl") return DeviceText::kNccl;
  if (body.size() > 5 && body.substr(0, 5) == "cuda:") {
    for (size_t i = 5; i < body.size(); ++i) {
      if (body[i] < '0' || body[i] > '9') return DeviceText::kOther;
    }
    return DeviceText::kCudaIndex;
  }
  return DeviceText::kOther;
}

}  // namespace internal

bool IsKnownDetector(std::string_view name) { return internal::DetectorByName(name) >= 0; }

}  // namespace anydev::scan
