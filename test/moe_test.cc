// Mixture of experts: each of the four kernels against its reference, the
// whole layer (MoeLayer) against the reference layer, and every invalid
// configuration's and argument's message.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

#include "ir/strings.h"
#include "kernels/moe.h"
#include "test/registry_testing.h"

namespace ptxforge {
namespace {

using kernels::MoeConfig;
using testing::Overrides;
using testing::RequireDumpError;
using testing::RunFamilyOnEmulator;

std::string Msg(const absl::Status& s) { return s.ok() ? "OK" : std::string(s.message()); }

constexpr const char* kFamilies[] = {"moe.topk_gating", "moe.permute", "moe.expert_gemm", "moe.unpermute"};

void RunAllStages(const std::vector<Overrides>& cases) {
  auto emu = runtime::MakeEmulator();
  for (const Overrides& overrides : cases) {
    std::string label;
    for (const auto& [k, v] : overrides) StrAppend(&label, k, "=", v, " ");
    INFO(label);
    for (const char* family : kFamilies) {
      INFO(family);
      RunFamilyOnEmulator(family, overrides, *emu);
    }
  }
}

TEST_CASE("each MoE kernel matches its reference") {
  RunAllStages({
      {},                                                                     // E 8, top_k 2, 37 tokens
      {{"type", "f64"}},
      {{"type", "f16"}},
      {{"tokens", "300"}, {"hidden_dim", "40"}, {"expert_dim", "20"}},        // several permute chunks, partial tiles
      {{"capacity_factor", "0.3"}},                                           // drops
      {{"top_k", "1"}},
      {{"num_experts", "4"}, {"top_k", "4"}},                                 // top_k = E
      {{"num_experts", "1"}, {"top_k", "1"}},                                 // E = 1
      {{"logit_levels", "2"}},                                                // ties everywhere
      {{"logit_levels", "3"}, {"type", "f16"}, {"capacity_factor", "0.5"}},
  });
}

// Inputs of a layer: uniform input and weights, logits uniform or integer levels.
struct LayerData {
  kernels::HostBuffer input, logits, w;
};

LayerData MakeLayerData(const MoeConfig& c, uint32_t tokens, uint32_t logit_levels, uint64_t seed) {
  std::mt19937_64 rng(seed);
  LayerData d;
  d.input = kernels::RandomBuffer("input", c.type, size_t{tokens} * c.hidden_dim, rng, -1, 1);
  d.w = kernels::RandomBuffer("w", c.type, size_t{c.num_experts} * c.expert_dim * c.hidden_dim, rng, -1, 1);
  d.logits = kernels::RandomBuffer("logits", c.type, size_t{tokens} * c.num_experts, rng, -4, 4);
  if (logit_levels > 0) {
    std::vector<double> v(size_t{tokens} * c.num_experts);
    for (double& x : v) x = static_cast<double>(rng() % logit_levels);
    d.logits.data = kernels::FromDoubles(c.type, v);
  }
  return d;
}

// Runs MoeLayer on `device`; returns the output bytes.
std::vector<uint8_t> RunLayer(runtime::Device& device, const MoeConfig& c, uint32_t tokens, const LayerData& d) {
  auto input = runtime::Buffer<uint8_t>::FromHost(device, d.input.data);
  auto logits = runtime::Buffer<uint8_t>::FromHost(device, d.logits.data);
  auto w = runtime::Buffer<uint8_t>::FromHost(device, d.w.data);
  REQUIRE((input.ok() && logits.ok() && w.ok()));
  absl::StatusOr<runtime::Buffer<uint8_t>> out = kernels::MoeLayer(device, c, tokens, {*input, *logits, *w});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  absl::StatusOr<std::vector<uint8_t>> bytes = out->ToHost();
  REQUIRE(bytes.ok());
  return *bytes;
}

// The layer on the emulator against MoeLayerReference.
void CheckLayer(const MoeConfig& c, uint32_t tokens, uint32_t logit_levels = 0, bool expect_drops = false) {
  INFO(StrCat("type=", ir::TypeName(c.type), " E=", c.num_experts, " top_k=", c.top_k, " H=", c.hidden_dim,
              " D=", c.expert_dim, " capacity_factor=", c.capacity_factor, " tokens=", tokens,
              " logit_levels=", logit_levels));
  LayerData d = MakeLayerData(c, tokens, logit_levels, 7);
  std::vector<double> x = kernels::AsDoubles(c.type, d.input.data), w = kernels::AsDoubles(c.type, d.w.data);
  std::vector<double> logits = kernels::AsDoubles(c.type, d.logits.data);
  kernels::MoeGating gating = kernels::MoeGatingReference(logits, c);
  kernels::MoePermutation perm = kernels::MoePermuteReference(gating.indices, c, c.Capacity(tokens));
  bool dropped = false;
  for (uint32_t count : perm.counts) dropped |= count > c.Capacity(tokens);
  CHECK(dropped == expect_drops);

  kernels::HostBuffer expected = kernels::ZeroBuffer("output", c.type, size_t{tokens} * c.expert_dim);
  expected.expected = kernels::FromDoubles(c.type, kernels::MoeLayerReference(x, logits, w, c));
  expected.tolerance = c.type == ir::ScalarType::kF32 ? 1e-4 : kernels::DefaultTolerance(c.type);
  // Rounding grows with the sum of |input * w| terms, not with the result.
  std::vector<double> abs_x = x, abs_w = w;
  for (double& v : abs_x) v = std::fabs(v);
  for (double& v : abs_w) v = std::fabs(v);
  for (double m : kernels::MoeLayerReference(abs_x, logits, abs_w, c)) {
    expected.magnitude = std::max(expected.magnitude, m);
  }
  auto emu = runtime::MakeEmulator();
  kernels::Comparison cmp = kernels::CompareOutput(expected, RunLayer(*emu, c, tokens, d));
  INFO(cmp.first_mismatch << " max rel error " << cmp.max_rel_error);
  CHECK(cmp.ok());
}

TEST_CASE("the MoE layer matches the reference layer") {
  CheckLayer({}, 37);
  CheckLayer({.type = ir::ScalarType::kF64}, 37);
  CheckLayer({.type = ir::ScalarType::kF16}, 37);
  CheckLayer({.capacity_factor = 0.4}, 37, 0, /*expect_drops=*/true);
  CheckLayer({.type = ir::ScalarType::kF16, .capacity_factor = 0.4}, 50, 0, true);
  CheckLayer({.top_k = 1}, 37, 0, true);
  CheckLayer({.top_k = 1, .capacity_factor = 8}, 37);
  CheckLayer({.num_experts = 4, .top_k = 4, .hidden_dim = 33, .expert_dim = 17}, 29);
  CheckLayer({.num_experts = 1, .top_k = 1, .hidden_dim = 16, .expert_dim = 16}, 20);
  CheckLayer({.num_experts = 4, .top_k = 2, .capacity_factor = 4}, 40, /*logit_levels=*/2);  // tied logits
  CheckLayer({.num_experts = 4, .top_k = 2}, 40, 2, true);
  CheckLayer({.num_experts = 4, .top_k = 2, .capacity_factor = 0.5}, 40, 2, true);
}

TEST_CASE("the MoE layer output is bit-identical under every block and warp order") {
  // Drops and ties: which assignments are kept must not depend on the order.
  for (auto [c, tokens, levels] : {std::tuple{MoeConfig{.capacity_factor = 0.5}, 300u, 0u},
                                   std::tuple{MoeConfig{.num_experts = 4, .top_k = 2, .capacity_factor = 0.6}, 90u, 2u},
                                   std::tuple{MoeConfig{.type = ir::ScalarType::kF16, .top_k = 3}, 40u, 0u}}) {
    INFO("type " << ir::TypeName(c.type) << " tokens " << tokens);
    LayerData d = MakeLayerData(c, tokens, levels, 3);
    auto in_order = runtime::MakeEmulator();
    const std::vector<uint8_t> expected = RunLayer(*in_order, c, tokens, d);
    for (uint64_t seed : {1, 2, 3, 4}) {
      INFO("schedule_seed " << seed);
      auto shuffled = runtime::MakeEmulator({.schedule_seed = seed});
      CHECK(RunLayer(*shuffled, c, tokens, d) == expected);
    }
  }
}

TEST_CASE("gating ties go to the lower index and the weights split evenly") {
  MoeConfig c{.num_experts = 4, .top_k = 2};
  std::vector<double> logits = {1, 3, 3, 3, 2, 2, 2, 2};  // two tokens
  kernels::MoeGating g = kernels::MoeGatingReference(logits, c);
  CHECK(g.indices == std::vector<uint32_t>{1, 2, 0, 1});
  CHECK(g.weights == std::vector<double>{0.5, 0.5, 0.5, 0.5});
  kernels::MoePermutation p = kernels::MoePermuteReference(g.indices, c, 1);
  CHECK(p.counts == std::vector<uint32_t>{1, 2, 1, 0});
  CHECK(p.slot_of == std::vector<uint32_t>{0, 0, 0, 0xFFFFFFFFu});  // token 1's expert 1 is over capacity
  CHECK(p.token_ids == std::vector<uint32_t>{1, 0, 0, 0});
}

TEST_CASE("invalid MoE configurations and MoeLayer arguments are one-line errors") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto check = [](MoeConfig c, const std::string& message) {
    CHECK(Msg(c.Validate()) == message);
    CHECK(Msg(kernels::MoeExpertGemmSpec{c}.Build(ir::Target::kSm80).status()) == message);
  };
  check({.type = ir::ScalarType::kBF16}, "moe: type bf16 is not supported (f16, f32, f64)");
  check({.num_experts = 0}, "moe: num_experts=0 must be in 1..1024");
  check({.num_experts = 2000}, "moe: num_experts=2000 must be in 1..1024");
  check({.top_k = 0}, "moe: top_k=0 must be in 1..num_experts=8");
  check({.top_k = 9}, "moe: top_k=9 must be in 1..num_experts=8");
  check({.hidden_dim = 0}, "moe: hidden_dim=0 must be in 1..65536");
  check({.expert_dim = 0}, "moe: expert_dim=0 must be in 1..65536");
  check({.capacity_factor = 0}, "moe: capacity_factor=0 must be positive and finite");
  check({.capacity_factor = -1}, "moe: capacity_factor=-1 must be positive and finite");
  check({.capacity_factor = nan}, "moe: capacity_factor=nan must be positive and finite");
  check({.capacity_factor = std::numeric_limits<double>::infinity()},
        "moe: capacity_factor=inf must be positive and finite");

