// The caching allocator of one device, over anydev::Backend. See
// internal/caching_allocator.h and docs/memory.md.
//
// Note [Stream-ordered reuse]: a block carries the stream it was allocated
// for. Freed, it goes back to its pool tagged with that stream; a later
// request on the same stream may take it at once, because the stream runs the
// new user's work after everything queued before the free. A request on
// another stream T takes it only when the block's stream reports that all of
// its queued work has finished (Backend::QueryStream), which is then true of
// the work queued before the free as well; the block is re-tagged with T.
// This costs nothing on the free path (no event per free, unlike
// cudaMallocAsync); the price is that a block of a stream that never goes
// idle is not lent to other streams until the out-of-memory path waits for
// the device. Streams that used a block without owning it (RecordStream) get
// an event at the free, and the block stays out of the pool until those
// events complete (PyTorch's insert_events/process_events).
//
// Note [Deferred coalescing]: a pair of allocate and free of one size on one
// stream is the common case (a training step allocates the same shapes each
// iteration). Merging the freed block with its free neighbours and splitting
// it off again at the next request would cost most of such a pair, so a
// freed block of at most kMaxDeferredSize bytes goes, unmerged, to its pool's
// `deferred` set (as dlmalloc's fast bins), keeping its entry in `active_`;
// a request of exactly its size on its stream takes it back with no split,
// no merge and no map update. Deferred blocks are merged (CoalesceDeferred)
// before the allocator would otherwise take a block from another stream or a
// new segment from the backend, and before the cache is released, so they
// never make the allocator reserve more memory. The statistics count what
// is: a deferred block of a split segment is an inactive split block until
// it is reused or merged.
//
// Note [Block lookup]: a free finds its block in `recent_`, a direct-mapped
// cache of the blocks allocated last, before it hashes into `active_`. A slot
// may hold a stale block: Block objects are recycled (spare_blocks_), never
// deleted, so reading one is safe, and a block that is allocated and starts
// at the pointer is the live allocation there, whatever the slot's history.
// Anything else falls back to `active_`, which is always complete.
//
// Note [Segments are returned after a device wait]: Backend::Free releases
// memory at once, unlike cudaFree, which waits for the device. A cached block
// may still be the target of queued work (a copy into a buffer freed while it
// ran), so segments are only returned after SynchronizeDevice
// (num_sync_all_streams counts these waits).
//
// Note [Graph memory]: work captured into a graph (anydev::Graph) runs at
// every replay, long after the calls that queued it returned, so the memory
// it touches must stay where it is for the graph's life. Two mechanisms, as
// PyTorch's CUDA graphs have the first:
//   * A private pool per capture (c10's PrivatePool, beginAllocateToPool):
//     while a stream captures, its allocations come from the pool of the
//     graph's pool id, and go back to it when freed, so they serve only later
//     captures into the same pool (graphs that share a pool are replayed in
//     the order they were captured, PyTorch's rule). The pool counts the
//     graphs that use it; when none is left, its free segments are returned
//     with the rest of the cache by the next EmptyCache or out-of-memory
//     retry, after the device wait every release makes.
//   * References for memory from outside the pool: a buffer allocated before
//     the capture and used by captured work is retained by the graph
//     (RetainForGraph); freed, it stays reserved (and active in the
//     statistics, as a block waiting for events does) until the graph lets
//     go, and then waits for the work its replays queued (ReleaseGraphUse
//     records their streams as RecordStream does). PyTorch leaves this to the
//     user ("keep static inputs alive"); a replay into freed memory would
//     write into whatever reuses it, or into memory returned to the backend.
//
// Note [Out of memory without a wait]: releasing the cache waits for the
// whole device (Note [Segments are returned after a device wait]), so an
// allocation that fails only does so when the release can help: some cached
// memory could come free, and it with the device's free memory could hold
// the request. Otherwise the error is immediate, not held until every other
// stream's work has finished. And where the device has no room for the
// segment a request would get (the small pool's 2 MiB, the large pool's
// 20 MiB) but has room for the request, the request gets a segment of its
// own size: a device smaller than a segment, or a nearly full one, still
// serves what fits, and one pool does not take the memory another needs.
#include "internal/caching_allocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <string>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "anydev/runtime.h"
#include "internal/errors.h"

