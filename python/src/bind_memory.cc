// Device memory: the allocator calls of anydev.accelerator and the top
// namespace, and anydev.Buffer with DLPack 1.0 export.
#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common.h"
#include "internal/errors.h"
#include "internal/graph_capture.h"

namespace anydev::python {
namespace {

// --- DLPack 1.0 (dlpack/dlpack.h, https://github.com/dmlc/dlpack), the
// structures this file exports. The layout is the ABI; names as upstream.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
enum DLDeviceTypeCode : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLROCM = 10,
  kDLOneAPI = 14,
};
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // kDLUInt = 1
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kDLPackFlagIsCopied = uint64_t{1} << 1;
constexpr uint8_t kDLUInt = 1;

// Note [DLPack device of sim memory]: the simulated accelerator's memory is
// host memory, so a sim buffer is exported as kDLCPU device 0: NumPy (which
// accepts only CPU tensors) can consume it, and it really is readable by the
// host. The export first waits for the device, since the host reads it at
// once. Every other type uses its DLPack code and its index, as PyTorch's
// torchDeviceToDLDevice does.
DLDevice DlpackDeviceOf(Device d) {
  switch (d.type()) {
    case DeviceType::kCUDA: return {kDLCUDA, d.index()};
    case DeviceType::kHIP: return {kDLROCM, d.index()};
    case DeviceType::kXPU: return {kDLOneAPI, d.index()};
    case DeviceType::kSim:
    case DeviceType::kCPU: return {kDLCPU, 0};
    case DeviceType::kMPS:          // no backend: no buffer of these types
    case DeviceType::kMeta:         // exists to be exported
    case DeviceType::kPrivateUse1: break;
  }
  return {kDLCPU, 0};
}

// What an exported capsule owns: the device memory (a reference to the
// buffer's storage) or a host copy, and the shape and strides the DLTensor
// points to. Deleted by the consumer, possibly without the GIL: it holds no
// Python object.
struct ExportContext {
  std::shared_ptr<Buffer> buffer;
  std::vector<uint8_t> host;
  int64_t shape[1] = {0};
  int64_t strides[1] = {1};
  DLManagedTensor legacy{};
  DLManagedTensorVersioned versioned{};
};

void DeleteLegacy(DLManagedTensor* self) { delete static_cast<ExportContext*>(self->manager_ctx); }
void DeleteVersioned(DLManagedTensorVersioned* self) {
  delete static_cast<ExportContext*>(self->manager_ctx);
}

// Capsule destructors: a capsule a consumer renamed to "used_*" is theirs.
void LegacyCapsuleDestructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (m == nullptr) {
    PyErr_WriteUnraisable(capsule);
  } else if (m->deleter != nullptr) {
    m->deleter(m);
  }
  PyErr_Restore(type, value, traceback);
}

void VersionedCapsuleDestructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor_versioned")) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* m = static_cast<DLManagedTensorVersioned*>(
      PyCapsule_GetPointer(capsule, "dltensor_versioned"));
  if (m == nullptr) {
    PyErr_WriteUnraisable(capsule);
  } else if (m->deleter != nullptr) {
    m->deleter(m);
  }
  PyErr_Restore(type, value, traceback);
}

[[noreturn]] void ThrowBufferError(const std::string& message) {
  PyErr_SetString(PyExc_BufferError, message.c_str());
  throw py::error_already_set();
}

// --- host memory held by asynchronous copies ------------------------------------

// Note [Host memory of asynchronous copies]: an asynchronous copy from or to a
// Python object reads or writes its memory when the stream gets there, which
// may be after the call returns and the caller has dropped the object. The
// object's buffer export (Py_buffer) is therefore kept, with an event
// recorded after the copy, until the event has completed; the list is
// checked (under the GIL) at every Buffer call. A held export also stops a
// bytearray from being resized under the copy.
struct PendingHost {
  std::unique_ptr<Event> done;
  Py_buffer view;
};
std::vector<PendingHost>* g_pending = nullptr;  // guarded by the GIL

