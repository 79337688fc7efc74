#include "anydev/device.h"

#include <cctype>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace anydev {
namespace {

// `text` for an error message: control bytes (a NUL would end the message
// where Python reads it as a C string) written as \xNN, the rest as it is.
std::string Printable(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

constexpr const char* kTypeList = "cpu, cuda, hip, xpu, sim, mps, meta, privateuseone";

}  // namespace

absl::string_view DeviceTypeName(DeviceType t) {
  switch (t) {
    case DeviceType::kCPU: return "cpu";
    case DeviceType::kCUDA: return "cuda";
    case DeviceType::kHIP: return "hip";
    case DeviceType::kXPU: return "xpu";
    case DeviceType::kSim: return "sim";
    case DeviceType::kMPS: return "mps";
    case DeviceType::kMeta: return "meta";
    case DeviceType::kPrivateUse1: return "privateuseone";
  }
  return "unknown";
}

absl::StatusOr<DeviceType> ParseDeviceType(absl::string_view name) {
  for (DeviceType t : kAllDeviceTypes) {
    if (name == DeviceTypeName(t)) return t;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("Expected one of ", kTypeList,
                   " device type at start of device string: ", name));
}

absl::StatusOr<DeviceType> DeviceTypeFromInt(int64_t value) {
  for (DeviceType t : kAllDeviceTypes) {
    if (static_cast<int64_t>(t) == value) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "Unknown device type ", value,
      "; anydev knows cpu=0, cuda=1, hip=6, xpu=12, mps=13, meta=14, sim=20, privateuseone=64"));
}

// Note [Device string grammar]: c10/core/Device.cpp matches
// ([a-zA-Z_]+)(?::([1-9]\d*|0))? with a small state machine; we keep its
// states and messages so that an error here reads as PyTorch's. One
// difference: c10 narrows the index to int8 silently ("cuda:300" becomes
// cuda:44); we reject an index that does not fit instead.
absl::StatusOr<Device> Device::Parse(absl::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError("Device string must not be empty");
  }
  enum class State { kStart, kIndexStart, kIndexRest, kError };
  State state = State::kStart;
  std::string name, index_text;
  for (size_t i = 0; state != State::kError && i < text.size(); ++i) {
    const char ch = text[i];
    const unsigned char uch = static_cast<unsigned char>(ch);
    switch (state) {
      case State::kStart:
        if (ch == ':') {
          state = State::kIndexStart;
        } else if (std::isalpha(uch) || ch == '_') {
          name.push_back(ch);
        } else {
          state = State::kError;
        }
        break;
      case State::kIndexStart:
        if (std::isdigit(uch)) {
          index_text.push_back(ch);
          state = State::kIndexRest;
        } else {
          state = State::kError;
        }
        break;
      case State::kIndexRest:
        if (index_text[0] == '0' || !std::isdigit(uch)) {
          state = State::kError;
        } else {
          index_text.push_back(ch);
        }
        break;
      case State::kError:
        break;
    }
  }
  if (name.empty() || state == State::kError ||
      (state == State::kIndexStart && index_text.empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid device string: '", Printable(text), "'"));
  }
  int index = -1;
  if (!index_text.empty()) {
    if (!absl::SimpleAtoi(index_text, &index) || index > 127) {
      return absl::InvalidArgumentError(
          absl::StrCat("Could not parse device index '", index_text,
                       "' in device string '", text, "'"));
    }
  }
  absl::StatusOr<DeviceType> type = ParseDeviceType(name);
  if (!type.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected one of ", kTypeList,
                     " device type at start of device string: ", text));
  }
  return Device(*type, index);
}

absl::StatusOr<Device> Device::Create(DeviceType type, int64_t index) {
  if (index < -1) {
    return absl::InvalidArgumentError("Device index must not be negative");
  }
  if (index > 127) {
    return absl::InvalidArgumentError(
        absl::StrCat("Device index ", index, " is out of range for ",
                     DeviceTypeName(type), " (at most 127)"));
  }
  return Device(type, static_cast<int>(index));
}

std::string Device::ToString() const {
  if (index_ < 0) return std::string(DeviceTypeName(type_));
  return absl::StrCat(DeviceTypeName(type_), ":", index_);
}

std::ostream& operator<<(std::ostream& os, const Device& d) {
  return os << d.ToString();
}

std::ostream& operator<<(std::ostream& os, DeviceType t) {
  return os << DeviceTypeName(t);
}

}  // namespace anydev
