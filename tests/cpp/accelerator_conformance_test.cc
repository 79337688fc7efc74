// accelerator_conformance_test: the behaviour every accelerator backend must
// show through anydev::acc and the device-generic API (streams, events, raw
// memory through the Backend). Written only against the public API so that
// it runs unchanged on whatever accelerator the process resolves: the
// simulated one in CI (ANYDEV_SIM_DEVICES=N), a real GPU where there is one.
//
// The asynchronous checks queue Stream::Sleep (the torch.cuda._sleep testing
// aid); a backend that answers Unimplemented for it skips them. Ordering is
// asserted with a sleep far longer than scheduling noise followed by an
// immediate query, never with tight timing bounds.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
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

// Long enough that a query issued right after queueing it cannot see it done
// even on a loaded machine; short enough to keep the suite fast.
constexpr absl::Duration kLongSleep = absl::Milliseconds(150);
constexpr double kLongSleepMs = 150.0;
// The sleep for timing checks, and the bounds it must fall in.
constexpr absl::Duration kTimedSleep = absl::Milliseconds(20);
constexpr double kTimedSleepMinMs = 15.0;
constexpr double kTimedSleepMaxMs = 5000.0;

#define REQUIRE_DEVICES(n)                                                         \
  do {                                                                             \
    if (count_ < (n)) GTEST_SKIP() << "needs " << (n) << " devices, have " << count_; \
  } while (0)

class AcceleratorConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<DeviceType> type = acc::GetAccelerator();
    ASSERT_TRUE(type.ok())
        << "the conformance suite needs an accelerator (on a machine without a GPU, "
           "set ANYDEV_SIM_DEVICES=N): "
        << type.status();
    type_ = *type;
    count_ = acc::DeviceCount();
    ASSERT_GT(count_, 0);
    ResetThreadState();
  }

  void TearDown() override {
    // Leave no work behind for the next test, and the calling thread on
    // device 0 with default streams, as a new thread starts.
    for (int i = 0; i < count_; ++i) EXPECT_OK(acc::Synchronize(i));
    ResetThreadState();
  }

  void ResetThreadState() {
    for (int i = 0; i < count_; ++i) {
      // The device-generic SetCurrentStream does not switch devices.
      ASSERT_OK(anydev::SetCurrentStream(Stream::Default(Dev(i))));
    }
    ASSERT_OK(acc::SetDeviceIndex(0));
  }

  Device Dev(int index) const { return Device(type_, index); }
  int Last() const { return count_ - 1; }

  DeviceType type_ = DeviceType::kCPU;
  int count_ = 0;
};

// Returns the calling thread's current device index, or -1 on error (which
// the callers' expectations then report).
int Current() {
  absl::StatusOr<int> i = acc::CurrentDeviceIndex();
  return i.ok() ? *i : -1;
}

// --- devices -------------------------------------------------------------------

TEST_F(AcceleratorConformance, HasDevices) {
  EXPECT_GT(acc::DeviceCount(), 0);
  EXPECT_TRUE(acc::IsAvailable());
  EXPECT_TRUE(IsAcceleratorType(type_));
  ASSERT_OK_AND_ASSIGN(std::optional<DeviceType> current, acc::CurrentAccelerator());
  EXPECT_EQ(current, std::optional<DeviceType>(type_));
  // Rule 2: the device-generic calls default to the accelerator.
  ASSERT_OK_AND_ASSIGN(DeviceType default_type, DefaultDeviceType());
  EXPECT_EQ(default_type, type_);
  EXPECT_EQ(DeviceCount(), count_);
  EXPECT_EQ(DeviceCount(type_), count_);
  EXPECT_EQ(DeviceCountOf(type_), count_);
  EXPECT_TRUE(IsAvailable());
  EXPECT_TRUE(IsAvailable(type_));
  // The CPU stays a device of its own, never the accelerator.
  EXPECT_EQ(DeviceCount(DeviceType::kCPU), 1);
  if (type_ == DeviceType::kSim) {
    // The simulated accelerator has exactly the devices it was asked for.
    const char* n = getenv("ANYDEV_SIM_DEVICES");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(count_, atoi(n));
  }
}

TEST_F(AcceleratorConformance, DevicePropertiesForEveryDevice) {
  for (int i = 0; i < count_; ++i) {
    SCOPED_TRACE(Dev(i).ToString());
    ASSERT_OK_AND_ASSIGN(DeviceProperties p, GetDeviceProperties(Dev(i)));
    EXPECT_FALSE(p.name.empty());
    EXPECT_GT(p.total_memory, 0u);
    ASSERT_OK_AND_ASSIGN(auto info, GetMemoryInfo(Dev(i)));
    EXPECT_GT(info.second, 0u);
    EXPECT_LE(info.first, info.second);
  }
  // Without an index: the current device.
  ASSERT_OK(GetDeviceProperties().status());
  EXPECT_STATUS(GetDeviceProperties(Dev(count_)), kOutOfRange,
                absl::StrCat("device index ", count_));
}

// --- the current device --------------------------------------------------------

TEST_F(AcceleratorConformance, SetDeviceIndexRoundTripsForEveryIndex) {
  EXPECT_EQ(Current(), 0);
  for (int i = 0; i < count_; ++i) {
    ASSERT_OK(acc::SetDeviceIndex(i));
    EXPECT_EQ(Current(), i);
    ASSERT_OK_AND_ASSIGN(int generic, CurrentDeviceIndex(type_));
    EXPECT_EQ(generic, i);
    // Setting the current index again is fine.
    ASSERT_OK(acc::SetDeviceIndex(i));
    EXPECT_EQ(Current(), i);
  }
  for (int i = Last(); i >= 0; --i) {
    ASSERT_OK(acc::SetDeviceIndex(i));
    EXPECT_EQ(Current(), i);
  }
}

TEST_F(AcceleratorConformance, NegativeIndexIsANoOp) {
  ASSERT_OK(acc::SetDeviceIndex(Last()));
  for (int negative : {-1, -2, -128}) {
    EXPECT_OK(acc::SetDeviceIndex(negative));
    EXPECT_EQ(Current(), Last());
  }
}

