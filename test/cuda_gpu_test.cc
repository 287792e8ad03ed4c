// GPU tests, tagged [gpu]: every registry kernel JIT-compiled and run on a real device against its reference.
//
// Where there is no driver or no device, each test prints "SKIPPED: <reason>"
// (CTest reports it as skipped) and returns.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "builder/kernel_builder.h"
#include "ir/target.h"
#include "kernels/registry.h"
#include "kernels/vector_add.h"
#include "runtime/cuda_device.h"
#include "kernels/problem_runner.h"
#include "test/cuda_test_util.h"
#include "test/cuda_view_chain.h"

namespace ptxforge::runtime {
namespace {

using cuda_testing::Msg;
using cuda_testing::TempDir;

// The real device 0 (libcuda.so.1 or $PTXFORGE_LIBCUDA), with the disk cache in `cache_dir` (off when empty).
std::unique_ptr<CudaDevice> OpenGpu(const std::string& cache_dir = "") {
  CudaOptions options;
  options.cache.disk = !cache_dir.empty();
  options.cache.directory = cache_dir;
  absl::StatusOr<std::unique_ptr<CudaDevice>> gpu = OpenCudaDevice(0, options);
  if (!gpu.ok()) {
    WARN("SKIPPED: no usable CUDA device: " << gpu.status().message());
    return nullptr;
  }
  return *std::move(gpu);
}

// Every target the device runs: the portable ones up to its own, and its "a" target.
std::vector<ir::Target> TargetsOf(const CudaDevice& gpu) {
  std::vector<ir::Target> targets;
  int sm = gpu.properties().cc_major * 10 + gpu.properties().cc_minor;
  for (const ir::TargetInfo& info : ir::AllTargets()) {
    if (info.arch_specific ? info.sm == sm : info.sm <= sm) targets.push_back(info.target);
  }
  return targets;
}

TEST_CASE("the GPU reports its properties", "[gpu]") {
  std::unique_ptr<CudaDevice> gpu = OpenGpu();
  if (gpu == nullptr) return;
  const CudaDeviceProperties& p = gpu->properties();
  INFO(gpu->name() << ", compute capability " << p.cc_major << "." << p.cc_minor << ", driver "
                   << CudaVersionString(p.driver_version));
  CHECK_FALSE(p.name.empty());
  CHECK(p.cc_major * 10 + p.cc_minor >= 75);
  CHECK(p.sm_count > 0);
  CHECK(p.total_memory > 0);
  CHECK(p.warp_size == 32);
  CHECK(p.max_threads_per_block == 1024);
  CHECK(MaxPtxForDriver(p.driver_version).has_value());
  absl::StatusOr<std::pair<size_t, size_t>> memory = gpu->MemoryInfo();
  REQUIRE(memory.ok());
  CHECK(memory->second == p.total_memory);
}

TEST_CASE("every registry kernel runs on the GPU and matches its reference", "[gpu]") {
  std::unique_ptr<CudaDevice> gpu = OpenGpu();
  if (gpu == nullptr) return;
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    absl::StatusOr<kernels::Config> config = family->MakeConfig();
    REQUIRE(config.ok());
    for (ir::Target target : TargetsOf(*gpu)) {
      if (!ir::TargetSatisfies(target, family->requirement())) continue;
      INFO(family->name() << " for " << ir::TargetName(target) << " on " << gpu->name());
      absl::StatusOr<ir::Kernel> kernel = family->Build(*config, target);
      INFO(Msg(kernel));
      REQUIRE(kernel.ok());
      for (uint64_t seed : {1, 2}) {
        absl::StatusOr<kernels::TestProblem> problem = family->MakeProblem(*config, seed);
        INFO(Msg(problem));
        REQUIRE(problem.ok());
        absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(*gpu, *kernel, *problem);
        INFO(Msg(result));
        REQUIRE(result.ok());
        INFO(result->Report());
        CHECK(result->ok());
      }
    }
  }
}

TEST_CASE("on the GPU, a kernel comes from the JIT, then the memory cache, then the disk cache", "[gpu]") {
  TempDir tmp;
  std::unique_ptr<CudaDevice> gpu = OpenGpu(tmp.path());
  if (gpu == nullptr) return;
  absl::StatusOr<ir::Kernel> kernel = kernels::VectorAddSpec{}.Build(gpu->native_target());
  REQUIRE(kernel.ok());
  std::vector<float> a(1000), b(1000), want(1000);
  for (int i = 0; i < 1000; ++i) {
    a[i] = i * 0.5f;
    b[i] = 1000.0f - i;
    want[i] = a[i] + b[i];
  }
  auto run = [&](CudaDevice& device, CodeSource expected) {
    absl::StatusOr<std::unique_ptr<LoadedKernel>> k = device.Load(*kernel);
    INFO(Msg(k));
    REQUIRE(k.ok());
    CHECK(dynamic_cast<CudaKernel&>(**k).source() == expected);
    Buffer<float> da = *Buffer<float>::FromHost(device, a);
    Buffer<float> db = *Buffer<float>::FromHost(device, b);
    Buffer<float> dc = *Buffer<float>::Allocate(device, 1000);
    REQUIRE(device.Launch(**k, {.grid = {4}, .block = {256}}, {da, db, dc, 1000u}).ok());
    CHECK(*dc.ToHost() == want);
  };
  run(*gpu, CodeSource::kJit);
  run(*gpu, CodeSource::kMemoryCache);
  std::unique_ptr<CudaDevice> fresh = OpenGpu(tmp.path());
  REQUIRE(fresh != nullptr);
  run(*fresh, CodeSource::kDiskCache);
  CHECK(fresh->disk_cache()->stats().hits == 1);
}

TEST_CASE("on the GPU, chained launches pass views with no copies", "[gpu]") {
  std::unique_ptr<CudaDevice> gpu = OpenGpu();
  if (gpu == nullptr) return;
  const int steps = 9;
  const size_t n = 300;
  std::vector<float> x(steps * n), h0(n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) * 0.125f - 1.0f;
  for (size_t i = 0; i < n; ++i) h0[i] = static_cast<float>(i % 5);
  absl::StatusOr<cuda_testing::ChainResult> got = cuda_testing::RunChain(*gpu, gpu->native_target(), x, h0, 0.5f, steps);
  INFO(Msg(got));
  REQUIRE(got.ok());
  cuda_testing::ChainResult want = cuda_testing::ReferenceChain(x, h0, 0.5f, steps);
  CHECK(got->outputs == want.outputs);
  CHECK(got->final_state == want.final_state);
}

TEST_CASE("on the GPU, streams, events, attributes and occupancy work", "[gpu]") {
  std::unique_ptr<CudaDevice> gpu = OpenGpu();
  if (gpu == nullptr) return;
  absl::StatusOr<ir::Kernel> kernel = kernels::VectorAddSpec{}.Build(gpu->native_target());
  REQUIRE(kernel.ok());
  absl::StatusOr<std::unique_ptr<LoadedKernel>> k = gpu->Load(*kernel);
  REQUIRE(k.ok());
  const CudaFunctionAttributes& attributes = dynamic_cast<CudaKernel&>(**k).attributes();
  CHECK(attributes.num_regs > 0);
  CHECK(attributes.max_threads_per_block >= 256);
  CHECK(attributes.local_bytes == 0);
  CHECK(attributes.binary_version == gpu->properties().cc_major * 10 + gpu->properties().cc_minor);
  absl::StatusOr<int> blocks = gpu->MaxActiveBlocksPerSm(**k, 256);
  REQUIRE(blocks.ok());
  CHECK(*blocks >= 1);

  const size_t n = 1 << 20;
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.0f);
  Buffer<float> da = *Buffer<float>::Allocate(*gpu, n);
  Buffer<float> db = *Buffer<float>::Allocate(*gpu, n);
  Buffer<float> dc = *Buffer<float>::Allocate(*gpu, n);
  CudaStream stream = *gpu->CreateStream();
  CudaEvent start = *gpu->CreateEvent();
  CudaEvent stop = *gpu->CreateEvent();
  REQUIRE(gpu->CopyToDeviceAsync(stream, da.address(), a.data(), da.bytes()).ok());
  REQUIRE(gpu->CopyToDeviceAsync(stream, db.address(), b.data(), db.bytes()).ok());
  REQUIRE(start.Record(&stream).ok());
  REQUIRE(gpu->LaunchOn(stream, **k, {.grid = {n / 256}, .block = {256}}, {da, db, dc, uint32_t{n}}).ok());
  REQUIRE(stop.Record(&stream).ok());
  REQUIRE(gpu->CopyToHostAsync(stream, c.data(), dc.address(), dc.bytes()).ok());
  REQUIRE(stream.Synchronize().ok());
  CHECK(c == std::vector<float>(n, 3.0f));
  absl::StatusOr<float> ms = CudaEvent::ElapsedMs(start, stop);
  REQUIRE(ms.ok());
  CHECK(*ms > 0.0f);
}

TEST_CASE("on the GPU, PTX the driver rejects gives the JIT log and the PTX file", "[gpu]") {
  std::unique_ptr<CudaDevice> gpu = OpenGpu();
  if (gpu == nullptr) return;
  KernelBuilder b("rejected_by_jit", gpu->native_target());
  Value<U32> x = b.Param<U32>("x");
  b.RawPtx("not_an_instruction.u32 {0};", {}, {x});
  absl::StatusOr<ir::Kernel> kernel = b.Finish();
  INFO(Msg(kernel));
  REQUIRE(kernel.ok());
  absl::StatusOr<std::unique_ptr<LoadedKernel>> k = gpu->Load(*kernel);
  REQUIRE_FALSE(k.ok());
  std::string message = Msg(k);
  CHECK_THAT(message, Catch::StartsWith("cuModuleLoadDataEx failed for kernel rejected_by_jit: "
                                        "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): ptxas"));
  CHECK_THAT(message, Catch::Contains("not_an_instruction"));
  CHECK_THAT(message, Catch::Contains("; PTX written to ") && Catch::EndsWith(".ptx"));
}

}  // namespace
}  // namespace ptxforge::runtime