namespace anydev::internal {
namespace {

// Note [Aggregate statistics]: the hot paths update the entry of the block's
// pool (small_pool or large_pool) and the aggregate ("all") entry's current
// and peak; the aggregate's allocated and freed are the sums of the two
// pools', filled in by GetStats. New values are computed in registers: the
// allocator's fast path is mostly these updates.
inline void Increase(StatArray& a, size_t pool, int64_t amount) {
  Stat& s = a[pool];
  const int64_t current = s.current + amount;
  s.current = current;
  s.allocated += amount;
  if (current > s.peak) s.peak = current;
  Stat& all = a[0];
  const int64_t all_current = all.current + amount;
  all.current = all_current;
  if (all_current > all.peak) all.peak = all_current;
}

inline void Decrease(StatArray& a, size_t pool, int64_t amount) {
  a[pool].current -= amount;
  a[pool].freed += amount;
  a[0].current -= amount;
}

inline int64_t AllCurrent(const StatArray& a) { return a[0].current; }

void ResetPeak(StatArray& a) {
  for (Stat& s : a) s.peak = s.current;
}

void ResetAccumulated(StatArray& a) {
  for (Stat& s : a) {
    s.allocated = 0;
    s.freed = 0;
  }
}

std::string Ptr(uintptr_t p) { return absl::StrFormat("%#x", p); }

// As PyTorch's format_size (c10/cuda/CUDACachingAllocator.cpp).
std::string FormatSize(uint64_t size) {
  if (size <= 1024) return absl::StrCat(size, " bytes");
  if (size <= 1048576) return absl::StrFormat("%.2f KiB", static_cast<double>(size) / 1024.0);
  if (size <= 1073741824ULL) {
    return absl::StrFormat("%.2f MiB", static_cast<double>(size) / 1048576.0);
  }
  return absl::StrFormat("%.2f GiB", static_cast<double>(size) / 1073741824.0);
}

template <typename F>
void ForEachStatArray(DeviceStats& s, F f) {
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split,
                       &s.allocated_bytes, &s.reserved_bytes, &s.active_bytes,
                       &s.inactive_split_bytes, &s.requested_bytes}) {
    f(*a);
  }
}

}  // namespace

DeviceCachingAllocator::DeviceCachingAllocator(Backend* backend, Device device)
    : backend_(backend), device_(device) {
  active_.reserve(1024);
}

// --- size bins (Note [Size bins]) ------------------------------------------------

namespace {
// The bin of a block of `size` bytes (a multiple of 512).
inline void BinOf(size_t size, int* fl, int* sl) {
  const uint64_t u = size >> 9;
  if (u < 16) {
    *fl = 0;
    *sl = static_cast<int>(u);
    return;
  }
  const int msb = 63 - __builtin_clzll(u);
  *fl = msb - 3;
  *sl = static_cast<int>((u >> (msb - 4)) & 15);
}
}  // namespace

void DeviceCachingAllocator::BinSet::Insert(Block* b) {
  StreamBins* bins = &FindOrAdd(b->stream);
  int fl, sl;
  BinOf(b->size, &fl, &sl);
  b->bin_fl = static_cast<uint8_t>(fl);
  b->bin_sl = static_cast<uint8_t>(sl);
  Block*& head = bins->heads[fl][sl];
  b->bin_prev = nullptr;
  b->bin_next = head;
  if (head != nullptr) head->bin_prev = b;
  head = b;
  bins->sl_map[fl] |= 1u << sl;
  bins->fl_map |= uint64_t{1} << fl;
  ++bins->count;
  ++count;
  b->in_pool = true;
  b->bins = bins;
}