TEST_F(AcceleratorConformance, OutOfRangeIndexIsAnErrorAndChangesNothing) {
  ASSERT_OK(acc::SetDeviceIndex(Last()));
  for (int bad : {count_, count_ + 1, 127, 1000}) {
    SCOPED_TRACE(bad);
    absl::Status s = acc::SetDeviceIndex(bad);
    EXPECT_STATUS(s, kOutOfRange, absl::StrCat("device index ", bad, " is out of range"));
    EXPECT_STATUS(s, kOutOfRange, absl::StrCat("valid indices: 0..", Last()));
    EXPECT_EQ(Current(), Last());
    EXPECT_STATUS(acc::ExchangeDeviceIndex(bad), kOutOfRange, "out of range");
    EXPECT_EQ(Current(), Last());
    EXPECT_STATUS(acc::DeviceIndexGuard::Make(bad), kOutOfRange, "out of range");
    EXPECT_EQ(Current(), Last());
    EXPECT_STATUS(acc::CurrentStream(bad), kOutOfRange, "out of range");
    EXPECT_STATUS(acc::Synchronize(bad), kOutOfRange, "out of range");
  }
}

TEST_F(AcceleratorConformance, ExchangeDeviceIndexReturnsThePrevious) {
  ASSERT_OK_AND_ASSIGN(int previous, acc::ExchangeDeviceIndex(Last()));
  EXPECT_EQ(previous, 0);
  EXPECT_EQ(Current(), Last());
  ASSERT_OK_AND_ASSIGN(previous, acc::ExchangeDeviceIndex(0));
  EXPECT_EQ(previous, Last());
  EXPECT_EQ(Current(), 0);
  // A negative index only reads.
  ASSERT_OK(acc::SetDeviceIndex(Last()));
  ASSERT_OK_AND_ASSIGN(previous, acc::ExchangeDeviceIndex(-1));
  EXPECT_EQ(previous, Last());
  EXPECT_EQ(Current(), Last());
  ASSERT_OK_AND_ASSIGN(previous, acc::MaybeExchangeDeviceIndex(-1));
  EXPECT_EQ(previous, Last());
  EXPECT_EQ(Current(), Last());
  ASSERT_OK_AND_ASSIGN(previous, acc::MaybeExchangeDeviceIndex(0));
  EXPECT_EQ(previous, Last());
  EXPECT_EQ(Current(), 0);
}

TEST_F(AcceleratorConformance, DeviceIndexGuardRestoresNested) {
  const int a = Last();
  const int b = count_ > 2 ? 1 : 0;
  ASSERT_OK(acc::SetDeviceIndex(0));
  {
    ASSERT_OK_AND_ASSIGN(acc::DeviceIndexGuard outer, acc::DeviceIndexGuard::Make(a));
    EXPECT_EQ(outer.original_index(), 0);
    EXPECT_EQ(Current(), a);
    {
      ASSERT_OK_AND_ASSIGN(acc::DeviceIndexGuard inner, acc::DeviceIndexGuard::Make(b));
      EXPECT_EQ(inner.original_index(), a);
      EXPECT_EQ(Current(), b);
      {
        // A negative index switches nothing and restores nothing.
        ASSERT_OK_AND_ASSIGN(acc::DeviceIndexGuard none, acc::DeviceIndexGuard::Make(-1));
        EXPECT_EQ(none.original_index(), -1);
        EXPECT_EQ(Current(), b);
        ASSERT_OK(acc::SetDeviceIndex(a));  // changed by hand inside the scope
      }
      EXPECT_EQ(Current(), a);
    }
    EXPECT_EQ(Current(), a);  // inner restored its original, a
    ASSERT_OK(acc::SetDeviceIndex(b));
  }
  EXPECT_EQ(Current(), 0);
}

TEST_F(AcceleratorConformance, DeviceIndexGuardMovedRestoresOnce) {
  ASSERT_OK(acc::SetDeviceIndex(0));
  {
    std::optional<acc::DeviceIndexGuard> kept;
    {
      absl::StatusOr<acc::DeviceIndexGuard> made = acc::DeviceIndexGuard::Make(Last());
      ASSERT_OK(made);
      kept.emplace(*std::move(made));
      // `made` (moved from) goes out of scope here and must not restore.
    }
    EXPECT_EQ(Current(), Last());
    EXPECT_EQ(kept->original_index(), 0);
  }
  EXPECT_EQ(Current(), 0);
}

TEST_F(AcceleratorConformance, CurrentDeviceIsPerThread) {
  ASSERT_OK(acc::SetDeviceIndex(Last()));
  std::thread([&] {
    // A new thread starts on device 0, whatever its creator had.
    EXPECT_EQ(Current(), 0);
    EXPECT_OK(acc::SetDeviceIndex(Last()));
    EXPECT_EQ(Current(), Last());
  }).join();
  EXPECT_EQ(Current(), Last());
  ASSERT_OK(acc::SetDeviceIndex(0));
  std::thread([&] {
    EXPECT_EQ(Current(), 0);
    EXPECT_OK(acc::SetDeviceIndex(Last()));
  }).join();
  // The other thread's change does not leak here.
  EXPECT_EQ(Current(), 0);
}

// --- current streams -----------------------------------------------------------

TEST_F(AcceleratorConformance, CurrentStreamIsPerDevice) {
  for (int i = 0; i < count_; ++i) {
    ASSERT_OK_AND_ASSIGN(Stream s, acc::CurrentStream(i));
    EXPECT_EQ(s, Stream::Default(Dev(i)));
    EXPECT_EQ(s.device(), Dev(i));
    EXPECT_EQ(s.id(), 0);
  }
  std::vector<Stream> mine;
  for (int i = 0; i < count_; ++i) {
    ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(i)));
    ASSERT_OK(acc::SetCurrentStream(s));
    EXPECT_EQ(Current(), i);
    mine.push_back(s);
  }
  for (int i = 0; i < count_; ++i) {
    ASSERT_OK_AND_ASSIGN(Stream s, acc::CurrentStream(i));
    EXPECT_EQ(s, mine[static_cast<size_t>(i)]);
    ASSERT_OK_AND_ASSIGN(Stream g, CurrentStream(Dev(i)));
    EXPECT_EQ(g, mine[static_cast<size_t>(i)]);
  }
  // -1 (the default) is the current device.
  for (int i = 0; i < count_; ++i) {
    ASSERT_OK(acc::SetDeviceIndex(i));
    ASSERT_OK_AND_ASSIGN(Stream s, acc::CurrentStream());
    EXPECT_EQ(s, mine[static_cast<size_t>(i)]);
    ASSERT_OK_AND_ASSIGN(Stream g, CurrentStream(Device(type_)));
    EXPECT_EQ(g, mine[static_cast<size_t>(i)]);
  }
}

