// anydev._C._watch: the native half of anydev/_torch/cuda_only.py, which
// finds the call sites that ask PyTorch for CUDA while another accelerator is
// current (`anydev run --torch --accelerator sim`).
//
// Two callables stand between the user's code and PyTorch:
//
//   RequestWatch(checks, device_class, rules, on_request, on_raised, forwarder)
//       the __torch_function__ method of a TorchFunctionMode: sees every call of a
//       PyTorch function or tensor method, finds the ones that ask for CUDA
//       (a "cuda" device string or torch.device among its arguments, by the
//       kind `checks` gives the function, or as `device=`) and calls the
//       function;
//   Watched(original, check, on_raised)
//       a PyTorch function (torch.load, init_process_group, autocast's
//       __init__, ...) whose calls `check(*args, **kwargs)` judges first.
//
// For a request, `on_request(rule, walk)` / `check(...)` (Python) count the
// call site and return a token, and `on_raised(token)` is told when the call
// raised. Neither callable has a Python frame of its own, so (a) inside those
// Python callbacks sys._getframe(1) is the frame that called PyTorch, and (b)
// between that frame and PyTorch there is no frame of anydev's: see Note
// [Warnings keep their line].
//
// Note [Warnings keep their line]: PyTorch issues many warnings with
// stacklevel=2 (torch.nn.functional.softmax without dim, autocast on a
// device that is not available) or from C++ (TORCH_WARN: the innermost
// Python frame), so they name the line of the user's code that called it. A
// TorchFunctionMode written in Python calls the function from its own frame,
// and the warning names that frame instead (then Python's "default" filter
// shows each message once for all of the user's lines together). Here the
// mode's __torch_function__ and the wrappers are C: the user's frame is
// still the one PyTorch sees. tests/python/pytorch/test_cuda_only.py checks it.
#include <Python.h>
#include <structmember.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <string_view>

#include "common.h"

namespace anydev::python {
namespace {

// The token of the innermost Watched call that asked for CUDA and is running
// on this thread (borrowed: the call holds it); nullptr: none.
thread_local PyObject* tl_current = nullptr;

bool IsCudaString(PyObject* s) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (p == nullptr) {
    PyErr_Clear();
    return false;
  }
  const std::string_view v(p, static_cast<size_t>(n));
  return v == "cuda" || v.substr(0, 5) == "cuda:";
}

// Whether `obj`, given where PyTorch takes a device, names CUDA: "cuda",
// "cuda:N" or a torch.device of type cuda. Reads no attribute of any other
// object (an FX proxy would record the read as a node of its graph).
bool IsCuda(PyObject* obj, PyObject* device_class) {
  if (PyUnicode_Check(obj)) return IsCudaString(obj);
  if (device_class == nullptr || !PyType_Check(device_class) ||
      !PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(device_class))) {
    return false;
  }
  PyObject* type = PyObject_GetAttrString(obj, "type");
  if (type == nullptr) {
    PyErr_Clear();
    return false;
  }
  const bool cuda = PyUnicode_Check(type) && IsCudaString(type);
  Py_DECREF(type);
  return cuda;
}

// Calls on_raised(token) with the call's exception kept as it is.
void TellRaised(PyObject* on_raised, PyObject* token) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* r = PyObject_CallOneArg(on_raised, token);
  if (r == nullptr) {
    PyErr_WriteUnraisable(on_raised);  // a bug of anydev's: never the user's exception
  } else {
    Py_DECREF(r);
  }
  PyErr_Restore(type, value, traceback);
}

// --- RequestWatch: the mode's __torch_function__ ----------------------------

// What `checks` maps a function to: where its device argument is.
enum CheckKind : long {
  kFirstArg = 1,   // its first positional argument (Module.to's _parse_to)
  kSecondArg = 2,  // the first after self (Tensor.to)
  kDeviceType = 3, // torch.device(type, index) itself
  kIsCudaRead = 4, // the getter of Tensor.is_cuda: every read counts
};

struct RequestWatchObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* checks;        // dict: function -> CheckKind
  PyObject* device_class;  // torch.device
  PyObject* rule_device;   // the rule codes: torch.device("cuda"),
  PyObject* rule_keyword;  //   device="cuda",
  PyObject* rule_to;       //   .to("cuda"),
  PyObject* rule_is_cuda;  //   .is_cuda
  PyObject* on_request;    // (rule, walk) -> token or None
  PyObject* on_raised;     // (token) -> None
  PyObject* forwarder;     // the type of anydev.torch's forwarders (Note [Counted once])
};

