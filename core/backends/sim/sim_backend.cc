// The simulated accelerator: a real asynchronous backend made of host memory
// and worker threads, so that ordering, cross-stream waits, event timing and
// stream-ordered reuse are exercised on machines without a GPU.
//
// Opt-in: ANYDEV_SIM_DEVICES=N (1..64) devices, each with ANYDEV_SIM_MEMORY
// bytes (default 1 GiB) of capacity.
//
// Streams. Each stream is an ordered queue run by its own worker thread,
// started when the stream gets its first work. Every queued item gets a
// sequence number; the stream tracks how many items it has finished, so
// "has the stream reached item k" is one comparison. Stream ids as every
// pooled backend's (Note [Stream ids]): three levels, priorities 0, -1, -2.
//
// Events. Recording queues a marker whose worker stamps the steady clock when
// the stream reaches it, so elapsed times measure what the stream did. A wait
// captures (stream, sequence number) of the event's last record at the time
// of the call, so a later re-record does not change an earlier wait, and a
// destroyed event does not break a pending one.
//
// Graphs. While a stream captures, Enqueue appends the item (and a label for
// debug_dump) to the capture instead of the queue, so nothing captured runs;
// a replay queues one item that runs the captured ones in order. As under
// CUDA stream capture, querying or synchronising a capturing stream and
// recording an event on it are errors.
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "anydev/backend.h"
#include "backends/common/stream_ids.h"
#include "internal/env.h"
#include "internal/errors.h"
#include "internal/host_memory.h"

namespace anydev {
namespace {

constexpr int kPriorityLevels = 3;  // priorities 0, -1, -2
using stream_ids::kPoolSize;
constexpr int kStreamsPerDevice = 1 + kPriorityLevels * kPoolSize;
constexpr uint64_t kDefaultMemory = uint64_t{1} << 30;

using Clock = std::chrono::steady_clock;

// Set when the first stream worker starts: from then on a forked child
// cannot use the backend, since it has none of the workers (Note [Fork] in
// registry.cc).
std::atomic<bool> g_workers_started{false};

// Captured work: the items, in order, each with what it does (for the dump).
struct SimGraph {
  std::vector<std::function<void()>> tasks;
  std::vector<std::string> labels;
};

// An executable graph: the same items, shared by every replay in flight.
struct SimGraphExec {
  std::shared_ptr<const std::vector<std::function<void()>>> tasks;
};

absl::Status CaptureUnsupported(const char* what) {
  return absl::FailedPreconditionError(
      absl::StrCat("sim: ", what, ": operation not permitted when stream is capturing"));
}

class SimStream {
 public:
  SimStream(int device, StreamId id) : device_(device), id_(id) {}

  // Queues `task` (or, while capturing, adds it to the capture); returns its
  // sequence number (1-based; 0 for a captured item).
  // `what` and `amount` label a captured item ("memcpy", 1024): formatted
  // only while capturing, so the hot path pays nothing for them.
  uint64_t Enqueue(std::function<void()> task, const char* what = "host task",
                   int64_t amount = -1) {
    absl::MutexLock lock(&mu_);
    if (capture_ != nullptr) {
      capture_->tasks.push_back(std::move(task));
      capture_->labels.push_back(amount < 0 ? std::string(what) : absl::StrCat(what, " ", amount));
      return 0;
    }
    if (!started_) {
      started_ = true;
      g_workers_started.store(true, std::memory_order_relaxed);
      // Detached: a worker may still be running at process exit; the backend
      // and its streams are never destroyed (see the registry's note).
      std::thread([this] { Run(); }).detach();
    }
    queue_.push_back(std::move(task));
    return ++enqueued_;
  }

  // The sequence number of the last queued item.
  uint64_t Enqueued() const {
    absl::MutexLock lock(&mu_);
    return enqueued_;
  }

  // True when everything queued so far has finished (one lock).
  bool Idle() const {
    absl::MutexLock lock(&mu_);
    return completed_ == enqueued_;
  }

  bool Reached(uint64_t seq) const {
    absl::MutexLock lock(&mu_);
    return completed_ >= seq;
  }

  // Blocks until item `seq` has finished.
  void WaitFor(uint64_t seq) const {
    absl::MutexLock lock(&mu_);
    const Target target{&completed_, seq};
    mu_.Await(absl::Condition(&target, &Target::Done));
  }

  bool Capturing() const {
    absl::MutexLock lock(&mu_);
    return capture_ != nullptr;
  }

