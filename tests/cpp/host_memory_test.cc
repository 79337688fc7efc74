// host_memory_test: TrackedHostMemory, the capacity-limited, checked host
// memory behind the cpu and sim backends' "device" allocations.
#include "internal/host_memory.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace anydev::internal {
namespace {

std::string Ptr(const void* p) { return absl::StrFormat("%p", p); }

TEST(TrackedHostMemory, AllocatesAlignedWritableBlocks) {
  TrackedHostMemory mem("sim:0", 1 << 20);
  EXPECT_EQ(mem.capacity(), uint64_t{1} << 20);
  EXPECT_EQ(mem.used(), 0u);
  std::vector<void*> blocks;
  for (size_t n : {size_t{1}, size_t{255}, size_t{256}, size_t{257}, size_t{4096}}) {
    ASSERT_OK_AND_ASSIGN(void* p, mem.Allocate(n));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u) << "block of " << n << " bytes";
    std::memset(p, 0xab, n);  // the whole block is usable
    blocks.push_back(p);
  }
  EXPECT_EQ(mem.used(), 1u + 255 + 256 + 257 + 4096);
  for (void* p : blocks) EXPECT_OK(mem.Free(p));
  EXPECT_EQ(mem.used(), 0u);
}

TEST(TrackedHostMemory, ZeroBytesIsAnError) {
  TrackedHostMemory mem("sim:0", 1024);
  EXPECT_STATUS(mem.Allocate(0), kInvalidArgument, "sim:0: cannot allocate 0 bytes");
}

TEST(TrackedHostMemory, CapacityIsResourceExhausted) {
  TrackedHostMemory mem("sim:3", 1000);
  ASSERT_OK_AND_ASSIGN(void* a, mem.Allocate(600));
  ASSERT_OK_AND_ASSIGN(void* b, mem.Allocate(400));  // exactly full
  EXPECT_EQ(mem.used(), 1000u);
  absl::StatusOr<void*> c = mem.Allocate(1);
  EXPECT_STATUS(c, kResourceExhausted, "sim:3 out of memory");
  EXPECT_STATUS(c, kResourceExhausted, "tried to allocate 1 bytes");
  EXPECT_STATUS(c, kResourceExhausted, "1000 of 1000 bytes in use");
  // A failed allocation changes nothing; freeing makes room again.
  EXPECT_EQ(mem.used(), 1000u);
  ASSERT_OK(mem.Free(b));
  EXPECT_STATUS(mem.Allocate(401), kResourceExhausted, "400 free");
  ASSERT_OK_AND_ASSIGN(void* d, mem.Allocate(400));
  EXPECT_OK(mem.Free(a));
  EXPECT_OK(mem.Free(d));
  EXPECT_EQ(mem.used(), 0u);
  // Larger than the whole capacity, and a size whose sum with `used` would
  // overflow, are refused before anything is allocated.
  EXPECT_STATUS(mem.Allocate(1001), kResourceExhausted, "out of memory");
  EXPECT_STATUS(mem.Allocate(SIZE_MAX), kResourceExhausted, "out of memory");
}

TEST(TrackedHostMemory, DoubleFreeNamesThePointer) {
  TrackedHostMemory mem("sim:0", 1 << 20);
  ASSERT_OK_AND_ASSIGN(void* p, mem.Allocate(128));
  ASSERT_OK(mem.Free(p));
  absl::Status again = mem.Free(p);
  EXPECT_STATUS(again, kInvalidArgument, Ptr(p));
  EXPECT_STATUS(again, kInvalidArgument, "double free");
  EXPECT_EQ(mem.used(), 0u);
}

TEST(TrackedHostMemory, ForeignPointerNamesThePointer) {
  TrackedHostMemory mem("sim:1", 1 << 20);
  TrackedHostMemory other("sim:2", 1 << 20);
  ASSERT_OK_AND_ASSIGN(void* mine, mem.Allocate(512));
  ASSERT_OK_AND_ASSIGN(void* theirs, other.Allocate(512));
  int on_stack = 0;
  void* const foreign[] = {&on_stack, theirs, static_cast<char*>(mine) + 1, nullptr};
  for (void* p : foreign) {
    SCOPED_TRACE(Ptr(p));
    absl::Status s = mem.Free(p);
    EXPECT_STATUS(s, kInvalidArgument, Ptr(p));
    EXPECT_STATUS(s, kInvalidArgument, "sim:1: free of");
  }
  // The failed frees did not disturb the live blocks.
  EXPECT_EQ(mem.used(), 512u);
  EXPECT_OK(mem.Free(mine));
  EXPECT_OK(other.Free(theirs));
}

