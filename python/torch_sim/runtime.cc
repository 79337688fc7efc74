// The runtime half of the sim backend (sim_backend.h): device guard, streams
// and events, the caching and pinned allocators, generators, the PrivateUse1
// hooks, fork safety, and anydev_torch_sim_init, which registers them all.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/DeviceCapability.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <pthread.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sim_backend.h"

namespace anydev_torch {

// Defined in kernels.cc and autocast.cc: the operator registrations.
void RegisterKernels();
void RegisterAutocast();

const AnydevCApi* g_api = nullptr;
int g_device_count = 0;
std::atomic<bool> g_used{false};
std::atomic<bool> g_bad_fork{false};

[[noreturn]] void ThrowStatus(AnydevStatus status, const char* what) {
  int py = ANYDEV_PY_RUNTIME_ERROR;
  std::string message = g_api->last_error(&py);
  if (message.empty()) message = std::string("sim: ") + what + " failed";
  if (status == ANYDEV_RESOURCE_EXHAUSTED) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, message);
  }
  if (status == ANYDEV_UNIMPLEMENTED) TORCH_CHECK_NOT_IMPLEMENTED(false, message);
  if (py == ANYDEV_PY_VALUE_ERROR) TORCH_CHECK_VALUE(false, message);
  if (py == ANYDEV_PY_TYPE_ERROR) TORCH_CHECK_TYPE(false, message);
  TORCH_CHECK(false, message);
}

int CurrentDevice() {
  int device = 0;
  ANYDEV_TORCH_CHECK(g_api->current_device(ANYDEV_SIM, &device), "current_device");
  return device;
}

void CheckDeviceIndex(int64_t device) {
  TORCH_CHECK(device >= 0 && device < g_device_count, "Invalid device index ", device,
              " for sim: ", g_device_count, g_device_count == 1 ? " device is" : " devices are",
              " available");
}

void WaitForCurrentStream(int device) {
  ANYDEV_TORCH_CHECK(g_api->stream_synchronize(ANYDEV_SIM, device, -1), "synchronize");
}

namespace {

c10::Stream MakeStream(int device, int64_t id) {
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(kSim, static_cast<c10::DeviceIndex>(device)), id);
}

// --- keep-alives for asynchronous copies ---------------------------------------

// The host storages of asynchronous copies still queued, each with an event
// recorded after its copy; released once the event has completed.
struct KeepAlive {
  void* event;
  int device;
  c10::Storage storage;
};
std::mutex g_keep_alive_mu;
std::deque<KeepAlive>* g_keep_alive = new std::deque<KeepAlive>();  // leaked: see Fork safety

// Releases the keep-alives whose copies have finished.
void ReleaseFinishedCopies() {
  std::vector<c10::Storage> done;  // released outside the lock
  {
    std::lock_guard<std::mutex> lock(g_keep_alive_mu);
    while (!g_keep_alive->empty()) {
      KeepAlive& k = g_keep_alive->front();
      int finished = 0;
      if (g_api->event_query(ANYDEV_SIM, k.event, &finished) == ANYDEV_OK && !finished) break;
      g_api->event_destroy(ANYDEV_SIM, k.device, k.event);
      done.push_back(std::move(k.storage));
      g_keep_alive->pop_front();
    }
  }
}

}  // namespace

void KeepAliveUntilStreamDone(int device, c10::Storage storage) {
  ReleaseFinishedCopies();
  void* event = nullptr;
  ANYDEV_TORCH_CHECK(g_api->event_create(ANYDEV_SIM, device, 0, &event), "event");
  const AnydevStatus s = g_api->event_record(ANYDEV_SIM, event, device, -1);
  if (s != ANYDEV_OK) {
    g_api->event_destroy(ANYDEV_SIM, device, event);
    ThrowStatus(s, "event record");
  }
  std::lock_guard<std::mutex> lock(g_keep_alive_mu);
  g_keep_alive->push_back(KeepAlive{event, device, std::move(storage)});
}