// The rule of a call of `func` (nullptr: it asks for no CUDA) and whether a
// request made inside PyTorch counts for the user's line (`walk`).
PyObject* RuleOf(RequestWatchObject* w, PyObject* func, PyObject* args, PyObject* kwargs,
                 bool* walk) {
  *walk = true;
  PyObject* kind = PyDict_GetItemWithError(w->checks, func);  // borrowed
  if (kind == nullptr && PyErr_Occurred()) PyErr_Clear();     // an unhashable function
  bool to = false;  // Tensor.to or Module.to: device= of it is the rule of .to()
  if (kind != nullptr) {
    const Py_ssize_t n = PyTuple_Check(args) ? PyTuple_GET_SIZE(args) : 0;
    const long k = PyLong_AsLong(kind);
    to = k == kFirstArg || k == kSecondArg;
    switch (k) {
      case kFirstArg:
        if (n > 0 && IsCuda(PyTuple_GET_ITEM(args, 0), w->device_class)) return w->rule_to;
        break;
      case kSecondArg:
        if (n > 1 && IsCuda(PyTuple_GET_ITEM(args, 1), w->device_class)) return w->rule_to;
        break;
      case kDeviceType: {
        PyObject* type = n > 0 ? PyTuple_GET_ITEM(args, 0)
                               : (kwargs != nullptr ? PyDict_GetItemString(kwargs, "type")
                                                    : nullptr);
        // Counted where the user's code makes it only: PyTorch makes
        // torch.device("cuda") for its own purposes (torch.distributed does),
        // where a factory or .to() with CUDA would have failed without a GPU.
        *walk = false;
        if (type != nullptr && IsCuda(type, w->device_class)) return w->rule_device;
        return nullptr;
      }
      case kIsCudaRead:
        *walk = false;
        return w->rule_is_cuda;
      default:
        PyErr_Clear();
        break;
    }
  }
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0) {
    PyObject* device = PyDict_GetItemString(kwargs, "device");  // borrowed
    if (device != nullptr && device != Py_None && IsCuda(device, w->device_class)) {
      return to ? w->rule_to : w->rule_keyword;
    }
  }
  return nullptr;
}

PyObject* RequestWatchCall(PyObject* self, PyObject* const* args, size_t nargsf,
                           PyObject* kwnames) {
  auto* w = reinterpret_cast<RequestWatchObject*>(self);
  // (mode, func, types, args=(), kwargs=None): a method of the mode, as
  // PyTorch and torch.overrides call it (PyTorch checks that the attribute's
  // __self__ is the mode: a method descriptor, bound by RequestWatchGet).
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError, "__torch_function__ is a method of the mode");
    return nullptr;
  }
  ++args;
  --nargs;
  PyObject* slots[4] = {nullptr, nullptr, nullptr, nullptr};
  if (nargs > 4) {
    PyErr_SetString(PyExc_TypeError, "__torch_function__ takes at most 4 arguments");
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) slots[i] = args[i];
  if (kwnames != nullptr) {
    static const char* const kNames[4] = {"func", "types", "args", "kwargs"};
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k) {
      const char* name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
      int pos = -1;
      for (int j = 0; name != nullptr && j < 4; ++j) {
        if (std::strcmp(name, kNames[j]) == 0) pos = j;
      }
      if (pos < 0 || slots[pos] != nullptr) {
        PyErr_Format(PyExc_TypeError, "__torch_function__ got an unexpected keyword argument %R",
                     PyTuple_GET_ITEM(kwnames, k));
        return nullptr;
      }
      slots[pos] = args[nargs + k];
    }
  }
  if (slots[0] == nullptr || slots[1] == nullptr) {
    PyErr_SetString(PyExc_TypeError, "__torch_function__ needs func and types");
    return nullptr;
  }
  PyObject* func = slots[0];
  // Note [Counted once]: PyTorch hands a mode the Python-visible object of a
  // tensor method, torch.Tensor.cuda, which anydev.torch's counted .cuda() is
  // (a native forwarder, adapter.py's _CountedMethod): calling it from here,
  // with no frame of ours, would count the user's x.cuda() a second time. The
  // forwarder has counted the call already; its original runs it.
  PyObject* original = nullptr;
  if (Py_TYPE(func) == reinterpret_cast<PyTypeObject*>(w->forwarder)) {
    original = PyObject_GetAttrString(func, "__anydev_original__");
    if (original == nullptr) {
      PyErr_Clear();
    } else {
      func = original;
    }
  }
  PyObject* call_args = slots[2];
  PyObject* kwargs = slots[3] == Py_None ? nullptr : slots[3];
  PyObject* empty = nullptr;
  if (call_args == nullptr || call_args == Py_None) {
    empty = PyTuple_New(0);
    if (empty == nullptr) {
      Py_XDECREF(original);
      return nullptr;
    }
    call_args = empty;
  }
  if (!PyTuple_Check(call_args) || (kwargs != nullptr && !PyDict_Check(kwargs))) {
    Py_XDECREF(empty);
    Py_XDECREF(original);
    PyErr_SetString(PyExc_TypeError, "__torch_function__: args must be a tuple and kwargs a dict");
    return nullptr;
  }
  bool walk = true;
  PyObject* rule = RuleOf(w, func, call_args, kwargs, &walk);
  PyObject* token = nullptr;
  if (rule != nullptr) {
    token = PyObject_CallFunctionObjArgs(w->on_request, rule, walk ? Py_True : Py_False, nullptr);
    if (token == nullptr) PyErr_WriteUnraisable(w->on_request);
  }
  PyObject* out = PyObject_Call(func, call_args, kwargs);
  if (out == nullptr && token != nullptr && token != Py_None) TellRaised(w->on_raised, token);
  Py_XDECREF(token);
  Py_XDECREF(empty);
  Py_XDECREF(original);
  return out;
}

int RequestWatchTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* w = reinterpret_cast<RequestWatchObject*>(self);
  Py_VISIT(w->checks);
  Py_VISIT(w->device_class);
  Py_VISIT(w->on_request);
  Py_VISIT(w->on_raised);
  Py_VISIT(w->forwarder);
  return 0;
}

int RequestWatchClear(PyObject* self) {
  auto* w = reinterpret_cast<RequestWatchObject*>(self);
  Py_CLEAR(w->checks);
  Py_CLEAR(w->device_class);
  Py_CLEAR(w->rule_device);
  Py_CLEAR(w->rule_keyword);
  Py_CLEAR(w->rule_to);
  Py_CLEAR(w->rule_is_cuda);
  Py_CLEAR(w->on_request);
  Py_CLEAR(w->on_raised);
  Py_CLEAR(w->forwarder);
  return 0;
}

void RequestWatchDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  RequestWatchClear(self);
  Py_TYPE(self)->tp_free(self);
}

// RequestWatch(checks, device_class, rules, on_request, on_raised, forwarder);
// rules: the codes of (torch.device("cuda"), device="cuda", .to("cuda"),
// .is_cuda); forwarder: anydev._C._compat.Forwarder.
PyObject* RequestWatchNew(PyTypeObject* type, PyObject* args, PyObject*) {
  PyObject *checks, *device_class, *rules, *on_request, *on_raised, *forwarder;
  if (!PyArg_ParseTuple(args, "O!OO!OOO!", &PyDict_Type, &checks, &device_class, &PyTuple_Type,
                        &rules, &on_request, &on_raised, &PyType_Type, &forwarder)) {
    return nullptr;
  }
  if (PyTuple_GET_SIZE(rules) != 4) {
    PyErr_SetString(PyExc_ValueError, "RequestWatch: rules must be 4 codes");
    return nullptr;
  }
  auto* w = reinterpret_cast<RequestWatchObject*>(type->tp_alloc(type, 0));
  if (w == nullptr) return nullptr;
  w->vectorcall = RequestWatchCall;
  PyObject** fields[] = {&w->checks, &w->device_class, &w->on_request, &w->on_raised,
                         &w->forwarder};
  PyObject* values[] = {checks, device_class, on_request, on_raised, forwarder};
  for (size_t i = 0; i < 5; ++i) {
    Py_INCREF(values[i]);
    *fields[i] = values[i];
  }
  PyObject** rule_fields[] = {&w->rule_device, &w->rule_keyword, &w->rule_to, &w->rule_is_cuda};
  for (Py_ssize_t i = 0; i < 4; ++i) {
    PyObject* r = PyTuple_GET_ITEM(rules, i);
    Py_INCREF(r);
    *rule_fields[i] = r;
  }
  return reinterpret_cast<PyObject*>(w);
}

PyObject* RequestWatchGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

PyTypeObject g_request_watch_type = {PyVarObject_HEAD_INIT(nullptr, 0) nullptr};

// --- Watched: a PyTorch function judged call by call --------------------------

struct WatchedObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* original;
  PyObject* check;      // (*args, **kwargs) -> token or None
  PyObject* on_raised;  // (token) -> None
  PyObject* dict;       // __name__, __doc__, __wrapped__, ... (functools.update_wrapper)
};

PyObject* WatchedCall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* w = reinterpret_cast<WatchedObject*>(self);
  PyObject* token = PyObject_Vectorcall(w->check, args, nargsf, kwnames);
  if (token == nullptr) {
    PyErr_WriteUnraisable(w->check);  // a bug of anydev's must not fail the user's call
  } else if (token == Py_None) {
    Py_CLEAR(token);
  }
  // Held by the call, so current() may return it while the call runs.
  PyObject* original = w->original;
  Py_INCREF(original);
  PyObject* saved = tl_current;
  if (token != nullptr) tl_current = token;
  PyObject* out = PyObject_Vectorcall(original, args, nargsf, kwnames);
  tl_current = saved;
  Py_DECREF(original);
  if (out == nullptr && token != nullptr) TellRaised(w->on_raised, token);
  Py_XDECREF(token);
  return out;
}

