// conv2d kernels: validation messages (API and ptx-dump), names, the references, emulator numerics on awkward shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/conv2d.h"
#include "kernels/problem_runner.h"
#include "passes/pass.h"
#include "runtime/emulator.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge {
namespace {

using kernels::Conv2dShape;
using kernels::Conv2dSpec;
using kernels::Conv2dVariant;
using testing::Msg;
using Overrides = std::vector<std::pair<std::string, std::string>>;

constexpr Conv2dVariant kVariants[] = {Conv2dVariant::kIm2col, Conv2dVariant::kDirect, Conv2dVariant::kPointwise,
                                       Conv2dVariant::kBackwardData, Conv2dVariant::kBackwardFilter};

struct DumpResult {
  int code;
  std::string out;
  std::string err;
};

DumpResult Dump(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = tools::RunPtxDump(args, out, err);
  return {code, out.str(), err.str()};
}

// ptx-dump FAMILY --set k=v ... [extra]: exit 2 (a bad --set is a usage error), nothing on stdout, exactly "ptx-dump: <message>".
void RequireDumpError(const std::string& family, const Overrides& overrides, const std::string& message,
                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {family};
  for (const auto& [k, v] : overrides) {
    args.push_back("--set");
    args.push_back(StrCat(k, "=", v));
  }
  args.insert(args.end(), extra.begin(), extra.end());
  INFO("ptx-dump " << StrJoin(args, " "));
  DumpResult r = Dump(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == StrCat("ptx-dump: ", message, "\n"));
}

Conv2dSpec Spec(Conv2dVariant variant) {
  Conv2dSpec s;
  s.variant = variant;
  if (variant == Conv2dVariant::kPointwise) s.kernel_h = s.kernel_w = 1;
  return s;
}

TEST_CASE("conv2d rejects invalid configs with one-line messages (API and ptx-dump)") {
  for (Conv2dVariant v : kVariants) {
    const std::string family = StrCat("conv2d.", kernels::Conv2dVariantName(v));
    INFO(family);
    REQUIRE(kernels::FindFamily(family) != nullptr);
    const Conv2dSpec base = Spec(v);
    REQUIRE(Msg(base.Validate()) == "OK");

    Conv2dSpec bf16 = base;
    bf16.type = ir::ScalarType::kBF16;
    CHECK(Msg(bf16.Validate()) == family + ": type bf16 is not supported (f16, f32, f64)");
    CHECK(Msg(bf16.Build(ir::Target::kSm80)) == family + ": type bf16 is not supported (f16, f32, f64)");
    RequireDumpError(family, {{"type", "bf16"}}, family + ": type=bf16 is not supported; choose one of f16, f32, f64");

    const std::pair<const char*, uint32_t Conv2dSpec::*> zero_fields[] = {
        {"in_channels", &Conv2dSpec::in_channels}, {"out_channels", &Conv2dSpec::out_channels},
        {"kernel_h", &Conv2dSpec::kernel_h},       {"kernel_w", &Conv2dSpec::kernel_w},
        {"stride_h", &Conv2dSpec::stride_h},       {"stride_w", &Conv2dSpec::stride_w},
        {"dilation_h", &Conv2dSpec::dilation_h},   {"dilation_w", &Conv2dSpec::dilation_w},
        {"groups", &Conv2dSpec::groups}};
    for (const auto& [name, field] : zero_fields) {
      Conv2dSpec s = base;
      s.*field = 0;
      const std::string message = StrCat(family, ": ", name, "=0 must be positive");
      CHECK(Msg(s.Validate()) == message);
      RequireDumpError(family, {{name, "0"}}, message);
    }

    Conv2dSpec c_groups = base;
    c_groups.in_channels = 6;
    c_groups.out_channels = 8;
    c_groups.groups = 4;
    CHECK(Msg(c_groups.Validate()) == family + ": in_channels=6 is not divisible by groups=4");
    RequireDumpError(family, {{"in_channels", "6"}, {"out_channels", "8"}, {"groups", "4"}},
                     family + ": in_channels=6 is not divisible by groups=4");
    Conv2dSpec oc_groups = base;
    oc_groups.in_channels = 6;
    oc_groups.out_channels = 9;
    oc_groups.groups = 2;
    CHECK(Msg(oc_groups.Validate()) == family + ": out_channels=9 is not divisible by groups=2");
    RequireDumpError(family, {{"in_channels", "6"}, {"out_channels", "9"}, {"groups", "2"}},
                     family + ": out_channels=9 is not divisible by groups=2");

    // Test shapes: zero sizes and an empty output.
    CHECK(Msg(base.Shape(0, 5, 5)) == family + ": batch=0 must be positive");
    CHECK(Msg(base.Shape(1, 0, 5)) == family + ": in_h=0 must be positive");
    CHECK(Msg(base.Shape(1, 5, 0)) == family + ": in_w=0 must be positive");
    CHECK(Msg(base.Shape(70000, 5, 5)) == family + ": batch=70000 is more than 65535 (one grid.z block row per image)");
    RequireDumpError(family, {{"batch", "0"}}, family + ": batch=0 must be positive", {"--run=emulator"});
    if (v != Conv2dVariant::kPointwise) {
      CHECK(Msg(base.Shape(1, 2, 5)) ==
            family + ": output height is 0: in_h=2 + 2*pad_h=0 is less than the dilated kernel height 3");
      Conv2dSpec dilated = base;
      dilated.dilation_w = 3;
      dilated.pad_w = 1;
      CHECK(Msg(dilated.Shape(1, 5, 4)) ==
            family + ": output width is 0: in_w=4 + 2*pad_w=2 is less than the dilated kernel width 7");
      RequireDumpError(family, {{"in_h", "2"}},
                       family + ": output height is 0: in_h=2 + 2*pad_h=0 is less than the dilated kernel height 3",
                       {"--run=emulator"});
      RequireDumpError(family, {{"in_w", "4"}, {"dilation_w", "3"}, {"pad_w", "1"}},
                       family + ": output width is 0: in_w=4 + 2*pad_w=2 is less than the dilated kernel width 7",
                       {"--run=emulator"});

      Conv2dSpec wide = base;
      wide.kernel_w = 33;
      CHECK(Msg(wide.Validate()) == family + ": kernel 3x33 is larger than 32x32 (the window is unrolled at build time)");
      RequireDumpError(family, {{"kernel_w", "33"}},
                       family + ": kernel 3x33 is larger than 32x32 (the window is unrolled at build time)");
    }
  }

  // Tiles that cannot fit in 48 KiB of shared memory even at their smallest.
  Conv2dSpec huge = Spec(Conv2dVariant::kDirect);
  huge.type = ir::ScalarType::kF64;
  huge.kernel_h = huge.kernel_w = 32;
  huge.dilation_h = huge.dilation_w = 100;
  CHECK(Msg(huge.Validate()) ==
        "conv2d.direct: the shared-memory tiles need 77764192 bytes, more than 49152 (use a smaller stride, dilation "
        "or kernel)");
  RequireDumpError("conv2d.direct",
                   {{"type", "f64"}, {"kernel_h", "32"}, {"kernel_w", "32"}, {"dilation_h", "100"}, {"dilation_w", "100"}},
                   "conv2d.direct: the shared-memory tiles need 77764192 bytes, more than 49152 (use a smaller stride, "
                   "dilation or kernel)");

  // 1x1 only.
  const std::string not_1x1 =
      " is not a 1x1 convolution (kernel 1x1, stride 1x1, pad 0x0, dilation 1x1); use conv2d.direct";
  const std::pair<std::string, std::string> pointwise_cases[] = {
      {"kernel_h=3", "conv2d.pointwise: kernel 3x1, stride 1x1, pad 0x0, dilation 1x1"},
      {"kernel_w=2", "conv2d.pointwise: kernel 1x2, stride 1x1, pad 0x0, dilation 1x1"},
      {"stride_h=2", "conv2d.pointwise: kernel 1x1, stride 2x1, pad 0x0, dilation 1x1"},
      {"stride_w=3", "conv2d.pointwise: kernel 1x1, stride 1x3, pad 0x0, dilation 1x1"},
      {"pad_h=1", "conv2d.pointwise: kernel 1x1, stride 1x1, pad 1x0, dilation 1x1"},
      {"pad_w=2", "conv2d.pointwise: kernel 1x1, stride 1x1, pad 0x2, dilation 1x1"},
      {"dilation_h=2", "conv2d.pointwise: kernel 1x1, stride 1x1, pad 0x0, dilation 2x1"},
      {"dilation_w=3", "conv2d.pointwise: kernel 1x1, stride 1x1, pad 0x0, dilation 1x3"},
  };
  for (const auto& [setting, prefix] : pointwise_cases) {
    const std::string key = setting.substr(0, setting.find('='));
    const std::string value = setting.substr(setting.find('=') + 1);
    Conv2dSpec s = Spec(Conv2dVariant::kPointwise);
    const std::pair<const char*, uint32_t Conv2dSpec::*> fields[] = {
        {"kernel_h", &Conv2dSpec::kernel_h}, {"kernel_w", &Conv2dSpec::kernel_w},
        {"stride_h", &Conv2dSpec::stride_h}, {"stride_w", &Conv2dSpec::stride_w},
        {"pad_h", &Conv2dSpec::pad_h},       {"pad_w", &Conv2dSpec::pad_w},
        {"dilation_h", &Conv2dSpec::dilation_h}, {"dilation_w", &Conv2dSpec::dilation_w}};
    for (const auto& [name, field] : fields) {
      if (key == name) s.*field = static_cast<uint32_t>(std::stoul(value));
    }
    CHECK(Msg(s.Validate()) == prefix + not_1x1);
    RequireDumpError("conv2d.pointwise", {{key, value}}, prefix + not_1x1);
  }
}

TEST_CASE("conv2d kernel names say the configuration") {
  Conv2dSpec s;
  CHECK(s.KernelName() == "conv2d_direct_f32_ic3_oc64_k3x3");
  s.in_channels = 32;
  s.out_channels = 32;
  s.groups = 32;
  s.type = ir::ScalarType::kF16;
  CHECK(s.KernelName() == "conv2d_direct_f16_ic32_oc32_k3x3_dw32");
  s.groups = 4;
  s.variant = Conv2dVariant::kBackwardFilter;
  s.stride_w = 2;
  s.pad_h = 1;
  s.dilation_h = 3;
  s.kernel_w = 5;
  CHECK(s.KernelName() == "conv2d_backward_filter_f16_ic32_oc32_k3x5_g4_s1x2_p1x0_d3x1");
  CHECK(Spec(Conv2dVariant::kPointwise).KernelName() == "conv2d_pointwise_f32_ic3_oc64_k1x1");
  Conv2dSpec bd = Spec(Conv2dVariant::kBackwardData);
  bd.type = ir::ScalarType::kF64;
  CHECK(bd.KernelName() == "conv2d_backward_data_f64_ic3_oc64_k3x3");
  CHECK(Spec(Conv2dVariant::kIm2col).KernelName() == "conv2d_im2col_f32_ic3_oc64_k3x3");
}

TEST_CASE("conv2d output size and launch shape") {
  Conv2dSpec s;
  s.kernel_h = 3;
  s.kernel_w = 2;
  s.stride_h = 2;
  s.stride_w = 3;
  s.pad_h = 1;
  s.dilation_w = 2;
  absl::StatusOr<Conv2dShape> shape = s.Shape(2, 9, 10);
  REQUIRE(Msg(shape) == "OK");
  // (9 + 2 − 2 − 1) / 2 + 1 = 5; (10 + 0 − 2 − 1) / 3 + 1 = 3
  CHECK(shape->out_h == 5);
  CHECK(shape->out_w == 3);
  // 5×3 outputs: two 32×4 tiles; 64 output channels in slices of 8; 2 images.
  CHECK(s.Grid(*shape) == std::array<uint32_t, 3>{2, 8, 2});
  CHECK(s.Block() == std::array<uint32_t, 3>{128, 1, 1});
}

// ---- the references on hand-checked numbers and their adjoint identities

TEST_CASE("conv2d references: a hand-computed case") {
  // One 3×3 image, one 2×2 filter, pad 1, stride 2: out is 2×2.
  Conv2dSpec s;
  s.in_channels = s.out_channels = 1;
  s.kernel_h = s.kernel_w = 2;
  s.stride_h = s.stride_w = 2;
  s.pad_h = s.pad_w = 1;
  Conv2dShape shape = *s.Shape(1, 3, 3);
  REQUIRE(shape.out_h == 2);
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<double> w = {1, 10, 100, 1000};
  // out[0,0] reads (−1,−1) (−1,0) (0,−1) (0,0): only x[0,0]·w[1,1] = 1000.
  // out[0,1] reads rows −1, 0 and columns 1, 2: x[0,1]·w[1,0] + x[0,2]·w[1,1] = 200 + 3000.
  // out[1,0]: x[1,0]·w[0,1] + x[2,0]·w[1,1] = 40 + 7000; out[1,1]: 5 + 60 + 800 + 9000.
  CHECK(kernels::Conv2dForwardReference(s, shape, x, w, {}) == std::vector<double>{1000, 3200, 7040, 9865});
  CHECK(kernels::Conv2dForwardReference(s, shape, x, w, std::vector<double>{0.5}) ==
        std::vector<double>{1000.5, 3200.5, 7040.5, 9865.5});
  // Row (ky·2 + kx) of the columns, zero in the padding.
  CHECK(kernels::Conv2dIm2colReference(s, shape, x) ==
        std::vector<double>{0, 0, 0, 5, 0, 0, 4, 6, 0, 2, 0, 8, 1, 3, 7, 9});
  const std::vector<double> gy = {1, 2, 3, 4};
  CHECK(kernels::Conv2dBackwardDataReference(s, shape, gy, w) ==
        std::vector<double>{1000, 200, 2000, 30, 4, 40, 3000, 400, 4000});
  CHECK(kernels::Conv2dBackwardFilterReference(s, shape, x, gy) == std::vector<double>{5 * 4, 4 * 3 + 6 * 4, 2 * 2 + 8 * 4,
                                                                                      1 + 3 * 2 + 7 * 3 + 9 * 4});
}

TEST_CASE("conv2d references are adjoint: <conv(x, w), gy> = <x, dx(gy, w)> = <w, dw(x, gy)>") {
  Conv2dSpec s;
  s.in_channels = 6;
  s.out_channels = 4;
  s.groups = 2;
  s.kernel_h = 3;
  s.kernel_w = 2;
  s.stride_h = 2;
  s.pad_h = 2;
  s.pad_w = 1;
  s.dilation_w = 3;
  Conv2dShape shape = *s.Shape(2, 7, 8);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  auto random = [&](size_t n) {
    std::vector<double> v(n);
    for (double& e : v) e = u(rng);
    return v;
  };
  auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
    double sum = 0;
    for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
    return sum;
  };
  std::vector<double> x = random(2 * 6 * 7 * 8), w = random(4 * 3 * 3 * 2);
  std::vector<double> gy = random(size_t{2} * 4 * shape.out_h * shape.out_w);
  const double forward = dot(kernels::Conv2dForwardReference(s, shape, x, w, {}), gy);
  CHECK(forward != 0);
  CHECK(std::fabs(forward - dot(x, kernels::Conv2dBackwardDataReference(s, shape, gy, w))) < 1e-12);
  CHECK(std::fabs(forward - dot(w, kernels::Conv2dBackwardFilterReference(s, shape, x, gy))) < 1e-12);
}

