# CPU emulator tests (issue 3).
ptxforge_add_test(emulator_ops_test SOURCES emulator_ops_test.cc)
# Issue 9: cp.async, bar.arrive, fence.
ptxforge_add_test(emulator_async_test SOURCES emulator_async_test.cc)

ptxforge_add_test(emulator_test SOURCES emulator_test.cc)
ptxforge_add_test(ptx_dump_run_test SOURCES ptx_dump_run_test.cc DEPS ptxforge_ptx_dump)
ptxforge_add_test(emulator_schedule_test SOURCES emulator_schedule_test.cc)
# Issue 11: device lifetimes, memory and launch limits, concurrent launches.
ptxforge_add_test(emulator_limits_test SOURCES emulator_limits_test.cc)
ptxforge_add_test(emulator_profile_test SOURCES emulator_profile_test.cc)
ptxforge_add_test(mma_test SOURCES mma_test.cc)
# Issue 9 part 3: the tensor-core GEMM.
ptxforge_add_test(gemm_tensor_core_test SOURCES gemm_tensor_core_test.cc DEPS ptxforge_ptx_dump)
ptxforge_add_test(gemm_tensor_core_ptxas_test SOURCES gemm_tensor_core_ptxas_test.cc)
