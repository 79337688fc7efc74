// anydev::Graph over the backends' stream-capture calls (backend.h).
#include "anydev/graph.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "anydev/accelerator.h"
#include "internal/caching_allocator.h"
#include "internal/errors.h"
#include "internal/graph_capture.h"

namespace anydev {
namespace {

// Graph-private pool ids as PyTorch's graph_pool_handle: (0, n), n counting
// up from 1 per process.
std::atomic<uint64_t> g_next_pool{1};

}  // namespace

namespace internal {

std::atomic<int> g_capturing_graphs{0};

// The graphs that are capturing, by stream (Note [Graph memory]).
struct CaptureRegistry {
  absl::Mutex mu;
  std::vector<std::pair<Stream, Graph*>> captures ABSL_GUARDED_BY(mu);

  static CaptureRegistry& Get() {
    static auto* registry = new CaptureRegistry();  // never destroyed: graphs may outlive statics
    return *registry;
  }

  void Add(const Stream& s, Graph* g) {
    absl::MutexLock lock(&mu);
    captures.emplace_back(s, g);
    g_capturing_graphs.fetch_add(1, std::memory_order_relaxed);
  }

  void Remove(const Graph* g) {
    absl::MutexLock lock(&mu);
    auto it = std::find_if(captures.begin(), captures.end(),
                           [g](const auto& c) { return c.second == g; });
    if (it == captures.end()) return;
    captures.erase(it);
    g_capturing_graphs.fetch_sub(1, std::memory_order_relaxed);
  }

  Graph* Find(const Stream& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (const auto& [stream, graph] : captures) {
      if (stream == s) return graph;
    }
    return nullptr;
  }

  void Retain(const Stream& s, Device device, void* ptr) {
    absl::MutexLock lock(&mu);
    Graph* g = Find(s);
    if (g == nullptr) return;
    DeviceCachingAllocator* a = FindCachingAllocator(device);
    if (a == nullptr) return;
    // A buffer used by several captured calls in a row is kept once (a
    // retained allocation cannot be freed and reused meanwhile).
    const size_t n = g->retained_.size();
    for (size_t i = n; i > 0 && i + 4 > n; --i) {
      if (g->retained_[i - 1].allocator == a && g->retained_[i - 1].ptr == ptr) return;
    }
    if (void* handle = a->RetainForGraph(ptr, g->pool_)) {
      g->retained_.push_back(Graph::Retained{a, handle, ptr});
    }
  }

  bool KeepAlive(const Stream& s, std::shared_ptr<void> object) {
    absl::MutexLock lock(&mu);
    Graph* g = Find(s);
    if (g == nullptr) return false;
    g->keep_alive_.push_back(std::move(object));
    return true;
  }
};

bool IsCapturing(const Stream& stream) {
  if (!AnyCapture()) return false;
  CaptureRegistry& r = CaptureRegistry::Get();
  absl::MutexLock lock(&r.mu);
  return r.Find(stream) != nullptr;
}

void NoteCapturedUse(const Stream& stream, Device device, void* ptr) {
  if (!AnyCapture() || ptr == nullptr) return;
  CaptureRegistry::Get().Retain(stream, device, ptr);
}

bool KeepAliveForCapture(const Stream& stream, std::shared_ptr<void> object) {
  if (!AnyCapture()) return false;
  return CaptureRegistry::Get().KeepAlive(stream, std::move(object));
}

}  // namespace internal

absl::StatusOr<CaptureMode> ParseCaptureMode(const std::string& name) {
  if (name == "default" || name == "global") return CaptureMode::kGlobal;
  if (name == "thread_local") return CaptureMode::kThreadLocal;
  if (name == "relaxed") return CaptureMode::kRelaxed;
  // RuntimeError, as torch's TORCH_CHECK on the mode (torch/csrc/cuda/Graph.cpp).
  return absl::InvalidArgumentError(absl::StrCat(
      "Unknown capture error mode: capture_error_mode must be one of 'default', 'global', "
      "'thread_local', 'relaxed'; got '",
      name, "'"));
}

Graph::~Graph() { Reset(); }

absl::Status Graph::CaptureBegin(std::optional<MempoolId> pool, CaptureMode mode) {
  if (capturing_ || has_graph()) {
    return absl::FailedPreconditionError(
        "this graph already holds a capture; call reset() before capturing again");
  }
  ANYDEV_ASSIGN_OR_RETURN(Stream s, acc::CurrentStream());
  if (s.id() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "graphs must be captured on a non-default stream (the current stream of ",
        s.device().ToString(), " is its default stream; capture inside `with anydev.Stream():`)"));
  }
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(s.device_type()));
  ANYDEV_ASSIGN_OR_RETURN(internal::DeviceCachingAllocator * allocator,
                          internal::GetCachingAllocator(s.device()));
  ANYDEV_RETURN_IF_ERROR(backend->BeginCapture(s.device_index(), s.id(), mode));
  backend_ = backend;
  stream_ = s;
  capturing_ = true;
  pool_ = pool ? *pool : MempoolId{0, g_next_pool.fetch_add(1)};
  // What the stream allocates from here on comes from the graph's pool, and
  // what captured work uses is kept (Note [Graph memory]).
  allocator_ = allocator;
  allocator_->BeginAllocateToPool(pool_, s.id());
  internal::CaptureRegistry::Get().Add(s, this);
  return absl::OkStatus();
}

