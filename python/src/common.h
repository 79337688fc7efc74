// Shared by the binding files: turning absl::Status into the Python exception
// PyTorch raises for the same mistake, and reading device-like arguments.
#ifndef ANYDEV_PYTHON_COMMON_H_
#define ANYDEV_PYTHON_COMMON_H_

#include <pybind11/pybind11.h>

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "anydev/anydev.h"

namespace anydev::python {

namespace py = pybind11;

// Sets the Python error for a non-OK status (the one place codes map to
// exceptions): a status tagged with a Python exception name raises that
// (ValueError, TypeError); otherwise ResourceExhausted raises
// anydev.OutOfMemoryError, Unimplemented NotImplementedError, everything else
// RuntimeError, as TORCH_CHECK does.
void SetPyError(const absl::Status& status);

// Raises the status as a Python exception from pybind11 code.
[[noreturn]] void Throw(const absl::Status& status);

inline void Check(const absl::Status& status) {
  if (!status.ok()) Throw(status);
}

template <typename T>
T Unwrap(absl::StatusOr<T> value) {
  if (!value.ok()) Throw(value.status());
  return *std::move(value);
}

// The exception class anydev.OutOfMemoryError (a RuntimeError subclass).
PyObject* OutOfMemoryErrorType();

// The Python type of anydev.device, and conversions.
py::object MakePyDevice(Device d);
// Returns the Device inside an anydev.device instance, or nullopt if `h` is
// not one.
std::optional<Device> DeviceOfPy(py::handle h);

// Converts a device-like argument as the top namespace (rule 2) reads it:
// None -> `fallback`; an anydev.device; a string ("sim:1"); an int (an index
// of the current accelerator, as torch.device(0)). TypeError otherwise.
absl::StatusOr<Device> DeviceFromPy(py::handle h, std::optional<Device> fallback);
// The UTF-8 of the str `h` (NUL bytes kept), or the "Invalid device string"
// error of one that has none (a lone surrogate).
absl::StatusOr<std::string> DeviceStringOfPy(py::handle h);

// Converts a device argument as torch.accelerator reads it
// (torch/accelerator/_utils.py `_get_device_index`): an int is returned as
// is; a str or device must be of the current accelerator type (ValueError
// "... doesn't match the current accelerator ...") and have an index unless
// `optional`, in which case the current index fills it in; None is the
// current index when `optional`.
// (Note [Accelerator device arguments] in bind_device.cc.)
absl::StatusOr<int> AccDeviceIndexFromPy(py::handle h, bool optional);
// The range of torch's c10::DeviceIndex (int8_t), which its accelerator
// bindings take: ints outside it are a TypeError there.
inline constexpr int kMinDeviceIndex = -128;
inline constexpr int kMaxDeviceIndex = 127;

// Binding entry points, one per area.
void BindDevice(py::module_& m);
void BindStream(py::module_& m);
void BindMemory(py::module_& m);
void BindRuntime(py::module_& m);
void BindFastCalls(py::module_& m);
void BindCompat(py::module_& m);
void BindWatch(py::module_& m);
void BindScan(py::module_& m);

// Returns the stream an anydev.Stream or a torch.Stream (read by its three
// numbers, without importing torch) stands for; nullopt for anything else.
std::optional<Stream> StreamOfPy(py::handle h);

// Returns an anydev.Stream object for `s` (interned: the same object for the
// same stream, so hot calls like current_stream() allocate nothing).
py::object StreamToPy(const Stream& s);

}  // namespace anydev::python

#endif  // ANYDEV_PYTHON_COMMON_H_