  auto emu = runtime::MakeEmulator();
  MoeConfig c;
  LayerData d = MakeLayerData(c, 4, 0, 1);
  auto input = runtime::Buffer<uint8_t>::FromHost(*emu, d.input.data);
  auto logits = runtime::Buffer<uint8_t>::FromHost(*emu, d.logits.data);
  auto w = runtime::Buffer<uint8_t>::FromHost(*emu, d.w.data);
  REQUIRE((input.ok() && logits.ok() && w.ok()));
  kernels::MoeLayerInputs in{*input, *logits, *w};
  CHECK(Msg(kernels::MoeLayer(*emu, c, 4, in).status()) == "OK");
  CHECK(Msg(kernels::MoeLayer(*emu, {.capacity_factor = nan}, 4, in).status()) ==
        "moe: capacity_factor=nan must be positive and finite");
  CHECK(Msg(kernels::MoeLayer(*emu, {.capacity_factor = 0}, 4, in).status()) ==
        "moe: capacity_factor=0 must be positive and finite");
  CHECK(Msg(kernels::MoeLayer(*emu, c, 0, in).status()) == "MoeLayer: tokens=0 must be positive");
  CHECK(Msg(kernels::MoeLayer(*emu, c, 5, in).status()) ==
        "MoeLayer: input holds 1024 bytes; tokens=5 x hidden_dim=64 = 320 f32 elements need 1280");
  CHECK(Msg(kernels::MoeLayer(*emu, c, 4, {*input, *input, *w}).status()) ==
        "MoeLayer: logits holds 1024 bytes; tokens=4 x num_experts=8 = 32 f32 elements need 128");
  CHECK(Msg(kernels::MoeLayer(*emu, c, 4, {*input, *logits, *input}).status()) ==
        "MoeLayer: w holds 1024 bytes; num_experts=8 x expert_dim=32 x hidden_dim=64 = 16384 f32 elements need 65536");
}

TEST_CASE("invalid MoE configurations through ptx-dump --set") {
  for (const char* family : kFamilies) {
    INFO(family);
    RequireDumpError(family, {{"top_k", "9"}}, "moe: top_k=9 must be in 1..num_experts=8");
    RequireDumpError(family, {{"capacity_factor", "0"}}, "moe: capacity_factor=0 must be positive and finite");
    RequireDumpError(family, {{"capacity_factor", "nan"}}, "moe: capacity_factor=nan must be positive and finite");
    RequireDumpError(family, {{"num_experts", "0"}}, "moe: num_experts=0 must be in 1..1024");
    RequireDumpError(family, {{"type", "bf16"}}, StrCat(family, ": type=bf16 is not supported; choose one of f16, f32, f64"));
  }
}

TEST_CASE("ptx-dump sets every MoE field and runs each kernel on the emulator") {
  for (const char* family : kFamilies) {
    testing::DumpResult r = testing::PtxDump({family, "--run=emulator", "--set", "type=f64", "--set", "num_experts=5",
                                              "--set", "top_k=3", "--set", "hidden_dim=24", "--set", "expert_dim=12",
                                              "--set", "capacity_factor=0.7", "--set", "tokens=21", "--set",
                                              "logit_levels=3"});
    INFO(family << "\n" << r.err << r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("tokens=21 capacity=9") != std::string::npos);  // ceil(0.7 * 21 * 3 / 5)
    CHECK(r.out.find("mismatches") == std::string::npos);
  }
}

TEST_CASE("MoE kernel names encode what each kernel depends on") {
  MoeConfig c{.type = ir::ScalarType::kF16, .num_experts = 16, .top_k = 4, .hidden_dim = 128, .expert_dim = 256};
  CHECK(kernels::MoeTopkGatingSpec{c}.KernelName() == "moe_topk_gating_f16_e16_k4");
  CHECK(kernels::MoePermuteSpec{c}.KernelName() == "moe_permute_k4");
  CHECK(kernels::MoeExpertGemmSpec{c}.KernelName() == "moe_expert_gemm_f16_h128_d256");
  CHECK(kernels::MoeUnpermuteSpec{c}.KernelName() == "moe_unpermute_f16_k4_d256");
  CHECK(c.Capacity(100) == 32);  // ceil(1.25 * 100 * 4 / 16) = 31.25 -> 32
}

}  // namespace
}  // namespace ptxforge
