# AnydevAbseil.cmake: where Abseil comes from (included from the top-level
# CMakeLists.txt before anything links absl::*).
#
#   ANYDEV_ABSL_SOURCE_DIR   PATH     an Abseil source tree (abseil-cpp, LTS
#                                     20220623 or later) built with the project
#                                     and linked statically, for a machine with
#                                     no Abseil package
#
# Otherwise the installed Abseil package is used as it is (Debian/Ubuntu:
# libabsl-dev), and a machine without one stops here with the package to
# install.
#
# Note [Abseil in wheels]: Debian's libabsl-dev ships static archives beside
# the shared libraries, but they cannot go into a shared object: some of
# their objects use the local-exec TLS model (R_X86_64_TPOFF32 in
# cordz_functions.cc.o, raw_hash_set.cc.o, sysinfo.cc.o, pool_urbg.cc.o), and
# ld refuses them in libanydev.so ("recompile with -fPIC"). So the wheels
# (tools/build_wheels.sh) link the shared libraries and `auditwheel repair`
# copies the ones used into the wheel (anydev.libs/, renamed with a hash,
# RPATH set), which makes the wheel self-contained.

set(ANYDEV_ABSL_SOURCE_DIR "" CACHE PATH
  "An Abseil source tree to build with anydev (linked statically) instead of an installed Abseil")

if(ANYDEV_ABSL_SOURCE_DIR)
  if(NOT EXISTS "${ANYDEV_ABSL_SOURCE_DIR}/absl/base/config.h")
    message(FATAL_ERROR "ANYDEV_ABSL_SOURCE_DIR=${ANYDEV_ABSL_SOURCE_DIR} is not an Abseil "
      "source tree (it has no absl/base/config.h)")
  endif()
  set(ABSL_PROPAGATE_CXX_STD ON CACHE BOOL "" FORCE)
  set(ABSL_BUILD_TESTING OFF CACHE BOOL "" FORCE)
  set(ABSL_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
  set(_anydev_shared ${BUILD_SHARED_LIBS})
  set(BUILD_SHARED_LIBS OFF)
  # SYSTEM (CMake 3.25): Abseil's headers stay out of the project's warnings.
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.25)
    add_subdirectory(${ANYDEV_ABSL_SOURCE_DIR} ${CMAKE_BINARY_DIR}/_abseil EXCLUDE_FROM_ALL SYSTEM)
  else()
    add_subdirectory(${ANYDEV_ABSL_SOURCE_DIR} ${CMAKE_BINARY_DIR}/_abseil EXCLUDE_FROM_ALL)
  endif()
  set(BUILD_SHARED_LIBS ${_anydev_shared})
  set(ANYDEV_ABSL_BUNDLED ON)
  message(STATUS "anydev: Abseil from ${ANYDEV_ABSL_SOURCE_DIR} (built here, static)")
  return()
endif()
set(ANYDEV_ABSL_BUNDLED OFF)

find_package(absl CONFIG QUIET)
if(NOT absl_FOUND)
  message(FATAL_ERROR
    "anydev needs Abseil (C++ library, LTS 20220623 or later) and CMake found none.\n"
    "Install its development package, then configure again:\n"
    "  Debian, Ubuntu:   apt-get install libabsl-dev\n"
    "  Fedora, RHEL:     dnf install abseil-cpp-devel\n"
    "  Arch:             pacman -S abseil-cpp\n"
    "  macOS (Homebrew): brew install abseil\n"
    "  conda:            conda install -c conda-forge libabseil\n"
    "or point CMAKE_PREFIX_PATH (or absl_DIR) at an Abseil install, or build it with "
    "anydev from a source tree: -DANYDEV_ABSL_SOURCE_DIR=/path/to/abseil-cpp "
    "(pip: --config-settings=cmake.define.ANYDEV_ABSL_SOURCE_DIR=/path/to/abseil-cpp).\n"
    "Prebuilt wheels (tools/build_wheels.sh) need no Abseil at all.")
endif()
message(STATUS "anydev: Abseil ${absl_VERSION} from ${absl_DIR}")
