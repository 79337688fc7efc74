// bench_runtime: timings of anydev's hot runtime paths.
//
// The target from the issue: anydev::acc::CurrentDeviceIndex() in at most
// 5 ns; stream record/query of an event on the simulated accelerator
// reported. BM_BaselineThreadLocalRead is the floor to compare against: one
// plain thread_local read behind a call, so the ratio shows in a single run.
//
// The program selects the simulated accelerator with two devices unless the
// environment already says otherwise (ANYDEV_SIM_DEVICES, ANYDEV_ACCELERATOR).
//
// Run:
//   bench_runtime --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "anydev/anydev.h"

namespace {

// --- helpers -----------------------------------------------------------------

// "sim x2": the current accelerator and its device count, the label of every
// runtime benchmark.
std::string AcceleratorLabel() {
  absl::StatusOr<anydev::DeviceType> type = anydev::acc::GetAccelerator();
  if (!type.ok()) return "no accelerator";
  return absl::StrCat(anydev::DeviceTypeName(*type), " x", anydev::acc::DeviceCount());
}

// Skips the benchmark with `status`'s text; returns true when it did.
bool SkipIfError(benchmark::State& state, const absl::Status& status) {
  if (status.ok()) return false;
  const std::string text = status.ToString();
  state.SkipWithError(text.c_str());
  return true;
}

// Puts the calling thread back on device 0 with its default stream, and waits
// for everything queued there, so one benchmark does not leak into the next.
absl::Status ResetThreadState() {
  absl::Status s = anydev::acc::SetDeviceIndex(0);
  if (!s.ok()) return s;
  absl::StatusOr<anydev::Stream> stream = anydev::acc::CurrentStream();
  if (!stream.ok()) return stream.status();
  s = anydev::acc::SetCurrentStream(anydev::Stream::Default(stream->device()));
  if (!s.ok()) return s;
  return anydev::acc::Synchronize();
}

// Checks that there is an accelerator and resets the thread's state; skips
// the benchmark and returns false when either fails.
bool Prepare(benchmark::State& state) {
  if (SkipIfError(state, anydev::acc::GetAccelerator().status())) return false;
  if (SkipIfError(state, ResetThreadState())) return false;
  return true;
}

// --- the floor ---------------------------------------------------------------

thread_local int tls_baseline_value = 0;

// One thread_local read behind a real call: what CurrentDeviceIndex() cannot
// beat. noinline keeps the call; the memory clobber of DoNotOptimize in the
// loop keeps the compiler from hoisting it.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noinline, noipa))
#else
__attribute__((noinline))
#endif
int ReadThreadLocalBaseline() {
  return tls_baseline_value;
}

void BM_BaselineThreadLocalRead(benchmark::State& state) {
  for (auto _ : state) {
    int v = ReadThreadLocalBaseline();
    benchmark::DoNotOptimize(v);
    benchmark::ClobberMemory();
  }
  state.SetLabel("floor: plain thread_local int via noinline call");
}
BENCHMARK(BM_BaselineThreadLocalRead);

// --- anydev::acc: the current device ------------------------------------------

void BM_AccCurrentDeviceIndex(benchmark::State& state) {
  if (!Prepare(state)) return;
  for (auto _ : state) {
    absl::StatusOr<int> index = anydev::acc::CurrentDeviceIndex();
    if (ABSL_PREDICT_FALSE(!index.ok())) {
      SkipIfError(state, index.status());
      break;
    }
    benchmark::DoNotOptimize(*index);
  }
  state.SetLabel(AcceleratorLabel());
}
BENCHMARK(BM_AccCurrentDeviceIndex);

void BM_AccSetDeviceIndexSame(benchmark::State& state) {
  if (!Prepare(state)) return;
  for (auto _ : state) {
    absl::Status s = anydev::acc::SetDeviceIndex(0);
    if (ABSL_PREDICT_FALSE(!s.ok())) {
      SkipIfError(state, s);
      break;
    }
    benchmark::ClobberMemory();
  }
  state.SetLabel(absl::StrCat(AcceleratorLabel(), ", 0 -> 0"));
}
BENCHMARK(BM_AccSetDeviceIndexSame);

void BM_AccSetDeviceIndexToggle(benchmark::State& state) {
  if (!Prepare(state)) return;
  if (anydev::acc::DeviceCount() < 2) {
    state.SkipWithError("needs at least 2 devices of the current accelerator");
    return;
  }
  int next = 1;
  for (auto _ : state) {
    absl::Status s = anydev::acc::SetDeviceIndex(next);
    if (ABSL_PREDICT_FALSE(!s.ok())) {
      SkipIfError(state, s);
      break;
    }
    next ^= 1;
    benchmark::ClobberMemory();
  }
  SkipIfError(state, anydev::acc::SetDeviceIndex(0));
  state.SetLabel(absl::StrCat(AcceleratorLabel(), ", alternating 0/1"));
}
BENCHMARK(BM_AccSetDeviceIndexToggle);

void BM_AccCurrentStream(benchmark::State& state) {
  if (!Prepare(state)) return;
  for (auto _ : state) {
    absl::StatusOr<anydev::Stream> stream = anydev::acc::CurrentStream();
    if (ABSL_PREDICT_FALSE(!stream.ok())) {
      SkipIfError(state, stream.status());
      break;
    }
    benchmark::DoNotOptimize(*stream);
  }
  state.SetLabel(AcceleratorLabel());
}
BENCHMARK(BM_AccCurrentStream);

// Arg: the index the guard switches to; 0 stays on the current device (0),
// 1 switches away and back (two vendor SetDevice calls per iteration).
void BM_AccDeviceIndexGuard(benchmark::State& state) {
  if (!Prepare(state)) return;
  const int target = static_cast<int>(state.range(0));
  if (target >= anydev::acc::DeviceCount()) {
    state.SkipWithError("needs more devices of the current accelerator");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<anydev::acc::DeviceIndexGuard> guard =
        anydev::acc::DeviceIndexGuard::Make(target);
    if (ABSL_PREDICT_FALSE(!guard.ok())) {
      SkipIfError(state, guard.status());
      break;
    }
    benchmark::DoNotOptimize(guard->original_index());
  }
  state.SetLabel(absl::StrCat(AcceleratorLabel(), target == 0 ? ", same device (0 -> 0)"
                                                              : ", switch 0 -> 1 -> 0"));
}
BENCHMARK(BM_AccDeviceIndexGuard)->Arg(0)->Arg(1);

// --- streams and events on the current accelerator ---------------------------

// One event, reused: each iteration records it on the current stream and
// queries it. The counter query_done is the share of queries that found the
// record already reached by the stream's worker.
void BM_EventRecordQuery(benchmark::State& state) {
  if (!Prepare(state)) return;
  absl::StatusOr<anydev::Stream> stream = anydev::acc::CurrentStream();
  if (SkipIfError(state, stream.status())) return;
  anydev::Event event(stream->device_type());
  int64_t done = 0;
  for (auto _ : state) {
    absl::Status s = event.Record(*stream);
    if (ABSL_PREDICT_FALSE(!s.ok())) {
      SkipIfError(state, s);
      break;
    }
    absl::StatusOr<bool> reached = event.Query();
    if (ABSL_PREDICT_FALSE(!reached.ok())) {
      SkipIfError(state, reached.status());
      break;
    }
    done += *reached ? 1 : 0;
  }
  // Drain what the loop queued, outside the timing.
  SkipIfError(state, event.Synchronize());
  state.counters["query_done"] =
      benchmark::Counter(static_cast<double>(done), benchmark::Counter::kAvgIterations);
  state.SetLabel(absl::StrCat(AcceleratorLabel(), ", ", stream->ToString()));
}
BENCHMARK(BM_EventRecordQuery);

// Record, then wait for the stream's worker to reach it: one round trip to
// the stream (for sim, a wake-up of its worker thread).
void BM_EventRecordSynchronize(benchmark::State& state) {
  if (!Prepare(state)) return;
  absl::StatusOr<anydev::Stream> stream = anydev::acc::CurrentStream();
  if (SkipIfError(state, stream.status())) return;
  anydev::Event event(stream->device_type());
  for (auto _ : state) {
    absl::Status s = event.Record(*stream);
    if (ABSL_PREDICT_TRUE(s.ok())) s = event.Synchronize();
    if (ABSL_PREDICT_FALSE(!s.ok())) {
      SkipIfError(state, s);
      break;
    }
  }
  state.SetLabel(absl::StrCat(AcceleratorLabel(), ", ", stream->ToString()));
}
BENCHMARK(BM_EventRecordSynchronize);

// Query of a stream with nothing pending.
void BM_StreamQueryIdle(benchmark::State& state) {
  if (!Prepare(state)) return;
  absl::StatusOr<anydev::Stream> stream = anydev::acc::CurrentStream();
  if (SkipIfError(state, stream.status())) return;
  for (auto _ : state) {
    absl::StatusOr<bool> idle = stream->Query();
    if (ABSL_PREDICT_FALSE(!idle.ok() || !*idle)) {
      SkipIfError(state, idle.ok() ? absl::InternalError("an idle stream reported busy")
                                   : idle.status());
      break;
    }
  }
  state.SetLabel(absl::StrCat(AcceleratorLabel(), ", ", stream->ToString()));
}
BENCHMARK(BM_StreamQueryIdle);

// Synchronize of a stream with nothing pending.
void BM_StreamSynchronizeIdle(benchmark::State& state) {
  if (!Prepare(state)) return;
  absl::StatusOr<anydev::Stream> stream = anydev::acc::CurrentStream();
  if (SkipIfError(state, stream.status())) return;
  for (auto _ : state) {
    absl::Status s = stream->Synchronize();
    if (ABSL_PREDICT_FALSE(!s.ok())) {
      SkipIfError(state, s);
      break;
    }
  }
  state.SetLabel(absl::StrCat(AcceleratorLabel(), ", ", stream->ToString()));
}
BENCHMARK(BM_StreamSynchronizeIdle);

}  // namespace

int main(int argc, char** argv) {
  // Before anything touches anydev: the accelerator is resolved once, on
  // first use. overwrite=0 keeps a value the caller chose.
  setenv("ANYDEV_SIM_DEVICES", "2", 0);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("anydev_version", anydev::Version());
  benchmark::AddCustomContext("anydev_accelerator", AcceleratorLabel());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
