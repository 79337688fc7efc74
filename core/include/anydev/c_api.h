/* anydev/c_api.h: a small C ABI over anydev's runtime, for code that must not
 * see anydev's C++ types (Abseil's absl::Status crosses no library boundary
 * here): the PyTorch backend that makes the simulated accelerator a real
 * PyTorch device (python/torch_sim/), which is compiled against whichever
 * PyTorch is imported, and any other C or C++ client.
 *
 * The contract:
 *   * libanydev exports one symbol, anydev_c_api(), which returns a table of
 *     function pointers that lives as long as the process. A client checks
 *     `abi_version == ANYDEV_C_ABI_VERSION` and `struct_size >=
 *     sizeof(AnydevCApi)` of the header it was compiled with before it calls
 *     anything. Entries are only ever appended; a change to an existing
 *     entry's meaning increments ANYDEV_C_ABI_VERSION.
 *   * Every call that can fail returns an AnydevStatus: 0 (ANYDEV_OK) or one
 *     of absl::StatusCode's canonical values (ANYDEV_RESOURCE_EXHAUSTED for
 *     out of memory, ANYDEV_INVALID_ARGUMENT, ANYDEV_OUT_OF_RANGE, ...). The
 *     message of the calling thread's last failure, and the Python exception
 *     PyTorch raises for it (ANYDEV_PY_VALUE_ERROR...), come from
 *     last_error(); a later failing call on the same thread overwrites them.
 *     Outputs are written only on success.
 *   * Device types are anydev's (= c10::DeviceType's numbers: ANYDEV_SIM is
 *     20, PrivateUse1's). `device` is an index in [0, device count); -1
 *     where a function says so means "the calling thread's current device".
 *     Streams are the int64 ids of anydev::Stream / c10::Stream (0 is the
 *     default stream; -1 where a function says so means "the calling
 *     thread's current stream of that device").
 *   * Current device and current stream are per thread, shared with
 *     anydev's C++ and Python API (anydev.accelerator sees what a client set).
 *   * Events are opaque handles from event_create, owned by the caller, freed
 *     with event_destroy.
 *   * No call takes a lock that a callback of the client could hold; none
 *     calls back into the client. Blocking calls (synchronize) block the
 *     calling thread only.
 *
 * Example:
 *   const AnydevCApi* api = anydev_c_api();
 *   if (api->abi_version != ANYDEV_C_ABI_VERSION) return;   // another anydev
 *   int n = 0;
 *   if (api->device_count(ANYDEV_SIM, &n) != ANYDEV_OK) {
 *     int py = 0;
 *     fprintf(stderr, "%s\n", api->last_error(&py));        // why sim has none
 *   }
 *   void* p = NULL;
 *   if (api->raw_alloc(ANYDEV_SIM, 0, 1024, &p) == ANYDEV_OK) api->raw_free(ANYDEV_SIM, 0, p);
 */
#ifndef ANYDEV_C_API_H_
#define ANYDEV_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI's version: see the contract above. */
#define ANYDEV_C_ABI_VERSION 1

/* 0 or absl::StatusCode's canonical value. */
typedef int AnydevStatus;
#define ANYDEV_OK 0
#define ANYDEV_INVALID_ARGUMENT 3
#define ANYDEV_NOT_FOUND 5
#define ANYDEV_RESOURCE_EXHAUSTED 8
#define ANYDEV_FAILED_PRECONDITION 9
#define ANYDEV_OUT_OF_RANGE 11
#define ANYDEV_UNIMPLEMENTED 12
#define ANYDEV_INTERNAL 13
#define ANYDEV_UNAVAILABLE 14

/* The Python exception PyTorch raises for the same mistake, where it is not
 * simply RuntimeError (last_error's second output). */
#define ANYDEV_PY_RUNTIME_ERROR 0
#define ANYDEV_PY_VALUE_ERROR 1
#define ANYDEV_PY_TYPE_ERROR 2

/* Device types (anydev::DeviceType, c10::DeviceType's numbers). */
#define ANYDEV_CPU 0
#define ANYDEV_CUDA 1
#define ANYDEV_HIP 6
#define ANYDEV_XPU 12
#define ANYDEV_SIM 20

/* Copy directions (anydev::CopyKind). */
#define ANYDEV_HOST_TO_DEVICE 0
#define ANYDEV_DEVICE_TO_HOST 1
#define ANYDEV_DEVICE_TO_DEVICE 2

/* One statistic (anydev::Stat, c10::CachingAllocator::Stat). */
typedef struct AnydevStat {
  int64_t current;
  int64_t peak;
  int64_t allocated;
  int64_t freed;
} AnydevStat;

/* A device's caching-allocator statistics (anydev::DeviceStats); each array
 * is indexed all (0), small pool (1), large pool (2). */
typedef struct AnydevDeviceStats {
  AnydevStat allocation[3];
  AnydevStat segment[3];
  AnydevStat active[3];
  AnydevStat inactive_split[3];
  AnydevStat allocated_bytes[3];
  AnydevStat reserved_bytes[3];
  AnydevStat active_bytes[3];
  AnydevStat inactive_split_bytes[3];
  AnydevStat requested_bytes[3];
  int64_t num_alloc_retries;
  int64_t num_ooms;
  AnydevStat oversize_allocations;
  AnydevStat oversize_segments;
  int64_t num_sync_all_streams;
  int64_t num_device_alloc;
  int64_t num_device_free;
  int64_t max_split_size;
} AnydevDeviceStats;

