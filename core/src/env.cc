#include "internal/env.h"

#include <cmath>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace anydev::internal {

std::optional<std::string> GetEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

absl::StatusOr<std::optional<int64_t>> GetEnvInt(const char* name, int64_t min, int64_t max) {
  std::optional<std::string> text = GetEnv(name);
  if (!text) return std::nullopt;
  int64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, "='", *text, "' is not an integer in [", min, ", ", max, "]"));
  }
  return value;
}

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text, absl::string_view what) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "='", text, "' is not a byte size (", why,
        "; examples: 1073741824, 512MiB, 2GiB, 1.5GB)"));
  };
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t num_end = 0;
  while (num_end < s.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(s[num_end])) || s[num_end] == '.')) {
    ++num_end;
  }
  absl::string_view number = s.substr(0, num_end);
  std::string unit = absl::AsciiStrToLower(absl::StripAsciiWhitespace(s.substr(num_end)));
  double value = 0;
  if (number.empty() || !absl::SimpleAtod(number, &value) || !std::isfinite(value)) {
    return bad("no number");
  }
  struct Unit { const char* name; double scale; };
  static constexpr Unit kUnits[] = {
      {"", 1},          {"b", 1},
      {"k", 1024.0},    {"kb", 1e3},  {"kib", 1024.0},
      {"m", 1048576.0}, {"mb", 1e6},  {"mib", 1048576.0},
      {"g", 1073741824.0}, {"gb", 1e9}, {"gib", 1073741824.0},
      {"t", 1099511627776.0}, {"tb", 1e12}, {"tib", 1099511627776.0},
  };
  for (const Unit& u : kUnits) {
    if (unit == u.name) {
      const double bytes = value * u.scale;
      if (bytes >= 18446744073709549568.0) return bad("too large");
      if (u.scale == 1 && number.find('.') != absl::string_view::npos) {
        return bad("a fraction of a byte");
      }
      return static_cast<uint64_t>(bytes);
    }
  }
  return bad(absl::StrCat("unknown unit '", unit, "'"));
}

absl::StatusOr<std::optional<uint64_t>> GetEnvBytes(const char* name, uint64_t min) {
  std::optional<std::string> text = GetEnv(name);
  if (!text) return std::nullopt;
  absl::StatusOr<uint64_t> bytes = ParseByteSize(*text, name);
  if (!bytes.ok()) return bytes.status();
  if (*bytes < min) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, "='", *text, "' is below the minimum of ", min, " bytes"));
  }
  return *bytes;
}

}  // namespace anydev::internal
