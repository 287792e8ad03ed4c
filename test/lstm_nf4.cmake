# Kernel library: NF4 format and GEMMs, LSTM cell and sequence (issue 7, part 2).
ptxforge_add_test(nf4_test SOURCES nf4_test.cc DEPS ptxforge_ptx_dump)
