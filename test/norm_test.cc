// layernorm and rmsnorm (issue 10): configuration errors through the API and
// ptx-dump --set, emulator numerics (y and the per-row statistics) on awkward
// shapes with the approximate instructions at their documented worst error
// and race checking on, and Welford's accuracy on rows far from zero.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/norm.h"
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

TEST_CASE("layernorm / rmsnorm: bad configurations", "[norm]") {
  for (auto [kind, name] : {std::pair{kernels::NormKind::kLayerNorm, std::string("layernorm")},
                            std::pair{kernels::NormKind::kRmsNorm, std::string("rmsnorm")}}) {
    kernels::NormSpec spec{.kind = kind};
    spec.type = ir::ScalarType::kF64;
    CHECK(Msg(spec.Validate()) == name + ": type f64 is not supported (f16, bf16, f32)");
    spec.type = ir::ScalarType::kF32;
    spec.block = 100;
    CHECK(Msg(spec.Build(ir::Target::kSm80)) == name + ": block=100 must be a multiple of 32 in 32..1024");
    spec.block = 2048;
    CHECK(Msg(spec.Build(ir::Target::kSm80)) == name + ": block=2048 must be a multiple of 32 in 32..1024");
    spec.block = 128;
    spec.type = ir::ScalarType::kBF16;
    CHECK(Msg(spec.Build(ir::Target::kSm75)) ==
          name + ": bf16 needs sm_80 or newer (cvt between bf16 and f32), not sm_75");
    CHECK(Msg(spec.Build(ir::Target::kSm80)) == "OK");

    CHECK(testing::DumpUsageError(name, {{"block", "48"}}) == "ptx-dump: " + name + ": block=48 must be a multiple of 32 in 32..1024\n");
    CHECK(testing::DumpUsageError(name, {{"block", "0"}}) == "ptx-dump: " + name + ": block=0 must be a multiple of 32 in 32..1024\n");
    CHECK(testing::DumpUsageError(name, {{"type", "u32"}}) ==
          "ptx-dump: " + name + ": type=u32 is not supported; choose one of f16, bf16, f32\n");
    CHECK(testing::DumpUsageError(name, {{"stats", "maybe"}}) ==
          "ptx-dump: " + name + ": stats=maybe is not a boolean (true/false, 1/0)\n");
    CHECK(testing::DumpUsageError(name, {{"eps", "small"}}) == "ptx-dump: " + name + ": eps=small is not a number\n");
    // The test shape is checked when the problem is made (--run).
    for (std::string key : {"rows", "cols", "grid"}) {
      CHECK(testing::DumpUsageError(name, {{key, "0"}}, true) == "ptx-dump: " + name + ": " + key + "=0 must be at least 1\n");
    }
    CHECK(testing::DumpUsageError(name, {{"eps", "-1"}}, true) == "ptx-dump: " + name + ": eps=-1 must be a finite number >= 0\n");
    CHECK(testing::DumpUsageError(name, {{"eps", "inf"}}, true) == "ptx-dump: " + name + ": eps=inf must be a finite number >= 0\n");
    CHECK(testing::DumpUsageError(name, {{"rows", "65536"}, {"cols", "65536"}}, true) ==
          "ptx-dump: " + name + ": rows=65536 cols=65536 grid=3 eps=1e-05 needs more than the 1073741824 bytes of test "
          "data a problem may use\n");
  }
}

TEST_CASE("layernorm / rmsnorm: kernel names and params", "[norm]") {
  kernels::NormSpec ln{.type = ir::ScalarType::kBF16, .block = 128, .stats = true};
  absl::StatusOr<ir::Kernel> k = ln.Build(ir::Target::kSm90);
  REQUIRE(Msg(k) == "OK");
  CHECK(k->name == "layernorm_bf16_b128_stats");
  std::vector<std::string> params;
  for (const auto& p : k->params) params.push_back(p.name);
  CHECK(params == std::vector<std::string>{"x", "weight", "bias", "y", "mean", "rstd", "rows", "cols", "eps"});
  kernels::NormSpec rms{.kind = kernels::NormKind::kRmsNorm, .type = ir::ScalarType::kF16, .block = 64};
  k = rms.Build(ir::Target::kSm75);
  REQUIRE(Msg(k) == "OK");
  CHECK(k->name == "rmsnorm_f16_b64");
  params.clear();
  for (const auto& p : k->params) params.push_back(p.name);
  CHECK(params == std::vector<std::string>{"x", "weight", "y", "rows", "cols", "eps"});
}