void DeviceCachingAllocator::BinSet::Remove(Block* b) {
  StreamBins* bins = b->bins;
  const int fl = b->bin_fl;
  const int sl = b->bin_sl;
  if (b->bin_prev != nullptr) {
    b->bin_prev->bin_next = b->bin_next;
  } else {
    bins->heads[fl][sl] = b->bin_next;
  }
  if (b->bin_next != nullptr) b->bin_next->bin_prev = b->bin_prev;
  if (bins->heads[fl][sl] == nullptr) {
    bins->sl_map[fl] &= ~(1u << sl);
    if (bins->sl_map[fl] == 0) bins->fl_map &= ~(uint64_t{1} << fl);
  }
  b->bin_prev = nullptr;
  b->bin_next = nullptr;
  --bins->count;
  --count;
  b->in_pool = false;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::BinSet::BestFit(const StreamBins& bins,
                                                                       size_t size) {
  int fl, sl;
  BinOf(size, &fl, &sl);
  // The request's own bin may hold blocks smaller than the request. Among
  // equal sizes the most recently freed wins (it is at the head).
  Block* best = nullptr;
  for (Block* x = bins.heads[fl][sl]; x != nullptr; x = x->bin_next) {
    if (x->size >= size && (best == nullptr || x->size < best->size)) {
      best = x;
      if (x->size == size) return best;
    }
  }
  if (best != nullptr) return best;
  // Every block of a higher bin fits; the first non-empty one has the best.
  uint32_t sl_map = bins.sl_map[fl] & (~0u << (sl + 1));
  if (sl_map == 0) {
    const uint64_t fl_map = bins.fl_map & (~uint64_t{0} << (fl + 1));
    if (fl_map == 0) return nullptr;
    fl = __builtin_ctzll(fl_map);
    sl_map = bins.sl_map[fl];
  }
  sl = __builtin_ctz(sl_map);
  for (Block* x = bins.heads[fl][sl]; x != nullptr; x = x->bin_next) {
    if (best == nullptr || x->size < best->size) best = x;
  }
  return best;
}

std::vector<DeviceCachingAllocator::Block*> DeviceCachingAllocator::BinSet::All() const {
  std::vector<Block*> out;
  out.reserve(count);
  for (const std::unique_ptr<StreamBins>& bins : streams) {
    for (uint64_t fl_map = bins->fl_map; fl_map != 0; fl_map &= fl_map - 1) {
      const int fl = __builtin_ctzll(fl_map);
      for (uint32_t sl_map = bins->sl_map[fl]; sl_map != 0; sl_map &= sl_map - 1) {
        for (Block* x = bins->heads[fl][__builtin_ctz(sl_map)]; x != nullptr; x = x->bin_next) {
          out.push_back(x);
        }
      }
    }
  }
  return out;
}

// --- deferred blocks (Note [Deferred coalescing]) ---------------------------------

DeviceCachingAllocator::Block* DeviceCachingAllocator::DeferredSet::Pop(size_t size,
                                                                        StreamId stream) {
  DeferredStacks* d = Find(stream);
  if (d == nullptr || d->count == 0) return nullptr;
  Block*& head = d->heads[size / kMinBlockSize - 1];
  Block* b = head;
  if (b == nullptr) return nullptr;
  head = b->bin_next;
  b->bin_next = nullptr;
  b->deferred = false;
  --d->count;
  --count;
  return b;
}

std::vector<DeviceCachingAllocator::Block*> DeviceCachingAllocator::DeferredSet::TakeAll() {
  std::vector<Block*> out;
  out.reserve(count);
  for (const std::unique_ptr<DeferredStacks>& d : streams) {
    for (size_t i = 0; d->count != 0 && i < kDeferredSizes; ++i) {
      for (Block* b = d->heads[i]; b != nullptr;) {
        Block* next = b->bin_next;
        b->bin_next = nullptr;
        b->deferred = false;
        out.push_back(b);
        --d->count;
        b = next;
      }
      d->heads[i] = nullptr;
    }
  }
  count = 0;
  Prune();  // every part is empty now
  return out;
}

// --- blocks ------------------------------------------------------------------------

DeviceCachingAllocator::Block* DeviceCachingAllocator::FindAllocated(uintptr_t p) {
  Block* b = recent_[LookupSlot(p)];
  if (b != nullptr && b->ptr == p && b->allocated) return b;
  auto it = active_.find(p);
  if (it == active_.end() || !it->second->allocated) return nullptr;
  return it->second;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::NewBlock() {
  if (spare_blocks_.empty()) return new Block();
  Block* b = spare_blocks_.back();
  spare_blocks_.pop_back();
  return b;
}

void DeviceCachingAllocator::DeleteBlock(Block* b) {
  // Only what a reused block relies on: NewBlock's callers set the rest.
  b->requested = 0;
  b->prev = nullptr;
  b->next = nullptr;
  b->allocated = false;
  b->event_count = 0;
  b->graph_refs = 0;
  spare_blocks_.push_back(b);
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::TakeFreeBlock(BlockPool& pool, size_t size,
                                                                     StreamId stream) {
  StreamBins* bins = pool.free.Find(stream);
  if (bins == nullptr || bins->count == 0) return nullptr;
  Block* b = BinSet::BestFit(*bins, size);
  if (b != nullptr) pool.free.Remove(b);
  return b;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::TakeIdleStreamBlock(BlockPool& pool,
                                                                           size_t size,
                                                                           StreamId stream) {
  Block* best = nullptr;
  for (const std::unique_ptr<StreamBins>& bins : pool.free.streams) {
    if (bins->stream == stream || bins->count == 0) continue;
    Block* b = BinSet::BestFit(*bins, size);
    if (b == nullptr || (best != nullptr && b->size >= best->size)) continue;
    absl::StatusOr<bool> idle = backend_->QueryStream(device_.index(), bins->stream);
    if (idle.ok() && *idle) best = b;
  }
  if (best == nullptr) return nullptr;
  pool.free.Remove(best);
  best->stream = stream;
  return best;
}

absl::StatusOr<DeviceCachingAllocator::Block*> DeviceCachingAllocator::AllocSegment(
    BlockPool& pool, size_t alloc_size, StreamId stream) {
  absl::StatusOr<void*> p = backend_->Allocate(device_.index(), alloc_size);
  if (!p.ok()) return p.status();
  ++stats_.num_device_alloc;
  ++pool.segments;
  Block* b = NewBlock();
  b->ptr = reinterpret_cast<uintptr_t>(*p);
  b->size = alloc_size;
  b->stream = stream;
  b->pool = &pool;
  const size_t t = PoolIndex(pool);
  Increase(stats_.segment, t, 1);
  Increase(stats_.reserved_bytes, t, static_cast<int64_t>(alloc_size));
  return b;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::AllocFoundBlock(Block* block, size_t size,
                                                                       size_t requested) {
  BlockPool& pool = *block->pool;
  const size_t t = PoolIndex(pool);
  const bool already_split = block->is_split();
  const size_t remaining = block->size - size;
  // should_split: the small pool splits off any whole block; the large pool
  // only a remainder of more than 1 MiB (a smaller one stays with the
  // allocation and counts as allocated).
  const bool split = pool.is_small ? remaining >= kMinBlockSize : remaining > kSmallSize;
  if (split) {
    Block* rest = NewBlock();
    rest->ptr = block->ptr + size;
    rest->size = remaining;
    rest->stream = block->stream;
    rest->pool = &pool;
    rest->prev = block;
    rest->next = block->next;
    if (rest->next != nullptr) rest->next->prev = rest;
    block->next = rest;
    block->size = size;
    pool.free.Insert(rest);
    if (already_split) {
      // An inactive split block shrinks by `size` bytes.
      Decrease(stats_.inactive_split_bytes, t, static_cast<int64_t>(size));
    } else {
      // A whole segment becomes split: its remainder is a new inactive split block.
      Increase(stats_.inactive_split_bytes, t, static_cast<int64_t>(remaining));
      Increase(stats_.inactive_split, t, 1);
    }
  } else if (already_split) {
    // An inactive split block becomes active whole.
    Decrease(stats_.inactive_split_bytes, t, static_cast<int64_t>(block->size));
    Decrease(stats_.inactive_split, t, 1);
  }
  CountActive(*block, requested);
  block->allocated = true;
  block->requested = requested;
  active_.emplace(block->ptr, block);
  recent_[LookupSlot(block->ptr)] = block;
  return block;
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::AllocDeferredBlock(Block* block,
                                                                          size_t requested) {
  if (block->is_split()) {
    const size_t t = PoolIndex(*block->pool);
    Decrease(stats_.inactive_split_bytes, t, static_cast<int64_t>(block->size));
    Decrease(stats_.inactive_split, t, 1);
  }
  CountActive(*block, requested);
  block->allocated = true;
  block->requested = requested;
  recent_[LookupSlot(block->ptr)] = block;
  return block;  // still in active_ (Note [Deferred coalescing])
}

void DeviceCachingAllocator::CountActive(const Block& block, size_t requested) {
  const size_t t = PoolIndex(*block.pool);
  Increase(stats_.allocation, t, 1);
  Increase(stats_.allocated_bytes, t, static_cast<int64_t>(block.size));
  Increase(stats_.active, t, 1);
  Increase(stats_.active_bytes, t, static_cast<int64_t>(block.size));
  Increase(stats_.requested_bytes, t, static_cast<int64_t>(requested));
}

void DeviceCachingAllocator::CountInactive(const Block& block) {
  const size_t t = PoolIndex(*block.pool);
  Decrease(stats_.active, t, 1);
  Decrease(stats_.active_bytes, t, static_cast<int64_t>(block.size));
  Decrease(stats_.requested_bytes, t, static_cast<int64_t>(block.requested));
}

size_t DeviceCachingAllocator::TryMerge(Block* dst, Block* src, BlockPool& pool, bool any_stream) {
  // Not merged: in use, waiting for events, or deferred (merged in its turn).
  if (src == nullptr || !src->in_pool) return 0;
  if (!any_stream && src->stream != dst->stream) return 0;
  pool.free.Remove(src);
  if (dst->prev == src) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev != nullptr) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next != nullptr) dst->next->prev = dst;
  }
  const size_t subsumed = src->size;
  dst->size += subsumed;
  DeleteBlock(src);
  return subsumed;
}

void DeviceCachingAllocator::FreeBlock(Block* block) {
  CountInactive(*block);
  block->requested = 0;
  InsertCoalesced(block, /*counted=*/false);
}

void DeviceCachingAllocator::DeferBlock(Block* block) {
  CountInactive(*block);
  block->requested = 0;
  block->pool->deferred.Push(block);
  if (block->is_split()) {
    const size_t t = PoolIndex(*block->pool);
    Increase(stats_.inactive_split, t, 1);
    Increase(stats_.inactive_split_bytes, t, static_cast<int64_t>(block->size));
  }
}

void DeviceCachingAllocator::InsertCoalesced(Block* block, bool counted) {
  BlockPool& pool = *block->pool;
  // The change in inactive split blocks and bytes: minus the block as it was
  // counted and minus each neighbour it absorbs, plus the block it becomes.
  int64_t net_blocks = 0;
  int64_t net_bytes = 0;
  if (counted && block->is_split()) {
    net_blocks -= 1;
    net_bytes -= static_cast<int64_t>(block->size);
  }
  const std::array<Block*, 2> candidates = {block->prev, block->next};
  for (Block* c : candidates) {
    const size_t subsumed = TryMerge(block, c, pool, /*any_stream=*/false);
    if (subsumed > 0) {
      net_blocks -= 1;
      net_bytes -= static_cast<int64_t>(subsumed);
    }
  }
  pool.free.Insert(block);
  if (block->is_split()) {
    net_blocks += 1;
    net_bytes += static_cast<int64_t>(block->size);
  }
  const size_t t = PoolIndex(pool);
  if (net_blocks > 0) Increase(stats_.inactive_split, t, net_blocks);
  if (net_blocks < 0) Decrease(stats_.inactive_split, t, -net_blocks);
  if (net_bytes > 0) Increase(stats_.inactive_split_bytes, t, net_bytes);
  if (net_bytes < 0) Decrease(stats_.inactive_split_bytes, t, -net_bytes);
}

void DeviceCachingAllocator::CoalesceDeferred(BlockPool& pool) {
  for (Block* b : pool.deferred.TakeAll()) {
    active_.erase(b->ptr);
    InsertCoalesced(b, /*counted=*/true);
  }
}

void DeviceCachingAllocator::InsertEvents(Block* block) {
  for (const Stream& s : block->stream_uses) {
    Event event(Device(s.device_type()));
    if (!event.Record(s).ok()) {
      // Cannot happen for a stream that was valid when recorded; if it does,
      // wait for the stream here rather than risk reuse under its work.
      s.Synchronize().IgnoreError();
      continue;
    }
    ++block->event_count;
    pending_.push_back(PendingFree{std::move(event), block});
  }
  block->stream_uses.clear();
  FreeBlockIfUnheld(block);
}

void DeviceCachingAllocator::ProcessEvents() {
  for (size_t i = 0; i < pending_.size();) {
    absl::StatusOr<bool> done = pending_[i].event.Query();
    if (done.ok() && !*done) {
      ++i;
      continue;
    }
    if (!done.ok()) pending_[i].event.Synchronize().IgnoreError();
    Block* b = pending_[i].block;
    if (i + 1 != pending_.size()) pending_[i] = std::move(pending_.back());
    pending_.pop_back();
    if (--b->event_count == 0) FreeBlockIfUnheld(b);
  }
}

absl::Status DeviceCachingAllocator::ReleaseCachedBlocks() {
  // Wait for the recorded streams' events (they may be on other devices),
  // then for this device (Note [Segments are returned after a device wait]).
  std::vector<PendingFree> pending = std::move(pending_);
  pending_.clear();
  for (PendingFree& p : pending) {
    p.event.Synchronize().IgnoreError();
    if (--p.block->event_count == 0) FreeBlockIfUnheld(p.block);
  }
  pending.clear();
  CoalesceDeferred(small_);
  CoalesceDeferred(large_);
  for (const std::unique_ptr<PrivatePool>& p : private_pools_) {
    CoalesceDeferred(p->small);
    CoalesceDeferred(p->large);
  }
  ++stats_.num_sync_all_streams;
  ANYDEV_RETURN_IF_ERROR(backend_->SynchronizeDevice(device_.index()));

  // Every stream is idle now, so free neighbours merge whatever their streams.
  const std::vector<BlockPool*> releasable = ReleasablePools();
  for (BlockPool* pool : releasable) {
    auto is_free = [](const Block* b) { return b != nullptr && b->in_pool; };
    std::vector<Block*> heads;
    for (Block* b : pool->free.All()) {
      if (is_free(b->next) && !is_free(b->prev)) heads.push_back(b);
    }
    for (Block* head : heads) {
      pool->free.Remove(head);
      int64_t blocks_before = 1;
      int64_t bytes_before = static_cast<int64_t>(head->size);
      while (is_free(head->next)) {
        ++blocks_before;
        bytes_before += static_cast<int64_t>(head->next->size);
        TryMerge(head, head->next, *pool, /*any_stream=*/true);
      }
      pool->free.Insert(head);
      const int64_t blocks_after = head->is_split() ? 1 : 0;
      const int64_t bytes_after = head->is_split() ? static_cast<int64_t>(head->size) : 0;
      Decrease(stats_.inactive_split, PoolIndex(*pool), blocks_before - blocks_after);
      Decrease(stats_.inactive_split_bytes, PoolIndex(*pool), bytes_before - bytes_after);
    }
  }
  absl::Status status;
  for (BlockPool* pool : releasable) {
    for (Block* b : pool->free.All()) {
      if (b->is_split()) continue;
      absl::Status freed = backend_->Free(device_.index(), reinterpret_cast<void*>(b->ptr));
      if (!freed.ok()) {
        if (status.ok()) status = freed;
        continue;
      }
      ++stats_.num_device_free;
      --pool->segments;
      Decrease(stats_.segment, PoolIndex(*pool), 1);
      Decrease(stats_.reserved_bytes, PoolIndex(*pool), static_cast<int64_t>(b->size));
      pool->free.Remove(b);
      DeleteBlock(b);
    }
    pool->free.Prune();
  }
  // A private pool no graph uses, with nothing left in it, is gone.
  private_pools_.erase(
      std::remove_if(private_pools_.begin(), private_pools_.end(),
                     [](const std::unique_ptr<PrivatePool>& p) {
                       return p->use_count == 0 && p->small.segments == 0 &&
                              p->large.segments == 0;
                     }),
      private_pools_.end());
  return status;
}

std::vector<DeviceCachingAllocator::BlockPool*> DeviceCachingAllocator::ReleasablePools() {
  std::vector<BlockPool*> out = {&large_, &small_};
  for (const std::unique_ptr<PrivatePool>& p : private_pools_) {
    if (p->use_count != 0) continue;
    out.push_back(&p->large);
    out.push_back(&p->small);
  }
  return out;
}

size_t DeviceCachingAllocator::ReleasableBytes() {
  size_t bytes = 0;
  for (BlockPool* pool : ReleasablePools()) {
    for (const Block* b : pool->free.All()) bytes += b->size;
    for (const std::unique_ptr<DeferredStacks>& d : pool->deferred.streams) {
      for (size_t i = 0; d->count != 0 && i < kDeferredSizes; ++i) {
        for (const Block* b = d->heads[i]; b != nullptr; b = b->bin_next) bytes += b->size;
      }
    }
  }
  for (const PendingFree& p : pending_) {
    if (p.block->graph_refs == 0) bytes += p.block->size;  // counted once per event: an upper bound
  }
  return bytes;
}

absl::Status DeviceCachingAllocator::OutOfMemory(size_t requested, size_t alloc_size,
                                                 const absl::Status& cause) {
  ++stats_.num_ooms;
  size_t free = 0;
  size_t total = 0;
  if (absl::StatusOr<std::pair<size_t, size_t>> info = backend_->MemoryInfo(device_.index());
      info.ok()) {
    std::tie(free, total) = *info;
  }
  const uint64_t allocated = static_cast<uint64_t>(AllCurrent(stats_.allocated_bytes));
  const uint64_t reserved = static_cast<uint64_t>(AllCurrent(stats_.reserved_bytes));
  const std::string where =
      device_.is_cpu() ? absl::StrCat("The CPU (", device_.ToString(), ")")
                       : absl::StrCat("GPU ", device_.index(), " (", device_.ToString(), ")");
  return absl::ResourceExhaustedError(absl::StrCat(
      absl::AsciiStrToUpper(DeviceTypeName(device_.type())), " out of memory. Tried to allocate ",
      FormatSize(requested), ". ", where, " has a total capacity of ", FormatSize(total),
      " of which ", FormatSize(free), " is free. Of the allocated memory ", FormatSize(allocated),
      " is allocated by anydev, and ", FormatSize(reserved - allocated),
      " is reserved by anydev but unallocated. (requested ", requested, " bytes, segment ",
      alloc_size, " bytes; allocated ", allocated, ", reserved ", reserved, ", free ", free,
      ", total ", total, " bytes",
      cause.ok() ? std::string() : absl::StrCat("; ", cause.message()), ")"));
}

absl::StatusOr<DeviceCachingAllocator::Block*> DeviceCachingAllocator::FindOrAllocBlock(
    BlockPool& pool, size_t size, size_t alloc_size, StreamId stream, absl::Status* exhausted) {
  Block* block = TakeFreeBlock(pool, size, stream);
  if (block == nullptr && pool.deferred.count != 0) {
    // Merging the deferred blocks costs less than asking other streams
    // whether they are idle, and keeps blocks with their stream.
    CoalesceDeferred(pool);
    block = TakeFreeBlock(pool, size, stream);
  }
  if (block == nullptr) block = TakeIdleStreamBlock(pool, size, stream);
  if (block != nullptr) return block;
  absl::StatusOr<Block*> seg = AllocSegment(pool, alloc_size, stream);
  if (seg.ok() || seg.status().code() != absl::StatusCode::kResourceExhausted) return seg;
  *exhausted = seg.status();
  if (size < alloc_size) {
    // A segment of just the request, when the device has room for that but
    // not for a whole segment (Note [Out of memory without a wait]).
    absl::StatusOr<std::pair<size_t, size_t>> info = backend_->MemoryInfo(device_.index());
    if (info.ok() && info->first >= size) {
      seg = AllocSegment(pool, size, stream);
      if (seg.ok() || seg.status().code() != absl::StatusCode::kResourceExhausted) return seg;
    }
  }
  return nullptr;
}

// Note [Fast pair]: the common allocate+free pair, a request of at most
// kMaxDeferredSize bytes that a deferred block of its stream serves (Note
// [Deferred coalescing]) and its free, is written apart from everything
// else: the slow paths, out of line, cost the fast one nothing (no saved
// registers, no stack frame), and what it touches is read once. Every
// statistic is updated as on any other path.
absl::StatusOr<void*> DeviceCachingAllocator::Allocate(size_t nbytes, StreamId stream) {
  FastMutexLock lock(mu_);
  if (ABSL_PREDICT_TRUE(nbytes - 1 < kMaxDeferredSize && pending_.empty() &&
                        to_private_.empty())) {
    const size_t size = RoundSize(nbytes);
    BlockPool& pool = small_;  // kMaxDeferredSize == kSmallSize
    if (pool.deferred.count != 0) {
      if (Block* b = pool.deferred.Pop(size, stream)) {
        return reinterpret_cast<void*>(AllocDeferredBlock(b, nbytes)->ptr);
      }
    }
  }
  return AllocateSlow(nbytes, stream);
}

absl::StatusOr<void*> DeviceCachingAllocator::AllocateSlow(size_t nbytes, StreamId stream) {
  if (nbytes > kMaxRequest) {
    return OutOfMemory(nbytes, nbytes, absl::ResourceExhaustedError("larger than any device"));
  }
  const size_t size = RoundSize(nbytes);
  if (!pending_.empty()) ProcessEvents();
  BlockPool& pool = PoolFor(size, stream);
  if (size <= kMaxDeferredSize && pool.deferred.count != 0) {
    if (Block* b = pool.deferred.Pop(size, stream)) {
      return reinterpret_cast<void*>(AllocDeferredBlock(b, nbytes)->ptr);
    }
  }
  const size_t alloc_size = AllocationSize(size);

  absl::Status cause;
  ANYDEV_ASSIGN_OR_RETURN(Block * block, FindOrAllocBlock(pool, size, alloc_size, stream, &cause));
  if (block == nullptr) {
    // Free the cache and retry once, when that can help (Note [Out of memory
    // without a wait]): something is cached, and it with the device's free
    // memory could hold the request.
    absl::StatusOr<std::pair<size_t, size_t>> info = backend_->MemoryInfo(device_.index());
    const size_t releasable = ReleasableBytes();
    if (!info.ok() || (releasable != 0 && size <= info->second &&
                       releasable + info->first >= size)) {
      ++stats_.num_alloc_retries;
      ANYDEV_RETURN_IF_ERROR(ReleaseCachedBlocks());
      ANYDEV_ASSIGN_OR_RETURN(block, FindOrAllocBlock(pool, size, alloc_size, stream, &cause));
    }
  }
  if (block == nullptr) return OutOfMemory(nbytes, alloc_size, cause);
  return reinterpret_cast<void*>(AllocFoundBlock(block, size, nbytes)->ptr);
}

absl::Status DeviceCachingAllocator::Free(void* ptr) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  FastMutexLock lock(mu_);
  // Note [Fast pair]: a block of the small pool (all of which may be
  // deferred) found in `recent_`, used by no other stream and no graph.
  Block* block = recent_[LookupSlot(p)];
  if (ABSL_PREDICT_TRUE(block != nullptr && block->ptr == p && block->allocated &&
                        block->pool == &small_ && block->stream_uses.empty() &&
                        block->graph_refs == 0)) {
    block->allocated = false;
    Decrease(stats_.allocation, kSmallIndex, 1);
    Decrease(stats_.allocated_bytes, kSmallIndex, static_cast<int64_t>(block->size));
    DeferBlock(block);
    return absl::OkStatus();
  }
  return FreeSlow(p);
}

absl::Status DeviceCachingAllocator::FreeSlow(uintptr_t p) {
  Block* block = FindAllocated(p);
  if (block == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        device_.ToString(), ": free of ", Ptr(p),
        ", which is not a live allocation of this device's caching allocator (a double free, "
        "a stale or foreign pointer, or a pointer into the middle of an allocation)"));
  }
  block->allocated = false;
  const size_t t = PoolIndex(*block->pool);
  Decrease(stats_.allocation, t, 1);
  Decrease(stats_.allocated_bytes, t, static_cast<int64_t>(block->size));
  if (block->stream_uses.empty() && block->graph_refs == 0 && block->size <= kMaxDeferredSize) {
    DeferBlock(block);  // keeps its entry in active_
    return absl::OkStatus();
  }
  active_.erase(p);
  if (!block->stream_uses.empty()) {
    InsertEvents(block);
  } else {
    FreeBlockIfUnheld(block);  // else held by graphs (Note [Graph memory])
  }
  return absl::OkStatus();
}

