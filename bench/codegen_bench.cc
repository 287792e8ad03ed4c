// Times each registry kernel's code generation: builder (incl. Finish), passes, PTX printing, and all three.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_util.h"
#include "emit/ptx_printer.h"
#include "ir/strings.h"
#include "kernels/registry.h"
#include "passes/pass.h"

namespace ptxforge {
namespace {

constexpr ir::Target kTarget = ir::Target::kSm80;

using bench::OrDie;

ir::Kernel Build(const kernels::KernelFamily& family, const kernels::Config& config) {
  return OrDie(family.Build(config, kTarget));
}

// (a) KernelBuilder calls and Finish() (which runs the verifier).
void BM_Build(benchmark::State& state, const kernels::KernelFamily* family) {
  kernels::Config config = OrDie(family->MakeConfig());
  for (auto _ : state) benchmark::DoNotOptimize(Build(*family, config));
}

// (b) The standard pipeline (verify, the optimizer, dce). It runs on one kernel
// again and again: after the first run DCE finds nothing more to remove,
// but still marks everything, so the cost per run stays the same.
void BM_Passes(benchmark::State& state, const kernels::KernelFamily* family) {
  ir::Kernel kernel = Build(*family, OrDie(family->MakeConfig()));
  passes::Pipeline pipeline = passes::Pipeline::Standard();
  OrDie(pipeline.Run(kernel));
  for (auto _ : state) {
    absl::Status s = pipeline.Run(kernel);
    benchmark::DoNotOptimize(s);
  }
}

// (c) PTX printing of the processed kernel.
void BM_Print(benchmark::State& state, const kernels::KernelFamily* family) {
  ir::Kernel kernel = Build(*family, OrDie(family->MakeConfig()));
  OrDie(passes::Pipeline::Standard().Run(kernel));
  for (auto _ : state) benchmark::DoNotOptimize(OrDie(emit::PrintPtx(kernel)));
}

// (d) Everything ptx-dump does: build, passes, print; all/ with the
// optimizer (the default), all_noopt/ without it (--passes=none),
// all_noloopopt/ without its loop passes (--passes=-licm,-strength).
void BM_All(benchmark::State& state, const kernels::KernelFamily* family, passes::PipelineOptions options) {
  kernels::Config config = OrDie(family->MakeConfig());
  passes::Pipeline pipeline = passes::Pipeline::Standard(options);
  for (auto _ : state) {
    ir::Kernel kernel = Build(*family, config);
    OrDie(pipeline.Run(kernel));
    benchmark::DoNotOptimize(OrDie(emit::PrintPtx(kernel)));
  }
}

void RegisterAll() {
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    std::string name(family->name());
    benchmark::RegisterBenchmark(StrCat("build/", name).c_str(), BM_Build, family);
    benchmark::RegisterBenchmark(StrCat("passes/", name).c_str(), BM_Passes, family);
    benchmark::RegisterBenchmark(StrCat("print/", name).c_str(), BM_Print, family);
    benchmark::RegisterBenchmark(StrCat("all/", name).c_str(), BM_All, family, passes::PipelineOptions{});
    benchmark::RegisterBenchmark(StrCat("all_noopt/", name).c_str(), BM_All, family, passes::PipelineOptions::None());
    benchmark::RegisterBenchmark(StrCat("all_noloopopt/", name).c_str(), BM_All, family,
                                 passes::PipelineOptions{.licm = false, .strength = false});
  }
}

}  // namespace
}  // namespace ptxforge

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  ptxforge::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
