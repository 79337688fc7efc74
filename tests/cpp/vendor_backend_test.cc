// vendor_backend_test: the CUDA, HIP and Level Zero backends on machines with
// and without their GPUs.
//
//   VendorBackends.*  in a clean environment, wherever the tests run: every
//                     vendor backend that is built loads its runtime and has
//                     devices, or names why not with the vendor's error.
//   VendorLoad.*      one ctest entry per backend and environment (see
//                     vendor_backends.cmake): the runtime made unloadable with
//                     ANYDEV_<VENDOR>_LIBRARY, a probe that fails with a vendor
//                     error; the reason is exact and the rest of anydev works.
//   VendorFake.*      on a fake vendor runtime (tests/cpp/fake_runtimes): the
//                     properties, errors and device handling the conformance
//                     suite does not see.
//
// ANYDEV_TEST_BACKEND names the backend a VendorLoad/VendorFake entry is about;
// without it those cases skip, and ctest counts a skip of them as a failure.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "anydev/anydev.h"
#include "backends/common/vendor_library.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace anydev {
namespace {

constexpr DeviceType kVendorTypes[] = {DeviceType::kCUDA, DeviceType::kHIP, DeviceType::kXPU};

std::optional<std::string> Env(const char* name) {
  const char* v = getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

BackendInfo InfoOf(DeviceType type) {
  for (const BackendInfo& info : ListBackends()) {
    if (info.type == type) return info;
  }
  ADD_FAILURE() << "no record for " << DeviceTypeName(type);
  BackendInfo missing;
  missing.type = type;
  return missing;
}

// The override variable of a vendor backend.
const char* LibraryVariable(DeviceType type) {
  switch (type) {
    case DeviceType::kCUDA: return "ANYDEV_CUDA_LIBRARY";
    case DeviceType::kHIP: return "ANYDEV_HIP_LIBRARY";
    default: return "ANYDEV_LEVEL_ZERO_LIBRARY";
  }
}

// How the vendor's error names start: cudaErrorNoDevice, hipErrorNoDevice,
// ZE_RESULT_ERROR_UNINITIALIZED.
const char* VendorErrorPrefix(DeviceType type) {
  switch (type) {
    case DeviceType::kCUDA: return "cudaError";
    case DeviceType::kHIP: return "hipError";
    default: return "ZE_RESULT_";
  }
}

// The backend ANYDEV_TEST_BACKEND names, or nullopt (the case then skips).
std::optional<DeviceType> TestBackend() {
  std::optional<std::string> name = Env("ANYDEV_TEST_BACKEND");
  if (!name) return std::nullopt;
  absl::StatusOr<DeviceType> type = ParseDeviceType(*name);
  if (!type.ok()) return std::nullopt;
  return *type;
}

#define REQUIRE_TEST_BACKEND(var)                                                      \
  std::optional<DeviceType> var##_opt = TestBackend();                                 \
  if (!var##_opt) GTEST_SKIP() << "run by ctest with ANYDEV_TEST_BACKEND (vendor_backends.cmake)"; \
  const DeviceType var = *var##_opt

// Checks that the rest of anydev works: the CPU, and the simulated
// accelerator when ANYDEV_SIM_DEVICES is set.
void ExpectTheRestWorks() {
  EXPECT_EQ(DeviceCount(DeviceType::kCPU), 1);
  EXPECT_OK(Synchronize(Device(DeviceType::kCPU)));
  if (!Env("ANYDEV_SIM_DEVICES")) return;
  const Device sim(DeviceType::kSim, 0);
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(sim));
  Event start(DeviceType::kSim, true), end(DeviceType::kSim, true);
  ASSERT_OK(start.Record(s));
  ASSERT_OK(s.Sleep(absl::Milliseconds(5)));
  ASSERT_OK(end.Record(s));
  ASSERT_OK(end.Synchronize());
  ASSERT_OK_AND_ASSIGN(double ms, start.ElapsedTime(end));
  EXPECT_GE(ms, 4.0);
}

// --- every machine ---------------------------------------------------------------

TEST(VendorBackends, EachBuiltBackendLoadsItsRuntimeOrSaysWhy) {
  for (DeviceType type : kVendorTypes) {
    const BackendInfo info = InfoOf(type);
    const std::string name(DeviceTypeName(type));
    SCOPED_TRACE(name + ": " + info.reason);
    if (!info.built) {
      EXPECT_EQ(info.reason, absl::StrCat("backend '", name, "' is not enabled in this build"));
      continue;
    }
    if (info.available) {
      EXPECT_GT(info.device_count, 0);
      for (int i = 0; i < info.device_count; ++i) {
        ASSERT_OK_AND_ASSIGN(DeviceProperties p, GetDeviceProperties(Device(type, i)));
        EXPECT_FALSE(p.name.empty());
        EXPECT_GT(p.total_memory, 0u);
        EXPECT_GT(p.multi_processor_count, 0);
      }
      continue;
    }
    // Unavailable: the reason starts with the backend's name, and either the
    // library did not load (dlopen's words) or it loaded and the vendor's
    // error is named, with the library that said so.
    EXPECT_EQ(info.code, absl::StatusCode::kUnavailable);
    EXPECT_TRUE(absl::StartsWith(info.reason, name + ": "));
    const bool not_loaded = absl::StrContains(info.reason, "(dlopen: ");
    const bool vendor_error = absl::StrContains(info.reason, VendorErrorPrefix(type)) ||
                              absl::StrContains(info.reason, "no devices") ||
                              absl::StrContains(info.reason, "no GPU devices");
    EXPECT_TRUE(not_loaded || vendor_error);
    if (!not_loaded) {
      EXPECT_TRUE(absl::StrContains(info.reason, " [/")) << "names the library";
    }
    EXPECT_EQ(DeviceCount(type), 0);
    EXPECT_STATUS(Stream::New(Device(type, 0)), kUnavailable, info.reason);
  }
}

// A runtime that is not on the loader's path is found under its
// installation root ($CUDA_HOME/lib64, /usr/local/cuda/lib64, ...).
TEST(VendorLibrary, FallsBackToTheInstallationRoot) {
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&ListBackends), &info), 0);
  char dir_template[] = "/tmp/anydev-vendor-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  ASSERT_NE(dir, nullptr);
  const std::string lib_dir = absl::StrCat(dir, "/lib64");
  ASSERT_EQ(mkdir(lib_dir.c_str(), 0755), 0);
  // Any shared library will do as the "vendor runtime": libanydev itself.
  const std::string soname = "libanydev-test-vendor.so.1";
  const std::string path = absl::StrCat(lib_dir, "/", soname);
  ASSERT_EQ(symlink(info.dli_fname, path.c_str()), 0);
  static constexpr internal::VendorLibrarySpec kSpec = {
      "test", "ANYDEV_TEST_VENDOR_LIBRARY", {"libanydev-test-vendor.so.1", nullptr, nullptr},
      {"ANYDEV_TEST_VENDOR_ROOT", nullptr}, {"lib", "lib64"}, nullptr};

  unsetenv("ANYDEV_TEST_VENDOR_ROOT");
  EXPECT_STATUS(internal::VendorLibrary::Open(kSpec), kUnavailable,
                "test: libanydev-test-vendor.so.1 not found (dlopen: ");
  setenv("ANYDEV_TEST_VENDOR_ROOT", dir, 1);
  absl::StatusOr<internal::VendorLibrary> lib = internal::VendorLibrary::Open(kSpec);
  ASSERT_OK(lib);
  EXPECT_EQ(lib->name(), path);
  unsetenv("ANYDEV_TEST_VENDOR_ROOT");
  unlink(path.c_str());
  rmdir(lib_dir.c_str());
  rmdir(dir);
}

