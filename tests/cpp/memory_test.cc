// memory_test: the caching allocator (rounding, pools, splitting and
// coalescing, stream-ordered reuse, out-of-memory retry, statistics with
// PyTorch's keys and semantics, bad pointers), Buffer, and a multi-threaded
// stress test. Runs on the current accelerator; registered with two simulated
// devices of 64 MiB (tests/cpp/CMakeLists.txt). Device 1 is used where exact
// capacities matter; each test starts from an empty cache.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <map>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "anydev/anydev.h"
#include "gtest/gtest.h"
#include "internal/caching_allocator.h"
#include "test_util.h"

namespace anydev {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;
constexpr absl::Duration kLongSleep = absl::Milliseconds(150);

std::string PtrText(const void* p) { return absl::StrFormat("%p", p); }

// The names torch.accelerator.memory_stats() returns, built independently of
// FlattenDeviceStats from PyTorch's list.
std::vector<std::string> PyTorchStatKeys() {
  std::vector<std::string> keys = {"num_alloc_retries", "num_ooms",        "max_split_size",
                                   "num_sync_all_streams", "num_device_alloc", "num_device_free"};
  for (const char* stat : {"allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes",
                           "allocation", "segment", "active", "inactive_split",
                           "inactive_split_bytes"}) {
    for (const char* pool : {"all", "small_pool", "large_pool"}) {
      for (const char* field : {"current", "peak", "allocated", "freed"}) {
        keys.push_back(absl::StrCat(stat, ".", pool, ".", field));
      }
    }
  }
  for (const char* stat : {"oversize_allocations", "oversize_segments"}) {
    for (const char* field : {"current", "peak", "allocated", "freed"}) {
      keys.push_back(absl::StrCat(stat, ".", field));
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

class MemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<DeviceType> type = acc::GetAccelerator();
    ASSERT_TRUE(type.ok()) << "needs an accelerator (ANYDEV_SIM_DEVICES=2): " << type.status();
    type_ = *type;
    count_ = acc::DeviceCount();
    ASSERT_OK(acc::SetDeviceIndex(0));
    for (int i = 0; i < count_; ++i) {
      ASSERT_OK(anydev::SetCurrentStream(Stream::Default(Dev(i))));
    }
    ASSERT_OK(acc::EmptyCache());
  }

  void TearDown() override {
    for (int i = 0; i < count_; ++i) EXPECT_OK(acc::Synchronize(i));
    EXPECT_OK(acc::EmptyCache());
    EXPECT_OK(acc::SetDeviceIndex(0));
  }

  Device Dev(int i) const { return Device(type_, i); }
  // The device whose capacity the exact tests rely on: the last one.
  Device Exact() const { return Dev(count_ - 1); }

  DeviceStats Stats(Device d) {
    absl::StatusOr<DeviceStats> s = MemoryStats(d);
    EXPECT_OK(s);
    return s.ok() ? *s : DeviceStats{};
  }

  // Expects `blocks` inactive split blocks of `bytes` in all in the pool
  // `pool` of `d` (0: all, 1: small, 2: large), more than in `base`.
  void ExpectInactiveSplit(Device d, const DeviceStats& base, size_t pool, int64_t blocks,
                           int64_t bytes) {
    const DeviceStats s = Stats(d);
    EXPECT_EQ(s.inactive_split[pool].current - base.inactive_split[pool].current, blocks);
    EXPECT_EQ(s.inactive_split_bytes[pool].current - base.inactive_split_bytes[pool].current,
              bytes);
  }

  bool IsSim() const { return type_ == DeviceType::kSim; }

  DeviceType type_ = DeviceType::kCPU;
  int count_ = 0;
};

// --- keys and rounding -------------------------------------------------------------

TEST_F(MemoryTest, FlatStatsHavePyTorchKeysSorted) {
  DeviceStats stats;
  std::vector<std::pair<std::string, int64_t>> flat = FlattenDeviceStats(stats);
  std::vector<std::string> keys;
  for (const auto& kv : flat) keys.push_back(kv.first);
  EXPECT_EQ(keys, PyTorchStatKeys());
  EXPECT_EQ(keys.size(), 122u);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  // max_split_size is -1 (no limit), as PyTorch reports without a config.
  for (const auto& [k, v] : flat) EXPECT_EQ(v, k == "max_split_size" ? -1 : 0) << k;
}

TEST(RoundingTest, SizesAndSegmentsFollowCudaCachingAllocator) {
  using internal::AllocationSize;
  using internal::RoundSize;
  EXPECT_EQ(RoundSize(1), 512u);
  EXPECT_EQ(RoundSize(512), 512u);
  EXPECT_EQ(RoundSize(513), 1024u);
  EXPECT_EQ(RoundSize(1000), 1024u);
  EXPECT_EQ(AllocationSize(512), 2 * kMiB);         // small pool: 2 MiB segments
  EXPECT_EQ(AllocationSize(kMiB), 2 * kMiB);        // 1 MiB is still small
  EXPECT_EQ(AllocationSize(kMiB + 512), 20 * kMiB); // large, under 10 MiB: 20 MiB
  EXPECT_EQ(AllocationSize(10 * kMiB), 10 * kMiB);  // from 10 MiB: rounded to 2 MiB
  EXPECT_EQ(AllocationSize(11 * kMiB + 512), 12 * kMiB);
}

TEST_F(MemoryTest, AllocatedAndReservedGrowAndShrink) {
  const Device d = Exact();
  const DeviceStats before = Stats(d);
  ASSERT_OK_AND_ASSIGN(void* p, RawAlloc(1000, d));
  ASSERT_NE(p, nullptr);
  DeviceStats s = Stats(d);
  EXPECT_EQ(s.allocated_bytes[0].current - before.allocated_bytes[0].current, 1024);
  EXPECT_EQ(s.requested_bytes[0].current - before.requested_bytes[0].current, 1000);
  EXPECT_EQ(s.reserved_bytes[0].current - before.reserved_bytes[0].current, int64_t{2 << 20});
  EXPECT_EQ(s.allocated_bytes[1].current, s.allocated_bytes[0].current);  // small pool
  EXPECT_EQ(s.allocated_bytes[2].current, before.allocated_bytes[2].current);
  EXPECT_EQ(s.allocation[0].current - before.allocation[0].current, 1);
  EXPECT_EQ(s.segment[0].current - before.segment[0].current, 1);
  EXPECT_EQ(s.num_device_alloc - before.num_device_alloc, 1);
  ASSERT_OK_AND_ASSIGN(int64_t allocated, MemoryAllocated(d));
  EXPECT_EQ(allocated, s.allocated_bytes[0].current);

  ASSERT_OK(RawDelete(p, d));
  s = Stats(d);
  EXPECT_EQ(s.allocated_bytes[0].current, before.allocated_bytes[0].current);
  EXPECT_EQ(s.requested_bytes[0].current, before.requested_bytes[0].current);
  EXPECT_EQ(s.reserved_bytes[0].current - before.reserved_bytes[0].current, int64_t{2 << 20})
      << "a freed block stays cached";
  EXPECT_EQ(s.allocated_bytes[0].peak - before.allocated_bytes[0].current, 1024);

  ASSERT_OK(EmptyCache(d));
  s = Stats(d);
  EXPECT_EQ(s.reserved_bytes[0].current, 0);
  EXPECT_EQ(s.num_device_free - before.num_device_free, 1);
  ASSERT_OK_AND_ASSIGN(int64_t reserved, MemoryReserved(d));
  EXPECT_EQ(reserved, 0);
  ASSERT_OK_AND_ASSIGN(int64_t max_reserved, MaxMemoryReserved(d));
  EXPECT_GE(max_reserved, int64_t{2 << 20});
}

TEST_F(MemoryTest, LargeRequestsUseTheLargePool) {
  const Device d = Exact();
  const DeviceStats before = Stats(d);
  ASSERT_OK_AND_ASSIGN(void* a, RawAlloc(3 * kMiB, d));
  DeviceStats s = Stats(d);
  EXPECT_EQ(s.reserved_bytes[2].current - before.reserved_bytes[2].current, int64_t{20 << 20});
  EXPECT_EQ(s.allocated_bytes[2].current - before.allocated_bytes[2].current, int64_t{3 << 20});
  // A remainder of at most 1 MiB is not split off: it stays with the block.
  ASSERT_OK_AND_ASSIGN(void* b, RawAlloc(16 * kMiB + 512 * kKiB, d));
  s = Stats(d);
  EXPECT_EQ(b, static_cast<char*>(a) + 3 * kMiB);
  EXPECT_EQ(s.allocated_bytes[2].current - before.allocated_bytes[2].current, int64_t{20 << 20});
  EXPECT_EQ(s.requested_bytes[2].current - before.requested_bytes[2].current,
            int64_t{(3 << 20) + (16 << 20) + (512 << 10)});
  ASSERT_OK(RawDelete(a, d));
  ASSERT_OK(RawDelete(b, d));
}

TEST_F(MemoryTest, SplittingAndCoalescing) {
  // The large pool merges a freed block with its free neighbours at once, as
  // PyTorch's allocator does.
  const Device d = Exact();
  const DeviceStats base = Stats(d);
  auto split = [&](int64_t blocks, int64_t bytes) {
    ExpectInactiveSplit(d, base, 0, blocks, bytes);
  };
  constexpr size_t k = 3 * kMiB;
  constexpr int64_t tail = (int64_t{20} << 20) - 3 * int64_t{k};
  ASSERT_OK_AND_ASSIGN(void* a, RawAlloc(k, d));
  ASSERT_OK_AND_ASSIGN(void* b, RawAlloc(k, d));
  ASSERT_OK_AND_ASSIGN(void* c, RawAlloc(k, d));
  // One 20 MiB segment, carved in address order.
  EXPECT_EQ(b, static_cast<char*>(a) + k);
  EXPECT_EQ(c, static_cast<char*>(b) + k);
  EXPECT_EQ(Stats(d).segment[0].current - base.segment[0].current, 1);
  split(1, tail);
  ASSERT_OK(RawDelete(b, d));
  split(2, k + tail);  // b and the tail, not adjacent
  ASSERT_OK(RawDelete(a, d));
  split(2, 2 * k + tail);  // a merged into b, and the tail
  ASSERT_OK(RawDelete(c, d));
  split(0, 0);  // all merged: one whole, unsplit segment
  // The coalesced segment serves a request for more than any of its parts.
  ASSERT_OK_AND_ASSIGN(void* whole, RawAlloc(2 * k, d));
  EXPECT_EQ(whole, a);
  ASSERT_OK_AND_ASSIGN(void* rest, RawAlloc(2 * k, d));
  EXPECT_EQ(rest, static_cast<char*>(a) + 2 * k);
  EXPECT_EQ(Stats(d).segment[0].current - base.segment[0].current, 1);
  ASSERT_OK(RawDelete(whole, d));
  ASSERT_OK(RawDelete(rest, d));
}

TEST_F(MemoryTest, AStreamPerStepLeavesNothingBehind) {
  // A program that makes a new stream per step: each step's block goes back
  // and forth between streams, and the allocator drops what it kept per
  // stream once it holds no block (PerStreamSet::Prune).
  const Device d = Exact();
  ASSERT_OK(EmptyCache(d));
  const DeviceStats base = Stats(d);
  constexpr size_t k = 64 * kKiB;
  void* first = nullptr;
  for (int step = 0; step < 100; ++step) {
    ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
    ASSERT_OK_AND_ASSIGN(void* p, RawAlloc(k, d, s));
    if (step == 0) first = p;
    EXPECT_EQ(p, first) << "step " << step << ": the idle stream's block is lent on";
    ASSERT_OK(RawDelete(p, d));
  }
  DeviceStats s = Stats(d);
  EXPECT_EQ(s.segment[0].current - base.segment[0].current, 1);
  EXPECT_EQ(s.allocation[0].current - base.allocation[0].current, 0);
  internal::DeviceCachingAllocator* allocator = internal::FindCachingAllocator(d);
  ASSERT_NE(allocator, nullptr);
  EXPECT_LE(allocator->StreamPartsForTesting(), 20u) << "one per stream ever used?";
  ASSERT_OK(EmptyCache(d));
  s = Stats(d);
  EXPECT_EQ(s.reserved_bytes[0].current, 0);
  EXPECT_EQ(s.inactive_split[0].current, 0);
}

TEST_F(MemoryTest, SmallBlocksAreCoalescedWhenNeeded) {
  // Note [Deferred coalescing]: a freed small-pool block stays unmerged for
  // a request of its size on its stream, and is merged before the allocator
  // would ask the backend for memory.
  const Device d = Exact();
  ASSERT_OK(EmptyCache(d));
  const DeviceStats base = Stats(d);
  auto split = [&](int64_t blocks, int64_t bytes) {
    ExpectInactiveSplit(d, base, 1, blocks, bytes);
  };
  constexpr size_t k = 512 * kKiB;
  ASSERT_OK_AND_ASSIGN(void* a, RawAlloc(k, d));
  ASSERT_OK_AND_ASSIGN(void* b, RawAlloc(k, d));
  ASSERT_OK_AND_ASSIGN(void* c, RawAlloc(k, d));
  EXPECT_EQ(b, static_cast<char*>(a) + k);
  EXPECT_EQ(c, static_cast<char*>(b) + k);
  split(1, k);  // the tail
  ASSERT_OK(RawDelete(b, d));
  split(2, 2 * k);
  ASSERT_OK(RawDelete(a, d));
  split(3, 3 * k);  // a is not merged into b (yet)
  EXPECT_STATUS(RawDelete(a, d), kInvalidArgument, "not a live allocation");
  EXPECT_STATUS(RecordStream(a, d, Stream::Default(d)), kInvalidArgument,
                "not a live allocation");
  // The same size on the same stream: the last block freed, with no split.
  ASSERT_OK_AND_ASSIGN(void* again, RawAlloc(k - 100, d));
  EXPECT_EQ(again, a);
  split(2, 2 * k);
  DeviceStats s = Stats(d);
  EXPECT_EQ(s.allocation[1].current - base.allocation[1].current, 2);
  EXPECT_EQ(s.requested_bytes[1].current - base.requested_bytes[1].current, 2 * int64_t{k} - 100);
  ASSERT_OK(RawDelete(again, d));
  ASSERT_OK(RawDelete(c, d));
  split(4, 4 * k);  // the whole segment, in four free blocks
  // A size no free block fits: the deferred blocks are merged first, and the
  // merged segment serves it; no new segment.
  ASSERT_OK_AND_ASSIGN(void* whole, RawAlloc(2 * k, d));
  EXPECT_EQ(whole, a);
  split(1, 2 * k);
  s = Stats(d);
  EXPECT_EQ(s.segment[1].current - base.segment[1].current, 1);
  EXPECT_EQ(s.num_device_alloc - base.num_device_alloc, 1);
  ASSERT_OK(RawDelete(whole, d));
  split(2, 4 * k);
  // Releasing the cache merges and returns everything.
  ASSERT_OK(EmptyCache(d));
  split(0, 0);
  s = Stats(d);
  EXPECT_EQ(s.reserved_bytes[1].current, 0);
  EXPECT_EQ(s.segment[1].current, 0);
  EXPECT_EQ(s.active[1].current, 0);
}

TEST_F(MemoryTest, ZeroBytesIsNullAndFree) {
  const DeviceStats before = Stats(Exact());
  ASSERT_OK_AND_ASSIGN(void* p, RawAlloc(0, Exact()));
  EXPECT_EQ(p, nullptr);
  EXPECT_OK(RawDelete(nullptr, Exact()));
  EXPECT_EQ(Stats(Exact()).allocation[0].allocated, before.allocation[0].allocated);
}

// --- PyTorch's test_memory_stats semantics ------------------------------------------

TEST_F(MemoryTest, ResetPeakAndAccumulatedAsPyTorch) {
  const Device d = Exact();
  ASSERT_OK(ResetPeakMemoryStats(d));
  ASSERT_OK(ResetAccumulatedMemoryStats(d));
  DeviceStats s = Stats(d);
  EXPECT_EQ(s.active_bytes[0].allocated, 0);
  EXPECT_EQ(s.active_bytes[0].freed, 0);
  EXPECT_EQ(s.num_device_alloc, 0);

  ASSERT_OK_AND_ASSIGN(void* p, RawAlloc(1024, d));  // 256 floats, as in PyTorch's test
  s = Stats(d);
  EXPECT_EQ(s.active_bytes[0].current, 1024);
  EXPECT_EQ(s.active_bytes[0].peak, 1024);
  ASSERT_OK(RawDelete(p, d));
  s = Stats(d);
  EXPECT_EQ(s.active_bytes[0].current, 0);
  EXPECT_EQ(s.active_bytes[0].peak, 1024);
  EXPECT_EQ(s.active_bytes[0].allocated, 1024);
  EXPECT_EQ(s.active_bytes[0].freed, 1024);
  ASSERT_OK(ResetPeakMemoryStats(d));
  s = Stats(d);
  EXPECT_EQ(s.active_bytes[0].peak, 0);
  EXPECT_EQ(s.reserved_bytes[0].peak, s.reserved_bytes[0].current);
  EXPECT_EQ(s.active_bytes[0].freed, 1024) << "a peak reset keeps accumulated counts";
  ASSERT_OK(ResetAccumulatedMemoryStats(d));
  s = Stats(d);
  EXPECT_EQ(s.active_bytes[0].allocated, 0);
  EXPECT_EQ(s.active_bytes[0].freed, 0);
  EXPECT_EQ(s.num_device_alloc, 0);
  EXPECT_EQ(s.reserved_bytes[0].current, int64_t{2 << 20}) << "resets change no current value";
}

TEST_F(MemoryTest, AcceleratorCallsActOnTheCurrentDevice) {
  ASSERT_OK(acc::SetDeviceIndex(count_ - 1));
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(4096, Device(type_)));
  EXPECT_EQ(buf.device(), Exact());
  ASSERT_OK_AND_ASSIGN(DeviceStats current, acc::GetDeviceStats());
  ASSERT_OK_AND_ASSIGN(DeviceStats explicit_index, acc::GetDeviceStats(count_ - 1));
  EXPECT_EQ(current.allocated_bytes[0].current, 4096);
  EXPECT_EQ(explicit_index.allocated_bytes[0].current, 4096);
  ASSERT_OK_AND_ASSIGN(auto info, acc::GetMemoryInfo());
  ASSERT_OK_AND_ASSIGN(auto generic, GetMemoryInfo(Exact()));
  EXPECT_EQ(info, generic);
  if (IsSim()) {
    // The simulated device's used memory is exactly what the cache reserved.
    EXPECT_EQ(info.second - info.first, static_cast<size_t>(current.reserved_bytes[0].current));
  }
  EXPECT_OK(acc::ResetPeakStats());
  EXPECT_OK(acc::ResetAccumulatedStats(count_ - 1));
  EXPECT_STATUS(acc::GetDeviceStats(count_), kOutOfRange, "out of range");
  EXPECT_STATUS(acc::ResetPeakStats(99), kOutOfRange, "out of range");
  EXPECT_STATUS(acc::GetMemoryInfo(count_), kOutOfRange, "out of range");
}

TEST_F(MemoryTest, EmptyCacheWaitsForInFlightWorkOnFreedBlocks) {
  const Device d = Exact();
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(kMiB, d, s));
  SLEEP_OR_SKIP(s, kLongSleep);
  ASSERT_OK(buf.Fill(7, s));
  ASSERT_OK(buf.Free());  // the fill is still queued behind the sleep
  const int64_t syncs = Stats(d).num_sync_all_streams;
  ASSERT_OK_AND_ASSIGN(bool idle, s.Query());
  EXPECT_FALSE(idle);
  ASSERT_OK(EmptyCache(d));
  ASSERT_OK_AND_ASSIGN(idle, s.Query());
  EXPECT_TRUE(idle) << "segments go back to the backend only after the device is idle";
  EXPECT_EQ(Stats(d).reserved_bytes[0].current, 0);
  EXPECT_EQ(Stats(d).num_sync_all_streams, syncs + 1);
}