namespace {

// --- the device guard ----------------------------------------------------------

class SimGuardImpl final : public c10::impl::DeviceGuardImplInterface {
 public:
  c10::DeviceType type() const override { return kSim; }

  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kSim);
    const int old = CurrentDevice();
    if (d.index() >= 0 && d.index() != old) setDevice(d);
    return c10::Device(kSim, static_cast<c10::DeviceIndex>(old));
  }

  c10::Device getDevice() const override {
    return c10::Device(kSim, static_cast<c10::DeviceIndex>(CurrentDevice()));
  }

  void setDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kSim);
    if (d.index() < 0) return;
    CheckDeviceIndex(d.index());
    ANYDEV_TORCH_CHECK(g_api->set_device(ANYDEV_SIM, d.index()), "set_device");
  }

  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0) g_api->set_device(ANYDEV_SIM, d.index());
  }

  c10::Stream getStream(c10::Device d) const override {
    const int device = d.index() < 0 ? CurrentDevice() : d.index();
    int64_t id = 0;
    ANYDEV_TORCH_CHECK(g_api->current_stream(ANYDEV_SIM, device, &id), "current_stream");
    return MakeStream(device, id);
  }

  c10::Stream getDefaultStream(c10::Device d) const override {
    return MakeStream(d.index() < 0 ? CurrentDevice() : d.index(), 0);
  }

  c10::Stream getStreamFromGlobalPool(c10::Device d, bool high_priority) const override {
    int least = 0, greatest = 0;
    ANYDEV_TORCH_CHECK(g_api->stream_priority_range(ANYDEV_SIM, &least, &greatest), "stream");
    return getNewStream(d, high_priority ? greatest : least);
  }

  c10::Stream getNewStream(c10::Device d, int priority) const override {
    CheckUsable();
    const int device = d.index() < 0 ? CurrentDevice() : d.index();
    CheckDeviceIndex(device);
    int64_t id = 0;
    ANYDEV_TORCH_CHECK(g_api->new_stream(ANYDEV_SIM, device, priority, &id), "new stream");
    return MakeStream(device, id);
  }

  c10::Stream exchangeStream(c10::Stream s) const override {
    const c10::Stream previous = getStream(s.device());
    ANYDEV_TORCH_CHECK(g_api->set_current_stream(ANYDEV_SIM, s.device_index(), s.id()),
                       "set_stream");
    return previous;
  }

  void destroyEvent(void* event, const c10::DeviceIndex device) const noexcept override {
    if (event == nullptr || g_bad_fork.load(std::memory_order_relaxed)) return;
    g_api->event_destroy(ANYDEV_SIM, device < 0 ? 0 : device, event);
  }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device == -1 || device == stream.device_index(), "Event device index ",
                static_cast<int>(device), " does not match recording stream's device index ",
                static_cast<int>(stream.device_index()), ".");
    CheckUsable();
    if (*event == nullptr) {
      ANYDEV_TORCH_CHECK(g_api->event_create(ANYDEV_SIM, stream.device_index(),
                                             flag == c10::EventFlag::BACKEND_DEFAULT ? 1 : 0,
                                             event),
                         "event");
    }
    ANYDEV_TORCH_CHECK(
        g_api->event_record(ANYDEV_SIM, *event, stream.device_index(), stream.id()), "record");
  }

  void block(void* event, const c10::Stream& stream) const override {
    if (event == nullptr) return;
    CheckUsable();
    ANYDEV_TORCH_CHECK(g_api->event_block(ANYDEV_SIM, event, stream.device_index(), stream.id()),
                       "wait");
  }

  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    CheckUsable();
    int done = 0;
    ANYDEV_TORCH_CHECK(g_api->event_query(ANYDEV_SIM, event, &done), "query");
    return done != 0;
  }

  c10::DeviceIndex deviceCount() const noexcept override {
    return static_cast<c10::DeviceIndex>(g_device_count);
  }

  c10::DeviceCapability getDeviceCapability(c10::Device) const override {
    // The CPU kernels run every operator, so every dtype is supported.
    return c10::DeviceCapability();
  }

  bool queryStream(const c10::Stream& stream) const override {
    CheckUsable();
    int done = 0;
    ANYDEV_TORCH_CHECK(g_api->stream_query(ANYDEV_SIM, stream.device_index(), stream.id(), &done),
                       "query");
    return done != 0;
  }

  void synchronizeStream(const c10::Stream& stream) const override {
    CheckUsable();
    ANYDEV_TORCH_CHECK(
        g_api->stream_synchronize(ANYDEV_SIM, stream.device_index(), stream.id()), "synchronize");
    ReleaseFinishedCopies();
  }

  void synchronizeEvent(void* event) const override {
    if (event == nullptr) return;
    CheckUsable();
    ANYDEV_TORCH_CHECK(g_api->event_synchronize(ANYDEV_SIM, event), "synchronize");
  }

  void synchronizeDevice(const c10::DeviceIndex device) const override {
    CheckUsable();
    ANYDEV_TORCH_CHECK(g_api->device_synchronize(ANYDEV_SIM, device), "synchronize");
    ReleaseFinishedCopies();
  }

  void recordDataPtrOnStream(const c10::DataPtr& data, const c10::Stream& stream) const override;

  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start != nullptr && end != nullptr,
                "Both events must be recorded before calculating elapsed time.");
    CheckUsable();
    double ms = 0;
    ANYDEV_TORCH_CHECK(g_api->event_elapsed_ms(ANYDEV_SIM, start, end, &ms), "elapsed_time");
    return ms;
  }
};

