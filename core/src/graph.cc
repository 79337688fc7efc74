// anydev::Graph over the backends' stream-capture calls (backend.h).
#include "anydev/graph.h"

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "anydev/accelerator.h"
#include "internal/errors.h"

namespace anydev {
namespace {

// Graph-private pool ids as PyTorch's graph_pool_handle: (0, n), n counting
// up from 1 per process.
std::atomic<uint64_t> g_next_pool{1};

}  // namespace

absl::StatusOr<CaptureMode> ParseCaptureMode(const std::string& name) {
  if (name == "default" || name == "global") return CaptureMode::kGlobal;
  if (name == "thread_local") return CaptureMode::kThreadLocal;
  if (name == "relaxed") return CaptureMode::kRelaxed;
  return internal::ValueError(absl::StrCat(
      "capture_error_mode must be one of 'default', 'global', 'thread_local', 'relaxed'; got '",
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
  ANYDEV_RETURN_IF_ERROR(backend->BeginCapture(s.device_index(), s.id(), mode));
  backend_ = backend;
  stream_ = s;
  capturing_ = true;
  pool_ = pool ? *pool : MempoolId{0, g_next_pool.fetch_add(1)};
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
  if (exec_ == nullptr) ANYDEV_RETURN_IF_ERROR(Instantiate());
  ANYDEV_ASSIGN_OR_RETURN(Stream s, acc::CurrentStream(stream_->device_index()));
  return backend_->LaunchGraph(s.device_index(), exec_, s.id());
}

void Graph::Reset() noexcept {
  if (backend_ == nullptr) return;
  const int device = stream_->device_index();
  if (capturing_) {
    // Abandon the capture: end it and drop what it recorded.
    absl::StatusOr<void*> g = backend_->EndCapture(device, stream_->id());
    if (g.ok()) backend_->DestroyGraph(device, *g, nullptr);
    capturing_ = false;
  }
  backend_->DestroyGraph(device, graph_, exec_);
  graph_ = nullptr;
  exec_ = nullptr;
  backend_ = nullptr;
  stream_.reset();
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