absl::Status Graph::CaptureEnd() {
  if (!capturing_) {
    return absl::FailedPreconditionError("capture_end() without a matching capture_begin()");
  }
  ANYDEV_ASSIGN_OR_RETURN(Stream s, acc::CurrentStream(stream_->device_index()));
  if (s != *stream_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Capture must end on the same stream it began on (began on ", stream_->ToString(),
        ", the current stream is ", s.ToString(), ")"));
  }
  capturing_ = false;
  internal::CaptureRegistry::Get().Remove(this);
  allocator_->EndAllocateToPool(s.id());
  ANYDEV_ASSIGN_OR_RETURN(graph_, backend_->EndCapture(s.device_index(), s.id()));
  if (!keep_graph_) {
    ANYDEV_RETURN_IF_ERROR(Instantiate());
    if (!debug_) {
      backend_->DestroyGraph(stream_->device_index(), graph_, nullptr);
      graph_ = nullptr;
    }
  }
  return absl::OkStatus();
}

absl::Status Graph::Instantiate() {
  if (capturing_ || graph_ == nullptr) {
    return absl::FailedPreconditionError(
        "instantiate() needs a finished capture (capture_begin() ... capture_end() with "
        "keep_graph=True)");
  }
  if (exec_ != nullptr) {
    backend_->DestroyGraph(stream_->device_index(), nullptr, exec_);
    exec_ = nullptr;
  }
  ANYDEV_ASSIGN_OR_RETURN(exec_, backend_->InstantiateGraph(stream_->device_index(), graph_));
  return absl::OkStatus();
}

absl::Status Graph::Replay() {
  if (capturing_ || !has_graph()) {
    return absl::FailedPreconditionError(
        "Called Graph::replay without a preceding successful capture.");
  }
  // The backend may have become unusable since the capture (a forked child).
  ANYDEV_RETURN_IF_ERROR(GetBackend(stream_->device_type()).status());
  if (exec_ == nullptr) ANYDEV_RETURN_IF_ERROR(Instantiate());
  ANYDEV_ASSIGN_OR_RETURN(Stream s, acc::CurrentStream(stream_->device_index()));
  ANYDEV_RETURN_IF_ERROR(backend_->LaunchGraph(s.device_index(), exec_, s.id()));
  if (std::find(replay_streams_.begin(), replay_streams_.end(), s) == replay_streams_.end()) {
    replay_streams_.push_back(s);
  }
  return absl::OkStatus();
}

void Graph::Reset() noexcept {
  if (backend_ == nullptr) return;
  const int device = stream_->device_index();
  if (capturing_) {
    // Abandon the capture: end it and drop what it recorded.
    internal::CaptureRegistry::Get().Remove(this);
    allocator_->EndAllocateToPool(stream_->id());
    absl::StatusOr<void*> g = backend_->EndCapture(device, stream_->id());
    if (g.ok()) backend_->DestroyGraph(device, *g, nullptr);
    capturing_ = false;
  }
  backend_->DestroyGraph(device, graph_, exec_);
  graph_ = nullptr;
  exec_ = nullptr;
  ReleaseMemory();
  backend_ = nullptr;
  stream_.reset();
}

void Graph::ReleaseMemory() noexcept {
  for (const Retained& r : retained_) r.allocator->ReleaseGraphUse(r.handle, replay_streams_);
  retained_.clear();
  if (allocator_ != nullptr) allocator_->ReleasePool(pool_);
  allocator_ = nullptr;
  // Host objects: a replay in flight may still read or write them, so they
  // are let go once the replays' streams have finished what was queued.
  if (!keep_alive_.empty()) {
    for (const Stream& s : replay_streams_) s.Synchronize().IgnoreError();
    keep_alive_.clear();
  }
  replay_streams_.clear();
}

absl::Status Graph::DebugDump(const std::string& path) const {
  if (!debug_) {
    return absl::FailedPreconditionError(
        "graph debug mode is not enabled; call enable_debug_mode() before capturing");
  }
  if (graph_ == nullptr) {
    return absl::FailedPreconditionError("debug_dump() needs a finished capture");
  }
  return backend_->DumpGraph(stream_->device_index(), graph_, path);
}

}  // namespace anydev
