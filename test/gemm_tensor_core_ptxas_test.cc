// gemm.tensor_core (issue 9 part 3): the configurations the emulator tests
// run assemble with ptxas -v on every target from sm_80 on with 0 spill
// bytes, and the family is refused below sm_80.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "kernels/registry.h"
#include "passes/pass.h"
#include "test/ptxas_testing.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using testing::Msg;
using Overrides = std::vector<std::pair<std::string, std::string>>;

constexpr const char* kFamily = "gemm.tensor_core";

// Every configuration gemm_tensor_core_test runs, and the largest warp tile (64x64: 128 accumulators per thread), assemble
// with 0 spill bytes on every portable target from sm_80 on; below sm_80 the family is refused.
TEST_CASE("gemm.tensor_core: tested configurations assemble with 0 spill bytes", "[ptxas]") {
  std::optional<std::string> ptxas = testing::PtxasOrSkip();
  if (!ptxas) return;
  const kernels::KernelFamily* family = kernels::FindFamily(kFamily);
  std::vector<Overrides> configs = {
      {},
      {{"b_layout", "col"}, {"bias", "true"}},
      {{"type", "bf16"}, {"out_type", "bf16"}, {"scale", "false"}},
      {{"warps_m", "2"}, {"warps_n", "2"}},
      {{"block_m", "32"}, {"block_n", "32"}, {"warps_m", "2"}, {"warps_n", "2"}},
      {{"block_m", "64"}, {"block_n", "64"}, {"block_k", "16"}, {"warps_m", "2"}, {"warps_n", "2"}, {"stages", "4"}},
      {{"block_m", "64"}, {"block_n", "64"}, {"block_k", "64"}, {"warps_m", "4"}, {"warps_n", "1"}, {"stages", "2"}},
      {{"block_m", "64"}, {"block_n", "128"}, {"warps_m", "1"}, {"warps_n", "8"}, {"b_layout", "col"}},
      {{"block_m", "128"}, {"block_n", "32"}, {"warps_m", "4"}, {"warps_n", "1"}, {"stages", "4"}, {"type", "bf16"}},
  };
  for (std::string type : {"f16", "bf16"}) {
    for (std::string out : {std::string("f32"), type}) {
      for (std::string layout : {"row", "col"}) {
        configs.push_back({{"block_m", "64"}, {"block_n", "64"}, {"warps_m", "2"}, {"warps_n", "2"}, {"type", type},
                           {"out_type", out}, {"b_layout", layout}, {"bias", "true"}});
      }
    }
  }
  for (const ir::TargetInfo& target : ir::AllTargets()) {
    if (target.arch_specific) continue;  // the same PTX as the portable target (the registry-wide test covers them)
    INFO("target " << target.name);
    if (!ir::TargetSatisfies(target.target, family->requirement())) {
      absl::StatusOr<kernels::Config> config = family->MakeConfig();
      REQUIRE(Msg(config) == "OK");
      CHECK(Msg(family->Build(*config, target.target)) ==
            StrCat("gemm.tensor_core: needs sm_80 or newer (cp.async, mma.sync m16n8k16), not ", target.name));
      continue;
    }
    ir::Module module;
    module.target = target.target;
    for (const Overrides& o : configs) {
      absl::StatusOr<kernels::Config> config = family->MakeConfig(o);
      REQUIRE(Msg(config) == "OK");
      absl::StatusOr<ir::Kernel> kernel = family->Build(*config, target.target);
      REQUIRE(Msg(kernel) == "OK");
      REQUIRE(Msg(passes::Pipeline::Standard().Run(*kernel)) == "OK");
      module.kernels.push_back(*std::move(kernel));
    }
    testing::CheckAssemblesWithoutSpills(*ptxas, module);
  }
}

}  // namespace
}  // namespace ptxforge
