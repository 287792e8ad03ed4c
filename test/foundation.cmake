# Foundation tests (issue 2): unit, golden, ptxas and ptx-dump tests, and the install check.
# Included by test/CMakeLists.txt; ptxforge_add_test is defined there.
ptxforge_add_test(ir_test SOURCES ir_test.cc)
ptxforge_add_test(builder_test SOURCES builder_test.cc)
ptxforge_add_test(verifier_test SOURCES verifier_test.cc)
ptxforge_add_test(passes_test SOURCES passes_test.cc)
ptxforge_add_test(printer_test SOURCES printer_test.cc)
ptxforge_add_test(golden_test SOURCES golden_test.cc)
ptxforge_add_test(ptxas_test SOURCES ptxas_test.cc)
ptxforge_add_test(ptx_dump_test SOURCES ptx_dump_test.cc DEPS ptxforge_ptx_dump)
add_dependencies(ptx_dump_test ptx-dump)  # one test runs the real binary
