// backend_registry_test: what the registry reports in a clean environment (no
// ANYDEV_* variables): every device type has a record, a backend left out of
// the build says so, the CPU is always there, the simulated accelerator is
// opt-in, and without an accelerator the acc:: calls fail cleanly while the
// device-generic ones fall back to the CPU.
//
// The choice of accelerator is made once per process, so this binary clears
// the ANYDEV_* variables before anything probes (ctest clears them too).
#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "anydev/anydev.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace anydev {
namespace {

class CleanEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    for (const char* name : {"ANYDEV_ACCELERATOR", "ANYDEV_SIM_DEVICES", "ANYDEV_SIM_MEMORY"}) {
      unsetenv(name);
    }
  }
};
[[maybe_unused]] ::testing::Environment* const kCleanEnvironment =
    ::testing::AddGlobalTestEnvironment(new CleanEnvironment);

BackendInfo InfoOf(DeviceType type) {
  for (const BackendInfo& info : ListBackends()) {
    if (info.type == type) return info;
  }
  ADD_FAILURE() << "no record for " << type;
  BackendInfo missing;
  missing.type = type;
  return missing;
}

bool AnyVendorAvailable() {
  for (DeviceType t : {DeviceType::kCUDA, DeviceType::kHIP, DeviceType::kXPU}) {
    if (InfoOf(t).available) return true;
  }
  return false;
}

// First, so that it is the first use: probing is lazy and must happen once,
// with the same answer for every thread that asks at the same time.
TEST(BackendRegistry, ConcurrentFirstUseProbesOnce) {
  constexpr int kThreads = 8;
  std::atomic<int> ready{0};
  std::vector<int> sim_counts(kThreads, -1), cpu_counts(kThreads, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      sim_counts[static_cast<size_t>(t)] = DeviceCountOf(DeviceType::kSim);
      cpu_counts[static_cast<size_t>(t)] = DeviceCountOf(DeviceType::kCPU);
      (void)acc::DeviceCount();
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(sim_counts[static_cast<size_t>(t)], 0);
    EXPECT_EQ(cpu_counts[static_cast<size_t>(t)], 1);
  }
}

TEST(BackendRegistry, ListsEveryTypeInAcceleratorChoiceOrder) {
  const std::vector<BackendInfo> infos = ListBackends();
  ASSERT_EQ(infos.size(), 5u);
  EXPECT_EQ(infos[0].type, DeviceType::kCUDA);
  EXPECT_EQ(infos[1].type, DeviceType::kHIP);
  EXPECT_EQ(infos[2].type, DeviceType::kXPU);
  EXPECT_EQ(infos[3].type, DeviceType::kSim);
  EXPECT_EQ(infos[4].type, DeviceType::kCPU);
  // The answers are cached: asking again gives the same records.
  const std::vector<BackendInfo> again = ListBackends();
  ASSERT_EQ(again.size(), infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    EXPECT_EQ(again[i].type, infos[i].type);
    EXPECT_EQ(again[i].built, infos[i].built);
    EXPECT_EQ(again[i].available, infos[i].available);
    EXPECT_EQ(again[i].device_count, infos[i].device_count);
    EXPECT_EQ(again[i].reason, infos[i].reason);
    EXPECT_EQ(again[i].code, infos[i].code);
  }
}

TEST(BackendRegistry, TypesWithoutABackendAreNeverAvailable) {
  // mps, meta and privateuseone parse (as torch.device) but have no backend.
  for (DeviceType t : {DeviceType::kMPS, DeviceType::kMeta, DeviceType::kPrivateUse1}) {
    SCOPED_TRACE(DeviceTypeName(t));
    EXPECT_EQ(DeviceCount(t), 0);
    EXPECT_FALSE(IsAvailable(t));
    EXPECT_STATUS(GetBackend(t), kFailedPrecondition, "is not enabled in this build");
  }
}

