// internal/env.h: strict parsing of ANYDEV_* environment variables.
//
// A variable that is unset or empty yields nullopt; a malformed one is an
// InvalidArgument error that quotes the variable and its value.
#ifndef ANYDEV_INTERNAL_ENV_H_
#define ANYDEV_INTERNAL_ENV_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace anydev::internal {

// Returns the variable's value, or nullopt when it is unset or empty.
std::optional<std::string> GetEnv(const char* name);

// Parses an integer in [min, max].
absl::StatusOr<std::optional<int64_t>> GetEnvInt(const char* name, int64_t min, int64_t max);

// Parses a byte size: a number with an optional unit, B, K/KB/KiB, M/MB/MiB,
// G/GB/GiB, T/TB/TiB (KB = 1000, KiB and bare K = 1024), fractions allowed
// ("1.5GiB"). Must be at least `min` bytes.
absl::StatusOr<std::optional<uint64_t>> GetEnvBytes(const char* name, uint64_t min);

// Parses a byte size string as GetEnvBytes does; `what` names it in errors.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text, absl::string_view what);

}  // namespace anydev::internal

#endif  // ANYDEV_INTERNAL_ENV_H_
