// anydev.Stream and anydev.Event, as torch.Stream and torch.Event.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common.h"
#include "internal/errors.h"

namespace anydev::python {
namespace {

struct PyStream {
  Stream stream;
};

struct PyEvent {
  explicit PyEvent(Device d, bool timing) : event(d, timing) {}
  Event event;
};

// Note [Stream context stacks]: `with s:` saves what it replaces so that
// __exit__ can restore it. The saved state is kept per thread, keyed by the
// object, not in the object: current_stream() returns one interned object per
// stream, which several threads may enter at once, and a stream may be
// entered re-entrantly (`with s0, s0:`).
struct SavedContext {
  const void* owner;
  int prev_device;
  Stream prev_stream;
};
thread_local std::vector<SavedContext> tls_saved;

// Interned Python objects for streams handed out by current_stream(); bounded
// by the backends' stream pools. Guarded by the GIL.
absl::flat_hash_map<Stream, PyObject*>* g_interned = nullptr;
py::handle g_stream_type;

Stream CurrentStreamOfType(DeviceType type, int index) {
  return Unwrap(CurrentStream(Device(type, index)));
}

// The stream an Event call uses when none is given: the current stream of the
// event's device (its index if fixed, else the current index).
Stream DefaultStreamFor(const Event& e) {
  return CurrentStreamOfType(e.device().type(), e.device().index());
}

// Reads a torch.Stream (see Note [torch objects] in bind_device.cc) by its
// three numbers, as torch.Stream(stream_id=, device_index=, device_type=)
// rebuilds one: the default stream (id 0) is the same stream in both; other
// ids are anydev's own and are checked as such.
std::optional<Stream> TorchStreamOfPy(py::handle h) {
  PyTypeObject* t = Py_TYPE(h.ptr());
  if (std::strncmp(t->tp_name, "torch.", 6) != 0 || !py::hasattr(h, "stream_id") ||
      !py::hasattr(h, "device_index") || !py::hasattr(h, "device_type")) {
    return std::nullopt;
  }
  const int64_t device_type = h.attr("device_type").cast<int64_t>();
  const int64_t index = h.attr("device_index").cast<int64_t>();
  // torch's CPU stream has index -1; anydev's CPU device is 0.
  return Unwrap(Stream::Unpack3(h.attr("stream_id").cast<StreamId>(),
                                device_type == 0 && index < 0 ? 0 : index, device_type));
}

}  // namespace

std::optional<Stream> StreamOfPy(py::handle h) {
  if (py::isinstance(h, g_stream_type)) return h.cast<PyStream&>().stream;
  return TorchStreamOfPy(h);
}

namespace {

// Note [Stream and Event arguments]: torch's Stream and Event methods read
// an argument of the wrong type as the object they expected
// (torch/csrc/Stream.cpp, Event.cpp) and raise RuntimeError ("expected event
// to be a torch.Event object" where they check; otherwise whatever the
// misread fields give, or a crash). anydev checks and raises
// ArgumentTypeError: a TypeError that is also torch's RuntimeError.
Stream StreamArg(py::handle h, const char* what) {
  if (std::optional<Stream> s = StreamOfPy(h)) return *s;
  Throw(internal::ArgumentTypeError(absl::StrCat(
      what, " expects an anydev.Stream (or torch.Stream), got ", std::string(py::str(py::repr(h))))));
}

PyEvent& EventArg(py::handle h, const char* what) {
  if (!py::isinstance<PyEvent>(h)) {
    Throw(internal::ArgumentTypeError(absl::StrCat(what, " expects an anydev.Event, got ",
                                                   std::string(py::str(py::repr(h))))));
  }
  return h.cast<PyEvent&>();
}

// As torch's argument parser: a bool argument takes only a bool, an int one
// any int but a bool ("Event(): argument 'blocking' must be bool, not int").
bool BoolArg(py::handle h, const char* function, const char* name) {
  if (!PyBool_Check(h.ptr())) {
    Throw(internal::TypeError(absl::StrCat(function, "(): argument '", name,
                                           "' must be bool, not ", Py_TYPE(h.ptr())->tp_name)));
  }
  return h.ptr() == Py_True;
}

int64_t IntArg(py::handle h, const char* function, const char* name) {
  if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr())) {
    Throw(internal::TypeError(absl::StrCat(function, "(): argument '", name,
                                           "' must be int, not ", Py_TYPE(h.ptr())->tp_name)));
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow != 0) {
    Throw(internal::TypeError(absl::StrCat(function, "(): argument '", name,
                                           "' must fit a 64-bit int, got ", std::string(py::repr(h)))));
  }
  return v;
}

