// gemm.tensor_core (issue 9 part 3): configuration errors through the API and
// ptx-dump --set, emulator numerics against the double reference (race
// checking and cp.async memcheck on) over edge shapes, types, epilogues,
// layouts, tile configurations and both copy paths, and zero bank conflicts.
// (ptxas: gemm_tensor_core_ptxas_test.cc.)
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "kernels/gemm_tensor_core.h"
#include "kernels/problem_runner.h"
#include "kernels/registry.h"
#include "passes/pass.h"
#include "runtime/emulator.h"
#include "test/family_testing.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using testing::Msg;
using testing::Overrides;

constexpr const char* kFamily = "gemm.tensor_core";

std::string DumpError(const Overrides& settings) { return testing::DumpUsageError(kFamily, settings); }

absl::StatusOr<kernels::TestProblem> Problem(const Overrides& settings) {
  const kernels::KernelFamily* family = kernels::FindFamily(kFamily);
  REQUIRE(family != nullptr);
  absl::StatusOr<kernels::Config> config = family->MakeConfig(settings);
  REQUIRE(Msg(config) == "OK");
  return family->MakeProblem(*config, 7);
}

// Runs the test problem on the emulator (race checking on) and checks C against the double reference.
void Run(const Overrides& settings) { testing::RunFamilyOnEmulator(kFamily, settings); }

Overrides With(Overrides base, const Overrides& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

TEST_CASE("gemm.tensor_core: bad configurations", "[gemm_tc]") {
  kernels::GemmTensorCoreSpec spec;
  spec.type = ir::ScalarType::kF32;
  CHECK(Msg(spec.Validate()) == "gemm.tensor_core: type f32 is not supported (f16 or bf16 inputs)");
  spec.type = ir::ScalarType::kBF16;
  spec.out_type = ir::ScalarType::kF16;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "gemm.tensor_core: out_type f16 with type bf16: the output is f32 or bf16");
  spec = {};
  CHECK(Msg(spec.Build(ir::Target::kSm75)) ==
        "gemm.tensor_core: needs sm_80 or newer (cp.async, mma.sync m16n8k16), not sm_75");
  spec.block_k = 8;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "gemm.tensor_core: block_k=8 must be 16, 32 or 64");
  spec = {.warps_m = 4, .warps_n = 4};
  CHECK(Msg(spec.Validate()) == "gemm.tensor_core: warps_m=4 x warps_n=4: a block has 4 or 8 warps (powers of 2)");
  spec = {.warps_m = 3, .warps_n = 2};
  CHECK(Msg(spec.Validate()) == "gemm.tensor_core: warps_m=3 x warps_n=2: a block has 4 or 8 warps (powers of 2)");
  spec = {.block_m = 32, .warps_m = 4, .warps_n = 2};
  CHECK(Msg(spec.Validate()) ==
        "gemm.tensor_core: block_m=32 over warps_m=4 is not a whole number of 16-row mma tiles per warp");
  spec = {.block_n = 64, .warps_m = 1, .warps_n = 8};
  CHECK(Msg(spec.Validate()) ==
        "gemm.tensor_core: block_n=64 over warps_n=8 is not a whole number of 16-column pairs of mma tiles per warp");
  spec = {.block_m = 32, .block_n = 32, .block_k = 16, .warps_m = 2, .warps_n = 2};
  CHECK(Msg(spec.Validate()) ==
        "gemm.tensor_core: the 32x16 A tile is 64 16-byte pieces, not a multiple of the 128 threads");
  spec = {.block_m = 64, .block_n = 32, .block_k = 16, .warps_m = 2, .warps_n = 2};
  CHECK(Msg(spec.Validate()) ==
        "gemm.tensor_core: the 16x32 B tile is 64 16-byte pieces, not a multiple of the 128 threads");
  spec = {.stages = 1};
  CHECK(Msg(spec.Validate()) == "gemm.tensor_core: stages=1 must be 2 to 8");
  spec = {.stages = 4};
  CHECK(Msg(spec.Validate()) == "gemm.tensor_core: 4 stages of 16384 bytes need 65536 bytes of shared memory, more "
                                "than the 49152 a kernel may declare");

  CHECK(DumpError({{"type", "f32"}}) == "ptx-dump: gemm.tensor_core: type=f32 is not supported; choose one of f16, bf16\n");
  CHECK(DumpError({{"out_type", "f64"}}) ==
        "ptx-dump: gemm.tensor_core: out_type=f64 is not supported; choose one of f32, f16, bf16\n");
  CHECK(DumpError({{"out_type", "bf16"}}) ==
        "ptx-dump: gemm.tensor_core: out_type bf16 with type f16: the output is f32 or f16\n");
  CHECK(DumpError({{"b_layout", "diagonal"}}) == "ptx-dump: gemm.tensor_core: b_layout=diagonal must be row or col\n");
  CHECK(DumpError({{"block_m", "256"}}) == "ptx-dump: gemm.tensor_core: block_m=256 must be 32, 64 or 128\n");
  CHECK(DumpError({{"block_n", "48"}}) == "ptx-dump: gemm.tensor_core: block_n=48 must be 32, 64 or 128\n");
  CHECK(DumpError({{"stages", "9"}}) == "ptx-dump: gemm.tensor_core: stages=9 must be 2 to 8\n");
  CHECK(DumpError({{"warps_n", "-1"}}) ==
        "ptx-dump: gemm.tensor_core: warps_n=-1 is not an unsigned 32-bit integer\n");
  CHECK(DumpError({{"bias", "maybe"}}) ==
        "ptx-dump: gemm.tensor_core: bias=maybe is not a boolean (true/false, 1/0)\n");

  CHECK(Msg(Problem({{"m", "0"}})) == "gemm.tensor_core: m=0 must be positive (k may be 0)");
  CHECK(Msg(Problem({{"n", "0"}})) == "gemm.tensor_core: n=0 must be positive (k may be 0)");
  CHECK(Msg(Problem({{"n", "2147483648"}, {"m", "1"}, {"k", "1"}})) ==
        "gemm.tensor_core: n=2147483648 must be below 2^31 (the kernel's row and column indices are u32)");
  CHECK(Msg(Problem({{"m", "9000000"}, {"block_m", "64"}, {"warps_m", "2"}, {"n", "1"}, {"k", "1"}})) ==
        "gemm.tensor_core: m=9000000 needs 140625 blocks of 64 rows, more than CUDA's 65535");
  CHECK(Msg(Problem({{"m", "100000"}, {"n", "100000"}})) ==
        "gemm.tensor_core: m=100000 n=100000 k=72 alpha=1.5 beta=-0.5 needs more than the 1073741824 bytes of test "
        "data a problem may use");
}

