// bench_compat: the generated C++ legacy forwarders cost nothing. Each pair
// times a shim call (<anydev/compat/cuda.h>) and the direct call it forwards
// to, in the same run; the inline forwarder compiles to the same code, so the
// two should take the same time.
//
// Run:
//   bench_compat --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdlib>

#include <anydev/compat/cuda.h>

namespace {

void BM_DirectCurrentDeviceIndex(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<int> i = anydev::acc::CurrentDeviceIndex();
    benchmark::DoNotOptimize(*i);
  }
}
BENCHMARK(BM_DirectCurrentDeviceIndex);

void BM_ShimCurrentDevice(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(anydev::cuda::current_device());
}
BENCHMARK(BM_ShimCurrentDevice);

void BM_DirectSetDeviceIndex(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(anydev::acc::SetDeviceIndex(0).ok());
}
BENCHMARK(BM_DirectSetDeviceIndex);

void BM_ShimSetDevice(benchmark::State& state) {
  for (auto _ : state) anydev::cuda::set_device(0);
}
BENCHMARK(BM_ShimSetDevice);

void BM_DirectCurrentStream(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<anydev::Stream> s = anydev::acc::CurrentStream();
    benchmark::DoNotOptimize(s->id());
  }
}
BENCHMARK(BM_DirectCurrentStream);

void BM_ShimGetCurrentCUDAStream(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(anydev::cuda::getCurrentCUDAStream().id());
}
BENCHMARK(BM_ShimGetCurrentCUDAStream);

void BM_DirectDeviceIndexGuard(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<anydev::acc::DeviceIndexGuard> g = anydev::acc::DeviceIndexGuard::Make(0);
    benchmark::DoNotOptimize(g.ok());
  }
}
BENCHMARK(BM_DirectDeviceIndexGuard);

void BM_ShimCUDAGuard(benchmark::State& state) {
  for (auto _ : state) {
    anydev::cuda::CUDAGuard g(0);
    benchmark::DoNotOptimize(&g);
  }
}
BENCHMARK(BM_ShimCUDAGuard);

}  // namespace

int main(int argc, char** argv) {
  setenv("ANYDEV_SIM_DEVICES", "2", /*overwrite=*/0);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
