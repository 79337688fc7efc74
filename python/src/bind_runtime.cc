// Device-generic functions (anydev.device_count, ...), the accelerator calls
// that are not on the hot path, backends() and device properties.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common.h"
#include "internal/errors.h"

namespace anydev::python {
namespace {

struct PyDeviceProperties {
  Device device;
  DeviceProperties props;
};

// Reads a `device_type` argument (rule 2): None (the default type), a type
// name, or a device (its type).
std::optional<DeviceType> TypeArg(py::handle h) {
  if (h.is_none()) return std::nullopt;
  if (std::optional<Device> d = DeviceOfPy(h)) return d->type();
  if (py::isinstance<py::str>(h)) {
    const std::string text = Unwrap(DeviceStringOfPy(h));
    absl::StatusOr<DeviceType> t = ParseDeviceType(text);
    if (t.ok()) return *t;
    return Unwrap(Device::Parse(text)).type();  // "sim:0" means type sim
  }
  Throw(internal::TypeError(absl::StrCat("expected a device type (str or anydev.device), got ",
                                         std::string(py::str(py::repr(h))))));
}

// The device a rule-2 call acts on when given `h`: None means the current
// device of the current accelerator, else of the CPU.
Device GenericDeviceArg(py::handle h) {
  if (h.is_none()) return Device(Unwrap(DefaultDeviceType()));
  return Unwrap(DeviceFromPy(h, std::nullopt));
}

std::string MiB(uint64_t bytes) { return absl::StrCat(bytes / (1024 * 1024), "MB"); }

}  // namespace

void BindRuntime(py::module_& m) {
  m.def("_version", [] { return std::string(Version()); });
  m.def("_noop", [] {}, "Does nothing: the floor for per-call overhead benchmarks.");
  // The floor for `with` statements: a pybind11 context manager that does nothing.
  struct NoopContext {};
  py::class_<NoopContext>(m, "_NoopContext")
      .def(py::init<>())
      .def("__enter__", [](const NoopContext&) {})
      .def("__exit__", [](const NoopContext&, py::args) { return false; });

  m.def(
      "device_count", [](py::handle device_type) { return DeviceCount(TypeArg(device_type)); },
      py::arg("device_type") = py::none(),
      "Returns the number of devices of `device_type` (default: the current accelerator, else "
      "the CPU); 0 when that type is not available.");
  m.def(
      "is_available", [](py::handle device_type) { return IsAvailable(TypeArg(device_type)); },
      py::arg("device_type") = py::none(),
      "True when `device_type` (default: the current accelerator, else the CPU) has a device.");
  m.def(
      "synchronize",
      [](py::handle device) {
        const Device d = GenericDeviceArg(device);
        absl::Status st;
        {
          py::gil_scoped_release release;
          st = Synchronize(d);
        }
        Check(st);
      },
      py::arg("device") = py::none(), "Waits for all work on `device` (default: current).");
  m.def(
      "get_device_properties",
      [](py::handle device) {
        const Device d = Unwrap(ResolveDevice(GenericDeviceArg(device)));
        return PyDeviceProperties{d, Unwrap(GetDeviceProperties(d))};
      },
      py::arg("device") = py::none(), "Returns the properties of `device` (default: current).");
  m.def("_default_device_type",
        [] { return std::string(DeviceTypeName(Unwrap(DefaultDeviceType()))); });

  // Per-type current device and stream, for the device modules (anydev.sim).
  m.def("_current_device_index", [](const std::string& type) {
    return Unwrap(CurrentDeviceIndex(Unwrap(ParseDeviceType(type))));
  });
  m.def("_set_device_index", [](const std::string& type, py::handle device) {
    const DeviceType t = Unwrap(ParseDeviceType(type));
    if (py::isinstance<py::int_>(device) && !py::isinstance<py::bool_>(device)) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(device.ptr(), &overflow);
      if (overflow > 0 || v > INT_MAX) {
        Throw(absl::OutOfRangeError(absl::StrCat("device index ", std::string(py::repr(device)),
                                                 " is out of range for ", type, ": ",
                                                 DeviceCount(t), " device(s) are available")));
      }
      return Check(SetDeviceIndex(t, overflow < 0 || v < INT_MIN ? -1 : static_cast<int>(v)));
    }
    const Device d = Unwrap(DeviceFromPy(device, std::nullopt));
    if (d.type() != t) {
      Throw(internal::ValueError(absl::StrCat(DeviceTypeName(d.type()), " is not a ",
                                              DeviceTypeName(t), " device")));
    }
    Check(SetDeviceIndex(t, d.index()));
  });
  m.def("_current_stream", [](py::handle device) {
    return StreamToPy(Unwrap(CurrentStream(Unwrap(DeviceFromPy(device, std::nullopt)))));
  });
  m.def("_set_current_stream", [](py::handle stream) {
    const Device d = Unwrap(DeviceFromPy(stream.attr("device"), std::nullopt));
    Check(SetCurrentStream(Stream(d, stream.attr("stream_id").cast<StreamId>())));
  });