// --- stream-ordered reuse -------------------------------------------------------------

TEST_F(MemoryTest, SameStreamReusesAtOnceOtherStreamsAfterTheWork) {
  const Device d = Exact();
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(Stream t, Stream::New(d));
  ASSERT_NE(s, t);
  constexpr size_t n = 10 * kMiB;  // an exact 10 MiB segment: no remainder to share
  SLEEP_OR_SKIP(s, kLongSleep);
  ASSERT_OK_AND_ASSIGN(void* p, RawAlloc(n, d, s));
  ASSERT_OK(RawDelete(p, d));
  ASSERT_OK_AND_ASSIGN(void* q, RawAlloc(n, d, s));
  EXPECT_EQ(q, p) << "the freeing stream reuses its block at once";
  ASSERT_OK(RawDelete(q, d));
  ASSERT_OK_AND_ASSIGN(void* r, RawAlloc(n, d, t));
  EXPECT_NE(r, p) << "another stream must not get a block whose stream is still busy";
  ASSERT_OK_AND_ASSIGN(bool idle, s.Query());
  EXPECT_FALSE(idle);
  ASSERT_OK(s.Synchronize());
  ASSERT_OK_AND_ASSIGN(void* u, RawAlloc(n, d, t));
  EXPECT_EQ(u, p) << "once the stream is idle its free block is lent to others";
  EXPECT_EQ(Stats(d).segment[0].current, 2);
  ASSERT_OK(RawDelete(r, d));
  ASSERT_OK(RawDelete(u, d));
}

