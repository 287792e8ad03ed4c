// Tests of loading the CUDA driver: missing library, stub library, wrong library, driver errors, versions.
#include <dlfcn.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "ir/target.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_driver.h"
#include "test/cuda_test_util.h"

namespace ptxforge::runtime {
namespace {

using cuda_testing::FakeCuda;
using cuda_testing::Msg;
using cuda_testing::ScopedEnv;

constexpr const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";

TEST_CASE("a missing driver library is named in the error", "[cuda][driver]") {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device =
      OpenCudaDevice(0, CudaOptions{.libcuda_path = "/nonexistent/libcuda.so.1"});
  REQUIRE_FALSE(device.ok());
  CHECK(device.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(Msg(device) ==
        "CUDA driver not found (/nonexistent/libcuda.so.1): /nonexistent/libcuda.so.1: cannot open shared object "
        "file: No such file or directory");
}

TEST_CASE("without a driver, the default library libcuda.so.1 is reported missing", "[cuda][driver]") {
  ScopedEnv unset("PTXFORGE_LIBCUDA", nullptr);
  if (void* real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(real);
    WARN("SKIPPED: libcuda.so.1 is installed here, so the no-driver message cannot be seen");
    return;
  }
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = OpenCudaDevice();
  REQUIRE_FALSE(device.ok());
  CHECK(Msg(device) ==
        "CUDA driver not found (libcuda.so.1): libcuda.so.1: cannot open shared object file: No such file or "
        "directory");
}

TEST_CASE("PTXFORGE_LIBCUDA chooses the driver library", "[cuda][driver]") {
  {
    ScopedEnv unset("PTXFORGE_LIBCUDA", nullptr);
    CHECK(ResolveLibcudaPath() == "libcuda.so.1");
    CHECK(ResolveLibcudaPath("/x/libcuda.so") == "/x/libcuda.so");
  }
  ScopedEnv set("PTXFORGE_LIBCUDA", "/nonexistent/env/libcuda.so");
  CHECK(ResolveLibcudaPath() == "/nonexistent/env/libcuda.so");
  CHECK(ResolveLibcudaPath("/x/libcuda.so") == "/x/libcuda.so");  // an explicit path wins
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = OpenCudaDevice();
  REQUIRE_FALSE(device.ok());
  CHECK(Msg(device) ==
        "CUDA driver not found (/nonexistent/env/libcuda.so): /nonexistent/env/libcuda.so: cannot open shared "
        "object file: No such file or directory");
}

TEST_CASE("the CUDA toolkit's stub library gives its own error", "[cuda][driver]") {
  if (access(kStub, R_OK) != 0) {
    WARN("SKIPPED: the CUDA toolkit's stub library " << kStub << " is not installed");
    return;
  }
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = OpenCudaDevice(0, CudaOptions{.libcuda_path = kStub});
  REQUIRE_FALSE(device.ok());
  CHECK(device.status().code() == absl::StatusCode::kFailedPrecondition);
  // The stub cannot name its own error code; ptxforge's table does.
  CHECK(Msg(device) ==
        "CUDA driver at /usr/local/cuda/lib64/stubs/libcuda.so is the CUDA toolkit's stub library, not a driver "
        "(cuInit: CUDA_ERROR_STUB_LIBRARY); install the NVIDIA driver, or take the toolkit's stubs directory off "
        "LD_LIBRARY_PATH");
}

TEST_CASE("a library that is not a CUDA driver names the missing entry point", "[cuda][driver]") {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Load("libm.so.6");
  REQUIRE_FALSE(driver.ok());
  std::string message = Msg(driver);
  CHECK_THAT(message, Catch::StartsWith("libm.so.6 is not a usable CUDA driver: it lacks cuGetErrorName ("));
  CHECK_THAT(message, Catch::EndsWith(": undefined symbol: cuGetErrorName)"));
}

TEST_CASE("a driver is loaded once per path", "[cuda][driver]") {
  FakeCuda fake;
  absl::StatusOr<const CudaDriver*> a = CudaDriver::Load(FakeCuda::kPath);
  absl::StatusOr<const CudaDriver*> b = CudaDriver::Load(FakeCuda::kPath);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a == *b);
  CHECK((*a)->path() == FakeCuda::kPath);
  CHECK(*(*a)->Version() == 12040);
}

TEST_CASE("driver errors carry the driver's name and description", "[cuda][driver]") {
  FakeCuda fake;
  const CudaDriver* driver = *CudaDriver::Load(FakeCuda::kPath);
  CHECK(driver->ErrorText(cu::CUDA_ERROR_INVALID_PTX) == "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)");
  // The fake cannot name these; the first is in ptxforge's table, the second nowhere.
  CHECK(driver->ErrorText(cu::CUDA_ERROR_LAUNCH_TIMEOUT) == "CUDA_ERROR_LAUNCH_TIMEOUT");
  CHECK(driver->ErrorText(static_cast<cu::CUresult>(12345)) == "CUresult 12345");
  absl::Status oom = driver->Error(cu::CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(64 bytes)");
  CHECK(oom.code() == absl::StatusCode::kResourceExhausted);
  CHECK(Msg(oom) == "cuMemAlloc(64 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  CHECK(KnownCudaErrorName(218) == std::optional<std::string_view>("CUDA_ERROR_INVALID_PTX"));
  CHECK(KnownCudaErrorName(12345) == std::nullopt);
  CHECK(StatusCodeFor(cu::CUDA_ERROR_NO_DEVICE) == absl::StatusCode::kFailedPrecondition);
  CHECK(StatusCodeFor(cu::CUDA_ERROR_LAUNCH_FAILED) == absl::StatusCode::kInternal);
  CHECK(StatusCodeFor(cu::CUDA_ERROR_NOT_READY) == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("errors raised elsewhere carry a hint: a faulted kernel, a missing JIT library", "[cuda][driver]") {
  FakeCuda fake;
  const CudaDriver* driver = *CudaDriver::Load(FakeCuda::kPath);
  for (cu::CUresult sticky : {cu::CUDA_ERROR_ILLEGAL_ADDRESS, cu::CUDA_ERROR_HARDWARE_STACK_ERROR,
                              cu::CUDA_ERROR_ILLEGAL_INSTRUCTION, cu::CUDA_ERROR_MISALIGNED_ADDRESS,
                              cu::CUDA_ERROR_INVALID_ADDRESS_SPACE, cu::CUDA_ERROR_INVALID_PC,
                              cu::CUDA_ERROR_LAUNCH_FAILED}) {
    CHECK(Msg(driver->Error(sticky, "cuCtxSynchronize")) ==
          "cuCtxSynchronize failed: " + driver->ErrorText(sticky) +
              "; an earlier kernel launch faulted; the context is unusable until the process restarts");
  }
  CHECK(Msg(driver->Error(cu::CUDA_ERROR_ILLEGAL_ADDRESS, "cuMemcpyDtoH(4 bytes from 0x10)")) ==
        "cuMemcpyDtoH(4 bytes from 0x10) failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
        "encountered); an earlier kernel launch faulted; the context is unusable until the process restarts");
  CHECK(Msg(driver->Error(cu::CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "cuModuleLoadDataEx")) ==
        "cuModuleLoadDataEx failed: CUDA_ERROR_JIT_COMPILER_NOT_FOUND (PTX JIT compiler library not found); the "
        "driver's PTX JIT compiler library (libnvidia-ptxjitcompiler.so.1) is missing; install it with the NVIDIA "
        "driver");
  CHECK(CudaErrorHint(cu::CUDA_ERROR_OUT_OF_MEMORY).empty());
  CHECK(CudaErrorHint(cu::CUDA_ERROR_LAUNCH_TIMEOUT).empty());
  CHECK(Msg(WithCudaErrorHint(absl::OkStatus(), cu::CUDA_ERROR_LAUNCH_FAILED)) == "OK");
}

TEST_CASE("opening fails clearly without a device or with a bad ordinal", "[cuda][driver]") {
  FakeCuda fake;
  CudaOptions options{.libcuda_path = FakeCuda::kPath};
  std::string path = FakeCuda::kPath;

  fake.Set("init_result", cu::CUDA_ERROR_NO_DEVICE);
  CHECK(Msg(OpenCudaDevice(0, options)) ==
        "cuInit (" + path + ") failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  fake.Set("init_result", 0);

  fake.Set("device_count", 0);
  CHECK(Msg(OpenCudaDevice(0, options)) == "no CUDA device: the driver " + path + " (CUDA 12.4) found none");
  fake.Set("device_count", 2);
  CHECK(Msg(OpenCudaDevice(2, options)) == "CUDA device 2 does not exist (2 devices: 0..1)");
  fake.Set("device_count", 1);
  CHECK(Msg(OpenCudaDevice(-1, options)) == "CUDA device -1 does not exist (1 device: 0)");

  fake.Set("cc_major", 7);
  fake.Set("cc_minor", 0);
  CHECK(Msg(OpenCudaDevice(0, options)) ==
        "CUDA device 0 (ptxforge fake GPU): compute capability 7.0 is older than every target ptxforge supports (" +
            ir::SupportedTargetList() + ")");
  CHECK(fake.Get("retains") == 0);  // nothing was retained on the way out

  CudaOptions bad_jit = options;
  bad_jit.jit.optimization_level = 7;
  CHECK(Msg(OpenCudaDevice(0, bad_jit)) == "JIT optimization_level 7 is outside 0..4");
}

TEST_CASE("driver versions map to the newest PTX ISA they accept", "[cuda][driver]") {
  auto max = [](int driver) { return MaxPtxForDriver(driver) ? MaxPtxForDriver(driver)->ToString() : "none"; };
  CHECK(max(9020) == "none");
  CHECK(max(10000) == "6.3");
  CHECK(max(11080) == "7.8");
  CHECK(max(12000) == "8.0");
  CHECK(max(12040) == "8.4");
  CHECK(max(12060) == "8.5");  // CUDA 12.6 kept PTX 8.5
  CHECK(max(12070) == "8.6");
  CHECK(max(12080) == "8.7");
  CHECK(max(12090) == "8.8");
  CHECK(max(13000) == "9.0");
  CHECK(max(13020) == ir::MaxPtxVersion().ToString());  // newer drivers: the newest ptxforge prints
  CHECK(CudaVersionString(12080) == "12.8");
  CHECK(CudaVersionString(13000) == "13.0");
  CHECK(CudaVersionString(11040) == "11.4");
}

}  // namespace
}  // namespace ptxforge::runtime
