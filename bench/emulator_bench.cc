// Emulator speed: thread-instructions per second on one host core, for
// vector_add and reduce_sum on inputs of a million elements, plain and with
// profiling or race checking on (Arg: 0 plain, 1 profile, 2 race check).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "kernels/reduce.h"
#include "kernels/vector_add.h"
#include "passes/pass.h"
#include "runtime/emulator.h"

namespace ptxforge {
namespace {

using runtime::Buffer;

using bench::OrDie;

ir::Kernel Prepared(absl::StatusOr<ir::Kernel> k) {
  ir::Kernel kernel = OrDie(std::move(k));
  OrDie(passes::Pipeline::Standard().Run(kernel));
  return kernel;
}

std::vector<float> Inputs(size_t n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Reports thread-instructions per second (the launch's executed
// instructions over its wall time) as "instr/s".
void Report(benchmark::State& state, const runtime::Emulator& emu) {
  state.counters["instr/s"] =
      benchmark::Counter(static_cast<double>(emu.last_counters().instructions), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["instr/launch"] = static_cast<double>(emu.last_counters().instructions);
}

// The emulator options for a benchmark's "checks" argument.
runtime::EmulatorOptions Checks(int64_t checks, int workers = 1) {
  return {.worker_threads = workers, .profile = checks == 1, .race_check = checks == 2};
}

void BM_VectorAdd(benchmark::State& state) {
  const uint32_t n = 1 << 20;
  auto emu = runtime::MakeEmulator(Checks(state.range(0)));
  ir::Kernel kernel = Prepared(kernels::VectorAddSpec{}.Build(ir::Target::kSm80));
  auto loaded = OrDie(emu->Load(kernel));
  std::vector<float> host = Inputs(n);
  auto a = OrDie(Buffer<float>::FromHost(*emu, host));
  auto b = OrDie(Buffer<float>::FromHost(*emu, host));
  auto c = OrDie(Buffer<float>::Allocate(*emu, n));
  for (auto _ : state) OrDie(emu->Launch(*loaded, {.grid = {n / 256}, .block = {256}}, {a, b, c, n}));
  Report(state, *emu);
}
BENCHMARK(BM_VectorAdd)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// The same with f16 elements: every add is computed in double and rounded.
void BM_VectorAddF16(benchmark::State& state) {
  const uint32_t n = 1 << 20;
  auto emu = runtime::MakeEmulator({.worker_threads = 1});
  ir::Kernel kernel = Prepared(kernels::VectorAddSpec{.type = ir::ScalarType::kF16}.Build(ir::Target::kSm80));
  auto loaded = OrDie(emu->Load(kernel));
  std::vector<uint16_t> host(n, 0x3C00);  // 1.0
  auto a = OrDie(Buffer<uint16_t>::FromHost(*emu, host));
  auto b = OrDie(Buffer<uint16_t>::FromHost(*emu, host));
  auto c = OrDie(Buffer<uint16_t>::Allocate(*emu, n));
  for (auto _ : state) OrDie(emu->Launch(*loaded, {.grid = {n / 256}, .block = {256}}, {a, b, c, n}));
  Report(state, *emu);
}
BENCHMARK(BM_VectorAddF16)->Unit(benchmark::kMillisecond);

// Arguments: host threads (1, or 0 for one per core), checks.
void BM_ReduceSum(benchmark::State& state) {
  const uint32_t n = 1 << 20;
  auto emu = runtime::MakeEmulator(Checks(state.range(1), static_cast<int>(state.range(0))));
  ir::Kernel kernel = Prepared(kernels::ReduceSumSpec{}.Build(ir::Target::kSm80));
  auto loaded = OrDie(emu->Load(kernel));
  auto x = OrDie(Buffer<float>::FromHost(*emu, Inputs(n)));
  auto partial = OrDie(Buffer<float>::Allocate(*emu, 64));
  for (auto _ : state) OrDie(emu->Launch(*loaded, {.grid = {64}, .block = {256}}, {x, partial, n}));
  Report(state, *emu);
}
BENCHMARK(BM_ReduceSum)
    ->Args({1, 0})
    ->Args({0, 0})
    ->Args({1, 1})
    ->Args({1, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace ptxforge

BENCHMARK_MAIN();
