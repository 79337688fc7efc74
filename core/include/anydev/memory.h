// anydev/memory.h: device memory. A caching allocator per device with
// PyTorch's statistics, raw allocations from it, and `Buffer`, an owning
// handle to device memory with copies and fills.
//
// Every device (of every backend, the CPU included) gets one caching
// allocator, created on its first allocation. It is the design of PyTorch's
// CUDACachingAllocator written once over anydev::Backend (docs/memory.md):
//   * Sizes are rounded up to a multiple of 512 bytes. Requests of at most
//     1 MiB come from the small pool, carved out of 2 MiB segments; larger
//     ones from the large pool: 20 MiB segments for requests under 10 MiB,
//     else segments of the request rounded up to 2 MiB.
//   * Free blocks are split to serve smaller requests and coalesced with free
//     neighbours when freed.
//   * Reuse is stream-ordered: a block freed by stream S is reused at once by
//     S; another stream gets it only once S has finished the work queued
//     before the free. Streams named with RecordStream hold the block until
//     the work they had queued at the free has finished.
//   * Out of memory: the cached blocks are released (after waiting for the
//     device) and the allocation is retried once; then ResourceExhausted with
//     PyTorch's message ("Tried to allocate ... of which ... is free").
//   * Statistics: DeviceStats, the layout of c10::CachingDeviceAllocator's,
//     flattened with the keys of torch.accelerator.memory_stats().
//
// Example:
//   absl::StatusOr<anydev::Buffer> buf =
//       anydev::Buffer::Create(4096, anydev::Device(anydev::DeviceType::kSim, 0));
//   if (!buf.ok()) return buf.status();
//   RETURN_IF_ERROR(buf->Fill(0xff));                        // synchronous
//   std::vector<uint8_t> host(4096);
//   RETURN_IF_ERROR(buf->CopyToHost(host.data(), host.size()));
//   absl::StatusOr<anydev::DeviceStats> stats = anydev::acc::GetDeviceStats();
#ifndef ANYDEV_MEMORY_H_
#define ANYDEV_MEMORY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "anydev/device.h"
#include "anydev/stream.h"

namespace anydev {

// One statistic, as c10::CachingDeviceAllocator::Stat: the current value, its
// peak since the last ResetPeakStats, and the totals added and removed since
// the last ResetAccumulatedStats.
struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;
};

// The pools a statistic is kept for: all of them, the small pool (requests of
// at most 1 MiB) and the large pool.
enum class StatType : size_t { kAggregate = 0, kSmallPool = 1, kLargePool = 2, kNumTypes = 3 };
using StatArray = std::array<Stat, static_cast<size_t>(StatType::kNumTypes)>;

// The statistics of one device's caching allocator, as
// c10::CachingDeviceAllocator::DeviceStats. Byte counts are of rounded sizes
// except `requested_bytes`.
struct DeviceStats {
  StatArray allocation;            // live allocations
  StatArray segment;               // segments obtained from the backend
  StatArray active;                // blocks in use (allocated, or freed with work pending)
  StatArray inactive_split;        // free blocks that are part of a split segment
  StatArray allocated_bytes;       // bytes of live allocations
  StatArray reserved_bytes;        // bytes of segments
  StatArray active_bytes;          // bytes of active blocks
  StatArray inactive_split_bytes;  // bytes of inactive split blocks
  StatArray requested_bytes;       // bytes asked for by the active blocks' callers
  int64_t num_alloc_retries = 0;   // allocations that released the cache and retried
  int64_t num_ooms = 0;            // out-of-memory errors returned
  Stat oversize_allocations;       // allocations of at least max_split_size (never: no limit)
  Stat oversize_segments;          // segments of at least max_split_size (never: no limit)
  int64_t num_sync_all_streams = 0;  // times the allocator waited for the whole device
  int64_t num_device_alloc = 0;    // Backend::Allocate calls
  int64_t num_device_free = 0;     // Backend::Free calls
  int64_t max_split_size = -1;     // the largest block that is split; -1: no limit (as PyTorch)
};