void PollPendingHost() {
  std::vector<PendingHost>& pending = *g_pending;
  for (size_t i = 0; i < pending.size();) {
    absl::StatusOr<bool> done = pending[i].done->Query();
    if (done.ok() && !*done) {
      ++i;
      continue;
    }
    PyBuffer_Release(&pending[i].view);
    if (i + 1 != pending.size()) pending[i] = std::move(pending.back());
    pending.pop_back();
  }
}

// A Py_buffer released on scope exit unless handed to the pending list.
class HostView {
 public:
  HostView(py::handle obj, bool writable, const char* what) {
    const int flags = writable ? (PyBUF_SIMPLE | PyBUF_WRITABLE) : PyBUF_SIMPLE;
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) {
      PyErr_Clear();
      Throw(internal::TypeError(absl::StrCat(
          what, ": expected a ", writable ? "writable " : "",
          "C-contiguous object with the buffer protocol (bytes, bytearray, memoryview, "
          "array.array, a NumPy array), got ",
          std::string(py::str(py::type::of(obj).attr("__name__"))))));
    }
    held_ = true;
  }
  ~HostView() {
    if (held_) PyBuffer_Release(&view_);
  }
  HostView(const HostView&) = delete;
  HostView& operator=(const HostView&) = delete;

  void* data() const { return view_.buf; }
  size_t size() const { return static_cast<size_t>(view_.len); }

  // Keeps the export until the work queued on `stream` so far has finished,
  // or, when a graph captures `stream`, for the graph's life (its replays
  // read and write the memory; Note [Graph memory] in caching_allocator.cc).
  void HoldUntil(const Stream& stream) {
    if (internal::IsCapturing(stream)) {
      std::shared_ptr<void> held(new Py_buffer(view_), [](void* p) {
        auto* view = static_cast<Py_buffer*>(p);
        const PyGILState_STATE gil = PyGILState_Ensure();
        PyBuffer_Release(view);
        PyGILState_Release(gil);
        delete view;
      });
      held_ = false;  // `held` owns the export now
      if (!internal::KeepAliveForCapture(stream, held)) {
        // The capture ended meanwhile (another thread): the copy is queued.
        py::gil_scoped_release release;
        stream.Synchronize().IgnoreError();
      }
      return;
    }
    auto done = std::make_unique<Event>(stream.device());
    if (!done->Record(stream).ok()) {
      // Unreachable for a stream that just took a copy; never let go early.
      py::gil_scoped_release release;
      stream.Synchronize().IgnoreError();
      return;
    }
    g_pending->push_back(PendingHost{std::move(done), view_});
    held_ = false;
  }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

// --- argument conversion ----------------------------------------------------------

// The stream of a host copy: `stream`, else, when the current stream of the
// buffer's device is capturing a graph, that stream (the copy is recorded,
// not run, so the host object is held as for an explicit stream); else
// nullopt (a synchronous copy).
std::optional<Stream> OrCapturing(std::optional<Stream> stream, const Buffer& buf) {
  if (stream || !internal::AnyCapture()) return stream;
  absl::StatusOr<Stream> current = CurrentStream(buf.device());
  if (current.ok() && internal::IsCapturing(*current)) return *current;
  return std::nullopt;
}

py::handle g_stream_type;

std::optional<Stream> OptionalStreamArg(py::handle h, const char* what) {
  if (h.is_none()) return std::nullopt;
  if (std::optional<Stream> s = StreamOfPy(h)) return s;  // anydev's or torch's
  Throw(internal::TypeError(absl::StrCat(what, ": stream must be an anydev.Stream or None, got ",
                                         std::string(py::str(py::repr(h))))));
}

// Reads a non-negative size or offset given as a Python int.
size_t SizeArg(py::handle h, const char* what) {
  if (!py::isinstance<py::int_>(h) || py::isinstance<py::bool_>(h)) {
    Throw(internal::TypeError(absl::StrCat(what, " must be an int, got ",
                                           std::string(py::str(py::repr(h))))));
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow < 0 || (overflow == 0 && v < 0)) {
    Throw(internal::ValueError(absl::StrCat(what, " must not be negative, got ",
                                            std::string(py::str(py::repr(h))))));
  }
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      Throw(internal::ValueError(absl::StrCat(what, " ", std::string(py::str(py::repr(h))),
                                              " is too large (at most 2**64 - 1)")));
    }
    return static_cast<size_t>(u);
  }
  return static_cast<size_t>(v);
}