TEST_CASE("gemm.tensor_core: names, params and launch shape", "[gemm_tc]") {
  kernels::GemmTensorCoreSpec spec;
  CHECK(spec.KernelName() == "gemm_tc_f16_f32_row_128x128x32_2x4_s3");
  CHECK(spec.threads() == 256);
  spec = {.type = ir::ScalarType::kBF16, .out_type = ir::ScalarType::kBF16, .b_layout = kernels::GemmBLayout::kCol,
          .block_m = 64, .block_n = 32, .block_k = 64, .warps_m = 2, .warps_n = 2, .stages = 2, .scale = false,
          .bias = true};
  CHECK(spec.KernelName() == "gemm_tc_bf16_bf16_col_64x32x64_2x2_s2_noscale_bias");
  absl::StatusOr<ir::Kernel> k = spec.Build(ir::Target::kSm90);
  REQUIRE(Msg(k) == "OK");
  std::vector<std::string> params;
  for (const ir::Param& p : k->params) params.push_back(StrCat(p.name, ":", ir::TypeName(p.type)));
  CHECK(params == std::vector<std::string>{"a:u64", "b:u64", "c:u64", "bias:u64", "m:u32", "n:u32", "k:u32"});
  CHECK(k->bounds.reqntid == std::array<uint32_t, 3>{128, 1, 1});
  // A 32x16 warp tile is 2 x 2 m16n8 tiles and a 64-deep slab 4 k16 steps: 16 mma.sync, each accumulating in place
  // (D is C: kernels::MmaInto), fed by 2 (A) + 1 (B, two n8 tiles) ldmatrix.x4 per k16 step.
  int mmas = 0, in_place = 0, ldmatrix = 0;
  for (const ir::Instruction& inst : k->body) {
    ldmatrix += inst.op == ir::Opcode::kLdmatrix;
    if (inst.op != ir::Opcode::kMmaBF16) continue;
    ++mmas;
    bool same = inst.dsts.size() == 4 && inst.srcs.size() == 10;
    for (size_t i = 0; same && i < 4; ++i) same = inst.srcs[6 + i].is_reg() && inst.srcs[6 + i].reg() == inst.dsts[i];
    in_place += same;
  }
  CHECK(mmas == 16);
  CHECK(in_place == 16);
  CHECK(ldmatrix == 4 * (2 + 1));
  absl::StatusOr<kernels::TestProblem> p = Problem({{"m", "255"}, {"n", "129"}, {"k", "300"}});
  REQUIRE(Msg(p) == "OK");
  CHECK(p->block == std::array<uint32_t, 3>{256, 1, 1});
  CHECK(p->grid == std::array<uint32_t, 3>{2, 2, 1});
}

