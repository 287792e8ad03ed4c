# Random programs through the verifier, passes, printers, ptxas and the emulator.
ptxforge_add_test(fuzz_test SOURCES fuzz_test.cc)