// --- a library that cannot be loaded ----------------------------------------------

TEST(VendorLoad, UnloadableLibrary) {
  REQUIRE_TEST_BACKEND(type);
  const std::string name(DeviceTypeName(type));
  const std::string path = *Env(LibraryVariable(type));
  const BackendInfo info = InfoOf(type);
  EXPECT_TRUE(info.built);
  EXPECT_FALSE(info.available);
  EXPECT_EQ(info.code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(info.reason, absl::StrCat(name, ": ", path, " not found (dlopen: ", path,
                                      ": cannot open shared object file: No such file or "
                                      "directory), named by ", LibraryVariable(type)));
  EXPECT_STATUS(GetBackend(type), kUnavailable, info.reason);
  EXPECT_EQ(DeviceCount(type), 0);
  EXPECT_FALSE(IsAvailable(type));
  EXPECT_STATUS(Stream::New(Device(type, 0)), kUnavailable, "not found (dlopen: ");
  // The accelerator is whatever else is available, never the broken backend.
  absl::StatusOr<DeviceType> acc_type = acc::GetAccelerator();
  if (acc_type.ok()) {
    EXPECT_NE(*acc_type, type);
  }
  ExpectTheRestWorks();
}

TEST(VendorLoad, ForcedAcceleratorErrorIsClear) {
  REQUIRE_TEST_BACKEND(type);
  const std::string name(DeviceTypeName(type));
  ASSERT_EQ(Env("ANYDEV_ACCELERATOR"), std::optional<std::string>(name));
  const BackendInfo info = InfoOf(type);
  absl::StatusOr<DeviceType> acc_type = acc::GetAccelerator();
  ASSERT_FALSE(acc_type.ok());
  EXPECT_STATUS(acc_type, kFailedPrecondition,
                absl::StrCat("ANYDEV_ACCELERATOR=", name, " but ", name,
                             " is not available: ", info.reason));
  EXPECT_STATUS(acc_type, kFailedPrecondition, "not found (dlopen: ");
  EXPECT_EQ(acc::DeviceCount(), 0);
  ExpectTheRestWorks();
}

// --- a runtime that loads and fails -----------------------------------------------

TEST(VendorLoad, ProbeErrorNamesTheVendorError) {
  REQUIRE_TEST_BACKEND(type);
  const std::string name(DeviceTypeName(type));
  const std::string expected = *Env("ANYDEV_TEST_EXPECT");
  const BackendInfo info = InfoOf(type);
  EXPECT_FALSE(info.available);
  EXPECT_EQ(info.code, absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StartsWith(info.reason, absl::StrCat(name, ": ", expected))) << info.reason;
  if (std::optional<std::string> hint = Env("ANYDEV_TEST_EXPECT_HINT")) {
    EXPECT_TRUE(absl::StrContains(info.reason, *hint)) << info.reason;
  }
  // The library that answered is named.
  EXPECT_TRUE(absl::StrContains(info.reason, "libanydev_fake_")) << info.reason;
  ExpectTheRestWorks();
}

// --- on a fake runtime ------------------------------------------------------------

class VendorFake : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<DeviceType> type = TestBackend();
    if (!type) GTEST_SKIP() << "run by ctest with ANYDEV_TEST_BACKEND (vendor_backends.cmake)";
    type_ = *type;
    ASSERT_OK_AND_ASSIGN(backend_, GetBackend(type_));
    ASSERT_EQ(DeviceCount(type_), 2);
  }

  Device Dev(int i) const { return Device(type_, i); }

  DeviceType type_ = DeviceType::kCPU;
  Backend* backend_ = nullptr;
};

