// Scaling of code generation from 1k to 1M instructions (synthetic kernels,
// straight-line and with a block every 5 instructions): time per instruction
// of each stage and the peak heap of a whole codegen per instruction.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "bench/bench_util.h"
#include "bench/synthetic_kernel.h"
#include "emit/ptx_printer.h"
#include "ir/strings.h"
#include "passes/pass.h"

// Heap accounting for the whole program: live bytes and their peak.
namespace {
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

void* Allocate(size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (p == nullptr) throw std::bad_alloc();
  int64_t live = g_live.fetch_add(static_cast<int64_t>(malloc_usable_size(p))) + static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p;
}
void Release(void* p) {
  if (p == nullptr) return;
  g_live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}
}  // namespace

void* operator new(size_t n) { return Allocate(n); }
void* operator new[](size_t n) { return Allocate(n); }
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, size_t) noexcept { Release(p); }
void operator delete[](void* p, size_t) noexcept { Release(p); }

namespace ptxforge {
namespace {

using bench::OrDie;
using bench::Shape;

Shape ShapeOf(const benchmark::State& state) { return state.range(1) ? Shape::kBlocks : Shape::kStraight; }

void Report(benchmark::State& state, const ir::Kernel& kernel) {
  uint32_t n = 0;
  for (const ir::Instruction& inst : kernel.body) n += inst.op != ir::Opcode::kLabel;
  // ns per instruction (the time column divided by the instructions).
  state.counters["ns/inst"] = benchmark::Counter(n * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                              benchmark::Counter::kInvert);
  state.counters["insts"] = n;
}

// KernelBuilder calls and Finish() (verification and canonical order).
void BM_Build(benchmark::State& state) {
  ir::Kernel kernel;
  for (auto _ : state) {
    kernel = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
  }
  Report(state, kernel);
}

// The standard pipeline (verify, dce, regcount) on the built kernel.
void BM_Passes(benchmark::State& state) {
  ir::Kernel kernel = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
  passes::Pipeline pipeline = passes::Pipeline::Standard();
  for (auto _ : state) OrDie(pipeline.Run(kernel));
  Report(state, kernel);
}

void BM_Print(benchmark::State& state) {
  ir::Kernel kernel = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
  OrDie(passes::Pipeline::Standard().Run(kernel));
  for (auto _ : state) benchmark::DoNotOptimize(OrDie(emit::PrintPtx(kernel)));
  Report(state, kernel);
}

// Build, passes and print; the peak heap above what was live before, per instruction.
void BM_All(benchmark::State& state) {
  passes::Pipeline pipeline = passes::Pipeline::Standard();
  int64_t peak_bytes = 0;
  ir::Kernel last;
  for (auto _ : state) {
    int64_t base = g_live.load();
    g_peak.store(base);
    ir::Kernel kernel = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
    OrDie(pipeline.Run(kernel));
    benchmark::DoNotOptimize(OrDie(emit::PrintPtx(kernel)));
    peak_bytes = std::max(peak_bytes, g_peak.load() - base);
    state.PauseTiming();
    last = std::move(kernel);
    state.ResumeTiming();
  }
  Report(state, last);
  state.counters["peak_B/inst"] = static_cast<double>(peak_bytes) / state.counters["insts"];
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t shape : {0, 1}) {
    for (int64_t n : {1000, 10000, 100000, 1000000}) b->Args({n, shape});
  }
  b->ArgNames({"n", "blocks"})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Build)->Apply(Sizes);
BENCHMARK(BM_Passes)->Apply(Sizes);
BENCHMARK(BM_Print)->Apply(Sizes);
BENCHMARK(BM_All)->Apply(Sizes);

}  // namespace
}  // namespace ptxforge

BENCHMARK_MAIN();