TEST_F(MemoryTest, RecordedStreamHoldsTheBlockUntilItsWorkIsDone) {
  const Device d = Exact();
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(Stream t, Stream::New(d));
  constexpr size_t n = 10 * kMiB;
  ASSERT_OK_AND_ASSIGN(void* p, RawAlloc(n, d, s));
  ASSERT_OK(RecordStream(p, d, t));
  ASSERT_OK(RecordStream(p, d, t));  // twice is once
  ASSERT_OK(RecordStream(p, d, s));  // its own stream: nothing to record
  SLEEP_OR_SKIP(t, kLongSleep);
  const DeviceStats before = Stats(d);
  ASSERT_OK(RawDelete(p, d));
  DeviceStats after = Stats(d);
  EXPECT_EQ(after.allocation[0].current, before.allocation[0].current - 1);
  EXPECT_EQ(after.active[0].current, before.active[0].current) << "still active: t uses it";
  ASSERT_OK_AND_ASSIGN(void* q, RawAlloc(n, d, s));
  EXPECT_NE(q, p) << "not reused by its own stream while the recorded stream works";
  ASSERT_OK(t.Synchronize());
  ASSERT_OK_AND_ASSIGN(void* r, RawAlloc(n, d, s));
  EXPECT_EQ(r, p);
  ASSERT_OK(RawDelete(q, d));
  ASSERT_OK(RawDelete(r, d));
}

