// Every valid tile/type setting of lstm.cell, nf4.gemm and nf4.gemm_transpose
// assembles with ptxas -v for every target with 0 spill bytes.
#include <catch2/catch.hpp>


#include "passes/pass.h"
#include "test/ptxas_testing.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using testing::Msg;
using Overrides = std::vector<std::pair<std::string, std::string>>;

// The family's kernels for every combination of `values` of `keys` that validates.
void AddKernels(ir::Module& module, std::string_view name, const std::vector<std::string>& keys,
                const std::vector<std::vector<std::string>>& values, size_t* rejected) {
  const kernels::KernelFamily* family = kernels::FindFamily(name);
  REQUIRE(family != nullptr);
  std::vector<size_t> at(keys.size(), 0);
  while (true) {
    Overrides set;
    for (size_t i = 0; i < keys.size(); ++i) set.emplace_back(keys[i], values[i][at[i]]);
    absl::StatusOr<kernels::Config> config = family->MakeConfig(set);
    REQUIRE(Msg(config) == "OK");
    absl::StatusOr<ir::Kernel> kernel = family->Build(*config, module.target);
    if (kernel.ok()) {
      REQUIRE(Msg(passes::Pipeline::Standard().Run(*kernel)) == "OK");
      module.kernels.push_back(*std::move(kernel));
    } else {
      ++*rejected;  // e.g. tiles needing more than 48 KiB of shared memory
    }
    size_t i = 0;
    while (i < keys.size() && ++at[i] == values[i].size()) at[i++] = 0;
    if (i == keys.size()) break;
  }
}

TEST_CASE("LSTM and NF4 kernels assemble with 0 spill bytes on every target", "[ptxas]") {
  std::optional<std::string> ptxas = testing::PtxasOrSkip();
  if (!ptxas) return;
  for (const ir::TargetInfo& target : ir::AllTargets()) {
    INFO("target " << target.name);
    ir::Module module;
    module.target = target.target;
    size_t rejected = 0;
    AddKernels(module, "lstm.cell", {"type", "batch_tile"}, {{"f32", "f64"}, {"4", "8", "16", "32"}}, &rejected);
    const std::vector<std::string> tiles = {"16", "32", "64", "128"};
    AddKernels(module, "nf4.gemm", {"tile_m", "tile_n"}, {tiles, tiles}, &rejected);
    AddKernels(module, "nf4.gemm_transpose", {"tile_m", "tile_n"}, {tiles, {"16", "32", "64"}}, &rejected);
    CHECK(module.kernels.size() == 8 + 13 + 9);
    CHECK(rejected == 3 + 3);
    testing::CheckAssemblesWithoutSpills(*ptxas, module);
  }
}

}  // namespace
}  // namespace ptxforge
