// Scaling of code generation from 1k to 1M instructions (synthetic kernels of
// four shapes: straight-line, a block every 5 instructions, sequential loops
// and nests of three loops; bench/synthetic_kernel.h): time per instruction
// of each stage and the peak heap of a whole codegen per instruction.
// Benchmark names carry the size and the shape: n:100000/shape:2 is 100k
// instructions of sequential loops (0 straight, 1 blocks, 2 loops, 3 nested).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "bench/synthetic_kernel.h"
#include "emit/ptx_printer.h"
#include "ir/instruction_list.h"
#include "ir/strings.h"
#include "ir/cfg.h"
#include "ir/verify.h"
#include "llvm/ADT/simple_ilist.h"
#include "passes/loops.h"
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

// This thread's CPU time in seconds.
double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

Shape ShapeOf(const benchmark::State& state) { return static_cast<Shape>(state.range(1)); }

// Peak heap of one stage above what was live when it started, in bytes;
// the largest over the iterations.
class PeakHeap {
 public:
  void Start() {
    base_ = g_live.load();
    g_peak.store(base_);
  }
  void Stop() { peak_ = std::max(peak_, g_peak.load() - base_); }
  int64_t bytes() const { return peak_; }

 private:
  int64_t base_ = 0;
  int64_t peak_ = 0;
};