  absl::Status BeginCapture() {
    absl::MutexLock lock(&mu_);
    if (capture_ != nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("sim:", device_, " stream ", id_, " is already capturing"));
    }
    capture_ = std::make_unique<SimGraph>();
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<SimGraph>> EndCapture() {
    absl::MutexLock lock(&mu_);
    if (capture_ == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("sim:", device_, " stream ", id_, " is not capturing"));
    }
    return std::move(capture_);
  }

  int device() const { return device_; }
  StreamId id() const { return id_; }

 private:
  struct Target {
    const uint64_t* completed;
    uint64_t seq;
    bool Done() const { return *completed >= seq; }
  };

  void Run() {
    for (;;) {
      std::function<void()> task;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](std::deque<std::function<void()>>* q) { return !q->empty(); }, &queue_));
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
      absl::MutexLock lock(&mu_);
      ++completed_;
    }
  }

  const int device_;
  const StreamId id_;
  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t enqueued_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<SimGraph> capture_ ABSL_GUARDED_BY(mu_);
};

// One record of an event: where it was recorded and, once the stream got
// there, when. Shared between the event and the queued marker.
struct Mark {
  SimStream* stream = nullptr;
  uint64_t seq = 0;
  std::atomic<int64_t> reached_ns{-1};
};

struct SimEvent {
  int device;
  bool timing;
  absl::Mutex mu;
  std::shared_ptr<Mark> mark ABSL_GUARDED_BY(mu);

  std::shared_ptr<Mark> Current() {
    absl::MutexLock lock(&mu);
    return mark;
  }
};

struct SimDevice {
  explicit SimDevice(int index, uint64_t capacity)
      : memory(absl::StrCat("sim:", index), capacity) {}
  internal::TrackedHostMemory memory;
  std::array<std::atomic<SimStream*>, kStreamsPerDevice> streams{};
  std::array<std::atomic<uint32_t>, kPriorityLevels> next_in_pool{};
};

class SimBackend final : public Backend {
 public:
  DeviceType type() const override { return DeviceType::kSim; }

  absl::StatusOr<int> Probe() override {
    ANYDEV_ASSIGN_OR_RETURN(std::optional<int64_t> count,
                            internal::GetEnvInt("ANYDEV_SIM_DEVICES", 1, kMaxDevicesPerType));
    if (!count) {
      return absl::FailedPreconditionError(
          "the simulated accelerator is opt-in: set ANYDEV_SIM_DEVICES=N (1..64) to enable it");
    }
    ANYDEV_ASSIGN_OR_RETURN(std::optional<uint64_t> memory,
                            internal::GetEnvBytes("ANYDEV_SIM_MEMORY", 1));
    capacity_ = memory.value_or(kDefaultMemory);
    for (int i = 0; i < *count; ++i) {
      devices_.push_back(std::make_unique<SimDevice>(i, capacity_));
    }
    return static_cast<int>(*count);
  }

  absl::StatusOr<DeviceProperties> GetDeviceProperties(int device) override {
    DeviceProperties p;
    p.name = "anydev simulated accelerator";
    p.total_memory = capacity_;
    p.multi_processor_count = kStreamsPerDevice;
    p.arch = "sim";
    p.uuid = absl::StrCat("sim-", device);
    p.extra = {{"streams_per_priority", absl::StrCat(kPoolSize)},
               {"priority_levels", absl::StrCat(kPriorityLevels)},
               {"execution", "one host worker thread per stream"}};
    return p;
  }

  absl::Status SetDevice(int) override { return absl::OkStatus(); }

  // Before any stream worker has started, the backend is host memory and
  // bookkeeping, which a forked child has a copy of.
  bool UsableAfterFork() const override {
    return !g_workers_started.load(std::memory_order_relaxed);
  }

  PriorityRange GetPriorityRange() const override { return {0, -(kPriorityLevels - 1)}; }

  absl::StatusOr<StreamId> NewStream(int device, int priority) override {
    const int level = stream_ids::LevelOf(priority, 0, kPriorityLevels);
    return stream_ids::Next(level, devices_[device]->next_in_pool[level]);
  }

  absl::Status ValidateStream(int device, StreamId id) override {
    return stream_ids::Validate(id, kPriorityLevels, absl::StrCat("sim:", device));
  }

  absl::StatusOr<int> StreamPriority(int, StreamId id) override {
    return -stream_ids::LevelOfId(id);
  }

  absl::StatusOr<bool> QueryStream(int device, StreamId id) override {
    SimStream* s = GetStream(device, id);
    if (s->Capturing()) return CaptureUnsupported("query");
    return s->Idle();
  }

  absl::Status SynchronizeStream(int device, StreamId id) override {
    SimStream* s = GetStream(device, id);
    if (s->Capturing()) return CaptureUnsupported("synchronize");
    s->WaitFor(s->Enqueued());
    return absl::OkStatus();
  }

