// c_api_test: the C ABI (anydev/c_api.h) as a client sees it: only the C
// header, no anydev C++ type. Registered with two simulated devices of 64 MiB
// (tests/cpp/CMakeLists.txt), and once with no sim configured (CApiNoSim.*).
#include "anydev/c_api.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace {

const AnydevCApi* Api() { return anydev_c_api(); }

std::string LastError(int* python_exception = nullptr) {
  return Api()->last_error(python_exception);
}

TEST(CApi, TableVersionAndSize) {
  const AnydevCApi* api = Api();
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->abi_version, static_cast<uint32_t>(ANYDEV_C_ABI_VERSION));
  EXPECT_EQ(api->struct_size, sizeof(AnydevCApi));
  EXPECT_STREQ(api->version, "0.1.0");
  EXPECT_EQ(api, Api());  // one table for the process
}

TEST(CApi, DeviceCountAndCurrentDevicePerThread) {
  int n = 0;
  ASSERT_EQ(Api()->device_count(ANYDEV_SIM, &n), ANYDEV_OK) << LastError();
  EXPECT_EQ(n, 2);
  ASSERT_EQ(Api()->set_device(ANYDEV_SIM, 1), ANYDEV_OK);
  int d = -1;
  ASSERT_EQ(Api()->current_device(ANYDEV_SIM, &d), ANYDEV_OK);
  EXPECT_EQ(d, 1);
  int other = -1;
  std::thread([&other] { Api()->current_device(ANYDEV_SIM, &other); }).join();
  EXPECT_EQ(other, 0);  // a new thread starts on device 0
  ASSERT_EQ(Api()->set_device(ANYDEV_SIM, -1), ANYDEV_OK);  // no-op
  ASSERT_EQ(Api()->current_device(ANYDEV_SIM, &d), ANYDEV_OK);
  EXPECT_EQ(d, 1);
  ASSERT_EQ(Api()->set_device(ANYDEV_SIM, 0), ANYDEV_OK);
}

TEST(CApi, ErrorsCarryCodeMessageAndNoOutput) {
  int d = 123;
  EXPECT_EQ(Api()->set_device(ANYDEV_SIM, 7), ANYDEV_OUT_OF_RANGE);
  EXPECT_NE(LastError().find("device index 7 is out of range for sim"), std::string::npos)
      << LastError();
  EXPECT_EQ(Api()->current_device(99, &d), ANYDEV_INVALID_ARGUMENT);
  EXPECT_EQ(d, 123);  // untouched on failure
  EXPECT_NE(LastError().find("99"), std::string::npos) << LastError();
  int64_t s = 0;
  EXPECT_EQ(Api()->current_stream(ANYDEV_SIM, 5, &s), ANYDEV_OUT_OF_RANGE);
  EXPECT_EQ(Api()->set_current_stream(ANYDEV_SIM, 0, 123456), ANYDEV_INVALID_ARGUMENT);
  // The message is per thread: another thread's failure does not change it.
  const std::string mine = LastError();
  std::thread([] { Api()->set_device(ANYDEV_SIM, 9); }).join();
  EXPECT_EQ(LastError(), mine);
}

TEST(CApi, PythonExceptionKind) {
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(Api()->event_create(ANYDEV_SIM, 0, 0, &a), ANYDEV_OK);
  ASSERT_EQ(Api()->event_create(ANYDEV_SIM, 0, 0, &b), ANYDEV_OK);
  double ms = 0;
  int py = -1;
  EXPECT_EQ(Api()->event_elapsed_ms(ANYDEV_SIM, a, b, &ms), ANYDEV_INVALID_ARGUMENT);
  EXPECT_NE(LastError(&py).find("enable_timing=True"), std::string::npos);
  EXPECT_EQ(py, ANYDEV_PY_VALUE_ERROR);
  Api()->event_destroy(ANYDEV_SIM, 0, a);
  Api()->event_destroy(ANYDEV_SIM, 0, b);
  Api()->event_destroy(ANYDEV_SIM, 0, nullptr);  // no-op
}

