// Tests of CudaDevice on the fake libcuda: properties, memory, JIT and its errors, the cache, launches, streams, events.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ir/strings.h"
#include "ir/target.h"
#include "kernels/reduce.h"
#include "kernels/vector_add.h"
#include "runtime/cuda_device.h"
#include "test/cuda_test_util.h"

namespace ptxforge::runtime {
namespace {

using cuda_testing::FakeCuda;
using cuda_testing::Msg;
using cuda_testing::ReadFileText;
using cuda_testing::ScopedEnv;
using cuda_testing::TempDir;
using cuda_testing::WriteFileText;

// Options for the fake driver; the disk cache is off unless a directory is given.
CudaOptions Fake(bool memory_cache = true, std::string disk_dir = "") {
  CudaOptions options{.libcuda_path = FakeCuda::kPath};
  options.cache.memory = memory_cache;
  options.cache.disk = !disk_dir.empty();
  options.cache.directory = disk_dir;
  return options;
}

std::unique_ptr<CudaDevice> Open(CudaOptions options) {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = OpenCudaDevice(0, std::move(options));
  INFO(Msg(device));
  REQUIRE(device.ok());
  return *std::move(device);
}

ir::Kernel VectorAdd(ir::Target target = ir::Target::kSm80, uint32_t block = 256) {
  absl::StatusOr<ir::Kernel> k = kernels::VectorAddSpec{.type = ir::ScalarType::kF32, .block = block}.Build(target);
  INFO(Msg(k));
  REQUIRE(k.ok());
  return *std::move(k);
}

CudaKernel& AsCuda(std::unique_ptr<LoadedKernel>& k) { return dynamic_cast<CudaKernel&>(*k); }

TEST_CASE("a CUDA device reports its properties", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  const CudaDeviceProperties& p = gpu->properties();
  CHECK(gpu->kind() == DeviceKind::kCuda);
  CHECK(gpu->name() == "CUDA device 0 (ptxforge fake GPU)");
  CHECK(p.name == "ptxforge fake GPU");
  CHECK(p.cc_major == 8);
  CHECK(p.cc_minor == 6);
  CHECK(p.sm_count == 40);
  CHECK(p.total_memory == size_t{8} << 30);
  CHECK(p.max_threads_per_block == 1024);
  CHECK(p.max_threads_per_sm == 1536);
  CHECK(p.max_shared_per_block == 48 << 10);
  CHECK(p.max_shared_per_block_optin == 99 << 10);
  CHECK(p.warp_size == 32);
  CHECK(p.driver_version == 12040);
  CHECK(gpu->native_target() == ir::Target::kSm86);
  CHECK(*gpu->MemoryInfo() == std::make_pair(size_t{6} << 30, size_t{8} << 30));
  CHECK(gpu->Synchronize().ok());
  CHECK(fake.Get("retains") == 1);
  gpu.reset();
  CHECK(fake.Get("retains") == 0);
  CHECK(fake.Get("context_depth") == 0);
}

TEST_CASE("native targets follow the compute capability", "[cuda][device]") {
  CHECK(*NativeTargetFor(7, 5) == ir::Target::kSm75);
  CHECK(*NativeTargetFor(8, 0) == ir::Target::kSm80);
  CHECK(*NativeTargetFor(8, 7) == ir::Target::kSm87);
  CHECK(*NativeTargetFor(9, 0) == ir::Target::kSm90);
  CHECK(*NativeTargetFor(10, 3) == ir::Target::kSm100);
  CHECK(*NativeTargetFor(12, 1) == ir::Target::kSm120);
  CHECK_FALSE(NativeTargetFor(7, 0).ok());
}

TEST_CASE("a kernel for a newer or another arch-specific target is refused", "[cuda][device]") {
  ir::Kernel sm90 = VectorAdd(ir::Target::kSm90);
  CHECK(Msg(CheckRunsOn(sm90, 8, 6, "CUDA device 0 (X)")) ==
        "kernel vector_add_f32 is built for sm_90, but CUDA device 0 (X) has compute capability 8.6");
  CHECK(CheckRunsOn(sm90, 9, 0, "X").ok());
  CHECK(CheckRunsOn(sm90, 12, 0, "X").ok());
  ir::Kernel sm90a = VectorAdd(ir::Target::kSm90a);
  CHECK(CheckRunsOn(sm90a, 9, 0, "X").ok());
  CHECK(Msg(CheckRunsOn(sm90a, 10, 0, "X")) ==
        "kernel vector_add_f32 is built for sm_90a, but X has compute capability 10.0; sm_90a code runs only on "
        "compute capability 9.0");

  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  CHECK(Msg(gpu->Load(sm90)) ==
        "kernel vector_add_f32 is built for sm_90, but CUDA device 0 (ptxforge fake GPU) has compute capability 8.6");
}

TEST_CASE("the PTX version is capped at what the driver accepts", "[cuda][device]") {
  ir::Kernel sm100 = VectorAdd(ir::Target::kSm100);  // needs PTX 8.6
  CHECK(Msg(ChoosePtxVersion(sm100, 12040, std::nullopt)) ==
        "kernel vector_add_f32 needs PTX ISA 8.6 (sm_100), but the CUDA driver (12.4) accepts PTX ISA up to 8.4; "
        "update the driver or build for an older target");
  CHECK(*ChoosePtxVersion(sm100, 12080, std::nullopt) == std::nullopt);  // the lowest the kernel allows
  CHECK(**ChoosePtxVersion(sm100, 12080, ir::PtxVersion{90}) == ir::PtxVersion{87});
  CHECK(**ChoosePtxVersion(sm100, 13000, ir::PtxVersion{88}) == ir::PtxVersion{88});
  CHECK(Msg(ChoosePtxVersion(sm100, 9020, std::nullopt)) ==
        "the CUDA driver (9.2) is older than CUDA 10.0, the oldest ptxforge supports");

  FakeCuda fake;
  fake.Set("cc_major", 10);
  fake.Set("cc_minor", 0);
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  CHECK(Msg(gpu->Load(sm100)) ==
        "kernel vector_add_f32 needs PTX ISA 8.6 (sm_100), but the CUDA driver (12.4) accepts PTX ISA up to 8.4; "
        "update the driver or build for an older target");
  CudaOptions pinned = Fake();
  pinned.ptx_version = ir::PtxVersion{90};
  std::unique_ptr<CudaDevice> pinned_gpu = Open(pinned);
  absl::StatusOr<std::string> ptx = pinned_gpu->PtxFor(VectorAdd(ir::Target::kSm80));
  REQUIRE(ptx.ok());
  CHECK_THAT(*ptx, Catch::Contains("\n.version 8.4\n.target sm_80\n"));
}

TEST_CASE("device memory: buffers, views, copies and their errors", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  {
    std::vector<float> host = {1, 2, 3, 4, 5, 6, 7, 8};
    absl::StatusOr<Buffer<float>> buffer = Buffer<float>::FromHost(*gpu, host);
    REQUIRE(buffer.ok());
    CHECK(fake.Get("live_allocations") == 1);
    CHECK(*buffer->ToHost() == host);
    BufferView<float> middle = *buffer->View(2, 4);
    REQUIRE(middle.CopyFrom(std::vector<float>{30, 40, 50, 60}).ok());
    CHECK(*buffer->ToHost() == std::vector<float>{1, 2, 30, 40, 50, 60, 7, 8});
    CHECK(*middle.ToHost() == std::vector<float>{30, 40, 50, 60});

    uint64_t end = buffer->address() + buffer->bytes();
    float x = 0;
    CHECK(Msg(gpu->CopyToHost(&x, end - 2, sizeof(x))) ==
          "CopyToHost: 4 bytes at 0x" + StrCat(Hex{end - 2}) +
              " are not inside one allocation of CUDA device 0 (ptxforge fake GPU)");
    CHECK(Msg(gpu->CopyToDevice(12345, &x, sizeof(x))) ==
          "CopyToDevice: 4 bytes at 0x3039 are not inside one allocation of CUDA device 0 (ptxforge fake GPU)");
    CHECK(Msg(gpu->Free(12345)) == "Free(0x3039): not an allocation of CUDA device 0 (ptxforge fake GPU)");
    absl::StatusOr<Buffer<float>> empty = Buffer<float>::Allocate(*gpu, 0);
    CHECK(empty.ok());
  }
  CHECK(fake.Get("live_allocations") == 0);  // the buffers freed themselves
  CHECK(Msg(gpu->Allocate(size_t{1} << 40)) ==
        "cuMemAlloc(1099511627776 bytes) on CUDA device 0 (ptxforge fake GPU) failed: CUDA_ERROR_OUT_OF_MEMORY (out of "
        "memory)");
  CHECK(fake.Get("context_depth") == 0);
}

TEST_CASE("memory the driver failed to free stays tracked", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  uint64_t address = *gpu->Allocate(64);
  fake.Set("fail_next_free", cu::CUDA_ERROR_INVALID_CONTEXT);
  CHECK(Msg(gpu->Free(address)) ==
        "cuMemFree(0x" + StrCat(Hex{address}) + ") failed: CUDA_ERROR_INVALID_CONTEXT (invalid device context)");
  CHECK(fake.Get("live_allocations") == 1);
  float x = 1;
  CHECK(Msg(gpu->CopyToDevice(address, &x, sizeof(x))) == "OK");  // still an allocation of the device
  CHECK(Msg(gpu->Free(address)) == "OK");
  CHECK(fake.Get("live_allocations") == 0);
  // One the device still tracks when it goes is freed with it.
  (void)*gpu->Allocate(64);
  uint64_t failed = *gpu->Allocate(64);
  fake.Set("fail_next_free", cu::CUDA_ERROR_INVALID_CONTEXT);
  CHECK_FALSE(gpu->Free(failed).ok());
  CHECK(fake.Get("live_allocations") == 2);
  gpu.reset();
  CHECK(fake.Get("live_allocations") == 0);
}

TEST_CASE("loading JIT-compiles the printed PTX and reads the function's attributes", "[cuda][device]") {
  FakeCuda fake;
  fake.SetLog("info", "ptxas info    : Used 16 registers");
  std::unique_ptr<CudaDevice> gpu = Open(Fake(/*memory_cache=*/false));
  ir::Kernel kernel = VectorAdd();
  absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = gpu->Load(kernel);
  REQUIRE(loaded.ok());
  CudaKernel& k = AsCuda(*loaded);
  CHECK(k.name() == "vector_add_f32");
  CHECK(k.source() == CodeSource::kJit);
  CHECK(k.ptx() == *gpu->PtxFor(kernel));
  CHECK(k.info_log() == "ptxas info    : Used 16 registers");
  CHECK(k.attributes().num_regs == 16);
  CHECK(k.attributes().max_threads_per_block == 1024);
  CHECK(k.attributes().shared_bytes == 1024);
  CHECK(k.attributes().binary_version == 86);
  CHECK(*gpu->MaxActiveBlocksPerSm(k, 256) == 6);
  CHECK(fake.Get("ptx_jits") == 1);
  CHECK(gpu->jit_count() == 1);
  REQUIRE(gpu->Load(kernel).ok());  // no memory cache: compiled again (and unloaded with the temporary)
  CHECK(fake.Get("ptx_jits") == 2);
  CHECK(fake.Get("unloads") == 1);
  loaded->reset();
  CHECK(fake.Get("unloads") == 2);
  CHECK(fake.Get("context_depth") == 0);
}

TEST_CASE("a JIT error carries the driver's error, the whole log and the PTX file", "[cuda][device]") {
  TempDir tmp;
  ScopedEnv tmpdir("TMPDIR", tmp.path().c_str());
  FakeCuda fake;
  fake.Set("jit_fail", cu::CUDA_ERROR_INVALID_PTX);
  fake.SetLog("error", "ptxas application ptx input, line 30; error   : Unknown symbol '%rd9'");
  ir::Kernel kernel = VectorAdd();
  for (bool disk : {false, true}) {
    std::unique_ptr<CudaDevice> gpu = Open(Fake(true, disk ? tmp.path() + "/cache" : ""));
    absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = gpu->Load(kernel);
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().code() == absl::StatusCode::kInvalidArgument);
    std::string message = Msg(loaded);
    std::string api = disk ? "cuLinkAddData" : "cuModuleLoadDataEx";
    REQUIRE_THAT(message,
                 Catch::StartsWith(api + " failed for kernel vector_add_f32: CUDA_ERROR_INVALID_PTX (a PTX JIT "
                                         "compilation failed): ptxas application ptx input, line 30; error   : "
                                         "Unknown symbol '%rd9'; PTX written to " +
                                   tmp.path() + "/ptxforge-vector_add_f32-") &&
                     Catch::EndsWith(".ptx"));
    CHECK(ReadFileText(message.substr(message.find(tmp.path()))) == *gpu->PtxFor(kernel));
    // The failure is not cached: once the JIT works, the same kernel loads.
    fake.Set("jit_fail", 0);
    CHECK(gpu->Load(kernel).ok());
    fake.Set("jit_fail", cu::CUDA_ERROR_INVALID_PTX);
  }
}

TEST_CASE("the memory cache compiles a kernel once, also for concurrent loads", "[cuda][device][cache]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake(/*memory_cache=*/true));
  ir::Kernel kernel = VectorAdd();
  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<LoadedKernel>> loaded(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      absl::StatusOr<std::unique_ptr<LoadedKernel>> k = gpu->Load(kernel);
      if (k.ok()) loaded[t] = *std::move(k);
    });
  }
  for (std::thread& t : threads) t.join();
  int jit = 0;
  for (auto& k : loaded) {
    REQUIRE(k != nullptr);
    jit += AsCuda(k).source() == CodeSource::kJit;
  }
  CHECK(jit == 1);
  CHECK(fake.Get("ptx_jits") == 1);
  absl::StatusOr<std::unique_ptr<LoadedKernel>> again = gpu->Load(kernel);
  CHECK(AsCuda(*again).source() == CodeSource::kMemoryCache);
  CHECK(fake.Get("ptx_jits") == 1);
  // Other JIT options are another key.
  CudaOptions o2 = Fake();
  o2.jit.optimization_level = 2;
  std::unique_ptr<CudaDevice> gpu2 = Open(o2);
  REQUIRE(gpu2->Load(kernel).ok());
  CHECK(fake.Get("ptx_jits") == 2);
}

