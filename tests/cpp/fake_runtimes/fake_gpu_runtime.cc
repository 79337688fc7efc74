// fake_gpu_runtime: a stand-in for libcudart (built with FAKE_CUDA) or
// libamdhip64 (FAKE_HIP) made of host memory and host threads, exporting the
// entry points anydev's shared GPU backend resolves, with the runtimes' C ABI
// (errors are ints with the vendors' numbers, handles are opaque pointers).
//
// It lets the CUDA and HIP backends run the accelerator conformance suite on a
// machine without a GPU: ANYDEV_CUDA_LIBRARY=.../libanydev_fake_cudart.so
// ANYDEV_ACCELERATOR=cuda. It models what the backend relies on:
//   * the current device is per thread, starts at 0, and the null stream
//     means "the current device's default stream" (so a backend that forgets
//     to switch devices for the default stream queues on the wrong device);
//   * each stream runs its work in order on its own thread; events stamp the
//     time their stream reaches them; a wait captures the event's last record;
//   * a query of unfinished work answers "not ready" (600) and records it as
//     the last error, as the real runtimes do.
//   * stream capture: while a pool stream captures, work queued on it is
//     recorded, not run; querying or synchronising it is
//     cudaErrorStreamCaptureUnsupported (900); a launched graph runs its
//     items in order on the launching stream.
// It is not a GPU: no kernels, and memory is host memory.
//
// Environment: FAKE_GPU_DEVICES (default 2), FAKE_GPU_FAIL=<error> makes
// GetDeviceCount fail with that error (35: insufficient driver).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(FAKE_CUDA)
#define FAKE_API(name) cuda##name
#define FAKE_PREFIX "cuda"
#elif defined(FAKE_HIP)
#define FAKE_API(name) hip##name
#define FAKE_PREFIX "hip"
#else
#error "build with -DFAKE_CUDA or -DFAKE_HIP"
#endif

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kMemoryAllocation = 2;
constexpr int kNoDevice = 100;
constexpr int kInvalidDevice = 101;
constexpr int kInvalidHandle = 400;
constexpr int kNotReady = 600;
constexpr int kCaptureUnsupported = 900;
constexpr int kCaptureInvalidated = 901;
constexpr size_t kMemoryPerDevice = size_t{256} << 20;

using Clock = std::chrono::steady_clock;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

thread_local int tls_device = 0;
thread_local int tls_last_error = kSuccess;

int Fail(int error) {
  tls_last_error = error;
  return error;
}

using Tasks = std::vector<std::function<void()>>;

class FakeStream {
 public:
  explicit FakeStream(int device) : device_(device) {
    std::thread([this] { Run(); }).detach();  // lives as long as the process
  }

  uint64_t Enqueue(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mu_);
    if (capture_ != nullptr) {
      capture_->push_back(std::move(task));
      return 0;
    }
    queue_.push_back(std::move(task));
    cv_.notify_all();
    return ++enqueued_;
  }
  bool Reached(uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu_);
    return completed_ >= seq;
  }
  void WaitFor(uint64_t seq) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return completed_ >= seq; });
  }
  uint64_t Enqueued() {
    std::lock_guard<std::mutex> lock(mu_);
    return enqueued_;
  }
  int device() const { return device_; }

  bool Capturing() {
    std::lock_guard<std::mutex> lock(mu_);
    return capture_ != nullptr;
  }
  bool BeginCapture() {
    std::lock_guard<std::mutex> lock(mu_);
    if (capture_ != nullptr) return false;
    capture_ = std::make_unique<Tasks>();
    return true;
  }
  std::unique_ptr<Tasks> EndCapture() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(capture_);
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
      std::lock_guard<std::mutex> lock(mu_);
      ++completed_;
      cv_.notify_all();
    }
  }

  const int device_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  std::unique_ptr<Tasks> capture_;
};

struct Mark {
  FakeStream* stream;
  uint64_t seq;
  std::atomic<int64_t> reached_ns{-1};
};

struct FakeEvent {
  int device;
  bool timing;
  std::mutex mu;
  std::shared_ptr<Mark> mark;
  std::shared_ptr<Mark> Current() {
    std::lock_guard<std::mutex> lock(mu);
    return mark;
  }
};

struct Device {
  FakeStream* default_stream = nullptr;
  std::vector<FakeStream*> streams;  // every stream, for DeviceSynchronize
  size_t used = 0;
};

struct State {
  int count = 2;
  int fail = 0;
  std::mutex mu;
  std::vector<Device> devices;
  std::map<uintptr_t, std::pair<size_t, int>> blocks;  // base -> (size, device)
};

