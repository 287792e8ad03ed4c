// The core kernels (issue 10): configuration errors through the API and
// ptx-dump --set, and emulator numerics on awkward shapes with the
// approximate instructions at their documented worst error.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/problem_runner.h"
#include "kernels/softmax.h"
#include "kernels/transpose.h"
#include "kernels/registry.h"
#include "runtime/emulator.h"
#include "test/family_testing.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge {
namespace {

using testing::Overrides;
using testing::Msg;

TEST_CASE("elementwise: bad configurations", "[core_kernels]") {
  kernels::ElementwiseSpec spec;
  spec.type = ir::ScalarType::kF64;
  CHECK(Msg(spec.Validate()) == "elementwise: type f64 is not supported (f16, bf16, f32)");
  spec.type = ir::ScalarType::kF32;
  spec.block = 16;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "elementwise: block=16 must be in 32..1024");
  spec.block = 256;
  spec.type = ir::ScalarType::kBF16;
  CHECK(Msg(spec.Build(ir::Target::kSm75)) ==
        "elementwise: bf16 needs sm_80 or newer (cvt between bf16 and f32), not sm_75");
  CHECK(testing::DumpUsageError("elementwise", {{"op", "div"}}) ==
        "ptx-dump: elementwise: op=div is not supported; choose one of copy, add, sub, mul\n");
  CHECK(testing::DumpUsageError("elementwise", {{"act", "tanh"}}) ==
        "ptx-dump: elementwise: act=tanh is not supported; choose one of none, relu, gelu, gelu_tanh, silu, sigmoid\n");
  CHECK(testing::DumpUsageError("elementwise", {{"type", "f64"}}) ==
        "ptx-dump: elementwise: type=f64 is not supported; choose one of f16, bf16, f32\n");
  CHECK(testing::DumpUsageError("elementwise", {{"block", "2048"}}) == "ptx-dump: elementwise: block=2048 must be in 32..1024\n");
}

TEST_CASE("elementwise: every op, activation and type on awkward sizes", "[core_kernels]") {
  for (std::string type : {"f32", "f16", "bf16"}) {
    for (std::string op : {"copy", "add", "sub", "mul"}) {
      for (std::string act : {"none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid"}) {
        testing::RunFamilyOnEmulator("elementwise", {{"type", type}, {"op", op}, {"act", act}, {"n", "45"}, {"grid", "1"}, {"block", "32"}});
      }
    }
    for (std::string n : {"1", "7", "8", "9", "1003", "4100"}) {
      testing::RunFamilyOnEmulator("elementwise", {{"type", type}, {"n", n}, {"grid", "2"}, {"block", "64"}});
    }
  }
}

TEST_CASE("elementwise: unaligned pointers take the one-element path", "[core_kernels]") {
  kernels::ElementwiseSpec spec{.type = ir::ScalarType::kF32, .op = kernels::ElementwiseOp::kMul,
                                .act = kernels::Activation::kRelu};
  absl::StatusOr<ir::Kernel> k = spec.Build(ir::Target::kSm80);
  REQUIRE(Msg(k) == "OK");
  constexpr uint32_t n = 37;
  std::vector<float> a(n + 1), b(n + 1);
  for (uint32_t i = 0; i <= n; ++i) {
    a[i] = static_cast<float>(i) - 20.0f;
    b[i] = 0.5f * static_cast<float>(i % 5);
  }
  auto emu = runtime::MakeEmulator({.race_check = true});
  auto ab = runtime::Buffer<float>::FromHost(*emu, a);
  auto bb = runtime::Buffer<float>::FromHost(*emu, b);
  auto yb = runtime::Buffer<float>::FromHost(*emu, std::vector<float>(n + 1, -1.0f));
  auto loaded = emu->Load(*k);
  REQUIRE(loaded.ok());
  // a and b from element 1 (4 bytes past 16-byte alignment), y aligned.
  REQUIRE(emu->Launch(**loaded, {.grid = {1}, .block = {32}}, {*ab->View(1, n), *bb->View(1, n), *yb, n}).ok());
  std::vector<float> y = *yb->ToHost();
  for (uint32_t i = 0; i < n; ++i) REQUIRE(y[i] == std::max(0.0f, a[i + 1] * b[i + 1]));
  CHECK(y[n] == -1.0f);
}

