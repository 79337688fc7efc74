// internal/errors.h: status helpers shared by the core and the bindings.
//
// absl::Status codes say what went wrong; where PyTorch raises a specific
// Python exception for the same mistake (ValueError for a device type that
// does not match the accelerator, for instance), the status carries that
// exception's name as a payload, and the bindings raise it.
#ifndef ANYDEV_INTERNAL_ERRORS_H_
#define ANYDEV_INTERNAL_ERRORS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace anydev::internal {

// The payload key that names the Python exception for a status.
inline constexpr absl::string_view kPyExceptionPayload = "anydev/python-exception";

// Returns `status` tagged so that Python raises `exception` ("ValueError").
inline absl::Status WithPyException(absl::Status status, absl::string_view exception) {
  status.SetPayload(kPyExceptionPayload, absl::Cord(exception));
  return status;
}

// InvalidArgument that Python raises as ValueError.
inline absl::Status ValueError(absl::string_view message) {
  return WithPyException(absl::InvalidArgumentError(message), "ValueError");
}

// InvalidArgument that Python raises as TypeError.
inline absl::Status TypeError(absl::string_view message) {
  return WithPyException(absl::InvalidArgumentError(message), "TypeError");
}

// A wrong argument type where PyTorch raises RuntimeError: Python raises
// anydev's ArgumentTypeError, a TypeError that is also a RuntimeError, so
// both `except TypeError` and torch's `except RuntimeError` catch it.
inline absl::Status ArgumentTypeError(absl::string_view message) {
  return WithPyException(absl::InvalidArgumentError(message), "ArgumentTypeError");
}

// Returns the Python exception name a status asks for, if any.
inline std::optional<std::string> PyExceptionOf(const absl::Status& status) {
  auto p = status.GetPayload(kPyExceptionPayload);
  if (!p) return std::nullopt;
  return std::string(*p);
}

}  // namespace anydev::internal

// Returns early with the error of a Status expression.
#define ANYDEV_RETURN_IF_ERROR(expr)              \
  do {                                            \
    ::absl::Status anydev_status_ = (expr);       \
    if (!anydev_status_.ok()) return anydev_status_; \
  } while (0)

#define ANYDEV_ASSIGN_OR_RETURN_IMPL_(var, lhs, expr) \
  auto var = (expr);                                  \
  if (!var.ok()) return std::move(var).status();      \
  lhs = *std::move(var)

// Assigns the value of a StatusOr expression to `lhs`, or returns its error.
#define ANYDEV_ASSIGN_OR_RETURN(lhs, expr) \
  ANYDEV_ASSIGN_OR_RETURN_IMPL_(ANYDEV_CONCAT_(anydev_statusor_, __LINE__), lhs, expr)

#endif  // ANYDEV_INTERNAL_ERRORS_H_