// The shapes with the default 128x128x32 config (8 warps, 3 stages). 255x129x300 and 17x33x65 have odd
// leading dimensions: both operands go element by element; 128x128x32 and 200x136x72 (partial slab, edge tiles)
// take the 16-byte cp.async path; 40x33x64 mixes them (A by cp.async, B element-wise).
TEST_CASE("gemm.tensor_core: default config on the issue's shapes", "[gemm_tc]") {
  for (auto [m, n, k] : std::vector<std::array<std::string, 3>>{
           {"1", "1", "1"}, {"17", "33", "65"}, {"128", "128", "32"}, {"255", "129", "300"}, {"200", "136", "72"},
           {"40", "33", "64"}}) {
    Run({{"m", m}, {"n", n}, {"k", k}});
  }
  // K = 1024 (32 slabs through the 3-stage ring), both by cp.async: bf16 with N = 136; f16 output, bias and
  // column-major B, whose rows are K long, so that N = 129 leaves its copies 16-byte aligned.
  Run({{"m", "255"}, {"n", "136"}, {"k", "1024"}, {"type", "bf16"}});
  Run({{"m", "255"}, {"n", "129"}, {"k", "1024"}, {"out_type", "f16"}, {"b_layout", "col"}, {"bias", "true"}});
}

// Every type pairing and epilogue, both B layouts, on one edge shape with each copy path; a smaller block keeps
// the emulator quick.
TEST_CASE("gemm.tensor_core: types, outputs, epilogues and layouts", "[gemm_tc]") {
  const Overrides small = {{"block_m", "64"}, {"block_n", "64"}, {"warps_m", "2"}, {"warps_n", "2"}};
  for (std::string type : {"f16", "bf16"}) {
    for (std::string out : {std::string("f32"), type}) {
      for (std::string layout : {"row", "col"}) {
        for (auto [scale, bias] : std::vector<std::pair<std::string, std::string>>{{"true", "false"}, {"false", "true"},
                                                                                   {"true", "true"}}) {
          const Overrides cfg = With(small, {{"type", type}, {"out_type", out}, {"b_layout", layout},
                                             {"scale", scale}, {"bias", bias}});
          Run(With(cfg, {{"m", "70"}, {"n", "72"}, {"k", "88"}}));  // 16-byte copies
          Run(With(cfg, {{"m", "17"}, {"n", "33"}, {"k", "65"}}));  // element-wise copies
        }
      }
    }
  }
}

TEST_CASE("gemm.tensor_core: beta == 0 overwrites NaNs in C without reading them", "[gemm_tc]") {
  absl::StatusOr<kernels::TestProblem> p = Problem({{"beta", "0"}});
  REQUIRE(Msg(p) == "OK");
  CHECK(std::isnan(kernels::AsDoubles(ir::ScalarType::kF32, p->buffers[2].data)[0]));
  Run({{"m", "33"}, {"n", "40"}, {"k", "24"}, {"beta", "0"}, {"block_m", "32"}, {"block_n", "32"}, {"warps_m", "2"},
       {"warps_n", "2"}});
  Run({{"m", "20"}, {"n", "16"}, {"k", "9"}, {"alpha", "0"}, {"beta", "2.0"}, {"block_m", "32"}, {"block_n", "32"},
       {"warps_m", "2"}, {"warps_n", "2"}, {"out_type", "f16"}});
  // Only beta == 0 skips C: a NaN beta reads it and every output is NaN, as in the reference.
  Run({{"m", "20"}, {"n", "16"}, {"k", "9"}, {"beta", "nan"}, {"block_m", "32"}, {"block_n", "32"}, {"warps_m", "2"},
       {"warps_n", "2"}});
}

// Tile shapes, warp grids, block_k 16/64 (other swizzles), 2 and 4 stages, and K up to 1024.
// k = 0: slab 0 is all zero-fill copies, retired by the wait_all after the loop (the emulator reports a thread
// that ends with a copy in flight), and C becomes beta * C (+ bias).
TEST_CASE("gemm.tensor_core: k = 0 scales C", "[gemm_tc]") {
  Run({{"m", "130"}, {"n", "67"}, {"k", "0"}});
  Run({{"m", "17"}, {"n", "33"}, {"k", "0"}, {"bias", "true"}, {"b_layout", "col"}, {"out_type", "f16"}});
  Run({{"m", "5"}, {"n", "9"}, {"k", "0"}, {"beta", "0"}, {"scale", "false"}, {"bias", "true"}});
}