/* The pinned host allocator's statistics (anydev::HostMemoryStats). */
typedef struct AnydevHostStats {
  AnydevStat allocated_bytes;
  AnydevStat reserved_bytes;
  int64_t num_host_alloc;
  int64_t num_host_free;
} AnydevHostStats;

typedef struct AnydevCApi {
  uint32_t abi_version; /* ANYDEV_C_ABI_VERSION of the library */
  uint32_t struct_size; /* sizeof(AnydevCApi) of the library */
  const char* version;  /* anydev's version, "0.1.0" */

  /* Returns the calling thread's last failure message ("" if none) and, in
   * *python_exception (may be NULL), an ANYDEV_PY_* value. */
  const char* (*last_error)(int* python_exception);

  /* --- devices ------------------------------------------------------------ */
  /* The number of devices of `type`, or the reason it has none (the backend
   * is probed on the first call, once per process). */
  AnydevStatus (*device_count)(int type, int* count);
  AnydevStatus (*current_device)(int type, int* device);
  /* Makes `device` current for the calling thread (-1: no-op). */
  AnydevStatus (*set_device)(int type, int device);

  /* --- streams ------------------------------------------------------------ */
  /* The calling thread's current stream of `device` (-1: current device). */
  AnydevStatus (*current_stream)(int type, int device, int64_t* stream);
  /* Makes `stream` the calling thread's current stream of `device`; does not
   * change the current device. Checks the id. */
  AnydevStatus (*set_current_stream)(int type, int device, int64_t stream);
  /* A stream from the device's pool with `priority` (clamped). */
  AnydevStatus (*new_stream)(int type, int device, int priority, int64_t* stream);
  /* The priority range: *least (the default, 0) and *greatest (<= least). */
  AnydevStatus (*stream_priority_range)(int type, int* least, int* greatest);
  AnydevStatus (*stream_priority)(int type, int device, int64_t stream, int* priority);
  /* *done = 1 when all work queued on the stream so far has finished. */
  AnydevStatus (*stream_query)(int type, int device, int64_t stream, int* done);
  AnydevStatus (*stream_synchronize)(int type, int device, int64_t stream);
  /* Waits for every stream of `device` (-1: current device). */
  AnydevStatus (*device_synchronize)(int type, int device);
  /* Queues work that keeps the stream busy for `seconds` (a test kernel, as
   * torch.cuda._sleep); Unimplemented where the backend has none. */
  AnydevStatus (*stream_sleep)(int type, int device, int64_t stream, double seconds);

  /* --- events --------------------------------------------------------------- */
  AnydevStatus (*event_create)(int type, int device, int enable_timing, void** event);
  /* Never fails; NULL is a no-op. */
  void (*event_destroy)(int type, int device, void* event);
  /* Records the point `stream` of `device` has reached. */
  AnydevStatus (*event_record)(int type, void* event, int device, int64_t stream);
  /* Makes future work on `stream` wait for the event's last record. */
  AnydevStatus (*event_block)(int type, void* event, int device, int64_t stream);
  AnydevStatus (*event_query)(int type, void* event, int* done);
  AnydevStatus (*event_synchronize)(int type, void* event);
  /* Milliseconds between two completed, timed events. */
  AnydevStatus (*event_elapsed_ms)(int type, void* start, void* end, double* ms);

  /* --- device memory (the caching allocator) -------------------------------- */
  /* Allocates `nbytes` on `device` for its current stream (0 bytes: *ptr =
   * NULL). ANYDEV_RESOURCE_EXHAUSTED with PyTorch's message when full. */
  AnydevStatus (*raw_alloc)(int type, int device, size_t nbytes, void** ptr);
  /* Frees (stream-ordered) a pointer from raw_alloc of the same device. */
  AnydevStatus (*raw_free)(int type, int device, void* ptr);
  /* Keeps the allocation at `ptr` from reuse until the work queued on
   * `stream` (of the same device) by the time of its free has finished. */
  AnydevStatus (*record_stream)(int type, int device, void* ptr, int64_t stream);
  AnydevStatus (*memory_stats)(int type, int device, AnydevDeviceStats* stats);
  AnydevStatus (*reset_peak_stats)(int type, int device);
  AnydevStatus (*reset_accumulated_stats)(int type, int device);
  /* Returns cached, unused segments of `device` (-1: every device of `type`). */
  AnydevStatus (*empty_cache)(int type, int device);
  AnydevStatus (*memory_info)(int type, int device, size_t* free_bytes, size_t* total_bytes);
  /* Queues a copy of `nbytes` on `stream` (-1: current) of `device`; `kind`
   * is ANYDEV_HOST_TO_DEVICE... Host memory must stay valid until the
   * stream reaches the copy. */
  AnydevStatus (*copy_async)(int type, int device, int64_t stream, void* dst, const void* src,
                             size_t nbytes, int kind);

  /* --- pinned host memory (the host caching allocator) ---------------------- */
  AnydevStatus (*host_alloc)(int type, size_t nbytes, void** ptr);
  AnydevStatus (*host_free)(void* ptr);
  /* The size of the host block at `ptr` (its start), 0 if it is none. */
  size_t (*host_block_size)(const void* ptr);
  void (*host_stats)(AnydevHostStats* stats);
  AnydevStatus (*empty_host_cache)(void);
} AnydevCApi;

/* Returns the table; never NULL. */
const AnydevCApi* anydev_c_api(void);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* ANYDEV_C_API_H_ */