TEST(BackendRegistry, RecordsAreConsistent) {
  for (const BackendInfo& info : ListBackends()) {
    SCOPED_TRACE(DeviceTypeName(info.type));
    EXPECT_EQ(info.available, info.device_count > 0);
    EXPECT_EQ(info.available, info.reason.empty());
    EXPECT_EQ(info.available, info.code == absl::StatusCode::kOk);
    if (!info.built) {
      EXPECT_FALSE(info.available);
    }
    EXPECT_EQ(DeviceCountOf(info.type), info.device_count);
    EXPECT_EQ(DeviceCount(info.type), info.device_count);
    EXPECT_EQ(IsAvailable(info.type), info.available);
    absl::StatusOr<Backend*> backend = GetBackend(info.type);
    EXPECT_EQ(backend.ok(), info.available);
    if (backend.ok()) {
      EXPECT_EQ((*backend)->type(), info.type);
    } else {
      EXPECT_EQ(backend.status().code(), info.code);
      EXPECT_EQ(backend.status().message(), info.reason);
    }
  }
}

TEST(BackendRegistry, BackendsLeftOutOfTheBuildSaySo) {
  for (DeviceType t : {DeviceType::kCUDA, DeviceType::kHIP, DeviceType::kXPU}) {
    SCOPED_TRACE(DeviceTypeName(t));
    const BackendInfo info = InfoOf(t);
    if (info.built) {
      // A vendor backend compiled in: it is available or says why not.
      EXPECT_EQ(info.available, info.reason.empty());
      continue;
    }
    EXPECT_FALSE(info.available);
    EXPECT_EQ(info.device_count, 0);
    EXPECT_EQ(info.code, absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(info.reason,
              absl::StrCat("backend '", DeviceTypeName(t), "' is not enabled in this build"));
    EXPECT_STATUS(GetBackend(t), kFailedPrecondition, "is not enabled in this build");
    EXPECT_STATUS(CheckDevice(Device(t, 0)), kFailedPrecondition, "is not enabled in this build");
    EXPECT_STATUS(Stream::New(Device(t, 0)), kFailedPrecondition, "is not enabled in this build");
  }
}

TEST(BackendRegistry, CpuIsAlwaysAvailableWithOneDevice) {
  const BackendInfo info = InfoOf(DeviceType::kCPU);
  EXPECT_TRUE(info.built);
  EXPECT_TRUE(info.available);
  EXPECT_EQ(info.device_count, 1);
  EXPECT_EQ(info.reason, "");
  EXPECT_EQ(info.code, absl::StatusCode::kOk);
  EXPECT_OK(CheckDevice(Device(DeviceType::kCPU, 0)));
  EXPECT_OK(CheckDevice(Device(DeviceType::kCPU)));
  EXPECT_STATUS(CheckDevice(Device(DeviceType::kCPU, 1)), kOutOfRange,
                "device index 1 is out of range for cpu: 1 device is available");
  ASSERT_OK_AND_ASSIGN(DeviceProperties p, GetDeviceProperties(Device(DeviceType::kCPU, 0)));
  EXPECT_FALSE(p.name.empty());
  EXPECT_GT(p.total_memory, 0u);
}

TEST(BackendRegistry, SimIsOptIn) {
  const BackendInfo info = InfoOf(DeviceType::kSim);
  EXPECT_TRUE(info.built);
  EXPECT_FALSE(info.available);
  EXPECT_EQ(info.device_count, 0);
  EXPECT_EQ(info.code, absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(info.reason, "ANYDEV_SIM_DEVICES")) << info.reason;
  EXPECT_STATUS(GetBackend(DeviceType::kSim), kFailedPrecondition, "ANYDEV_SIM_DEVICES");
  EXPECT_EQ(DeviceCount(DeviceType::kSim), 0);
  EXPECT_FALSE(IsAvailable(DeviceType::kSim));
}

TEST(NoAccelerator, AccCallsFailCleanly) {
  if (AnyVendorAvailable()) GTEST_SKIP() << "a vendor accelerator is available here";
  EXPECT_EQ(acc::DeviceCount(), 0);
  EXPECT_FALSE(acc::IsAvailable());
  constexpr const char* kNone = "Cannot access accelerator device when none is available.";
  EXPECT_STATUS(acc::GetAccelerator(), kFailedPrecondition, kNone);
  ASSERT_OK_AND_ASSIGN(std::optional<DeviceType> current, acc::CurrentAccelerator());
  EXPECT_EQ(current, std::nullopt);
  EXPECT_STATUS(acc::CurrentDeviceIndex(), kFailedPrecondition, kNone);
  EXPECT_STATUS(acc::SetDeviceIndex(0), kFailedPrecondition, kNone);
  EXPECT_STATUS(acc::ExchangeDeviceIndex(0), kFailedPrecondition, kNone);
  EXPECT_STATUS(acc::CurrentStream(), kFailedPrecondition, kNone);
  EXPECT_STATUS(acc::Synchronize(), kFailedPrecondition, kNone);
  EXPECT_STATUS(acc::DeviceIndexGuard::Make(0), kFailedPrecondition, kNone);
  EXPECT_STATUS(acc::StreamGuard::Make(Stream::Default(Device(DeviceType::kSim, 0))),
                kFailedPrecondition, kNone);
  // A negative index switches nothing, so needs no accelerator.
  EXPECT_OK(acc::DeviceIndexGuard::Make(-1));
}

TEST(NoAccelerator, DeviceGenericCallsFallBackToTheCpu) {
  if (AnyVendorAvailable()) GTEST_SKIP() << "a vendor accelerator is available here";
  ASSERT_OK_AND_ASSIGN(DeviceType t, DefaultDeviceType());
  EXPECT_EQ(t, DeviceType::kCPU);
  EXPECT_EQ(DeviceCount(), 1);
  EXPECT_TRUE(IsAvailable());
  EXPECT_OK(Synchronize());
  ASSERT_OK_AND_ASSIGN(DeviceProperties p, GetDeviceProperties());
  EXPECT_FALSE(p.name.empty());
  ASSERT_OK_AND_ASSIGN(Stream s, CurrentStream(Device(DeviceType::kCPU)));
  EXPECT_EQ(s, Stream::Default(Device(DeviceType::kCPU, 0)));
  EXPECT_EQ(std::string(Version()), "0.1.0");
}

// The CPU backend: synchronous, one stream, no events (as c10's CPU guard).
TEST(CpuBackend, StreamsAreSynchronousAndHaveNoEvents) {
  const Device cpu(DeviceType::kCPU, 0);
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(cpu));
  EXPECT_EQ(s, Stream::Default(cpu));  // the CPU has only its default stream
  EXPECT_STATUS(Stream::Unpack3(5, 0, 0), kInvalidArgument, "the CPU has only stream 0");
  ASSERT_OK(s.Sleep(absl::Milliseconds(5)));
  ASSERT_OK_AND_ASSIGN(bool done, s.Query());
  EXPECT_TRUE(done);  // the sleep ran on the caller's thread
  Event e(DeviceType::kCPU, true);
  ASSERT_OK_AND_ASSIGN(bool queried, e.Query());
  EXPECT_TRUE(queried);  // never recorded: nothing to wait for
  ASSERT_OK(e.Synchronize());
  EXPECT_STATUS(e.Record(s), kUnimplemented, "cpu backend doesn't support events.");
  EXPECT_FALSE(e.was_recorded());
  EXPECT_STATUS(s.WaitStream(s), kUnimplemented, "cpu backend doesn't support events.");
}

TEST(CpuBackend, RawMemory) {
  ASSERT_OK_AND_ASSIGN(Backend * cpu, GetBackend(DeviceType::kCPU));
  ASSERT_OK_AND_ASSIGN(void* p, cpu->Allocate(0, 256));
  std::vector<uint8_t> host(256, 7), back(256, 0);
  ASSERT_OK(cpu->CopyAsync(p, host.data(), 256, CopyKind::kHostToDevice, 0, 0));
  ASSERT_OK(cpu->FillAsync(p, 9, 128, 0, 0));
  ASSERT_OK(cpu->CopyAsync(back.data(), p, 256, CopyKind::kDeviceToHost, 0, 0));
  EXPECT_EQ(back[0], 9);
  EXPECT_EQ(back[127], 9);
  EXPECT_EQ(back[128], 7);
  EXPECT_STATUS(cpu->CopyAsync(p, host.data(), 257, CopyKind::kHostToDevice, 0, 0), kOutOfRange,
                "overruns");
  ASSERT_OK(cpu->Free(0, p));
  EXPECT_STATUS(cpu->Free(0, p), kInvalidArgument, "double free");
}

}  // namespace
}  // namespace anydev