TEST_CASE("softmax: bad configurations", "[core_kernels]") {
  kernels::SoftmaxSpec spec;
  spec.type = ir::ScalarType::kF64;
  CHECK(Msg(spec.Validate()) == "softmax: type f64 is not supported (f16, bf16, f32)");
  spec.type = ir::ScalarType::kF32;
  spec.block = 100;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "softmax: block=100 must be a multiple of 32 in 32..1024");
  spec.block = 128;
  spec.type = ir::ScalarType::kBF16;
  CHECK(Msg(spec.Build(ir::Target::kSm75)) ==
        "softmax: bf16 needs sm_80 or newer (cvt between bf16 and f32), not sm_75");
  CHECK(testing::DumpUsageError("softmax", {{"block", "48"}}) == "ptx-dump: softmax: block=48 must be a multiple of 32 in 32..1024\n");
  CHECK(testing::DumpUsageError("softmax", {{"type", "u32"}}) ==
        "ptx-dump: softmax: type=u32 is not supported; choose one of f16, bf16, f32\n");
  CHECK(testing::DumpUsageError("softmax", {{"block", "-1"}}) == "ptx-dump: softmax: block=-1 is not an unsigned 32-bit integer\n");
}

TEST_CASE("softmax: short, awkward and long rows, fewer blocks than rows", "[core_kernels]") {
  for (std::string type : {"f32", "f16", "bf16"}) {
    for (auto [rows, cols] : std::vector<std::pair<std::string, std::string>>{
             {"3", "1"}, {"4", "2"}, {"3", "31"}, {"5", "33"}, {"2", "1000"}, {"2", "4097"}}) {
      for (std::string block : {"32", "96", "128"}) {
        testing::RunFamilyOnEmulator("softmax", {{"type", type}, {"rows", rows}, {"cols", cols}, {"grid", "2"}, {"block", block}});
      }
    }
  }
  testing::RunFamilyOnEmulator("softmax", {{"rows", "1"}, {"cols", "65536"}, {"grid", "1"}, {"block", "1024"}});
}

TEST_CASE("transpose: bad configurations", "[core_kernels]") {
  kernels::TransposeSpec spec;
  spec.type = ir::ScalarType::kF64;
  CHECK(Msg(spec.Validate()) == "transpose: type f64 is not supported (f32, u32, s32, f16, bf16, u16)");
  spec.type = ir::ScalarType::kF32;
  spec.block_rows = 3;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "transpose: block_rows=3 must be 1, 2, 4, 8, 16 or 32");
  CHECK(testing::DumpUsageError("transpose", {{"block_rows", "64"}}) ==
        "ptx-dump: transpose: block_rows=64 must be 1, 2, 4, 8, 16 or 32\n");
  CHECK(testing::DumpUsageError("transpose", {{"type", "f64"}}) ==
        "ptx-dump: transpose: type=f64 is not supported; choose one of f32, u32, s32, f16, bf16, u16\n");
}

TEST_CASE("transpose: any shape, 4- and 2-byte elements", "[core_kernels]") {
  for (std::string type : {"f32", "u32", "s32", "f16", "bf16", "u16"}) {
    for (auto [rows, cols] : std::vector<std::pair<std::string, std::string>>{
             {"1", "1"}, {"1", "100"}, {"100", "1"}, {"33", "31"}, {"64", "64"}, {"70", "45"}}) {
      for (std::string block_rows : {"1", "8", "32"}) {
        testing::RunFamilyOnEmulator("transpose", {{"type", type}, {"rows", rows}, {"cols", cols}, {"block_rows", block_rows}});
      }
    }
  }
}

}  // namespace
}  // namespace ptxforge
