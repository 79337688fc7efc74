// sim_backend.h: anydev's simulated accelerator as PyTorch's PrivateUse1
// backend, named "sim" (anydev.torch.register_sim, docs/torch.md).
//
// This library is compiled by anydev at run time against the PyTorch that is
// imported (python/anydev/_torch/sim_build.py), because PyTorch's C++ ABI
// differs between releases. It sees anydev only through the C ABI of
// <anydev/c_api.h>: a table of function pointers that Python hands to
// anydev_torch_sim_init(), so it links neither libanydev nor Abseil, and one
// build serves every anydev wheel with the same C ABI version.
//
// The pieces, each the PrivateUse1 half of something PyTorch has for CUDA:
//   runtime.cc   device guard (c10::impl::DeviceGuardImplInterface): the
//                current device and stream, streams, events; the caching
//                allocator (c10::DeviceAllocator) and the pinned host
//                allocator (at::HostAllocator); the generators; the hooks
//                (at::PrivateUse1HooksInterface); fork safety; the init entry.
//   kernels.cc   the operators: a few native ones (empty, views, resize_,
//                copies between devices, set_), and a boxed fallback that runs
//                every other operator on PyTorch's CPU kernel over the same
//                host memory, without copying it (Note [Zero-copy CPU fallback]).
//   autocast.cc  torch.autocast("sim"): the op lists CUDA uses.
//
// Example (what register_sim does, in Python):
//   lib = ctypes.CDLL(built_library)
//   lib.anydev_torch_sim_init(anydev_c_api_table, device_count, err, len(err))
//   torch.utils.rename_privateuse1_backend("sim")
#ifndef ANYDEV_TORCH_SIM_BACKEND_H_
#define ANYDEV_TORCH_SIM_BACKEND_H_

#include <ATen/core/Generator.h>
#include <c10/core/Allocator.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/Stream.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "anydev/c_api.h"

namespace anydev_torch {

constexpr c10::DeviceType kSim = c10::DeviceType::PrivateUse1;

// The C ABI table and the device count, set once by anydev_torch_sim_init.
extern const AnydevCApi* g_api;
extern int g_device_count;

// Note [Fork safety]: anydev's sim streams are worker threads, and a forked
// child has none of them, so a child that touched sim state after the parent
// used it could wait forever on a stream. As CUDA does, a child forked after
// the parent used sim gets an error instead ("Cannot re-initialize sim in
// forked subprocess"), and torch.sim._is_in_bad_fork() answers True so that
// torch.manual_seed in a DataLoader worker skips sim (torch/random.py).
extern std::atomic<bool> g_used;
extern std::atomic<bool> g_bad_fork;

// Throws the bad-fork error in a child forked after sim was used; marks sim
// as used. Called by every entry point that reaches anydev's streams or
// allocator.
inline void CheckUsable() {
  if (C10_UNLIKELY(g_bad_fork.load(std::memory_order_relaxed))) {
    TORCH_CHECK(false,
                "Cannot re-initialize sim in forked subprocess. To use sim with "
                "multiprocessing, you must use the 'spawn' start method");
  }
  if (C10_UNLIKELY(!g_used.load(std::memory_order_relaxed))) {
    g_used.store(true, std::memory_order_relaxed);
  }
}

// Throws the c10 exception PyTorch raises for a failed anydev call `what`
// (torch.OutOfMemoryError for out of memory, NotImplementedError, ValueError
// ...), with anydev's message.
[[noreturn]] void ThrowStatus(AnydevStatus status, const char* what);

// Calls `expr` (an AnydevStatus) and throws on failure.
#define ANYDEV_TORCH_CHECK(expr, what)                              \
  do {                                                              \
    const AnydevStatus anydev_torch_status_ = (expr);               \
    if (C10_UNLIKELY(anydev_torch_status_ != ANYDEV_OK)) {          \
      ::anydev_torch::ThrowStatus(anydev_torch_status_, what);      \
    }                                                               \
  } while (0)

// Returns the calling thread's current sim device.
int CurrentDevice();

// Checks `device` (a sim device index) is in [0, device count).
void CheckDeviceIndex(int64_t device);

// Blocks until the work queued on the calling thread's current stream of
// `device` has finished. Operators run on the calling thread (the CPU kernels),
// so this is what orders them after the asynchronous work queued before them
// on the same stream (Note [Operators and streams] in kernels.cc).
void WaitForCurrentStream(int device);

// The allocator of one device: the storage of every sim tensor of that
// device holds it, so that a resize allocates on the same device.
c10::Allocator* DeviceAllocatorFor(int device);

// The CPU generator behind sim device `device`'s default generator, and
// behind `gen` (a sim generator): random operators run on the CPU kernels,
// each device with its own generator state (Note [Sim generators]).
at::Generator DefaultCpuGenerator(int device);
// Returns the default generator of sim device `device` (-1: the current one).
const at::Generator& DefaultGeneratorFor(int device);
// Returns the CPU generator behind `gen` when it is a sim generator, else
// nullopt.
std::optional<at::Generator> CpuGeneratorOf(const at::Generator& gen);

// Keeps `storage` alive until the work queued so far on the current stream
// of `device` has finished (the host side of an asynchronous copy).
void KeepAliveUntilStreamDone(int device, c10::Storage storage);

}  // namespace anydev_torch

#endif  // ANYDEV_TORCH_SIM_BACKEND_H_
