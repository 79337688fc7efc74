// anydev._scanner: the static scanner (core/scan) on its own, without the
// device runtime, so that `anydev scan` does not load libanydev, its Abseil
// libraries and the runtime's bindings (benchmarks/python/bench_startup.py).
// anydev._C re-exports it as anydev._C._scan.
#include <pybind11/pybind11.h>

namespace anydev::python {
void BindScan(pybind11::module_& m);  // bind_scan.cc
}  // namespace anydev::python

PYBIND11_MODULE(_scanner, m) {
  m.doc() = "anydev's static scanner (core/scan; see bind_scan.cc).";
  anydev::python::BindScan(m);
}