absl::Status DeviceCachingAllocator::RecordStream(void* ptr, const Stream& stream) {
  if (stream.device_type() != device_.type()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "record_stream: ", stream.ToString(), " is not a stream of a ",
        DeviceTypeName(device_.type()), " device; the memory is on ", device_.ToString()));
  }
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  FastMutexLock lock(mu_);
  Block* block = FindAllocated(p);
  if (block == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        device_.ToString(), ": record_stream of ", Ptr(p),
        ", which is not a live allocation of this device's caching allocator"));
  }
  if (stream.device() == device_ && stream.id() == block->stream) return absl::OkStatus();
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) ==
      block->stream_uses.end()) {
    block->stream_uses.push_back(stream);
  }
  return absl::OkStatus();
}

absl::Status DeviceCachingAllocator::EmptyCache() {
  FastMutexLock lock(mu_);
  bool cached = !pending_.empty();
  for (const BlockPool* pool : ReleasablePools()) cached = cached || !pool->empty();
  if (!cached) return absl::OkStatus();  // nothing cached: no device wait
  return ReleaseCachedBlocks();
}

// --- graphs (Note [Graph memory]) ------------------------------------------------

DeviceCachingAllocator::PrivatePool* DeviceCachingAllocator::FindPrivatePool(MempoolId id) {
  for (const std::unique_ptr<PrivatePool>& p : private_pools_) {
    if (p->id == id) return p.get();
  }
  return nullptr;
}