TEST_F(MemoryTest, BufferOpsOnAnotherStreamAreRecorded) {
  const Device d = Exact();
  ASSERT_OK_AND_ASSIGN(Stream t, Stream::New(d));
  constexpr size_t n = 10 * kMiB;
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(n, d));  // for the default stream
  void* p = buf.data();
  SLEEP_OR_SKIP(t, kLongSleep);
  ASSERT_OK(buf.Fill(1, t));  // queued on t behind the sleep
  ASSERT_OK(buf.Free());
  ASSERT_OK_AND_ASSIGN(Buffer other, Buffer::Create(n, d));
  EXPECT_NE(other.data(), p) << "the fill on t still targets the freed block";
  ASSERT_OK(t.Synchronize());
  ASSERT_OK_AND_ASSIGN(Buffer again, Buffer::Create(n, d));
  EXPECT_EQ(again.data(), p);
}

// --- out of memory ---------------------------------------------------------------------

TEST_F(MemoryTest, OutOfMemoryReleasesTheCacheRetriesThenFails) {
  if (!IsSim()) GTEST_SKIP() << "needs the simulated device's exact 64 MiB capacity";
  const Device d = Exact();
  ASSERT_OK_AND_ASSIGN(auto info, GetMemoryInfo(d));
  ASSERT_EQ(info.second, 64 * kMiB) << "registered with ANYDEV_SIM_MEMORY=64MiB";
  ASSERT_OK(ResetAccumulatedMemoryStats(d));
  ASSERT_OK_AND_ASSIGN(void* cached, RawAlloc(40 * kMiB, d));
  ASSERT_OK(RawDelete(cached, d));  // 40 MiB cached
  // 50 MiB does not fit beside the cache: the cache goes, the retry works.
  ASSERT_OK_AND_ASSIGN(void* big, RawAlloc(50 * kMiB, d));
  DeviceStats s = Stats(d);
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_ooms, 0);
  EXPECT_EQ(s.num_sync_all_streams, 1);
  EXPECT_EQ(s.reserved_bytes[0].current, int64_t{50 << 20});
  // 30 MiB more cannot fit, and nothing is cached: out of memory at once,
  // without a retry or a device wait (Note [Out of memory without a wait]).
  absl::StatusOr<void*> fail = RawAlloc(30 * kMiB, d);
  ASSERT_STATUS(fail, kResourceExhausted, "out of memory. Tried to allocate 30.00 MiB.");
  const std::string msg(fail.status().message());
  EXPECT_TRUE(absl::StrContains(msg, "GPU 1 (sim:1) has a total capacity of 64.00 MiB of which "
                                     "14.00 MiB is free"))
      << msg;
  EXPECT_TRUE(absl::StrContains(msg, "50.00 MiB is allocated by anydev")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "0 bytes is reserved by anydev but unallocated")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "requested 31457280 bytes")) << msg;
  s = Stats(d);
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_sync_all_streams, 1);
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(s.allocation[0].current, 1) << "a failed allocation changes no current value";
  ASSERT_OK(RawDelete(big, d));
}

TEST_F(MemoryTest, OutOfMemoryDoesNotWaitForOtherStreamsWhenNothingIsCached) {
  if (!IsSim()) GTEST_SKIP() << "needs the simulated device's exact 64 MiB capacity";
  const Device d = Exact();
  ASSERT_OK_AND_ASSIGN(void* held, RawAlloc(40 * kMiB, d));
  ASSERT_OK_AND_ASSIGN(Stream busy, Stream::New(d));
  SLEEP_OR_SKIP(busy, absl::Seconds(2));
  const DeviceStats before = Stats(d);
  const absl::Time start = absl::Now();
  EXPECT_STATUS(RawAlloc(30 * kMiB, d), kResourceExhausted, "out of memory");
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(1)) << "the error waited for the other stream's work";
  ASSERT_OK_AND_ASSIGN(bool idle, busy.Query());
  EXPECT_FALSE(idle);
  const DeviceStats after = Stats(d);
  EXPECT_EQ(after.num_sync_all_streams, before.num_sync_all_streams);
  EXPECT_EQ(after.num_alloc_retries, before.num_alloc_retries);
  EXPECT_EQ(after.num_ooms, before.num_ooms + 1);
  ASSERT_OK(RawDelete(held, d));
}