// torch names the CPU's device of a stream without an index: its streams
// report device_index -1 and device 'cpu' (c10's CPU guard has no device
// index); anydev's CPU device is index 0 inside.
int PyDeviceIndexOf(const Stream& s) {
  return s.device_type() == DeviceType::kCPU ? -1 : s.device_index();
}

py::object PyDeviceOf(const Stream& s) {
  if (s.device_type() == DeviceType::kCPU) return MakePyDevice(Device(DeviceType::kCPU));
  return MakePyDevice(s.device());
}

std::string StreamRepr(const Stream& s) {
  return absl::StrCat("anydev.Stream device_type=", DeviceTypeName(s.device_type()),
                      ", device_index=", PyDeviceIndexOf(s), ", stream_id=", s.id());
}

void EnterStream(const void* owner, const Stream& s) {
  // As torch.Stream.__enter__: a no-op for a type that is not the accelerator.
  absl::StatusOr<std::optional<DeviceType>> acc = acc::CurrentAccelerator();
  if (!acc.ok() || !acc->has_value() || **acc != s.device_type()) {
    tls_saved.push_back({owner, -1, s});
    return;
  }
  const int prev_device = Unwrap(acc::CurrentDeviceIndex());
  const Stream prev_stream = CurrentStreamOfType(s.device_type(), s.device_index());
  Check(acc::SetCurrentStream(s));
  tls_saved.push_back({owner, prev_device, prev_stream});
}

void ExitStream(const void* owner) {
  for (auto it = tls_saved.rbegin(); it != tls_saved.rend(); ++it) {
    if (it->owner != owner) continue;
    const SavedContext saved = *it;
    tls_saved.erase(std::next(it).base());
    if (saved.prev_device < 0) return;
    Check(SetCurrentStream(saved.prev_stream));
    Check(SetDeviceIndex(saved.prev_stream.device_type(), saved.prev_device));
    return;
  }
  Throw(absl::FailedPreconditionError("Stream.__exit__ without a matching __enter__"));
}

}  // namespace

py::object StreamToPy(const Stream& s) {
  auto it = g_interned->find(s);
  if (it != g_interned->end()) return py::reinterpret_borrow<py::object>(it->second);
  py::object obj = py::cast(PyStream{s});
  g_interned->emplace(s, obj.inc_ref().ptr());  // kept for the life of the process
  return obj;
}

