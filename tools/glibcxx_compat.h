// Forced into every C++ translation unit of a release wheel by
// tools/build_wheels.sh (CMAKE_CXX_FLAGS=-include), so that the wheel needs
// nothing newer than the manylinux_2_34 policy allows.
//
// Note [manylinux_2_34]: built on Debian 12 (glibc 2.36, GCC 12), the wheel
// needs glibc 2.34 at most (dlopen, dlsym, dlerror and dlinfo, which moved
// into libc in 2.34, and Debian's Abseil's pthread_key_create/getspecific/
// setspecific) and libstdc++'s GLIBCXX_3.4.29 at most, but for one symbol:
// GCC 12 gave std::condition_variable::wait(std::unique_lock<std::mutex>&) a
// new version, GLIBCXX_3.4.30 (the scanner's thread pool and its scan-ahead
// queue wait on one), and that one version made auditwheel tag the wheels
// manylinux_2_35 (Ubuntu 22.04 and later; RHEL 9 and its rebuilds, glibc 2.34
// and GCC 11's libstdc++, left out). libstdc++ still exports the function at
// its first version, GLIBCXX_3.4.11 (`objdump -T libstdc++.so.6`: both are
// there); this binds every reference to that one, which every libstdc++ from
// GCC 4.4 on has. Older than 2.34 would take an older glibc to build against
// (stat, __libc_single_threaded and the pthread symbols of Debian's Abseil are
// 2.32-2.34's): a manylinux image with its own Abseil.
// A .symver applies to the references in its own assembler file: a
// link-time-optimised module (pybind11's default) is compiled in partitions,
// and the top-level asm of every file went into one of them while the
// scanner's wait landed in another, unversioned again; tools/build_wheels.sh
// links with -flto-partition=one, one partition for the whole module.
#ifndef ANYDEV_TOOLS_GLIBCXX_COMPAT_H_
#define ANYDEV_TOOLS_GLIBCXX_COMPAT_H_
#if defined(__cplusplus) && defined(__linux__) && defined(__x86_64__)
#include <cstddef>  // defines __GLIBCXX__ where the library is libstdc++
#if defined(__GLIBCXX__)
__asm__(".symver _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE,"
        "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE@GLIBCXX_3.4.11");
#endif
#endif
#endif  // ANYDEV_TOOLS_GLIBCXX_COMPAT_H_