TEST_F(AcceleratorConformance, CurrentStreamIsPerThread) {
  ASSERT_OK_AND_ASSIGN(Stream mine, Stream::New(Dev(0)));
  ASSERT_OK(acc::SetCurrentStream(mine));
  std::thread([&] {
    absl::StatusOr<Stream> s = acc::CurrentStream(0);
    ASSERT_OK(s);
    EXPECT_EQ(*s, Stream::Default(Dev(0)));  // a new thread has default streams
    absl::StatusOr<Stream> theirs = Stream::New(Dev(0));
    ASSERT_OK(theirs);
    EXPECT_OK(acc::SetCurrentStream(*theirs));
    s = acc::CurrentStream(0);
    ASSERT_OK(s);
    EXPECT_EQ(*s, *theirs);
  }).join();
  ASSERT_OK_AND_ASSIGN(Stream s, acc::CurrentStream(0));
  EXPECT_EQ(s, mine);
}

TEST_F(AcceleratorConformance, SetCurrentStreamAlsoSwitchesTheDevice) {
  REQUIRE_DEVICES(2);
  ASSERT_OK(acc::SetDeviceIndex(0));
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(Last())));
  ASSERT_OK(acc::SetCurrentStream(s));
  EXPECT_EQ(Current(), Last());  // as torch.accelerator.set_stream
  ASSERT_OK_AND_ASSIGN(Stream current, acc::CurrentStream());
  EXPECT_EQ(current, s);
  // The device-generic call sets the stream only (at::accelerator::setCurrentStream).
  ASSERT_OK(acc::SetDeviceIndex(0));
  ASSERT_OK_AND_ASSIGN(Stream t, Stream::New(Dev(Last())));
  ASSERT_OK(anydev::SetCurrentStream(t));
  EXPECT_EQ(Current(), 0);
  ASSERT_OK_AND_ASSIGN(current, acc::CurrentStream(Last()));
  EXPECT_EQ(current, t);
}

TEST_F(AcceleratorConformance, SetCurrentStreamRejectsOtherDeviceTypes) {
  const Stream cpu = Stream::Default(Device(DeviceType::kCPU, 0));
  EXPECT_STATUS(acc::SetCurrentStream(cpu), kInvalidArgument, "does not match the current");
  EXPECT_STATUS(acc::StreamGuard::Make(cpu), kInvalidArgument, "does not match the current");
  EXPECT_EQ(Current(), 0);
  ASSERT_OK_AND_ASSIGN(Stream s, acc::CurrentStream());
  EXPECT_EQ(s, Stream::Default(Dev(0)));
}

TEST_F(AcceleratorConformance, StreamGuardRestoresDeviceAndStream) {
  ASSERT_OK_AND_ASSIGN(Stream before0, Stream::New(Dev(0)));
  ASSERT_OK(acc::SetCurrentStream(before0));
  ASSERT_OK_AND_ASSIGN(Stream before_last, acc::CurrentStream(Last()));
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(Last())));
  ASSERT_NE(s, before_last);
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard g, acc::StreamGuard::Make(s));
    EXPECT_EQ(Current(), Last());
    ASSERT_OK_AND_ASSIGN(Stream current, acc::CurrentStream());
    EXPECT_EQ(current, s);
    {
      ASSERT_OK_AND_ASSIGN(Stream inner_stream, Stream::New(Dev(0)));
      ASSERT_OK_AND_ASSIGN(acc::StreamGuard inner, acc::StreamGuard::Make(inner_stream));
      EXPECT_EQ(Current(), 0);
      ASSERT_OK_AND_ASSIGN(current, acc::CurrentStream());
      EXPECT_EQ(current, inner_stream);
    }
    // The inner guard restored device 0's stream as it found it: `s` when
    // there is one device, else the stream set before the outer guard.
    EXPECT_EQ(Current(), Last());
    ASSERT_OK_AND_ASSIGN(current, acc::CurrentStream(0));
    EXPECT_EQ(current, Last() == 0 ? s : before0);
    ASSERT_OK_AND_ASSIGN(current, acc::CurrentStream());
    EXPECT_EQ(current, s);
  }
  EXPECT_EQ(Current(), 0);
  ASSERT_OK_AND_ASSIGN(Stream after0, acc::CurrentStream(0));
  EXPECT_EQ(after0, before0);
  ASSERT_OK_AND_ASSIGN(Stream after_last, acc::CurrentStream(Last()));
  EXPECT_EQ(after_last, before_last);
}

// --- streams -------------------------------------------------------------------

TEST_F(AcceleratorConformance, NewStreamsAreDistinct) {
  for (int i = 0; i < count_; ++i) {
    ASSERT_OK_AND_ASSIGN(Stream a, Stream::New(Dev(i)));
    ASSERT_OK_AND_ASSIGN(Stream b, Stream::New(Dev(i)));
    EXPECT_NE(a, b);
    EXPECT_NE(a, Stream::Default(Dev(i)));
    EXPECT_NE(b, Stream::Default(Dev(i)));
    EXPECT_EQ(a.device(), Dev(i));
    EXPECT_EQ(b.device_type(), type_);
    EXPECT_EQ(b.device_index(), i);
  }
  // Without an index: on the current device.
  ASSERT_OK(acc::SetDeviceIndex(Last()));
  ASSERT_OK_AND_ASSIGN(Stream c, Stream::New(Device(type_)));
  EXPECT_EQ(c.device(), Dev(Last()));
  EXPECT_STATUS(Stream::New(Dev(count_)), kOutOfRange, "out of range");
}