void DeviceCachingAllocator::BeginAllocateToPool(MempoolId id, StreamId stream) {
  FastMutexLock lock(mu_);
  PrivatePool* pool = FindPrivatePool(id);
  if (pool == nullptr) {
    private_pools_.push_back(std::make_unique<PrivatePool>(id));
    pool = private_pools_.back().get();
  }
  ++pool->use_count;
  for (auto& [s, p] : to_private_) {
    if (s == stream) {
      p = pool;
      return;
    }
  }
  to_private_.emplace_back(stream, pool);
}

void DeviceCachingAllocator::EndAllocateToPool(StreamId stream) {
  FastMutexLock lock(mu_);
  to_private_.erase(std::remove_if(to_private_.begin(), to_private_.end(),
                                   [stream](const auto& e) { return e.first == stream; }),
                    to_private_.end());
}

void DeviceCachingAllocator::ReleasePool(MempoolId id) {
  FastMutexLock lock(mu_);
  if (PrivatePool* pool = FindPrivatePool(id); pool != nullptr && pool->use_count > 0) {
    --pool->use_count;
  }
}

void* DeviceCachingAllocator::RetainForGraph(void* ptr, MempoolId id) {
  FastMutexLock lock(mu_);
  Block* block = FindAllocated(reinterpret_cast<uintptr_t>(ptr));
  if (block == nullptr) return nullptr;
  if (block->pool->owner != nullptr && block->pool->owner->id == id) return nullptr;
  ++block->graph_refs;
  return block;
}

