// The legacy-call engine: forwarders for legacy entry points, their
// once-per-call-site warnings, the policy, and the counts the runtime report
// is made of.
//
// A forwarder (anydev._C._compat.Forwarder) is what `anydev.cuda.current_device`
// is. Each call:
//   1. finds its call site: the instruction of the calling Python frame
//      (site_key.c) plus the row, looked up in a hash map;
//   2. counts the call there (always: warned, ignored or refused);
//   3. on the first call from a site (and again after a policy change) asks
//      the policy for the caller's module and file, and warns once with
//      anydev.LegacyAPIWarning through warnings.warn_explicit, so Python's
//      filters (-W, filterwarnings, pytest) apply;
//   4. raises under the "error" policy, else calls its target (directly, for
//      the CPython-API targets of fast_calls.cc).
// After its first call from a site, a forwarder costs one hash lookup and an
// increment over the target.
//
// A scoped row (anydev.torch, see "Scoped forwarders" below) puts the same
// engine on a real PyTorch entry point: each site is also resolved once as
// inside or outside the user's scope; outside it, a call is only counted and
// reaches the original object unchanged.
//
// Sites are kept per (file, line, row), so a reloaded module (new code
// objects) or another thread reaching the same line does not warn again. The
// hash map from instruction address to site pins each code object it has
// seen, so an address is never reused by another code object.
#include <Python.h>
#include <structmember.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common.h"
#include "site_key.h"

