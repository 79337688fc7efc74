# Compiles compat_warnings.cc and checks that the compiler flags each legacy
# call with the replacement and the row of compat_map/cpp.toml it came from.
#   cmake -DCXX=... -DSOURCE=... -DINCLUDES="a;b" -P compat_warnings.cmake
set(args -std=c++17 -fsyntax-only -Wdeprecated-declarations)
foreach(dir IN LISTS INCLUDES)
  list(APPEND args "-I${dir}")
endforeach()
execute_process(COMMAND ${CXX} ${args} ${SOURCE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "legacy-style code did not compile against the shims:\n${err}")
endif()
foreach(expected
    "device_count.*use anydev::acc::DeviceCount \\(compat_map/cpp.toml:[0-9]+\\)"
    "set_device.*use anydev::acc::SetDeviceIndex \\(compat_map/cpp.toml:[0-9]+\\)"
    "CUDAGuard.*use anydev::compat::DeviceGuard \\(compat_map/cpp.toml:[0-9]+\\)"
    "getCurrentCUDAStream.*use anydev::acc::CurrentStream \\(compat_map/cpp.toml:[0-9]+\\)"
    "emptyCache.*use anydev::acc::EmptyCache \\(compat_map/cpp.toml:[0-9]+\\)"
    "current_device.*use anydev::acc::CurrentDeviceIndex \\(compat_map/cpp.toml:[0-9]+\\)")
  if(NOT err MATCHES "${expected}")
    message(FATAL_ERROR "no deprecation warning matching '${expected}' in:\n${err}")
  endif()
endforeach()
string(REGEX MATCHALL "warning: [^\n]*deprecated" warnings "${err}")
list(LENGTH warnings n)
message(STATUS "${n} deprecation warnings, each naming its replacement and table row")