TEST_F(AcceleratorConformance, PriorityIsClamped) {
  ASSERT_OK_AND_ASSIGN(Backend * backend, GetBackend(type_));
  const PriorityRange range = backend->GetPriorityRange();
  EXPECT_LE(range.greatest, range.least);
  struct Case {
    int requested;
    int expected;
  };
  const Case cases[] = {
      {range.least, range.least},
      {range.greatest, range.greatest},
      {range.least + 100, range.least},
      {range.greatest - 100, range.greatest},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.requested);
    ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0), c.requested));
    ASSERT_OK_AND_ASSIGN(int p, s.Priority());
    EXPECT_EQ(p, c.expected);
  }
  ASSERT_OK_AND_ASSIGN(int default_priority, Stream::Default(Dev(0)).Priority());
  EXPECT_EQ(default_priority, range.least);
}

TEST_F(AcceleratorConformance, Pack3RoundTrips) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(Last())));
  const StreamData3 d = s.Pack3();
  EXPECT_EQ(d.stream_id, s.id());
  EXPECT_EQ(d.device_index, Last());
  EXPECT_EQ(d.device_type, static_cast<int64_t>(type_));
  ASSERT_OK_AND_ASSIGN(Stream back, Stream::Unpack3(d.stream_id, d.device_index, d.device_type));
  EXPECT_EQ(back, s);
  EXPECT_FALSE(Stream::Unpack3(d.stream_id, d.device_index, 99).ok());
  EXPECT_STATUS(Stream::Unpack3(0, count_, d.device_type), kOutOfRange, "out of range");
}

TEST_F(AcceleratorConformance, SleepMakesTheStreamBusyUntilSynchronized) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(bool idle, s.Query());
  EXPECT_TRUE(idle);  // nothing queued yet
  const absl::Time start = absl::Now();
  SLEEP_OR_SKIP(s, kLongSleep);
  ASSERT_OK_AND_ASSIGN(bool done, s.Query());
  EXPECT_FALSE(done);
  ASSERT_OK(s.Synchronize());
  EXPECT_GE(absl::Now() - start, kLongSleep - absl::Milliseconds(5));
  ASSERT_OK_AND_ASSIGN(done, s.Query());
  EXPECT_TRUE(done);
}

TEST_F(AcceleratorConformance, StreamsOfOneDeviceRunIndependently) {
  ASSERT_OK_AND_ASSIGN(Stream busy, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Stream other, Stream::New(Dev(0)));
  ASSERT_NE(busy, other);
  SLEEP_OR_SKIP(busy, kLongSleep);
  // Work on another stream does not queue behind the sleep.
  Event e(type_);
  ASSERT_OK(e.Record(other));
  ASSERT_OK(e.Synchronize());
  ASSERT_OK_AND_ASSIGN(bool busy_done, busy.Query());
  EXPECT_FALSE(busy_done);
  ASSERT_OK(busy.Synchronize());
}

TEST_F(AcceleratorConformance, WaitEventOrdersAcrossStreams) {
  ASSERT_OK_AND_ASSIGN(Stream a, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Stream b, Stream::New(Dev(0)));
  ASSERT_NE(a, b);
  Event start(type_, /*enable_timing=*/true);
  Event after_sleep(type_, /*enable_timing=*/true);
  Event on_b(type_, /*enable_timing=*/true);
  ASSERT_OK(start.Record(a));
  SLEEP_OR_SKIP(a, kLongSleep);
  ASSERT_OK(after_sleep.Record(a));
  ASSERT_OK(b.WaitEvent(after_sleep));
  ASSERT_OK(on_b.Record(b));
  // b cannot pass its wait before a's sleep is over.
  ASSERT_OK_AND_ASSIGN(bool b_done, on_b.Query());
  EXPECT_FALSE(b_done);
  ASSERT_OK_AND_ASSIGN(bool b_stream_done, b.Query());
  EXPECT_FALSE(b_stream_done);
  ASSERT_OK(on_b.Synchronize());
  ASSERT_OK_AND_ASSIGN(bool a_done, after_sleep.Query());
  EXPECT_TRUE(a_done);
  ASSERT_OK_AND_ASSIGN(double ms, start.ElapsedTime(on_b));
  EXPECT_GE(ms, kLongSleepMs - 5);
}

TEST_F(AcceleratorConformance, WaitStreamOrdersAcrossStreams) {
  ASSERT_OK_AND_ASSIGN(Stream a, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Stream b, Stream::New(Dev(0)));
  SLEEP_OR_SKIP(a, kLongSleep);
  ASSERT_OK(b.WaitStream(a));
  Event on_b(type_);
  ASSERT_OK(on_b.Record(b));
  ASSERT_OK_AND_ASSIGN(bool b_done, on_b.Query());
  EXPECT_FALSE(b_done);
  ASSERT_OK(b.Synchronize());
  ASSERT_OK_AND_ASSIGN(bool a_done, a.Query());
  EXPECT_TRUE(a_done);
}

TEST_F(AcceleratorConformance, WaitOnAnUnrecordedEventIsANoOp) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  Event never(type_);
  ASSERT_OK(s.WaitEvent(never));
  ASSERT_OK(never.Block(s));
  ASSERT_OK(s.Synchronize());
  ASSERT_OK_AND_ASSIGN(bool done, s.Query());
  EXPECT_TRUE(done);
}

TEST_F(AcceleratorConformance, WaitAcrossDevices) {
  REQUIRE_DEVICES(2);
  ASSERT_OK_AND_ASSIGN(Stream a, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Stream b, Stream::New(Dev(Last())));
  SLEEP_OR_SKIP(a, kLongSleep);
  Event on_a(type_);
  ASSERT_OK(on_a.Record(a));
  ASSERT_OK(b.WaitEvent(on_a));
  Event on_b(type_);
  ASSERT_OK(on_b.Record(b));
  ASSERT_OK_AND_ASSIGN(bool b_done, on_b.Query());
  EXPECT_FALSE(b_done);
  ASSERT_OK(on_b.Synchronize());
  ASSERT_OK_AND_ASSIGN(bool a_done, on_a.Query());
  EXPECT_TRUE(a_done);
}

// --- events --------------------------------------------------------------------

