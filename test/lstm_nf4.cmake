# Kernel library: NF4 format and GEMMs, LSTM cell and sequence (issue 7, part 2).
ptxforge_add_test(nf4_test SOURCES nf4_test.cc DEPS ptxforge_ptx_dump)
ptxforge_add_test(lstm_test SOURCES lstm_test.cc DEPS ptxforge_ptx_dump)
ptxforge_add_test(lstm_nf4_ptxas_test SOURCES lstm_nf4_ptxas_test.cc)