// --- the caching allocator -----------------------------------------------------

// Frees device memory of sim:D. A DataPtr's deleter gets only its context,
// so each device has its own deleter function.
template <int D>
void DeleteOn(void* ptr) {
  // Note [Fork safety]: in a bad fork the allocator's state may be locked by a
  // thread the child does not have; the memory is leaked instead.
  if (ptr == nullptr || g_bad_fork.load(std::memory_order_relaxed)) return;
  if (g_api->raw_free(ANYDEV_SIM, D, ptr) != ANYDEV_OK) {
    std::fprintf(stderr, "anydev sim: %s\n", g_api->last_error(nullptr));
  }
}

template <size_t... I>
constexpr std::array<c10::DeleterFnPtr, sizeof...(I)> MakeDeleters(std::index_sequence<I...>) {
  return {&DeleteOn<static_cast<int>(I)>...};
}
constexpr int kMaxDevices = 64;  // anydev's kMaxDevicesPerType
constexpr std::array<c10::DeleterFnPtr, kMaxDevices> kDeleters =
    MakeDeleters(std::make_index_sequence<kMaxDevices>());

bool IsSimDeleter(c10::DeleterFnPtr deleter) {
  for (c10::DeleterFnPtr d : kDeleters) {
    if (d == deleter) return true;
  }
  return false;
}

c10::DataPtr AllocateOn(int device, size_t nbytes) {
  CheckUsable();
  void* ptr = nullptr;
  const AnydevStatus s = g_api->raw_alloc(ANYDEV_SIM, device, nbytes, &ptr);
  if (s != ANYDEV_OK) ThrowStatus(s, "allocate");
  return {ptr, ptr, kDeleters[static_cast<size_t>(device)],
          c10::Device(kSim, static_cast<c10::DeviceIndex>(device))};
}

void CopyHostMemory(void* dst, const void* src, size_t n) {
  if (n > 0) std::memcpy(dst, src, n);
}

// The allocator a sim storage holds: allocates on its own device, whatever
// the current one (a storage resized later stays on its device).
class FixedDeviceAllocator final : public c10::Allocator {
 public:
  void set_device(int device) { device_ = device; }
  c10::DataPtr allocate(size_t nbytes) override { return AllocateOn(device_, nbytes); }
  void copy_data(void* dst, const void* src, size_t n) const override {
    CopyHostMemory(dst, src, n);
  }