State& S() {
  static State* state = [] {
    auto* s = new State();
    if (const char* n = std::getenv("FAKE_GPU_DEVICES")) s->count = std::atoi(n);
    if (const char* f = std::getenv("FAKE_GPU_FAIL")) s->fail = std::atoi(f);
    s->devices.resize(static_cast<size_t>(s->count > 0 ? s->count : 0));
    for (size_t i = 0; i < s->devices.size(); ++i) {
      s->devices[i].default_stream = new FakeStream(static_cast<int>(i));
      s->devices[i].streams.push_back(s->devices[i].default_stream);
    }
    return s;
  }();
  return *state;
}

// The null stream is the calling thread's current device's default stream.
FakeStream* Resolve(void* stream) {
  if (stream != nullptr) return static_cast<FakeStream*>(stream);
  return S().devices[static_cast<size_t>(tls_device)].default_stream;
}

const char* ErrorName(int e) {
  switch (e) {
    case kSuccess: return FAKE_PREFIX "Success";
    case kInvalidValue: return FAKE_PREFIX "ErrorInvalidValue";
    case kMemoryAllocation: return FAKE_PREFIX "ErrorMemoryAllocation";
    case 35: return FAKE_PREFIX "ErrorInsufficientDriver";
    case kNoDevice: return FAKE_PREFIX "ErrorNoDevice";
    case kInvalidDevice: return FAKE_PREFIX "ErrorInvalidDevice";
    case kInvalidHandle: return FAKE_PREFIX "ErrorInvalidResourceHandle";
    case kNotReady: return FAKE_PREFIX "ErrorNotReady";
    case kCaptureUnsupported: return FAKE_PREFIX "ErrorStreamCaptureUnsupported";
    case kCaptureInvalidated: return FAKE_PREFIX "ErrorStreamCaptureInvalidated";
    default: return FAKE_PREFIX "ErrorUnknown";
  }
}

}  // namespace

