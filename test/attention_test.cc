// attention: numerics on the emulator against the double-precision reference
// (awkward seq_len, head_dim, causal, grouped-query, every type), the work
// causal masking skips, and every invalid configuration's message.
#include <catch2/catch.hpp>

#include <cmath>

#include "ir/strings.h"
#include "kernels/attention.h"
#include "test/registry_testing.h"

namespace ptxforge {
namespace {

using testing::Overrides;
using testing::RequireDumpError;
using testing::RunFamilyOnEmulator;

std::string Msg(const absl::Status& s) { return s.ok() ? "OK" : std::string(s.message()); }

void RunCases(const std::vector<Overrides>& cases) {
  auto emu = runtime::MakeEmulator();
  for (const Overrides& overrides : cases) {
    std::string label;
    for (const auto& [k, v] : overrides) StrAppend(&label, k, "=", v, " ");
    INFO(label);
    RunFamilyOnEmulator("attention", overrides, *emu);
  }
}

TEST_CASE("attention matches the reference for every seq_len, causal or not (head_dim 16, kv_heads < heads)") {
  std::vector<Overrides> cases;
  for (const char* seq_len : {"1", "7", "64", "65", "200"}) {
    for (const char* causal : {"false", "true"}) {
      cases.push_back({{"head_dim", "16"}, {"heads", "2"}, {"kv_heads", "1"}, {"seq_len", seq_len}, {"causal", causal}});
    }
  }
  RunCases(cases);
}

TEST_CASE("attention with head_dim 64 and 128: several threads per row, batch and heads on grid.y") {
  RunCases({
      {{"batch", "2"}, {"seq_len", "65"}},                                      // heads 4, kv_heads 2
      {{"batch", "2"}, {"seq_len", "65"}, {"causal", "true"}},
      {{"head_dim", "128"}, {"heads", "2"}, {"kv_heads", "2"}, {"seq_len", "64"}},
      {{"head_dim", "128"}, {"heads", "2"}, {"kv_heads", "1"}, {"seq_len", "65"}, {"causal", "true"}, {"block", "32"}},
      {{"head_dim", "64"}, {"heads", "1"}, {"kv_heads", "1"}, {"seq_len", "200"}, {"causal", "true"}, {"block", "16"}},
  });
}

TEST_CASE("attention with blocks smaller than a warp and odd tile edges") {
  RunCases({
      {{"head_dim", "64"}, {"block", "2"}, {"seq_len", "7"}, {"causal", "true"}},   // 8 threads, shuffles in a part-warp
      {{"head_dim", "1"}, {"block", "1"}, {"heads", "1"}, {"kv_heads", "1"}, {"seq_len", "7"}},
      {{"head_dim", "32"}, {"block", "8"}, {"heads", "3"}, {"kv_heads", "3"}, {"seq_len", "33"}, {"causal", "true"}},
  });
}

TEST_CASE("attention in f64, f16 and bf16") {
  RunCases({
      {{"type", "f64"}, {"head_dim", "16"}, {"seq_len", "65"}, {"heads", "2"}, {"kv_heads", "1"}},
      {{"type", "f64"}, {"head_dim", "64"}, {"seq_len", "65"}, {"causal", "true"}, {"heads", "2"}},
      {{"type", "f64"}, {"head_dim", "128"}, {"seq_len", "7"}, {"heads", "2"}, {"kv_heads", "1"}, {"block", "32"}},
      {{"type", "f16"}, {"seq_len", "65"}},
      {{"type", "f16"}, {"head_dim", "128"}, {"seq_len", "7"}, {"causal", "true"}, {"heads", "2"}},
      {{"type", "bf16"}, {"seq_len", "65"}, {"causal", "true"}},
      {{"type", "bf16"}, {"head_dim", "16"}, {"seq_len", "200"}, {"heads", "2"}, {"kv_heads", "1"}},
  });
}

TEST_CASE("causal attention skips the masked tiles: at most 0.6x the instructions at seq_len 256") {
  auto emu = runtime::MakeEmulator();
  const Overrides shape = {{"heads", "1"}, {"kv_heads", "1"}, {"seq_len", "256"}};  // head_dim 64, block 64
  Overrides causal = shape;
  causal.push_back({"causal", "true"});
  const uint64_t full = RunFamilyOnEmulator("attention", shape, *emu).instructions;
  const uint64_t masked = RunFamilyOnEmulator("attention", causal, *emu).instructions;
  INFO("causal " << masked << " vs full " << full);
  CHECK(masked <= 0.6 * static_cast<double>(full));
  CHECK(masked >= 0.4 * static_cast<double>(full));  // still does the lower triangle
}

TEST_CASE("the reference: grouped-query heads read their shared K/V head, causal rows ignore later keys") {
  kernels::AttentionSpec spec{.head_dim = 1, .block = 1, .heads = 2, .kv_heads = 1};
  // Two query heads, two positions, one K/V head: keys 0 and 1 with values 10 and 20.
  std::vector<double> q = {0, 0, 1, 1}, k = {0, 1}, v = {10, 20};
  std::vector<double> o = kernels::AttentionReference(q, k, v, spec, 2, 1.0);
  const double w = std::exp(1.0) / (1 + std::exp(1.0));  // weight of key 1 for q = 1
  REQUIRE(o.size() == 4);
  CHECK(o[0] == Approx(15));
  CHECK(o[1] == Approx(15));
  CHECK(o[2] == Approx(10 * (1 - w) + 20 * w));
  spec.causal = true;
  o = kernels::AttentionReference(q, k, v, spec, 2, 1.0);
  CHECK(o[0] == Approx(10));
  CHECK(o[2] == Approx(10));
  CHECK(o[3] == Approx(10 * (1 - w) + 20 * w));
}

TEST_CASE("attention names its kernels after the configuration") {
  kernels::AttentionSpec spec;
  CHECK(spec.KernelName() == "attention_f32_d64_b64_h4_kv2");
  spec = {.type = ir::ScalarType::kBF16, .head_dim = 128, .block = 32, .causal = true, .heads = 8, .kv_heads = 8};
  CHECK(spec.KernelName() == "attention_bf16_d128_b32_h8_kv8_causal");
  CHECK(spec.Threads() == 256);
  CHECK(spec.SharedBytes() == 2 * 32 * 128 * 4);
  CHECK(spec.Grid(65, 3) == std::array<uint32_t, 3>{3, 24, 1});
}

TEST_CASE("invalid attention configurations are one-line errors (API)") {
  using kernels::AttentionSpec;
  auto check = [](AttentionSpec spec, const std::string& message, ir::Target target = ir::Target::kSm80) {
    INFO(spec.KernelName());
    CHECK(Msg(spec.Build(target).status()) == message);
  };
  check({.type = ir::ScalarType::kS32}, "attention: type s32 is not supported (f32, f64, f16, bf16)");
  check({.head_dim = 96}, "attention: head_dim=96 must be a power of two in 1..256");
  check({.head_dim = 512}, "attention: head_dim=512 must be a power of two in 1..256");
  check({.head_dim = 0}, "attention: head_dim=0 must be a power of two in 1..256");
  check({.block = 48}, "attention: block=48 must be a power of two in 1..256");
  check({.block = 512}, "attention: block=512 must be a power of two in 1..256");
  check({.heads = 0}, "attention: heads=0 must be positive");
  check({.heads = 4, .kv_heads = 3}, "attention: kv_heads=3 must be a positive divisor of heads=4");
  check({.heads = 4, .kv_heads = 0}, "attention: kv_heads=0 must be a positive divisor of heads=4");
  check({.head_dim = 256, .block = 128}, "attention: block=128 with head_dim=256 needs 2048 threads per block (at most 1024)");
  check({.head_dim = 256, .block = 64}, "attention: block=64 and head_dim=256 (f32) need 131072 bytes of shared memory per block; sm_86 allows at most 101376",
        ir::Target::kSm86);
  CHECK(Msg(AttentionSpec{.head_dim = 256, .block = 64}.Build(ir::Target::kSm80).status()) == "OK");
  check({.type = ir::ScalarType::kF64, .head_dim = 128, .block = 128},
        "attention: block=128 and head_dim=128 (f64) need 262144 bytes of shared memory per block; sm_90 allows at most 232448",
        ir::Target::kSm90);
  check({.type = ir::ScalarType::kBF16}, "attention: bf16 needs sm_80 or newer (target sm_75)", ir::Target::kSm75);
}

TEST_CASE("invalid attention configurations are one-line errors (ptx-dump --set)") {
  RequireDumpError("attention", {{"type", "s32"}}, "attention: type=s32 is not supported; choose one of f32, f64, f16, bf16");
  RequireDumpError("attention", {{"head_dim", "96"}}, "attention: head_dim=96 must be a power of two in 1..256");
  RequireDumpError("attention", {{"block", "48"}}, "attention: block=48 must be a power of two in 1..256");
  RequireDumpError("attention", {{"kv_heads", "3"}}, "attention: kv_heads=3 must be a positive divisor of heads=4");
  RequireDumpError("attention", {{"causal", "maybe"}}, "attention: causal=maybe is not a boolean (true/false, 1/0)");
  RequireDumpError("attention", {{"head_dim", "256"}, {"block", "128"}},
                   "attention: block=128 with head_dim=256 needs 2048 threads per block (at most 1024)");
  testing::DumpResult r = testing::PtxDump({"attention", "--target=sm_86", "--set", "head_dim=256"});
  CHECK(r.code == 1);
  CHECK(r.err ==
        "ptx-dump: attention: block=64 and head_dim=256 (f32) need 131072 bytes of shared memory per block; sm_86 "
        "allows at most 101376\n");
}

TEST_CASE("ptx-dump sets every attention field and runs it on the emulator") {
  testing::DumpResult r = testing::PtxDump({"attention", "--run=emulator", "--set", "head_dim=128", "--set",
                                            "causal=true", "--set", "seq_len=65", "--set", "heads=2", "--set",
                                            "kv_heads=1", "--set", "block=32", "--set", "batch=2", "--set",
                                            "scale=0.088", "--set", "type=f16"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("attention_f16_d128_b32_h2_kv1_causal") != std::string::npos);
  CHECK(r.out.find("batch=2 seq_len=65 scale=0.088") != std::string::npos);
  CHECK(r.out.find("o: 33280 elements") != std::string::npos);
}

}  // namespace
}  // namespace ptxforge