namespace anydev::python {
namespace {

enum Policy : int8_t { kIgnore = 0, kWarn = 1, kError = 2 };

struct Entry;

struct Row {
  std::string legacy;       // torch.cuda.current_device
  std::string replacement;  // torch.accelerator.current_device_index
  std::string rule;         // AD103
  std::string message;      // the full warning text
  PyObject* target = nullptr;  // strong; nullptr: anydev has no equivalent
  std::string no_target_message;
  // The device type whose strings/devices are re-typed to the current
  // accelerator in the arguments ("cuda" for anydev.cuda), or none.
  std::optional<DeviceType> retype;
  // The last call site seen for this row: a hot loop calls from one site, so
  // this one comparison usually replaces the hash lookup.
  const void* last_instr = nullptr;
  Entry* last_entry = nullptr;
  // The legacy positional-or-keyword parameter names, in order: a call that
  // passes them by keyword (torch.cuda.synchronize(device=0)) is bound to
  // positions, as the generic replacements take them positionally only.
  std::vector<std::string> params;
  // Direct call into a CPython-API target (skips one dispatch).
  PyCFunction cfunc = nullptr;
  int cflags = 0;
  PyObject* cself = nullptr;
  bool noargs = false;  // cfunc is METH_NOARGS
  bool onearg = false;  // cfunc is METH_O
  // A scoped row (anydev.torch): a forwarder put on a real PyTorch entry
  // point. Calls from outside the scope reach `original` unchanged and are
  // only counted; calls from inside it are warned about and reach `target`
  // (the original in mode observe, the replacement in mode forward).
  bool scoped = false;
  bool active = false;             // false after uninstall: a plain pass-through
  PyObject* original = nullptr;    // strong
  std::string quiet;               // PyTorch's own warning text to suppress in scope
};

struct Entry {  // one (file, line, row): what the report shows
  std::string file;
  int line = 0;
  std::string module;
  int row = 0;
  uint64_t count = 0;
  uint64_t raised = 0;  // scoped rows: the counted calls whose callee raised
  double first_seen = 0;
  int epoch = -1;  // policy epoch the cached policy belongs to
  Policy policy = kWarn;
  bool warned = false;
  int8_t scope = 0;  // scoped rows: kOutside, kInside or kInternal (see ResolveScope)
};

struct FastKey {
  const void* instr;
  int row;
  template <typename H>
  friend H AbslHashValue(H h, const FastKey& k) {
    return H::combine(std::move(h), k.instr, k.row);
  }
  friend bool operator==(const FastKey& a, const FastKey& b) {
    return a.instr == b.instr && a.row == b.row;
  }
};

// All guarded by the GIL.
std::vector<Row>* g_rows = nullptr;
absl::node_hash_map<std::tuple<std::string, int, int>, Entry>* g_entries = nullptr;
absl::flat_hash_map<FastKey, Entry*>* g_fast = nullptr;
std::vector<PyObject*>* g_pinned_code = nullptr;
int g_epoch = 0;
// Bumped by reset(), which frees every Entry: a call that was under way then
// (a forked child's reset) must not touch its entry afterwards.
uint64_t g_generation = 0;
PyObject* g_warning_category = nullptr;   // anydev.LegacyAPIWarning
PyObject* g_error_category = nullptr;     // anydev.LegacyAPIError
PyObject* g_no_equivalent = nullptr;      // anydev.NoEquivalentError
PyObject* g_policy_resolver = nullptr;    // (module, file) -> int

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Resolves the policy of an entry; -1 with a Python error set on failure.
int ResolvePolicy(Entry* e) {
  if (g_policy_resolver == nullptr) {
    e->policy = kWarn;
  } else {
    PyObject* r = PyObject_CallFunction(g_policy_resolver, "ss", e->module.c_str(), e->file.c_str());
    if (r == nullptr) return -1;
    const long p = PyLong_AsLong(r);
    Py_DECREF(r);
    if (p == -1 && PyErr_Occurred()) return -1;
    e->policy = p <= 0 ? kIgnore : (p >= 2 ? kError : kWarn);
  }
  e->epoch = g_epoch;
  return 0;
}

// Finds (or creates) the entry for a call of `row` from the frame `depth`
// levels up; nullptr when called from no Python frame at all.
Entry* FindEntry(int row, int depth) {
  PyCodeObject* code = nullptr;
  PyObject* globals = nullptr;
  int offset = 0;
  const void* instr = anydev_site_key(depth, &code, &globals, &offset);
  if (instr == nullptr) return nullptr;
  Row& r = (*g_rows)[static_cast<size_t>(row)];
  if (ABSL_PREDICT_TRUE(instr == r.last_instr)) return r.last_entry;
  auto it = g_fast->find(FastKey{instr, row});
  if (ABSL_PREDICT_TRUE(it != g_fast->end())) {
    r.last_instr = instr;
    r.last_entry = it->second;
    return it->second;
  }

  // First call of this row from this instruction.
  const int line = PyCode_Addr2Line(code, offset);
  std::string file = "<unknown>";
  if (PyObject* f = code->co_filename; f != nullptr && PyUnicode_Check(f)) {
    if (const char* s = PyUnicode_AsUTF8(f)) file = s;
  }
  std::string module;
  if (globals != nullptr && PyDict_Check(globals)) {
    PyObject* name = PyDict_GetItemString(globals, "__name__");  // borrowed
    if (name != nullptr && PyUnicode_Check(name)) {
      if (const char* s = PyUnicode_AsUTF8(name)) module = s;
    }
  }
  PyErr_Clear();
  auto [eit, inserted] = g_entries->try_emplace(std::make_tuple(file, line, row));
  Entry* e = &eit->second;
  if (inserted) {
    e->file = file;
    e->line = line;
    e->module = module;
    e->row = row;
    e->first_seen = Now();
  }
  Py_INCREF(code);
  g_pinned_code->push_back(reinterpret_cast<PyObject*>(code));
  g_fast->emplace(FastKey{instr, row}, e);
  r.last_instr = instr;
  r.last_entry = e;
  return e;
}

// Warns once, refuses, or lets the call through, by the entry's policy.
// Returns 0 to go on, -1 with a Python error set. A site that has warned
// stays quiet, but the error policy refuses every call, including those from
// sites that warned before the policy changed.
int ApplyPolicy(Entry* e, const Row& r) {
  if (ABSL_PREDICT_TRUE(e->policy != kError && (e->warned || e->policy == kIgnore))) return 0;
  if (e->policy == kError) {
    PyErr_SetString(g_error_category, r.message.c_str());
    return -1;
  }
  PyObject* msg = PyUnicode_FromString(r.message.c_str());
  PyObject* file = PyUnicode_FromString(e->file.c_str());
  PyObject* module = PyUnicode_FromString(e->module.c_str());
  int rc = -1;
  if (msg != nullptr && file != nullptr && module != nullptr) {
    rc = PyErr_WarnExplicitObject(g_warning_category, msg, file, e->line, module, nullptr);
  }
  Py_XDECREF(msg);
  Py_XDECREF(file);
  Py_XDECREF(module);
  if (rc == 0) e->warned = true;  // a filter that raised will raise again next time
  return rc;
}

// Counts a call and applies the policy. Returns 0 to go on, -1 with a Python
// error set (the "error" policy, or a warnings filter that raised).
int Hit(int row, int depth) {
  Entry* e = FindEntry(row, depth);
  if (e == nullptr) return 0;  // no Python caller: nothing to attribute
  ++e->count;
  if (ABSL_PREDICT_FALSE(e->epoch != g_epoch) && ResolvePolicy(e) < 0) return -1;
  return ApplyPolicy(e, (*g_rows)[static_cast<size_t>(row)]);
}

// The policy part of Hit for an entry already counted, out of line.
ABSL_ATTRIBUTE_NOINLINE int ApplyPolicySlow(Entry* e, int row) {
  if (e->epoch != g_epoch && ResolvePolicy(e) < 0) return -1;
  return ApplyPolicy(e, (*g_rows)[static_cast<size_t>(row)]);
}

ABSL_ATTRIBUTE_NOINLINE int HitSlow(int row) { return Hit(row, 0); }

// Hit(row, 0) for a call from the last site seen for `row` that has warned
// (or is ignored) under the current policy: the site's instruction compared
// with the one remembered, an increment and three comparisons; everything
// else goes out of line. Note [Shim overhead]: this is most of what a legacy
// call costs over its replacement (benchmarks/python/bench_compat.py).
inline int HitFast(int row) {
  const Row& r = (*g_rows)[static_cast<size_t>(row)];
  const void* instr = anydev_site_instr();
  Entry* e = r.last_entry;
  if (ABSL_PREDICT_FALSE(instr != r.last_instr || e == nullptr)) return HitSlow(row);
  ++e->count;
  if (ABSL_PREDICT_TRUE(e->epoch == g_epoch && e->policy != kError &&
                        (e->warned || e->policy == kIgnore))) {
    return 0;
  }
  return ApplyPolicySlow(e, row);
}

// --- the Forwarder type ------------------------------------------------------

struct ForwarderObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  int row;
  PyObject* name;      // __name__
  PyObject* qualname;  // __qualname__
  PyObject* module;    // __module__
  PyObject* doc;       // __doc__
  PyObject* dict;      // for __deprecated__, __wrapped__, ...
};

// Returns new arguments with device strings/objects of the legacy type turned
// into the current accelerator's; nullptr (no error) when nothing changes.
PyObject* RetypeArg(PyObject* arg, DeviceType from) {
  // Indices, None and booleans are by far the common arguments: no device here.
  if (PyLong_CheckExact(arg) || arg == Py_None || PyBool_Check(arg)) return nullptr;
  std::optional<Device> d;
  if (PyUnicode_Check(arg)) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(arg, &n);
    if (s == nullptr) {
      PyErr_Clear();
      return nullptr;
    }
    // With its size: "cuda\0x" is no device (the target reports it), not "cuda".
    absl::StatusOr<Device> parsed = Device::Parse(absl::string_view(s, static_cast<size_t>(n)));
    if (parsed.ok()) d = *parsed;
  } else {
    // An anydev.device, or a torch.device: torch.device("cuda", 1) is retyped
    // as "cuda:1" is (DeviceOfPy reads a torch.device by its type's name).
    try {
      d = DeviceOfPy(arg);
    } catch (...) {
      PyErr_Clear();
      return nullptr;
    }
  }
  if (!d || d->type() != from) return nullptr;
  absl::StatusOr<DeviceType> acc = acc::GetAccelerator();
  if (!acc.ok()) return nullptr;  // let the target report the missing accelerator
  try {
    return MakePyDevice(Device(*acc, d->index())).release().ptr();
  } catch (py::error_already_set&) {
    PyErr_Clear();
    return nullptr;
  }
}

