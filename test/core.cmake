# Issue 10: the builder's authoring helpers and math functions.
ptxforge_add_test(helpers_test SOURCES helpers_test.cc)
ptxforge_add_test(math_test SOURCES math_test.cc)
ptxforge_add_test(core_kernels_test SOURCES core_kernels_test.cc DEPS ptxforge_ptx_dump)