TEST_F(MemoryTest, ASegmentGivesWayToTheFreeMemoryOfAFullDevice) {
  if (!IsSim()) GTEST_SKIP() << "needs the simulated device's exact 64 MiB capacity";
  const Device d = Exact();
  ASSERT_OK(ResetAccumulatedMemoryStats(d));
  ASSERT_OK_AND_ASSIGN(void* big, RawAlloc(62 * kMiB, d));  // 2 MiB left
  // 1.5 MiB asks for a 20 MiB segment; one of its own size serves it.
  ASSERT_OK_AND_ASSIGN(void* mid, RawAlloc(1536 * kKiB, d));
  DeviceStats s = Stats(d);
  EXPECT_EQ(s.segment[0].current, 2);
  EXPECT_EQ(s.reserved_bytes[0].current, int64_t{62 * kMiB + 1536 * kKiB});
  EXPECT_EQ(s.num_alloc_retries, 0) << "no cache to release, no device wait";
  ASSERT_OK(RawDelete(mid, d));  // 1.5 MiB cached in the large pool
  // 512 bytes want a 2 MiB small segment: 512 KiB are free, they get 512 bytes.
  ASSERT_OK_AND_ASSIGN(void* small, RawAlloc(512, d));
  s = Stats(d);
  EXPECT_EQ(s.segment[1].current, 1);
  EXPECT_EQ(s.reserved_bytes[1].current, 512);
  // 2 MiB cannot fit even with the cache released: out of memory at once.
  EXPECT_STATUS(RawAlloc(2 * kMiB, d), kResourceExhausted, "out of memory");
  EXPECT_EQ(Stats(d).num_alloc_retries, 0);
  EXPECT_EQ(Stats(d).num_sync_all_streams, 0);
  // 1.75 MiB fits once the cached 1.5 MiB goes back: one retry.
  ASSERT_OK_AND_ASSIGN(void* fits, RawAlloc(1792 * kKiB, d));
  s = Stats(d);
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_sync_all_streams, 1);
  EXPECT_EQ(s.reserved_bytes[0].current, int64_t{62 * kMiB + 1792 * kKiB + 512});
  EXPECT_EQ(s.allocated_bytes[0].current, int64_t{62 * kMiB + 1792 * kKiB + 512});
  ASSERT_OK(RawDelete(fits, d));
  ASSERT_OK(RawDelete(small, d));
  ASSERT_OK(RawDelete(big, d));
}

TEST_F(MemoryTest, AbsurdSizesAreOutOfMemoryWithoutARetry) {
  const Device d = Exact();
  const DeviceStats before = Stats(d);
  for (size_t n : {size_t{1} << 62, ~size_t{0}}) {
    absl::StatusOr<void*> p = RawAlloc(n, d);
    EXPECT_STATUS(p, kResourceExhausted, "Tried to allocate");
  }
  int64_t ooms = 2;
  if (IsSim()) {  // a fake vendor runtime may not enforce the capacity it reports
    ASSERT_OK_AND_ASSIGN(auto info, GetMemoryInfo(d));
    EXPECT_STATUS(RawAlloc(info.second + kMiB, d), kResourceExhausted, "total capacity");
    ++ooms;
  }
  const DeviceStats after = Stats(d);
  EXPECT_EQ(after.num_ooms - before.num_ooms, ooms);
  EXPECT_EQ(after.num_alloc_retries, before.num_alloc_retries) << "bigger than the device";
  EXPECT_STATUS(Buffer::Create(size_t{1} << 62, d), kResourceExhausted, "out of memory");
}

// --- bad pointers and arguments ---------------------------------------------------------

TEST_F(MemoryTest, ForeignAndDoubleFreesNameThePointerAndChangeNothing) {
  const Device d = Exact();
  ASSERT_OK_AND_ASSIGN(void* p, RawAlloc(4096, d));
  const DeviceStats before = Stats(d);
  int on_stack = 0;
  EXPECT_STATUS(RawDelete(&on_stack, d), kInvalidArgument, PtrText(&on_stack));
  void* middle = static_cast<char*>(p) + 512;
  EXPECT_STATUS(RawDelete(middle, d), kInvalidArgument, "not a live allocation");
  EXPECT_STATUS(RawDelete(p, Dev(0)), kInvalidArgument, PtrText(p)) << "freed on the wrong device";
  EXPECT_STATUS(RecordStream(&on_stack, d, Stream::Default(d)), kInvalidArgument,
                PtrText(&on_stack));
  const DeviceStats unchanged = Stats(d);
  EXPECT_EQ(FlattenDeviceStats(unchanged), FlattenDeviceStats(before));
  ASSERT_OK(RawDelete(p, d));
  EXPECT_STATUS(RawDelete(p, d), kInvalidArgument, "double free");
  EXPECT_STATUS(RecordStream(p, d, Stream::Default(d)), kInvalidArgument, "not a live");
  // The pool still works and its counts are exact.
  ASSERT_OK_AND_ASSIGN(void* again, RawAlloc(4096, d));
  EXPECT_EQ(again, p);
  EXPECT_EQ(Stats(d).allocation[0].current, before.allocation[0].current);
  ASSERT_OK(RawDelete(again, d));
}

TEST_F(MemoryTest, StreamsMustBelongToTheDevice) {
  if (count_ < 2) GTEST_SKIP() << "needs 2 devices";
  ASSERT_OK_AND_ASSIGN(Stream s1, Stream::New(Dev(1)));
  EXPECT_STATUS(RawAlloc(64, Dev(0), s1), kInvalidArgument, "is not a stream of");
  EXPECT_STATUS(Buffer::Create(64, Dev(0), s1), kInvalidArgument, "is not a stream of");
  EXPECT_STATUS(RawAlloc(64, Dev(0), Stream(Dev(0), 100000)), kInvalidArgument, "100000");
  EXPECT_STATUS(RawAlloc(64, Device(type_, 99)), kOutOfRange, "out of range");
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(64, Dev(0)));
  std::vector<uint8_t> host(64);
  EXPECT_STATUS(buf.CopyFromHost(host.data(), 64, s1), kInvalidArgument, Dev(0).ToString());
  EXPECT_STATUS(buf.CopyToHost(host.data(), 64, s1), kInvalidArgument, "is not a stream of");
  EXPECT_STATUS(buf.Fill(1, s1), kInvalidArgument, "is not a stream of");
  ASSERT_OK_AND_ASSIGN(Buffer cpu, Buffer::Create(64, Device(DeviceType::kCPU, 0)));
  EXPECT_STATUS(buf.CopyFrom(cpu), kInvalidArgument, "different types");
  EXPECT_STATUS(buf.RecordStream(Stream::Default(Device(DeviceType::kCPU, 0))), kInvalidArgument,
                "is not a stream of a");
}

