// The accelerator calls that legacy code makes in hot loops, written against
// the CPython API directly (METH_NOARGS / METH_O / METH_FASTCALL and a static
// type with a vectorcall constructor) rather than through pybind11's generic
// dispatcher, so each costs about as much as the cheapest possible call.
//
//   anydev.accelerator.current_device_index()
//   anydev.accelerator.set_device_index(device, /)
//   anydev.accelerator.current_stream(device=None, /)
//   with anydev.accelerator.device_index(i):
//
// Anything but the common argument types falls back to the shared converters
// in bind_device.cc, so behaviour and errors match the rest of the module.
#include <Python.h>
#include <pybind11/pybind11.h>

#include <climits>
#include <vector>

#include "common.h"

namespace anydev::python {
namespace {

// Runs `fn` and turns a C++/pybind11 exception into a Python error (nullptr).
template <typename F>
PyObject* Guarded(F&& fn) {
  try {
    return fn();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// Reads an exact int argument in the range of a device index without
// allocating; false for anything else, which the slow path converts or
// reports (Note [Accelerator device arguments] in bind_device.cc).
bool FastIndex(PyObject* arg, int* out) {
  if (!PyLong_CheckExact(arg)) return false;
  int overflow = 0;
  const long v = PyLong_AsLongAndOverflow(arg, &overflow);
  if (overflow != 0 || v < kMinDeviceIndex || v > kMaxDeviceIndex) {
    PyErr_Clear();
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

PyObject* IndexOrError(absl::StatusOr<int> index) {
  if (!index.ok()) {
    SetPyError(index.status());
    return nullptr;
  }
  return PyLong_FromLong(*index);
}

PyObject* AccCurrentDeviceIndex(PyObject*, PyObject*) {
  return IndexOrError(acc::CurrentDeviceIndex());
}

PyObject* AccSetDeviceIndex(PyObject*, PyObject* arg) {
  int index = 0;
  if (!FastIndex(arg, &index)) {
    absl::StatusOr<int> i = [&] { return AccDeviceIndexFromPy(arg, /*optional=*/false); }();
    if (!i.ok()) {
      SetPyError(i.status());
      return nullptr;
    }
    index = *i;
  }
  // As torch's _accelerator_setDeviceIndex: a negative index is a no-op,
  // with or without an accelerator.
  if (index < 0) Py_RETURN_NONE;
  absl::Status st = acc::SetDeviceIndex(index);
  if (!st.ok()) {
    SetPyError(st);
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* AccCurrentStream(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs > 1) {
    PyErr_Format(PyExc_TypeError, "current_stream() takes at most 1 argument (%zd given)", nargs);
    return nullptr;
  }
  return Guarded([&]() -> PyObject* {
    int index = -1;
    if (nargs == 1 && args[0] != Py_None && !FastIndex(args[0], &index)) {
      index = Unwrap(AccDeviceIndexFromPy(args[0], /*optional=*/true));
    }
    absl::StatusOr<Stream> s = acc::CurrentStream(index);
    if (!s.ok()) {
      SetPyError(s.status());
      return nullptr;
    }
    return StreamToPy(*s).release().ptr();
  });
}

// --- device_index --------------------------------------------------------

struct DeviceIndexObject {
  PyObject_HEAD
  int index;                 // -1: None (no switch)
  int prev;                  // the index to restore, -1: nothing
  std::vector<int>* outer;   // saved `prev` values when entered re-entrantly
  PyObject* bad;             // an argument that is not an int (reported by __enter__)
  bool negative;             // an int below 0 (reported by __enter__)
};

PyObject* DeviceIndexNew(PyTypeObject* type, int index) {
  auto* self = PyObject_New(DeviceIndexObject, type);
  if (self == nullptr) return nullptr;
  self->index = index;
  self->prev = -1;
  self->outer = nullptr;
  self->bad = nullptr;
  self->negative = false;
  return reinterpret_cast<PyObject*>(self);
}

// Note [device_index arguments]: as torch.accelerator.device_index, the
// constructor takes one positional argument and keeps it; __enter__ hands it
// to the exchange, which takes an int only. So device_index("sim:0") and
// device_index(anydev.device(...)) raise TypeError, and device_index(-1)
// RuntimeError (no device has that index), when entered, not when built.
PyObject* DeviceIndexVectorcall(PyObject* type, PyObject* const* args, size_t nargsf,
                                PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0) {
    PyErr_Format(PyExc_TypeError, "device_index() got an unexpected keyword argument '%U'",
                 PyTuple_GET_ITEM(kwnames, 0));
    return nullptr;
  }
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError,
                 "device_index() takes exactly one positional argument (%zd given)", nargs);
    return nullptr;
  }
  PyObject* arg = args[0];
  if (arg == Py_None) return DeviceIndexNew(reinterpret_cast<PyTypeObject*>(type), -1);
  int index = 0;
  if (!FastIndex(arg, &index)) {
    if (!PyIndex_Check(arg)) {
      PyObject* made = DeviceIndexNew(reinterpret_cast<PyTypeObject*>(type), -1);
      if (made != nullptr) {
        Py_INCREF(arg);
        reinterpret_cast<DeviceIndexObject*>(made)->bad = arg;
      }
      return made;
    }
    PyObject* as_int = PyNumber_Index(arg);
    if (as_int == nullptr) return nullptr;
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(as_int, &overflow);
    Py_DECREF(as_int);
    if (overflow != 0 || v < kMinDeviceIndex || v > kMaxDeviceIndex) {
      // Not a device index (torch's is 8 bits): a TypeError on entry.
      PyObject* made = DeviceIndexNew(reinterpret_cast<PyTypeObject*>(type), -1);
      if (made != nullptr) {
        Py_INCREF(arg);
        reinterpret_cast<DeviceIndexObject*>(made)->bad = arg;
      }
      return made;
    }
    index = static_cast<int>(v);
  }
  PyObject* made = DeviceIndexNew(reinterpret_cast<PyTypeObject*>(type), index < 0 ? -1 : index);
  if (made != nullptr && index < 0) reinterpret_cast<DeviceIndexObject*>(made)->negative = true;
  return made;
}

PyObject* DeviceIndexTpNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  // Reached through subclasses and `type.__call__`; same rules.
  const Py_ssize_t n = PyTuple_GET_SIZE(args);
  std::vector<PyObject*> v(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = PyTuple_GET_ITEM(args, i);
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    Py_ssize_t pos = 0;
    PyDict_Next(kwargs, &pos, &key, &value);
    PyErr_Format(PyExc_TypeError, "device_index() got an unexpected keyword argument '%U'", key);
    return nullptr;
  }
  PyObject* made = DeviceIndexVectorcall(reinterpret_cast<PyObject*>(type), v.data(),
                                         static_cast<size_t>(n), nullptr);
  return made;
}

void DeviceIndexDealloc(PyObject* obj) {
  auto* self = reinterpret_cast<DeviceIndexObject*>(obj);
  delete self->outer;
  Py_XDECREF(self->bad);
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* DeviceIndexEnter(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<DeviceIndexObject*>(obj);
  if (self->bad != nullptr) {
    if (PyIndex_Check(self->bad)) {
      PyErr_Format(PyExc_TypeError,
                   "device_index(): %R does not fit a device index (an 8-bit int, %d..%d, as "
                   "torch's c10::DeviceIndex)",
                   self->bad, kMinDeviceIndex, kMaxDeviceIndex);
      return nullptr;
    }
    PyErr_Format(PyExc_TypeError,
                 "device_index(): expected a device index (int) or None, got %R of type %s",
                 self->bad, Py_TYPE(self->bad)->tp_name);
    return nullptr;
  }
  if (self->negative) {
    PyErr_SetString(PyExc_RuntimeError,
                    "device_index(): a negative device index is not a device (use None for "
                    "no switch)");
    return nullptr;
  }
  if (self->index < 0) Py_RETURN_NONE;
  absl::StatusOr<int> prev = acc::ExchangeDeviceIndex(self->index);
  if (!prev.ok()) {
    SetPyError(prev.status());
    return nullptr;
  }
  if (self->prev >= 0) {  // re-entered while active
    if (self->outer == nullptr) self->outer = new std::vector<int>();
    self->outer->push_back(self->prev);
  }
  self->prev = *prev;
  Py_RETURN_NONE;
}

PyObject* DeviceIndexExit(PyObject* obj, PyObject* const*, Py_ssize_t) {
  auto* self = reinterpret_cast<DeviceIndexObject*>(obj);
  if (self->index < 0 || self->prev < 0) Py_RETURN_FALSE;
  absl::StatusOr<int> r = acc::MaybeExchangeDeviceIndex(self->prev);
  if (self->outer != nullptr && !self->outer->empty()) {
    self->prev = self->outer->back();
    self->outer->pop_back();
  } else {
    self->prev = -1;
  }
  if (!r.ok()) {
    SetPyError(r.status());
    return nullptr;
  }
  Py_RETURN_FALSE;
}

PyObject* DeviceIndexGetIdx(PyObject* obj, void*) {
  auto* self = reinterpret_cast<DeviceIndexObject*>(obj);
  if (self->bad != nullptr) {  // not Py_NewRef: that is 3.10+, and 3.9 is supported
    Py_INCREF(self->bad);
    return self->bad;
  }
  if (self->negative) return PyLong_FromLong(-1);
  if (self->index < 0) Py_RETURN_NONE;
  return PyLong_FromLong(self->index);
}

PyObject* DeviceIndexRepr(PyObject* obj) {
  auto* self = reinterpret_cast<DeviceIndexObject*>(obj);
  if (self->bad != nullptr) return PyUnicode_FromFormat("anydev.accelerator.device_index(%R)", self->bad);
  if (self->negative) return PyUnicode_FromString("anydev.accelerator.device_index(-1)");
  if (self->index < 0) return PyUnicode_FromString("anydev.accelerator.device_index(None)");
  return PyUnicode_FromFormat("anydev.accelerator.device_index(%d)", self->index);
}

PyMethodDef kDeviceIndexMethods[] = {
    {"__enter__", DeviceIndexEnter, METH_NOARGS, "Makes the index current; saves the previous."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(DeviceIndexExit)),
     METH_FASTCALL, "Restores the previous index."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kDeviceIndexGetSet[] = {
    {"idx", DeviceIndexGetIdx, nullptr, "The index this context switches to (None: no switch).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject g_device_index_type = {PyVarObject_HEAD_INIT(nullptr, 0) nullptr};

PyMethodDef kFastMethods[] = {
    {"current_device_index", AccCurrentDeviceIndex, METH_NOARGS,
     "current_device_index($module, /)\n--\n\nReturns the index of the calling thread's current "
     "device of the current accelerator."},
    {"set_device_index", AccSetDeviceIndex, METH_O,
     "set_device_index($module, device, /)\n--\n\nMakes `device` (an int, or a device of the "
     "current accelerator type with an index) the calling thread's current device. A "
     "negative index is a no-op."},
    {"current_stream",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(AccCurrentStream)), METH_FASTCALL,
     "current_stream($module, device=None, /)\n--\n\nReturns the calling thread's current "
     "stream of `device` (default: the current device)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void BindFastCalls(py::module_& m) {
  py::module_ fast = m.def_submodule("_fast", "Hot-path accelerator calls (CPython API).");
  if (PyModule_AddFunctions(fast.ptr(), kFastMethods) < 0) throw py::error_already_set();

  PyTypeObject& t = g_device_index_type;
  t.tp_name = "anydev.accelerator.device_index";
  t.tp_basicsize = sizeof(DeviceIndexObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc =
      "device_index(device, /)\n--\n\nContext manager that makes the device index `device` "
      "current for the block and restores the previous one after; None does nothing.";
  t.tp_new = DeviceIndexTpNew;
  t.tp_vectorcall = DeviceIndexVectorcall;
  t.tp_dealloc = DeviceIndexDealloc;
  t.tp_methods = kDeviceIndexMethods;
  t.tp_getset = kDeviceIndexGetSet;
  t.tp_repr = DeviceIndexRepr;
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
  Py_INCREF(&t);
  if (PyModule_AddObject(fast.ptr(), "device_index", reinterpret_cast<PyObject*>(&t)) < 0) {
    Py_DECREF(&t);
    throw py::error_already_set();
  }
}

}  // namespace anydev::python
