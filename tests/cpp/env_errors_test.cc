// env_errors_test: how the runtime answers a bad or forcing ANYDEV_*
// configuration. The accelerator is resolved once per process, so each case
// is its own ctest entry that sets the environment and selects one test with
// --gtest_filter (see tests/cpp/CMakeLists.txt). A case run without its
// environment skips; ctest treats a skip of these entries as a failure, so a
// registration that forgets its environment cannot pass silently.
//
// Every bad configuration must: fail GetAccelerator/CurrentAccelerator/
// DefaultDeviceType with the canonical code and a message naming the variable
// and its value, leave acc::DeviceCount() at 0 and acc::IsAvailable() false,
// and never crash.
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "anydev/anydev.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace anydev {
namespace {

// True when `name` is set to `value` (nullptr: unset or empty).
bool EnvIs(const char* name, const char* value) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return value == nullptr;
  return value != nullptr && std::strcmp(v, value) == 0;
}

#define REQUIRE_ENV(accelerator, sim_devices, sim_memory)                              \
  do {                                                                                 \
    if (!EnvIs("ANYDEV_ACCELERATOR", accelerator) ||                                   \
        !EnvIs("ANYDEV_SIM_DEVICES", sim_devices) || !EnvIs("ANYDEV_SIM_MEMORY", sim_memory)) { \
      GTEST_SKIP() << "run by ctest with its environment (tests/cpp/CMakeLists.txt)";  \
    }                                                                                  \
  } while (0)

// Checks everything a bad configuration must do; `code` and every string in
// `parts` describe the resolution error.
void ExpectBadConfiguration(absl::StatusCode code, std::initializer_list<const char*> parts) {
  absl::StatusOr<DeviceType> acc_type = acc::GetAccelerator();
  ASSERT_FALSE(acc_type.ok()) << "resolved to " << *acc_type;
  EXPECT_EQ(acc_type.status().code(), code) << acc_type.status();
  for (const char* part : parts) {
    EXPECT_TRUE(absl::StrContains(acc_type.status().message(), part))
        << "\"" << part << "\" not in: " << acc_type.status();
  }
  // The same error from every entry point that resolves the accelerator.
  EXPECT_EQ(acc::CurrentAccelerator().status(), acc_type.status());
  EXPECT_EQ(DefaultDeviceType().status(), acc_type.status());
  EXPECT_EQ(acc::CurrentDeviceIndex().status(), acc_type.status());
  EXPECT_EQ(acc::SetDeviceIndex(0), acc_type.status());
  EXPECT_EQ(acc::CurrentStream().status(), acc_type.status());
  EXPECT_EQ(acc::Synchronize(), acc_type.status());
  // Never fails, never crashes: no devices.
  EXPECT_EQ(acc::DeviceCount(), 0);
  EXPECT_FALSE(acc::IsAvailable());
  EXPECT_EQ(DeviceCount(), 0);
  EXPECT_FALSE(IsAvailable());
  // The CPU is still there when asked for by name.
  EXPECT_EQ(DeviceCount(DeviceType::kCPU), 1);
  EXPECT_OK(Synchronize(Device(DeviceType::kCPU)));
}

// The registry's record for `type`.
BackendInfo InfoOf(DeviceType type) {
  for (const BackendInfo& info : ListBackends()) {
    if (info.type == type) return info;
  }
  BackendInfo missing;
  missing.type = type;
  return missing;
}

TEST(EnvErrors, AcceleratorCpu) {
  REQUIRE_ENV("cpu", nullptr, nullptr);
  ExpectBadConfiguration(absl::StatusCode::kInvalidArgument,
                         {"ANYDEV_ACCELERATOR='cpu'", "the CPU is never an accelerator"});
}

TEST(EnvErrors, AcceleratorFoo) {
  REQUIRE_ENV("foo", nullptr, nullptr);
  ExpectBadConfiguration(absl::StatusCode::kInvalidArgument,
                         {"ANYDEV_ACCELERATOR='foo'", "is not a device type",
                          "cuda, hip, xpu, sim"});
}