void DeviceCachingAllocator::ReleaseGraphUse(void* handle, const std::vector<Stream>& replay_streams) {
  FastMutexLock lock(mu_);
  Block* block = static_cast<Block*>(handle);
  // The replays used the block as a recorded stream would have.
  for (const Stream& s : replay_streams) {
    if (s.device() == device_ && s.id() == block->stream) continue;
    if (std::find(block->stream_uses.begin(), block->stream_uses.end(), s) ==
        block->stream_uses.end()) {
      block->stream_uses.push_back(s);
    }
  }
  if (--block->graph_refs != 0 || block->allocated) return;
  // Freed while the graph held it: free it now, after the replays' work.
  if (!block->stream_uses.empty()) {
    InsertEvents(block);
  } else {
    FreeBlockIfUnheld(block);
  }
}

DeviceStats DeviceCachingAllocator::GetStats() {
  FastMutexLock lock(mu_);
  // Blocks whose recorded streams have finished stop being active now rather
  // than at the next allocation (PyTorch waits for the next malloc).
  if (!pending_.empty()) ProcessEvents();
  DeviceStats out = stats_;
  ForEachStatArray(out, [](StatArray& a) {
    a[0].allocated = a[1].allocated + a[2].allocated;
    a[0].freed = a[1].freed + a[2].freed;
  });
  return out;
}

