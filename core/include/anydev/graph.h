// anydev/graph.h: capture a stream's work once, replay it many times, as
// at::accelerator::Graph / torch.accelerator.Graph (torch.cuda.CUDAGraph).
//
// CaptureBegin records, instead of running, the work queued on the calling
// thread's current stream of the current accelerator (which must not be the
// default stream) until CaptureEnd; Replay queues all of it on the current
// stream as one unit. On CUDA and HIP this is stream capture
// (cudaStreamBeginCapture ... cudaGraphLaunch); on sim the stream's worker
// records the queued items and a replay runs them in order; Level Zero and
// the CPU answer Unimplemented.
//
// Memory, as PyTorch's CUDA graphs: what the capturing stream allocates
// while capturing comes from a private pool of the graph (Pool(); graphs
// given the same pool id share one), kept for the graph's life and reused
// only by captures into that pool. Unlike PyTorch, a Buffer allocated before
// the capture and used by captured work is kept too: freed, its memory stays
// reserved until the graph is reset or destroyed, so a replay never writes
// into memory given to someone else (Note [Graph memory] in
// caching_allocator.cc). Raw pointers (RawAlloc) used by captured work are
// the caller's to keep alive.
//
// Example:
//   ASSIGN_OR_RETURN(anydev::Stream s, anydev::Stream::New(dev));
//   anydev::acc::StreamGuard use(...s...);
//   anydev::Graph g;
//   RETURN_IF_ERROR(g.CaptureBegin());
//   ... queue copies and fills on s ...
//   RETURN_IF_ERROR(g.CaptureEnd());
//   for (int i = 0; i < 100; ++i) RETURN_IF_ERROR(g.Replay());
#ifndef ANYDEV_GRAPH_H_
#define ANYDEV_GRAPH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "anydev/backend.h"
#include "anydev/stream.h"

namespace anydev {
namespace internal {
class DeviceCachingAllocator;
struct CaptureRegistry;
}  // namespace internal

// A graph's memory-pool id, as torch's (pool()): graphs given the same id
// share a pool.
using MempoolId = std::pair<uint64_t, uint64_t>;

// Parses torch's capture_error_mode names ("default" is "global").
[[nodiscard]] absl::StatusOr<CaptureMode> ParseCaptureMode(const std::string& name);

class Graph {
 public:
  // With `keep_graph`, the captured graph is kept after CaptureEnd and made
  // executable by Instantiate or the first Replay; without, CaptureEnd
  // instantiates it and drops the captured form (as torch's keep_graph).
  explicit Graph(bool keep_graph = false) : keep_graph_(keep_graph) {}
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Starts capturing the current stream of the current accelerator.
  // FailedPrecondition when this graph holds a capture (Reset first) or the
  // stream is the default one; Unimplemented on a backend without graphs.
  [[nodiscard]] absl::Status CaptureBegin(std::optional<MempoolId> pool = std::nullopt,
                                          CaptureMode mode = CaptureMode::kGlobal);
  // Ends the capture; the current stream must be the one capturing.
  [[nodiscard]] absl::Status CaptureEnd();
  // Makes the captured graph executable (done by CaptureEnd unless keep_graph).
  [[nodiscard]] absl::Status Instantiate();
  // Queues the captured work on the current stream of the capture's device.
  [[nodiscard]] absl::Status Replay();
  // Drops the graph; the object can capture again.
  void Reset() noexcept;

  // The memory-pool id (given to CaptureBegin, else this graph's own).
  MempoolId Pool() const { return pool_; }
  // Keeps the captured form after instantiation, for DebugDump.
  void EnableDebugMode() { debug_ = true; }
  // Writes the captured graph to `path` (debug mode only).
  [[nodiscard]] absl::Status DebugDump(const std::string& path) const;

  bool capturing() const { return capturing_; }
  bool has_graph() const { return graph_ != nullptr || exec_ != nullptr; }

 private:
  friend struct internal::CaptureRegistry;
  // Gives back the memory the graph holds (Note [Graph memory]).
  void ReleaseMemory() noexcept;

  const bool keep_graph_;
  bool debug_ = false;
  bool capturing_ = false;
  Backend* backend_ = nullptr;
  std::optional<Stream> stream_;  // the capture's stream
  void* graph_ = nullptr;         // the captured graph
  void* exec_ = nullptr;          // its executable form
  MempoolId pool_{0, 0};
  // The caching allocator of the capture's device, while the graph uses its
  // private pool `pool_`.
  internal::DeviceCachingAllocator* allocator_ = nullptr;
  // Allocations from outside the pool that captured work uses, each with its
  // allocator (RetainForGraph handles), and host objects it reads or writes.
  struct Retained {
    internal::DeviceCachingAllocator* allocator;
    void* handle;      // from RetainForGraph
    const void* ptr;   // the allocation
  };
  std::vector<Retained> retained_;
  std::vector<std::shared_ptr<void>> keep_alive_;
  std::vector<Stream> replay_streams_;  // the streams replays were queued on
};

}  // namespace anydev

#endif  // ANYDEV_GRAPH_H_