TEST(TrackedHostMemory, CheckRangeAcceptsRangesInsideOneBlock) {
  TrackedHostMemory mem("sim:0", 1 << 20);
  ASSERT_OK_AND_ASSIGN(void* p, mem.Allocate(1000));
  char* base = static_cast<char*>(p);
  EXPECT_OK(mem.CheckRange(base, 1000, "copy source"));
  EXPECT_OK(mem.CheckRange(base, 0, "copy source"));
  EXPECT_OK(mem.CheckRange(base + 10, 990, "copy source"));
  EXPECT_OK(mem.CheckRange(base + 999, 1, "copy source"));
  EXPECT_OK(mem.Free(p));
}

TEST(TrackedHostMemory, CheckRangeOverrunIsOutOfRange) {
  TrackedHostMemory mem("sim:0", 1 << 20);
  ASSERT_OK_AND_ASSIGN(void* p, mem.Allocate(1000));
  char* base = static_cast<char*>(p);
  absl::Status s = mem.CheckRange(base, 1001, "copy destination");
  EXPECT_STATUS(s, kOutOfRange, "copy destination of 1001 bytes");
  EXPECT_STATUS(s, kOutOfRange, Ptr(base));
  EXPECT_STATUS(s, kOutOfRange, "overruns its block");
  EXPECT_STATUS(s, kOutOfRange, "by 1 bytes");
  s = mem.CheckRange(base + 900, 200, "fill destination");
  EXPECT_STATUS(s, kOutOfRange, Ptr(base + 900));
  EXPECT_STATUS(s, kOutOfRange, "by 100 bytes");
  // A huge size must not wrap around the address arithmetic.
  EXPECT_STATUS(mem.CheckRange(base + 1, SIZE_MAX, "copy source"), kOutOfRange, "overruns");
  EXPECT_OK(mem.Free(p));
}

TEST(TrackedHostMemory, CheckRangeOutsideEveryBlockIsInvalidArgument) {
  TrackedHostMemory mem("sim:0", 1 << 20);
  int on_stack = 0;
  // No blocks at all.
  EXPECT_STATUS(mem.CheckRange(&on_stack, 4, "copy source"), kInvalidArgument,
                "is not device memory of this device");
  ASSERT_OK_AND_ASSIGN(void* p, mem.Allocate(1000));
  char* base = static_cast<char*>(p);
  EXPECT_STATUS(mem.CheckRange(base + 1000, 1, "copy source"), kInvalidArgument,
                Ptr(base + 1000));
  void* before = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(base) - 1);
  EXPECT_STATUS(mem.CheckRange(before, 1, "copy source"), kInvalidArgument,
                "sim:0: copy source " + Ptr(before) + " is not device memory of this device");
  EXPECT_STATUS(mem.CheckRange(&on_stack, 4, "copy source"), kInvalidArgument, Ptr(&on_stack));
  EXPECT_OK(mem.Free(p));
  // A freed block is no longer device memory.
  EXPECT_STATUS(mem.CheckRange(base, 1, "copy source"), kInvalidArgument, "not device memory");
}

TEST(TrackedHostMemory, IsThreadSafe) {
  // Several threads allocate, fill, check and free concurrently under a
  // capacity smaller than their combined peak, so some allocations fail.
  // Blocks must never overlap, `used` must never exceed the capacity, and
  // everything must be accounted for at the end.
  constexpr int kThreads = 4;
  constexpr int kIterations = 2000;
  constexpr uint64_t kCapacity = 64 * 1024;
  TrackedHostMemory mem("sim:0", kCapacity);
  std::atomic<int> failures{0};
  std::atomic<int> exhausted{0};
  std::atomic<int> allocated{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 1);
      std::uniform_int_distribution<size_t> size(1, 8192);
      std::vector<std::pair<void*, size_t>> live;
      const unsigned char tag = static_cast<unsigned char>(t + 1);
      for (int i = 0; i < kIterations; ++i) {
        if (live.size() < 4 && (rng() % 3 != 0 || live.empty())) {
          const size_t n = size(rng);
          absl::StatusOr<void*> p = mem.Allocate(n);
          if (p.ok()) {
            std::memset(*p, tag, n);
            live.emplace_back(*p, n);
            allocated.fetch_add(1);
          } else if (p.status().code() == absl::StatusCode::kResourceExhausted) {
            exhausted.fetch_add(1);
          } else {
            failures.fetch_add(1);
          }
        } else {
          const size_t k = rng() % live.size();
          auto [p, n] = live[k];
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
          if (!mem.CheckRange(p, n, "check").ok()) failures.fetch_add(1);
          // No other thread wrote into this block.
          for (size_t j = 0; j < n; ++j) {
            if (static_cast<unsigned char*>(p)[j] != tag) {
              failures.fetch_add(1);
              break;
            }
          }
          if (!mem.Free(p).ok()) failures.fetch_add(1);
        }
        if (mem.used() > kCapacity) failures.fetch_add(1);
      }
      for (auto [p, n] : live) {
        if (!mem.Free(p).ok()) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(allocated.load(), kThreads * kIterations / 4);
  EXPECT_EQ(mem.used(), 0u);
  RecordProperty("exhausted", exhausted.load());
}

}  // namespace
}  // namespace anydev::internal