// --- Buffer -------------------------------------------------------------------------------

TEST_F(MemoryTest, BufferCopiesAndFills) {
  const Device d = Dev(0);
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(1000, d));
  EXPECT_TRUE(buf.live());
  EXPECT_EQ(buf.nbytes(), 1000u);
  EXPECT_EQ(buf.device(), d);
  std::vector<uint8_t> src(1000), dst(1000, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7);
  ASSERT_OK(buf.CopyFromHost(src.data(), src.size()));
  ASSERT_OK(buf.CopyToHost(dst.data(), dst.size()));
  EXPECT_EQ(dst, src);
  ASSERT_OK(buf.Fill(0xab));
  ASSERT_OK(buf.CopyFromHost(src.data(), 10, std::nullopt, 990));  // the last 10 bytes
  ASSERT_OK(buf.CopyToHost(dst.data(), dst.size()));
  EXPECT_EQ(dst[989], 0xab);
  EXPECT_EQ(dst[990], src[0]);
  EXPECT_EQ(dst[999], src[9]);
  std::vector<uint8_t> part(4);
  ASSERT_OK(buf.CopyToHost(part.data(), 4, std::nullopt, 996));
  EXPECT_EQ(part[3], src[9]);

  ASSERT_OK_AND_ASSIGN(Buffer copy, Buffer::Create(1000, d));
  ASSERT_OK(copy.CopyFrom(buf));
  std::vector<uint8_t> back(1000);
  ASSERT_OK(copy.CopyToHost(back.data(), back.size()));
  EXPECT_EQ(back, dst);
}

TEST_F(MemoryTest, BufferOverrunsEitherSideAreErrors) {
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(100, Dev(0)));
  std::vector<uint8_t> host(200);
  EXPECT_STATUS(buf.CopyFromHost(host.data(), 101), kInvalidArgument, "overrun the buffer of 100");
  EXPECT_STATUS(buf.CopyFromHost(host.data(), 10, std::nullopt, 95), kInvalidArgument, "offset 95");
  EXPECT_STATUS(buf.CopyToHost(host.data(), 200), kInvalidArgument, "overrun");
  EXPECT_STATUS(buf.CopyToHost(host.data(), 1, std::nullopt, 100), kInvalidArgument, "overrun");
  EXPECT_STATUS(buf.CopyToHost(host.data(), 1, std::nullopt, ~size_t{0}), kInvalidArgument,
                "overrun");
  EXPECT_STATUS(buf.CopyFromHost(nullptr, 1), kInvalidArgument, "null");
  ASSERT_OK_AND_ASSIGN(Buffer big, Buffer::Create(101, Dev(0)));
  EXPECT_STATUS(buf.CopyFrom(big), kInvalidArgument, "overruns the destination of 100");
  ASSERT_OK(big.CopyFrom(buf));  // a smaller source fills the start
}

TEST_F(MemoryTest, FreedAndMovedBuffersAreErrors) {
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(100, Dev(0)));
  Buffer moved = std::move(buf);
  EXPECT_TRUE(moved.live());
  EXPECT_FALSE(buf.live());  // NOLINT(bugprone-use-after-move): testing the moved-from state
  uint8_t byte = 0;
  EXPECT_STATUS(buf.CopyToHost(&byte, 1), kFailedPrecondition, "freed");
  ASSERT_OK(moved.Free());
  EXPECT_OK(moved.Free()) << "freeing twice is a no-op";
  EXPECT_EQ(moved.data(), nullptr);
  EXPECT_STATUS(moved.Fill(1), kFailedPrecondition, "has been freed");
  EXPECT_STATUS(moved.RecordStream(Stream::Default(Dev(0))), kFailedPrecondition, "freed");
  ASSERT_OK_AND_ASSIGN(Buffer other, Buffer::Create(100, Dev(0)));
  EXPECT_STATUS(other.CopyFrom(moved), kFailedPrecondition, "source buffer has been freed");
  ASSERT_OK_AND_ASSIGN(Buffer empty, Buffer::Create(0, Dev(0)));
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_OK(empty.Fill(3));
  EXPECT_OK(empty.CopyToHost(&byte, 0));
}

TEST_F(MemoryTest, BufferAsyncOnAStream) {
  const Device d = Dev(0);
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(4096, d));
  std::vector<uint8_t> src(4096, 5), dst(4096, 0);
  SLEEP_OR_SKIP(s, kLongSleep);
  ASSERT_OK(buf.CopyFromHost(src.data(), src.size(), s));
  ASSERT_OK(buf.Fill(9, s));
  ASSERT_OK(buf.CopyToHost(dst.data(), dst.size(), s));
  ASSERT_OK_AND_ASSIGN(bool idle, s.Query());
  EXPECT_FALSE(idle) << "asynchronous calls return before the work runs";
  EXPECT_EQ(dst[0], 0);
  ASSERT_OK(s.Synchronize());
  EXPECT_EQ(dst, std::vector<uint8_t>(4096, 9));
}

TEST_F(MemoryTest, BufferCopiesAcrossDevices) {
  if (count_ < 2) GTEST_SKIP() << "needs 2 devices";
  ASSERT_OK_AND_ASSIGN(Buffer a, Buffer::Create(3000, Dev(0)));
  ASSERT_OK_AND_ASSIGN(Buffer b, Buffer::Create(3000, Dev(1)));
  std::vector<uint8_t> src(3000), dst(3000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i ^ 0x5a);
  ASSERT_OK(a.CopyFromHost(src.data(), src.size()));
  ASSERT_OK(b.CopyFrom(a));
  ASSERT_OK(b.CopyToHost(dst.data(), dst.size()));
  EXPECT_EQ(dst, src);
  // Asynchronously, after work queued on the source device's current stream.
  ASSERT_OK_AND_ASSIGN(Stream s0, acc::CurrentStream(0));
  ASSERT_OK_AND_ASSIGN(Stream s1, Stream::New(Dev(1)));
  SLEEP_OR_SKIP(s0, absl::Milliseconds(50));
  ASSERT_OK(a.Fill(0x11, s0));
  ASSERT_OK(b.CopyFrom(a, s1));
  ASSERT_OK(s1.Synchronize());
  ASSERT_OK(b.CopyToHost(dst.data(), dst.size()));
  EXPECT_EQ(dst, std::vector<uint8_t>(3000, 0x11));
}

// --- graphs keep their memory (Note [Graph memory]) -------------------------------------