 private:
  int device_ = 0;
};
std::array<FixedDeviceAllocator, kMaxDevices> g_fixed_allocators;

// The allocator PyTorch sees for PrivateUse1 (c10::GetAllocator,
// torch.accelerator.memory_*): the current device's.
class SimDeviceAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override { return AllocateOn(CurrentDevice(), nbytes); }
  void copy_data(void* dst, const void* src, size_t n) const override {
    CopyHostMemory(dst, src, n);
  }
  bool initialized() override { return g_api != nullptr; }

  void emptyCache(c10::MempoolId_t) override {
    CheckUsable();
    ANYDEV_TORCH_CHECK(g_api->empty_cache(ANYDEV_SIM, -1), "empty_cache");
  }

  void recordStream(const c10::DataPtr& data, c10::Stream stream) override {
    if (data.get() == nullptr || !IsSimDeleter(data.get_deleter())) return;
    CheckUsable();
    ANYDEV_TORCH_CHECK(
        g_api->record_stream(ANYDEV_SIM, data.device().index(), data.get(), stream.id()),
        "record_stream");
  }

  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    CheckUsable();
    AnydevDeviceStats s{};
    ANYDEV_TORCH_CHECK(g_api->memory_stats(ANYDEV_SIM, device, &s), "memory_stats");
    c10::CachingDeviceAllocator::DeviceStats out;
    auto copy = [](const AnydevStat& from, c10::CachingAllocator::Stat& to) {
      to.current = from.current;
      to.peak = from.peak;
      to.allocated = from.allocated;
      to.freed = from.freed;
    };
    auto copy3 = [&copy](const AnydevStat (&from)[3], c10::CachingAllocator::StatArray& to) {
      for (size_t i = 0; i < 3; ++i) copy(from[i], to[i]);
    };
    copy3(s.allocation, out.allocation);
    copy3(s.segment, out.segment);
    copy3(s.active, out.active);
    copy3(s.inactive_split, out.inactive_split);
    copy3(s.allocated_bytes, out.allocated_bytes);
    copy3(s.reserved_bytes, out.reserved_bytes);
    copy3(s.active_bytes, out.active_bytes);
    copy3(s.inactive_split_bytes, out.inactive_split_bytes);
    copy3(s.requested_bytes, out.requested_bytes);
    out.num_alloc_retries = s.num_alloc_retries;
    out.num_ooms = s.num_ooms;
    copy(s.oversize_allocations, out.oversize_allocations);
    copy(s.oversize_segments, out.oversize_segments);
    out.num_sync_all_streams = s.num_sync_all_streams;
    out.num_device_alloc = s.num_device_alloc;
    out.num_device_free = s.num_device_free;
    out.max_split_size = s.max_split_size;
    return out;
  }

  void resetAccumulatedStats(c10::DeviceIndex device) override {
    CheckUsable();
    ANYDEV_TORCH_CHECK(g_api->reset_accumulated_stats(ANYDEV_SIM, device),
                       "reset_accumulated_memory_stats");
  }

  void resetPeakStats(c10::DeviceIndex device) override {
    CheckUsable();
    ANYDEV_TORCH_CHECK(g_api->reset_peak_stats(ANYDEV_SIM, device), "reset_peak_memory_stats");
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    CheckUsable();
    size_t free_bytes = 0, total = 0;
    ANYDEV_TORCH_CHECK(g_api->memory_info(ANYDEV_SIM, device, &free_bytes, &total),
                       "get_memory_info");
    return {free_bytes, total};
  }
};
SimDeviceAllocator g_device_allocator;

// --- pinned host memory ----------------------------------------------------------

void HostDelete(void* ptr) {
  if (ptr == nullptr || g_bad_fork.load(std::memory_order_relaxed)) return;
  if (g_api->host_free(ptr) != ANYDEV_OK) {
    std::fprintf(stderr, "anydev sim: %s\n", g_api->last_error(nullptr));
  }
}

