# Install check (cmake -P): install the build tree into a fresh prefix, build
# test/consumer against it with find_package(ptxforge), run it and look for
# the kernel's entry. Inputs: -DBUILD_DIR= -DCONSUMER_DIR= -DWORK_DIR=
foreach(var BUILD_DIR CONSUMER_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "install_check.cmake needs -D${var}=...")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install check: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run_step("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
# The consumer is built by the compiler that built ptxforge (a sanitized
# build's runtime must match; the package passes the -fsanitize flags on).
set(compiler_arg "")
if(CXX_COMPILER)
  set(compiler_arg "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
run_step("configuring the consumer" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build"
         -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}" ${compiler_arg})
run_step("building the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run_step("running the consumer" "${WORK_DIR}/build/app")
string(FIND "${step_output}" ".entry saxpy" at)
if(at EQUAL -1)
  message(FATAL_ERROR "install check: the consumer's output has no '.entry saxpy':\n${step_output}")
endif()
message(STATUS "install check: the consumer built against ${prefix} printed .entry saxpy")
file(REMOVE_RECURSE "${WORK_DIR}")