  absl::Status SynchronizeDevice(int device) override {
    for (auto& slot : devices_[device]->streams) {
      if (SimStream* s = slot.load(std::memory_order_acquire)) s->WaitFor(s->Enqueued());
    }
    return absl::OkStatus();
  }

  absl::StatusOr<void*> CreateEvent(int device, bool enable_timing) override {
    auto* e = new SimEvent();
    e->device = device;
    e->timing = enable_timing;
    return static_cast<void*>(e);
  }

  void DestroyEvent(int, void* event) noexcept override { delete static_cast<SimEvent*>(event); }

  absl::Status RecordEvent(void* event, int device, StreamId stream) override {
    auto* e = static_cast<SimEvent*>(event);
    if (GetStream(device, stream)->Capturing()) {
      return absl::UnimplementedError(
          "sim: recording an event on a capturing stream is not supported (capture one stream "
          "at a time)");
    }
    auto mark = std::make_shared<Mark>();
    mark->stream = GetStream(device, stream);
    mark->seq = mark->stream->Enqueue([mark] {
      mark->reached_ns.store(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
              .count(),
          std::memory_order_release);
    });
    absl::MutexLock lock(&e->mu);
    e->mark = std::move(mark);
    return absl::OkStatus();
  }

  absl::Status StreamWaitEvent(int device, StreamId stream, void* event) override {
    std::shared_ptr<Mark> mark = static_cast<SimEvent*>(event)->Current();
    if (!mark) return absl::OkStatus();
    SimStream* waiter = GetStream(device, stream);
    SimStream* source = mark->stream;
    const uint64_t seq = mark->seq;
    if (source == waiter) return absl::OkStatus();  // in-order already
    waiter->Enqueue([source, seq] { source->WaitFor(seq); },
                    "wait for stream", source->id());
    return absl::OkStatus();
  }

  absl::StatusOr<bool> QueryEvent(void* event) override {
    std::shared_ptr<Mark> mark = static_cast<SimEvent*>(event)->Current();
    return !mark || mark->stream->Reached(mark->seq);
  }

  absl::Status SynchronizeEvent(void* event) override {
    std::shared_ptr<Mark> mark = static_cast<SimEvent*>(event)->Current();
    if (mark) mark->stream->WaitFor(mark->seq);
    return absl::OkStatus();
  }

  absl::StatusOr<double> ElapsedTime(void* start, void* end) override {
    auto* a = static_cast<SimEvent*>(start);
    auto* b = static_cast<SimEvent*>(end);
    if (!a->timing || !b->timing) {
      return internal::ValueError(
          "Both events must be created with argument 'enable_timing=True'.");
    }
    std::shared_ptr<Mark> ma = a->Current(), mb = b->Current();
    const int64_t ta = ma ? ma->reached_ns.load(std::memory_order_acquire) : -1;
    const int64_t tb = mb ? mb->reached_ns.load(std::memory_order_acquire) : -1;
    if (ta < 0 || tb < 0) {
      return absl::FailedPreconditionError(
          "Both events must be completed before calculating elapsed time.");
    }
    return static_cast<double>(tb - ta) / 1e6;
  }

  absl::StatusOr<void*> Allocate(int device, size_t nbytes) override {
    return devices_[device]->memory.Allocate(nbytes);
  }

  absl::Status Free(int device, void* ptr) override { return devices_[device]->memory.Free(ptr); }

  absl::StatusOr<std::pair<size_t, size_t>> MemoryInfo(int device) override {
    const uint64_t used = devices_[device]->memory.used();
    return std::make_pair(static_cast<size_t>(capacity_ - used), static_cast<size_t>(capacity_));
  }

  absl::Status CopyAsync(void* dst, const void* src, size_t nbytes, CopyKind kind, int device,
                         StreamId stream) override {
    internal::TrackedHostMemory& mem = devices_[device]->memory;
    if (kind != CopyKind::kHostToDevice) {
      ANYDEV_RETURN_IF_ERROR(CheckAnyDevice(src, nbytes, "copy source", device));
    }
    if (kind != CopyKind::kDeviceToHost) {
      ANYDEV_RETURN_IF_ERROR(mem.CheckRange(dst, nbytes, "copy destination"));
    }
    if (nbytes == 0) return absl::OkStatus();
    GetStream(device, stream)->Enqueue([dst, src, nbytes] { std::memmove(dst, src, nbytes); },
                                       "memcpy bytes", static_cast<int64_t>(nbytes));
    return absl::OkStatus();
  }

