# conv2d kernel tests (issue 7): validation, references, emulator numerics.
ptxforge_add_test(conv2d_test SOURCES conv2d_test.cc DEPS ptxforge_ptx_dump)