TEST_F(VendorFake, Properties) {
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    ASSERT_OK_AND_ASSIGN(DeviceProperties p, GetDeviceProperties(Dev(i)));
    EXPECT_EQ(p.total_memory, uint64_t{256} << 20);
    auto extra = [&p](const std::string& key) {
      for (const auto& [k, v] : p.extra) {
        if (k == key) return v;
      }
      return std::string("<missing>");
    };
    const std::string uuid0 = "00010203-0405-0607-0809-0a0b0c0d0e0f";
    switch (type_) {
      case DeviceType::kCUDA:
        EXPECT_EQ(p.name, absl::StrCat("anydev fake CUDA device ", i));
        EXPECT_EQ(p.multi_processor_count, 132);
        EXPECT_EQ(p.major, 9);
        EXPECT_EQ(p.minor, 0);
        EXPECT_EQ(p.arch, "sm_90");
        EXPECT_EQ(p.pci_bus_id, 0x10 + i);
        EXPECT_EQ(p.driver_version, "13.0");
        if (i == 0) {
          EXPECT_EQ(p.uuid, uuid0);
        }
        EXPECT_EQ(extra("pci_address"), absl::StrCat("0000:1", i, ":00.0"));
        EXPECT_EQ(extra("runtime_version"), "13.0");
        EXPECT_TRUE(absl::StrContains(extra("runtime_library"), "libanydev_fake_cudart"));
        break;
      case DeviceType::kHIP:
        EXPECT_EQ(p.name, absl::StrCat("anydev fake HIP device ", i));
        EXPECT_GT(p.multi_processor_count, 0);
        // The fake lacks the optional hipDeviceGetUuid and hipGetDeviceProperties.
        EXPECT_EQ(p.uuid, "");
        EXPECT_EQ(p.arch, "");
        EXPECT_EQ(extra("pci_address"), absl::StrCat("0000:1", i, ":00.0"));
        EXPECT_TRUE(absl::StrContains(extra("runtime_library"), "libanydev_fake_amdhip64"));
        break;
      default:
        EXPECT_EQ(p.name, absl::StrCat("anydev fake Level Zero GPU ", i));
        EXPECT_EQ(p.multi_processor_count, 8);  // slices x sub-slices (Xe cores)
        EXPECT_EQ(p.pci_bus_id, 0x20 + i);
        EXPECT_EQ(p.driver_version, "1.3.12345");
        if (i == 0) {
          EXPECT_EQ(p.uuid, uuid0);
        }
        EXPECT_EQ(extra("eu_count"), "64");
        EXPECT_EQ(extra("device_id"), "0x0bd5");
        EXPECT_EQ(extra("api_version"), "1.4");
        EXPECT_TRUE(absl::StrContains(extra("loader_library"), "libanydev_fake_ze_loader"));
        break;
    }
  }
}

