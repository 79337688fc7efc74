// The host CPU as a device: one device, one stream (the default, id 0), and
// every operation complete when it returns, so queries are always true; as in
// c10 it has no events (recording one is an error). It is never the current
// accelerator; it is what device-generic calls fall back to without one.
#include <unistd.h>

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
  // Every operation completes when it returns: nothing a forked child lacks.
  bool UsableAfterFork() const override { return true; }

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

  // As c10's CPU guard (NoOpDeviceGuardImpl), the CPU has no events: work
  // on its one stream is done when the call returns, so there is nothing to
  // mark. Recording or waiting is the error torch gives ("cpu backend doesn't
  // support events."); an event never recorded still queries as done.
  absl::StatusOr<void*> CreateEvent(int, bool) override { return NoEvents(); }
  void DestroyEvent(int, void*) noexcept override {}
  absl::Status RecordEvent(void*, int, StreamId) override { return NoEvents(); }
  absl::Status StreamWaitEvent(int, StreamId, void*) override { return NoEvents(); }
  absl::StatusOr<bool> QueryEvent(void*) override { return NoEvents(); }
  absl::Status SynchronizeEvent(void*) override { return NoEvents(); }
  absl::StatusOr<double> ElapsedTime(void*, void*) override { return NoEvents(); }

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
  // Unimplemented, raised in Python as torch raises it: RuntimeError (c10's
  // NoOpDeviceGuardImpl TORCH_CHECKs), not NotImplementedError.
  static absl::Status NoEvents() {
    return internal::WithPyException(
        absl::UnimplementedError("cpu backend doesn't support events."), "RuntimeError");
  }

  internal::TrackedHostMemory memory_;
};

}  // namespace

ANYDEV_REGISTER_BACKEND(DeviceType::kCPU, [] { return std::make_unique<CpuBackend>(); });

}  // namespace anydev
