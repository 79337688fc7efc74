# vendor_backends.cmake (included from tests/cpp/CMakeLists.txt): the tests of
# the CUDA, HIP and Level Zero backends, for machines with and without GPUs.
#
#   conformance.<cuda|hip|xpu>   the accelerator conformance suite on the real
#                                backend, through run_if_available: skipped (not
#                                failed) where the backend has no device
#   conformance.fake_<...>       the same suite on a fake vendor runtime made of
#                                host threads (fake_runtimes/), so the backends'
#                                own code runs in CI without a GPU
#   vendor_backend.*             load errors, reasons and properties
#
# ANYDEV_BUILD_CUDA/HIP/LEVEL_ZERO come from cmake/AnydevBackends.cmake.

add_executable(run_if_available run_if_available.cc)
target_link_libraries(run_if_available PRIVATE anydev::anydev absl::statusor)
anydev_set_warnings(run_if_available)

anydev_add_gtest(vendor_backend)

# vendor_backend.<case>: one process per environment, as env_errors.
function(_anydev_vendor_case name filter)
  anydev_register_test(vendor_backend.${name} vendor_backend_test
    FILTER "${filter}" ENV ${ARGN} FAIL_ON_SKIP)
endfunction()

# Wherever it runs: every built backend reports (devices or a reason).
anydev_register_test(vendor_backend vendor_backend_test FILTER "VendorBackends.*:VendorLibrary.*")

# conformance.<type>: the unchanged suite, on a real device when there is one.
# 1 minute per test is not enough for a real GPU's first context creation on a
# busy machine; give the whole suite 5.
foreach(backend IN ITEMS CUDA HIP LEVEL_ZERO)
  if(NOT ANYDEV_BUILD_${backend})
    continue()
  endif()
  string(TOLOWER ${backend} type)
  set(lib_var ANYDEV_${backend}_LIBRARY)
  if(backend STREQUAL "LEVEL_ZERO")
    set(type xpu)
  endif()
  add_test(NAME conformance.${type}
    COMMAND run_if_available ${type} $<TARGET_FILE:accelerator_conformance_test>)
  set_tests_properties(conformance.${type} PROPERTIES
    ENVIRONMENT_MODIFICATION "${ANYDEV_TEST_CLEAN_ENV};ANYDEV_ACCELERATOR=set:${type}"
    SKIP_RETURN_CODE 77
    TIMEOUT 300)

  # The library made unloadable: a clear reason, and the rest of anydev works.
  _anydev_vendor_case(${type}_unloadable "VendorLoad.UnloadableLibrary"
    ${lib_var}=/nonexistent/lib${type}-runtime.so ANYDEV_SIM_DEVICES=1
    ANYDEV_TEST_BACKEND=${type})
  _anydev_vendor_case(${type}_forced "VendorLoad.ForcedAcceleratorErrorIsClear"
    ${lib_var}=/nonexistent/lib${type}-runtime.so ANYDEV_ACCELERATOR=${type}
    ANYDEV_TEST_BACKEND=${type})
endforeach()

# --- fake vendor runtimes ---------------------------------------------------------
# Shared libraries with the vendors' entry points, loaded through the same
# override variables a user has; see the sources' banners for what they model.
function(_anydev_fake_runtime target source)
  add_library(${target} SHARED ${source})
  target_compile_options(${target} PRIVATE -fvisibility=hidden)
  target_link_libraries(${target} PRIVATE Threads::Threads)
  anydev_set_warnings(${target})
endfunction()