TEST_F(AcceleratorConformance, UnrecordedEventIsComplete) {
  Event e(type_);
  EXPECT_FALSE(e.was_recorded());
  EXPECT_EQ(e.handle(), nullptr);
  ASSERT_OK_AND_ASSIGN(bool done, e.Query());
  EXPECT_TRUE(done);
  EXPECT_OK(e.Synchronize());
}

TEST_F(AcceleratorConformance, EventCompletesWhenTheStreamGetsThere) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  Event e(type_);
  SLEEP_OR_SKIP(s, kLongSleep);
  ASSERT_OK(e.Record(s));
  EXPECT_TRUE(e.was_recorded());
  EXPECT_EQ(e.device(), Dev(0));  // fixed by the first record
  ASSERT_OK_AND_ASSIGN(bool done, e.Query());
  EXPECT_FALSE(done);
  ASSERT_OK(e.Synchronize());
  ASSERT_OK_AND_ASSIGN(done, e.Query());
  EXPECT_TRUE(done);
  // Re-recording moves the event to the stream's new point.
  SLEEP_OR_SKIP(s, kLongSleep);
  ASSERT_OK(e.Record(s));
  ASSERT_OK_AND_ASSIGN(done, e.Query());
  EXPECT_FALSE(done);
  // A moved event keeps its record.
  Event moved(std::move(e));
  EXPECT_TRUE(moved.was_recorded());
  ASSERT_OK(moved.Synchronize());
  ASSERT_OK_AND_ASSIGN(done, moved.Query());
  EXPECT_TRUE(done);
}

TEST_F(AcceleratorConformance, EventTiming) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  Event start(type_, /*enable_timing=*/true);
  Event end(type_, /*enable_timing=*/true);
  EXPECT_TRUE(start.enable_timing());
  ASSERT_OK(start.Record(s));
  SLEEP_OR_SKIP(s, kTimedSleep);
  ASSERT_OK(end.Record(s));
  ASSERT_OK(end.Synchronize());
  ASSERT_OK_AND_ASSIGN(double ms, start.ElapsedTime(end));
  EXPECT_GE(ms, kTimedSleepMinMs);
  EXPECT_LT(ms, kTimedSleepMaxMs);
}

TEST_F(AcceleratorConformance, ElapsedTimeNeedsTimingAndRecords) {
  ASSERT_OK_AND_ASSIGN(Stream s, acc::CurrentStream());
  constexpr const char* kNoTiming =
      "Both events must be created with argument 'enable_timing=True'.";
  constexpr const char* kNotRecorded =
      "Both events must be recorded before calculating elapsed time.";
  {
    Event a(type_), b(type_);
    ASSERT_OK(a.Record(s));
    ASSERT_OK(b.Record(s));
    ASSERT_OK(b.Synchronize());
    EXPECT_STATUS(a.ElapsedTime(b), kInvalidArgument, kNoTiming);
  }
  {
    Event a(type_, true), b(type_);
    ASSERT_OK(a.Record(s));
    ASSERT_OK(b.Record(s));
    ASSERT_OK(b.Synchronize());
    EXPECT_STATUS(a.ElapsedTime(b), kInvalidArgument, kNoTiming);
    EXPECT_STATUS(b.ElapsedTime(a), kInvalidArgument, kNoTiming);
  }
  {
    Event a(type_, true), b(type_, true);
    EXPECT_STATUS(a.ElapsedTime(b), kInvalidArgument, kNotRecorded);
    ASSERT_OK(a.Record(s));
    ASSERT_OK(a.Synchronize());
    EXPECT_STATUS(a.ElapsedTime(b), kInvalidArgument, kNotRecorded);
    EXPECT_STATUS(b.ElapsedTime(a), kInvalidArgument, kNotRecorded);
  }
  {
    // Timing is checked before recording, as in PyTorch.
    Event a(type_), b(type_);
    EXPECT_STATUS(a.ElapsedTime(b), kInvalidArgument, kNoTiming);
  }
}

TEST_F(AcceleratorConformance, ElapsedTimeNeedsCompletion) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  Event a(type_, true), b(type_, true);
  ASSERT_OK(a.Record(s));
  SLEEP_OR_SKIP(s, kLongSleep);
  ASSERT_OK(b.Record(s));
  EXPECT_STATUS(a.ElapsedTime(b), kFailedPrecondition,
                "Both events must be completed before calculating elapsed time.");
  ASSERT_OK(b.Synchronize());
  ASSERT_OK_AND_ASSIGN(double ms, a.ElapsedTime(b));
  EXPECT_GE(ms, kLongSleepMs - 5);
}

TEST_F(AcceleratorConformance, EventRejectsStreamsOfAnotherDeviceType) {
  const Stream cpu = Stream::Default(Device(DeviceType::kCPU, 0));
  Event e(type_);
  EXPECT_STATUS(e.Record(cpu), kInvalidArgument,
                absl::StrCat("Event device type ", DeviceTypeName(type_),
                             " does not match recording stream's device type cpu."));
  EXPECT_FALSE(e.was_recorded());
  EXPECT_STATUS(e.Block(cpu), kInvalidArgument, "does not match blocking stream's device type");

  ASSERT_OK_AND_ASSIGN(Stream s, acc::CurrentStream());
  Event on_cpu(DeviceType::kCPU);
  EXPECT_STATUS(on_cpu.Record(s), kInvalidArgument,
                "Event device type cpu does not match recording stream's device type");
  EXPECT_STATUS(s.WaitEvent(on_cpu), kInvalidArgument, "does not match");
}

TEST_F(AcceleratorConformance, EventRejectsStreamsOfAnotherDevice) {
  REQUIRE_DEVICES(2);
  ASSERT_OK_AND_ASSIGN(Stream s0, acc::CurrentStream(0));
  ASSERT_OK_AND_ASSIGN(Stream s1, acc::CurrentStream(Last()));
  Event fixed(Dev(0));  // index fixed up front
  EXPECT_STATUS(fixed.Record(s1), kInvalidArgument,
                absl::StrCat("Event device index 0 does not match recording stream's device index ",
                             Last()));
  ASSERT_OK(fixed.Record(s0));
  Event e(type_);  // index fixed by the first record
  ASSERT_OK(e.Record(s1));
  EXPECT_EQ(e.device(), Dev(Last()));
  EXPECT_STATUS(e.Record(s0), kInvalidArgument, "does not match recording stream's device index");
}

