// The contended paths of FastMutex (Note [FastMutex]).
#include "internal/fast_mutex.h"

#if defined(__linux__)

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace anydev::internal {
namespace {

static_assert(sizeof(std::atomic<int>) == sizeof(int), "the futex word is the atomic's int");

void FutexWait(std::atomic<int>* word, int value) {
  // Returns at once if *word != value (EAGAIN), on a wake, or spuriously
  // (EINTR): the caller re-checks in every case.
  syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAIT_PRIVATE, value, nullptr, nullptr, 0);
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

void FastMutex::LockSlow() {
  // Spin while the holder is likely to be about to release it.
  for (int i = 0; i < 128; ++i) {
    CpuRelax();
    int expected = kUnlocked;
    if (state_.load(std::memory_order_relaxed) == kUnlocked &&
        state_.compare_exchange_weak(expected, kLocked, std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      return;
    }
  }
  // Sleep. Taking the lock in the kWaiters state is conservative: the unlock
  // then wakes one sleeper that may not exist, never misses one that does.
  while (state_.exchange(kWaiters, std::memory_order_acquire) != kUnlocked) {
    FutexWait(&state_, kWaiters);
  }
}

void FastMutex::WakeOne() {
  syscall(SYS_futex, reinterpret_cast<int*>(&state_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace anydev::internal

#endif  // defined(__linux__)