// Returns `stats` as torch.accelerator.memory_stats() flattens them: 122
// ("allocated_bytes.all.current", value) pairs sorted by key.
std::vector<std::pair<std::string, int64_t>> FlattenDeviceStats(const DeviceStats& stats);

// --- device-generic (rule 2): `device` defaults to the current device of the
// current accelerator, else the CPU; a device without an index means the
// current device of its type.

// Returns the statistics of `device`'s caching allocator (all zero before its
// first allocation).
[[nodiscard]] absl::StatusOr<DeviceStats> MemoryStats(std::optional<Device> device = std::nullopt);
// allocated_bytes.all.current, .peak; reserved_bytes.all.current, .peak.
[[nodiscard]] absl::StatusOr<int64_t> MemoryAllocated(std::optional<Device> device = std::nullopt);
[[nodiscard]] absl::StatusOr<int64_t> MaxMemoryAllocated(std::optional<Device> device = std::nullopt);
[[nodiscard]] absl::StatusOr<int64_t> MemoryReserved(std::optional<Device> device = std::nullopt);
[[nodiscard]] absl::StatusOr<int64_t> MaxMemoryReserved(std::optional<Device> device = std::nullopt);
// Sets every peak to its current value.
[[nodiscard]] absl::Status ResetPeakMemoryStats(std::optional<Device> device = std::nullopt);
// Zeroes the accumulated counts (.allocated, .freed, num_*).
[[nodiscard]] absl::Status ResetAccumulatedMemoryStats(std::optional<Device> device = std::nullopt);
// Returns cached, unused segments to the backend: of `device` when it has an
// index, of every device of its type when it has none, of every device of
// the default type when nullopt. Waits for the device first when there is
// something to release.
[[nodiscard]] absl::Status EmptyCache(std::optional<Device> device = std::nullopt);

// Allocates `nbytes` from the caching allocator of `device` for use on
// `stream` (without one: the calling thread's current stream of the device).
// nbytes == 0 returns nullptr. ResourceExhausted when the device is full.
[[nodiscard]] absl::StatusOr<void*> RawAlloc(size_t nbytes, Device device);
[[nodiscard]] absl::StatusOr<void*> RawAlloc(size_t nbytes, Device device, const Stream& stream);
// Frees a pointer from RawAlloc of the same device (stream-ordered: no wait).
// nullptr is a no-op; anything else that is not a live allocation of the
// device is InvalidArgument naming the pointer, and changes nothing.
[[nodiscard]] absl::Status RawDelete(void* ptr, Device device);
// Marks the allocation at `ptr` as used by `stream` (of the same device type),
// so that after its free it is not reused until the work queued on `stream`
// by then has finished (as c10::DeviceAllocator::recordStream).
[[nodiscard]] absl::Status RecordStream(void* ptr, Device device, const Stream& stream);

// Device memory from the caching allocator, freed (stream-ordered) when the
// Buffer is destroyed. Move-only.
//
// Each operation takes an optional stream of the buffer's device: with one it
// is queued there and returns at once (host memory must then stay valid until
// the stream reaches it); without one it runs on the calling thread's current
// stream of the device and completes before returning. Work queued on other
// streams is not waited for, as with PyTorch tensors. An operation queued on
// a stream other than the one the buffer was allocated for records that
// stream (RecordStream), so freeing the buffer while it runs is safe.
class Buffer {
 public:
  // An empty, freed buffer.
  Buffer() = default;
  // Allocates `nbytes` on `device` (an index-less device: the current one) for
  // use on `stream` (default: the current stream of the device). A zero-size
  // buffer has a null data().
  [[nodiscard]] static absl::StatusOr<Buffer> Create(size_t nbytes, Device device,
                                                     std::optional<Stream> stream = std::nullopt);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // The stream the buffer was allocated for.
  Stream stream() const { return Stream(device_, stream_); }
  // False once freed (or moved from, or default-constructed).
  bool live() const { return live_; }