#define REQUIRE_GRAPHS(status)                                      \
  do {                                                              \
    const absl::Status require_graphs_ = (status);                  \
    if (require_graphs_.code() == absl::StatusCode::kUnimplemented) \
      GTEST_SKIP() << require_graphs_;                              \
    ASSERT_OK(require_graphs_);                                     \
  } while (0)

TEST_F(MemoryTest, AGraphKeepsABufferFreedAfterItsCapture) {
  const Device d = Exact();
  constexpr size_t n = 4 * kMiB;
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(n, d, s));
  void* const p = buf.data();
  Graph g;
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
    REQUIRE_GRAPHS(g.CaptureBegin());
    ASSERT_OK(buf.Fill(7, s));
    ASSERT_OK(buf.Fill(7));  // without a stream: captured too, returns at once
    ASSERT_OK(g.CaptureEnd());
  }
  const DeviceStats before_free = Stats(d);
  ASSERT_OK(buf.Free());
  ASSERT_OK(EmptyCache(d));
  DeviceStats held = Stats(d);
  EXPECT_EQ(held.reserved_bytes[0].current, before_free.reserved_bytes[0].current)
      << "the graph's buffer went back to the backend";
  EXPECT_EQ(held.allocated_bytes[0].current, before_free.allocated_bytes[0].current - int64_t{n});
  EXPECT_EQ(held.active_bytes[0].current, before_free.active_bytes[0].current)
      << "held for a graph: still active, as a block waiting for events";
  // A new buffer of the same size, on the same stream, gets other memory,
  // and the replay leaves it alone.
  ASSERT_OK_AND_ASSIGN(Buffer other, Buffer::Create(n, d, s));
  EXPECT_NE(other.data(), p);
  ASSERT_OK(other.Fill(1, s));
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
    ASSERT_OK(g.Replay());
  }
  std::vector<uint8_t> host(n, 0);
  ASSERT_OK(other.CopyToHost(host.data(), host.size(), s));
  ASSERT_OK(s.Synchronize());
  EXPECT_EQ(std::count(host.begin(), host.end(), 1), static_cast<ptrdiff_t>(n));
  // Reset: the memory is the cache's again, counted as free.
  g.Reset();
  ASSERT_OK(other.Free());
  ASSERT_OK(s.Synchronize());
  const DeviceStats after = Stats(d);
  EXPECT_EQ(after.active_bytes[0].current, 0);
  EXPECT_EQ(after.allocated_bytes[0].current, 0);
  ASSERT_OK(EmptyCache(d));
  EXPECT_EQ(Stats(d).reserved_bytes[0].current, 0);
}

TEST_F(MemoryTest, AGraphHeldBlockWaitsForItsReplaysAfterTheReset) {
  const Device d = Exact();
  constexpr size_t n = 10 * kMiB;  // a segment of its own
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(Stream r, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(Stream t, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(n, d, s));
  void* const p = buf.data();
  Graph g;
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
    REQUIRE_GRAPHS(g.CaptureBegin());
    ASSERT_OK(buf.Fill(3, s));
    ASSERT_OK(g.CaptureEnd());
  }
  ASSERT_OK(buf.Free());
  SLEEP_OR_SKIP(r, kLongSleep);
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(r));
    ASSERT_OK(g.Replay());  // queued on r behind the sleep
  }
  g.Reset();
  ASSERT_OK(s.Synchronize());  // the block's own stream is idle
  ASSERT_OK_AND_ASSIGN(void* q, RawAlloc(n, d, t));
  EXPECT_NE(q, p) << "reused while a replay on another stream may still write it";
  ASSERT_OK(r.Synchronize());
  ASSERT_OK_AND_ASSIGN(void* q2, RawAlloc(n, d, t));
  EXPECT_EQ(q2, p) << "free once the replay has run";
  ASSERT_OK(RawDelete(q, d));
  ASSERT_OK(RawDelete(q2, d));
}

TEST_F(MemoryTest, CaptureAllocatesFromTheGraphsPrivatePool) {
  const Device d = Exact();
  constexpr size_t n = kMiB;
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
  ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
  ASSERT_OK_AND_ASSIGN(void* outside, RawAlloc(n, d, s));
  ASSERT_OK(RawDelete(outside, d));  // cached, deferred on s
  Graph g1;
  REQUIRE_GRAPHS(g1.CaptureBegin());
  ASSERT_OK_AND_ASSIGN(void* inside, RawAlloc(n, d, s));
  EXPECT_NE(inside, outside) << "a capture allocates from its own pool, not the cache";
  ASSERT_OK(g1.CaptureEnd());
  ASSERT_OK(RawDelete(inside, d));
  // Freed after the capture, it stays in the graph's pool: an ordinary
  // allocation does not get it, a capture into the same pool does.
  ASSERT_OK_AND_ASSIGN(void* plain, RawAlloc(n, d, s));
  EXPECT_NE(plain, inside);
  Graph g2;
  ASSERT_OK(g2.CaptureBegin(g1.Pool()));
  ASSERT_OK_AND_ASSIGN(void* shared, RawAlloc(n, d, s));
  EXPECT_EQ(shared, inside) << "graphs that share a pool share its memory";
  ASSERT_OK(g2.CaptureEnd());
  ASSERT_OK(RawDelete(shared, d));
  ASSERT_OK(RawDelete(plain, d));
  const int64_t reserved = Stats(d).reserved_bytes[0].current;
  g1.Reset();
  ASSERT_OK(EmptyCache(d));
  EXPECT_EQ(Stats(d).reserved_bytes[0].current, int64_t{2 << 20})
      << "the pool's segment stays while g2 uses the pool; the cache's goes (had " << reserved
      << ")";
  g2.Reset();
  ASSERT_OK(EmptyCache(d));
  EXPECT_EQ(Stats(d).reserved_bytes[0].current, 0);
  EXPECT_EQ(Stats(d).allocated_bytes[0].current, 0);
}

// --- the CPU has an allocator too --------------------------------------------------------

TEST_F(MemoryTest, CpuBuffersUseTheCpuAllocator) {
  const Device cpu(DeviceType::kCPU, 0);
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(100, Device(DeviceType::kCPU)));
  EXPECT_EQ(buf.device(), cpu);
  ASSERT_OK(buf.Fill(4));
  uint8_t out[100];
  ASSERT_OK(buf.CopyToHost(out, 100));
  EXPECT_EQ(out[99], 4);
  ASSERT_OK_AND_ASSIGN(DeviceStats s, MemoryStats(cpu));
  EXPECT_EQ(s.allocated_bytes[0].current, 512);
  ASSERT_OK(buf.Free());
  ASSERT_OK(EmptyCache(cpu));
  ASSERT_OK_AND_ASSIGN(s, MemoryStats(cpu));
  EXPECT_EQ(s.reserved_bytes[0].current, 0);
}

// --- a random sequence: live blocks never overlap, counts stay exact -------------------

