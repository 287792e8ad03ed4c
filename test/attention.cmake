# Kernel library II tests (issue 8): attention.
ptxforge_add_test(attention_test SOURCES attention_test.cc DEPS ptxforge_ptx_dump)
