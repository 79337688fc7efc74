// FastMutex (internal/fast_mutex.h, Note [FastMutex]): mutual exclusion on
// the uncontended, spinning and sleeping paths.
#include "internal/fast_mutex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace anydev::internal {
namespace {

TEST(FastMutexTest, ManyThreadsIncrementExactly) {
  FastMutex mu;
  int64_t counter = 0;  // guarded by mu; a torn or lost update shows in the total
  constexpr int kThreads = 6;
  constexpr int kIncrements = 200000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        FastMutexLock lock(mu);
        counter = counter + 1;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(counter, int64_t{kThreads} * kIncrements);
}

TEST(FastMutexTest, WaitersSleepThroughALongHoldAndAllGetIn) {
  // The holder keeps the lock far longer than the waiters spin, so they go
  // to sleep on the futex; each must be woken and get the lock in turn.
  FastMutex mu;
  std::atomic<int> waiting{0};
  int entered = 0;  // guarded by mu
  std::vector<std::thread> threads;
  mu.lock();
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      waiting.fetch_add(1);
      FastMutexLock lock(mu);
      ++entered;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // hold it too
    });
  }
  while (waiting.load() < 4) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(entered, 0);  // read under the lock this thread holds
  mu.unlock();
  for (std::thread& th : threads) th.join();
  FastMutexLock lock(mu);
  EXPECT_EQ(entered, 4);
}

}  // namespace
}  // namespace anydev::internal