// Pinned memory for sim (tensor.pin_memory(), DataLoader(pin_memory=True)):
// anydev's host caching allocator. Asynchronous copies keep their host
// storage alive themselves (KeepAliveUntilStreamDone), so record_event has
// nothing to do.
class SimHostAllocator final : public at::HostAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return {nullptr, nullptr, &HostDelete, c10::Device(c10::kCPU)};
    CheckUsable();
    void* ptr = nullptr;
    const AnydevStatus s = g_api->host_alloc(ANYDEV_SIM, nbytes, &ptr);
    if (s != ANYDEV_OK) ThrowStatus(s, "pin_memory");
    return {ptr, ptr, &HostDelete, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &HostDelete; }
  void copy_data(void* dst, const void* src, size_t n) const override {
    CopyHostMemory(dst, src, n);
  }
  bool record_event(void*, void*, c10::Stream) override { return true; }
  void empty_cache() override {
    CheckUsable();
    ANYDEV_TORCH_CHECK(g_api->empty_host_cache(), "empty_host_cache");
  }
  at::HostStats get_stats() override {
    AnydevHostStats s{};
    g_api->host_stats(&s);
    at::HostStats out;
    // anydev counts bytes: handed out (active) and obtained (active + cached).
    out.active_bytes.current = s.allocated_bytes.current;
    out.active_bytes.peak = s.allocated_bytes.peak;
    out.active_bytes.allocated = s.allocated_bytes.allocated;
    out.active_bytes.freed = s.allocated_bytes.freed;
    out.allocated_bytes.current = s.reserved_bytes.current;
    out.allocated_bytes.peak = s.reserved_bytes.peak;
    out.allocated_bytes.allocated = s.reserved_bytes.allocated;
    out.allocated_bytes.freed = s.reserved_bytes.freed;
    out.num_host_alloc = s.num_host_alloc;
    out.num_host_free = s.num_host_free;
    return out;
  }
  void reset_accumulated_stats() override {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "sim: anydev's pinned host allocator keeps no "
                                       "resettable statistics");
  }
  void reset_peak_stats() override {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "sim: anydev's pinned host allocator keeps no "
                                       "resettable statistics");
  }
};
SimHostAllocator g_host_allocator;

// --- generators ------------------------------------------------------------------

