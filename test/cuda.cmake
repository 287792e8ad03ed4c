# Tests of the CUDA runtime (runtime/cuda_*.h, runtime/kernel_cache.h).

# A fake libcuda (host memory, scripted JIT results) so that the whole CUDA
# path runs and its errors are checked on machines without a GPU; with a
# definition, the same fake as an older driver.
function(ptxforge_add_fake_libcuda name)
  add_library(${name} MODULE cuda_fake_driver.cc)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_features(${name} PRIVATE cxx_std_20)
  if(ARGN)
    target_compile_definitions(${name} PRIVATE ${ARGN})
  endif()
endfunction()
ptxforge_add_fake_libcuda(ptxforge_fake_libcuda)
# CUDA 12.0: no cuEventElapsedTime_v2.
ptxforge_add_fake_libcuda(ptxforge_fake_libcuda_12_0 PTXFORGE_FAKE_CUDA_12_0)
# CUDA 10.2: no cuEventElapsedTime_v2, no cuDevicePrimaryCtxRelease_v2.
ptxforge_add_fake_libcuda(ptxforge_fake_libcuda_10_2 PTXFORGE_FAKE_CUDA_10_2)

ptxforge_add_test(cuda_test
  SOURCES cuda_driver_test.cc cuda_jit_test.cc cuda_cache_test.cc cuda_device_test.cc cuda_view_chain_test.cc)
add_dependencies(cuda_test ptxforge_fake_libcuda ptxforge_fake_libcuda_12_0 ptxforge_fake_libcuda_10_2)
target_compile_definitions(cuda_test PRIVATE PTXFORGE_FAKE_LIBCUDA="$<TARGET_FILE:ptxforge_fake_libcuda>"
                                             PTXFORGE_FAKE_LIBCUDA_12_0="$<TARGET_FILE:ptxforge_fake_libcuda_12_0>"
                                             PTXFORGE_FAKE_LIBCUDA_10_2="$<TARGET_FILE:ptxforge_fake_libcuda_10_2>")

# Tagged [gpu]: run on a real driver and device, reported as skipped (with the
# reason) where there is none.
ptxforge_add_test(cuda_gpu_test SOURCES cuda_gpu_test.cc)

# When the toolkit's cuda.h is here, check ptxforge's driver declarations
# against it at build time (enum values and entry point types).
set(PTXFORGE_CUDA_INCLUDE_DIR "/usr/local/cuda/include" CACHE PATH "Directory of the CUDA toolkit's cuda.h")
if(EXISTS "${PTXFORGE_CUDA_INCLUDE_DIR}/cuda.h")
  add_library(ptxforge_cuda_abi_check OBJECT cuda_abi_check.cc)
  target_include_directories(ptxforge_cuda_abi_check PRIVATE ${PTXFORGE_CUDA_INCLUDE_DIR})
  target_link_libraries(ptxforge_cuda_abi_check PRIVATE ptxforge_runtime)
  # The check must also build against a cuda.h older than CUDA 12.8, which
  # lacks cuEventElapsedTime_v2: the same header made to look like CUDA 12.6's.
  file(READ "${PTXFORGE_CUDA_INCLUDE_DIR}/cuda.h" cuda_h)
  string(REGEX REPLACE "\n#define CUDA_VERSION [0-9]+" "\n#define CUDA_VERSION 12060" cuda_h "${cuda_h}")
  string(REGEX REPLACE "\n#define cuEventElapsedTime[ \t]+cuEventElapsedTime_v2" "\n" cuda_h "${cuda_h}")
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/cuda_12_6/cuda.h.new" "${cuda_h}")
  configure_file("${CMAKE_CURRENT_BINARY_DIR}/cuda_12_6/cuda.h.new" "${CMAKE_CURRENT_BINARY_DIR}/cuda_12_6/cuda.h"
                 COPYONLY)
  add_library(ptxforge_cuda_abi_check_12_6 OBJECT cuda_abi_check.cc)
  target_include_directories(ptxforge_cuda_abi_check_12_6 BEFORE PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/cuda_12_6")
  target_link_libraries(ptxforge_cuda_abi_check_12_6 PRIVATE ptxforge_runtime)
else()
  message(STATUS "ptxforge: no cuda.h in ${PTXFORGE_CUDA_INCLUDE_DIR}; the driver declarations are not checked")
endif()