// Binds keyword arguments named after the row's legacy parameters to their
// positions; false (and `out` untouched) when the call cannot be bound that
// way (an unknown name, a name given twice, a gap), so the target reports it.
bool BindKeywords(const Row& r, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                  std::vector<PyObject*>* out) {
  std::vector<PyObject*> slots(r.params.size(), nullptr);
  if (nargs > static_cast<Py_ssize_t>(slots.size())) return false;
  for (Py_ssize_t i = 0; i < nargs; ++i) slots[static_cast<size_t>(i)] = args[i];
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k) {
    const char* name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
    if (name == nullptr) {
      PyErr_Clear();
      return false;
    }
    size_t pos = 0;
    while (pos < r.params.size() && r.params[pos] != name) ++pos;
    if (pos == r.params.size() || slots[pos] != nullptr) return false;
    slots[pos] = args[nargs + k];
  }
  size_t n = 0;
  while (n < slots.size() && slots[n] != nullptr) ++n;
  for (size_t i = n; i < slots.size(); ++i) {
    if (slots[i] != nullptr) return false;  // a gap: would need the legacy defaults
  }
  out->assign(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(n));
  return true;
}

PyObject* CallTarget(const Row& r, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (r.target == nullptr) {
    PyErr_SetString(g_no_equivalent, r.no_target_message.c_str());
    return nullptr;
  }
  std::vector<PyObject*> bound;  // borrowed
  if (kwnames != nullptr && !r.params.empty() && BindKeywords(r, args, nargs, kwnames, &bound)) {
    args = bound.data();
    nargs = static_cast<Py_ssize_t>(bound.size());
    nargsf = bound.size();
    kwnames = nullptr;
  }
  if (r.retype) {
    const Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    std::vector<PyObject*> fixed;
    for (Py_ssize_t i = 0; i < total; ++i) {
      if (PyObject* n = RetypeArg(args[i], *r.retype)) {
        if (fixed.empty()) fixed.assign(args, args + total);
        fixed[static_cast<size_t>(i)] = n;
      }
    }
    if (!fixed.empty()) {
      PyObject* out = PyObject_Vectorcall(r.target, fixed.data(), static_cast<size_t>(nargs), kwnames);
      for (Py_ssize_t i = 0; i < total; ++i) {
        if (fixed[static_cast<size_t>(i)] != args[i]) Py_DECREF(fixed[static_cast<size_t>(i)]);
      }
      return out;
    }
  }
  if (r.cfunc != nullptr && kwnames == nullptr) {
    switch (r.cflags & (METH_VARARGS | METH_FASTCALL | METH_NOARGS | METH_O | METH_KEYWORDS)) {
      case METH_NOARGS:
        if (nargs == 0) return r.cfunc(r.cself, nullptr);
        break;
      case METH_O:
        if (nargs == 1) return r.cfunc(r.cself, args[0]);
        break;
      case METH_FASTCALL:
        return reinterpret_cast<_PyCFunctionFast>(reinterpret_cast<void (*)()>(r.cfunc))(r.cself, args, nargs);
      default:
        break;
    }
  }
  return PyObject_Vectorcall(r.target, args, nargsf, kwnames);
}

