// test_util.h: status assertions shared by the C++ test suites.
//
// The Abseil this project builds against predates absl/status/status_matchers.h,
// and the suites do not depend on gmock, so these are small macros in the
// style of the ones used across Google code:
//
//   ASSERT_OK(anydev::acc::SetDeviceIndex(0));
//   ASSERT_OK_AND_ASSIGN(anydev::Stream s, anydev::acc::CurrentStream());
//   EXPECT_STATUS(r, kOutOfRange, "device index 7");
#ifndef ANYDEV_TESTS_CPP_TEST_UTIL_H_
#define ANYDEV_TESTS_CPP_TEST_UTIL_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace anydev::testing {

inline const absl::Status& StatusOf(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

// Succeeds when `status` is OK; the failure message is the status.
inline ::testing::AssertionResult IsOk(const absl::Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << status;
}

// Succeeds when `status` has `code` and its message contains `substring`.
inline ::testing::AssertionResult HasStatus(const absl::Status& status, absl::StatusCode code,
                                            absl::string_view substring) {
  if (status.code() == code && absl::StrContains(status.message(), substring)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "expected " << absl::StatusCodeToString(code) << " containing \"" << substring
         << "\", got " << status;
}

}  // namespace anydev::testing

#define ANYDEV_TEST_CONCAT_INNER_(a, b) a##b
#define ANYDEV_TEST_CONCAT_(a, b) ANYDEV_TEST_CONCAT_INNER_(a, b)

// Asserts that a Status or StatusOr expression is OK, printing the error.
// The expression is evaluated once.
#define ASSERT_OK(expr) ASSERT_TRUE(::anydev::testing::IsOk(::anydev::testing::StatusOf(expr)))
#define EXPECT_OK(expr) EXPECT_TRUE(::anydev::testing::IsOk(::anydev::testing::StatusOf(expr)))

#define ANYDEV_ASSERT_OK_AND_ASSIGN_IMPL_(var, lhs, expr)   \
  auto var = (expr);                                        \
  ASSERT_TRUE(var.ok()) << #expr << ": " << var.status();   \
  lhs = *std::move(var)

// Asserts that a StatusOr expression is OK and assigns its value to `lhs`.
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ANYDEV_ASSERT_OK_AND_ASSIGN_IMPL_(ANYDEV_TEST_CONCAT_(anydev_statusor_, __LINE__), lhs, expr)

// Expects a Status or StatusOr to carry absl::StatusCode::`code` and a message
// containing `substring`.
#define EXPECT_STATUS(expr, code, substring)                                       \
  EXPECT_TRUE(::anydev::testing::HasStatus(::anydev::testing::StatusOf(expr),        \
                                           ::absl::StatusCode::code, substring))
#define ASSERT_STATUS(expr, code, substring)                                       \
  ASSERT_TRUE(::anydev::testing::HasStatus(::anydev::testing::StatusOf(expr),        \
                                           ::absl::StatusCode::code, substring))

// Queues a sleep on `stream` (an anydev::Stream), or skips the test when the
// backend cannot queue busy work.
#define SLEEP_OR_SKIP(stream, duration)                                      \
  do {                                                                       \
    const ::absl::Status anydev_sleep_ = (stream).Sleep(duration);           \
    if (anydev_sleep_.code() == ::absl::StatusCode::kUnimplemented) {        \
      GTEST_SKIP() << "the backend has no Stream::Sleep: " << anydev_sleep_; \
    }                                                                        \
    ASSERT_OK(anydev_sleep_);                                                \
  } while (0)

#endif  // ANYDEV_TESTS_CPP_TEST_UTIL_H_