void BindStream(py::module_& m) {
  g_interned = new absl::flat_hash_map<Stream, PyObject*>();

  py::class_<PyStream> stream(m, "Stream", R"doc(
An ordered queue of work on one device, as torch.Stream.

    Stream(device=None, *, priority=0)
    Stream(stream_id, device_index, device_type, *, priority=0)

With device=None the stream belongs to the current device of the current
accelerator (else the CPU). Lower priority numbers are higher priorities;
values outside the backend's range are clamped. `with stream:` makes it (and
its device) current for the block.
)doc");
  g_stream_type = stream;
  stream
      .def(py::init([](py::handle device, py::handle priority_arg) {
             const int64_t p = IntArg(priority_arg, "Stream", "priority");
             // Clamped by the backend: any int is a priority.
             const int priority = static_cast<int>(std::clamp<int64_t>(p, INT_MIN, INT_MAX));
             absl::StatusOr<DeviceType> fallback_type = DefaultDeviceType();
             if (!fallback_type.ok() && device.is_none()) Throw(fallback_type.status());
             const Device d = Unwrap(DeviceFromPy(
                 device, Device(fallback_type.ok() ? *fallback_type : DeviceType::kCPU)));
             return PyStream{Unwrap(Stream::New(d, priority))};
           }),
           py::arg("device") = py::none(), py::kw_only(), py::arg("priority") = 0)
      .def(py::init([](int64_t stream_id, int64_t device_index, int64_t device_type,
                       py::handle priority) {
             IntArg(priority, "Stream", "priority");
             return PyStream{Unwrap(Stream::Unpack3(stream_id, device_index, device_type))};
           }),
           py::arg("stream_id"), py::arg("device_index"), py::arg("device_type"), py::kw_only(),
           py::arg("priority") = 0)
      .def_property_readonly("stream_id", [](const PyStream& s) { return s.stream.id(); })
      .def_property_readonly("device_index",
                             [](const PyStream& s) { return PyDeviceIndexOf(s.stream); })
      .def_property_readonly(
          "device_type", [](const PyStream& s) { return static_cast<int>(s.stream.device_type()); })
      .def_property_readonly("device", [](const PyStream& s) { return PyDeviceOf(s.stream); })
      .def_property_readonly("priority",
                             [](const PyStream& s) { return Unwrap(s.stream.Priority()); })
      .def_property_readonly(
          "native_handle", [](const PyStream& s) { return Unwrap(s.stream.NativeHandle()); },
          "The vendor's stream handle (cudaStream_t ...) as an int, as torch.Stream.native_handle; "
          "RuntimeError for backends without one (cpu, sim).")
      .def("is_capturing", [](const PyStream& s) { return Unwrap(s.stream.IsCapturing()); },
           "True while a graph capture (anydev.accelerator.Graph) records this stream's work.")
      .def("query", [](const PyStream& s) { return Unwrap(s.stream.Query()); },
           "True when all work queued on the stream has finished.")
      .def(
          "synchronize",
          [](const PyStream& s) {
            absl::Status st;
            {
              py::gil_scoped_release release;
              st = s.stream.Synchronize();
            }
            Check(st);
          },
          "Waits for all work queued on the stream.")
      .def(
          "wait_event",
          [](const PyStream& s, py::handle e) {
            Check(s.stream.WaitEvent(EventArg(e, "wait_event()").event));
          },
          py::arg("event"), "Makes future work on this stream wait for the event.")
      .def(
          "wait_stream",
          [](const PyStream& s, py::handle other) {
            Check(s.stream.WaitStream(StreamArg(other, "wait_stream()")));
          },
          py::arg("stream"), "Makes future work on this stream wait for all work on `stream`.")
      .def(
          "record_event",
          [](const PyStream& s, py::object event) -> py::object {
            if (event.is_none()) {
              event = py::cast(PyEvent(Device(s.stream.device_type()), false));
            }
            Check(EventArg(event, "record_event()").event.Record(s.stream));
            return event;
          },
          py::arg("event") = py::none(), "Records an event (a new one if None) on this stream.")
      .def("__eq__",
           [](const PyStream& a, py::handle b) -> py::object {
             if (!py::isinstance(b, g_stream_type)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a.stream == b.cast<const PyStream&>().stream);
           })
      .def("__ne__",
           [](const PyStream& a, py::handle b) -> py::object {
             if (!py::isinstance(b, g_stream_type)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a.stream != b.cast<const PyStream&>().stream);
           })
      .def("__hash__", [](const PyStream& s) { return absl::HashOf(s.stream); })
      .def("__repr__", [](const PyStream& s) { return StreamRepr(s.stream); })
      .def("__enter__",
           [](py::object self) {
             EnterStream(self.ptr(), self.cast<const PyStream&>().stream);
             return self;
           })
      .def("__exit__", [](py::object self, py::args) {
        ExitStream(self.ptr());
        return false;
      });

  py::class_<PyEvent>(m, "Event", R"doc(
A marker in a stream's work, as torch.Event.

    Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)