// ---- emulator numerics

// Runs the family's test problem for `overrides` in every type on the emulator.
void RunAllTypes(std::string_view family_name, const std::vector<Overrides>& configs,
                 ir::Target target = ir::Target::kSm80) {
  const kernels::KernelFamily* family = kernels::FindFamily(family_name);
  REQUIRE(family != nullptr);
  auto emu = runtime::MakeEmulator();
  for (const Overrides& base : configs) {
    for (const char* type : {"f16", "f32", "f64"}) {
      Overrides overrides = base;
      overrides.emplace_back("type", type);
      std::string text;
      for (const auto& [k, v] : overrides) StrAppend(&text, " ", k, "=", v);
      INFO(family_name << text);
      absl::StatusOr<kernels::Config> config = family->MakeConfig(overrides);
      REQUIRE(Msg(config) == "OK");
      absl::StatusOr<ir::Kernel> kernel = family->Build(*config, target);
      REQUIRE(Msg(kernel) == "OK");
      REQUIRE(Msg(passes::Pipeline::Standard().Run(*kernel)) == "OK");
      absl::StatusOr<kernels::TestProblem> problem = family->MakeProblem(*config, 7);
      REQUIRE(Msg(problem) == "OK");
      absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(*emu, *kernel, *problem);
      REQUIRE(Msg(result) == "OK");
      INFO(result->Report());
      CHECK(result->ok());
    }
  }
}

