// anydev.device, status -> exception mapping, device-argument conversion.
#include <pybind11/operators.h>
#include <pybind11/pybind11.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common.h"
#include "internal/errors.h"

namespace anydev::python {
namespace {

PyObject* g_oom_type = nullptr;
// anydev._C.ArgumentTypeError (internal::ArgumentTypeError).
PyObject* g_argument_type_error = nullptr;
py::handle g_device_type;

std::string Repr(py::handle h) { return py::str(py::repr(h)); }

}  // namespace

absl::StatusOr<std::string> DeviceStringOfPy(py::handle h) {
  Py_ssize_t n = 0;
  const char* s = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
  if (s == nullptr) {  // a lone surrogate: pybind11's cast said only "Unable to cast"
    PyErr_Clear();
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid device string: ", Repr(h), " (not valid UTF-8)"));
  }
  return std::string(s, static_cast<size_t>(n));
}

namespace {

// Reads a Python int used as a device index without pybind11's opaque cast
// error for values beyond int64: as torch.device, any negative one (-1
// included, when passed explicitly) is "must not be negative"; a huge one is
// out of range, named as given.
absl::StatusOr<int64_t> DeviceIndexOfPyInt(py::handle h) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow < 0 || (overflow == 0 && v < 0)) {
    return absl::InvalidArgumentError("Device index must not be negative");
  }
  if (overflow > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Device index ", Repr(h), " is out of range (at most 127)"));
  }
  return static_cast<int64_t>(v);
}

absl::StatusOr<Device> ParseWithIndex(const std::string& text, py::handle index) {
  absl::StatusOr<Device> d = Device::Parse(text);
  if (!d.ok()) return d;
  if (index.is_none()) return d;
  if (d->has_index()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "type (string) must not include an index because index was passed explicitly: ", text));
  }
  if (!py::isinstance<py::int_>(index) || py::isinstance<py::bool_>(index)) {
    return internal::TypeError(absl::StrCat(
        "device(): argument 'index' must be int, not ", Repr(py::type::of(index))));
  }
  ANYDEV_ASSIGN_OR_RETURN(const int64_t i, DeviceIndexOfPyInt(index));
  return Device::Create(d->type(), i);
}

// Note [device as a context manager]: `with anydev.device("sim:1"):` makes
// that index current for the block and restores the previous one, as a
// device guard; a device without an index, or of a type that is not the
// current accelerator (the CPU), switches nothing. (torch.device's context
// manager sets the default device of tensor factories; anydev has no tensor
// factories, so the device guard is what the block can mean.) The saved
// indices are per thread, a stack, so nesting and re-entry work.
thread_local std::vector<int> tls_device_contexts;

void EnterDevice(const Device& d) {
  absl::StatusOr<std::optional<DeviceType>> acc = acc::CurrentAccelerator();
  if (!d.has_index() || !acc.ok() || !acc->has_value() || **acc != d.type()) {
    tls_device_contexts.push_back(-1);
    return;
  }
  tls_device_contexts.push_back(Unwrap(acc::ExchangeDeviceIndex(d.index())));
}

void ExitDevice() {
  if (tls_device_contexts.empty()) {
    Throw(absl::FailedPreconditionError("device.__exit__ without a matching __enter__"));
  }
  const int prev = tls_device_contexts.back();
  tls_device_contexts.pop_back();
  if (prev >= 0) Check(acc::MaybeExchangeDeviceIndex(prev).status());
}

}  // namespace

PyObject* OutOfMemoryErrorType() { return g_oom_type; }

void SetPyError(const absl::Status& status) {
  const std::string message(status.message());
  if (std::optional<std::string> exc = internal::PyExceptionOf(status)) {
    if (*exc == "ValueError") return PyErr_SetString(PyExc_ValueError, message.c_str());
    if (*exc == "TypeError") return PyErr_SetString(PyExc_TypeError, message.c_str());
    if (*exc == "IndexError") return PyErr_SetString(PyExc_IndexError, message.c_str());
    if (*exc == "RuntimeError") return PyErr_SetString(PyExc_RuntimeError, message.c_str());
    if (*exc == "ArgumentTypeError") return PyErr_SetString(g_argument_type_error, message.c_str());
  }
  switch (status.code()) {
    case absl::StatusCode::kResourceExhausted:
      return PyErr_SetString(g_oom_type, message.c_str());
    case absl::StatusCode::kUnimplemented:
      return PyErr_SetString(PyExc_NotImplementedError, message.c_str());
    default:
      return PyErr_SetString(PyExc_RuntimeError, message.c_str());
  }
}