  m.def("_backends", [] {
    std::vector<std::tuple<std::string, bool, bool, int, std::string>> out;
    for (const BackendInfo& b : ListBackends()) {
      out.emplace_back(std::string(DeviceTypeName(b.type)), b.built, b.available,
                       b.device_count, b.reason);
    }
    return out;
  });

  // --- anydev.accelerator, the calls that are not on the hot path --------
  m.def("_acc_device_count", [] { return acc::DeviceCount(); });
  m.def("_acc_is_available", [] { return acc::IsAvailable(); });
  m.def(
      "_acc_current_accelerator",
      [](py::handle check_available_arg) -> py::object {
        // Any object, by its truth, as torch's Python `if check_available`.
        const int truth = PyObject_IsTrue(check_available_arg.ptr());
        if (truth < 0) throw py::error_already_set();
        const bool check_available = truth != 0;
        // Note [current_accelerator never fails when checked]: as torch's,
        // current_accelerator(check_available=True) answers None for any
        // accelerator that cannot be used, a misconfigured ANYDEV_* variable
        // included; the calls that need the device, and `anydev doctor`,
        // report why. Unchecked, a type forced by ANYDEV_ACCELERATOR whose
        // backend is built is named even without a device (torch's
        // compile-time answer); only a bad configuration raises.
        if (check_available) {
          if (!acc::IsAvailable()) return py::none();
          return MakePyDevice(Device(Unwrap(acc::GetAccelerator())));
        }
        absl::StatusOr<std::optional<DeviceType>> t = acc::CurrentAccelerator();
        if (!t.ok()) {
          std::optional<DeviceType> configured = acc::ConfiguredAccelerator();
          if (!configured) Throw(t.status());
          return MakePyDevice(Device(*configured));
        }
        if (!*t) return py::none();
        return MakePyDevice(Device(**t));
      },
      py::arg("check_available") = false);
  m.def(
      "_acc_synchronize",
      [](py::handle device) {
        const int index = Unwrap(AccDeviceIndexFromPy(device, /*optional=*/true));
        absl::Status st;
        {
          py::gil_scoped_release release;
          st = acc::Synchronize(index);
        }
        Check(st);
      },
      py::arg("device") = py::none());
  m.def("_acc_set_stream", [](py::handle stream) {
    std::optional<Stream> s = StreamOfPy(stream);
    if (!s) {
      Throw(internal::TypeError(
          absl::StrCat("set_stream() expects an anydev.Stream (or torch.Stream), got ",
                       std::string(py::str(py::repr(stream))))));
    }
    Check(acc::SetCurrentStream(*s));
  });
  m.def("_acc_check_index", [](int index) {
    // The accelerator's range check (current_stream's): RuntimeError for an
    // index past the device count, or without an accelerator.
    Check(acc::CurrentStream(index).status());
  });
  m.def("_acc_device_index_of", [](py::handle device, bool optional) {
    return Unwrap(AccDeviceIndexFromPy(device, optional));
  });

  py::class_<PyDeviceProperties>(m, "_DeviceProperties",
                                 "What the backend knows about one device.")
      .def_property_readonly("type",
                             [](const PyDeviceProperties& p) {
                               return std::string(DeviceTypeName(p.device.type()));
                             })
      .def_property_readonly("index", [](const PyDeviceProperties& p) { return p.device.index(); })
      .def_property_readonly("name", [](const PyDeviceProperties& p) { return p.props.name; })
      .def_property_readonly("total_memory",
                             [](const PyDeviceProperties& p) { return p.props.total_memory; })
      .def_property_readonly(
          "multi_processor_count",
          [](const PyDeviceProperties& p) { return p.props.multi_processor_count; })
      .def_property_readonly("major", [](const PyDeviceProperties& p) { return p.props.major; })
      .def_property_readonly("minor", [](const PyDeviceProperties& p) { return p.props.minor; })
      .def_property_readonly("arch", [](const PyDeviceProperties& p) { return p.props.arch; })
      .def_property_readonly("uuid", [](const PyDeviceProperties& p) { return p.props.uuid; })
      .def_property_readonly("driver_version",
                             [](const PyDeviceProperties& p) { return p.props.driver_version; })
      .def_property_readonly("pci_bus_id",
                             [](const PyDeviceProperties& p) { return p.props.pci_bus_id; })
      .def_property_readonly("extra",
                             [](const PyDeviceProperties& p) {
                               py::dict d;
                               for (const auto& [k, v] : p.props.extra) d[py::str(k)] = v;
                               return d;
                             })
      .def("__repr__", [](const PyDeviceProperties& p) {
        return absl::StrCat("_DeviceProperties(device='", p.device.ToString(), "', name='",
                            p.props.name, "', total_memory=", MiB(p.props.total_memory),
                            ", multi_processor_count=", p.props.multi_processor_count,
                            p.props.major || p.props.minor
                                ? absl::StrCat(", major=", p.props.major, ", minor=", p.props.minor)
                                : "",
                            p.props.arch.empty() ? "" : absl::StrCat(", arch='", p.props.arch, "'"),
                            ")");
      });
}

}  // namespace anydev::python
