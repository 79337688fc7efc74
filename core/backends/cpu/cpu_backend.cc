// The host CPU as a device: one device, one stream (the default, id 0), and
// every operation complete when it returns, so queries are always true and
// events stamp the time at which they were recorded. It is never the current
// accelerator; it is what device-generic calls fall back to without one.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "anydev/backend.h"
#include "internal/errors.h"
#include "internal/host_memory.h"

namespace anydev {
namespace {

using Clock = std::chrono::steady_clock;

struct CpuEvent {
  bool timing;
  int64_t recorded_ns = -1;
};

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "model name")) {
      absl::string_view v(line);
      v.remove_prefix(v.find(':') + 1);
      return std::string(absl::StripLeadingAsciiWhitespace(v));
    }
  }
  return "host CPU";
}

uint64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

uint64_t AvailableMemory() {
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

class CpuBackend final : public Backend {
 public:
  CpuBackend() : memory_("cpu", PhysicalMemory()) {}

  DeviceType type() const override { return DeviceType::kCPU; }
  absl::StatusOr<int> Probe() override { return 1; }

  absl::StatusOr<DeviceProperties> GetDeviceProperties(int) override {
    DeviceProperties p;
    p.name = CpuModelName();
    p.total_memory = PhysicalMemory();
    p.multi_processor_count = static_cast<int>(std::thread::hardware_concurrency());
#if defined(__x86_64__)
    p.arch = "x86_64";
#elif defined(__aarch64__)
    p.arch = "aarch64";
#else
    p.arch = "unknown";
#endif
    return p;
  }

  absl::Status SetDevice(int) override { return absl::OkStatus(); }
  PriorityRange GetPriorityRange() const override { return {0, 0}; }

  // The CPU runs everything in order on the caller's thread: every "new"
  // stream is the default stream, as c10's CPU guard has a single stream.
  absl::StatusOr<StreamId> NewStream(int, int) override { return StreamId{0}; }

  absl::Status ValidateStream(int, StreamId id) override {
    if (id != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("stream id ", id, " is not a stream of cpu (the CPU has only stream 0)"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int> StreamPriority(int, StreamId) override { return 0; }
  absl::StatusOr<bool> QueryStream(int, StreamId) override { return true; }
  absl::Status SynchronizeStream(int, StreamId) override { return absl::OkStatus(); }
  absl::Status SynchronizeDevice(int) override { return absl::OkStatus(); }

  absl::StatusOr<void*> CreateEvent(int, bool enable_timing) override {
    return static_cast<void*>(new CpuEvent{enable_timing});
  }
  void DestroyEvent(int, void* event) noexcept override { delete static_cast<CpuEvent*>(event); }
  absl::Status RecordEvent(void* event, int, StreamId) override {
    static_cast<CpuEvent*>(event)->recorded_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count();
    return absl::OkStatus();
  }
  absl::Status StreamWaitEvent(int, StreamId, void*) override { return absl::OkStatus(); }
  absl::StatusOr<bool> QueryEvent(void*) override { return true; }
  absl::Status SynchronizeEvent(void*) override { return absl::OkStatus(); }
  absl::StatusOr<double> ElapsedTime(void* start, void* end) override {
    auto* a = static_cast<CpuEvent*>(start);
    auto* b = static_cast<CpuEvent*>(end);
    if (!a->timing || !b->timing) {
      return internal::ValueError(
          "Both events must be created with argument 'enable_timing=True'.");
    }
    return static_cast<double>(b->recorded_ns - a->recorded_ns) / 1e6;
  }

  absl::StatusOr<void*> Allocate(int, size_t nbytes) override { return memory_.Allocate(nbytes); }
  absl::Status Free(int, void* ptr) override { return memory_.Free(ptr); }
  absl::StatusOr<std::pair<size_t, size_t>> MemoryInfo(int) override {
    return std::make_pair(static_cast<size_t>(AvailableMemory()),
                          static_cast<size_t>(PhysicalMemory()));
  }

  absl::Status CopyAsync(void* dst, const void* src, size_t nbytes, CopyKind kind, int,
                         StreamId) override {
    if (kind != CopyKind::kHostToDevice) {
      ANYDEV_RETURN_IF_ERROR(memory_.CheckRange(src, nbytes, "copy source"));
    }
    if (kind != CopyKind::kDeviceToHost) {
      ANYDEV_RETURN_IF_ERROR(memory_.CheckRange(dst, nbytes, "copy destination"));
    }
    if (nbytes > 0) std::memmove(dst, src, nbytes);
    return absl::OkStatus();
  }

  absl::Status FillAsync(void* dst, uint8_t value, size_t nbytes, int, StreamId) override {
    ANYDEV_RETURN_IF_ERROR(memory_.CheckRange(dst, nbytes, "fill destination"));
    if (nbytes > 0) std::memset(dst, value, nbytes);
    return absl::OkStatus();
  }

  absl::Status SleepAsync(absl::Duration duration, int, StreamId) override {
    absl::SleepFor(duration);
    return absl::OkStatus();
  }

 private:
  internal::TrackedHostMemory memory_;
};

}  // namespace

ANYDEV_REGISTER_BACKEND(DeviceType::kCPU, [] { return std::make_unique<CpuBackend>(); });

}  // namespace anydev