// Note [Sim generators]: random operators run on PyTorch's CPU kernels, which
// accept only CPUGeneratorImpl (at::check_generator). A sim generator is
// therefore a device-typed shell around its own CPU generator: the fallback
// passes that CPU generator to the kernel (for an explicit sim generator, and
// for the device's default one when none is given). So each sim device has
// its own random state, as a CUDA device does, and torch.manual_seed(s)
// makes sim produce the same numbers as the CPU does from the same seed.
class SimGenerator final : public c10::GeneratorImpl {
 public:
  SimGenerator(c10::DeviceIndex device, c10::intrusive_ptr<at::CPUGeneratorImpl> cpu)
      : c10::GeneratorImpl(c10::Device(kSim, device),
                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
        cpu_(std::move(cpu)) {}

  void set_current_seed(uint64_t seed) override {
    std::lock_guard<std::mutex> lock(cpu_->mutex_);
    cpu_->set_current_seed(seed);
  }
  void set_offset(uint64_t offset) override {
    std::lock_guard<std::mutex> lock(cpu_->mutex_);
    cpu_->set_offset(offset);
  }
  uint64_t get_offset() const override {
    std::lock_guard<std::mutex> lock(cpu_->mutex_);
    return cpu_->get_offset();
  }
  uint64_t current_seed() const override {
    std::lock_guard<std::mutex> lock(cpu_->mutex_);
    return cpu_->current_seed();
  }
  uint64_t seed() override {
    std::lock_guard<std::mutex> lock(cpu_->mutex_);
    return cpu_->seed();
  }
  void set_state(const c10::TensorImpl& state) override {
    std::lock_guard<std::mutex> lock(cpu_->mutex_);
    cpu_->set_state(state);
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    std::lock_guard<std::mutex> lock(cpu_->mutex_);
    return cpu_->get_state();
  }

  at::Generator cpu() const { return at::Generator(cpu_); }

 private:
  SimGenerator* clone_impl() const override {
    std::lock_guard<std::mutex> lock(cpu_->mutex_);
    // GeneratorImpl::clone (CPUGeneratorImpl's own clone returns a shared_ptr).
    auto copy = c10::static_intrusive_pointer_cast<at::CPUGeneratorImpl>(
        static_cast<const c10::GeneratorImpl&>(*cpu_).clone());
    return new SimGenerator(device().index(), std::move(copy));
  }

  c10::intrusive_ptr<at::CPUGeneratorImpl> cpu_;
};

std::vector<at::Generator>* g_default_generators = nullptr;  // one per device, leaked

at::Generator NewSimGenerator(int device, uint64_t seed) {
  return at::make_generator<SimGenerator>(static_cast<c10::DeviceIndex>(device),
                                          c10::make_intrusive<at::CPUGeneratorImpl>(seed));
}

const at::Generator& DefaultGenerator(int device) {
  if (device < 0) device = CurrentDevice();
  CheckDeviceIndex(device);
  return (*g_default_generators)[static_cast<size_t>(device)];
}

// --- the hooks -----------------------------------------------------------------------

class SimHooks final : public at::PrivateUse1HooksInterface {
 public:
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return g_device_count > 0; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  void init() const override {}
  c10::DeviceIndex deviceCount() const override {
    return static_cast<c10::DeviceIndex>(g_device_count);
  }
  void setCurrentDevice(c10::DeviceIndex device) const override {
    CheckDeviceIndex(device);
    ANYDEV_TORCH_CHECK(g_api->set_device(ANYDEV_SIM, device), "set_device");
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return static_cast<c10::DeviceIndex>(CurrentDevice());
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    const c10::DeviceIndex old = getCurrentDevice();
    if (device >= 0 && device != old) setCurrentDevice(device);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return exchangeDevice(device);
  }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override {
    return DefaultGenerator(device);
  }
  at::Generator getNewGenerator(c10::DeviceIndex device) const override {
    const int d = device < 0 ? CurrentDevice() : device;
    CheckDeviceIndex(d);
    return NewSimGenerator(d, c10::default_rng_seed_val);
  }
  at::Device getDeviceFromPtr(void*) const override {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "sim cannot tell a device from a pointer; pass the "
                                       "device explicitly");
  }
  bool isPinnedPtr(const void* data) const override {
    return data != nullptr && g_api != nullptr && !g_bad_fork.load(std::memory_order_relaxed) &&
           g_api->host_block_size(data) > 0;
  }
  at::Allocator* getPinnedMemoryAllocator() const override { return &g_host_allocator; }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t nbytes) const override {
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable");
    const int device = impl->device().index() < 0 ? CurrentDevice() : impl->device().index();
    WaitForCurrentStream(device);
    c10::DataPtr fresh = AllocateOn(device, nbytes);
    CopyHostMemory(fresh.get(), impl->data(), std::min(nbytes, impl->nbytes()));
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(nbytes);
  }
};

}  // namespace

void SimGuardImpl::recordDataPtrOnStream(const c10::DataPtr& data,
                                         const c10::Stream& stream) const {
  g_device_allocator.recordStream(data, stream);
}

c10::Allocator* DeviceAllocatorFor(int device) {
  return &g_fixed_allocators[static_cast<size_t>(device)];
}

at::Generator DefaultCpuGenerator(int device) {
  return static_cast<SimGenerator*>(DefaultGenerator(device).unsafeGetGeneratorImpl())->cpu();
}

std::optional<at::Generator> CpuGeneratorOf(const at::Generator& gen) {
  if (!gen.defined() || gen.device().type() != kSim) return std::nullopt;
  auto* sim = dynamic_cast<SimGenerator*>(gen.unsafeGetGeneratorImpl());
  if (sim == nullptr) return std::nullopt;
  return sim->cpu();
}

