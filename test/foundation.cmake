# Foundation tests (issue 2): unit, golden, ptxas and ptx-dump tests, and the install check.
# Included by test/CMakeLists.txt; ptxforge_add_test is defined there.
ptxforge_add_test(ir_test SOURCES ir_test.cc)
ptxforge_add_test(ir_layout_test SOURCES ir_layout_test.cc)
ptxforge_add_test(builder_test SOURCES builder_test.cc)
ptxforge_add_test(verifier_test SOURCES verifier_test.cc)
ptxforge_add_test(passes_test SOURCES passes_test.cc)
ptxforge_add_test(canonical_order_test SOURCES canonical_order_test.cc)
ptxforge_add_test(printer_test SOURCES printer_test.cc)
ptxforge_add_test(golden_test SOURCES golden_test.cc)
ptxforge_add_test(ptxas_test SOURCES ptxas_test.cc)
ptxforge_add_test(ptx_dump_test SOURCES ptx_dump_test.cc DEPS ptxforge_ptx_dump)
add_dependencies(ptx_dump_test ptx-dump)  # one test runs the real binary

# Install check: cmake --install into a temporary prefix, then build and run
# test/consumer (find_package(ptxforge) + ptxforge::ptxforge) against it.
add_test(NAME install_check
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DCONSUMER_DIR=${CMAKE_CURRENT_SOURCE_DIR}/consumer
          -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_check -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/install_check.cmake)
set_tests_properties(install_check PROPERTIES TIMEOUT 900)
ptxforge_add_test(optimizer_test SOURCES optimizer_test.cc)
# The benchmarks' synthetic kernels (compiled in: the bench directory is optional).
ptxforge_add_test(synthetic_kernel_test SOURCES synthetic_kernel_test.cc ${PROJECT_SOURCE_DIR}/bench/synthetic_kernel.cc)
# What a small kernel's codegen asks of the heap (its own executable: it
# replaces the global operator new).
ptxforge_add_test(heap_test SOURCES heap_test.cc)