// --- synchronisation -----------------------------------------------------------

TEST_F(AcceleratorConformance, SynchronizeWaitsForEveryStreamOfTheDevice) {
  ASSERT_OK_AND_ASSIGN(Stream a, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Stream b, Stream::New(Dev(0)));
  const Stream d = Stream::Default(Dev(0));
  SLEEP_OR_SKIP(a, kLongSleep);
  SLEEP_OR_SKIP(b, kLongSleep);
  SLEEP_OR_SKIP(d, absl::Milliseconds(10));
  ASSERT_OK(acc::Synchronize());
  for (const Stream& s : {a, b, d}) {
    ASSERT_OK_AND_ASSIGN(bool done, s.Query());
    EXPECT_TRUE(done) << s;
  }
}

TEST_F(AcceleratorConformance, SynchronizeTakesADeviceIndex) {
  for (int i = 0; i < count_; ++i) {
    SCOPED_TRACE(i);
    ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(i)));
    SLEEP_OR_SKIP(s, absl::Milliseconds(30));
    ASSERT_OK(acc::Synchronize(i));
    ASSERT_OK_AND_ASSIGN(bool done, s.Query());
    EXPECT_TRUE(done);
  }
  // -1 is the current device; the device-generic call takes a Device.
  ASSERT_OK(acc::SetDeviceIndex(Last()));
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(Last())));
  SLEEP_OR_SKIP(s, absl::Milliseconds(30));
  ASSERT_OK(acc::Synchronize(-1));
  ASSERT_OK_AND_ASSIGN(bool done, s.Query());
  EXPECT_TRUE(done);
  SLEEP_OR_SKIP(s, absl::Milliseconds(30));
  ASSERT_OK(Synchronize(Dev(Last())));
  ASSERT_OK_AND_ASSIGN(done, s.Query());
  EXPECT_TRUE(done);
}

// --- raw memory through the backend --------------------------------------------

TEST_F(AcceleratorConformance, RawMemoryCopiesAndFills) {
  ASSERT_OK_AND_ASSIGN(Backend * backend, GetBackend(type_));
  constexpr size_t kBytes = 64 * 1024;
  for (int dev : {0, Last()}) {
    SCOPED_TRACE(dev);
    ASSERT_OK_AND_ASSIGN(acc::DeviceIndexGuard guard, acc::DeviceIndexGuard::Make(dev));
    ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(dev)));
    ASSERT_OK_AND_ASSIGN(void* p, backend->Allocate(dev, kBytes));
    ASSERT_OK_AND_ASSIGN(void* q, backend->Allocate(dev, kBytes));
    ASSERT_NE(p, q);
    std::vector<uint8_t> src(kBytes), dst(kBytes, 0);
    for (size_t i = 0; i < kBytes; ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);

    // q := 0x5a everywhere; p := src; q[0, n/2) := p[0, n/2); dst := q.
    ASSERT_OK(backend->FillAsync(q, 0x5a, kBytes, dev, s.id()));
    ASSERT_OK(backend->CopyAsync(p, src.data(), kBytes, CopyKind::kHostToDevice, dev, s.id()));
    ASSERT_OK(backend->CopyAsync(q, p, kBytes / 2, CopyKind::kDeviceToDevice, dev, s.id()));
    ASSERT_OK(backend->CopyAsync(dst.data(), q, kBytes, CopyKind::kDeviceToHost, dev, s.id()));
    ASSERT_OK(s.Synchronize());
    EXPECT_EQ(std::memcmp(dst.data(), src.data(), kBytes / 2), 0);
    const std::vector<uint8_t> fill(kBytes / 2, 0x5a);
    EXPECT_EQ(std::memcmp(dst.data() + kBytes / 2, fill.data(), kBytes / 2), 0);

    // Work on one stream runs in order: the copy sees the fill queued before it.
    ASSERT_OK(backend->FillAsync(p, 0x11, kBytes, dev, s.id()));
    ASSERT_OK(backend->CopyAsync(dst.data(), p, kBytes, CopyKind::kDeviceToHost, dev, s.id()));
    ASSERT_OK(s.Synchronize());
    EXPECT_EQ(dst[0], 0x11);
    EXPECT_EQ(dst[kBytes - 1], 0x11);

    ASSERT_OK(backend->Free(dev, p));
    ASSERT_OK(backend->Free(dev, q));
  }
}

TEST_F(AcceleratorConformance, RawMemoryErrors) {
  ASSERT_OK_AND_ASSIGN(Backend * backend, GetBackend(type_));
  constexpr size_t kBytes = 4096;
  ASSERT_OK_AND_ASSIGN(Stream s, acc::CurrentStream(0));
  ASSERT_OK_AND_ASSIGN(void* p, backend->Allocate(0, kBytes));
  std::vector<uint8_t> host(2 * kBytes, 0);
  // Copies and fills that run past the end of the block are errors, reported
  // when they are queued, before anything is written.
  absl::Status h2d =
      backend->CopyAsync(p, host.data(), kBytes + 1, CopyKind::kHostToDevice, 0, s.id());
  absl::Status d2h =
      backend->CopyAsync(host.data(), p, kBytes + 1, CopyKind::kDeviceToHost, 0, s.id());
  absl::Status fill = backend->FillAsync(p, 0, kBytes + 1, 0, s.id());
  EXPECT_FALSE(h2d.ok());
  EXPECT_FALSE(d2h.ok());
  EXPECT_FALSE(fill.ok());
  if (type_ == DeviceType::kSim) {
    EXPECT_STATUS(h2d, kOutOfRange, "overruns its block");
    EXPECT_STATUS(d2h, kOutOfRange, "overruns its block");
    EXPECT_STATUS(fill, kOutOfRange, "overruns its block");
  }
  ASSERT_OK(s.Synchronize());
  ASSERT_OK(backend->Free(0, p));
  // Freeing twice is an error that names the pointer.
  absl::Status again = backend->Free(0, p);
  EXPECT_EQ(again.code(), absl::StatusCode::kInvalidArgument) << again;
}