// Awkward shapes every windowed variant runs: odd sizes, padding beyond the
// kernel radius, stride > kernel, dilation 2 and 3, groups, depthwise,
// batch > 1, 1×1 inputs, tall windows, many channels per group.
const std::vector<Overrides>& WindowConfigs() {
  static const std::vector<Overrides> configs = {
      {{"in_channels", "6"}, {"out_channels", "9"}, {"groups", "3"}, {"pad_h", "3"}, {"pad_w", "2"},
       {"stride_h", "2"}, {"dilation_w", "3"}},
      {{"in_channels", "2"}, {"out_channels", "3"}, {"kernel_h", "2"}, {"kernel_w", "3"}, {"stride_h", "4"},
       {"stride_w", "5"}, {"in_h", "13"}, {"in_w", "17"}},
      {{"in_channels", "4"}, {"out_channels", "4"}, {"groups", "4"}, {"dilation_h", "2"}, {"dilation_w", "3"},
       {"pad_h", "2"}, {"pad_w", "3"}},
      {{"in_channels", "4"}, {"out_channels", "8"}, {"groups", "2"}, {"dilation_h", "3"}, {"dilation_w", "2"},
       {"stride_h", "2"}, {"stride_w", "3"}, {"pad_h", "4"}, {"pad_w", "1"}, {"in_h", "11"}, {"in_w", "12"}},
      {{"in_channels", "3"}, {"out_channels", "5"}, {"in_h", "1"}, {"in_w", "1"}, {"pad_h", "1"}, {"pad_w", "1"}},
      {{"in_channels", "3"}, {"out_channels", "5"}, {"in_h", "1"}, {"in_w", "1"}, {"kernel_h", "1"}, {"kernel_w", "1"}},
      {{"in_channels", "7"}, {"out_channels", "11"}, {"kernel_h", "5"}, {"kernel_w", "1"}, {"pad_h", "6"},
       {"batch", "3"}},
      {{"in_channels", "16"}, {"out_channels", "24"}, {"groups", "8"}, {"pad_h", "1"}, {"pad_w", "1"},
       {"stride_h", "2"}, {"stride_w", "2"}, {"in_h", "33"}, {"in_w", "35"}},
      {{"in_channels", "12"}, {"out_channels", "20"}, {"kernel_h", "7"}, {"kernel_w", "7"}, {"pad_h", "3"},
       {"pad_w", "3"}, {"in_h", "6"}, {"in_w", "40"}},
      {{"in_channels", "3"}, {"out_channels", "5"}, {"kernel_h", "2"}, {"kernel_w", "2"}, {"stride_h", "3"},
       {"stride_w", "3"}, {"pad_h", "2"}, {"pad_w", "2"}, {"in_h", "10"}, {"in_w", "10"}},
      {{"in_channels", "40"}, {"out_channels", "3"}, {"kernel_h", "1"}, {"kernel_w", "1"}},
  };
  return configs;
}

