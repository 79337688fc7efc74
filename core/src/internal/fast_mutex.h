// internal/fast_mutex.h: a mutex for short critical sections on hot paths.
//
// Note [FastMutex]: the caching allocator takes its device lock twice per
// allocate+free pair; std::mutex (pthread_mutex_lock/unlock, out of line in
// libc, with type checks) was a sixth of that pair's time. FastMutex is the
// classic three-state futex mutex (Drepper, "Futexes Are Tricky", mutex 3):
// an uncontended lock is one inlined compare-and-swap, an unlock one
// exchange; a contended locker spins briefly (critical sections are tens of
// nanoseconds) and then sleeps on the futex, so a lock held across a slow
// backend call (a device synchronisation, a segment allocation) costs its
// waiters no CPU. Elsewhere than Linux it is std::mutex.
#ifndef ANYDEV_INTERNAL_FAST_MUTEX_H_
#define ANYDEV_INTERNAL_FAST_MUTEX_H_

#include <atomic>
#include <mutex>

#include "absl/base/optimization.h"
#include "absl/base/thread_annotations.h"

namespace anydev::internal {

#if defined(__linux__)

class ABSL_LOCKABLE FastMutex {
 public:
  FastMutex() = default;
  FastMutex(const FastMutex&) = delete;
  FastMutex& operator=(const FastMutex&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    int expected = kUnlocked;
    if (ABSL_PREDICT_FALSE(!state_.compare_exchange_strong(
            expected, kLocked, std::memory_order_acquire, std::memory_order_relaxed))) {
      LockSlow();
    }
  }
  void unlock() ABSL_UNLOCK_FUNCTION() {
    if (ABSL_PREDICT_FALSE(state_.exchange(kUnlocked, std::memory_order_release) == kWaiters)) {
      WakeOne();
    }
  }

 private:
  static constexpr int kUnlocked = 0;
  static constexpr int kLocked = 1;   // no thread sleeps on it
  static constexpr int kWaiters = 2;  // threads may sleep on it
  void LockSlow();
  void WakeOne();
  std::atomic<int> state_{kUnlocked};
};

#else

class ABSL_LOCKABLE FastMutex {
 public:
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

#endif

// std::lock_guard with the thread-safety annotations.
class ABSL_SCOPED_LOCKABLE FastMutexLock {
 public:
  explicit FastMutexLock(FastMutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.lock(); }
  ~FastMutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  FastMutexLock(const FastMutexLock&) = delete;
  FastMutexLock& operator=(const FastMutexLock&) = delete;

 private:
  FastMutex& mu_;
};

}  // namespace anydev::internal

#endif  // ANYDEV_INTERNAL_FAST_MUTEX_H_
