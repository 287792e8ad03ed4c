# Issue 10: the builder's authoring helpers and math functions.
ptxforge_add_test(helpers_test SOURCES helpers_test.cc)
ptxforge_add_test(math_test SOURCES math_test.cc)
ptxforge_add_test(kernel_math_test SOURCES kernel_math_test.cc)
ptxforge_add_test(core_kernels_test SOURCES core_kernels_test.cc DEPS ptxforge_ptx_dump)
ptxforge_add_test(norm_test SOURCES norm_test.cc DEPS ptxforge_ptx_dump)
ptxforge_add_test(gemm_simt_test SOURCES gemm_simt_test.cc DEPS ptxforge_ptx_dump)
ptxforge_add_test(reduce_test SOURCES reduce_test.cc DEPS ptxforge_ptx_dump)