PyObject* ForwarderCall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const int row = reinterpret_cast<ForwarderObject*>(self)->row;
  if (HitFast(row) < 0) return nullptr;
  const Row& r = (*g_rows)[static_cast<size_t>(row)];
  // A call without arguments into a METH_NOARGS target (current_device()):
  // nothing to bind or re-type.
  if (kwnames == nullptr) {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (ABSL_PREDICT_TRUE(r.noargs && nargs == 0)) return r.cfunc(r.cself, nullptr);
    // One int (or None) into a METH_O target (set_device(0)): nothing to
    // re-type either.
    if (r.onearg && nargs == 1 && (PyLong_CheckExact(args[0]) || args[0] == Py_None)) {
      return r.cfunc(r.cself, args[0]);
    }
  }
  return CallTarget(r, args, nargsf, kwnames);
}

// --- Scoped forwarders on a real PyTorch (anydev.torch) ---------------------
//
// The same sites, counts and once-per-site warnings as above, plus a scope: a
// site's caller is resolved once (like its policy, again after
// policy_changed) through a Python resolver (module, file) -> 0 outside the
// scope, 1 inside, 2 internal (PyTorch's and anydev's own files: not counted).
// After that, a call costs the site lookup, one comparison, an increment and
// the direct call of the original or the target.

enum Scope : int8_t { kOutside = 0, kInside = 1, kInternal = 2 };

PyObject* g_scope_resolver = nullptr;  // (module, file) -> 0/1/2
PyObject* g_quiet_filter = nullptr;    // the warnings.filters item of the matcher below
PyObject* g_quiet_front = nullptr;     // () -> None: puts it first in warnings.filters
PyObject* g_warnings_module = nullptr;
// The scoped row whose original is being called from inside the scope on this
// thread (-1: none): while it is set, the matcher hides PyTorch's own
// deprecation warning for that entry point, so a user sees anydev's only.
thread_local int tl_quiet_row = -1;

// Resolves the scope (and, inside it, the policy) of a scoped row's entry.
int ResolveScope(Entry* e) {
  int8_t scope = kOutside;  // no resolver: nothing is in scope
  if (g_scope_resolver != nullptr) {
    PyObject* r = PyObject_CallFunction(g_scope_resolver, "ss", e->module.c_str(), e->file.c_str());
    if (r == nullptr) return -1;
    const long v = PyLong_AsLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) return -1;
    scope = v == 1 ? kInside : (v == 2 ? kInternal : kOutside);
  }
  if (scope == kInside && ResolvePolicy(e) < 0) return -1;
  e->scope = scope;
  e->epoch = g_epoch;
  return 0;
}

// Makes sure the quiet filter is the first of warnings.filters (a filter the
// user added later, or a catch_warnings block, may have put others first).
void QuietFilterFirst() {
  if (g_quiet_filter == nullptr || g_quiet_front == nullptr) return;
  if (g_warnings_module == nullptr) {
    g_warnings_module = PyImport_ImportModule("warnings");
    if (g_warnings_module == nullptr) {
      PyErr_Clear();
      return;
    }
  }
  PyObject* filters = PyObject_GetAttrString(g_warnings_module, "filters");
  const bool first = filters != nullptr && PyList_Check(filters) && PyList_GET_SIZE(filters) > 0 &&
                     PyList_GET_ITEM(filters, 0) == g_quiet_filter;
  Py_XDECREF(filters);
  if (!first) {
    PyObject* r = PyObject_CallNoArgs(g_quiet_front);
    Py_XDECREF(r);
  }
  PyErr_Clear();
}

PyObject* ScopedForwarderCall(PyObject* self, PyObject* const* args, size_t nargsf,
                              PyObject* kwnames) {
  const int row = reinterpret_cast<ForwarderObject*>(self)->row;
  const Row* r = &(*g_rows)[static_cast<size_t>(row)];
  if (ABSL_PREDICT_FALSE(!r->active)) return PyObject_Vectorcall(r->original, args, nargsf, kwnames);
  Entry* e = FindEntry(row, 0);
  if (ABSL_PREDICT_FALSE(e == nullptr)) return PyObject_Vectorcall(r->original, args, nargsf, kwnames);
  if (ABSL_PREDICT_FALSE(e->epoch != g_epoch)) {
    if (ResolveScope(e) < 0) return nullptr;
    r = &(*g_rows)[static_cast<size_t>(row)];  // the resolver may have registered rows
  }
  PyObject* fn;
  if (ABSL_PREDICT_TRUE(e->scope == kOutside)) {
    ++e->count;
    fn = r->original;
  } else if (e->scope == kInternal) {
    Py_INCREF(r->original);  // an uninstall during the call may drop the row's reference
    PyObject* out = PyObject_Vectorcall(r->original, args, nargsf, kwnames);
    Py_DECREF(r->original);
    return out;
  } else {
    ++e->count;
    if (ApplyPolicy(e, *r) < 0) return nullptr;
    r = &(*g_rows)[static_cast<size_t>(row)];  // a warnings hook may have run Python code
    fn = r->target;
    if (ABSL_PREDICT_FALSE(!r->quiet.empty() && fn == r->original)) {
      QuietFilterFirst();
      Py_INCREF(fn);
      const int saved = tl_quiet_row;
      const uint64_t generation = g_generation;
      tl_quiet_row = row;
      PyObject* out = PyObject_Vectorcall(fn, args, nargsf, kwnames);
      tl_quiet_row = saved;
      Py_DECREF(fn);
      if (ABSL_PREDICT_FALSE(out == nullptr) && generation == g_generation) ++e->raised;
      return out;
    }
  }
  // A reference for the call: an uninstall during it may drop the row's.
  Py_INCREF(fn);
  const uint64_t generation = g_generation;
  PyObject* out = PyObject_Vectorcall(fn, args, nargsf, kwnames);
  Py_DECREF(fn);
  // Counted calls that raised: the report of a run on another accelerator
  // says which CUDA-only calls failed there (anydev/_torch/cuda_only.py).
  if (ABSL_PREDICT_FALSE(out == nullptr) && generation == g_generation) ++e->raised;
  return out;
}