TEST(CApi, StreamsAndTimedEvents) {
  int64_t s = 0;
  ASSERT_EQ(Api()->new_stream(ANYDEV_SIM, 1, 0, &s), ANYDEV_OK) << LastError();
  EXPECT_NE(s, 0);
  int least = 1, greatest = 1;
  ASSERT_EQ(Api()->stream_priority_range(ANYDEV_SIM, &least, &greatest), ANYDEV_OK);
  EXPECT_EQ(least, 0);
  EXPECT_LT(greatest, 0);
  int64_t high = 0;
  ASSERT_EQ(Api()->new_stream(ANYDEV_SIM, 1, greatest, &high), ANYDEV_OK);
  int priority = 0;
  ASSERT_EQ(Api()->stream_priority(ANYDEV_SIM, 1, high, &priority), ANYDEV_OK);
  EXPECT_EQ(priority, greatest);

  void* start = nullptr;
  void* end = nullptr;
  ASSERT_EQ(Api()->event_create(ANYDEV_SIM, 1, 1, &start), ANYDEV_OK);
  ASSERT_EQ(Api()->event_create(ANYDEV_SIM, 1, 1, &end), ANYDEV_OK);
  ASSERT_EQ(Api()->event_record(ANYDEV_SIM, start, 1, s), ANYDEV_OK);
  ASSERT_EQ(Api()->stream_sleep(ANYDEV_SIM, 1, s, 0.1), ANYDEV_OK);
  ASSERT_EQ(Api()->event_record(ANYDEV_SIM, end, 1, s), ANYDEV_OK);
  int done = 1;
  ASSERT_EQ(Api()->stream_query(ANYDEV_SIM, 1, s, &done), ANYDEV_OK);
  EXPECT_EQ(done, 0);  // asynchronous: the sleep is still running
  ASSERT_EQ(Api()->event_query(ANYDEV_SIM, end, &done), ANYDEV_OK);
  EXPECT_EQ(done, 0);
  double ms = 0;
  EXPECT_EQ(Api()->event_elapsed_ms(ANYDEV_SIM, start, end, &ms), ANYDEV_FAILED_PRECONDITION);

  // Another stream waits for `end`: its own work comes after the sleep.
  int64_t waiter = 0;
  ASSERT_EQ(Api()->new_stream(ANYDEV_SIM, 1, 0, &waiter), ANYDEV_OK);
  ASSERT_EQ(Api()->event_block(ANYDEV_SIM, end, 1, waiter), ANYDEV_OK);
  ASSERT_EQ(Api()->stream_query(ANYDEV_SIM, 1, waiter, &done), ANYDEV_OK);
  EXPECT_EQ(done, 0);

  ASSERT_EQ(Api()->event_synchronize(ANYDEV_SIM, end), ANYDEV_OK);
  ASSERT_EQ(Api()->event_elapsed_ms(ANYDEV_SIM, start, end, &ms), ANYDEV_OK) << LastError();
  EXPECT_GE(ms, 95.0);
  ASSERT_EQ(Api()->device_synchronize(ANYDEV_SIM, 1), ANYDEV_OK);
  ASSERT_EQ(Api()->stream_query(ANYDEV_SIM, 1, waiter, &done), ANYDEV_OK);
  EXPECT_EQ(done, 1);
  Api()->event_destroy(ANYDEV_SIM, 1, start);
  Api()->event_destroy(ANYDEV_SIM, 1, end);
}

TEST(CApi, CurrentStreamIsPerThreadAndSharedWithTheRuntime) {
  int64_t s = 0;
  ASSERT_EQ(Api()->new_stream(ANYDEV_SIM, 0, 0, &s), ANYDEV_OK);
  ASSERT_EQ(Api()->set_current_stream(ANYDEV_SIM, 0, s), ANYDEV_OK);
  int64_t current = -1;
  ASSERT_EQ(Api()->current_stream(ANYDEV_SIM, 0, &current), ANYDEV_OK);
  EXPECT_EQ(current, s);
  ASSERT_EQ(Api()->current_stream(ANYDEV_SIM, -1, &current), ANYDEV_OK);  // current device
  EXPECT_EQ(current, s);
  int64_t other = -1;
  std::thread([&other] { Api()->current_stream(ANYDEV_SIM, 0, &other); }).join();
  EXPECT_EQ(other, 0);
  ASSERT_EQ(Api()->set_current_stream(ANYDEV_SIM, 0, 0), ANYDEV_OK);
}

TEST(CApi, AllocatorStatisticsAndOutOfMemory) {
  ASSERT_EQ(Api()->empty_cache(ANYDEV_SIM, 1), ANYDEV_OK);
  AnydevDeviceStats before{};
  ASSERT_EQ(Api()->memory_stats(ANYDEV_SIM, 1, &before), ANYDEV_OK);
  void* p = nullptr;
  ASSERT_EQ(Api()->raw_alloc(ANYDEV_SIM, 1, 1000, &p), ANYDEV_OK) << LastError();
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xab, 1000);  // sim memory is host memory
  AnydevDeviceStats s{};
  ASSERT_EQ(Api()->memory_stats(ANYDEV_SIM, 1, &s), ANYDEV_OK);
  EXPECT_EQ(s.allocated_bytes[0].current - before.allocated_bytes[0].current, 1024);  // 512-rounded
  EXPECT_EQ(s.allocation[1].current - before.allocation[1].current, 1);  // small pool
  EXPECT_EQ(s.requested_bytes[0].current - before.requested_bytes[0].current, 1000);
  ASSERT_EQ(Api()->raw_free(ANYDEV_SIM, 1, p), ANYDEV_OK);
  ASSERT_EQ(Api()->memory_stats(ANYDEV_SIM, 1, &s), ANYDEV_OK);
  EXPECT_EQ(s.allocated_bytes[0].current, before.allocated_bytes[0].current);
  EXPECT_GE(s.allocated_bytes[0].peak, 1024);
  ASSERT_EQ(Api()->reset_peak_stats(ANYDEV_SIM, 1), ANYDEV_OK);
  ASSERT_EQ(Api()->memory_stats(ANYDEV_SIM, 1, &s), ANYDEV_OK);
  EXPECT_EQ(s.allocated_bytes[0].peak, s.allocated_bytes[0].current);
  EXPECT_GT(s.reserved_bytes[0].current, 0);
  ASSERT_EQ(Api()->empty_cache(ANYDEV_SIM, -1), ANYDEV_OK);
  ASSERT_EQ(Api()->memory_stats(ANYDEV_SIM, 1, &s), ANYDEV_OK);
  EXPECT_EQ(s.reserved_bytes[0].current, 0);

  EXPECT_EQ(Api()->raw_free(ANYDEV_SIM, 1, p), ANYDEV_INVALID_ARGUMENT);  // double free
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(Api()->memory_info(ANYDEV_SIM, 1, &free_bytes, &total), ANYDEV_OK);
  EXPECT_EQ(total, size_t{64} << 20);
  void* big = nullptr;
  EXPECT_EQ(Api()->raw_alloc(ANYDEV_SIM, 1, size_t{100} << 20, &big), ANYDEV_RESOURCE_EXHAUSTED);
  EXPECT_EQ(big, nullptr);
  EXPECT_NE(LastError().find("out of memory"), std::string::npos) << LastError();
  void* none = &free_bytes;
  ASSERT_EQ(Api()->raw_alloc(ANYDEV_SIM, 1, 0, &none), ANYDEV_OK);
  EXPECT_EQ(none, nullptr);
}