// The device a rule-2 call acts on: None is the current accelerator's current
// device, else the CPU's.
Device GenericDeviceArg(py::handle h) {
  if (h.is_none()) return Device(Unwrap(DefaultDeviceType()));
  return Unwrap(DeviceFromPy(h, std::nullopt));
}

std::vector<std::pair<std::string, int64_t>> Flat(const DeviceStats& s) {
  return FlattenDeviceStats(s);
}

int64_t StatValue(const DeviceStats& s, int which) {
  switch (which) {
    case 0: return s.allocated_bytes[0].current;
    case 1: return s.allocated_bytes[0].peak;
    case 2: return s.reserved_bytes[0].current;
    default: return s.reserved_bytes[0].peak;
  }
}

// --- anydev.HostBuffer ----------------------------------------------------------------

// A block of the host caching allocator, returned to it when the object goes
// (a memoryview of it keeps it alive, so there is no explicit free).
struct PyHostBuffer {
  void* ptr = nullptr;
  size_t nbytes = 0;
  DeviceType type = DeviceType::kCPU;
  PyHostBuffer() = default;
  PyHostBuffer(const PyHostBuffer&) = delete;
  PyHostBuffer& operator=(const PyHostBuffer&) = delete;
  PyHostBuffer(PyHostBuffer&& o) noexcept : ptr(o.ptr), nbytes(o.nbytes), type(o.type) {
    o.ptr = nullptr;
  }
  ~PyHostBuffer() {
    if (ptr != nullptr) HostFree(ptr).IgnoreError();  // it is one of ours: cannot fail
  }
};

// --- anydev.Buffer ------------------------------------------------------------------

struct PyBuffer {
  std::shared_ptr<Buffer> buf;  // null once freed
  Device device{DeviceType::kCPU};
  size_t nbytes = 0;

  std::shared_ptr<Buffer> Live(const char* what) const {
    if (!buf) {
      Throw(absl::FailedPreconditionError(
          absl::StrCat("anydev.Buffer.", what, "(): the buffer has been freed")));
    }
    return buf;
  }
};

template <typename F>
absl::Status WithoutGil(F f) {
  py::gil_scoped_release release;
  return f();
}