const at::Generator& DefaultGeneratorFor(int device) { return DefaultGenerator(device); }

namespace {

void OnForkChild() {
  if (g_used.load(std::memory_order_relaxed)) g_bad_fork.store(true, std::memory_order_relaxed);
}

void CopyError(const std::string& message, char* error, size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  std::snprintf(error, error_size, "%s", message.c_str());
}

// Checks that nothing else holds PyTorch's PrivateUse1 slot.
std::string PrivateUse1Taken() {
  if (c10::impl::hasDeviceGuardImpl(kSim)) return "a device guard";
  if (at::isPrivateUse1HooksRegistered()) return "its hooks (at::PrivateUse1HooksInterface)";
  if (c10::Dispatcher::singleton().hasBackendFallbackForDispatchKey(
          c10::DispatchKey::PrivateUse1)) {
    return "a backend fallback";
  }
  return "";
}

}  // namespace
}  // namespace anydev_torch

extern "C" {

// Registers the sim backend in the running PyTorch: `api` is anydev's C ABI
// table (anydev_c_api()), `device_count` the number of sim devices anydev
// probed. Returns 0, or 1 with a message in `error` (nothing is registered
// then). A second call with the same table and count returns 0.
__attribute__((visibility("default"))) int anydev_torch_sim_init(const AnydevCApi* api,
                                                                 int device_count, char* error,
                                                                 size_t error_size) {
  using namespace anydev_torch;
  try {
    if (api == nullptr || api->abi_version != ANYDEV_C_ABI_VERSION ||
        api->struct_size < sizeof(AnydevCApi)) {
      CopyError("anydev's C ABI does not match the one this sim backend was built for (ABI " +
                    std::to_string(ANYDEV_C_ABI_VERSION) + "); rebuild it",
                error, error_size);
      return 1;
    }
    if (g_api != nullptr) {
      if (g_api == api && g_device_count == device_count) return 0;
      CopyError("the sim backend is already registered with " + std::to_string(g_device_count) +
                    " devices",
                error, error_size);
      return 1;
    }
    if (device_count < 1 || device_count > kMaxDevices) {
      CopyError("sim device count must be in 1..64, got " + std::to_string(device_count), error,
                error_size);
      return 1;
    }
    if (std::string taken = PrivateUse1Taken(); !taken.empty()) {
      CopyError("PyTorch's PrivateUse1 backend is already taken: something registered " + taken +
                    " for it",
                error, error_size);
      return 1;
    }
    g_api = api;
    g_device_count = device_count;
    for (int i = 0; i < kMaxDevices; ++i) g_fixed_allocators[static_cast<size_t>(i)].set_device(i);
    g_default_generators = new std::vector<at::Generator>();
    for (int i = 0; i < device_count; ++i) {
      g_default_generators->push_back(NewSimGenerator(i, c10::default_rng_seed_val));
    }
    static c10::impl::DeviceGuardImplRegistrar guard_registrar(kSim, new SimGuardImpl());
    c10::SetAllocator(kSim, &g_device_allocator);
    at::setHostAllocator(kSim, &g_host_allocator);
    at::RegisterPrivateUse1HooksInterface(new SimHooks());
    RegisterKernels();
    RegisterAutocast();
    pthread_atfork(nullptr, nullptr, &OnForkChild);
    return 0;
  } catch (const c10::Error& e) {
    CopyError(std::string("registering the sim backend failed: ") + e.what_without_backtrace(),
              error, error_size);
    return 1;
  } catch (const std::exception& e) {
    CopyError(std::string("registering the sim backend failed: ") + e.what(), error, error_size);
    return 1;
  }
}

// 1 in a process forked after its parent used sim (Note [Fork safety]).
__attribute__((visibility("default"))) int anydev_torch_sim_in_bad_fork(void) {
  return anydev_torch::g_bad_fork.load(std::memory_order_relaxed) ? 1 : 0;
}

}  // extern "C"