size_t DeviceCachingAllocator::StreamPartsForTesting() {
  FastMutexLock lock(mu_);
  size_t n = 0;
  for (const BlockPool* pool : {&small_, &large_}) {
    n += pool->free.streams.size() + pool->deferred.streams.size();
  }
  return n;
}

void DeviceCachingAllocator::ResetPeakStats() {
  FastMutexLock lock(mu_);
  ForEachStatArray(stats_, ResetPeak);
}

void DeviceCachingAllocator::ResetAccumulatedStats() {
  FastMutexLock lock(mu_);
  ForEachStatArray(stats_, ResetAccumulated);
  stats_.num_alloc_retries = 0;
  stats_.num_ooms = 0;
  stats_.num_sync_all_streams = 0;
  stats_.num_device_alloc = 0;
  stats_.num_device_free = 0;
}

// --- the per-device registry ---------------------------------------------------

std::atomic<DeviceCachingAllocator*> g_allocators[kNumDeviceTypes][kMaxDevicesPerType];

void ForgetCachingAllocatorsAfterFork(DeviceType type) {
  for (std::atomic<DeviceCachingAllocator*>& slot : g_allocators[DenseIndex(type)]) {
    slot.store(nullptr, std::memory_order_release);
  }
}

absl::StatusOr<DeviceCachingAllocator*> GetCachingAllocator(Device device) {
  if (DeviceCachingAllocator* a = FindCachingAllocator(device)) return a;
  ANYDEV_ASSIGN_OR_RETURN(Device d, ResolveDevice(device));
  ANYDEV_ASSIGN_OR_RETURN(Backend * backend, GetBackend(d.type()));
  std::atomic<DeviceCachingAllocator*>& slot = g_allocators[DenseIndex(d.type())][d.index()];
  DeviceCachingAllocator* existing = slot.load(std::memory_order_acquire);
  if (existing != nullptr) return existing;
  auto* created = new DeviceCachingAllocator(backend, d);
  if (slot.compare_exchange_strong(existing, created, std::memory_order_acq_rel)) return created;
  delete created;  // another thread won
  return existing;
}

}  // namespace anydev::internal
