// The generated C++ legacy forwarders (<anydev/compat/cuda.h>, xpu.h) give the
// same results as the anydev::acc calls they name. This file is legacy-style
// code: it is compiled with -Wno-deprecated-declarations, and
// compat_warnings.cmake checks separately that the same calls do warn.
#include <gtest/gtest.h>

#include <anydev/compat/cuda.h>
#include <anydev/compat/xpu.h>

#include "test_util.h"

namespace {

using anydev::Stream;
namespace acc = anydev::acc;

class CompatShims : public ::testing::Test {
 protected:
  void TearDown() override {
    ASSERT_OK(acc::SetDeviceIndex(0));
    ASSERT_OK_AND_ASSIGN(Stream def, acc::CurrentStream(0));
    ASSERT_OK(acc::SetCurrentStream(Stream::Default(def.device())));
  }
};

TEST_F(CompatShims, DeviceCountAndIndex) {
  EXPECT_EQ(anydev::cuda::device_count(), acc::DeviceCount());
  EXPECT_EQ(anydev::xpu::device_count(), acc::DeviceCount());
  EXPECT_EQ(anydev::cuda::getNumGPUs(), acc::DeviceCount());
  EXPECT_EQ(anydev::cuda::is_available(), acc::IsAvailable());
  ASSERT_OK_AND_ASSIGN(int index, acc::CurrentDeviceIndex());
  EXPECT_EQ(anydev::cuda::current_device(), index);
  EXPECT_EQ(anydev::xpu::current_device(), index);
}

TEST_F(CompatShims, SetAndExchangeDevice) {
  if (acc::DeviceCount() < 2) GTEST_SKIP() << "needs 2 devices";
  anydev::cuda::set_device(1);
  EXPECT_EQ(*acc::CurrentDeviceIndex(), 1);
  EXPECT_EQ(anydev::cuda::ExchangeDevice(0), 1);
  EXPECT_EQ(*acc::CurrentDeviceIndex(), 0);
  EXPECT_EQ(anydev::cuda::MaybeExchangeDevice(1), 0);
  EXPECT_EQ(*acc::CurrentDeviceIndex(), 1);
  anydev::xpu::set_device(0);
  EXPECT_EQ(*acc::CurrentDeviceIndex(), 0);
}

TEST_F(CompatShims, ErrorsThrowWithTheStatus) {
  try {
    anydev::cuda::set_device(99);
    FAIL() << "set_device(99) did not throw";
  } catch (const anydev::compat::Error& e) {
    EXPECT_EQ(e.status().code(), absl::StatusCode::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
  }
  EXPECT_EQ(*acc::CurrentDeviceIndex(), 0);  // unchanged
}

TEST_F(CompatShims, GuardsRestore) {
  if (acc::DeviceCount() < 2) GTEST_SKIP() << "needs 2 devices";
  {
    anydev::cuda::CUDAGuard guard(1);
    EXPECT_EQ(*acc::CurrentDeviceIndex(), 1);
    EXPECT_EQ(guard.original_device(), 0);
    {
      anydev::cuda::OptionalCUDAGuard inner(std::optional<int>(0));
      EXPECT_EQ(*acc::CurrentDeviceIndex(), 0);
    }
    EXPECT_EQ(*acc::CurrentDeviceIndex(), 1);
    anydev::cuda::OptionalCUDAGuard none(std::nullopt);
    EXPECT_EQ(*acc::CurrentDeviceIndex(), 1);
  }
  EXPECT_EQ(*acc::CurrentDeviceIndex(), 0);
}

TEST_F(CompatShims, StreamsMatchTheReplacements) {
  ASSERT_OK_AND_ASSIGN(Stream current, acc::CurrentStream());
  EXPECT_EQ(anydev::cuda::getCurrentCUDAStream(), current);
  EXPECT_EQ(anydev::cuda::getDefaultCUDAStream().id(), 0);
  Stream pooled = anydev::cuda::getStreamFromPool();
  EXPECT_NE(pooled.id(), 0);
  EXPECT_EQ(pooled.device_index(), *acc::CurrentDeviceIndex());
  Stream high = anydev::cuda::getStreamFromPool(/*isHighPriority=*/true);
  EXPECT_LT(*high.Priority(), 0);
  {
    anydev::cuda::CUDAStreamGuard guard(pooled);
    EXPECT_EQ(*acc::CurrentStream(), pooled);
    EXPECT_EQ(anydev::cuda::getCurrentCUDAStream(), pooled);
  }
  EXPECT_EQ(*acc::CurrentStream(), current);
  anydev::cuda::setCurrentCUDAStream(pooled);
  EXPECT_EQ(*acc::CurrentStream(), pooled);
  anydev::cuda::CUDAStream legacy_typed = anydev::cuda::getCurrentCUDAStream();
  EXPECT_EQ(legacy_typed, pooled);
}

TEST_F(CompatShims, EventsAndSynchronize) {
  anydev::cuda::CUDAEvent start(/*enable_timing=*/true), end(/*enable_timing=*/true);
  EXPECT_FALSE(start.isCreated());
  start.record();
  end.record();
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_GE(start.elapsed_time(end), 0.0f);
  anydev::cuda::device_synchronize();
}

TEST_F(CompatShims, CachingAllocatorForwarders) {
  anydev::cuda::CUDACachingAllocator::emptyCache();
  auto stats = anydev::cuda::CUDACachingAllocator::getDeviceStats(0);
  ASSERT_OK_AND_ASSIGN(auto direct, acc::GetDeviceStats(0));
  EXPECT_EQ(stats.num_device_alloc, direct.num_device_alloc);
  anydev::cuda::CUDACachingAllocator::resetPeakStats(0);
  anydev::cuda::CUDACachingAllocator::resetAccumulatedStats(0);
}

}  // namespace