TEST_F(VendorFake, OutOfMemoryNamesTheVendorCall) {
  absl::StatusOr<void*> huge = backend_->Allocate(0, size_t{1} << 40);
  EXPECT_STATUS(huge, kResourceExhausted,
                absl::StrCat(DeviceTypeName(type_), ":0 out of memory: tried to allocate ",
                             size_t{1} << 40, " bytes"));
  const char* vendor = type_ == DeviceType::kCUDA  ? "cudaMalloc: cudaErrorMemoryAllocation"
                       : type_ == DeviceType::kHIP ? "hipMalloc: hipErrorMemoryAllocation"
                                                   : "zeMemAllocDevice: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY";
  EXPECT_STATUS(huge, kResourceExhausted, vendor);
}

TEST_F(VendorFake, VendorErrorsCarryTheCallAndFileLine) {
  // CUDA and HIP only (vendor_backends.cmake): Level Zero has no current
  // device, and its call errors are covered by the probe's.
  // Outside the generic layer's range checks, straight to the runtime.
  absl::Status s = backend_->SetDevice(7);
  const std::string prefix = type_ == DeviceType::kCUDA ? "cuda" : "hip";
  EXPECT_STATUS(s, kInvalidArgument,
                absl::StrCat(prefix, "SetDevice(device): ", prefix, "ErrorInvalidDevice"));
  EXPECT_STATUS(s, kInvalidArgument, "[backends/gpu_common/gpu_backend.h:");
}