FAKE_EXPORT const char* FAKE_API(GetErrorName)(int e) { return ErrorName(e); }
FAKE_EXPORT const char* FAKE_API(GetErrorString)(int e) {
  return e == 35 ? "fake: driver version is insufficient" : "fake runtime error";
}
FAKE_EXPORT int FAKE_API(GetLastError)() {
  const int e = tls_last_error;
  tls_last_error = kSuccess;
  return e;
}
FAKE_EXPORT int FAKE_API(DriverGetVersion)(int* v) {
  *v = S().fail == 35 ? 12040 : 13000;  // an old driver goes with "insufficient driver"
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(RuntimeGetVersion)(int* v) {
  *v = 13000;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(GetDeviceCount)(int* n) {
  if (S().fail != 0) return Fail(S().fail);
  if (S().count <= 0) return Fail(kNoDevice);
  *n = S().count;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(GetDevice)(int* d) {
  *d = tls_device;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(SetDevice)(int d) {
  if (d < 0 || d >= S().count) return Fail(kInvalidDevice);
  tls_device = d;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(DeviceGetAttribute)(int* value, int attr, int device) {
  if (device < 0 || device >= S().count) return Fail(kInvalidDevice);
  *value = attr;  // any number will do; the CUDA tests check a few below
#if defined(FAKE_CUDA)
  if (attr == 16) *value = 132;  // cudaDevAttrMultiProcessorCount
  if (attr == 75) *value = 9;    // cudaDevAttrComputeCapabilityMajor
  if (attr == 76) *value = 0;    // cudaDevAttrComputeCapabilityMinor
  if (attr == 33) *value = 0x10 + device;  // cudaDevAttrPciBusId
#endif
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(DeviceGetPCIBusId)(char* out, int len, int device) {
  std::snprintf(out, static_cast<size_t>(len), "0000:%02x:00.0", 0x10 + device);
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(DeviceGetStreamPriorityRange)(int* least, int* greatest) {
  *least = 0;
  *greatest = -5;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(DeviceSynchronize)() {
  std::vector<FakeStream*> streams;
  {
    std::lock_guard<std::mutex> lock(S().mu);
    streams = S().devices[static_cast<size_t>(tls_device)].streams;
  }
  for (FakeStream* s : streams) s->WaitFor(s->Enqueued());
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(StreamCreateWithPriority)(void** stream, unsigned, int) {
  auto* s = new FakeStream(tls_device);  // on the current device, as the runtime
  std::lock_guard<std::mutex> lock(S().mu);
  S().devices[static_cast<size_t>(tls_device)].streams.push_back(s);
  *stream = s;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(StreamQuery)(void* stream) {
  FakeStream* s = Resolve(stream);
  if (s->Capturing()) return Fail(kCaptureUnsupported);
  return s->Reached(s->Enqueued()) ? kSuccess : Fail(kNotReady);
}
FAKE_EXPORT int FAKE_API(StreamSynchronize)(void* stream) {
  FakeStream* s = Resolve(stream);
  if (s->Capturing()) return Fail(kCaptureUnsupported);
  s->WaitFor(s->Enqueued());
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(StreamWaitEvent)(void* stream, void* event, unsigned) {
  std::shared_ptr<Mark> mark = static_cast<FakeEvent*>(event)->Current();
  if (!mark) return kSuccess;
  FakeStream* waiter = Resolve(stream);
  if (waiter != mark->stream) {
    waiter->Enqueue([mark] { mark->stream->WaitFor(mark->seq); });
  }
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(EventCreateWithFlags)(void** event, unsigned flags) {
  auto* e = new FakeEvent();
  e->device = tls_device;
  e->timing = (flags & 2u) == 0;  // cudaEventDisableTiming == hipEventDisableTiming == 2
  *event = e;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(EventDestroy)(void* event) {
  delete static_cast<FakeEvent*>(event);
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(EventRecord)(void* event, void* stream) {
  auto* e = static_cast<FakeEvent*>(event);
  FakeStream* s = Resolve(stream);
  if (s->device() != e->device) return Fail(kInvalidHandle);  // as the runtime: same device
  auto mark = std::make_shared<Mark>();
  mark->stream = s;
  mark->seq = s->Enqueue([mark] { mark->reached_ns.store(NowNs()); });
  std::lock_guard<std::mutex> lock(e->mu);
  e->mark = std::move(mark);
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(EventQuery)(void* event) {
  std::shared_ptr<Mark> mark = static_cast<FakeEvent*>(event)->Current();
  return !mark || mark->stream->Reached(mark->seq) ? kSuccess : Fail(kNotReady);
}
FAKE_EXPORT int FAKE_API(EventSynchronize)(void* event) {
  std::shared_ptr<Mark> mark = static_cast<FakeEvent*>(event)->Current();
  if (mark) mark->stream->WaitFor(mark->seq);
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(EventElapsedTime)(float* ms, void* start, void* end) {
  auto* a = static_cast<FakeEvent*>(start);
  auto* b = static_cast<FakeEvent*>(end);
  if (!a->timing || !b->timing) return Fail(kInvalidHandle);
  std::shared_ptr<Mark> ma = a->Current(), mb = b->Current();
  if (!ma || !mb) return Fail(kInvalidHandle);
  const int64_t ta = ma->reached_ns.load(), tb = mb->reached_ns.load();
  if (ta < 0 || tb < 0) return Fail(kNotReady);
  *ms = static_cast<float>(static_cast<double>(tb - ta) / 1e6);
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(Malloc)(void** ptr, size_t nbytes) {
  std::lock_guard<std::mutex> lock(S().mu);
  Device& d = S().devices[static_cast<size_t>(tls_device)];
  if (nbytes > kMemoryPerDevice - d.used) return Fail(kMemoryAllocation);
  void* p = std::aligned_alloc(256, (nbytes + 255) / 256 * 256);
  if (p == nullptr) return Fail(kMemoryAllocation);
  d.used += nbytes;
  S().blocks[reinterpret_cast<uintptr_t>(p)] = {nbytes, tls_device};
  *ptr = p;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(Free)(void* ptr) {
  if (ptr == nullptr) return kSuccess;
  FAKE_API(DeviceSynchronize)();  // as the runtime's implicit synchronisation
  std::lock_guard<std::mutex> lock(S().mu);
  auto it = S().blocks.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == S().blocks.end()) return Fail(kInvalidValue);
  S().devices[static_cast<size_t>(it->second.second)].used -= it->second.first;
  S().blocks.erase(it);
  std::free(ptr);
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(MemGetInfo)(size_t* free_bytes, size_t* total) {
  std::lock_guard<std::mutex> lock(S().mu);
  *total = kMemoryPerDevice;
  *free_bytes = kMemoryPerDevice - S().devices[static_cast<size_t>(tls_device)].used;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(MemcpyAsync)(void* dst, const void* src, size_t n, int, void* stream) {
  Resolve(stream)->Enqueue([dst, src, n] { std::memmove(dst, src, n); });
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(MemsetAsync)(void* dst, int value, size_t n, void* stream) {
  Resolve(stream)->Enqueue([dst, value, n] { std::memset(dst, value, n); });
  return kSuccess;
}

// --- stream capture ----------------------------------------------------------
// A graph is the captured items; an executable graph shares them.
struct FakeGraph {
  std::shared_ptr<const Tasks> tasks;
};

FAKE_EXPORT int FAKE_API(StreamBeginCapture)(void* stream, int) {
  if (stream == nullptr) return Fail(kCaptureUnsupported);  // the legacy stream cannot capture
  return static_cast<FakeStream*>(stream)->BeginCapture() ? kSuccess : Fail(kInvalidValue);
}
FAKE_EXPORT int FAKE_API(StreamEndCapture)(void* stream, void** graph) {
  if (stream == nullptr) return Fail(kInvalidValue);
  std::unique_ptr<Tasks> tasks = static_cast<FakeStream*>(stream)->EndCapture();
  if (tasks == nullptr) return Fail(kCaptureInvalidated);
  *graph = new FakeGraph{std::shared_ptr<const Tasks>(std::move(tasks))};
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(StreamIsCapturing)(void* stream, int* status) {
  *status = stream != nullptr && static_cast<FakeStream*>(stream)->Capturing() ? 1 : 0;
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(GraphInstantiateWithFlags)(void** exec, void* graph, unsigned long long) {
  if (graph == nullptr) return Fail(kInvalidValue);
  *exec = new FakeGraph{static_cast<FakeGraph*>(graph)->tasks};
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(GraphLaunch)(void* exec, void* stream) {
  if (exec == nullptr) return Fail(kInvalidValue);
  std::shared_ptr<const Tasks> tasks = static_cast<FakeGraph*>(exec)->tasks;
  Resolve(stream)->Enqueue([tasks] {
    for (const auto& task : *tasks) task();
  });
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(GraphDestroy)(void* graph) {
  delete static_cast<FakeGraph*>(graph);
  return kSuccess;
}
FAKE_EXPORT int FAKE_API(GraphExecDestroy)(void* exec) {
  delete static_cast<FakeGraph*>(exec);
  return kSuccess;
}

#if defined(FAKE_CUDA)
FAKE_EXPORT int cudaGraphDebugDotPrint(void* graph, const char* path, unsigned) {
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) return Fail(kInvalidValue);
  std::fprintf(f, "digraph fake_cuda_graph {\n");
  const size_t n = static_cast<FakeGraph*>(graph)->tasks->size();
  for (size_t i = 0; i < n; ++i) std::fprintf(f, "  n%zu [label=\"node %zu\"];\n", i, i);
  std::fprintf(f, "}\n");
  std::fclose(f);
  return kSuccess;
}
FAKE_EXPORT int cudaLaunchHostFunc(void* stream, void (*fn)(void*), void* arg) {
  Resolve(stream)->Enqueue([fn, arg] { fn(arg); });
  return kSuccess;
}
// Writes name (offset 0), uuid (256) and totalGlobalMem (288): the prefix the
// backend reads; the caller's buffer is larger than any cudaDeviceProp.
FAKE_EXPORT int cudaGetDeviceProperties(void* prop, int device) {
  if (device < 0 || device >= S().count) return Fail(kInvalidDevice);
  auto* bytes = static_cast<unsigned char*>(prop);
  std::snprintf(reinterpret_cast<char*>(bytes), 256, "anydev fake CUDA device %d", device);
  for (int i = 0; i < 16; ++i) bytes[256 + i] = static_cast<unsigned char>(device * 16 + i);
  const size_t total = kMemoryPerDevice;
  std::memcpy(bytes + 288, &total, sizeof(total));
  return kSuccess;
}
// cudaPointerAttributes starts with its memory type: 2 is device memory.
FAKE_EXPORT int cudaPointerGetAttributes(void* attributes, const void*) {
  std::memset(attributes, 0, sizeof(int));
  return kSuccess;  // anything anydev did not allocate is host memory here
}
#else
FAKE_EXPORT int hipStreamAddCallback(void* stream, void (*cb)(void*, int, void*), void* data,
                                     unsigned) {
  Resolve(stream)->Enqueue([stream, cb, data] { cb(stream, kSuccess, data); });
  return kSuccess;
}
FAKE_EXPORT int hipDeviceGetName(char* name, int len, int device) {
  std::snprintf(name, static_cast<size_t>(len), "anydev fake HIP device %d", device);
  return kSuccess;
}
FAKE_EXPORT int hipDeviceTotalMem(size_t* bytes, int) {
  *bytes = kMemoryPerDevice;
  return kSuccess;
}
FAKE_EXPORT int hipMemGetAddressRange(void** base, size_t* size, void* ptr) {
  std::lock_guard<std::mutex> lock(S().mu);
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  auto it = S().blocks.upper_bound(p);
  if (it == S().blocks.begin()) return Fail(kInvalidValue);
  --it;
  if (p >= it->first + it->second.first) return Fail(kInvalidValue);
  *base = reinterpret_cast<void*>(it->first);
  *size = it->second.first;
  return kSuccess;
}
// hipDeviceGetUuid and hipGetDeviceProperties are left out: the backend
// treats them as optional, and this covers that path.
#endif
