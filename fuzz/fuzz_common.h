// Shared by the libFuzzer targets in fuzz/ (see fuzz/README.md): a check
// that aborts with a message, so a broken invariant is a crash the fuzzer
// keeps, in release builds too.
#ifndef ANYDEV_FUZZ_COMMON_H_
#define ANYDEV_FUZZ_COMMON_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

#endif  // ANYDEV_FUZZ_COMMON_H_