TEST_F(VendorFake, DefaultStreamsAreTheirDevicesEvenFromAnotherCurrentDevice) {
  ASSERT_OK(acc::SetDeviceIndex(0));
  const Stream default1 = Stream::Default(Dev(1));
  const Stream default0 = Stream::Default(Dev(0));
  ASSERT_OK(default1.Sleep(absl::Milliseconds(200)));
  ASSERT_OK_AND_ASSIGN(bool busy_done, default1.Query());
  EXPECT_FALSE(busy_done);
  ASSERT_OK_AND_ASSIGN(bool other_done, default0.Query());
  EXPECT_TRUE(other_done) << "the sleep went to the current device's default stream";
  ASSERT_OK(default1.Synchronize());
  ASSERT_OK_AND_ASSIGN(int current, acc::CurrentDeviceIndex());
  EXPECT_EQ(current, 0);
}

TEST_F(VendorFake, PointersAreChecked) {
  ASSERT_OK_AND_ASSIGN(void* p, backend_->Allocate(1, 4096));
  std::vector<uint8_t> host(8192);
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(1)));
  EXPECT_STATUS(backend_->CopyAsync(host.data(), p, 4097, CopyKind::kDeviceToHost, 1, s.id()),
                kOutOfRange, "overruns its block");
  EXPECT_STATUS(backend_->FillAsync(static_cast<uint8_t*>(p) + 4000, 0, 97, 1, s.id()),
                kOutOfRange, "of 4096 bytes by 1 bytes");
  EXPECT_STATUS(backend_->FillAsync(host.data(), 0, 16, 1, s.id()), kInvalidArgument,
                "is not device memory");
  // A peer copy: device 1's block as the source of a copy on device 0.
  ASSERT_OK_AND_ASSIGN(void* q, backend_->Allocate(0, 4096));
  ASSERT_OK_AND_ASSIGN(Stream s0, Stream::New(Dev(0)));
  ASSERT_OK(backend_->FillAsync(p, 0x42, 4096, 1, s.id()));
  ASSERT_OK(s.Synchronize());
  ASSERT_OK(backend_->CopyAsync(q, p, 4096, CopyKind::kDeviceToDevice, 0, s0.id()));
  ASSERT_OK(backend_->CopyAsync(host.data(), q, 4096, CopyKind::kDeviceToHost, 0, s0.id()));
  ASSERT_OK(s0.Synchronize());
  EXPECT_EQ(host[0], 0x42);
  EXPECT_EQ(host[4095], 0x42);
  ASSERT_OK(backend_->Free(1, p));
  ASSERT_OK(backend_->Free(0, q));
  EXPECT_STATUS(backend_->Free(0, q), kInvalidArgument, "double free");
  // Freed memory is device memory no more.
  EXPECT_STATUS(backend_->FillAsync(q, 0, 16, 0, s0.id()), kInvalidArgument,
                "is not device memory");
}

TEST_F(VendorFake, ManyRecordsAndWaitsReuseEvents) {
  // More records than one event pool chunk holds, with cross-stream and
  // cross-device waits in flight while events are re-recorded and dropped.
  ASSERT_OK_AND_ASSIGN(Stream a, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Stream b, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Stream c, Stream::New(Dev(1)));
  Event on_a(type_, /*enable_timing=*/true);
  Event first(type_, /*enable_timing=*/true);
  ASSERT_OK(first.Record(a));
  for (int i = 0; i < 300; ++i) {
    ASSERT_OK(on_a.Record(a));
    ASSERT_OK(b.WaitEvent(on_a));
    Event on_b(type_);
    ASSERT_OK(on_b.Record(b));
    ASSERT_OK(c.WaitEvent(on_b));
    if (i % 50 == 0) {
      ASSERT_OK(a.Sleep(absl::Milliseconds(1)));
    }
  }
  Event last(type_, /*enable_timing=*/true);
  ASSERT_OK(last.Record(a));
  ASSERT_OK(acc::Synchronize(0));
  ASSERT_OK(acc::Synchronize(1));
  for (const Stream& s : {a, b, c}) {
    ASSERT_OK_AND_ASSIGN(bool done, s.Query());
    EXPECT_TRUE(done) << s;
  }
  ASSERT_OK_AND_ASSIGN(double ms, first.ElapsedTime(last));
  EXPECT_GE(ms, 5.0);  // six 1 ms sleeps on a
}

}  // namespace
}  // namespace anydev