`blocking` and `interprocess` are accepted for compatibility and have no
effect (as in torch.Event); IPC is not supported.
)doc")
      .def(py::init([](py::handle device, py::handle enable_timing_arg, py::handle blocking,
                       py::handle interprocess) {
             const bool enable_timing = BoolArg(enable_timing_arg, "Event", "enable_timing");
             BoolArg(blocking, "Event", "blocking");
             BoolArg(interprocess, "Event", "interprocess");
             Device d(DeviceType::kCPU);
             if (device.is_none()) {
               d = Device(Unwrap(DefaultDeviceType()));
             } else {
               d = Unwrap(DeviceFromPy(device, std::nullopt));
               Check(CheckDevice(d));
             }
             return PyEvent(d, enable_timing);
           }),
           py::arg("device") = py::none(), py::kw_only(), py::arg("enable_timing") = false,
           py::arg("blocking") = false, py::arg("interprocess") = false)
      .def_property_readonly("device",
                             [](const PyEvent& e) { return MakePyDevice(e.event.device()); })
      .def_property_readonly("event_id",
                             [](const PyEvent& e) {
                               return reinterpret_cast<uintptr_t>(e.event.handle());
                             })
      .def(
          "record",
          [](PyEvent& e, py::handle stream) {
            const Stream s = stream.is_none() ? DefaultStreamFor(e.event)
                                              : StreamArg(stream, "Event.record()");
            Check(e.event.Record(s));
          },
          py::arg("stream") = py::none(), "Records the event on `stream` (default: current).")
      .def(
          "wait",
          [](const PyEvent& e, py::handle stream) {
            const Stream s = stream.is_none() ? DefaultStreamFor(e.event)
                                              : StreamArg(stream, "Event.wait()");
            Check(e.event.Block(s));
          },
          py::arg("stream") = py::none(), "Makes `stream` (default: current) wait for the event.")
      .def("query", [](const PyEvent& e) { return Unwrap(e.event.Query()); })
      .def("synchronize",
           [](const PyEvent& e) {
             absl::Status st;
             {
               py::gil_scoped_release release;
               st = e.event.Synchronize();
             }
             Check(st);
           })
      .def(
          "elapsed_time",
          [](const PyEvent& e, py::handle end) {
            return Unwrap(e.event.ElapsedTime(EventArg(end, "elapsed_time()").event));
          },
          py::arg("end_event"), "Milliseconds between this event and `end_event`.")
      .def("ipc_handle",
           [](const PyEvent&) {
             Throw(absl::UnimplementedError(
                 "anydev.Event ipc is not supported yet, please open an issue if you need this!"));
           })
      .def_static("from_ipc_handle",
                  [](py::handle, py::handle) {
                    Throw(absl::UnimplementedError(
                        "anydev.Event ipc is not supported yet, please open an issue if you need "
                        "this!"));
                  },
                  py::arg("device"), py::arg("ipc_handle"))
      .def("__repr__", [](const PyEvent& e) {
        return absl::StrCat("anydev.Event device_type=", DeviceTypeName(e.event.device().type()),
                            ", device_index=", e.event.device().index(),
                            ", enable_timing=", e.event.enable_timing() ? "True" : "False",
                            ", event_id=", reinterpret_cast<uintptr_t>(e.event.handle()));
      });

  // The base of anydev.accelerator.Graph (python/anydev/_graph.py), as
  // torch._C._acceleratorGraph is torch.accelerator.Graph's.
  py::class_<Graph>(m, "_Graph", "Capture and replay of a stream's work (anydev/graph.h).")
      .def(py::init([](bool keep_graph) {
             // As at::accelerator::Graph's constructor: no accelerator, no graph.
             Check(acc::GetAccelerator().status());
             return std::make_unique<Graph>(keep_graph);
           }),
           py::arg("keep_graph") = false)
      .def(
          "capture_begin",
          [](Graph& g, py::handle pool, const std::string& mode) {
            std::optional<MempoolId> id;
            if (!pool.is_none()) {
              py::tuple t = py::reinterpret_borrow<py::tuple>(pool);
              if (!py::isinstance<py::tuple>(pool) || t.size() != 2) {
                Throw(internal::TypeError(absl::StrCat(
                    "pool must be a tuple of two ints (a Graph.pool()), got ",
                    std::string(py::str(py::repr(pool))))));
              }
              id = MempoolId{t[0].cast<uint64_t>(), t[1].cast<uint64_t>()};
            }
            Check(g.CaptureBegin(id, Unwrap(ParseCaptureMode(mode))));
          },
          py::arg("pool") = py::none(), py::arg("capture_error_mode") = "default")
      .def("capture_end", [](Graph& g) { Check(g.CaptureEnd()); })
      .def("instantiate", [](Graph& g) { Check(g.Instantiate()); })
      .def("replay",
           [](Graph& g) {
             absl::Status st;
             {
               py::gil_scoped_release release;
               st = g.Replay();
             }
             Check(st);
           })
      .def("reset", [](Graph& g) { g.Reset(); })
      .def("pool",
           [](const Graph& g) {
             if (!g.capturing() && !g.has_graph()) {
               Throw(absl::FailedPreconditionError(
                   "Called Graph.pool() without a preceding successful capture."));
             }
             return py::make_tuple(g.Pool().first, g.Pool().second);
           })
      .def("enable_debug_mode", [](Graph& g) { g.EnableDebugMode(); })
      .def("debug_dump", [](const Graph& g, const std::string& path) { Check(g.DebugDump(path)); },
           py::arg("path"));

  m.def(
      "_sleep",
      [](py::handle stream, double seconds) {
        if (!(seconds >= 0) || seconds > 3600) {
          Throw(internal::ValueError(absl::StrCat(
              "sleep: seconds must be in [0, 3600], got ", seconds)));
        }
        Check(StreamArg(stream, "sleep()").Sleep(absl::Seconds(seconds)));
      },
      py::arg("stream"), py::arg("seconds"));
}

}  // namespace anydev::python
