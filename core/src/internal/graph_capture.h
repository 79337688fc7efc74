// internal/graph_capture.h: what the rest of the runtime tells the graph that
// is capturing a stream (Note [Graph memory] in caching_allocator.cc).
//
// Buffer operations (memory.cc) and the bindings' host copies report the
// memory that work queued on a capturing stream uses, so that the graph keeps
// it for its life. Each call costs one relaxed atomic load while no graph is
// capturing anywhere in the process.
#ifndef ANYDEV_INTERNAL_GRAPH_CAPTURE_H_
#define ANYDEV_INTERNAL_GRAPH_CAPTURE_H_

#include <atomic>
#include <memory>

#include "anydev/device.h"
#include "anydev/stream.h"

namespace anydev::internal {

// How many graphs are capturing, in the whole process.
extern std::atomic<int> g_capturing_graphs;

inline bool AnyCapture() { return g_capturing_graphs.load(std::memory_order_relaxed) != 0; }

// True when a graph is capturing `stream`.
bool IsCapturing(const Stream& stream);

// Work just queued on `stream` uses the allocation at `ptr` of `device`'s
// caching allocator; if a graph captures `stream`, it keeps the allocation.
void NoteCapturedUse(const Stream& stream, Device device, void* ptr);

// Work just queued on `stream` reads or writes host memory that `object`
// keeps alive; if a graph captures `stream`, it holds `object` for its life
// and this returns true.
bool KeepAliveForCapture(const Stream& stream, std::shared_ptr<void> object);

}  // namespace anydev::internal

#endif  // ANYDEV_INTERNAL_GRAPH_CAPTURE_H_
