// bench_vendor: anydev's overhead over the CUDA runtime, measured in one run.
//
// For each operation, anydev's call and the raw CUDA runtime call it makes,
// the raw one through the very function pointers anydev loaded with dlopen
// (anydev::cuda::LoadedRuntime()), so both sides pay the same indirect call:
//
//   event_record_query   Event::Record + Event::Query   cudaEventRecord + cudaEventQuery
//   stream_synchronize   Stream::Synchronize            cudaStreamSynchronize
//   device_synchronize   acc::Synchronize(0)            cudaDeviceSynchronize
//   set_get_device       acc::SetDeviceIndex + acc::CurrentDeviceIndex
//                                                       cudaSetDevice + cudaGetDevice
//                        (alternating between devices 0 and 1 when there are two,
//                        so both sides really switch; else on device 0)
//
// After the runs it prints one summary line per operation with the ratio and
// the target (anydev within 1.1x of raw), and exits 0; on a machine without a
// CUDA device it says so and exits 0 without running anything. Run it directly:
//   ./bench_vendor --benchmark_min_time=0.5
// ANYDEV_CUDA_LIBRARY selects the runtime as for anydev itself (the tests'
// fake runtime makes a dry run possible without a GPU).
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "anydev/anydev.h"
#include "backends/cuda/cuda_api.h"
#include "benchmark/benchmark.h"