PyObject* WatchedGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

int WatchedTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* w = reinterpret_cast<WatchedObject*>(self);
  Py_VISIT(w->original);
  Py_VISIT(w->check);
  Py_VISIT(w->on_raised);
  Py_VISIT(w->dict);
  return 0;
}

int WatchedClear(PyObject* self) {
  auto* w = reinterpret_cast<WatchedObject*>(self);
  Py_CLEAR(w->original);
  Py_CLEAR(w->check);
  Py_CLEAR(w->on_raised);
  Py_CLEAR(w->dict);
  return 0;
}

void WatchedDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  WatchedClear(self);
  Py_TYPE(self)->tp_free(self);
}

PyObject* WatchedRepr(PyObject* self) {
  return PyUnicode_FromFormat("<anydev: %R, its calls that ask for CUDA counted>",
                              reinterpret_cast<WatchedObject*>(self)->original);
}

// Watched(original, check, on_raised)
PyObject* WatchedNew(PyTypeObject* type, PyObject* args, PyObject*) {
  PyObject *original, *check, *on_raised;
  if (!PyArg_ParseTuple(args, "OOO", &original, &check, &on_raised)) return nullptr;
  auto* w = reinterpret_cast<WatchedObject*>(type->tp_alloc(type, 0));
  if (w == nullptr) return nullptr;
  w->vectorcall = WatchedCall;
  Py_INCREF(original);
  w->original = original;
  Py_INCREF(check);
  w->check = check;
  Py_INCREF(on_raised);
  w->on_raised = on_raised;
  w->dict = nullptr;
  return reinterpret_cast<PyObject*>(w);
}

PyObject* WatchedOriginal(PyObject* self, void*) {
  PyObject* o = reinterpret_cast<WatchedObject*>(self)->original;
  Py_INCREF(o);
  return o;
}

PyGetSetDef kWatchedGetSet[] = {
    {"__anydev_original__", WatchedOriginal, nullptr, "The function watched.", nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject g_watched_type = {PyVarObject_HEAD_INIT(nullptr, 0) nullptr};

void InitTypes() {
  PyTypeObject& r = g_request_watch_type;
  r.tp_name = "anydev._C._watch.RequestWatch";
  r.tp_basicsize = sizeof(RequestWatchObject);
  r.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR |
               Py_TPFLAGS_HAVE_GC;
  r.tp_doc = "The __torch_function__ of anydev's mode that counts the calls asking for CUDA.";
  r.tp_vectorcall_offset = offsetof(RequestWatchObject, vectorcall);
  r.tp_call = PyVectorcall_Call;
  r.tp_new = RequestWatchNew;
  r.tp_dealloc = RequestWatchDealloc;
  r.tp_traverse = RequestWatchTraverse;
  r.tp_clear = RequestWatchClear;
  r.tp_descr_get = RequestWatchGet;
  if (PyType_Ready(&r) < 0) throw py::error_already_set();

  PyTypeObject& t = g_watched_type;
  t.tp_name = "anydev._C._watch.Watched";
  t.tp_basicsize = sizeof(WatchedObject);
  // A method descriptor: as a class's __init__ it is called with the object
  // first, and no bound method is made.
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR |
               Py_TPFLAGS_HAVE_GC;
  t.tp_doc = "A PyTorch function whose calls that ask for CUDA are counted.";
  t.tp_vectorcall_offset = offsetof(WatchedObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_new = WatchedNew;
  t.tp_dealloc = WatchedDealloc;
  t.tp_traverse = WatchedTraverse;
  t.tp_clear = WatchedClear;
  t.tp_descr_get = WatchedGet;
  t.tp_repr = WatchedRepr;
  t.tp_getset = kWatchedGetSet;
  t.tp_dictoffset = offsetof(WatchedObject, dict);
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
}

}  // namespace

void BindWatch(py::module_& m) {
  py::module_ w = m.def_submodule(
      "_watch", "Calls that ask PyTorch for CUDA, seen without a Python frame (bind_watch.cc).");
  InitTypes();
  Py_INCREF(&g_request_watch_type);
  w.add_object("RequestWatch", py::handle(reinterpret_cast<PyObject*>(&g_request_watch_type)));
  Py_INCREF(&g_watched_type);
  w.add_object("Watched", py::handle(reinterpret_cast<PyObject*>(&g_watched_type)));
  w.def(
      "current",
      [] {
        return tl_current == nullptr ? py::none()
                                     : py::reinterpret_borrow<py::object>(tl_current);
      },
      "The token of the innermost Watched call on this thread that asked for CUDA, or None.");
}

}  // namespace anydev::python