  // Copies `nbytes` from host memory at `src` to the buffer at `offset`.
  [[nodiscard]] absl::Status CopyFromHost(const void* src, size_t nbytes,
                                          std::optional<Stream> stream = std::nullopt,
                                          size_t offset = 0);
  // Copies `nbytes` from the buffer at `offset` to host memory at `dst`.
  [[nodiscard]] absl::Status CopyToHost(void* dst, size_t nbytes,
                                        std::optional<Stream> stream = std::nullopt,
                                        size_t offset = 0) const;
  // Copies all of `src` (a buffer of a device of the same type, possibly
  // another device) to the start of this buffer. Across devices the copy
  // stream first waits for the source device's current stream.
  [[nodiscard]] absl::Status CopyFrom(const Buffer& src,
                                      std::optional<Stream> stream = std::nullopt);
  // Sets every byte to `value`.
  [[nodiscard]] absl::Status Fill(uint8_t value, std::optional<Stream> stream = std::nullopt);
  // Marks the buffer as used by `stream` (see anydev::RecordStream).
  [[nodiscard]] absl::Status RecordStream(const Stream& stream) const;
  // Returns the memory to the allocator now (stream-ordered) and leaves the
  // buffer freed. Freeing a freed buffer is a no-op.
  [[nodiscard]] absl::Status Free();

 private:
  // Checks the buffer is live and `stream` (if any) is of its device; returns
  // the stream to use and whether the call is synchronous.
  absl::StatusOr<std::pair<Stream, bool>> PrepareStream(std::optional<Stream> stream,
                                                        const char* what) const;
  absl::Status Finish(const Stream& stream, bool sync) const;

  Device device_{DeviceType::kCPU, -1};
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  StreamId stream_ = 0;
  bool live_ = false;
};

// --- pinned host memory --------------------------------------------------------
//
// Host memory for copies to and from the accelerator: page-locked memory of
// the accelerator's runtime (cudaMallocHost, hipHostMalloc) where it has it,
// ordinary host memory on backends without (cpu, sim). Cached as PyTorch's
// CachingHostAllocator: a request is rounded up to a power of two (at least
// 512 bytes); a freed block goes back to the free list of its size and serves
// the next request of that size; EmptyHostCache returns the cached blocks to
// the system. Unlike PyTorch's, a freed block is reusable at once: free it
// after the copies that use it have finished.

struct HostMemoryStats {
  Stat allocated_bytes;       // bytes of blocks handed out (rounded)
  Stat reserved_bytes;        // bytes obtained from the backend (handed out or cached)
  int64_t num_host_alloc = 0;  // Backend::AllocateHost calls
  int64_t num_host_free = 0;   // Backend::FreeHost calls
};

// Returns a block of at least `nbytes` (> 0) of pinned host memory for
// `type` (default: the current accelerator, else the CPU).
[[nodiscard]] absl::StatusOr<void*> HostAlloc(size_t nbytes,
                                              std::optional<DeviceType> type = std::nullopt);
// Returns a block from HostAlloc to the cache; InvalidArgument for any other
// pointer (a double free included).
[[nodiscard]] absl::Status HostFree(void* ptr);
// Returns the size of the block at `ptr` (from HostAlloc), or 0 if none.
size_t HostBlockSize(const void* ptr);
// Returns the host caching allocator's statistics (all types together).
HostMemoryStats GetHostMemoryStats();
// Returns every cached, unused host block of every type to the system.
[[nodiscard]] absl::Status EmptyHostCache();

namespace acc {

// Returns the cached pinned host memory to the system (all of it: the cache
// is per process), as torch.accelerator.empty_host_cache.
[[nodiscard]] absl::Status EmptyHostCache();

// The allocator calls of the current accelerator, as at::accelerator's;
// `index` -1 is the current device.

// Returns every device's cached, unused segments to the backend.
[[nodiscard]] absl::Status EmptyCache();
[[nodiscard]] absl::StatusOr<DeviceStats> GetDeviceStats(int index = -1);
[[nodiscard]] absl::Status ResetPeakStats(int index = -1);
[[nodiscard]] absl::Status ResetAccumulatedStats(int index = -1);
// Returns (free, total) bytes of the device, from the backend.
[[nodiscard]] absl::StatusOr<std::pair<size_t, size_t>> GetMemoryInfo(int index = -1);

}  // namespace acc
}  // namespace anydev

#endif  // ANYDEV_MEMORY_H_