TEST_F(AcceleratorConformance, SimAllocationBeyondCapacityIsResourceExhausted) {
  if (type_ != DeviceType::kSim) GTEST_SKIP() << "capacity is only fixed on sim";
  ASSERT_OK_AND_ASSIGN(Backend * backend, GetBackend(type_));
  ASSERT_OK_AND_ASSIGN(auto info, GetMemoryInfo(Dev(0)));
  const size_t total = info.second;
  const char* configured = getenv("ANYDEV_SIM_MEMORY");
  if (configured != nullptr && std::string(configured) == "64MiB") {
    EXPECT_EQ(total, size_t{64} << 20);
  }
  for (int dev = 0; dev < count_; ++dev) {
    EXPECT_STATUS(backend->Allocate(dev, total + 1), kResourceExhausted, "out of memory");
  }
  // Free memory goes down by what is allocated, and an allocation beyond
  // what is left fails while one that fits succeeds.
  constexpr size_t kBlock = 1 << 20;
  ASSERT_OK_AND_ASSIGN(void* p, backend->Allocate(0, kBlock));
  ASSERT_OK_AND_ASSIGN(auto after, GetMemoryInfo(Dev(0)));
  EXPECT_EQ(after.first, info.first - kBlock);
  EXPECT_STATUS(backend->Allocate(0, after.first + 1), kResourceExhausted, "out of memory");
  ASSERT_OK(backend->Free(0, p));
  ASSERT_OK_AND_ASSIGN(after, GetMemoryInfo(Dev(0)));
  EXPECT_EQ(after.first, info.first);
}

// --- graphs (anydev::Graph, as torch.accelerator.Graph) ----------------------------

// Skips a test on a backend without graph capture (Level Zero, an old runtime).
#define REQUIRE_GRAPHS(status)                                                     \
  do {                                                                             \
    const absl::Status require_graphs_ = (status);                                 \
    if (require_graphs_.code() == absl::StatusCode::kUnimplemented)                \
      GTEST_SKIP() << require_graphs_;                                             \
    ASSERT_OK(require_graphs_);                                                    \
  } while (0)

// Note [Fork] (registry.cc): a child forked after the parent used the
// accelerator gets PyTorch's "Cannot re-initialize" error from every call that
// needs the device, never a hang (sim's streams are threads the child lacks);
// the device count still answers, and the CPU goes on working.
TEST_F(AcceleratorConformance, AForkedChildGetsTorchsErrorNotAHang) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(4096, Dev(0), s));
  ASSERT_OK(buf.Fill(1, s));  // the stream has work, and on sim a worker thread
  ASSERT_OK(s.Synchronize());
  const int count = acc::DeviceCount();
  const pid_t pid = fork();
  ASSERT_NE(pid, -1);
  if (pid == 0) {
    alarm(20);  // a hang is the bug: SIGALRM ends the child
    int failures = 0;
    auto expect_fork_error = [&failures](const absl::Status& st, const char* what) {
      if (st.code() != absl::StatusCode::kFailedPrecondition ||
          !absl::StrContains(st.message(), "Cannot re-initialize") ||
          !absl::StrContains(st.message(), "'spawn' start method")) {
        fprintf(stderr, "child: %s: %s\n", what, st.ToString().c_str());
        ++failures;
      }
    };
    expect_fork_error(s.Synchronize(), "Stream::Synchronize");
    expect_fork_error(s.Query().status(), "Stream::Query");
    expect_fork_error(buf.Fill(2, s), "Buffer::Fill");
    expect_fork_error(Buffer::Create(4096, Dev(0)).status(), "Buffer::Create");
    expect_fork_error(acc::Synchronize(), "acc::Synchronize");
    Event e(Dev(0));
    expect_fork_error(e.Record(s), "Event::Record");
    if (acc::DeviceCount() != count) {
      fprintf(stderr, "child: the device count changed\n");
      ++failures;
    }
    if (!Synchronize(Device(DeviceType::kCPU)).ok() ||
        !Buffer::Create(64, Device(DeviceType::kCPU)).ok()) {
      fprintf(stderr, "child: the CPU does not work\n");
      ++failures;
    }
    _exit(failures == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status)
                                 << " (SIGALRM: it hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's messages above";
  ASSERT_OK(buf.Fill(3, s));  // the parent is unaffected
  ASSERT_OK(s.Synchronize());
}

TEST_F(AcceleratorConformance, GraphCapturedWorkRunsOnlyOnReplay) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(4096, Dev(0), s));
  ASSERT_OK(buf.Fill(1, s));
  ASSERT_OK(s.Synchronize());
  ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
  Graph g;
  ASSERT_OK_AND_ASSIGN(bool capturing, s.IsCapturing());
  EXPECT_FALSE(capturing);
  REQUIRE_GRAPHS(g.CaptureBegin());
  ASSERT_OK_AND_ASSIGN(capturing, s.IsCapturing());
  EXPECT_TRUE(capturing);
  EXPECT_TRUE(g.capturing());
  ASSERT_OK(buf.Fill(7, s));  // recorded, not run
  ASSERT_OK(g.CaptureEnd());
  ASSERT_OK_AND_ASSIGN(capturing, s.IsCapturing());
  EXPECT_FALSE(capturing);
  std::vector<uint8_t> host(4096, 0);
  ASSERT_OK(buf.CopyToHost(host.data(), host.size()));
  EXPECT_EQ(host[0], 1);
  EXPECT_EQ(host[4095], 1);
  ASSERT_OK(g.Replay());
  ASSERT_OK(s.Synchronize());
  ASSERT_OK(buf.CopyToHost(host.data(), host.size()));
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[4095], 7);
  // Replays repeat the work.
  ASSERT_OK(buf.Fill(2, s));
  ASSERT_OK(g.Replay());
  ASSERT_OK(g.Replay());
  ASSERT_OK(s.Synchronize());
  ASSERT_OK(buf.CopyToHost(host.data(), host.size()));
  EXPECT_EQ(host[100], 7);
}