py::object Dlpack(PyBuffer& self, py::handle stream, py::handle max_version, py::handle dl_device,
                  py::handle copy) {
  PollPendingHost();
  if (!self.buf) ThrowBufferError("anydev.Buffer.__dlpack__(): cannot export a freed buffer");
  std::shared_ptr<Buffer> buf = self.buf;
  const DLDevice own = DlpackDeviceOf(self.device);

  bool versioned = false;
  if (!max_version.is_none()) {
    if (!py::isinstance<py::tuple>(max_version) || py::len(max_version) != 2) {
      Throw(internal::TypeError(absl::StrCat(
          "__dlpack__(): max_version must be a (major, minor) tuple or None, got ",
          std::string(py::str(py::repr(max_version))))));
    }
    versioned = py::cast<int64_t>(max_version.cast<py::tuple>()[0]) >= 1;
  }
  std::optional<bool> want_copy;
  if (!copy.is_none()) {
    if (!py::isinstance<py::bool_>(copy)) {
      Throw(internal::TypeError(absl::StrCat("__dlpack__(): copy must be True, False or None, got ",
                                             std::string(py::str(py::repr(copy))))));
    }
    want_copy = copy.cast<bool>();
  }
  DLDevice target = own;
  if (!dl_device.is_none()) {
    if (!py::isinstance<py::tuple>(dl_device) || py::len(dl_device) != 2) {
      Throw(internal::TypeError(absl::StrCat(
          "__dlpack__(): dl_device must be a (device_type, device_id) tuple or None, got ",
          std::string(py::str(py::repr(dl_device))))));
    }
    const py::tuple t = dl_device.cast<py::tuple>();
    target = {py::cast<int32_t>(t[0]), py::cast<int32_t>(t[1])};
  }
  if (!stream.is_none() && (!py::isinstance<py::int_>(stream) || py::isinstance<py::bool_>(stream))) {
    Throw(internal::TypeError(absl::StrCat("__dlpack__(): stream must be an int or None, got ",
                                           std::string(py::str(py::repr(stream))))));
  }
  const bool same_device =
      target.device_type == own.device_type && target.device_id == own.device_id;
  const bool to_host = !same_device && target.device_type == kDLCPU && target.device_id == 0;
  if (!same_device && !to_host) {
    ThrowBufferError(absl::StrCat("anydev.Buffer.__dlpack__(): cannot export ",
                                  self.device.ToString(), " memory to DLPack device (",
                                  target.device_type, ", ", target.device_id, ")"));
  }
  if (to_host && want_copy == false) {
    ThrowBufferError(absl::StrCat("anydev.Buffer.__dlpack__(): ", self.device.ToString(),
                                  " memory can reach the CPU only by a copy, and copy=False"));
  }

  auto ctx = std::make_unique<ExportContext>();
  ctx->shape[0] = static_cast<int64_t>(self.nbytes);
  void* data = buf->data();
  DLDevice device = own;
  bool copied = false;
  // The consumer reads on the host (kDLCPU) or on the stream it names; either
  // way the producer's queued work must be done first (stream -1: the
  // consumer asks for no synchronisation).
  const bool sync = !(py::isinstance<py::int_>(stream) && stream.cast<int64_t>() == -1);
  if (to_host || want_copy == true) {
    copied = true;
    if (to_host || own.device_type == kDLCPU) {
      ctx->host.resize(self.nbytes);
      Check(WithoutGil([&] {
        if (own.device_type == kDLCPU && self.device.type() != DeviceType::kCPU) {
          ANYDEV_RETURN_IF_ERROR(Synchronize(self.device));
        }
        return buf->CopyToHost(ctx->host.data(), ctx->host.size());
      }));
      data = ctx->host.empty() ? nullptr : ctx->host.data();
      device = {kDLCPU, 0};
    } else {
      absl::StatusOr<Buffer> dup;
      Check(WithoutGil([&] {
        dup = Buffer::Create(self.nbytes, self.device);
        if (!dup.ok()) return dup.status();
        return dup->CopyFrom(*buf);
      }));
      ctx->buffer = std::make_shared<Buffer>(*std::move(dup));
      data = ctx->buffer->data();
    }
  } else {
    ctx->buffer = buf;
    if (sync) {
      // The host reads sim memory at once (Note [DLPack device of sim
      // memory]); a GPU consumer's stream is unknown to anydev, so the
      // device's current stream is waited for.
      Check(WithoutGil([&]() -> absl::Status {
        if (self.device.type() == DeviceType::kCPU) return absl::OkStatus();
        if (own.device_type == kDLCPU) return Synchronize(self.device);
        ANYDEV_ASSIGN_OR_RETURN(Stream s, CurrentStream(self.device));
        return s.Synchronize();
      }));
    }
  }

  DLTensor tensor{};
  tensor.data = data;
  tensor.device = device;
  tensor.ndim = 1;
  tensor.dtype = DLDataType{kDLUInt, 8, 1};
  tensor.shape = ctx->shape;
  tensor.strides = ctx->strides;
  tensor.byte_offset = 0;
  ExportContext* raw = ctx.get();
  PyObject* capsule;
  if (versioned) {
    raw->versioned.version = DLPackVersion{1, 0};
    raw->versioned.manager_ctx = raw;
    raw->versioned.deleter = DeleteVersioned;
    raw->versioned.flags = copied ? kDLPackFlagIsCopied : 0;
    raw->versioned.dl_tensor = tensor;
    capsule = PyCapsule_New(&raw->versioned, "dltensor_versioned", VersionedCapsuleDestructor);
  } else {
    raw->legacy.dl_tensor = tensor;
    raw->legacy.manager_ctx = raw;
    raw->legacy.deleter = DeleteLegacy;
    capsule = PyCapsule_New(&raw->legacy, "dltensor", LegacyCapsuleDestructor);
  }
  if (capsule == nullptr) throw py::error_already_set();
  ctx.release();  // owned by the capsule now
  return py::reinterpret_steal<py::object>(capsule);
}

}  // namespace