TEST_CASE("the disk cache is off unless asked for, the memory cache is on", "[cuda][device][cache]") {
  TempDir tmp;
  std::string dir = tmp.path() + "/cache";
  ScopedEnv cache_dir("PTXFORGE_CACHE_DIR", dir.c_str());
  ScopedEnv unset("PTXFORGE_CACHE", nullptr);
  FakeCuda fake;
  ir::Kernel kernel = VectorAdd();
  const CudaOptions defaults{.libcuda_path = FakeCuda::kPath};
  {
    std::unique_ptr<CudaDevice> gpu = Open(defaults);
    CHECK(gpu->disk_cache() == nullptr);
    CHECK(gpu->disk_cache_status() ==
          "off: the default (turn it on with CudaCacheOptions::disk or PTXFORGE_CACHE=on)");
    std::unique_ptr<LoadedKernel> first = *gpu->Load(kernel);
    std::unique_ptr<LoadedKernel> second = *gpu->Load(kernel);
    CHECK(AsCuda(first).source() == CodeSource::kJit);
    CHECK(AsCuda(second).source() == CodeSource::kMemoryCache);
    CHECK(fake.Get("ptx_jits") == 1);  // cuModuleLoadDataEx, not the linker's relocatable code
    CHECK(fake.Get("links") == 0);
  }
  CHECK_FALSE(std::filesystem::exists(dir));
  for (const char* on : {"on", "1", "true"}) {
    ScopedEnv env("PTXFORGE_CACHE", on);
    std::unique_ptr<CudaDevice> gpu = Open(defaults);
    CHECK(gpu->disk_cache() != nullptr);
    CHECK(gpu->disk_cache_status() == "on: " + dir);
  }
  for (const char* off : {"off", "0", "false"}) {
    ScopedEnv env("PTXFORGE_CACHE", off);
    std::unique_ptr<CudaDevice> gpu = Open(Fake(true, dir));  // the program asks for it; the environment wins
    CHECK(gpu->disk_cache() == nullptr);
    CHECK(gpu->disk_cache_status() == std::string("off: PTXFORGE_CACHE=") + off);
  }
}