TEST_F(AcceleratorConformance, GraphReplaysInStreamOrder) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Buffer a, Buffer::Create(1024, Dev(0), s));
  ASSERT_OK_AND_ASSIGN(Buffer b, Buffer::Create(1024, Dev(0), s));
  ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
  Graph g(/*keep_graph=*/true);
  REQUIRE_GRAPHS(g.CaptureBegin());
  ASSERT_OK(a.Fill(5, s));
  ASSERT_OK(b.CopyFrom(a, s));  // must see the fill before it
  ASSERT_OK(g.CaptureEnd());
  ASSERT_OK(a.Fill(0, s));
  ASSERT_OK(b.Fill(0, s));
  ASSERT_OK(g.Instantiate());
  ASSERT_OK(g.Replay());
  std::vector<uint8_t> host(1024, 0);
  ASSERT_OK(b.CopyToHost(host.data(), host.size(), s));
  ASSERT_OK(s.Synchronize());
  EXPECT_EQ(host[0], 5);
  EXPECT_EQ(host[1023], 5);
}

TEST_F(AcceleratorConformance, GraphMisuseIsAnError) {
  Graph g;
  EXPECT_STATUS(g.Replay(), kFailedPrecondition, "without a preceding successful capture");
  EXPECT_STATUS(g.CaptureEnd(), kFailedPrecondition, "without a matching capture_begin");
  EXPECT_STATUS(g.Instantiate(), kFailedPrecondition, "needs a finished capture");
  // The default stream cannot capture (as PyTorch's CUDA graphs).
  EXPECT_STATUS(g.CaptureBegin(), kFailedPrecondition, "non-default stream");
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(Stream other, Stream::New(Dev(0)));
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
    REQUIRE_GRAPHS(g.CaptureBegin());
    EXPECT_STATUS(g.CaptureBegin(), kFailedPrecondition, "already holds a capture");
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard elsewhere, acc::StreamGuard::Make(other));
    EXPECT_STATUS(g.CaptureEnd(), kFailedPrecondition, "same stream it began on");
  }
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
    ASSERT_OK(g.CaptureEnd());
    EXPECT_STATUS(g.CaptureBegin(), kFailedPrecondition, "call reset()");
    g.Reset();
    EXPECT_FALSE(g.has_graph());
    ASSERT_OK(g.CaptureBegin());  // reusable after reset
    ASSERT_OK(g.CaptureEnd());
  }
  ASSERT_OK_AND_ASSIGN(bool capturing, s.IsCapturing());
  EXPECT_FALSE(capturing);
  // Reset abandons a capture in progress, leaving the stream usable.
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
    Graph abandoned;
    ASSERT_OK(abandoned.CaptureBegin());
    abandoned.Reset();
  }
  ASSERT_OK_AND_ASSIGN(capturing, s.IsCapturing());
  EXPECT_FALSE(capturing);
  ASSERT_OK(s.Synchronize());
}

TEST_F(AcceleratorConformance, CapturingStreamCannotBeWaitedFor) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  {
    ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
    Graph g;
    REQUIRE_GRAPHS(g.CaptureBegin());
    // As under CUDA stream capture (which also invalidates the capture).
    EXPECT_FALSE(s.Synchronize().ok());
    g.Reset();
  }
  ASSERT_OK_AND_ASSIGN(bool capturing, s.IsCapturing());
  EXPECT_FALSE(capturing);
  ASSERT_OK(s.Synchronize());
}

TEST_F(AcceleratorConformance, GraphPoolIdsAreSharedWhenGiven) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  ASSERT_OK_AND_ASSIGN(acc::StreamGuard use, acc::StreamGuard::Make(s));
  Graph g1, g2;
  REQUIRE_GRAPHS(g1.CaptureBegin());
  ASSERT_OK(g1.CaptureEnd());
  ASSERT_OK(g2.CaptureBegin(g1.Pool()));
  ASSERT_OK(g2.CaptureEnd());
  EXPECT_EQ(g1.Pool(), g2.Pool());
  Graph g3;
  ASSERT_OK(g3.CaptureBegin());
  ASSERT_OK(g3.CaptureEnd());
  EXPECT_NE(g3.Pool(), g1.Pool());
}

TEST_F(AcceleratorConformance, NativeHandleOfAPoolStream) {
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::New(Dev(0)));
  absl::StatusOr<uintptr_t> h = s.NativeHandle();
  if (type_ == DeviceType::kSim) {
    EXPECT_STATUS(h, kUnimplemented, "doesn't support getting stream native handle");
    return;
  }
  if (h.status().code() == absl::StatusCode::kUnimplemented) GTEST_SKIP() << h.status();
  ASSERT_OK(h.status());
  EXPECT_NE(*h, 0u);  // a created stream, not the legacy default one
}

TEST_F(AcceleratorConformance, PinnedHostMemoryIsCachedAndReturned) {
  ASSERT_OK(EmptyHostCache());
  const HostMemoryStats before = GetHostMemoryStats();
  ASSERT_OK_AND_ASSIGN(void* p, HostAlloc(1000));
  EXPECT_EQ(HostBlockSize(p), 1024u);  // rounded up to a power of two
  std::memset(p, 3, 1000);
  ASSERT_OK_AND_ASSIGN(Buffer buf, Buffer::Create(1000, Dev(0)));
  ASSERT_OK(buf.CopyFromHost(p, 1000));
  ASSERT_OK(HostFree(p));
  EXPECT_STATUS(HostFree(p), kInvalidArgument, "freed twice");
  ASSERT_OK_AND_ASSIGN(void* again, HostAlloc(600));  // the same size class: reused
  EXPECT_EQ(again, p);
  const HostMemoryStats mid = GetHostMemoryStats();
  EXPECT_EQ(mid.num_host_alloc - before.num_host_alloc, 1);
  EXPECT_EQ(mid.allocated_bytes.current - before.allocated_bytes.current, 1024);
  ASSERT_OK(buf.CopyToHost(again, 1000));
  EXPECT_EQ(static_cast<uint8_t*>(again)[999], 3);
  ASSERT_OK(HostFree(again));
  ASSERT_OK(acc::EmptyHostCache());
  const HostMemoryStats after = GetHostMemoryStats();
  EXPECT_EQ(after.reserved_bytes.current, before.reserved_bytes.current);
  EXPECT_EQ(after.num_host_free - before.num_host_free, 1);
  EXPECT_EQ(HostBlockSize(p), 0u);
}

}  // namespace
}  // namespace anydev