void Throw(const absl::Status& status) {
  SetPyError(status);
  throw py::error_already_set();
}

py::object MakePyDevice(Device d) {
  return g_device_type(std::string(DeviceTypeName(d.type())),
                       d.has_index() ? py::object(py::int_(d.index())) : py::object(py::none()));
}

// Note [torch objects]: anydev and torch objects meet in one program (a
// training script that uses both), so every argument that takes an
// anydev.device also takes a torch.device, recognised by its type's name
// (`torch.device`) without importing torch, and read through its string form,
// which torch.device prints exactly as anydev.device parses it. A torch
// device type anydev does not know ("xla:0") is the parse error naming it.
bool IsTorchObject(py::handle h, const char* name) {
  PyTypeObject* t = Py_TYPE(h.ptr());
  const char* dot = std::strrchr(t->tp_name, '.');
  if (dot == nullptr || std::strcmp(dot + 1, name) != 0) return false;
  return std::strncmp(t->tp_name, "torch.", 6) == 0;
}

std::optional<Device> DeviceOfPy(py::handle h) {
  if (py::isinstance(h, g_device_type)) return h.cast<Device>();
  if (IsTorchObject(h, "device")) return Unwrap(Device::Parse(py::str(h).cast<std::string>()));
  return std::nullopt;
}

absl::StatusOr<Device> DeviceFromPy(py::handle h, std::optional<Device> fallback) {
  if (h.is_none()) {
    if (fallback) return *fallback;
    return internal::TypeError("expected a device, got None");
  }
  if (std::optional<Device> d = DeviceOfPy(h)) return *d;
  if (py::isinstance<py::str>(h)) {
    ANYDEV_ASSIGN_OR_RETURN(const std::string text, DeviceStringOfPy(h));
    return Device::Parse(text);
  }
  if (py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h)) {
    ANYDEV_ASSIGN_OR_RETURN(const int64_t index, DeviceIndexOfPyInt(h));
    ANYDEV_ASSIGN_OR_RETURN(DeviceType acc, acc::GetAccelerator());
    return Device::Create(acc, index);
  }
  return internal::TypeError(absl::StrCat(
      "expected a device (anydev.device, str, int or None), got ", Repr(h), " of type ",
      Repr(py::type::of(h))));
}

// Note [Accelerator device arguments]: as torch.accelerator's
// _get_device_index (torch/accelerator/_utils.py) followed by the binding
// that takes a c10::DeviceIndex, an 8-bit int (torch/csrc/DeviceAccelerator.cpp):
//   * an int, True and False included (isinstance(True, int)), is the index;
//     one outside -128..127 is a TypeError, as pybind11 refuses to convert it;
//   * a str or a device must be of the current accelerator type (ValueError)
//     and, unless `optional`, have an index (ValueError);
//   * None is the current index when `optional`, else a ValueError;
//   * anything else is a ValueError when an index is required (torch's
//     message). Where it is optional torch ignores it (current_stream(1.5) is
//     the current stream); anydev refuses it with ArgumentTypeError, a
//     TypeError that is also the RuntimeError torch raises for it without an
//     accelerator (docs/user-guide.md).
absl::StatusOr<int> AccDeviceIndexFromPy(py::handle h, bool optional) {
  if (py::isinstance<py::int_>(h)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow != 0 || v < kMinDeviceIndex || v > kMaxDeviceIndex) {
      return internal::TypeError(absl::StrCat(
          "device index ", Repr(h), " does not fit a device index (an 8-bit int, ",
          kMinDeviceIndex, "..", kMaxDeviceIndex, ", as torch's c10::DeviceIndex)"));
    }
    return static_cast<int>(v);
  }
  if (h.is_none()) {
    // As _get_device_index: a missing index is the caller's mistake
    // (ValueError) before any accelerator is looked up.
    if (!optional) {
      return internal::ValueError(
          "Expected a device with a specified index or an integer, but got:None");
    }
    return acc::CurrentDeviceIndex();
  }
  std::optional<Device> dev = DeviceOfPy(h);
  if (!dev && !py::isinstance<py::str>(h)) {
    if (!optional) {
      return internal::ValueError(absl::StrCat(
          "Expected a device with a specified index or an integer, but got:",
          std::string(py::str(h))));
    }
    return internal::ArgumentTypeError(absl::StrCat(
        "expected a device index (int), a device or a device string, got ", Repr(h)));
  }
  ANYDEV_ASSIGN_OR_RETURN(DeviceType acc, acc::GetAccelerator());
  Device d(DeviceType::kCPU);
  if (dev) {
    d = *dev;
  } else {
    ANYDEV_ASSIGN_OR_RETURN(const std::string text, DeviceStringOfPy(h));
    ANYDEV_ASSIGN_OR_RETURN(d, Device::Parse(text));
  }
  if (d.type() != acc) {
    return internal::ValueError(absl::StrCat(DeviceTypeName(d.type()),
                                             " doesn't match the current accelerator ",
                                             DeviceTypeName(acc), "."));
  }
  if (!d.has_index()) {
    if (!optional) {
      return internal::ValueError(absl::StrCat(
          "Expected a device with a specified index or an integer, but got:", d.ToString()));
    }
    return acc::CurrentDeviceIndex();
  }
  return d.index();
}

