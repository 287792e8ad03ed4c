// Code generation against NVRTC, per registry kernel: ptxforge warm (back to
// back), after unrelated work (caches and the allocator disturbed between
// iterations) and as the first codegen of a fresh process; NVRTC compiling
// the same algorithm as CUDA C++ (bench/cuda/NAME.cu) when libnvrtc loads.
// The NVRTC benchmark reports NVRTC time / ptxforge time for all three.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_util.h"
#include "emit/ptx_printer.h"
#include "ir/strings.h"
#include "kernels/registry.h"
#include "passes/pass.h"

namespace ptxforge {
namespace {

using bench::OrDie;
using Clock = std::chrono::steady_clock;

constexpr ir::Target kTarget = ir::Target::kSm80;
std::string g_self;  // this program, for fresh-process runs

const kernels::KernelFamily* FindFamily(std::string_view name) {
  for (const kernels::KernelFamily* f : kernels::AllFamilies()) {
    if (f->name() == name) return f;
  }
  return nullptr;
}

// What ptx-dump does: build (Finish verifies), the standard pipeline, print.
size_t Codegen(const kernels::KernelFamily& family) {
  ir::Kernel kernel = OrDie(family.Build(OrDie(family.MakeConfig()), kTarget));
  OrDie(passes::Pipeline::Standard().Run(kernel));
  return OrDie(emit::PrintPtx(kernel)).size();
}

double SecondsOf(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Seconds of the first codegen in a fresh process (this program run with
// --first-codegen=NAME).
double FirstInFreshProcess(std::string_view name) {
  std::string cmd = StrCat(g_self, " --first-codegen=", name);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) OrDie(absl::InternalError(StrCat("cannot run ", cmd)));
  double seconds = -1;
  if (std::fscanf(p, "%lf", &seconds) != 1) seconds = -1;
  if (pclose(p) != 0 || seconds < 0) OrDie(absl::InternalError(StrCat(cmd, " failed")));
  return seconds;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void BM_Warm(benchmark::State& state, const kernels::KernelFamily* family) {
  for (auto _ : state) benchmark::DoNotOptimize(Codegen(*family));
}

void BM_AfterOtherWork(benchmark::State& state, const kernels::KernelFamily* family) {
  for (auto _ : state) {
    state.PauseTiming();
    bench::Disturb();
    state.ResumeTiming();
    benchmark::DoNotOptimize(Codegen(*family));
  }
}

void BM_FirstInProcess(benchmark::State& state, const kernels::KernelFamily* family) {
  for (auto _ : state) state.SetIterationTime(FirstInFreshProcess(family->name()));
}

// ---- NVRTC, loaded at run time
using NvrtcProgram = struct NvrtcProgramImpl*;
struct Nvrtc {
  int (*create)(NvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(NvrtcProgram, int, const char* const*) = nullptr;
  int (*ptx_size)(NvrtcProgram, size_t*) = nullptr;
  int (*ptx)(NvrtcProgram, char*) = nullptr;
  int (*destroy)(NvrtcProgram*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*log_size)(NvrtcProgram, size_t*) = nullptr;
  int (*log)(NvrtcProgram, char*) = nullptr;
};

const Nvrtc* LoadNvrtc() {
  static const Nvrtc* nvrtc = [] () -> const Nvrtc* {
    for (const char* lib : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"}) {
      void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) continue;
      auto* n = new Nvrtc;
      n->create = reinterpret_cast<decltype(n->create)>(dlsym(h, "nvrtcCreateProgram"));
      n->compile = reinterpret_cast<decltype(n->compile)>(dlsym(h, "nvrtcCompileProgram"));
      n->ptx_size = reinterpret_cast<decltype(n->ptx_size)>(dlsym(h, "nvrtcGetPTXSize"));
      n->ptx = reinterpret_cast<decltype(n->ptx)>(dlsym(h, "nvrtcGetPTX"));
      n->destroy = reinterpret_cast<decltype(n->destroy)>(dlsym(h, "nvrtcDestroyProgram"));
      n->error_string = reinterpret_cast<decltype(n->error_string)>(dlsym(h, "nvrtcGetErrorString"));
      n->log_size = reinterpret_cast<decltype(n->log_size)>(dlsym(h, "nvrtcGetProgramLogSize"));
      n->log = reinterpret_cast<decltype(n->log)>(dlsym(h, "nvrtcGetProgramLog"));
      if (n->create && n->compile && n->ptx_size && n->ptx && n->destroy && n->error_string && n->log_size &&
          n->log) {
        return n;
      }
      delete n;
    }
    return nullptr;
  }();
  return nvrtc;
}

// The PTX size, or the error with NVRTC's log. The CUDA toolkit's include
// directory is passed when it exists (the sources include <cstdint>).
absl::StatusOr<size_t> NvrtcCompile(const Nvrtc& nvrtc, const std::string& source, std::string_view name) {
  NvrtcProgram prog = nullptr;
  std::string file = StrCat(name, ".cu");
  std::vector<const char*> options = {"--gpu-architecture=compute_80", "--std=c++17"};
  static const std::string include = [] {
    const char* home = std::getenv("CUDA_HOME");
    std::string dir = StrCat(home ? home : "/usr/local/cuda", "/include");
    return std::ifstream(StrCat(dir, "/cuda.h")).good() ? StrCat("--include-path=", dir) : std::string();
  }();
  if (!include.empty()) options.push_back(include.c_str());
  auto failed = [&](int rc, std::string_view what) {
    std::string log;
    size_t size = 0;
    if (prog != nullptr && nvrtc.log_size(prog, &size) == 0 && size > 1) {
      log.resize(size);
      nvrtc.log(prog, log.data());
      log.resize(size - 1);
    }
    if (prog != nullptr) nvrtc.destroy(&prog);
    return absl::InternalError(StrCat(what, " of ", file, ": ", nvrtc.error_string(rc), log.empty() ? "" : "\n", log));
  };
  if (int rc = nvrtc.create(&prog, source.c_str(), file.c_str(), 0, nullptr, nullptr); rc != 0) {
    return failed(rc, "nvrtcCreateProgram");
  }
  if (int rc = nvrtc.compile(prog, static_cast<int>(options.size()), options.data()); rc != 0) {
    return failed(rc, "nvrtcCompileProgram");
  }
  size_t size = 0;
  if (int rc = nvrtc.ptx_size(prog, &size); rc != 0) return failed(rc, "nvrtcGetPTXSize");
  std::string ptx(size, '\0');
  if (int rc = nvrtc.ptx(prog, ptx.data()); rc != 0) return failed(rc, "nvrtcGetPTX");
  nvrtc.destroy(&prog);
  return ptx.size();
}

// NVRTC time per compile; counters: NVRTC / ptxforge for warm, after other
// work and first-in-process ptxforge codegen (medians measured here).
void BM_Nvrtc(benchmark::State& state, const kernels::KernelFamily* family, std::string source) {
  const Nvrtc* nvrtc = LoadNvrtc();
  if (nvrtc == nullptr) {
    state.SkipWithError("libnvrtc not found (skipped)");
    return;
  }
  if (absl::StatusOr<size_t> probe = NvrtcCompile(*nvrtc, source, family->name()); !probe.ok()) {
    std::fprintf(stderr, "nvrtc_bench: %s\n", std::string(probe.status().message()).c_str());
    state.SkipWithError("NVRTC cannot compile the CUDA source (its log is on stderr)");
    return;
  }
  std::vector<double> warm, after_work, first;
  for (int i = 0; i < 201; ++i) {
    Clock::time_point t = Clock::now();
    benchmark::DoNotOptimize(Codegen(*family));
    warm.push_back(SecondsOf(Clock::now() - t));
  }
  for (int i = 0; i < 31; ++i) {
    bench::Disturb();
    Clock::time_point t = Clock::now();
    benchmark::DoNotOptimize(Codegen(*family));
    after_work.push_back(SecondsOf(Clock::now() - t));
  }
  for (int i = 0; i < 11; ++i) first.push_back(FirstInFreshProcess(family->name()));
  double nvrtc_total = 0;
  for (auto _ : state) {
    Clock::time_point t = Clock::now();
    benchmark::DoNotOptimize(OrDie(NvrtcCompile(*nvrtc, source, family->name())));
    double s = SecondsOf(Clock::now() - t);
    nvrtc_total += s;
    state.SetIterationTime(s);
  }
  double nvrtc_mean = nvrtc_total / static_cast<double>(state.iterations());
  state.counters["ptxforge_warm_us"] = Median(warm) * 1e6;
  state.counters["ptxforge_after_work_us"] = Median(after_work) * 1e6;
  state.counters["ptxforge_first_us"] = Median(first) * 1e6;
  state.counters["ratio_warm"] = nvrtc_mean / Median(warm);
  state.counters["ratio_after_work"] = nvrtc_mean / Median(after_work);
  state.counters["ratio_first"] = nvrtc_mean / Median(first);
}

// bench/cuda/NAME.cu, or with the family's '.' as '_' (gemm.simt: gemm_simt.cu).
std::string ReadCudaSource(std::string_view name) {
  std::string file(name);
  std::replace(file.begin(), file.end(), '.', '_');
  std::ifstream in(StrCat(PTXFORGE_SOURCE_DIR, "/bench/cuda/", name, ".cu"));
  if (!in) in.open(StrCat(PTXFORGE_SOURCE_DIR, "/bench/cuda/", file, ".cu"));
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void RegisterAll() {
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    std::string name(family->name());
    benchmark::RegisterBenchmark(StrCat("warm/", name).c_str(), BM_Warm, family);
    benchmark::RegisterBenchmark(StrCat("after_other_work/", name).c_str(), BM_AfterOtherWork, family);
    benchmark::RegisterBenchmark(StrCat("first_in_process/", name).c_str(), BM_FirstInProcess, family)
        ->UseManualTime()
        ->Iterations(15)
        ->Unit(benchmark::kMicrosecond);
    std::string source = ReadCudaSource(name);
    if (source.empty()) {
      std::fprintf(stderr, "nvrtc_bench: no bench/cuda/%s.cu, no NVRTC comparison for %s\n", name.c_str(), name.c_str());
      continue;
    }
    benchmark::RegisterBenchmark(StrCat("nvrtc/", name).c_str(), BM_Nvrtc, family, source)
        ->UseManualTime()
        ->Iterations(10)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace ptxforge

int main(int argc, char** argv) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ptxforge::g_self = len > 0 ? std::string(self, static_cast<size_t>(len)) : std::string(argv[0]);
  if (argc == 2 && std::string_view(argv[1]).starts_with("--first-codegen=")) {
    std::string_view name = std::string_view(argv[1]).substr(16);
    const ptxforge::kernels::KernelFamily* family = ptxforge::FindFamily(name);
    if (family == nullptr) return 2;
    auto t = ptxforge::Clock::now();
    size_t size = ptxforge::Codegen(*family);
    double s = ptxforge::SecondsOf(ptxforge::Clock::now() - t);
    std::printf("%.9f %zu\n", s, size);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  ptxforge::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