TEST_CASE("gemm.tensor_core: other tile configurations and long K", "[gemm_tc]") {
  struct Case {
    Overrides cfg;
    std::array<std::string, 3> shape;
  };
  for (const Case& c : std::vector<Case>{
           {{{"block_m", "32"}, {"block_n", "32"}, {"warps_m", "2"}, {"warps_n", "2"}}, {"45", "70", "40"}},
           {{{"block_m", "64"}, {"block_n", "64"}, {"block_k", "16"}, {"warps_m", "2"}, {"warps_n", "2"}, {"stages", "4"}},
            {"70", "72", "1024"}},
           {{{"block_m", "64"}, {"block_n", "64"}, {"block_k", "64"}, {"warps_m", "4"}, {"warps_n", "1"}, {"stages", "2"}},
            {"64", "65", "200"}},
           {{{"block_m", "64"}, {"block_n", "128"}, {"warps_m", "1"}, {"warps_n", "8"}, {"b_layout", "col"}},
            {"66", "130", "96"}},
           {{{"block_m", "128"}, {"block_n", "32"}, {"warps_m", "4"}, {"warps_n", "1"}, {"stages", "4"},
             {"type", "bf16"}},
            {"129", "40", "1024"}},
           // A copied element by element (k odd) while row-major B uses cp.async (n % 8 == 0).
           {{{"block_m", "64"}, {"block_n", "64"}, {"warps_m", "2"}, {"warps_n", "2"}}, {"40", "72", "65"}},
           // Element-wise copies into the block_k 16 and 64 swizzles, A and column-major B.
           {{{"block_m", "64"}, {"block_n", "64"}, {"block_k", "16"}, {"warps_m", "2"}, {"warps_n", "2"},
             {"b_layout", "col"}},
            {"33", "50", "77"}},
           {{{"block_m", "64"}, {"block_n", "64"}, {"block_k", "64"}, {"warps_m", "2"}, {"warps_n", "2"},
             {"b_layout", "col"}},
            {"33", "50", "131"}},
           // The deepest ring: 8 stages of 64x64x16.
           {{{"block_m", "64"}, {"block_n", "64"}, {"block_k", "16"}, {"warps_m", "2"}, {"warps_n", "2"}, {"stages", "8"}},
            {"70", "72", "200"}},
       }) {
    Run(With(c.cfg, {{"m", c.shape[0]}, {"n", c.shape[1]}, {"k", c.shape[2]}}));
  }
}

// The XOR swizzle: no ldmatrix (nor element-wise st.shared) meets a bank conflict, for each tile width and layout.
TEST_CASE("gemm.tensor_core: shared memory is free of bank conflicts", "[gemm_tc]") {
  auto emu = runtime::MakeEmulator({.profile = true});
  const kernels::KernelFamily* family = kernels::FindFamily(kFamily);
  for (const Overrides& o : std::vector<Overrides>{
           {{"b_layout", "col"}},
           {{"m", "17"}, {"n", "33"}, {"k", "65"}},
           {{"block_m", "32"}, {"block_n", "32"}, {"warps_m", "2"}, {"warps_n", "2"}, {"m", "32"}, {"n", "32"}},
           {{"block_m", "32"}, {"block_n", "32"}, {"warps_m", "2"}, {"warps_n", "2"}, {"m", "32"}, {"n", "31"},
            {"k", "31"}},
           {{"block_k", "16"}, {"block_n", "64"}, {"block_m", "64"}, {"warps_m", "2"}, {"warps_n", "2"}, {"m", "64"},
            {"n", "64"}},
           {{"block_k", "64"}, {"block_n", "64"}, {"block_m", "64"}, {"warps_m", "2"}, {"warps_n", "2"},
            {"b_layout", "col"}, {"m", "64"}, {"n", "64"}},
       }) {
    absl::StatusOr<kernels::Config> config = family->MakeConfig(o);
    REQUIRE(Msg(config) == "OK");
    absl::StatusOr<ir::Kernel> kernel = family->Build(*config, ir::Target::kSm80);
    REQUIRE(Msg(kernel) == "OK");
    INFO(kernel->name);
    absl::StatusOr<kernels::TestProblem> problem = family->MakeProblem(*config, 3);
    REQUIRE(Msg(problem) == "OK");
    INFO(problem->shape);
    absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(*emu, *kernel, *problem);
    REQUIRE(Msg(result) == "OK");
    CHECK(result->ok());
    const runtime::EmulatorProfile& p = emu->last_profile();
    INFO(p.Table(3));
    CHECK(p.total.shared_requests > 0);
    CHECK(p.total.bank_conflicts() == 0);
  }
}

}  // namespace
}  // namespace ptxforge
