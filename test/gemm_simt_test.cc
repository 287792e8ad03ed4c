// gemm.simt (issue 10): configuration errors through the API and ptx-dump
// --set, and emulator numerics (race checking on) on awkward shapes.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/gemm_simt.h"
#include "kernels/problem_runner.h"
#include "kernels/registry.h"
#include "runtime/emulator.h"
#include "test/family_testing.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge {
namespace {

using testing::Overrides;
using testing::Msg;

// ptx-dump's one-line error for gemm.simt with `settings` (exit code 2: a refused setting).
std::string DumpError(const Overrides& settings) { return testing::DumpUsageError("gemm.simt", settings); }

absl::StatusOr<kernels::TestProblem> Problem(const Overrides& settings) {
  const kernels::KernelFamily* family = kernels::FindFamily("gemm.simt");
  REQUIRE(family != nullptr);
  absl::StatusOr<kernels::Config> config = family->MakeConfig(settings);
  REQUIRE(Msg(config) == "OK");
  return family->MakeProblem(*config, 7);
}

// Runs the test problem for `settings` on the emulator (race checking on) and checks C.
void RunOnEmulator(const Overrides& settings) { testing::RunFamilyOnEmulator("gemm.simt", settings); }

TEST_CASE("gemm.simt: bad configurations", "[gemm_simt]") {
  kernels::GemmSimtSpec spec;
  spec.type = ir::ScalarType::kF16;
  CHECK(Msg(spec.Validate()) == "gemm.simt: type f16 is not supported (f32 only)");
  spec.type = ir::ScalarType::kF32;
  spec.block_m = 96;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "gemm.simt: block_m=96 must be 32, 64 or 128");
  spec.block_m = 128;
  spec.thread_n = 2;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "gemm.simt: thread_n=2 must be 4 or 8");
  CHECK(DumpError({{"type", "f64"}}) == "ptx-dump: gemm.simt: type=f64 is not supported; choose one of f32\n");
  CHECK(DumpError({{"block_m", "256"}}) == "ptx-dump: gemm.simt: block_m=256 must be 32, 64 or 128\n");
  CHECK(DumpError({{"block_n", "16"}}) == "ptx-dump: gemm.simt: block_n=16 must be 32, 64 or 128\n");
  CHECK(DumpError({{"thread_m", "16"}}) == "ptx-dump: gemm.simt: thread_m=16 must be 4 or 8\n");
  CHECK(DumpError({{"thread_n", "0"}}) == "ptx-dump: gemm.simt: thread_n=0 must be 4 or 8\n");
  CHECK(DumpError({{"block_n", "-1"}}) == "ptx-dump: gemm.simt: block_n=-1 is not an unsigned 32-bit integer\n");
  CHECK(DumpError({{"alpha", "x"}}) == "ptx-dump: gemm.simt: alpha=x is not a number\n");
  CHECK(Msg(Problem({{"m", "0"}})) == "gemm.simt: m=0 must be positive (k may be 0)");
  CHECK(Msg(Problem({{"n", "0"}})) == "gemm.simt: n=0 must be positive (k may be 0)");
  CHECK(Msg(Problem({{"m", "4000000"}, {"block_m", "32"}, {"n", "1"}, {"k", "1"}})) ==
        "gemm.simt: m=4000000 needs 125000 blocks of 32 rows, more than CUDA's 65535");
  CHECK(Msg(Problem({{"m", "100000"}, {"n", "100000"}})) ==
        "gemm.simt: m=100000 n=100000 k=19 alpha=1.5 beta=-0.5 needs more than the 1073741824 bytes of test data a "
        "problem may use");
}

TEST_CASE("gemm.simt: names and launch shape", "[gemm_simt]") {
  kernels::GemmSimtSpec spec{.block_m = 64, .block_n = 32, .thread_m = 8, .thread_n = 4};
  CHECK(spec.KernelName() == "gemm_simt_f32_64x32_8x4");
  CHECK(spec.threads() == 64);
  absl::StatusOr<kernels::TestProblem> p = Problem({{"m", "257"}, {"n", "129"}, {"k", "33"}});
  REQUIRE(Msg(p) == "OK");
  CHECK(p->block == std::array<uint32_t, 3>{256, 1, 1});
  CHECK(p->grid == std::array<uint32_t, 3>{2, 3, 1});
}

// Sizes down to 1, K below, at and past a slab of 8 and not a multiple of it, M and N not multiples of the
// block tile, several blocks in both dimensions (257 x 129: 3 x 2 blocks).
TEST_CASE("gemm.simt: awkward shapes", "[gemm_simt]") {
  for (auto [m, n, k] : std::vector<std::array<std::string, 3>>{
           {"1", "1", "1"}, {"130", "67", "19"}, {"257", "129", "33"}, {"3", "200", "8"}, {"129", "5", "16"}}) {
    RunOnEmulator({{"m", m}, {"n", n}, {"k", k}});
  }
}

TEST_CASE("gemm.simt: beta == 0 overwrites NaNs in C without reading them", "[gemm_simt]") {
  absl::StatusOr<kernels::TestProblem> p = Problem({{"beta", "0"}});
  REQUIRE(Msg(p) == "OK");
  CHECK(std::isnan(kernels::AsDoubles(ir::ScalarType::kF32, p->buffers[2].data)[0]));
  RunOnEmulator({{"m", "130"}, {"n", "67"}, {"k", "19"}, {"beta", "0"}});
  RunOnEmulator({{"m", "9"}, {"n", "7"}, {"k", "5"}, {"alpha", "0"}, {"beta", "2.0"}});
  // Only beta == 0 skips C: a NaN beta reads it and every output is NaN, as in the reference.
  RunOnEmulator({{"m", "9"}, {"n", "7"}, {"k", "5"}, {"beta", "nan"}});
}

// k = 0: no slab is loaded and C becomes beta * C.
TEST_CASE("gemm.simt: k = 0 scales C", "[gemm_simt]") {
  RunOnEmulator({{"m", "130"}, {"n", "67"}, {"k", "0"}});
  RunOnEmulator({{"m", "3"}, {"n", "5"}, {"k", "0"}, {"beta", "0"}});
}

// Fewer threads than block_n (32x32 and 32x128 with 8x8: 16 and 64 threads) and more (the others).
TEST_CASE("gemm.simt: other tile shapes", "[gemm_simt]") {
  for (auto [bm, bn, tm, tn] : std::vector<std::array<std::string, 4>>{
           {"32", "32", "8", "8"}, {"32", "128", "8", "8"}, {"64", "32", "4", "8"}, {"32", "64", "8", "4"}, {"64", "64", "4", "4"}}) {
    RunOnEmulator({{"block_m", bm}, {"block_n", bn}, {"thread_m", tm}, {"thread_n", tn},
                   {"m", "70"}, {"n", "45"}, {"k", "21"}});
  }
}

}  // namespace
}  // namespace ptxforge