namespace {

using anydev::cuda::CudaRt;

constexpr double kTarget = 1.1;

const CudaRt& Rt() { return *anydev::cuda::LoadedRuntime(); }

void Check(bool ok, benchmark::State& state, const char* what) {
  if (!ok) state.SkipWithError(what);
}

// The device index to use on iteration `i`: alternating when there are two.
int DeviceFor(int64_t i) { return anydev::acc::DeviceCount() >= 2 ? static_cast<int>(i & 1) : 0; }

// --- event record + query ---------------------------------------------------------

void BM_Anydev_EventRecordQuery(benchmark::State& state) {
  absl::StatusOr<anydev::Stream> s = anydev::Stream::New(anydev::Device(anydev::DeviceType::kCUDA, 0));
  Check(s.ok(), state, "Stream::New");
  anydev::Event e(anydev::DeviceType::kCUDA);
  for (auto _ : state) {
    if (!e.Record(*s).ok()) state.SkipWithError("Event::Record");
    absl::StatusOr<bool> done = e.Query();
    benchmark::DoNotOptimize(done);
  }
  (void)s->Synchronize();
}

void BM_Raw_EventRecordQuery(benchmark::State& state) {
  const CudaRt& rt = Rt();
  (void)rt.SetDevice(0);
  cudaStream_t s = nullptr;
  cudaEvent_t e = nullptr;
  Check(rt.StreamCreateWithPriority(&s, cudaStreamNonBlocking, 0) == cudaSuccess, state,
        "cudaStreamCreateWithPriority");
  Check(rt.EventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess, state,
        "cudaEventCreateWithFlags");
  for (auto _ : state) {
    if (rt.EventRecord(e, s) != cudaSuccess) state.SkipWithError("cudaEventRecord");
    cudaError_t done = rt.EventQuery(e);
    if (done == cudaErrorNotReady) (void)rt.GetLastError();  // as anydev and c10 do
    benchmark::DoNotOptimize(done);
  }
  (void)rt.StreamSynchronize(s);
  (void)rt.EventDestroy(e);
}

// --- stream synchronize -----------------------------------------------------------

void BM_Anydev_StreamSynchronize(benchmark::State& state) {
  absl::StatusOr<anydev::Stream> s = anydev::Stream::New(anydev::Device(anydev::DeviceType::kCUDA, 0));
  Check(s.ok(), state, "Stream::New");
  for (auto _ : state) {
    if (!s->Synchronize().ok()) state.SkipWithError("Stream::Synchronize");
  }
}

void BM_Raw_StreamSynchronize(benchmark::State& state) {
  const CudaRt& rt = Rt();
  (void)rt.SetDevice(0);
  cudaStream_t s = nullptr;
  Check(rt.StreamCreateWithPriority(&s, cudaStreamNonBlocking, 0) == cudaSuccess, state,
        "cudaStreamCreateWithPriority");
  for (auto _ : state) {
    if (rt.StreamSynchronize(s) != cudaSuccess) state.SkipWithError("cudaStreamSynchronize");
  }
}

// --- device synchronize -----------------------------------------------------------

void BM_Anydev_DeviceSynchronize(benchmark::State& state) {
  Check(anydev::acc::SetDeviceIndex(0).ok(), state, "acc::SetDeviceIndex");
  for (auto _ : state) {
    if (!anydev::acc::Synchronize(0).ok()) state.SkipWithError("acc::Synchronize");
  }
}

void BM_Raw_DeviceSynchronize(benchmark::State& state) {
  const CudaRt& rt = Rt();
  (void)rt.SetDevice(0);
  for (auto _ : state) {
    if (rt.DeviceSynchronize() != cudaSuccess) state.SkipWithError("cudaDeviceSynchronize");
  }
}

// --- set + get device -------------------------------------------------------------

void BM_Anydev_SetGetDevice(benchmark::State& state) {
  int64_t i = 0;
  for (auto _ : state) {
    if (!anydev::acc::SetDeviceIndex(DeviceFor(++i)).ok()) {
      state.SkipWithError("acc::SetDeviceIndex");
    }
    absl::StatusOr<int> current = anydev::acc::CurrentDeviceIndex();
    benchmark::DoNotOptimize(current);
  }
  (void)anydev::acc::SetDeviceIndex(0);
}

void BM_Raw_SetGetDevice(benchmark::State& state) {
  const CudaRt& rt = Rt();
  int64_t i = 0;
  for (auto _ : state) {
    if (rt.SetDevice(DeviceFor(++i)) != cudaSuccess) state.SkipWithError("cudaSetDevice");
    int current = -1;
    (void)rt.GetDevice(&current);
    benchmark::DoNotOptimize(current);
  }
  (void)rt.SetDevice(0);
}

// Prints the usual console table and keeps each run's time per iteration.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      ns_[run.benchmark_name()] = run.GetAdjustedRealTime();  // in the run's unit: ns
    }
  }
  const std::map<std::string, double>& ns() const { return ns_; }

 private:
  std::map<std::string, double> ns_;
};

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<anydev::Backend*> cuda = anydev::GetBackend(anydev::DeviceType::kCUDA);
  if (!cuda.ok() || anydev::cuda::LoadedRuntime() == nullptr) {
    std::printf("bench_vendor: skipped: no CUDA device: %s\n",
                std::string(cuda.status().message()).c_str());
    return 0;
  }
  absl::StatusOr<anydev::DeviceType> acc = anydev::acc::GetAccelerator();
  if (!acc.ok() || *acc != anydev::DeviceType::kCUDA) {
    std::printf("bench_vendor: skipped: the current accelerator is not cuda (ANYDEV_ACCELERATOR)\n");
    return 0;
  }
  const std::pair<const char*, const char*> kPairs[] = {
      {"event_record_query", "EventRecordQuery"},
      {"stream_synchronize", "StreamSynchronize"},
      {"device_synchronize", "DeviceSynchronize"},
      {"set_get_device", "SetGetDevice"},
  };
  benchmark::RegisterBenchmark("BM_Anydev_EventRecordQuery", BM_Anydev_EventRecordQuery);
  benchmark::RegisterBenchmark("BM_Raw_EventRecordQuery", BM_Raw_EventRecordQuery);
  benchmark::RegisterBenchmark("BM_Anydev_StreamSynchronize", BM_Anydev_StreamSynchronize);
  benchmark::RegisterBenchmark("BM_Raw_StreamSynchronize", BM_Raw_StreamSynchronize);
  benchmark::RegisterBenchmark("BM_Anydev_DeviceSynchronize", BM_Anydev_DeviceSynchronize);
  benchmark::RegisterBenchmark("BM_Raw_DeviceSynchronize", BM_Raw_DeviceSynchronize);
  benchmark::RegisterBenchmark("BM_Anydev_SetGetDevice", BM_Anydev_SetGetDevice);
  benchmark::RegisterBenchmark("BM_Raw_SetGetDevice", BM_Raw_SetGetDevice);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  absl::StatusOr<anydev::DeviceProperties> p =
      anydev::GetDeviceProperties(anydev::Device(anydev::DeviceType::kCUDA, 0));
  std::printf("\nbench_vendor: %s, %d device(s); set_get_device %s\n",
              p.ok() ? p->name.c_str() : "cuda:0", anydev::acc::DeviceCount(),
              anydev::acc::DeviceCount() >= 2 ? "alternates 0 and 1" : "stays on device 0");
  for (const auto& [op, stem] : kPairs) {
    auto a = reporter.ns().find(std::string("BM_Anydev_") + stem);
    auto r = reporter.ns().find(std::string("BM_Raw_") + stem);
    if (a == reporter.ns().end() || r == reporter.ns().end() || r->second <= 0) {
      std::printf("bench_vendor: %-20s not measured (filtered out or failed)\n", op);
      continue;
    }
    const double ratio = a->second / r->second;
    std::printf("bench_vendor: %-20s anydev %10.1f ns  raw %10.1f ns  ratio %5.2f  (target <= %.1f) %s\n",
                op, a->second, r->second, ratio, kTarget, ratio <= kTarget ? "ok" : "OVER");
  }
  return 0;
}
