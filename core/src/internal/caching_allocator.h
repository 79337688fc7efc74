// internal/caching_allocator.h: the caching allocator of one device, written
// once over anydev::Backend for every backend. The design is PyTorch's
// CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp); docs/memory.md
// describes it, and the comments below name the PyTorch function each piece
// follows so the statistics can be checked against it.
#ifndef ANYDEV_INTERNAL_CACHING_ALLOCATOR_H_
#define ANYDEV_INTERNAL_CACHING_ALLOCATOR_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "anydev/backend.h"
#include "anydev/device.h"
#include "anydev/graph.h"
#include "anydev/memory.h"
#include "anydev/stream.h"
#include "internal/fast_mutex.h"

namespace anydev::internal {

// Note [Allocation sizes]: the constants of CUDACachingAllocator.
inline constexpr size_t kMinBlockSize = 512;          // every size is a multiple of this
inline constexpr size_t kSmallSize = size_t{1} << 20;   // largest "small" request: 1 MiB
inline constexpr size_t kSmallBuffer = size_t{2} << 20; // small-pool segments: 2 MiB
inline constexpr size_t kLargeBuffer = size_t{20} << 20;  // segments for 1-10 MiB requests
inline constexpr size_t kMinLargeAlloc = size_t{10} << 20;  // from here, segments fit the request
inline constexpr size_t kRoundLarge = size_t{2} << 20;  // ... rounded up to 2 MiB
// Requests above this are out of memory on any device (and would overflow
// the rounding): 2^60 bytes.
inline constexpr size_t kMaxRequest = size_t{1} << 60;
// Freed blocks up to this size are kept unmerged for reuse by a request of
// the same size on the same stream (Note [Deferred coalescing]).
inline constexpr size_t kMaxDeferredSize = kSmallSize;

// Returns `nbytes` rounded up to a multiple of kMinBlockSize (at least one).
constexpr size_t RoundSize(size_t nbytes) {
  return nbytes < kMinBlockSize ? kMinBlockSize
                                : (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

// Returns the size of the segment allocated for a rounded request `size`.
constexpr size_t AllocationSize(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

class DeviceCachingAllocator {
 public:
  // `device` has an index; `backend` serves it.
  DeviceCachingAllocator(Backend* backend, Device device);
  DeviceCachingAllocator(const DeviceCachingAllocator&) = delete;
  DeviceCachingAllocator& operator=(const DeviceCachingAllocator&) = delete;

  // Allocates `nbytes` (> 0) for use on `stream` (a stream of this device).
  absl::StatusOr<void*> Allocate(size_t nbytes, StreamId stream);
  // Frees a live allocation; InvalidArgument naming the pointer otherwise.
  absl::Status Free(void* ptr);
  // Records that `stream` (any device of the same type) uses the allocation.
  absl::Status RecordStream(void* ptr, const Stream& stream);
  // Releases the cached, wholly free segments to the backend.
  absl::Status EmptyCache();

  // --- graphs (Note [Graph memory]) ---------------------------------------
  // Routes the allocations made on `stream` to the private pool `id` (made on
  // first use) until EndAllocateToPool, and counts one more graph using the
  // pool (c10's beginAllocateToPool).
  void BeginAllocateToPool(MempoolId id, StreamId stream);
  // Allocations on `stream` come from the device's own pools again.
  void EndAllocateToPool(StreamId stream);
  // One graph fewer uses pool `id`; with none left, its free memory is
  // released with the rest of the cache (EmptyCache, out of memory).
  void ReleasePool(MempoolId id);
  // Keeps the live allocation at `ptr` reserved, even once it is freed, until
  // ReleaseGraphUse: a captured graph's work uses it. Returns the handle to
  // give back, or nullptr when there is nothing to keep (`ptr` is not a live
  // allocation, or it belongs to pool `id`, which outlives the graph).
  void* RetainForGraph(void* ptr, MempoolId id);
  // Gives back a RetainForGraph handle. The graph's replays ran on
  // `replay_streams`: memory that was freed meanwhile is reused only once the
  // work they had queued has finished (as if recorded with RecordStream).
  void ReleaseGraphUse(void* handle, const std::vector<Stream>& replay_streams);

  DeviceStats GetStats();
  void ResetPeakStats();
  void ResetAccumulatedStats();

  Device device() const { return device_; }
  // How many per-stream parts the pools keep (tests: PerStreamSet::Prune).
  size_t StreamPartsForTesting();

 private:
  struct StreamBins;
  struct BlockPool;
  struct Block {
    uintptr_t ptr = 0;
    size_t size = 0;
    size_t requested = 0;    // the caller's size while allocated
    StreamId stream = 0;     // the stream it was allocated for / freed by
    BlockPool* pool = nullptr;
    Block* prev = nullptr;   // neighbours in the same segment
    Block* next = nullptr;
    Block* bin_prev = nullptr;  // neighbours in a free list (while in a pool)
    Block* bin_next = nullptr;  // ... and in a deferred stack
    bool allocated = false;
    bool in_pool = false;    // in its pool's coalesced free blocks (`free`)
    bool deferred = false;   // in its pool's `deferred` blocks
    StreamBins* bins = nullptr;  // its stream's bins and its bin, while in a pool
    uint8_t bin_fl = 0;
    uint8_t bin_sl = 0;
    int event_count = 0;     // pending events of recorded streams
    int graph_refs = 0;      // graphs whose captured work uses it (RetainForGraph)
    std::vector<Stream> stream_uses;  // streams recorded with RecordStream
    bool is_split() const { return prev != nullptr || next != nullptr; }
  };
  // Note [Size bins]: the free blocks of one stream in one pool, in
  // two-level segregated-fit bins (TLSF): a size of u 512-byte units goes to
  // first level floor(log2(u)) - 3 (level 0: u < 16) and one of 16 linear
  // second-level bins, with a bitmap of the non-empty ones per level. A best
  // fit is a scan of the request's own bin (exact for sizes under 8 KiB)
  // and then of the first non-empty bin above it, found with two
  // count-trailing-zeros: O(1) where a balanced tree is O(log n), and no
  // memory allocation per insert.
  static constexpr int kFirstLevels = 52;
  static constexpr int kSecondLevels = 16;
  struct StreamBins {
    explicit StreamBins(StreamId s) : stream(s) {}
    const StreamId stream;
    size_t count = 0;
    uint64_t fl_map = 0;
    uint32_t sl_map[kFirstLevels] = {};
    Block* heads[kFirstLevels][kSecondLevels] = {};
  };
  // A set of free blocks kept per stream in a `PerStream` (which has a
  // `stream` and a `count`), remembering the last stream looked up: a pool
  // is mostly used from one stream at a time.
  template <typename PerStream>
  struct PerStreamSet {
    size_t count = 0;  // blocks in the set
    std::vector<std::unique_ptr<PerStream>> streams;
    PerStream* last = nullptr;

    PerStream* Find(StreamId stream) {
      if (last != nullptr && last->stream == stream) return last;
      for (const std::unique_ptr<PerStream>& p : streams) {
        if (p->stream == stream) return last = p.get();
      }
      return nullptr;
    }
    PerStream& FindOrAdd(StreamId stream) {
      if (ABSL_PREDICT_TRUE(last != nullptr && last->stream == stream)) return *last;
      return FindOrAddSlow(stream);
    }
    ABSL_ATTRIBUTE_NOINLINE PerStream& FindOrAddSlow(StreamId stream) {
      if (PerStream* p = Find(stream)) return *p;
      // A program that makes a stream per step must not leave a part per
      // stream behind (memory, and lookups that scan them all).
      if (streams.size() >= kPruneAt) Prune();
      streams.push_back(std::make_unique<PerStream>(stream));
      return *(last = streams.back().get());
    }
    // Drops the parts that hold no block (no block points to one).
    void Prune() {
      auto empty = [](const std::unique_ptr<PerStream>& p) { return p->count == 0; };
      streams.erase(std::remove_if(streams.begin(), streams.end(), empty), streams.end());
      last = nullptr;
    }
    static constexpr size_t kPruneAt = 16;
  };
  // The coalesced free blocks of a pool, binned per stream.
  struct BinSet : PerStreamSet<StreamBins> {
    void Insert(Block* b);
    void Remove(Block* b);
    // The best-fitting block of `bins` for `size` bytes, left in the set.
    static Block* BestFit(const StreamBins& bins, size_t size);
    // Every block of the set.
    std::vector<Block*> All() const;
  };
  // The deferred blocks of one stream (Note [Deferred coalescing]): a LIFO
  // stack per size (in 512-byte units), linked through Block::bin_next.
  static constexpr size_t kDeferredSizes = kMaxDeferredSize / kMinBlockSize;
  struct DeferredStacks {
    explicit DeferredStacks(StreamId s) : stream(s) {}
    const StreamId stream;
    size_t count = 0;
    Block* heads[kDeferredSizes] = {};
  };
  struct DeferredSet : PerStreamSet<DeferredStacks> {
    void Push(Block* b) {
      DeferredStacks& d = FindOrAdd(b->stream);
      Block*& head = d.heads[b->size / kMinBlockSize - 1];
      b->bin_next = head;
      head = b;
      b->deferred = true;
      ++d.count;
      ++count;
    }
    // The last deferred block of `stream` of exactly `size` bytes, removed.
    Block* Pop(size_t size, StreamId stream);
    // Removes and returns every block of the set.
    std::vector<Block*> TakeAll();
  };
  struct PrivatePool;
  struct BlockPool {
    explicit BlockPool(bool small, PrivatePool* private_owner = nullptr)
        : is_small(small), owner(private_owner) {}
    const bool is_small;
    PrivatePool* const owner;  // the graph pool it belongs to; nullptr: the device's own
    BinSet free;           // coalesced free blocks (Block::in_pool)
    DeferredSet deferred;  // freed, not yet coalesced (Block::deferred)
    size_t segments = 0;   // segments obtained from the backend for this pool

    bool empty() const { return free.count == 0 && deferred.count == 0; }
  };
  // A graph memory pool (c10's PrivatePool): what is allocated while a graph
  // captures into it, kept apart from the device's own pools.
  struct PrivatePool {
    explicit PrivatePool(MempoolId pool_id) : id(pool_id) {}
    const MempoolId id;
    int use_count = 0;  // graphs that use it; at 0 its free memory can be released
    BlockPool small{true, this};
    BlockPool large{false, this};
  };
  struct PendingFree {
    Event event;
    Block* block;
  };

  // Allocate and Free past their fast paths (Note [Fast pair]).
  ABSL_ATTRIBUTE_NOINLINE absl::StatusOr<void*> AllocateSlow(size_t nbytes, StreamId stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ABSL_ATTRIBUTE_NOINLINE absl::Status FreeSlow(uintptr_t p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static constexpr size_t kSmallIndex = static_cast<size_t>(StatType::kSmallPool);
  static_assert(kMaxDeferredSize == kSmallSize, "the fast pair's blocks are the small pool's");

  // The allocated block that starts at `p`, or nullptr (Note [Block lookup]).
  Block* FindAllocated(uintptr_t p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static size_t LookupSlot(uintptr_t p) { return ((p >> 9) ^ (p >> 18)) % kLookupSlots; }
  Block* NewBlock() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteBlock(Block* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The pool a rounded request of `size` bytes on `stream` comes from: the
  // device's own, or a private pool while `stream` captures into one.
  BlockPool& PoolFor(size_t size, StreamId stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (ABSL_PREDICT_FALSE(!to_private_.empty())) {
      for (const auto& [s, p] : to_private_) {
        if (s == stream) return size <= kSmallSize ? p->small : p->large;
      }
    }
    return size <= kSmallSize ? small_ : large_;
  }
  PrivatePool* FindPrivatePool(MempoolId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The pools ReleaseCachedBlocks may return memory from: the device's own
  // and the private pools no graph uses.
  std::vector<BlockPool*> ReleasablePools() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Bytes of the blocks that releasing the cache could turn into free device
  // memory (free, deferred and pending blocks of the releasable pools).
  size_t ReleasableBytes() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The best-fitting free block of `stream`, removed from the pool.
  Block* TakeFreeBlock(BlockPool& pool, size_t size, StreamId stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The best-fitting free block of another stream whose queued work has all
  // finished, removed from the pool and given to `stream`.
  Block* TakeIdleStreamBlock(BlockPool& pool, size_t size, StreamId stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A block for a rounded request of `size` bytes, removed from the pool: the
  // stream's own (after merging the deferred blocks if need be), an idle
  // stream's, or a new segment of `alloc_size`. nullptr when the backend is
  // out of memory, with its error in `*exhausted`; other errors are returned.
  absl::StatusOr<Block*> FindOrAllocBlock(BlockPool& pool, size_t size, size_t alloc_size,
                                          StreamId stream, absl::Status* exhausted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A new segment of `alloc_size` bytes from the backend, or its error
  // (ResourceExhausted when the device is full).
  absl::StatusOr<Block*> AllocSegment(BlockPool& pool, size_t alloc_size, StreamId stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands `block` out for a request of `size` (rounded) / `requested` bytes,
  // splitting off the rest when it is worth it (alloc_found_block).
  Block* AllocFoundBlock(Block* block, size_t size, size_t requested)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands out a deferred block of exactly the request's size.
  Block* AllocDeferredBlock(Block* block, size_t requested) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a block that becomes active for `requested` bytes.
  void CountActive(const Block& block, size_t requested) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a block that stops being active.
  void CountInactive(const Block& block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns an inactive block to its pool, merging free neighbours (free_block).
  void FreeBlock(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FreeBlock, unless events or graphs still hold the freed block.
  void FreeBlockIfUnheld(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (block->event_count == 0 && block->graph_refs == 0) FreeBlock(block);
  }
  // Puts a freed block in its pool's deferred set, unmerged.
  void DeferBlock(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Inserts a free block into its pool's coalesced set, merging it with free
  // neighbours of its stream and counting the inactive splits that result.
  // `counted`: the block is already counted as an inactive split if it is one.
  void InsertCoalesced(Block* block, bool counted) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves every deferred block of `pool` to its coalesced set.
  void CoalesceDeferred(BlockPool& pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Merges `src` into `dst` if it is free and, unless `any_stream`, of the
  // same stream; returns the bytes merged (try_merge_blocks).
  size_t TryMerge(Block* dst, Block* src, BlockPool& pool, bool any_stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records an event on each recorded stream of a freed block (insert_events).
  void InsertEvents(Block* block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns blocks whose events have all completed to their pools.
  void ProcessEvents() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for the device and every pending event, coalesces all free
  // neighbours (streams no longer matter), and returns every wholly free
  // segment to the backend (release_cached_blocks).
  absl::Status ReleaseCachedBlocks() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The statistics entry of a pool (Note [Aggregate statistics]).
  static size_t PoolIndex(const BlockPool& pool) {
    return static_cast<size_t>(pool.is_small ? StatType::kSmallPool : StatType::kLargePool);
  }
  absl::Status OutOfMemory(size_t requested, size_t alloc_size, const absl::Status& cause)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Backend* const backend_;
  const Device device_;
  // Not absl::Mutex: its deadlock detection (on in the distribution's Abseil)
  // costs more than the rest of an allocation (Note [FastMutex]).
  FastMutex mu_;
  BlockPool small_ ABSL_GUARDED_BY(mu_){true};
  BlockPool large_ ABSL_GUARDED_BY(mu_){false};
  // The allocated blocks and the deferred ones (Block::allocated tells them
  // apart), by address: a deferred block keeps its entry for its reuse.
  absl::flat_hash_map<uintptr_t, Block*> active_ ABSL_GUARDED_BY(mu_);
  // Recently allocated blocks, by a hash of their address (Note [Block lookup]).
  static constexpr size_t kLookupSlots = 256;
  Block* recent_[kLookupSlots] ABSL_GUARDED_BY(mu_) = {};
  std::vector<PendingFree> pending_ ABSL_GUARDED_BY(mu_);
  // Graph memory pools, and the streams that allocate to one (capturing).
  std::vector<std::unique_ptr<PrivatePool>> private_pools_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<StreamId, PrivatePool*>> to_private_ ABSL_GUARDED_BY(mu_);
  std::vector<Block*> spare_blocks_ ABSL_GUARDED_BY(mu_);
  DeviceStats stats_ ABSL_GUARDED_BY(mu_);
};

// Returns the allocator of `device` (type and index checked), creating it on
// first use. Allocators are never destroyed (buffers may be freed during
// static destruction).
absl::StatusOr<DeviceCachingAllocator*> GetCachingAllocator(Device device);
// The allocators, by dense device type and index (created on first use).
extern std::atomic<DeviceCachingAllocator*> g_allocators[kNumDeviceTypes][kMaxDevicesPerType];

// Returns the allocator of `device` if it has been created, else nullptr.
// Inline: RawAlloc and RawDelete call it on every allocation.
inline DeviceCachingAllocator* FindCachingAllocator(Device device) {
  const unsigned index = static_cast<unsigned>(device.index());
  if (index >= static_cast<unsigned>(kMaxDevicesPerType)) return nullptr;
  return g_allocators[DenseIndex(device.type())][index].load(std::memory_order_acquire);
}
// Drops (leaks) every allocator of `type`: in a forked child that cannot use
// the backend (Note [Fork] in registry.cc), nothing may reach it through them.
void ForgetCachingAllocatorsAfterFork(DeviceType type);

}  // namespace anydev::internal

#endif  // ANYDEV_INTERNAL_CACHING_ALLOCATOR_H_