  absl::Status FillAsync(void* dst, uint8_t value, size_t nbytes, int device,
                         StreamId stream) override {
    ANYDEV_RETURN_IF_ERROR(devices_[device]->memory.CheckRange(dst, nbytes, "fill destination"));
    if (nbytes == 0) return absl::OkStatus();
    GetStream(device, stream)->Enqueue([dst, value, nbytes] { std::memset(dst, value, nbytes); },
                                       "memset bytes", static_cast<int64_t>(nbytes));
    return absl::OkStatus();
  }

  absl::Status SleepAsync(absl::Duration duration, int device, StreamId stream) override {
    GetStream(device, stream)->Enqueue([duration] { absl::SleepFor(duration); },
                                       "sleep us", absl::ToInt64Microseconds(duration));
    return absl::OkStatus();
  }

  // --- graphs ----------------------------------------------------------------

  absl::Status BeginCapture(int device, StreamId stream, CaptureMode) override {
    return GetStream(device, stream)->BeginCapture();
  }

  absl::StatusOr<void*> EndCapture(int device, StreamId stream) override {
    ANYDEV_ASSIGN_OR_RETURN(std::unique_ptr<SimGraph> g, GetStream(device, stream)->EndCapture());
    return static_cast<void*>(g.release());
  }

  absl::StatusOr<bool> IsCapturing(int device, StreamId stream) override {
    return GetStream(device, stream)->Capturing();
  }

  absl::StatusOr<void*> InstantiateGraph(int, void* graph) override {
    auto* exec = new SimGraphExec();
    exec->tasks = std::make_shared<const std::vector<std::function<void()>>>(
        static_cast<SimGraph*>(graph)->tasks);
    return static_cast<void*>(exec);
  }

  absl::Status LaunchGraph(int device, void* exec, StreamId stream) override {
    std::shared_ptr<const std::vector<std::function<void()>>> tasks =
        static_cast<SimGraphExec*>(exec)->tasks;
    const size_t n = tasks->size();
    GetStream(device, stream)->Enqueue(
        [tasks = std::move(tasks)] {
          for (const std::function<void()>& task : *tasks) task();
        },
        "graph items", static_cast<int64_t>(n));
    return absl::OkStatus();
  }

  void DestroyGraph(int, void* graph, void* exec) noexcept override {
    delete static_cast<SimGraph*>(graph);
    delete static_cast<SimGraphExec*>(exec);
  }

  absl::Status DumpGraph(int device, void* graph, const std::string& path) override {
    const auto* g = static_cast<const SimGraph*>(graph);
    std::ofstream out(path, std::ios::trunc);
    if (!out) {
      return absl::InvalidArgumentError(absl::StrCat("debug_dump: cannot write '", path, "'"));
    }
    out << "digraph sim" << device << "_graph {\n";
    for (size_t i = 0; i < g->labels.size(); ++i) {
      out << "  n" << i << " [label=\"" << g->labels[i] << "\"];\n";
      if (i > 0) out << "  n" << i - 1 << " -> n" << i << ";\n";
    }
    out << "}\n";
    out.close();
    if (!out) {
      return absl::InternalError(absl::StrCat("debug_dump: writing '", path, "' failed"));
    }
    return absl::OkStatus();
  }

 private:
  // Returns the stream, creating it on first use. Ids are validated by the
  // generic layer (ValidateStream) before they reach here.
  SimStream* GetStream(int device, StreamId id) {
    std::atomic<SimStream*>& slot = devices_[device]->streams[id];
    SimStream* s = slot.load(std::memory_order_acquire);
    if (s != nullptr) return s;
    auto* created = new SimStream(device, id);
    if (slot.compare_exchange_strong(s, created, std::memory_order_acq_rel)) return created;
    delete created;  // another thread won; `s` now holds its stream
    return s;
  }

  // Peer copies: the source of a device-to-device copy may be on another
  // simulated device (all of them share the host's address space).
  absl::Status CheckAnyDevice(const void* ptr, size_t nbytes, const char* what, int device) {
    const internal::TrackedHostMemory& own = devices_[device]->memory;
    absl::Status s = internal::CheckRangeOnAnyDevice(
        own.blocks(), devices_,
        [](const std::unique_ptr<SimDevice>& d) -> const internal::DeviceBlocks& {
          return d->memory.blocks();
        },
        ptr, nbytes, what);
    if (s.code() == absl::StatusCode::kNotFound) return own.NotDeviceMemory(ptr, what);
    return s;
  }

  uint64_t capacity_ = kDefaultMemory;
  std::vector<std::unique_ptr<SimDevice>> devices_;
};

}  // namespace

ANYDEV_REGISTER_BACKEND(DeviceType::kSim, [] { return std::make_unique<SimBackend>(); });

}  // namespace anydev