TEST_CASE("layernorm / rmsnorm: short, awkward and long rows, any grid, with statistics", "[norm]") {
  for (std::string family : {"layernorm", "rmsnorm"}) {
    for (std::string type : {"f32", "f16", "bf16"}) {
      for (auto [rows, cols] : std::vector<std::pair<std::string, std::string>>{
               {"3", "1"}, {"4", "2"}, {"3", "31"}, {"5", "33"}, {"2", "97"}, {"2", "1000"}, {"2", "4097"}}) {
        for (std::string block : {"32", "96", "128"}) {
          testing::RunFamilyOnEmulator(family, {{"type", type}, {"rows", rows}, {"cols", cols}, {"grid", "2"}, {"block", block},
                                 {"stats", "true"}});
        }
      }
      // More blocks than rows; the default (no statistics); eps 0 and a large eps.
      testing::RunFamilyOnEmulator(family, {{"type", type}, {"rows", "3"}, {"cols", "50"}, {"grid", "5"}, {"block", "64"}});
      testing::RunFamilyOnEmulator(family, {{"type", type}, {"rows", "2"}, {"cols", "77"}, {"eps", "0"}, {"stats", "true"}});
      testing::RunFamilyOnEmulator(family, {{"type", type}, {"rows", "2"}, {"cols", "77"}, {"eps", "0.5"}, {"stats", "true"}});
      // A block of 1024 threads: more threads than columns, and a row of 64 Ki.
      testing::RunFamilyOnEmulator(family, {{"type", type}, {"rows", "3"}, {"cols", "300"}, {"grid", "2"}, {"block", "1024"},
                             {"stats", "true"}});
    }
    testing::RunFamilyOnEmulator(family, {{"rows", "1"}, {"cols", "65536"}, {"grid", "1"}, {"block", "1024"}, {"stats", "true"}});
    testing::RunFamilyOnEmulator(family, {{"rows", "1"}, {"cols", "65537"}, {"grid", "1"}, {"block", "32"}, {"stats", "true"}});
  }
}

// Rows of 1000 + U(-1, 1) in f32: E[x^2] - E[x]^2 would lose every digit of the
// variance (1/3) to cancellation (1e6 - 1e6 at f32's 6e-8); Welford keeps it.
TEST_CASE("layernorm: Welford keeps the variance of rows far from zero", "[norm]") {
  constexpr uint32_t rows = 3, cols = 5003;
  kernels::NormSpec spec{.block = 256, .stats = true};
  absl::StatusOr<ir::Kernel> k = spec.Build(ir::Target::kSm80);
  REQUIRE(Msg(k) == "OK");
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(size_t{rows} * cols), w(cols, 1.0f), bias(cols, 0.0f);
  for (float& v : x) v = 1000.0f + dist(rng);
  auto emu = runtime::MakeEmulator({.approx_worst_error = true, .race_check = true});
  auto xb = runtime::Buffer<float>::FromHost(*emu, x);
  auto wb = runtime::Buffer<float>::FromHost(*emu, w);
  auto bb = runtime::Buffer<float>::FromHost(*emu, bias);
  auto yb = runtime::Buffer<float>::FromHost(*emu, std::vector<float>(x.size()));
  auto mb = runtime::Buffer<float>::FromHost(*emu, std::vector<float>(rows));
  auto rb = runtime::Buffer<float>::FromHost(*emu, std::vector<float>(rows));
  auto loaded = emu->Load(*k);
  REQUIRE(loaded.ok());
  REQUIRE(emu->Launch(**loaded, {.grid = {2}, .block = {256}}, {*xb, *wb, *bb, *yb, *mb, *rb, rows, cols, 1e-5f}).ok());
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end()), bd(bias.begin(), bias.end()), mean, rstd;
  std::vector<double> ref = kernels::LayerNormReference(xd, wd, bd, rows, cols, 1e-5, &mean, &rstd);
  std::vector<float> y = *yb->ToHost(), m = *mb->ToHost(), r = *rb->ToHost();
  // f32 inputs near 1000 are 2^-14 apart; the mean's rounding (a few 6e-5) moves
  // x - mean by a few 1e-4 of the unit-scale output, and the variance by less.
  double worst_y = 0;
  for (size_t i = 0; i < y.size(); ++i) worst_y = std::max(worst_y, std::abs(y[i] - ref[i]));
  CHECK(worst_y < 1e-3);
  for (uint32_t i = 0; i < rows; ++i) {
    CHECK(std::abs(m[i] - mean[i]) < 1e-3);
    CHECK(std::abs(r[i] - rstd[i]) / rstd[i] < 1e-4);
  }
}

}  // namespace
}  // namespace ptxforge