void BindDevice(py::module_& m) {
  static py::exception<std::runtime_error> oom(m, "OutOfMemoryError", PyExc_RuntimeError);
  g_oom_type = oom.ptr();
  oom.attr("__doc__") = "Raised when a device has no room for an allocation (a RuntimeError).";
  {
    py::tuple bases = py::make_tuple(py::handle(PyExc_TypeError), py::handle(PyExc_RuntimeError));
    g_argument_type_error = PyErr_NewExceptionWithDoc(
        "anydev._C.ArgumentTypeError",
        "An argument of the wrong type where torch raises RuntimeError (a Stream or Event "
        "method given something else): a TypeError that is also a RuntimeError.",
        bases.ptr(), nullptr);
    if (g_argument_type_error == nullptr) throw py::error_already_set();
    m.add_object("ArgumentTypeError", py::handle(g_argument_type_error));
  }

  py::class_<Device> device(m, "device", R"doc(
A device: a type ("cpu", "cuda", "hip", "xpu", "sim") and an optional index,
parsed and printed exactly as torch.device.

    anydev.device("sim:1"), anydev.device("sim", 1), anydev.device(device)
    anydev.device(0)  # index 0 of the current accelerator
)doc");
  device
      .def(py::init([](py::handle type, py::handle index) {
             if (std::optional<Device> d = DeviceOfPy(type); d && index.is_none()) return *d;
             if (py::isinstance<py::str>(type)) {
               return Unwrap(ParseWithIndex(Unwrap(DeviceStringOfPy(type)), index));
             }
             if (py::isinstance<py::int_>(type) && !py::isinstance<py::bool_>(type) &&
                 index.is_none()) {
               return Unwrap(DeviceFromPy(type, std::nullopt));
             }
             Throw(internal::TypeError(absl::StrCat(
                 "device() received an invalid combination of arguments - got (", Repr(type),
                 index.is_none() ? "" : absl::StrCat(", ", Repr(index)),
                 "), but expected one of: (anydev.device device), (str type, int index = None), "
                 "(int index)")));
           }),
           py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type",
                             [](const Device& d) { return std::string(DeviceTypeName(d.type())); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (!d.has_index()) return py::none();
                               return py::int_(d.index());
                             })
      .def(
          "to_torch",
          [](const Device& d) -> py::object {
            // sim has no torch device type; the other types print as torch
            // parses them.
            if (d.type() == DeviceType::kSim) {
              Throw(internal::ValueError(absl::StrCat(
                  "anydev.device('", d.ToString(),
                  "') has no torch.device: torch has no simulated accelerator")));
            }
            return py::module_::import("torch").attr("device")(d.ToString());
          },
          "Returns this device as a torch.device (imports torch); ValueError for sim.")
      .def("__enter__",
           [](py::object self) {
             EnterDevice(self.cast<Device>());
             return self;
           })
      .def("__exit__",
           [](py::handle, py::args) {
             ExitDevice();
             return false;
           })
      .def("__str__", &Device::ToString)
      .def("__repr__",
           [](const Device& d) {
             if (!d.has_index()) {
               return absl::StrCat("device(type='", DeviceTypeName(d.type()), "')");
             }
             return absl::StrCat("device(type='", DeviceTypeName(d.type()), "', index=", d.index(),
                                 ")");
           })
      .def(py::self == py::self)
      .def(py::self != py::self)
      .def("__hash__",
           [](const Device& d) {
             return static_cast<int64_t>(d.index() + 1) * 64 + static_cast<int64_t>(d.type());
           })
      .def("__reduce__", [](py::handle self) {
        const Device d = self.cast<Device>();
        py::tuple args;
        if (d.has_index()) {
          args = py::make_tuple(std::string(DeviceTypeName(d.type())), d.index());
        } else {
          args = py::make_tuple(std::string(DeviceTypeName(d.type())));
        }
        return py::make_tuple(py::type::of(self), args);
      });
  g_device_type = device;
}

}  // namespace anydev::python
