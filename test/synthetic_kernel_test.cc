// Tests of the scaling benchmarks' synthetic kernels (bench/synthetic_kernel.h):
// their size, that the loop shapes give licm and strength reduction work in
// every loop, and that the optimizer keeps what they compute.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/synthetic_kernel.h"
#include "passes/licm.h"
#include "passes/loops.h"
#include "passes/pass.h"
#include "passes/register_count.h"
#include "passes/strength_reduction.h"
#include "runtime/emulator.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using bench::Shape;
using testing::Msg;

uint32_t Instructions(const ir::Kernel& k) {
  uint32_t n = 0;
  for (const ir::Instruction& inst : k.body) n += inst.op != ir::Opcode::kLabel;
  return n;
}

ir::Kernel Build(uint32_t n, Shape shape) {
  absl::StatusOr<ir::Kernel> k = bench::BuildSynthetic(n, shape);
  REQUIRE(Msg(k) == "OK");
  return *std::move(k);
}

TEST_CASE("synthetic kernels have the size asked for, within one loop nest", "[synthetic]") {
  for (Shape shape : {Shape::kStraight, Shape::kBlocks, Shape::kLoops, Shape::kNested}) {
    for (uint32_t n : {1000u, 20000u}) {
      INFO(bench::ShapeName(shape) << " " << n);
      const uint32_t got = Instructions(Build(n, shape));
      CHECK(got >= n);
      CHECK(got < n + 38);
    }
  }
}

TEST_CASE("register counting gives the same numbers with dense and sparse live-in sets", "[synthetic][regcount]") {
  // At 20k instructions the loop shapes have thousands of blocks and take
  // the sparse sets by themselves; straight-line code and the blocks shape
  // (no backward edge) take the one-walk count without dataflow. Forced
  // dense or sparse, every number must agree with the chosen count, before
  // and after the pipeline.
  for (Shape shape : {Shape::kStraight, Shape::kBlocks, Shape::kLoops, Shape::kNested}) {
    INFO(bench::ShapeName(shape));
    ir::Kernel k = Build(20000, shape);
    for (int optimized = 0; optimized < 2; ++optimized) {
      if (optimized) REQUIRE(Msg(passes::Pipeline::Standard().Run(k)) == "OK");
      const ir::KernelStats dense = passes::CountRegisters(k, passes::LiveInSets::kDense);
      const ir::KernelStats sparse = passes::CountRegisters(k, passes::LiveInSets::kSparse);
      const ir::KernelStats chosen = passes::CountRegisters(k);
      CHECK(dense.max_live > 10);
      CHECK(sparse.max_live == dense.max_live);
      CHECK(sparse.max_live_per_class == dense.max_live_per_class);
      CHECK(sparse.regs_per_class == dense.regs_per_class);
      CHECK(sparse.instructions == dense.instructions);
      CHECK(chosen.max_live == dense.max_live);
      CHECK(chosen.max_live_per_class == dense.max_live_per_class);
      CHECK(chosen.regs_per_class == dense.regs_per_class);
    }
  }
}

TEST_CASE("synthetic loop shapes give licm and strength reduction work in every loop", "[synthetic]") {
  // kLoops: 25 instructions, and 18 a loop; licm hoists each loop's seed * C and
  // strength reduction steps a pointer for in + i*4.
  ir::Kernel loops = Build(10000, Shape::kLoops);
  const size_t nloops = passes::FindLoops(loops).loops.size();
  CHECK(nloops == (10000 - 25 + 17) / 18);
  CHECK(passes::HoistLoopInvariants(loops) == nloops);
  CHECK(passes::ReduceAddressStrength(loops) == nloops);
  // kNested: 38 instructions and three loops a nest; the innermost as
  // above, and the outer loop's row + i*12 reduced too.
  ir::Kernel nested = Build(10000, Shape::kNested);
  const size_t nests = passes::FindLoops(nested).loops.size() / 3;
  CHECK(passes::FindLoops(nested).loops.size() == 3 * nests);
  CHECK(nests == (10000 - 25 + 37) / 38);
  CHECK(passes::HoistLoopInvariants(nested) == nests);
  CHECK(passes::ReduceAddressStrength(nested) == 2 * nests);
}

// Runs a synthetic kernel in one block of 4 threads with n = 3 and in[k] =
// 7k + 1; returns out.
std::vector<uint32_t> Run(const ir::Kernel& k) {
  auto emu = runtime::MakeEmulator({});
  auto out = runtime::Buffer<uint32_t>::Allocate(*emu, 4);
  REQUIRE(out.ok());
  std::vector<uint32_t> host = {1, 8, 15};
  auto in = runtime::Buffer<uint32_t>::FromHost(*emu, host);
  REQUIRE(in.ok());
  auto loaded = emu->Load(k);
  REQUIRE(Msg(loaded.status()) == "OK");
  REQUIRE(Msg(emu->Launch(**loaded, {.grid = {1}, .block = {4}}, {*out, *in, uint64_t{3}, uint32_t{3}})) == "OK");
  return *out->ToHost();
}

TEST_CASE("synthetic loop shapes compute the same with and without the optimizer", "[synthetic]") {
  for (Shape shape : {Shape::kLoops, Shape::kNested}) {
    INFO(bench::ShapeName(shape));
    ir::Kernel plain = Build(600, shape);
    ir::Kernel optimized = plain;
    REQUIRE(Msg(passes::Pipeline::Standard(passes::PipelineOptions::None()).Run(plain)) == "OK");
    passes::PipelineOptions all;
    all.verify_each = true;
    REQUIRE(Msg(passes::Pipeline::Standard(all).Run(optimized)) == "OK");
    const std::vector<uint32_t> want = Run(plain);
    CHECK(want[0] != want[1]);  // the threads differ, and the loops ran
    CHECK(Run(optimized) == want);
  }
}

}  // namespace
}  // namespace ptxforge