TEST_CASE("a cache directory others can write to turns the disk cache off, and says why", "[cuda][device][cache]") {
  TempDir tmp;
  std::string dir = tmp.path() + "/shared";
  REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  REQUIRE(chmod(dir.c_str(), 0777) == 0);
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake(true, dir));
  CHECK(gpu->disk_cache() == nullptr);
  CHECK(gpu->disk_cache_status() == "off: the cache directory " + dir +
                                        " is writable by group or others (mode 0777), who could plant code in it");
  REQUIRE(gpu->Load(VectorAdd()).ok());  // compiled all the same, without the cache
  CHECK(fake.Get("ptx_jits") == 1);
  CHECK(std::filesystem::is_empty(dir));
}

TEST_CASE("the disk cache keeps cubins across devices and rebuilds bad entries", "[cuda][device][cache]") {
  TempDir tmp;
  std::string dir = tmp.path() + "/cache";
  FakeCuda fake;
  ir::Kernel kernel = VectorAdd();
  std::string ptx;
  {
    std::unique_ptr<CudaDevice> gpu = Open(Fake(true, dir));
    REQUIRE(gpu->disk_cache() != nullptr);
    CHECK(gpu->disk_cache()->directory() == dir);
    absl::StatusOr<std::unique_ptr<LoadedKernel>> k = gpu->Load(kernel);
    REQUIRE(k.ok());
    CHECK(AsCuda(*k).source() == CodeSource::kJit);
    CHECK(fake.Get("links") == 1);
    ptx = *gpu->PtxFor(kernel);
  }
  CacheKey key = CacheKey::For(ptx, 8, 6, 12040, JitOptions{}.Fingerprint());
  std::string path = dir + "/" + key.Id() + ".cubin";
  REQUIRE(std::filesystem::exists(path));
  CHECK(*DecodeCacheEntry(key, ReadFileText(path)) == "FAKECUBIN\n" + ptx);

  auto load_source = [&] {
    std::unique_ptr<CudaDevice> gpu = Open(Fake(true, dir));  // a new process, as far as caches go
    absl::StatusOr<std::unique_ptr<LoadedKernel>> k = gpu->Load(kernel);
    REQUIRE(k.ok());
    return AsCuda(*k).source();
  };
  CHECK(load_source() == CodeSource::kDiskCache);
  CHECK(fake.Get("links") == 1);
  {
    CudaOptions verbose = Fake(true, dir);
    verbose.jit.verbose_log = true;  // changes the log, not the code: the same entry
    std::unique_ptr<CudaDevice> gpu = Open(verbose);
    absl::StatusOr<std::unique_ptr<LoadedKernel>> k = gpu->Load(kernel);
    REQUIRE(k.ok());
    CHECK(AsCuda(*k).source() == CodeSource::kDiskCache);
  }

  WriteFileText(path, ReadFileText(path).substr(0, 100));  // torn
  CHECK(load_source() == CodeSource::kJit);
  CHECK(fake.Get("links") == 2);
  CHECK(*DecodeCacheEntry(key, ReadFileText(path)) == "FAKECUBIN\n" + ptx);  // rebuilt

  REQUIRE(DiskCache(dir).Store(key, "not a cubin").ok());  // whole, but the driver refuses it
  CHECK(load_source() == CodeSource::kJit);
  CHECK(fake.Get("links") == 3);
  CHECK(load_source() == CodeSource::kDiskCache);

  // A load that fails for now (out of memory, a lost context) keeps the entry.
  for (cu::CUresult transient : {cu::CUDA_ERROR_OUT_OF_MEMORY, cu::CUDA_ERROR_INVALID_CONTEXT}) {
    fake.Set("fail_next_cubin_load", transient);
    std::unique_ptr<CudaDevice> gpu = Open(Fake(true, dir));
    CHECK(Msg(gpu->Load(kernel)) == "cuModuleLoadDataEx (cubin of kernel vector_add_f32) failed: " +
                                        gpu->driver().ErrorText(transient));
    CHECK(gpu->disk_cache()->stats().corrupt == 0);
    CHECK(std::filesystem::exists(path));
  }
  CHECK(fake.Get("links") == 3);
  CHECK(load_source() == CodeSource::kDiskCache);
  // The driver's verdict that the image is bad drops it.
  fake.Set("fail_next_cubin_load", cu::CUDA_ERROR_NO_BINARY_FOR_GPU);
  CHECK(load_source() == CodeSource::kJit);
  CHECK(fake.Get("links") == 4);
  CHECK(load_source() == CodeSource::kDiskCache);

  ScopedEnv off("PTXFORGE_CACHE", "off");
  std::unique_ptr<CudaDevice> uncached = Open(Fake(true, dir));
  CHECK(uncached->disk_cache() == nullptr);
}