TEST(CApi, RecordStreamAndAsyncCopies) {
  int64_t s = 0;
  ASSERT_EQ(Api()->new_stream(ANYDEV_SIM, 0, 0, &s), ANYDEV_OK);
  void* dev = nullptr;
  ASSERT_EQ(Api()->raw_alloc(ANYDEV_SIM, 0, 4096, &dev), ANYDEV_OK);
  void* host = nullptr;
  ASSERT_EQ(Api()->host_alloc(ANYDEV_SIM, 4096, &host), ANYDEV_OK);
  EXPECT_GE(Api()->host_block_size(host), size_t{4096});
  EXPECT_EQ(Api()->host_block_size(dev), size_t{0});
  std::memset(host, 7, 4096);
  ASSERT_EQ(Api()->stream_sleep(ANYDEV_SIM, 0, s, 0.05), ANYDEV_OK);
  ASSERT_EQ(Api()->copy_async(ANYDEV_SIM, 0, s, dev, host, 4096, ANYDEV_HOST_TO_DEVICE),
            ANYDEV_OK);
  EXPECT_NE(static_cast<unsigned char*>(dev)[4095], 7);  // queued behind the sleep
  ASSERT_EQ(Api()->stream_synchronize(ANYDEV_SIM, 0, s), ANYDEV_OK);
  EXPECT_EQ(static_cast<unsigned char*>(dev)[4095], 7);
  // A destination that is not sim memory, as a sanitizer would report it.
  EXPECT_EQ(Api()->copy_async(ANYDEV_SIM, 0, s, host, host, 16, ANYDEV_HOST_TO_DEVICE),
            ANYDEV_INVALID_ARGUMENT);
  EXPECT_EQ(Api()->copy_async(ANYDEV_SIM, 0, s, dev, host, 16, 7), ANYDEV_INVALID_ARGUMENT);
  ASSERT_EQ(Api()->record_stream(ANYDEV_SIM, 0, dev, s), ANYDEV_OK);
  ASSERT_EQ(Api()->raw_free(ANYDEV_SIM, 0, dev), ANYDEV_OK);
  AnydevHostStats hs{};
  Api()->host_stats(&hs);
  EXPECT_GE(hs.allocated_bytes.current, 4096);
  ASSERT_EQ(Api()->host_free(host), ANYDEV_OK);
  EXPECT_EQ(Api()->host_free(host), ANYDEV_INVALID_ARGUMENT);
  ASSERT_EQ(Api()->empty_host_cache(), ANYDEV_OK);
  Api()->host_stats(&hs);
  EXPECT_EQ(hs.reserved_bytes.current, 0);
  EXPECT_EQ(Api()->stream_sleep(ANYDEV_SIM, 0, s, -1.0), ANYDEV_INVALID_ARGUMENT);
}

// Registered without ANYDEV_SIM_DEVICES: the reason sim has no devices.
TEST(CApiNoSim, DeviceCountSaysWhy) {
  int n = 42;
  EXPECT_EQ(Api()->device_count(ANYDEV_SIM, &n), ANYDEV_FAILED_PRECONDITION);
  EXPECT_EQ(n, 42);
  EXPECT_NE(LastError().find("ANYDEV_SIM_DEVICES"), std::string::npos) << LastError();
  void* p = nullptr;
  EXPECT_EQ(Api()->raw_alloc(ANYDEV_SIM, 0, 16, &p), ANYDEV_FAILED_PRECONDITION);
  ASSERT_EQ(Api()->device_count(ANYDEV_CPU, &n), ANYDEV_OK);
  EXPECT_EQ(n, 1);
}

}  // namespace