TEST(EnvErrors, AcceleratorCuda) {
  REQUIRE_ENV("cuda", nullptr, nullptr);
  if (GetBackend(DeviceType::kCUDA).ok()) GTEST_SKIP() << "CUDA is available here";
  const BackendInfo cuda = InfoOf(DeviceType::kCUDA);
  ExpectBadConfiguration(absl::StatusCode::kFailedPrecondition,
                         {"ANYDEV_ACCELERATOR=cuda", "cuda is not available",
                          cuda.reason.c_str()});
}

TEST(EnvErrors, AcceleratorSimWithoutDevices) {
  REQUIRE_ENV("sim", nullptr, nullptr);
  ExpectBadConfiguration(absl::StatusCode::kFailedPrecondition,
                         {"ANYDEV_ACCELERATOR=sim", "ANYDEV_SIM_DEVICES"});
}

TEST(EnvErrors, SimDevicesAbc) {
  REQUIRE_ENV(nullptr, "abc", nullptr);
  ExpectBadConfiguration(absl::StatusCode::kInvalidArgument,
                         {"ANYDEV_SIM_DEVICES='abc'", "[1, 64]"});
  const BackendInfo sim = InfoOf(DeviceType::kSim);
  EXPECT_TRUE(sim.built);
  EXPECT_FALSE(sim.available);
  EXPECT_EQ(sim.code, absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(sim.reason, "ANYDEV_SIM_DEVICES='abc'")) << sim.reason;
  EXPECT_EQ(DeviceCount(DeviceType::kSim), 0);
}

TEST(EnvErrors, SimDevicesZero) {
  REQUIRE_ENV(nullptr, "0", nullptr);
  ExpectBadConfiguration(absl::StatusCode::kInvalidArgument,
                         {"ANYDEV_SIM_DEVICES='0'", "[1, 64]"});
}

TEST(EnvErrors, SimDevicesTooMany) {
  REQUIRE_ENV(nullptr, "65", nullptr);
  ExpectBadConfiguration(absl::StatusCode::kInvalidArgument,
                         {"ANYDEV_SIM_DEVICES='65'", "[1, 64]"});
}

TEST(EnvErrors, SimMemoryJunk) {
  REQUIRE_ENV(nullptr, "1", "junk");
  ExpectBadConfiguration(absl::StatusCode::kInvalidArgument,
                         {"ANYDEV_SIM_MEMORY='junk'", "is not a byte size"});
  EXPECT_EQ(InfoOf(DeviceType::kSim).code, absl::StatusCode::kInvalidArgument);
}

TEST(EnvErrors, ForcedBadSimIsReportedToo) {
  // Forcing sim with a malformed device count reports the malformed value.
  REQUIRE_ENV("sim", "abc", nullptr);
  ExpectBadConfiguration(absl::StatusCode::kInvalidArgument,
                         {"ANYDEV_ACCELERATOR=sim", "ANYDEV_SIM_DEVICES='abc'"});
}

// The good cases next to the bad ones: forcing sim, and sizing its memory.
TEST(EnvGood, ForcedSim) {
  REQUIRE_ENV("sim", "2", "64MiB");
  ASSERT_OK_AND_ASSIGN(DeviceType t, acc::GetAccelerator());
  EXPECT_EQ(t, DeviceType::kSim);
  EXPECT_EQ(acc::DeviceCount(), 2);
  EXPECT_TRUE(acc::IsAvailable());
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(auto info, GetMemoryInfo(Device(DeviceType::kSim, i)));
    EXPECT_EQ(info.second, size_t{64} << 20);
    ASSERT_OK_AND_ASSIGN(DeviceProperties p, GetDeviceProperties(Device(DeviceType::kSim, i)));
    EXPECT_EQ(p.total_memory, uint64_t{64} << 20);
  }
}

}  // namespace
}  // namespace anydev
