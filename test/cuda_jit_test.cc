// Tests of JIT option marshalling, whole-log capture (buffers grow and the JIT is retried) and JIT failure messages.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "runtime/cuda_driver.h"
#include "runtime/cuda_jit.h"
#include "test/cuda_test_util.h"

namespace ptxforge::runtime {
namespace {

using cuda_testing::FakeCuda;
using cuda_testing::Msg;
using cuda_testing::ReadFileText;
using cuda_testing::ScopedEnv;
using cuda_testing::TempDir;

uintptr_t ValueOf(JitOptionArrays& a, cu::CUjit_option option) {
  for (unsigned i = 0; i < a.count(); ++i) {
    if (a.options()[i] == option) return reinterpret_cast<uintptr_t>(a.values()[i]);
  }
  return ~uintptr_t{0};
}

constexpr const char* kPtx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";

TEST_CASE("JIT options validate and fingerprint", "[cuda][jit]") {
  CHECK(JitOptions{}.Validate().ok());
  CHECK(JitOptions{}.Fingerprint() == "O4-r0-l0");
  CHECK(JitOptions{.optimization_level = 2, .max_registers = 64, .generate_line_info = true, .verbose_log = true}
            .Fingerprint() == "O2-r64-l1");
  CHECK(JitOptions{.verbose_log = true}.Fingerprint() == JitOptions{}.Fingerprint());  // the log, not the code
  CHECK(Msg(JitOptions{.optimization_level = -1}.Validate()) == "JIT optimization_level -1 is outside 0..4");
  CHECK(Msg(JitOptions{.max_registers = 300}.Validate()) == "JIT max_registers 300 is outside 0..255 (0: no limit)");
}

TEST_CASE("JIT option arrays carry the options, the context's target and the log buffers", "[cuda][jit]") {
  JitOptionArrays plain(JitOptions{}, 1024);
  std::vector<cu::CUjit_option> options(plain.options(), plain.options() + plain.count());
  CHECK(options == std::vector<cu::CUjit_option>{cu::CU_JIT_TARGET_FROM_CUCONTEXT, cu::CU_JIT_OPTIMIZATION_LEVEL,
                                                 cu::CU_JIT_WALL_TIME, cu::CU_JIT_INFO_LOG_BUFFER,
                                                 cu::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, cu::CU_JIT_ERROR_LOG_BUFFER,
                                                 cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES});
  CHECK(ValueOf(plain, cu::CU_JIT_OPTIMIZATION_LEVEL) == 4);
  CHECK(ValueOf(plain, cu::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) == 1024);
  CHECK(ValueOf(plain, cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) == 1024);
  CHECK(ValueOf(plain, cu::CU_JIT_MAX_REGISTERS) == ~uintptr_t{0});  // no limit: not passed

  JitOptionArrays all(JitOptions{.optimization_level = 1, .max_registers = 40, .generate_line_info = true,
                                 .verbose_log = true},
                      64);
  CHECK(all.count() == 10);
  CHECK(ValueOf(all, cu::CU_JIT_OPTIMIZATION_LEVEL) == 1);
  CHECK(ValueOf(all, cu::CU_JIT_MAX_REGISTERS) == 40);
  CHECK(ValueOf(all, cu::CU_JIT_GENERATE_LINE_INFO) == 1);
  CHECK(ValueOf(all, cu::CU_JIT_LOG_VERBOSE) == 1);
  CHECK(all.InfoLog().empty());
  CHECK(all.ErrorLog().empty());
  CHECK_FALSE(all.LogsMayBeCut());
}

TEST_CASE("a JIT log longer than its buffer is captured whole by retrying with larger buffers", "[cuda][jit]") {
  FakeCuda fake;
  const CudaDriver* driver = *CudaDriver::Load(FakeCuda::kPath);
  std::string long_log;
  for (int line = 0; long_log.size() < 100000; ++line) {
    long_log += "ptxas application ptx input, line " + std::to_string(line) + "; error   : something is wrong\n";
  }
  fake.Set("jit_fail", cu::CUDA_ERROR_INVALID_PTX);
  fake.SetLog("error", long_log);
  fake.SetLog("info", "info: compiling k");
  int calls = 0;
  JitLogs logs;
  cu::CUresult r = RunJit(
      JitOptions{},
      [&](JitOptionArrays& arrays) {
        ++calls;
        cu::CUmodule module = nullptr;
        return driver->api().cuModuleLoadDataEx(&module, kPtx, arrays.count(), arrays.options(), arrays.values());
      },
      logs);
  CHECK(r == cu::CUDA_ERROR_INVALID_PTX);
  CHECK(calls == 3);  // 16 KiB, 64 KiB, then 256 KiB holds the ~100 KB log
  CHECK(logs.attempts == 3);
  CHECK(logs.error == long_log);
  CHECK(logs.info == "info: compiling k");
  CHECK(logs.wall_time_ms == 1.5f);

  fake.Set("jit_fail", 0);
  fake.SetLog("info", "");
  calls = 0;
  r = RunJit(
      JitOptions{},
      [&](JitOptionArrays& arrays) {
        ++calls;
        cu::CUmodule module = nullptr;
        cu::CUresult result =
            driver->api().cuModuleLoadDataEx(&module, kPtx, arrays.count(), arrays.options(), arrays.values());
        (void)driver->api().cuModuleUnload(module);
        return result;
      },
      logs);
  CHECK(r == cu::CUDA_SUCCESS);
  CHECK(calls == 1);
  CHECK(logs.error.empty());
  CHECK(fake.Get("unloads") == 1);
}

TEST_CASE("a JIT failure names the API, the kernel, the error and the log, and writes the PTX to a file",
          "[cuda][jit]") {
  TempDir dir;
  REQUIRE_FALSE(dir.path().empty());
  absl::Status s, no_log;
  {
    ScopedEnv tmpdir("TMPDIR", dir.path().c_str());
    JitLogs logs;
    logs.error = "ptxas application ptx input, line 5; error   : Unknown symbol 'x'";
    s = JitFailure(absl::StatusCode::kInvalidArgument, "cuModuleLoadDataEx", "vector_add_f32",
                   "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)", logs, kPtx);
    no_log = JitFailure(absl::StatusCode::kInternal, "cuLinkAddData", "k", "CUresult 999", JitLogs(), kPtx);
  }

  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  std::string message = Msg(s);
  std::string prefix =
      "cuModuleLoadDataEx failed for kernel vector_add_f32: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): "
      "ptxas application ptx input, line 5; error   : Unknown symbol 'x'; PTX written to " +
      dir.path() + "/ptxforge-vector_add_f32-";
  REQUIRE_THAT(message, Catch::StartsWith(prefix) && Catch::EndsWith(".ptx"));
  std::string path = message.substr(message.find(dir.path()));
  CHECK(path.size() == dir.path().size() + std::string("/ptxforge-vector_add_f32-XXXXXX.ptx").size());
  CHECK(ReadFileText(path) == kPtx);

  std::string other = Msg(no_log);
  CHECK_THAT(other, Catch::StartsWith("cuLinkAddData failed for kernel k: CUresult 999: (the JIT error log is "
                                      "empty); PTX written to " +
                                      dir.path() + "/ptxforge-k-"));
}

}  // namespace
}  // namespace ptxforge::runtime