TEST_CASE("launches pass checked arguments, buffers and views to the driver", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  std::unique_ptr<LoadedKernel> k = *gpu->Load(VectorAdd());
  Buffer<float> a = *Buffer<float>::Allocate(*gpu, 1000);
  Buffer<float> b = *Buffer<float>::Allocate(*gpu, 1000);
  Buffer<float> c = *Buffer<float>::Allocate(*gpu, 1000);
  REQUIRE(gpu->Launch(*k, {.grid = {4}, .block = {256}}, {a, b.view(), *c.View(16, 900), uint32_t{900}}).ok());
  unsigned dims[7];
  uint64_t params[8];
  REQUIRE(fake.LastLaunch(dims, params, 8) == 4);
  CHECK(std::vector<unsigned>(dims, dims + 7) == std::vector<unsigned>{4, 1, 1, 256, 1, 1, 0});
  CHECK(params[0] == a.address());
  CHECK(params[1] == b.address());
  CHECK(params[2] == c.address() + 16 * sizeof(float));
  CHECK(static_cast<uint32_t>(params[3]) == 900);

  absl::StatusOr<CudaStream> stream = gpu->CreateStream();
  REQUIRE(stream.ok());
  REQUIRE(gpu->LaunchOn(*stream, *k, {.grid = {2, 3}, .block = {128}, .dynamic_shared_bytes = 256},
                        {a, b, c, uint32_t{7}})
              .ok());
  REQUIRE(fake.LastLaunch(dims, params, 8) == 4);
  CHECK(std::vector<unsigned>(dims, dims + 7) == std::vector<unsigned>{2, 3, 1, 128, 1, 1, 256});
  CHECK(fake.Get("launches") == 2);

  CHECK(Msg(gpu->Launch(*k, {.grid = {1}, .block = {32}}, {a, b, c})) ==
        "kernel vector_add_f32 takes 4 argument(s) (a:u64, b:u64, c:u64, n:u32), got 3");
  CHECK(Msg(gpu->LaunchOn(*stream, *k, {.grid = {1}, .block = {32}}, {a, b, c, 1.0})) ==
        "kernel vector_add_f32: param 3 'n' is u32 (4 bytes), got f64 (8 bytes)");
  CHECK(fake.Get("launches") == 2);
  CHECK(fake.Get("context_depth") == 0);
}

