// bench_graph: N queued operations launched one by one against the same N
// captured once into an anydev::Graph and replayed (torch.accelerator.Graph's
// purpose: one launch instead of N).
//
// Each iteration queues N fills of a 4 KiB buffer on a pool stream and waits
// for them: BM_DirectLaunches calls Buffer::Fill N times, BM_GraphReplay
// replays a graph that captured the same N fills. `ops/s` counts the fills
// either way, and BM_GraphReplay's `x_direct` is its speed-up over the direct
// run of the same N, measured in the same process (so the ratio holds on a
// loaded machine). The accelerator is sim with one device unless the
// environment chooses (ANYDEV_ACCELERATOR=cuda on a GPU).
//
// Run:
//   bench_graph --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "anydev/anydev.h"

namespace {

constexpr size_t kBytes = 4096;

std::map<int64_t, double>& DirectSecondsPerOp() {
  static auto* m = new std::map<int64_t, double>();
  return *m;
}

bool Skip(benchmark::State& state, const absl::Status& status) {
  if (status.ok()) return false;
  state.SkipWithError(status.ToString().c_str());
  return true;
}

// A pool stream of device 0 made current, and a buffer on it.
struct Setup {
  anydev::Stream stream{anydev::Device(anydev::DeviceType::kCPU), 0};
  anydev::Buffer buffer;
  absl::Status status;

  Setup() {
    absl::StatusOr<anydev::DeviceType> type = anydev::acc::GetAccelerator();
    if (!type.ok()) {
      status = type.status();
      return;
    }
    absl::StatusOr<anydev::Stream> s = anydev::Stream::New(anydev::Device(*type, 0));
    if (!s.ok()) {
      status = s.status();
      return;
    }
    stream = *s;
    absl::StatusOr<anydev::Buffer> b = anydev::Buffer::Create(kBytes, stream.device(), stream);
    if (!b.ok()) {
      status = b.status();
      return;
    }
    buffer = std::move(*b);
    status = anydev::acc::SetCurrentStream(stream);
  }
  ~Setup() {
    (void)stream.Synchronize();
    (void)anydev::acc::SetCurrentStream(anydev::Stream::Default(stream.device()));
  }
};

void BM_DirectLaunches(benchmark::State& state) {
  const int64_t n = state.range(0);
  Setup s;
  if (Skip(state, s.status)) return;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (int64_t i = 0; i < n; ++i) {
      if (Skip(state, s.buffer.Fill(static_cast<uint8_t>(i), s.stream))) return;
    }
    if (Skip(state, s.stream.Synchronize())) return;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  DirectSecondsPerOp()[n] = seconds / static_cast<double>(state.iterations() * n);
  state.counters["ops/s"] = benchmark::Counter(static_cast<double>(state.iterations() * n),
                                               benchmark::Counter::kIsRate);
}

void BM_GraphReplay(benchmark::State& state) {
  const int64_t n = state.range(0);
  Setup s;
  if (Skip(state, s.status)) return;
  anydev::Graph graph;
  if (Skip(state, graph.CaptureBegin())) return;
  for (int64_t i = 0; i < n; ++i) {
    if (Skip(state, s.buffer.Fill(static_cast<uint8_t>(i), s.stream))) return;
  }
  if (Skip(state, graph.CaptureEnd())) return;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (Skip(state, graph.Replay())) return;
    if (Skip(state, s.stream.Synchronize())) return;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double per_op = seconds / static_cast<double>(state.iterations() * n);
  state.counters["ops/s"] = benchmark::Counter(static_cast<double>(state.iterations() * n),
                                               benchmark::Counter::kIsRate);
  auto direct = DirectSecondsPerOp().find(n);
  if (direct != DirectSecondsPerOp().end() && per_op > 0) {
    state.counters["x_direct"] = direct->second / per_op;
  }
}

// Direct first, so each replay has its direct run of the same N to compare.
BENCHMARK(BM_DirectLaunches)->Arg(16)->Arg(64)->Arg(256)->UseRealTime();
BENCHMARK(BM_GraphReplay)->Arg(16)->Arg(64)->Arg(256)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  setenv("ANYDEV_SIM_DEVICES", "1", 0);  // before anything resolves the accelerator
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  absl::StatusOr<anydev::DeviceType> type = anydev::acc::GetAccelerator();
  benchmark::AddCustomContext("anydev_accelerator",
                              type.ok() ? std::string(anydev::DeviceTypeName(*type)) : "none");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