TEST_F(MemoryTest, RandomSequenceKeepsBlocksDisjointAndCountsExact) {
  const Device d = Dev(0);
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(d));
  const DeviceStats base = Stats(d);
  std::mt19937_64 rng(42);
  std::map<uintptr_t, size_t> live;  // start -> requested size
  size_t live_bytes = 0;
  int ooms = 0;
  for (int step = 0; step < 3000; ++step) {
    const bool alloc = live.empty() || (rng() % 100 < 55 && live_bytes < 32 * kMiB);
    if (alloc) {
      // Log-uniform from 1 B to 24 MiB: both pools, splits of every kind.
      const size_t n = static_cast<size_t>(std::exp2(static_cast<double>(rng() % 2450) / 100.0));
      absl::StatusOr<void*> p = RawAlloc(n, d, rng() % 2 ? s : Stream::Default(d));
      if (!p.ok()) {
        // Fragmentation can refuse a large block on a 64 MiB device; that
        // must be a clean out-of-memory error.
        ASSERT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted) << p.status();
        ++ooms;
        continue;
      }
      const uintptr_t start = reinterpret_cast<uintptr_t>(*p);
      auto next = live.lower_bound(start);
      ASSERT_TRUE(next == live.end() || next->first >= start + n) << "overlaps the next block";
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, start) << "overlaps the previous block";
      }
      live.emplace(start, n);
      live_bytes += n;
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % live.size()));
      ASSERT_OK(RawDelete(reinterpret_cast<void*>(it->first), d));
      live_bytes -= it->second;
      live.erase(it);
    }
    if (step % 100 == 0) {
      const DeviceStats now = Stats(d);
      ASSERT_EQ(now.requested_bytes[0].current - base.requested_bytes[0].current,
                static_cast<int64_t>(live_bytes));
      ASSERT_EQ(now.allocation[0].current - base.allocation[0].current,
                static_cast<int64_t>(live.size()));
      ASSERT_GE(now.reserved_bytes[0].current, now.allocated_bytes[0].current);
    }
  }
  EXPECT_LT(ooms, 30) << "out of memory too often";
  for (const auto& [start, n] : live) ASSERT_OK(RawDelete(reinterpret_cast<void*>(start), d));
  ASSERT_OK(EmptyCache(d));
  const DeviceStats end = Stats(d);
  EXPECT_EQ(end.reserved_bytes[0].current, 0);
  EXPECT_EQ(end.inactive_split[0].current, 0);
  EXPECT_EQ(end.inactive_split_bytes[0].current, 0);
  EXPECT_EQ(end.active_bytes[0].current, 0);
  EXPECT_EQ(end.segment[0].current, 0);
  EXPECT_EQ(end.segment[0].allocated - base.segment[0].allocated,
            end.num_device_alloc - base.num_device_alloc);
}

// --- stress -------------------------------------------------------------------------------

// Threads allocate, fill, check and free buffers of mixed sizes on their own
// streams and the default stream; a quarter of the buffers are handed to
// another thread, which checks and frees them. Counts and contents must stay
// exact throughout.
TEST_F(MemoryTest, StressManyThreadsAndStreams) {
  const Device d = Dev(0);
  ASSERT_OK(ResetAccumulatedMemoryStats(d));
  const DeviceStats before = Stats(d);
  constexpr int kThreads = 6;
  constexpr int kIterations = 300;
  struct Handoff {
    Buffer buf;
    uint8_t value;
  };
  std::mutex handoff_mu;
  std::deque<Handoff> handoff;
  std::atomic<int> failures{0};
  std::atomic<int64_t> allocations{0};
  auto check = [&](const Buffer& buf, uint8_t value) {
    std::vector<uint8_t> out(buf.nbytes());
    if (!buf.CopyToHost(out.data(), out.size()).ok()) return false;
    return std::all_of(out.begin(), out.end(), [value](uint8_t b) { return b == value; });
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      absl::StatusOr<Stream> own = Stream::New(d);
      if (!own.ok()) {
        ++failures;
        return;
      }
      std::vector<Handoff> live;
      for (int i = 0; i < kIterations; ++i) {
        const bool on_own = rng() % 2 == 0;
        const Stream s = on_own ? *own : Stream::Default(d);
        const size_t sizes[] = {1, 500, 4096, 100000, 512 * kKiB, kMiB + 256 * kKiB};
        const size_t n = sizes[rng() % 6] + rng() % 256;
        absl::StatusOr<Buffer> buf = Buffer::Create(n, d, s);
        if (!buf.ok()) {
          ++failures;
          continue;
        }
        ++allocations;
        const uint8_t value = static_cast<uint8_t>(rng());
        if (!buf->Fill(value, s).ok() || !s.Synchronize().ok()) ++failures;
        live.push_back({*std::move(buf), value});
        if (live.size() > 3 || rng() % 3 == 0) {
          const size_t k = rng() % live.size();
          Handoff h = std::move(live[k]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
          if (!check(h.buf, h.value)) ++failures;
          if (rng() % 4 == 0) {
            std::lock_guard<std::mutex> lock(handoff_mu);
            handoff.push_back(std::move(h));
          }  // else freed here
        }
        std::optional<Handoff> theirs;
        {
          std::lock_guard<std::mutex> lock(handoff_mu);
          if (!handoff.empty()) {
            theirs = std::move(handoff.front());
            handoff.pop_front();
          }
        }
        if (theirs && !check(theirs->buf, theirs->value)) ++failures;
      }
      for (Handoff& h : live) {
        if (!check(h.buf, h.value)) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  handoff.clear();
  const DeviceStats after = Stats(d);
  EXPECT_EQ(failures.load(), 0) << "out-of-memory errors: " << after.num_ooms;
  EXPECT_EQ(after.allocation[0].current, before.allocation[0].current);
  EXPECT_EQ(after.allocated_bytes[0].current, before.allocated_bytes[0].current);
  EXPECT_EQ(after.requested_bytes[0].current, before.requested_bytes[0].current);
  EXPECT_EQ(after.active[0].current, before.active[0].current);
  EXPECT_EQ(after.allocation[0].allocated, allocations.load());
  EXPECT_EQ(after.allocation[0].freed, allocations.load());
  EXPECT_EQ(after.allocated_bytes[0].allocated, after.allocated_bytes[0].freed);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(after.allocation[t].current,
              after.allocation[t].allocated - after.allocation[t].freed);
  }
  ASSERT_OK(EmptyCache(d));
  const DeviceStats empty = Stats(d);
  EXPECT_EQ(empty.reserved_bytes[0].current, 0);
  EXPECT_EQ(empty.inactive_split[0].current, 0);
  EXPECT_EQ(empty.inactive_split_bytes[0].current, 0);
  EXPECT_EQ(empty.segment[0].current, 0);
}

}  // namespace
}  // namespace anydev