if(ANYDEV_BUILD_CUDA)
  _anydev_fake_runtime(anydev_fake_cudart fake_runtimes/fake_gpu_runtime.cc)
  target_compile_definitions(anydev_fake_cudart PRIVATE FAKE_CUDA)
  set(fake_cuda ANYDEV_CUDA_LIBRARY=$<TARGET_FILE:anydev_fake_cudart>)
  anydev_register_test(conformance.fake_cuda accelerator_conformance_test
    ENV ${fake_cuda} ANYDEV_ACCELERATOR=cuda FAKE_GPU_DEVICES=2)
  _anydev_vendor_case(fake_cuda "VendorFake.*" ${fake_cuda} ANYDEV_TEST_BACKEND=cuda
    ANYDEV_ACCELERATOR=cuda
    FAKE_GPU_DEVICES=2)
  _anydev_vendor_case(fake_cuda_old_driver "VendorLoad.ProbeErrorNamesTheVendorError"
    ${fake_cuda} ANYDEV_TEST_BACKEND=cuda FAKE_GPU_FAIL=35
    "ANYDEV_TEST_EXPECT=cudaErrorInsufficientDriver (fake: driver version is insufficient) from cudaGetDeviceCount"
    "ANYDEV_TEST_EXPECT_HINT=the NVIDIA driver supports CUDA 12.4, older than this runtime (13.0): upgrade the driver")
  _anydev_vendor_case(fake_cuda_no_device "VendorLoad.ProbeErrorNamesTheVendorError"
    ${fake_cuda} ANYDEV_TEST_BACKEND=cuda FAKE_GPU_DEVICES=0 CUDA_VISIBLE_DEVICES=
    "ANYDEV_TEST_EXPECT=cudaErrorNoDevice (fake runtime error) from cudaGetDeviceCount"
    "ANYDEV_TEST_EXPECT_HINT=CUDA_VISIBLE_DEVICES is set to the empty string, which hides every device")
endif()

if(ANYDEV_BUILD_HIP)
  _anydev_fake_runtime(anydev_fake_amdhip64 fake_runtimes/fake_gpu_runtime.cc)
  target_compile_definitions(anydev_fake_amdhip64 PRIVATE FAKE_HIP)
  set(fake_hip ANYDEV_HIP_LIBRARY=$<TARGET_FILE:anydev_fake_amdhip64>)
  anydev_register_test(conformance.fake_hip accelerator_conformance_test
    ENV ${fake_hip} ANYDEV_ACCELERATOR=hip FAKE_GPU_DEVICES=2)
  _anydev_vendor_case(fake_hip "VendorFake.*" ${fake_hip} ANYDEV_TEST_BACKEND=hip
    ANYDEV_ACCELERATOR=hip
    FAKE_GPU_DEVICES=2)
  _anydev_vendor_case(fake_hip_no_device "VendorLoad.ProbeErrorNamesTheVendorError"
    ${fake_hip} ANYDEV_TEST_BACKEND=hip FAKE_GPU_DEVICES=0 HIP_VISIBLE_DEVICES=7
    "ANYDEV_TEST_EXPECT=hipErrorNoDevice (fake runtime error) from hipGetDeviceCount"
    "ANYDEV_TEST_EXPECT_HINT=HIP_VISIBLE_DEVICES='7' may hide devices")
endif()

if(ANYDEV_BUILD_LEVEL_ZERO)
  _anydev_fake_runtime(anydev_fake_ze_loader fake_runtimes/fake_level_zero.cc)
  target_include_directories(anydev_fake_ze_loader SYSTEM PRIVATE ${ANYDEV_LEVEL_ZERO_INCLUDE_DIR})
  set(fake_ze ANYDEV_LEVEL_ZERO_LIBRARY=$<TARGET_FILE:anydev_fake_ze_loader>)
  anydev_register_test(conformance.fake_xpu accelerator_conformance_test
    ENV ${fake_ze} ANYDEV_ACCELERATOR=xpu FAKE_ZE_DEVICES=2)
  _anydev_vendor_case(fake_xpu "VendorFake.*-VendorFake.VendorErrorsCarryTheCallAndFileLine" ${fake_ze} ANYDEV_TEST_BACKEND=xpu
    ANYDEV_ACCELERATOR=xpu
    FAKE_ZE_DEVICES=2)
  _anydev_vendor_case(fake_xpu_uninitialized "VendorLoad.ProbeErrorNamesTheVendorError"
    ${fake_ze} ANYDEV_TEST_BACKEND=xpu FAKE_ZE_FAIL=1
    "ANYDEV_TEST_EXPECT=ZE_RESULT_ERROR_UNINITIALIZED (driver is not initialized) from zeInit")
endif()