TEST_CASE("conv2d.im2col matches its reference on the emulator") { RunAllTypes("conv2d.im2col", WindowConfigs()); }
TEST_CASE("conv2d.direct matches its reference on the emulator") {
  RunAllTypes("conv2d.direct", WindowConfigs());
  RunAllTypes("conv2d.direct", {{{"bias", "false"}, {"in_channels", "5"}, {"out_channels", "3"}}});
}
TEST_CASE("conv2d.backward_data matches its reference on the emulator") {
  RunAllTypes("conv2d.backward_data", WindowConfigs());
  // The default channels (3 in, 64 out) with stride 1: the weight tile is
  // read whole as 16-byte vectors (f32), on an image that is not whole tiles.
  RunAllTypes("conv2d.backward_data", {{{"in_h", "9"}, {"in_w", "37"}}});
  // More weight tiles read whole: 6 channels with dilation, 2 with a 1x1
  // kernel, 7 with a 6x6 kernel, and 10 in two groups.
  RunAllTypes("conv2d.backward_data",
              {{{"in_channels", "6"}, {"out_channels", "8"}, {"dilation_h", "2"}, {"pad_h", "2"}, {"in_h", "7"}, {"in_w", "19"}},
               {{"in_channels", "2"}, {"out_channels", "16"}, {"kernel_h", "1"}, {"kernel_w", "1"}, {"in_h", "5"}, {"in_w", "9"}},
               {{"in_channels", "7"}, {"out_channels", "4"}, {"kernel_h", "6"}, {"kernel_w", "6"}, {"pad_h", "2"}, {"pad_w", "3"},
                {"in_h", "8"}, {"in_w", "11"}},
               {{"in_channels", "10"}, {"out_channels", "12"}, {"groups", "2"}, {"in_h", "6"}, {"in_w", "7"}}});
}
TEST_CASE("conv2d.backward_filter matches its reference on the emulator") {
  RunAllTypes("conv2d.backward_filter", WindowConfigs());
}
// On sm_75 the tile loop and the reduction find the thread's and the block's
// coordinates again from fresh reads: blocks over output channels, channel
// slices (groups) and kernel rows, several tiles and images per block.
TEST_CASE("conv2d.backward_filter built for sm_75 matches its reference on the emulator") {
  RunAllTypes("conv2d.backward_filter",
              {{{"in_channels", "8"}, {"out_channels", "6"}, {"groups", "2"}, {"kernel_h", "8"}, {"kernel_w", "5"},
                {"pad_h", "3"}, {"pad_w", "2"}, {"batch", "2"}, {"in_h", "12"}, {"in_w", "20"}},
               {{"in_channels", "12"}, {"out_channels", "20"}, {"kernel_h", "7"}, {"kernel_w", "7"}, {"pad_h", "3"},
                {"pad_w", "3"}, {"batch", "2"}, {"in_h", "6"}, {"in_w", "40"}},
               {{"in_h", "9"}, {"in_w", "37"}}},
              ir::Target::kSm75);
}
TEST_CASE("conv2d.pointwise matches its reference on the emulator") {
  RunAllTypes("conv2d.pointwise",
              {{},
               {{"in_channels", "6"}, {"out_channels", "9"}, {"groups", "3"}},
               {{"in_channels", "5"}, {"out_channels", "5"}, {"groups", "5"}, {"batch", "3"}, {"in_h", "1"},
                {"in_w", "1"}},
               {{"in_channels", "37"}, {"out_channels", "19"}, {"in_h", "13"}, {"in_w", "11"}},
               {{"in_channels", "8"}, {"out_channels", "40"}, {"groups", "2"}, {"in_h", "17"}, {"in_w", "9"}},
               {{"bias", "false"}, {"in_channels", "3"}, {"out_channels", "7"}}});
}

TEST_CASE("ptx-dump --run=emulator runs a conv2d configuration from --set") {
  DumpResult r = Dump({"conv2d.backward_data", "--run=emulator", "--set", "groups=3", "--set", "in_channels=3",
                       "--set", "out_channels=6", "--set", "stride_h=2", "--set", "pad_w=2", "--set", "in_h=5"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.substr(0, r.out.find(", max abs")) ==
        "conv2d_backward_data_f32_ic3_oc6_k3x3_dw3_s2x1_p0x2 on ptxforge CPU emulator: batch=2 in=5x9 out=2x11, grid "
        "2x3x2, block 128x1x1\ngrad_input: 270 elements");
  CHECK(r.out.find("(tolerance 1e-05): ok\ncounters: instructions=") != std::string::npos);
}

}  // namespace
}  // namespace ptxforge
