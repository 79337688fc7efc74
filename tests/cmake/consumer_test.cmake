# Installs the build tree into a scratch prefix, then configures, builds and
# runs examples/cpp against it through find_package(anydev): the check that
# the exported CMake package works for a project outside this tree.
#
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DCMAKE_DIR_REL=... -P consumer_test.cmake
#
# CONSUMER_CXX_FLAGS and CONSUMER_LINKER_FLAGS (optional) are the flags the
# library was built with, given to the consumer too: a library built with
# -fsanitize=address (tools/sanitize.sh) can only be loaded by a program that
# links the sanitizer's runtime first.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR CMAKE_DIR_REL)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer_test.cmake: ${var} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/cpp" -B "${WORK_DIR}/build" -G Ninja
    "-Danydev_DIR=${prefix}/${CMAKE_DIR_REL}"
    "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/hello_anydev")
if(NOT last_output MATCHES "accelerator: sim with 2 device")
  message(FATAL_ERROR "unexpected output from hello_anydev:\n${last_output}")
endif()
message(STATUS "hello_anydev ran against the installed package:\n${last_output}")