void Report(benchmark::State& state, const ir::Kernel& kernel, const PeakHeap& heap) {
  uint32_t n = 0;
  for (const ir::Instruction& inst : kernel.body) n += inst.op != ir::Opcode::kLabel;
  // Seconds per instruction (the time column divided by the instructions),
  // printed with an SI prefix: "85n" is 85 ns per instruction.
  state.counters["s/inst"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["insts"] = n;
  state.counters["peak_B/inst"] = static_cast<double>(heap.bytes()) / n;
}

// KernelBuilder calls and Finish() (verification, canonical order, the
// verified mark).
void BM_Build(benchmark::State& state) {
  ir::Kernel kernel;
  PeakHeap heap;
  for (auto _ : state) {
    heap.Start();
    ir::Kernel built = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
    heap.Stop();
    state.PauseTiming();
    kernel = std::move(built);
    state.ResumeTiming();
  }
  Report(state, kernel, heap);
}

// The standard pipeline (verify: the mark's check, the optimizer, dce) on
// the built kernel; BM_PassesNoOpt without the optimizer,
// BM_PassesNoLoopOpt without its loop passes (licm, strength): their cost.
void RunPasses(benchmark::State& state, const passes::PipelineOptions& options) {
  ir::Kernel kernel = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
  passes::Pipeline pipeline = passes::Pipeline::Standard(options);
  PeakHeap heap;
  for (auto _ : state) {
    heap.Start();
    OrDie(pipeline.Run(kernel));
    heap.Stop();
  }
  Report(state, kernel, heap);
}
void BM_Passes(benchmark::State& state) { RunPasses(state, {}); }

// The standard pipeline as BM_Passes, and register counting after it, with
// each pass's own CPU time per instruction as a counter (taken from the
// pipeline's after-pass hook), to find the stage whose cost per instruction
// grows with the kernel. Each iteration runs on a fresh copy of the built
// kernel (copied outside the timing), so that every pass finds the work it
// finds in a real codegen (BM_Passes reruns the pipeline on its own output,
// where the optimizer finds nothing left to do).
void BM_PassStages(benchmark::State& state) {
  const ir::Kernel built = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
  ir::Kernel kernel;
  passes::Pipeline pipeline = passes::Pipeline::Standard({.count_registers = true});
  std::vector<std::pair<std::string, double>> seconds;  // by pass, in pipeline order
  size_t next = 0;
  double last = 0;
  OrDie(pipeline.DumpAfter("all", [&](std::string_view pass, const ir::Kernel&) {
    double now = ThreadSeconds();
    if (next == seconds.size()) seconds.emplace_back(std::string(pass), 0.0);
    seconds[next++].second += now - last;
    last = ThreadSeconds();
  }));
  PeakHeap heap;
  for (auto _ : state) {
    state.PauseTiming();
    kernel = built;
    state.ResumeTiming();
    next = 0;
    last = ThreadSeconds();
    OrDie(pipeline.Run(kernel));
  }
  uint32_t n = 0;
  for (const ir::Instruction& inst : kernel.body) n += inst.op != ir::Opcode::kLabel;
  for (const auto& [pass, s] : seconds) {
    state.counters[StrCat(pass, "_ns")] = s * 1e9 / static_cast<double>(state.iterations()) / n;
  }
  Report(state, kernel, heap);
}
void BM_PassesNoOpt(benchmark::State& state) { RunPasses(state, passes::PipelineOptions::None()); }
void BM_PassesNoLoopOpt(benchmark::State& state) { RunPasses(state, {.licm = false, .strength = false}); }

// Times analyse(kernel) on the built kernel, which it must not change.
template <typename F>
void RunAnalysis(benchmark::State& state, F&& analyse) {
  ir::Kernel kernel = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
  PeakHeap heap;
  for (auto _ : state) {
    heap.Start();
    analyse(kernel);
    heap.Stop();
  }
  Report(state, kernel, heap);
}

// The full verifier on the built kernel (what the verify pass costs on a
// kernel that is not marked, e.g. after a pass changed it).
void BM_Verify(benchmark::State& state) {
  RunAnalysis(state, [](const ir::Kernel& k) { OrDie(ir::VerifyKernel(k)); });
}

// The analyses the loop passes start from: the control-flow graph alone,
// and natural-loop finding (the graph, dominators and loops).
void BM_Cfg(benchmark::State& state) {
  RunAnalysis(state, [](const ir::Kernel& k) { benchmark::DoNotOptimize(ir::Cfg::Build(k)); });
}
void BM_FindLoops(benchmark::State& state) {
  RunAnalysis(state, [](const ir::Kernel& k) { benchmark::DoNotOptimize(passes::FindLoops(k)); });
}

void BM_Print(benchmark::State& state) {
  ir::Kernel kernel = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
  OrDie(passes::Pipeline::Standard().Run(kernel));
  PeakHeap heap;
  for (auto _ : state) {
    heap.Start();
    benchmark::DoNotOptimize(OrDie(emit::PrintPtx(kernel)));
    heap.Stop();
  }
  Report(state, kernel, heap);
}

// Build, passes and print: the whole codegen.
void BM_All(benchmark::State& state) {
  passes::Pipeline pipeline = passes::Pipeline::Standard();
  PeakHeap heap;
  ir::Kernel last;
  for (auto _ : state) {
    heap.Start();
    ir::Kernel kernel = OrDie(bench::BuildSynthetic(static_cast<uint32_t>(state.range(0)), ShapeOf(state)));
    OrDie(pipeline.Run(kernel));
    benchmark::DoNotOptimize(OrDie(emit::PrintPtx(kernel)));
    heap.Stop();
    state.PauseTiming();
    last = std::move(kernel);
    state.ResumeTiming();
  }
  Report(state, last, heap);
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (Shape shape : {Shape::kStraight, Shape::kBlocks, Shape::kLoops, Shape::kNested}) {
    for (int64_t n : {1000, 10000, 100000, 1000000}) b->Args({n, static_cast<int64_t>(shape)});
  }
  b->ArgNames({"n", "shape"})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Build)->Apply(Sizes);
BENCHMARK(BM_Passes)->Apply(Sizes);
BENCHMARK(BM_PassStages)->Apply(Sizes);
BENCHMARK(BM_PassesNoOpt)->Apply(Sizes);
BENCHMARK(BM_PassesNoLoopOpt)->Apply(Sizes);
BENCHMARK(BM_Verify)->Apply(Sizes);
BENCHMARK(BM_Cfg)->Apply(Sizes);
BENCHMARK(BM_FindLoops)->Apply(Sizes);
BENCHMARK(BM_Print)->Apply(Sizes);
BENCHMARK(BM_All)->Apply(Sizes);

// How the body container grows: n typical instructions (add.u32 with two
// register operands) appended one by one, then every one read once in
// order. range(1) picks the container: 0 ir::InstructionList (the body's
// chunks), 1 std::vector<ir::Instruction> (the body before it), 2
// llvm::simple_ilist with one heap node per instruction. peak_B/inst is
// the container's peak heap; the README's "Design notes" give the results.
struct IlistNode : llvm::ilist_node<IlistNode> {
  ir::Instruction inst;
};

ir::Instruction TypicalInstruction(uint32_t i) {
  ir::Instruction inst;
  inst.op = ir::Opcode::kAdd;
  inst.mods.type = ir::ScalarType::kU32;
  inst.dsts.push_back(ir::Reg{i});
  inst.srcs.push_back(ir::Reg{i / 2});
  inst.srcs.push_back(ir::Reg{i / 3});
  return inst;
}

template <typename Body>
uint64_t FillAndRead(Body& body, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) body.push_back(TypicalInstruction(i));
  uint64_t sum = 0;
  for (const ir::Instruction& inst : body) sum += inst.dsts[0].id;
  return sum;
}

void BM_BodyGrowth(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  PeakHeap heap;
  for (auto _ : state) {
    heap.Start();
    switch (state.range(1)) {
      case 0: {
        ir::InstructionList body;
        benchmark::DoNotOptimize(FillAndRead(body, n));
        break;
      }
      case 1: {
        std::vector<ir::Instruction> body;
        benchmark::DoNotOptimize(FillAndRead(body, n));
        break;
      }
      default: {
        llvm::simple_ilist<IlistNode> body;
        for (uint32_t i = 0; i < n; ++i) {
          auto* node = new IlistNode;
          node->inst = TypicalInstruction(i);
          body.push_back(*node);
        }
        uint64_t sum = 0;
        for (const IlistNode& node : body) sum += node.inst.dsts[0].id;
        benchmark::DoNotOptimize(sum);
        body.clearAndDispose([](IlistNode* node) { delete node; });
        break;
      }
    }
    heap.Stop();
  }
  state.counters["s/inst"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["peak_B/inst"] = static_cast<double>(heap.bytes()) / n;
}
BENCHMARK(BM_BodyGrowth)
    ->ArgsProduct({{1000, 100000, 1000000}, {0, 1, 2}})
    ->ArgNames({"n", "container"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ptxforge

BENCHMARK_MAIN();
