// env_test: strict parsing of ANYDEV_* variables (internal/env.h). The
// variables used here are private to this test (ANYDEV_TEST_ENV_*), set and
// unset around each case, so the test does not depend on the caller's
// environment.
#include "internal/env.h"

#include <stdlib.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace anydev::internal {
namespace {

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kTiB = uint64_t{1} << 40;

struct SizeCase {
  const char* text;
  uint64_t bytes;
};

TEST(ParseByteSize, AcceptsNumbersWithUnits) {
  const SizeCase cases[] = {
      {"1073741824", kGiB},
      {"0", 0},
      {"1", 1},
      {"1B", 1},
      {"2GiB", 2 * kGiB},
      {"512MiB", 512 * kMiB},
      {"1.5GB", 1500000000},
      {"1.5GiB", kGiB + kGiB / 2},
      {"1K", kKiB},  // a bare K is binary, as in most tools
      {"1KB", 1000},
      {"1KiB", kKiB},
      {"64M", 64 * kMiB},
      {"3MB", 3000000},
      {"1G", kGiB},
      {"2T", 2 * kTiB},
      {"1TB", 1000000000000},
      {"1TiB", kTiB},
      {"2gib", 2 * kGiB},  // units are case-insensitive
      {"512 MiB", 512 * kMiB},
      {"  64MiB  ", 64 * kMiB},
      {"0.5KiB", 512},
  };
  for (const SizeCase& c : cases) {
    SCOPED_TRACE(c.text);
    ASSERT_OK_AND_ASSIGN(uint64_t bytes, ParseByteSize(c.text, "SIZE"));
    EXPECT_EQ(bytes, c.bytes);
  }
}

TEST(ParseByteSize, RejectsMalformedSizesNamingTheVariableAndValue) {
  for (const char* bad : {"", "abc", "1.5", "-1", "10 parsecs", "1e999", "GiB", "1.2.3",
                          "1 G i B", "0x10", "99999999999T"}) {
    SCOPED_TRACE(bad);
    absl::StatusOr<uint64_t> r = ParseByteSize(bad, "ANYDEV_SIM_MEMORY");
    ASSERT_FALSE(r.ok()) << "parsed as " << *r;
    EXPECT_STATUS(r, kInvalidArgument, absl::StrCat("ANYDEV_SIM_MEMORY='", bad, "'"));
    // The message shows what a valid value looks like.
    EXPECT_STATUS(r, kInvalidArgument, "512MiB");
  }
  EXPECT_STATUS(ParseByteSize("10 parsecs", "X"), kInvalidArgument, "unknown unit 'parsecs'");
  EXPECT_STATUS(ParseByteSize("1.5", "X"), kInvalidArgument, "a fraction of a byte");
  EXPECT_STATUS(ParseByteSize("99999999999T", "X"), kInvalidArgument, "too large");
}

// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, /*overwrite=*/1);
    }
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

constexpr char kVar[] = "ANYDEV_TEST_ENV_VALUE";

TEST(GetEnv, UnsetAndEmptyAreAbsent) {
  {
    ScopedEnv e(kVar, nullptr);
    EXPECT_EQ(GetEnv(kVar), std::nullopt);
  }
  {
    ScopedEnv e(kVar, "");
    EXPECT_EQ(GetEnv(kVar), std::nullopt);
  }
  {
    ScopedEnv e(kVar, "sim");
    EXPECT_EQ(GetEnv(kVar), std::optional<std::string>("sim"));
  }
}

TEST(GetEnvInt, ParsesIntegersInRange) {
  {
    ScopedEnv e(kVar, nullptr);
    ASSERT_OK_AND_ASSIGN(std::optional<int64_t> v, GetEnvInt(kVar, 1, 64));
    EXPECT_EQ(v, std::nullopt);
  }
  {
    ScopedEnv e(kVar, "");
    ASSERT_OK_AND_ASSIGN(std::optional<int64_t> v, GetEnvInt(kVar, 1, 64));
    EXPECT_EQ(v, std::nullopt);
  }
  for (const auto& [text, value] : {std::pair<const char*, int64_t>{"1", 1}, {"4", 4}, {"64", 64}}) {
    SCOPED_TRACE(text);
    ScopedEnv e(kVar, text);
    ASSERT_OK_AND_ASSIGN(std::optional<int64_t> v, GetEnvInt(kVar, 1, 64));
    EXPECT_EQ(v, std::optional<int64_t>(value));
  }
}

TEST(GetEnvInt, RejectsBadValuesNamingTheVariableAndValue) {
  for (const char* bad : {"abc", "0", "65", "-1", "1.5", "4x", "99999999999999999999999"}) {
    SCOPED_TRACE(bad);
    ScopedEnv e(kVar, bad);
    absl::StatusOr<std::optional<int64_t>> v = GetEnvInt(kVar, 1, 64);
    EXPECT_STATUS(v, kInvalidArgument, absl::StrCat(kVar, "='", bad, "'"));
    EXPECT_STATUS(v, kInvalidArgument, "[1, 64]");
  }
}

TEST(GetEnvBytes, ParsesAndChecksTheMinimum) {
  {
    ScopedEnv e(kVar, nullptr);
    ASSERT_OK_AND_ASSIGN(std::optional<uint64_t> v, GetEnvBytes(kVar, 1));
    EXPECT_EQ(v, std::nullopt);
  }
  {
    ScopedEnv e(kVar, "64MiB");
    ASSERT_OK_AND_ASSIGN(std::optional<uint64_t> v, GetEnvBytes(kVar, 1));
    EXPECT_EQ(v, std::optional<uint64_t>(64 * kMiB));
  }
  {
    ScopedEnv e(kVar, "0");
    EXPECT_STATUS(GetEnvBytes(kVar, 1), kInvalidArgument,
                  absl::StrCat(kVar, "='0' is below the minimum of 1 bytes"));
  }
  {
    ScopedEnv e(kVar, "junk");
    EXPECT_STATUS(GetEnvBytes(kVar, 1), kInvalidArgument, absl::StrCat(kVar, "='junk'"));
  }
}

}  // namespace
}  // namespace anydev::internal
