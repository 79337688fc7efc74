// anydev._C: the extension module. Each area binds itself; this file only
// calls them, in dependency order (device first: the others use its types).
#include <pybind11/pybind11.h>

#include "common.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "anydev's native core: devices, streams, events and the accelerator API.";
  anydev::python::BindDevice(m);
  anydev::python::BindStream(m);
  anydev::python::BindMemory(m);
  anydev::python::BindRuntime(m);
  anydev::python::BindFastCalls(m);
  anydev::python::BindCompat(m);
  anydev::python::BindWatch(m);
  // The scanner is its own extension (scan_module.cc), so that `anydev scan`
  // loads no runtime; anydev._C._scan is that module, as before.
  pybind11::object scanner = pybind11::module_::import("anydev._scanner").attr("_scan");
  m.attr("_scan") = scanner;
  pybind11::module_::import("sys").attr("modules")["anydev._C._scan"] = scanner;
}
