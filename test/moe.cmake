# Kernel library II tests (issue 8): the MoE kernels and layer.
ptxforge_add_test(moe_test SOURCES moe_test.cc DEPS ptxforge_ptx_dump)