TEST_CASE("a kernel's fault surfaces at a later call, which says the context is lost", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  std::unique_ptr<LoadedKernel> k = *gpu->Load(VectorAdd());
  Buffer<float> a = *Buffer<float>::Allocate(*gpu, 4);
  fake.Set("fault_next_launch", cu::CUDA_ERROR_ILLEGAL_ADDRESS);
  REQUIRE(gpu->Launch(*k, {.grid = {1}, .block = {32}}, {a, a, a, 4u}).ok());  // queued: the fault is not known yet
  const std::string fault =
      " failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered); an earlier kernel launch "
      "faulted; the context is unusable until the process restarts";
  CHECK(Msg(a.ToHost()) == "cuMemcpyDtoH(16 bytes from 0x" + StrCat(Hex{a.address()}) + ")" + fault);
  CHECK(Msg(gpu->Synchronize()) == "cuCtxSynchronize on CUDA device 0 (ptxforge fake GPU)" + fault);
  CHECK(Msg(gpu->Launch(*k, {.grid = {1}, .block = {32}}, {a, a, a, 4u})) ==
        "cuLaunchKernel(vector_add_f32, grid 1x1x1, block 32x1x1)" + fault);
}

TEST_CASE("a missing JIT compiler library is named", "[cuda][device]") {
  TempDir tmp;
  ScopedEnv tmpdir("TMPDIR", tmp.path().c_str());
  FakeCuda fake;
  fake.Set("jit_fail", cu::CUDA_ERROR_JIT_COMPILER_NOT_FOUND);
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = gpu->Load(VectorAdd());
  CHECK(loaded.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(Msg(loaded),
             Catch::StartsWith("cuModuleLoadDataEx failed for kernel vector_add_f32: CUDA_ERROR_JIT_COMPILER_NOT_FOUND "
                               "(PTX JIT compiler library not found): (the JIT error log is empty); PTX written to " +
                               tmp.path() + "/ptxforge-vector_add_f32-") &&
                 Catch::EndsWith(".ptx; the driver's PTX JIT compiler library (libnvidia-ptxjitcompiler.so.1) is "
                                 "missing; install it with the NVIDIA driver"));
}

TEST_CASE("launch limits come from the compiled kernel and the device", "[cuda][device]") {
  FakeCuda fake;
  fake.Set("max_threads", 640);
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  std::unique_ptr<LoadedKernel> k = *gpu->Load(VectorAdd(ir::Target::kSm80, 1024));
  Buffer<float> a = *Buffer<float>::Allocate(*gpu, 16);
  CHECK(Msg(gpu->Launch(*k, {.grid = {1}, .block = {1024}}, {a, a, a, uint32_t{16}})) ==
        "kernel vector_add_f32: block 1024x1x1 has 1024 threads, but the compiled kernel allows at most 640 (it "
        "uses 16 registers per thread)");
  CHECK(Msg(gpu->Launch(*k, {.grid = {1}, .block = {64}, .dynamic_shared_bytes = 200 << 10}, {a, a, a, 16u})) ==
        "kernel vector_add_f32: 204800 bytes of dynamic shared memory, but CUDA device 0 (ptxforge fake GPU) allows "
        "at most 100352 beside the kernel's 1024 static bytes");
  CHECK(fake.Get("launches") == 0);
  // Above 48 KiB the kernel is opted in first.
  REQUIRE(gpu->Launch(*k, {.grid = {1}, .block = {64}, .dynamic_shared_bytes = 64 << 10}, {a, a, a, 16u}).ok());
  CHECK(fake.Get("max_dynamic_shared") == 64 << 10);
  CHECK(fake.Get("launches") == 1);

  std::unique_ptr<CudaDevice> other = Open(Fake());
  CHECK(Msg(other->Launch(*k, {.grid = {1}, .block = {64}}, {a, a, a, 16u})) ==
        "Launch: kernel vector_add_f32 was not loaded on CUDA device 0 (ptxforge fake GPU) (load it with this "
        "device's Load)");
  CHECK(Msg(other->MaxActiveBlocksPerSm(*k, 64)) ==
        "MaxActiveBlocksPerSm: kernel vector_add_f32 was not loaded on CUDA device 0 (ptxforge fake GPU) (load it "
        "with this device's Load)");
}

TEST_CASE("the dynamic shared memory opt-in belongs to the function, which loads of a kernel share",
          "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake(/*memory_cache=*/true));
  ir::Kernel kernel = VectorAdd();
  std::unique_ptr<LoadedKernel> first = *gpu->Load(kernel);
  std::unique_ptr<LoadedKernel> second = *gpu->Load(kernel);  // the same module: the same CUfunction
  REQUIRE(AsCuda(first).function() == AsCuda(second).function());
  Buffer<float> a = *Buffer<float>::Allocate(*gpu, 16);
  auto launch = [&](LoadedKernel& k, uint32_t dynamic_shared_bytes) {
    return Msg(gpu->Launch(k, {.grid = {1}, .block = {64}, .dynamic_shared_bytes = dynamic_shared_bytes},
                           {a, a, a, 16u}));
  };
  CHECK(launch(*first, 64 << 10) == "OK");
  CHECK(launch(*second, 50 << 10) == "OK");  // must not lower the function's maximum to 50 KiB...
  CHECK(launch(*first, 64 << 10) == "OK");   // ...which would fail this launch
  CHECK(fake.Get("max_dynamic_shared_sets") == 1);
  CHECK(fake.Get("launches") == 3);
}

TEST_CASE("occupancy with more than 48 KiB of dynamic shared memory opts the kernel in first", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  std::unique_ptr<LoadedKernel> k = *gpu->Load(VectorAdd());
  CHECK(*gpu->MaxActiveBlocksPerSm(*k, 64, 40 << 10) == 24);
  CHECK(fake.Get("max_dynamic_shared_sets") == 0);  // within the default limit
  CHECK(*gpu->MaxActiveBlocksPerSm(*k, 64, 64 << 10) == 24);
  CHECK(fake.Get("max_dynamic_shared") == 64 << 10);
  CHECK(Msg(gpu->MaxActiveBlocksPerSm(*k, 64, 200 << 10)) ==
        "kernel vector_add_f32: 204800 bytes of dynamic shared memory, but CUDA device 0 (ptxforge fake GPU) allows "
        "at most 100352 beside the kernel's 1024 static bytes");
}

TEST_CASE("streams and events are owned, and events time work", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  {
    CudaStream stream = *gpu->CreateStream();
    CudaEvent start = *gpu->CreateEvent();
    CudaEvent stop = *gpu->CreateEvent();
    CHECK(fake.Get("live_streams") == 1);
    // CU_STREAM_DEFAULT: the stream synchronises with the NULL stream of the synchronous copies.
    CHECK(fake.Get("stream_flags") == 0);
    CHECK(fake.Get("live_events") == 2);
    absl::StatusOr<float> unrecorded = CudaEvent::ElapsedMs(start, stop);
    CHECK(unrecorded.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Msg(unrecorded) ==
          "cuEventElapsedTime failed: CUDA_ERROR_INVALID_HANDLE (invalid resource handle); record both events before "
          "timing them");
    REQUIRE(start.Record(&stream).ok());
    CHECK(Msg(CudaEvent::ElapsedMs(start, stop)) ==
          "cuEventElapsedTime failed: CUDA_ERROR_INVALID_HANDLE (invalid resource handle); record both events before "
          "timing them");
    Buffer<int> data = *Buffer<int>::Allocate(*gpu, 4);
    std::vector<int> in = {1, 2, 3, 4}, out(4);
    REQUIRE(gpu->CopyToDeviceAsync(stream, data.address(), in.data(), 16).ok());
    REQUIRE(gpu->CopyToHostAsync(stream, out.data(), data.address(), 16).ok());
    REQUIRE(stop.Record(&stream).ok());
    CHECK(*CudaEvent::ElapsedMs(start, stop) == 0.25f);  // waits for the pending events itself
    REQUIRE(stop.Synchronize().ok());
    REQUIRE(stream.Synchronize().ok());
    CHECK(out == in);

    CudaStream moved = std::move(stream);
    CHECK(Msg(stream.Synchronize()) == "Synchronize on an empty CudaStream");  // NOLINT: moved-from on purpose
    CHECK(moved.Synchronize().ok());
    CHECK(fake.Get("live_streams") == 1);
  }
  CHECK(fake.Get("live_streams") == 0);
  CHECK(fake.Get("live_events") == 0);
}

TEST_CASE("an empty CudaStream is refused, never taken for the NULL stream", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  std::unique_ptr<LoadedKernel> k = *gpu->Load(VectorAdd());
  Buffer<int> a = *Buffer<int>::Allocate(*gpu, 4);
  std::vector<int> host(4);
  CudaEvent event = *gpu->CreateEvent();
  CudaStream made = *gpu->CreateStream();
  CudaStream moved = std::move(made);
  CudaStream default_made;
  for (const CudaStream* empty : {&made, &default_made}) {  // NOLINT: moved-from on purpose
    CHECK(Msg(gpu->LaunchOn(*empty, *k, {.grid = {1}, .block = {32}}, {a, a, a, 4u})) ==
          "LaunchOn(vector_add_f32) on an empty CudaStream");
    CHECK(Msg(gpu->CopyToDeviceAsync(*empty, a.address(), host.data(), 16)) ==
          "CopyToDeviceAsync on an empty CudaStream");
    CHECK(Msg(gpu->CopyToHostAsync(*empty, host.data(), a.address(), 16)) == "CopyToHostAsync on an empty CudaStream");
    CHECK(Msg(gpu->CopyToHostAsync(*empty, host.data(), a.address(), 0)) == "CopyToHostAsync on an empty CudaStream");
    CHECK(Msg(event.Record(empty)) == "Record on an empty CudaStream");
  }
  CHECK(fake.Get("launches") == 0);
  CHECK(event.Record().ok());  // no stream at all: the NULL stream, as documented
  CHECK(gpu->LaunchOn(moved, *k, {.grid = {1}, .block = {32}}, {a, a, a, 4u}).ok());
}

TEST_CASE("a driver older than CUDA 12.8 times events with cuEventElapsedTime", "[cuda][device]") {
  absl::StatusOr<std::unique_ptr<CudaDevice>> gpu =
      OpenCudaDevice(0, CudaOptions{.libcuda_path = PTXFORGE_FAKE_LIBCUDA_12_0, .cache = {.disk = false}});
  INFO(Msg(gpu));
  REQUIRE(gpu.ok());
  CHECK((*gpu)->properties().driver_version == 12000);
  CudaEvent start = *(*gpu)->CreateEvent();
  CudaEvent stop = *(*gpu)->CreateEvent();
  REQUIRE(start.Record().ok());
  REQUIRE(stop.Record().ok());
  CHECK(*CudaEvent::ElapsedMs(start, stop) == 0.25f);
  CHECK(Msg(CudaEvent::ElapsedMs(start, CudaEvent())) == "ElapsedMs on an empty CudaEvent");
  CHECK(Msg(CudaEvent::ElapsedMs(CudaEvent(), stop)) == "ElapsedMs on an empty CudaEvent");
}

TEST_CASE("a CUDA 10.2 driver releases the primary context with cuDevicePrimaryCtxRelease", "[cuda][device]") {
  FakeCuda fake(PTXFORGE_FAKE_LIBCUDA_10_2);
  std::unique_ptr<CudaDevice> gpu =
      Open(CudaOptions{.libcuda_path = PTXFORGE_FAKE_LIBCUDA_10_2, .cache = {.disk = false}});
  CHECK(gpu->properties().driver_version == 10020);
  absl::StatusOr<std::unique_ptr<LoadedKernel>> k = gpu->Load(VectorAdd(ir::Target::kSm75));
  INFO(Msg(k));
  REQUIRE(k.ok());
  CHECK_THAT(AsCuda(*k).ptx(), Catch::Contains("\n.version 6.3\n.target sm_75\n"));
  CHECK(fake.Get("retains") == 1);
  gpu.reset();
  k->reset();
  CHECK(fake.Get("retains") == 0);
}

TEST_CASE("kernels, streams and events may outlive their device", "[cuda][device]") {
  FakeCuda fake;
  std::unique_ptr<CudaDevice> gpu = Open(Fake());
  std::unique_ptr<LoadedKernel> k = *gpu->Load(VectorAdd());
  CudaStream stream = *gpu->CreateStream();
  gpu.reset();
  CHECK(fake.Get("retains") == 1);  // the kernel's module and the stream hold the context
  CHECK(fake.Get("unloads") == 0);
  k.reset();
  CHECK(fake.Get("unloads") == 1);
  stream = CudaStream();
  CHECK(fake.Get("retains") == 0);
  CHECK(fake.Get("live_streams") == 0);
}

}  // namespace
}  // namespace ptxforge::runtime
