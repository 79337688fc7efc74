# AnydevBackends.cmake: the vendor backends of the anydev target (included
# from core/CMakeLists.txt, after add_library(anydev)).
#
# Each vendor backend is compiled against its vendor's headers only: the
# runtime library is opened with dlopen when the backend is probed, never
# linked, so no vendor library is needed to build, link or import anydev.
#
#   ANYDEV_ENABLE_CUDA         AUTO/ON/OFF   cuda_runtime_api.h: ANYDEV_CUDA_INCLUDE_DIR,
#                                            else CUDAToolkit_ROOT, $CUDA_PATH,
#                                            $CUDA_HOME, /usr/local/cuda
#   ANYDEV_ENABLE_HIP          AUTO/ON/OFF   hip/hip_runtime_api.h: ANYDEV_HIP_INCLUDE_DIR,
#                                            else $ROCM_PATH, /opt/rocm, /usr
#   ANYDEV_ENABLE_LEVEL_ZERO   AUTO/ON/OFF   level_zero/ze_api.h: ANYDEV_LEVEL_ZERO_INCLUDE_DIR,
#                                            else /usr
#
# AUTO builds a backend when its header is found; ON makes a missing header a
# configure error that names it; OFF leaves the backend out (it then answers
# "backend 'cuda' is not enabled in this build" at run time).
#
# Sets ANYDEV_BUILD_CUDA / ANYDEV_BUILD_HIP / ANYDEV_BUILD_LEVEL_ZERO (for the
# tests and benchmarks) and the include dirs above.

set(_anydev_backends_dir ${CMAKE_CURRENT_SOURCE_DIR}/backends)

# Shared by every vendor backend, and needing no vendor header.
target_sources(anydev PRIVATE
  ${_anydev_backends_dir}/common/device_blocks.cc
  ${_anydev_backends_dir}/common/vendor_library.cc)
# Backend sources include "backends/<name>/..." from core/.
target_include_directories(anydev PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})

# _anydev_backend(<NAME> <option> <header> <var> <hints...>): finds <header>
# into <var> and decides whether backend <NAME> is built (ANYDEV_BUILD_<NAME>).
function(_anydev_backend name option header include_var)
  set(mode "${${option}}")
  string(TOUPPER "${mode}" mode)
  if(NOT mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${option}='${${option}}': expected AUTO, ON or OFF")
  endif()
  set(build OFF)
  if(NOT mode STREQUAL "OFF")
    find_path(${include_var} ${header} HINTS ${ARGN}
      DOC "Directory holding ${header} for anydev's ${name} backend")
    # A directory given by hand is taken as is by find_path: check it.
    if(${include_var} AND NOT EXISTS "${${include_var}}/${header}")
      message(WARNING "${include_var}=${${include_var}} has no ${header}")
      set(${include_var} "${include_var}-NOTFOUND" CACHE PATH
        "Directory holding ${header} for anydev's ${name} backend" FORCE)
      find_path(${include_var} ${header} HINTS ${ARGN})
    endif()
    if(${include_var})
      set(build ON)
    elseif(mode STREQUAL "ON")
      message(FATAL_ERROR
        "${option}=ON but ${header} was not found (searched ${include_var}, ${ARGN} and the "
        "system include directories); install the vendor's development headers, set "
        "${include_var}=<dir>, or configure with ${option}=AUTO or OFF")
    endif()
  endif()
  set(ANYDEV_BUILD_${name} ${build} PARENT_SCOPE)
  if(build)
    message(STATUS "anydev: building the ${name} backend (${header} in ${${include_var}})")
  elseif(mode STREQUAL "OFF")
    message(STATUS "anydev: the ${name} backend is off (${option}=OFF)")
  else()
    message(STATUS "anydev: not building the ${name} backend (${header} not found)")
  endif()
endfunction()

# --- CUDA -----------------------------------------------------------------------
set(_anydev_cuda_hints)
foreach(_dir IN ITEMS "${CUDAToolkit_ROOT}" "$ENV{CUDA_PATH}" "$ENV{CUDA_HOME}" /usr/local/cuda)
  if(_dir)
    list(APPEND _anydev_cuda_hints "${_dir}/include" "${_dir}/targets/x86_64-linux/include"
      "${_dir}/targets/sbsa-linux/include")
  endif()
endforeach()
_anydev_backend(CUDA ANYDEV_ENABLE_CUDA cuda_runtime_api.h ANYDEV_CUDA_INCLUDE_DIR
  ${_anydev_cuda_hints})
if(ANYDEV_BUILD_CUDA)
  target_sources(anydev PRIVATE ${_anydev_backends_dir}/cuda/cuda_backend.cc)
  # SYSTEM: the vendor's headers are not held to anydev's warning set.
  target_include_directories(anydev SYSTEM PRIVATE ${ANYDEV_CUDA_INCLUDE_DIR})
endif()

# --- HIP ------------------------------------------------------------------------
set(_anydev_hip_hints)
foreach(_dir IN ITEMS "$ENV{ROCM_PATH}" "$ENV{HIP_PATH}" /opt/rocm)
  if(_dir)
    list(APPEND _anydev_hip_hints "${_dir}/include")
  endif()
endforeach()
_anydev_backend(HIP ANYDEV_ENABLE_HIP hip/hip_runtime_api.h ANYDEV_HIP_INCLUDE_DIR
  ${_anydev_hip_hints})
if(ANYDEV_BUILD_HIP)
  target_sources(anydev PRIVATE ${_anydev_backends_dir}/hip/hip_backend.cc)
  target_include_directories(anydev SYSTEM PRIVATE ${ANYDEV_HIP_INCLUDE_DIR})
  # The HIP headers serve AMD and NVIDIA; anydev's HIP backend is AMD's runtime.
  set_source_files_properties(${_anydev_backends_dir}/hip/hip_backend.cc
    PROPERTIES COMPILE_DEFINITIONS __HIP_PLATFORM_AMD__=1)
endif()

# --- Level Zero -----------------------------------------------------------------
set(_anydev_ze_hints)
foreach(_dir IN ITEMS "$ENV{LEVEL_ZERO_ROOT}" "$ENV{ONEAPI_ROOT}" /opt/intel/oneapi)
  if(_dir)
    list(APPEND _anydev_ze_hints "${_dir}/include")
  endif()
endforeach()
_anydev_backend(LEVEL_ZERO ANYDEV_ENABLE_LEVEL_ZERO level_zero/ze_api.h
  ANYDEV_LEVEL_ZERO_INCLUDE_DIR ${_anydev_ze_hints})
if(ANYDEV_BUILD_LEVEL_ZERO)
  target_sources(anydev PRIVATE ${_anydev_backends_dir}/level_zero/level_zero_backend.cc)
  target_include_directories(anydev SYSTEM PRIVATE ${ANYDEV_LEVEL_ZERO_INCLUDE_DIR})
endif()

# The tests and benchmarks of this tree see the backend sources' headers.
target_include_directories(anydev_internal INTERFACE ${CMAKE_CURRENT_SOURCE_DIR})

# For tests/ and benchmarks/ (directory scope of the caller's parent).
set(ANYDEV_BUILD_CUDA ${ANYDEV_BUILD_CUDA} PARENT_SCOPE)
set(ANYDEV_BUILD_HIP ${ANYDEV_BUILD_HIP} PARENT_SCOPE)
set(ANYDEV_BUILD_LEVEL_ZERO ${ANYDEV_BUILD_LEVEL_ZERO} PARENT_SCOPE)
