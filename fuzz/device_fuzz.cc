// Fuzzes anydev::Device::Parse: any text gives a device or an error status,
// and a device's ToString() parses back to the same device.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "anydev/device.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const auto d = anydev::Device::Parse(text);
  if (!d.ok()) {
    FUZZ_CHECK(!d.status().message().empty());
    return 0;
  }
  const std::string s = d->ToString();
  const auto again = anydev::Device::Parse(s);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *d);
  return 0;
}