// The `message` of the quiet filter: matches a warning's text only while this
// thread is calling an original from inside the scope, and only when the text
// names that entry point (PyTorch's "`torch.cuda.amp.autocast(args...)` is
// deprecated..."), so it hides nothing else, in no other thread.
struct QuietMatcherObject {
  PyObject_HEAD
};

PyObject* QuietMatcherMatch(PyObject*, PyObject* text) {
  if (tl_quiet_row < 0 || static_cast<size_t>(tl_quiet_row) >= g_rows->size() ||
      !PyUnicode_Check(text)) {
    Py_RETURN_FALSE;
  }
  const char* s = PyUnicode_AsUTF8(text);
  if (s == nullptr) {
    PyErr_Clear();
    Py_RETURN_FALSE;
  }
  const std::string& quiet = (*g_rows)[static_cast<size_t>(tl_quiet_row)].quiet;
  if (!quiet.empty() && std::string_view(s).find(quiet) != std::string_view::npos) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

PyObject* QuietMatcherRepr(PyObject*) {
  return PyUnicode_FromString("<anydev.torch: PyTorch's own deprecation warning of an in-scope call>");
}

PyMethodDef kQuietMatcherMethods[] = {
    {"match", QuietMatcherMatch, METH_O, "True while an in-scope call's PyTorch warning is to be hidden."},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject g_quiet_matcher_type = {PyVarObject_HEAD_INIT(nullptr, 0) nullptr};

void ForwarderDealloc(PyObject* self) {
  auto* f = reinterpret_cast<ForwarderObject*>(self);
  Py_XDECREF(f->name);
  Py_XDECREF(f->qualname);
  Py_XDECREF(f->module);
  Py_XDECREF(f->doc);
  Py_XDECREF(f->dict);
  Py_TYPE(self)->tp_free(self);
}

PyObject* ForwarderRepr(PyObject* self) {
  auto* f = reinterpret_cast<ForwarderObject*>(self);
  const Row& r = (*g_rows)[static_cast<size_t>(f->row)];
  return PyUnicode_FromFormat("<legacy forwarder %s -> %s [%s]>", r.legacy.c_str(),
                              r.replacement.empty() ? "(none)" : r.replacement.c_str(),
                              r.rule.c_str());
}

PyMemberDef kForwarderMembers[] = {
    {"__name__", T_OBJECT, offsetof(ForwarderObject, name), 0, nullptr},
    {"__qualname__", T_OBJECT, offsetof(ForwarderObject, qualname), 0, nullptr},
    {"__module__", T_OBJECT, offsetof(ForwarderObject, module), 0, nullptr},
    {"__doc__", T_OBJECT, offsetof(ForwarderObject, doc), 0, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyObject* ForwarderGetRow(PyObject* self, void*) {
  return PyLong_FromLong(reinterpret_cast<ForwarderObject*>(self)->row);
}

PyGetSetDef kForwarderGetSet[] = {
    {"_anydev_row", ForwarderGetRow, nullptr, "Index of this forwarder's table row.", nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject g_forwarder_type = {PyVarObject_HEAD_INIT(nullptr, 0) nullptr};

// Forwarder(row, name, qualname, module, doc)
PyObject* ForwarderNew(PyTypeObject* type, PyObject* args, PyObject*) {
  int row = 0;
  PyObject *name, *qualname, *module, *doc;
  if (!PyArg_ParseTuple(args, "iUUUO", &row, &name, &qualname, &module, &doc)) return nullptr;
  if (row < 0 || static_cast<size_t>(row) >= g_rows->size()) {
    PyErr_Format(PyExc_ValueError, "Forwarder: unknown row %d", row);
    return nullptr;
  }
  auto* f = reinterpret_cast<ForwarderObject*>(type->tp_alloc(type, 0));
  if (f == nullptr) return nullptr;
  f->vectorcall = (*g_rows)[static_cast<size_t>(row)].scoped ? ScopedForwarderCall : ForwarderCall;
  f->row = row;
  Py_INCREF(name);
  f->name = name;
  Py_INCREF(qualname);
  f->qualname = qualname;
  Py_INCREF(module);
  f->module = module;
  Py_INCREF(doc);
  f->doc = doc;
  f->dict = nullptr;
  return reinterpret_cast<PyObject*>(f);
}

void InitForwarderType() {
  PyTypeObject& t = g_forwarder_type;
  t.tp_name = "anydev._C._compat.Forwarder";
  t.tp_basicsize = sizeof(ForwarderObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc = "A legacy entry point that counts, warns once per call site, and forwards.";
  t.tp_vectorcall_offset = offsetof(ForwarderObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_new = ForwarderNew;
  t.tp_dealloc = ForwarderDealloc;
  t.tp_repr = ForwarderRepr;
  t.tp_members = kForwarderMembers;
  t.tp_getset = kForwarderGetSet;
  t.tp_dictoffset = offsetof(ForwarderObject, dict);
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
}

// --- The constructor of a class shim ------------------------------------------
//
// anydev.cuda.Stream is a subclass of anydev.Stream whose __init__ is one of
// these: a method descriptor (so type.__call__ passes the new object as the
// first argument, with no bound method made) that counts and warns as a
// Forwarder does, for the frame that is constructing the object, and calls
// the base's __init__. A row with an argument adapter (anydev.Stream takes
// priority by keyword only, torch.cuda.Stream positionally) goes through the
// adapter, a Python function, unless the call has at most `positional`
// positional arguments and no keyword ones, which pass to the base's __init__
// as they are (device strings and devices of the legacy type re-typed).

struct ShimInitObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  int row;
  int positional;       // arguments the base takes as the legacy class does
  PyObject* base_init;  // the base class's __init__ (strong)
  PyObject* slow_init;  // (self, *args, **kwargs) through the adapter, or nullptr
  PyObject* qualname;   // __qualname__
};

PyObject* ShimInitCall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* s = reinterpret_cast<ShimInitObject*>(self);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (ABSL_PREDICT_FALSE(nargs < 1)) {
    PyErr_SetString(PyExc_TypeError, "__init__ of a legacy class needs the object to initialise");
    return nullptr;
  }
  if (HitFast(s->row) < 0) return nullptr;
  if (s->slow_init == nullptr) return PyObject_Vectorcall(s->base_init, args, nargsf, kwnames);
  if (kwnames != nullptr || nargs - 1 > s->positional) {
    return PyObject_Vectorcall(s->slow_init, args, nargsf, kwnames);
  }
  const Row& r = (*g_rows)[static_cast<size_t>(s->row)];
  PyObject* fixed[8];  // self and up to `positional` (< 8) arguments
  bool changed = false;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject* n = i > 0 && r.retype ? RetypeArg(args[i], *r.retype) : nullptr;
    fixed[i] = n != nullptr ? n : args[i];
    changed |= n != nullptr;
  }
  if (!changed) return PyObject_Vectorcall(s->base_init, args, static_cast<size_t>(nargs), nullptr);
  PyObject* out = PyObject_Vectorcall(s->base_init, fixed, static_cast<size_t>(nargs), nullptr);
  for (Py_ssize_t i = 1; i < nargs; ++i) {
    if (fixed[i] != args[i]) Py_DECREF(fixed[i]);
  }
  return out;
}

PyObject* ShimInitGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

void ShimInitDealloc(PyObject* self) {
  auto* s = reinterpret_cast<ShimInitObject*>(self);
  Py_XDECREF(s->base_init);
  Py_XDECREF(s->slow_init);
  Py_XDECREF(s->qualname);
  Py_TYPE(self)->tp_free(self);
}

PyObject* ShimInitName(PyObject*, void*) { return PyUnicode_FromString("__init__"); }
PyObject* ShimInitSignature(PyObject*, void*) {
  return PyUnicode_FromString("($self, /, *args, **kwargs)");
}
PyObject* ShimInitRow(PyObject* self, void*) {
  return PyLong_FromLong(reinterpret_cast<ShimInitObject*>(self)->row);
}

PyMemberDef kShimInitMembers[] = {
    {"__qualname__", T_OBJECT, offsetof(ShimInitObject, qualname), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef kShimInitGetSet[] = {
    {"__name__", ShimInitName, nullptr, nullptr, nullptr},
    {"__text_signature__", ShimInitSignature, nullptr, nullptr, nullptr},
    {"_anydev_row", ShimInitRow, nullptr, "Index of this constructor's table row.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject g_shim_init_type = {PyVarObject_HEAD_INIT(nullptr, 0) nullptr};

// ShimInit(row, base_init, slow_init, positional, qualname)
PyObject* ShimInitNew(PyTypeObject* type, PyObject* args, PyObject*) {
  int row = 0, positional = 0;
  PyObject *base_init, *slow_init, *qualname;
  if (!PyArg_ParseTuple(args, "iOOiU", &row, &base_init, &slow_init, &positional, &qualname)) {
    return nullptr;
  }
  if (row < 0 || static_cast<size_t>(row) >= g_rows->size()) {
    PyErr_Format(PyExc_ValueError, "ShimInit: unknown row %d", row);
    return nullptr;
  }
  if (positional < 0 || positional > 7) {
    PyErr_Format(PyExc_ValueError, "ShimInit: positional must be in 0..7, not %d", positional);
    return nullptr;
  }
  auto* s = reinterpret_cast<ShimInitObject*>(type->tp_alloc(type, 0));
  if (s == nullptr) return nullptr;
  s->vectorcall = ShimInitCall;
  s->row = row;
  s->positional = positional;
  Py_INCREF(base_init);
  s->base_init = base_init;
  s->slow_init = slow_init == Py_None ? nullptr : (Py_INCREF(slow_init), slow_init);
  Py_INCREF(qualname);
  s->qualname = qualname;
  return reinterpret_cast<PyObject*>(s);
}

void InitShimInitType() {
  PyTypeObject& t = g_shim_init_type;
  t.tp_name = "anydev._C._compat.ShimInit";
  t.tp_basicsize = sizeof(ShimInitObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  t.tp_doc = "The __init__ of a legacy class: counts, warns once per call site, and "
             "initialises the object as its base class.";
  t.tp_vectorcall_offset = offsetof(ShimInitObject, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_new = ShimInitNew;
  t.tp_dealloc = ShimInitDealloc;
  t.tp_descr_get = ShimInitGet;
  t.tp_members = kShimInitMembers;
  t.tp_getset = kShimInitGetSet;
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
}

void BindScoped(py::module_& c) {
  PyTypeObject& t = g_quiet_matcher_type;
  t.tp_name = "anydev._C._compat.QuietMatcher";
  t.tp_basicsize = sizeof(QuietMatcherObject);
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "The message matcher of anydev.torch's warnings filter (see bind_compat.cc).";
  t.tp_methods = kQuietMatcherMethods;
  t.tp_repr = QuietMatcherRepr;
  t.tp_new = PyType_GenericNew;
  if (PyType_Ready(&t) < 0) throw py::error_already_set();
  Py_INCREF(&t);
  c.add_object("QuietMatcher", py::handle(reinterpret_cast<PyObject*>(&t)));

  c.def(
      "register_scoped",
      [](const std::string& legacy, const std::string& replacement, const std::string& rule,
         const std::string& message, py::handle original, const std::string& quiet) {
        Row r;
        r.legacy = legacy;
        r.replacement = replacement;
        r.rule = rule;
        r.message = message;
        r.scoped = true;
        r.quiet = quiet;
        r.original = original.inc_ref().ptr();
        r.target = original.inc_ref().ptr();
        g_rows->push_back(std::move(r));
        return static_cast<int>(g_rows->size() - 1);
      },
      py::arg("legacy"), py::arg("replacement"), py::arg("rule"), py::arg("message"),
      py::arg("original"), py::arg("quiet") = "",
      "Registers a scoped row (a forwarder on a real PyTorch entry point), inactive; "
      "returns its index for Forwarder.");
  c.def(
      "set_scoped",
      [](int row, py::handle target, bool active) {
        if (row < 0 || static_cast<size_t>(row) >= g_rows->size() ||
            !(*g_rows)[static_cast<size_t>(row)].scoped) {
          throw py::value_error(absl::StrCat("set_scoped: ", row, " is not a scoped row"));
        }
        Row& r = (*g_rows)[static_cast<size_t>(row)];
        PyObject* old = r.target;
        r.target = (target.is_none() ? py::handle(r.original) : target).inc_ref().ptr();
        Py_XDECREF(old);
        r.active = active;
      },
      py::arg("row"), py::arg("target"), py::arg("active"),
      "Sets what in-scope calls of a scoped row reach (None: the original) and whether "
      "its forwarders count and warn at all (an inactive one is a plain pass-through).");
  c.def(
      "set_scope_resolver",
      [](py::handle resolver) {
        PyObject* old = g_scope_resolver;
        g_scope_resolver = resolver.is_none() ? nullptr : resolver.inc_ref().ptr();
        Py_XDECREF(old);
        ++g_epoch;
      },
      "Sets the callable (module, file) -> 0 outside the scope / 1 inside / 2 internal.");
  c.def(
      "set_quiet_filter",
      [](py::handle filter, py::handle front) {
        PyObject* old_filter = g_quiet_filter;
        PyObject* old_front = g_quiet_front;
        g_quiet_filter = filter.is_none() ? nullptr : filter.inc_ref().ptr();
        g_quiet_front = front.is_none() ? nullptr : front.inc_ref().ptr();
        Py_XDECREF(old_filter);
        Py_XDECREF(old_front);
      },
      "Sets the warnings.filters item whose message is a QuietMatcher, and the callable "
      "that puts it first.");
}

}  // namespace

void BindCompat(py::module_& m) {
  g_rows = new std::vector<Row>();
  g_entries = new absl::node_hash_map<std::tuple<std::string, int, int>, Entry>();
  g_fast = new absl::flat_hash_map<FastKey, Entry*>();
  g_pinned_code = new std::vector<PyObject*>();

  py::module_ c = m.def_submodule("_compat", "The legacy-call engine (see bind_compat.cc).");
  InitForwarderType();
  Py_INCREF(&g_forwarder_type);
  c.add_object("Forwarder", py::handle(reinterpret_cast<PyObject*>(&g_forwarder_type)));
  InitShimInitType();
  Py_INCREF(&g_shim_init_type);
  c.add_object("ShimInit", py::handle(reinterpret_cast<PyObject*>(&g_shim_init_type)));

  c.def(
      "set_categories",
      [](py::handle warning, py::handle error, py::handle no_equivalent) {
        for (py::handle h : {warning, error, no_equivalent}) h.inc_ref();
        g_warning_category = warning.ptr();
        g_error_category = error.ptr();
        g_no_equivalent = no_equivalent.ptr();
      },
      "Sets the warning and exception classes the engine raises.");
  c.def(
      "set_policy_resolver",
      [](py::handle resolver) {
        resolver.inc_ref();
        g_policy_resolver = resolver.ptr();
        ++g_epoch;
      },
      "Sets the callable (module, file) -> 0 ignore / 1 warn / 2 error.");
  c.def("policy_changed", [] { ++g_epoch; }, "Makes every site ask the policy again.");
  c.def(
      "register",
      [](const std::string& legacy, const std::string& replacement, const std::string& rule,
         const std::string& message, py::handle target, const std::string& no_target_message,
         const std::string& retype, const std::vector<std::string>& params) {
        Row r;
        r.params = params;
        r.legacy = legacy;
        r.replacement = replacement;
        r.rule = rule;
        r.message = message;
        r.no_target_message = no_target_message;
        if (!target.is_none()) {
          r.target = target.inc_ref().ptr();
          if (PyCFunction_Check(r.target)) {
            r.cfunc = PyCFunction_GET_FUNCTION(r.target);
            r.cflags = PyCFunction_GET_FLAGS(r.target);
            r.cself = PyCFunction_GET_SELF(r.target);
            const int kind = r.cflags & (METH_VARARGS | METH_FASTCALL | METH_NOARGS | METH_O |
                                         METH_KEYWORDS);
            r.noargs = kind == METH_NOARGS;
            r.onearg = kind == METH_O;
          }
        }
        if (!retype.empty()) r.retype = Unwrap(ParseDeviceType(retype));
        g_rows->push_back(std::move(r));
        return static_cast<int>(g_rows->size() - 1);
      },
      py::arg("legacy"), py::arg("replacement"), py::arg("rule"), py::arg("message"),
      py::arg("target"), py::arg("no_target_message"), py::arg("retype"),
      py::arg("params") = std::vector<std::string>(),
      "Registers a table row; returns its index for Forwarder and hit().");
  c.def(
      "hit",
      [](int row, int depth) {
        if (row < 0 || static_cast<size_t>(row) >= g_rows->size()) {
          throw py::value_error(absl::StrCat("hit: unknown row ", row));
        }
        if (Hit(row, depth) < 0) throw py::error_already_set();
      },
      py::arg("row"), py::arg("depth") = 1,
      "Counts a legacy use of `row` by the frame `depth` levels above the caller and "
      "applies the policy (warn once, raise, or nothing).");
  c.def(
      "call_target",
      [](int row, py::args args, py::kwargs kwargs) -> py::object {
        const Row& r = (*g_rows).at(static_cast<size_t>(row));
        if (r.target == nullptr) {
          PyErr_SetString(g_no_equivalent, r.no_target_message.c_str());
          throw py::error_already_set();
        }
        return py::reinterpret_borrow<py::object>(r.target)(*args, **kwargs);
      },
      py::arg("row"), "Calls a row's target (for Python-level shims).");
  c.def(
      "snapshot",
      [] {
        py::list out;
        for (const auto& [key, e] : *g_entries) {
          const Row& r = (*g_rows)[static_cast<size_t>(e.row)];
          if (r.scoped && (e.scope == kInternal || e.count == 0)) continue;  // not the user's
          py::dict d;
          if (r.scoped) d["scope"] = e.scope == kInside ? "in" : "out";
          d["file"] = e.file;
          d["line"] = e.line;
          d["module"] = e.module;
          d["legacy"] = r.legacy;
          d["replacement"] = r.replacement;
          d["rule"] = r.rule;
          d["count"] = e.count;
          if (r.scoped) d["raised"] = e.raised;
          d["first_seen"] = e.first_seen;
          d["policy"] = e.policy == kIgnore ? "ignore" : (e.policy == kError ? "error" : "warn");
          d["warned"] = e.warned;
          out.append(d);
        }
        return out;
      },
      "Returns every (file, line, legacy entry point) seen, with its count.");
  c.def(
      "reset",
      [] {
        for (Row& r : *g_rows) {
          r.last_instr = nullptr;
          r.last_entry = nullptr;
        }
        g_fast->clear();
        g_entries->clear();
        ++g_generation;
        for (PyObject* code : *g_pinned_code) Py_DECREF(code);
        g_pinned_code->clear();
      },
      "Forgets every site and count (tests; a fresh report).");
  BindScoped(c);
}

}  // namespace anydev::python
