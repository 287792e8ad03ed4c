// EmulatorOptions::schedule_seed: blocks, and warps between barriers, in a
// seeded pseudo-random order; order-dependent kernels give other results,
// order-independent ones the same.
#include <algorithm>
#include <numeric>
#include <set>

#include "ir/strings.h"
#include "kernels/problem_runner.h"
#include "kernels/registry.h"
#include "passes/pass.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using ir::StateSpace;
using runtime::Buffer;
using testing::FinishOrDie;

// out[atom.add(counter, 1)] = global thread index: the order threads ran in.
ir::Kernel TakeSlots() {
  KernelBuilder b("take_slots");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U64> counter = b.CvtaToGlobal(b.Param<U64>("counter"));
  Value<U32> slot = b.AtomicAdd(StateSpace::kGlobal, counter, b.Const<U32>(1));
  b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(out, slot), b.GlobalThreadIdX());
  return FinishOrDie(b);
}

std::vector<uint32_t> RunTakeSlots(uint64_t seed) {
  auto emu = runtime::MakeEmulator({.schedule_seed = seed});
  auto out = Buffer<uint32_t>::Allocate(*emu, 16 * 32);
  auto counter = Buffer<uint32_t>::FromHost(*emu, std::vector<uint32_t>{0});
  REQUIRE((out.ok() && counter.ok()));
  auto loaded = emu->Load(TakeSlots());
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, {.grid = {16}, .block = {32}}, {*out, *counter});
  INFO(s.ToString());
  REQUIRE(s.ok());
  return *out->ToHost();
}

// Lane 0 of every warp writes its warp index to one shared word, then (after
// a barrier) again with 100 added; thread 0 stores what it saw after each
// round: the warp that ran last in that round.
ir::Kernel LastWarp() {
  KernelBuilder b("last_warp");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<U32> word = b.Shared<U32>("word", 1);
  Value<U32> tid = b.TidX();
  Value<U32> warp = b.Shr(tid, 5u);
  Value<Pred> lane0 = b.Eq(b.And(tid, 31u), 0u);
  for (uint32_t round = 0; round < 2; ++round) {
    b.If(lane0, [&] { b.Store(StateSpace::kShared, Address(word), b.Add(warp, round * 100)); });
    b.BarSync();
    b.If(b.Eq(tid, 0u), [&] {
      b.Store(StateSpace::kGlobal, Address(out, round * 4), b.Load<U32>(StateSpace::kShared, Address(word)));
    });
    b.BarSync();
  }
  return FinishOrDie(b);
}

std::vector<uint32_t> RunLastWarp(uint64_t seed) {
  auto emu = runtime::MakeEmulator({.schedule_seed = seed});
  auto out = Buffer<uint32_t>::Allocate(*emu, 2);
  REQUIRE(out.ok());
  auto loaded = emu->Load(LastWarp());
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, {.grid = {1}, .block = {256}}, {*out});
  INFO(s.ToString());
  REQUIRE(s.ok());
  return *out->ToHost();
}

TEST_CASE("schedule_seed shuffles the block order: atomics hand out other slots, one seed, one order") {
  std::vector<uint32_t> in_order(16 * 32);
  std::iota(in_order.begin(), in_order.end(), 0u);
  CHECK(RunTakeSlots(0) == in_order);
  for (uint64_t seed : {1, 2, 3}) {
    INFO("seed " << seed);
    std::vector<uint32_t> shuffled = RunTakeSlots(seed);
    CHECK(shuffled != in_order);  // the order-dependent result is caught
    CHECK(RunTakeSlots(seed) == shuffled);
    std::vector<uint32_t> sorted = shuffled;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == in_order);  // every thread still ran once
  }
  CHECK(RunTakeSlots(1) != RunTakeSlots(2));
}

TEST_CASE("schedule_seed shuffles the warps of a block in every round between barriers") {
  CHECK(RunLastWarp(0) == std::vector<uint32_t>{7, 107});
  std::set<uint32_t> first, second;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    std::vector<uint32_t> r = RunLastWarp(seed);
    CHECK(r == RunLastWarp(seed));
    first.insert(r[0]);
    second.insert(r[1]);
  }
  CHECK(first.size() > 1);
  CHECK(second.size() > 1);
  CHECK(*first.rbegin() <= 7);
  CHECK(*second.begin() >= 100);
}

TEST_CASE("order-independent registry kernels give the same results under any seed") {
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    INFO(family->name());
    auto config = family->MakeConfig();
    REQUIRE(config.ok());
    auto kernel = family->Build(*config, ir::Target::kSm80);
    REQUIRE(kernel.ok());
    REQUIRE(passes::Pipeline::Standard().Run(*kernel).ok());
    auto problem = family->MakeProblem(*config, 1);
    REQUIRE(problem.ok());
    for (uint64_t seed : {5, 6}) {
      auto emu = runtime::MakeEmulator({.schedule_seed = seed});
      auto result = kernels::RunProblem(*emu, *kernel, *problem);
      REQUIRE(result.ok());
      INFO(result->Report());
      CHECK(result->ok());
    }
  }
}

TEST_CASE("schedule_seed refuses grids it cannot shuffle") {
  KernelBuilder b("empty");
  b.Ret();
  auto emu = runtime::MakeEmulator({.schedule_seed = 1});
  auto loaded = emu->Load(FinishOrDie(b));
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, {.grid = {(1u << 24) + 1}}, {});
  CHECK(testing::Msg(s) == "kernel empty: schedule_seed shuffles at most 2^24 blocks, the grid has 16777217");
}

}  // namespace
}  // namespace ptxforge