void BindMemory(py::module_& m) {
  g_pending = new std::vector<PendingHost>();
  g_stream_type = m.attr("Stream");

  // --- device-generic (rule 2) -------------------------------------------------
  m.def(
      "_memory_stats", [](py::handle device) { return Flat(Unwrap(MemoryStats(GenericDeviceArg(device)))); },
      py::arg("device") = py::none());
  m.def(
      "_memory_stat",
      [](py::handle device, int which) {
        return StatValue(Unwrap(MemoryStats(GenericDeviceArg(device))), which);
      },
      py::arg("device"), py::arg("which"));
  m.def("_reset_peak_memory_stats", [](py::handle device) {
    Check(ResetPeakMemoryStats(GenericDeviceArg(device)));
  });
  m.def("_reset_accumulated_memory_stats", [](py::handle device) {
    Check(ResetAccumulatedMemoryStats(GenericDeviceArg(device)));
  });
  m.def("_empty_cache", [](py::handle device) {
    const Device d = GenericDeviceArg(device);
    PollPendingHost();
    Check(WithoutGil([&] { return EmptyCache(d); }));
  });
  m.def("_get_memory_info", [](py::handle device) {
    const Device d = GenericDeviceArg(device);
    absl::StatusOr<std::pair<size_t, size_t>> info;
    {
      py::gil_scoped_release release;
      info = GetMemoryInfo(d);
    }
    return Unwrap(std::move(info));
  });

  // --- anydev.accelerator ---------------------------------------------------------
  m.def("_acc_memory_stats", [](py::handle device_index) {
    const int index = Unwrap(AccDeviceIndexFromPy(device_index, /*optional=*/true));
    return Flat(Unwrap(acc::GetDeviceStats(index)));
  });
  m.def("_acc_memory_stat", [](py::handle device_index, int which) {
    const int index = Unwrap(AccDeviceIndexFromPy(device_index, /*optional=*/true));
    return StatValue(Unwrap(acc::GetDeviceStats(index)), which);
  });
  m.def("_acc_reset_peak_memory_stats", [](py::handle device_index) {
    Check(acc::ResetPeakStats(Unwrap(AccDeviceIndexFromPy(device_index, true))));
  });
  m.def("_acc_reset_accumulated_memory_stats", [](py::handle device_index) {
    Check(acc::ResetAccumulatedStats(Unwrap(AccDeviceIndexFromPy(device_index, true))));
  });
  m.def("_acc_empty_host_cache", [] { Check(WithoutGil([] { return acc::EmptyHostCache(); })); });
  m.def("_host_memory_stats", [] {
    const HostMemoryStats st = GetHostMemoryStats();
    py::dict d;
    auto put = [&d](const char* name, const Stat& s) {
      d[py::str(absl::StrCat(name, ".current"))] = s.current;
      d[py::str(absl::StrCat(name, ".peak"))] = s.peak;
      d[py::str(absl::StrCat(name, ".allocated"))] = s.allocated;
      d[py::str(absl::StrCat(name, ".freed"))] = s.freed;
    };
    put("allocated_bytes", st.allocated_bytes);
    put("reserved_bytes", st.reserved_bytes);
    d["num_host_alloc"] = st.num_host_alloc;
    d["num_host_free"] = st.num_host_free;
    return d;
  });
  py::class_<PyHostBuffer>(m, "HostBuffer", py::buffer_protocol(), R"doc(
Pinned host memory from the host caching allocator, as torch's pin_memory.

    HostBuffer(nbytes)

Page-locked memory of the current accelerator's runtime (cudaMallocHost,
hipHostMalloc) where it has one, ordinary host memory on cpu and sim. It
supports the buffer protocol (memoryview(hb), numpy.frombuffer(hb)), so it is
what Buffer.copy_from_host/copy_to_host copy from and to. The block goes back
to the cache when the object (and every view of it) is gone;
anydev.accelerator.empty_host_cache() returns the cached blocks to the system.
)doc")
      .def(py::init([](py::handle nbytes) {
             const size_t n = SizeArg(nbytes, "HostBuffer size");
             if (n == 0) Throw(internal::ValueError("HostBuffer size must be positive"));
             absl::StatusOr<DeviceType> type = DefaultDeviceType();
             PyHostBuffer out;
             out.type = Unwrap(type);
             out.ptr = Unwrap(HostAlloc(n, out.type));
             out.nbytes = n;
             return out;
           }),
           py::arg("nbytes"))
      .def_property_readonly("nbytes", [](const PyHostBuffer& b) { return b.nbytes; })
      .def_property_readonly("data_ptr",
                             [](const PyHostBuffer& b) { return reinterpret_cast<uintptr_t>(b.ptr); })
      .def_property_readonly("pinned_for", [](const PyHostBuffer& b) {
        return std::string(DeviceTypeName(b.type));
      }, "The device type whose runtime pinned the memory ('cpu' when none did).")
      .def_buffer([](PyHostBuffer& b) {
        return py::buffer_info(b.ptr, 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(b.nbytes)}, {py::ssize_t{1}});
      })
      .def("__len__", [](const PyHostBuffer& b) { return b.nbytes; })
      .def("__repr__", [](const PyHostBuffer& b) {
        return absl::StrCat("anydev.HostBuffer(nbytes=", b.nbytes, ", pinned_for='",
                            DeviceTypeName(b.type), "')");
      });
  m.def("_acc_empty_cache", [] {
    PollPendingHost();
    Check(WithoutGil([] { return acc::EmptyCache(); }));
  });
  m.def("_acc_get_memory_info", [](py::handle device_index) {
    const int index = Unwrap(AccDeviceIndexFromPy(device_index, true));
    absl::StatusOr<std::pair<size_t, size_t>> info;
    {
      py::gil_scoped_release release;
      info = acc::GetMemoryInfo(index);
    }
    return Unwrap(std::move(info));
  });

  // --- anydev.Buffer ---------------------------------------------------------------
  py::class_<PyBuffer>(m, "Buffer", R"doc(
Device memory from the caching allocator, as a 1-D array of `nbytes` bytes.

    Buffer(nbytes, device=None, *, stream=None)

`device` defaults to the current device of the current accelerator (else the
CPU); `stream` (default: the device's current stream) is the stream the
memory is allocated for. The memory goes back to the allocator when the
Buffer is collected or `free()` is called; that is safe while work on it is
in flight, as the allocator knows the streams that used it.

Copies and fills take an optional `stream`: with one they are queued there
and return at once (a host object is kept alive until the copy has run);
without one they run on the current stream and complete before returning.

`__dlpack__`/`__dlpack_device__` export the bytes (DLPack 1.0, dtype uint8):
`numpy.from_dlpack(buf)` works on CPU and sim buffers (sim memory is host
memory, exported as kDLCPU); `__cuda_array_interface__` exists on CUDA only.
)doc")
      .def(py::init([](py::handle nbytes, py::handle device, py::handle stream) {
             PollPendingHost();
             const size_t n = SizeArg(nbytes, "Buffer size");
             const Device d = Unwrap(ResolveDevice(GenericDeviceArg(device)));
             const std::optional<Stream> s = OptionalStreamArg(stream, "Buffer()");
             absl::StatusOr<Buffer> buf;
             {
               py::gil_scoped_release release;  // the out-of-memory path waits for the device
               buf = Buffer::Create(n, d, s);
             }
             PyBuffer out;
             out.buf = std::make_shared<Buffer>(Unwrap(std::move(buf)));
             out.device = out.buf->device();
             out.nbytes = n;
             return out;
           }),
           py::arg("nbytes"), py::arg("device") = py::none(), py::kw_only(),
           py::arg("stream") = py::none())
      .def_property_readonly("device", [](const PyBuffer& b) { return MakePyDevice(b.device); })
      .def_property_readonly("nbytes", [](const PyBuffer& b) { return b.nbytes; })
      .def_property_readonly("data_ptr",
                             [](const PyBuffer& b) {
                               return b.buf ? reinterpret_cast<uintptr_t>(b.buf->data()) : 0;
                             })
      .def_property_readonly("is_freed", [](const PyBuffer& b) { return !b.buf; })
      .def(
          "copy_from_host",
          [](PyBuffer& self, py::handle src, py::handle stream, py::handle offset) {
            PollPendingHost();
            std::shared_ptr<Buffer> buf = self.Live("copy_from_host");
            const std::optional<Stream> s =
                OrCapturing(OptionalStreamArg(stream, "copy_from_host()"), *buf);
            const size_t off = SizeArg(offset, "offset");
            HostView view(src, /*writable=*/false, "copy_from_host()");
            if (s) {
              Check(buf->CopyFromHost(view.data(), view.size(), s, off));
              view.HoldUntil(*s);
              return;
            }
            Check(WithoutGil([&] { return buf->CopyFromHost(view.data(), view.size(), s, off); }));
          },
          py::arg("src"), py::kw_only(), py::arg("stream") = py::none(), py::arg("offset") = 0,
          "Copies the bytes of `src` (any object with the buffer protocol) into the buffer at "
          "`offset`.")
      .def(
          "copy_to_host",
          [](PyBuffer& self, py::object dst, py::handle stream, py::handle offset) {
            PollPendingHost();
            std::shared_ptr<Buffer> buf = self.Live("copy_to_host");
            const std::optional<Stream> s =
                OrCapturing(OptionalStreamArg(stream, "copy_to_host()"), *buf);
            const size_t off = SizeArg(offset, "offset");
            if (dst.is_none()) {
              if (off > self.nbytes) {
                Throw(internal::ValueError(absl::StrCat("copy_to_host(): offset ", off,
                                                        " is past the end of the buffer of ",
                                                        self.nbytes, " bytes")));
              }
              dst = py::reinterpret_steal<py::object>(PyByteArray_FromStringAndSize(
                  nullptr, static_cast<Py_ssize_t>(self.nbytes - off)));
              if (!dst) throw py::error_already_set();
            }
            HostView view(dst, /*writable=*/true, "copy_to_host()");
            if (s) {
              Check(buf->CopyToHost(view.data(), view.size(), s, off));
              view.HoldUntil(*s);
              return dst;
            }
            Check(WithoutGil([&] { return buf->CopyToHost(view.data(), view.size(), s, off); }));
            return dst;
          },
          py::arg("dst") = py::none(), py::kw_only(), py::arg("stream") = py::none(),
          py::arg("offset") = 0,
          "Copies len(dst) bytes from the buffer at `offset` into `dst` (a writable object with "
          "the buffer protocol; a new bytearray of the rest of the buffer when None) and returns "
          "it.")
      .def(
          "copy_",
          [](py::object self_obj, py::handle src, py::handle stream) {
            PollPendingHost();
            PyBuffer& self = self_obj.cast<PyBuffer&>();
            std::shared_ptr<Buffer> buf = self.Live("copy_");
            if (!py::isinstance<PyBuffer>(src)) {
              Throw(internal::TypeError(absl::StrCat("copy_(): src must be an anydev.Buffer, got ",
                                                     std::string(py::str(py::repr(src))))));
            }
            std::shared_ptr<Buffer> from = src.cast<PyBuffer&>().Live("copy_ (source)");
            const std::optional<Stream> s = OptionalStreamArg(stream, "copy_()");
            if (s) {
              Check(buf->CopyFrom(*from, s));
            } else {
              Check(WithoutGil([&] { return buf->CopyFrom(*from, s); }));
            }
            return self_obj;
          },
          py::arg("src"), py::kw_only(), py::arg("stream") = py::none(),
          "Copies all of `src` (an anydev.Buffer of the same device type) to the start of this "
          "buffer; returns self.")
      .def(
          "fill_",
          [](py::object self_obj, py::handle value, py::handle stream) {
            PollPendingHost();
            PyBuffer& self = self_obj.cast<PyBuffer&>();
            std::shared_ptr<Buffer> buf = self.Live("fill_");
            if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) {
              Throw(internal::TypeError(absl::StrCat("fill_(): value must be an int, got ",
                                                     std::string(py::str(py::repr(value))))));
            }
            int overflow = 0;
            const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
            if (overflow != 0 || v < 0 || v > 255) {
              Throw(internal::ValueError(absl::StrCat("fill_(): value must be a byte (0..255), got ",
                                                      std::string(py::str(py::repr(value))))));
            }
            const std::optional<Stream> s = OptionalStreamArg(stream, "fill_()");
            if (s) {
              Check(buf->Fill(static_cast<uint8_t>(v), s));
            } else {
              Check(WithoutGil([&] { return buf->Fill(static_cast<uint8_t>(v), s); }));
            }
            return self_obj;
          },
          py::arg("value"), py::kw_only(), py::arg("stream") = py::none(),
          "Sets every byte to `value` (0..255); returns self.")
      .def(
          "record_stream",
          [](PyBuffer& self, py::handle stream) {
            std::shared_ptr<Buffer> buf = self.Live("record_stream");
            if (stream.is_none()) {
              Throw(internal::TypeError("record_stream(): expected an anydev.Stream, got None"));
            }
            Check(buf->RecordStream(*OptionalStreamArg(stream, "record_stream()")));
          },
          py::arg("stream"),
          "Marks the memory as used by `stream`: after it is freed it is not reused until the "
          "work queued on `stream` by then has finished (as torch.Tensor.record_stream).")
      .def(
          "free",
          [](PyBuffer& self) {
            PollPendingHost();
            std::shared_ptr<Buffer> buf = std::move(self.buf);
            // The memory goes back when the last holder (an exported DLPack
            // capsule may be one) lets go.
            buf.reset();
          },
          "Returns the memory to the allocator now (stream-ordered; exported DLPack views keep "
          "it until they are gone). Later calls on the buffer raise RuntimeError.")
      .def(
          "__dlpack__",
          [](PyBuffer& self, py::handle stream, py::handle max_version, py::handle dl_device,
             py::handle copy) { return Dlpack(self, stream, max_version, dl_device, copy); },
          py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
          "Exports the bytes as a DLPack capsule: 'dltensor_versioned' (DLPack 1.0) when "
          "max_version >= (1, 0), else the legacy 'dltensor'.")
      .def(
          "__dlpack_device__",
          [](const PyBuffer& self) {
            const DLDevice d = DlpackDeviceOf(self.device);
            return py::make_tuple(d.device_type, d.device_id);
          },
          "Returns (DLPack device type, device id): cpu and sim (1, 0), cuda (2, i), hip "
          "(10, i), xpu (14, i).")
      .def_property_readonly(
          "__cuda_array_interface__",
          [](const PyBuffer& self) -> py::dict {
            if (self.device.type() != DeviceType::kCUDA) {
              throw py::attribute_error(absl::StrCat(
                  "'anydev.Buffer' object has no attribute '__cuda_array_interface__' (only CUDA "
                  "buffers have it; this one is on ",
                  self.device.ToString(), ")"));
            }
            std::shared_ptr<Buffer> buf = self.Live("__cuda_array_interface__");
            Check(WithoutGil([&]() -> absl::Status {
              ANYDEV_ASSIGN_OR_RETURN(Stream s, CurrentStream(self.device));
              return s.Synchronize();
            }));
            py::dict d;
            d["shape"] = py::make_tuple(self.nbytes);
            d["typestr"] = "|u1";
            d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(buf->data()), false);
            d["strides"] = py::none();
            d["version"] = 3;
            return d;
          })
      .def("__repr__", [](const PyBuffer& self) {
        if (!self.buf) {
          return absl::StrCat("anydev.Buffer(nbytes=", self.nbytes, ", device='",
                              self.device.ToString(), "', freed)");
        }
        return absl::StrFormat("anydev.Buffer(nbytes=%d, device='%s', data_ptr=%p)", self.nbytes,
                               self.device.ToString(), self.buf->data());
      });
}

}  // namespace anydev::python
