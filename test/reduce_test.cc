// The reduce family (issue 10): configuration errors through the API and
// ptx-dump --set, rows and tensor numerics on awkward shapes for every type
// and op, NaN / signed zero / infinity / tie semantics, and ReduceTensor's
// two launches, all on the emulator with race checking and the approximate
// instructions at their documented worst error.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/problem_runner.h"
#include "kernels/reduce.h"
#include "kernels/registry.h"
#include "runtime/emulator.h"
#include "test/family_testing.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge {
namespace {

using kernels::Reduction;
using kernels::ReduceMode;
using kernels::ReduceSpec;
using testing::Overrides;
using testing::Msg;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr uint32_t kNone = 0xFFFFFFFFu;

std::unique_ptr<runtime::Emulator> Emulator() {
  return runtime::MakeEmulator({.approx_worst_error = true, .race_check = true});
}

// ptx-dump's one-line error for `settings` (exit code 2: a refused setting).
std::string DumpError(const Overrides& settings) { return testing::DumpUsageError("reduce", settings); }

// The family's test problem for `settings` on the emulator.
void RunProblem(const Overrides& settings) { testing::RunFamilyOnEmulator("reduce", settings, 11); }

// Rows mode on x [rows, cols] (doubles stored in `type`); out as doubles.
std::vector<double> RunRows(ir::ScalarType type, Reduction op, const std::vector<double>& x, uint32_t rows,
                            uint32_t cols, uint32_t block = 32, uint32_t grid = 3) {
  absl::StatusOr<ir::Kernel> k = ReduceSpec{.type = type, .op = op, .block = block}.Build(ir::Target::kSm80);
  REQUIRE(Msg(k) == "OK");
  auto emu = Emulator();
  auto loaded = emu->Load(*k);
  REQUIRE(Msg(loaded) == "OK");
  auto xb = runtime::Buffer<uint8_t>::FromHost(*emu, kernels::FromDoubles(type, x));
  const ir::ScalarType out_type = op == Reduction::kArgmax ? ir::ScalarType::kU32 : type;
  auto ob = runtime::Buffer<uint8_t>::Allocate(*emu, rows * ir::TypeSize(out_type));
  REQUIRE((xb.ok() && ob.ok()));
  REQUIRE(Msg(emu->Launch(**loaded, {.grid = {grid}, .block = {block}}, {*xb, *ob, rows, cols})) == "OK");
  return kernels::AsDoubles(out_type, *ob->ToHost());
}

// ReduceTensor on x (doubles stored in `type`): the result as a double (argmax: the index).
double RunTensor(ir::ScalarType type, Reduction op, const std::vector<double>& x, uint32_t block = 256) {
  auto emu = Emulator();
  auto xb = runtime::Buffer<uint8_t>::FromHost(*emu, kernels::FromDoubles(type, x));
  REQUIRE(xb.ok());
  auto result = kernels::ReduceTensor(*emu, type, op, *xb, static_cast<uint32_t>(x.size()), ir::Target::kSm80, block);
  REQUIRE(Msg(result) == "OK");
  const ir::ScalarType out_type = op == Reduction::kArgmax ? ir::ScalarType::kU32 : type;
  std::vector<double> out = kernels::AsDoubles(out_type, *result->ToHost());
  REQUIRE(out.size() == 1);
  return out[0];
}

// The same value: both NaN, or equal with the same sign (so +0 is not -0).
bool Same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

const std::vector<ir::ScalarType> kTypes = {ir::ScalarType::kF32, ir::ScalarType::kF16, ir::ScalarType::kBF16,
                                            ir::ScalarType::kS32, ir::ScalarType::kU32};
const std::vector<Reduction> kOps = {Reduction::kSum, Reduction::kMax, Reduction::kMin, Reduction::kArgmax};
const std::vector<std::string> kTypeNames = {"f32", "f16", "bf16", "s32", "u32"};
const std::vector<std::string> kOpNames = {"sum", "max", "min", "argmax"};

TEST_CASE("reduce: bad configurations", "[reduce]") {
  ReduceSpec spec;
  spec.type = ir::ScalarType::kF64;
  CHECK(Msg(spec.Validate()) == "reduce: type f64 is not supported (f32, f16, bf16, s32, u32)");
  spec.type = ir::ScalarType::kF32;
  spec.block = 100;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "reduce: block=100 must be a multiple of 32 in 32..1024");
  spec.block = 2048;
  CHECK(Msg(spec.Validate()) == "reduce: block=2048 must be a multiple of 32 in 32..1024");
  spec.block = 256;
  spec.op = static_cast<Reduction>(7);
  CHECK(Msg(spec.Validate()) == "reduce: unknown op or mode");
  spec.op = Reduction::kArgmax;
  spec.type = ir::ScalarType::kBF16;
  CHECK(Msg(spec.Build(ir::Target::kSm75)) == "reduce: bf16 needs sm_80 or newer (cvt between bf16 and f32), not sm_75");
  spec.type = ir::ScalarType::kF16;
  CHECK(Msg(spec.Build(ir::Target::kSm75)) == "OK");

  CHECK(DumpError({{"op", "avg"}}) == "ptx-dump: reduce: op=avg is not supported; choose one of sum, max, min, argmax\n");
  CHECK(DumpError({{"mode", "cols"}}) == "ptx-dump: reduce: mode=cols is not supported; choose one of rows, tensor\n");
  CHECK(DumpError({{"type", "f64"}}) ==
        "ptx-dump: reduce: type=f64 is not supported; choose one of f32, f16, bf16, s32, u32\n");
  CHECK(DumpError({{"block", "48"}}) == "ptx-dump: reduce: block=48 must be a multiple of 32 in 32..1024\n");
  CHECK(DumpError({{"block", "-1"}}) == "ptx-dump: reduce: block=-1 is not an unsigned 32-bit integer\n");

  const kernels::KernelFamily* family = kernels::FindFamily("reduce");
  REQUIRE(family != nullptr);
  for (const char* field : {"rows", "cols", "n", "grid"}) {
    absl::StatusOr<kernels::Config> config = family->MakeConfig(Overrides{{field, "0"}});
    REQUIRE(config.ok());
    CHECK(Msg(family->MakeProblem(*config, 1)) == "reduce: rows, cols, n and grid must be positive");
  }
}

TEST_CASE("reduce: ReduceTensor refuses bad arguments", "[reduce]") {
  auto emu = Emulator();
  auto xb = runtime::Buffer<uint8_t>::Allocate(*emu, 40);
  REQUIRE(xb.ok());
  CHECK(Msg(kernels::ReduceTensor(*emu, ir::ScalarType::kF32, Reduction::kSum, *xb, 0)) ==
        "ReduceTensor: n=0 must be in 1..2147483648");
  CHECK(Msg(kernels::ReduceTensor(*emu, ir::ScalarType::kF32, Reduction::kSum, *xb, 3000000000u)) ==
        "ReduceTensor: n=3000000000 must be in 1..2147483648");
  CHECK(Msg(kernels::ReduceTensor(*emu, ir::ScalarType::kF32, Reduction::kSum, *xb, 11)) ==
        "ReduceTensor: x holds 40 bytes; n=11 f32 elements need 44");
  CHECK(Msg(kernels::ReduceTensor(*emu, ir::ScalarType::kF64, Reduction::kSum, *xb, 5)) ==
        "reduce: type f64 is not supported (f32, f16, bf16, s32, u32)");
  CHECK(Msg(kernels::ReduceTensor(*emu, ir::ScalarType::kF32, Reduction::kMax, *xb, 10, ir::Target::kSm80, 33)) ==
        "reduce: block=33 must be a multiple of 32 in 32..1024");
  CHECK(Msg(kernels::ReduceTensor(*emu, ir::ScalarType::kBF16, Reduction::kMax, *xb, 20, ir::Target::kSm75)) ==
        "reduce: bf16 needs sm_80 or newer (cvt between bf16 and f32), not sm_75");
}

TEST_CASE("reduce: the reference's semantics", "[reduce]") {
  const ir::ScalarType f32 = ir::ScalarType::kF32;
  const std::vector<double> x = {1, 3, kNan, 3, kNan, -kInf};
  CHECK(std::isnan(kernels::ReduceReference(Reduction::kSum, f32, x).value));
  CHECK(std::isnan(kernels::ReduceReference(Reduction::kMax, f32, x).value));
  CHECK(std::isnan(kernels::ReduceReference(Reduction::kMin, f32, x).value));
  CHECK(kernels::ReduceReference(Reduction::kArgmax, f32, x).index == 2);
  CHECK(kernels::ReduceReference(Reduction::kArgmax, f32, std::vector<double>{1, 3, 2, 3}).index == 1);
  CHECK(kernels::ReduceReference(Reduction::kArgmax, f32, std::vector<double>{-0.0, 0.0}).index == 0);
  CHECK(kernels::ReduceReference(Reduction::kArgmax, f32, std::vector<double>{-kInf, -kInf}).index == 0);
  // Given indices: ties go to the lower index, not the earlier position.
  CHECK(kernels::ReduceReference(Reduction::kArgmax, f32, std::vector<double>{5, 5}, std::vector<uint32_t>{9, 4}).index == 4);
  kernels::ReduceValue empty = kernels::ReduceReference(Reduction::kArgmax, ir::ScalarType::kS32, {});
  CHECK(empty.value == INT32_MIN);
  CHECK(empty.index == kNone);
  CHECK(kernels::ReduceReference(Reduction::kMin, ir::ScalarType::kU32, {}).value == UINT32_MAX);
}

TEST_CASE("reduce: rows of awkward lengths, fewer blocks than rows, every type and op", "[reduce]") {
  for (size_t t = 0; t < kTypeNames.size(); ++t) {
    for (size_t o = 0; o < kOpNames.size(); ++o) {
      for (auto [rows, cols] : std::vector<std::pair<std::string, std::string>>{
               {"3", "1"}, {"4", "31"}, {"3", "33"}, {"5", "97"}, {"2", "1000"}, {"2", "4097"}}) {
        for (std::string block : {"32", "96", "256"}) {
          RunProblem({{"type", kTypeNames[t]}, {"op", kOpNames[o]}, {"rows", rows}, {"cols", cols}, {"grid", "2"},
                      {"block", block}});
        }
      }
    }
  }
  RunProblem({{"op", "argmax"}, {"rows", "1"}, {"cols", "65536"}, {"grid", "1"}, {"block", "1024"}});
  RunProblem({{"op", "sum"}, {"rows", "1"}, {"cols", "65536"}, {"grid", "1"}, {"block", "1024"}});
}

TEST_CASE("reduce: tensor mode's partials, blocks without elements included", "[reduce]") {
  for (size_t t = 0; t < kTypeNames.size(); ++t) {
    for (size_t o = 0; o < kOpNames.size(); ++o) {
      for (auto [n, grid] : std::vector<std::pair<std::string, std::string>>{
               {"1", "3"}, {"7", "2"}, {"33", "1"}, {"100", "4"}, {"1000", "3"}, {"5003", "7"}}) {
        for (std::string block : {"32", "96"}) {
          RunProblem({{"type", kTypeNames[t]}, {"op", kOpNames[o]}, {"mode", "tensor"}, {"n", n}, {"grid", grid},
                      {"block", block}});
        }
      }
    }
  }
}

TEST_CASE("reduce: NaN wins, signed zeros, infinities and ties in rows", "[reduce]") {
  constexpr uint32_t kCols = 40;  // two laps of a 32-thread block
  std::vector<std::vector<double>> rows(9, std::vector<double>(kCols));
  for (uint32_t c = 0; c < kCols; ++c) {
    rows[0][c] = -kInf;                            // all -inf
    rows[1][c] = c + 1.0;                          // NaN at 35 and 37
    rows[2][c] = -1;                               // -0 at 1, +0 at 3
    rows[3][c] = c % 3 == 0 ? 0.0 : -0.0;          // only zeros
    rows[4][c] = static_cast<double>(c % 5) - 2;   // 5 at 6, 33 and 38 (lanes 6, 1, 6)
    rows[5][c] = kNan;                             // all NaN
    rows[6][c] = c;                                // +inf at 2, NaN at 20
    rows[7][c] = 10.0 - c;                         // -inf at 10
    rows[8][c] = 7;                                // all equal
  }
  rows[1][35] = rows[1][37] = kNan;
  rows[2][1] = -0.0;
  rows[2][3] = 0.0;
  rows[4][6] = rows[4][33] = rows[4][38] = 5;
  rows[6][2] = kInf;
  rows[6][20] = kNan;
  rows[7][10] = -kInf;
  std::vector<double> x;
  for (const auto& r : rows) x.insert(x.end(), r.begin(), r.end());
  const uint32_t n_rows = static_cast<uint32_t>(rows.size());
  // Pinned by hand, then every type against the reference.
  const std::vector<double> argmax = {0, 35, 1, 0, 6, 0, 20, 0, 0};
  const std::vector<double> max = {-kInf, kNan, 0.0, 0.0, 5, kNan, kNan, 10, 7};
  const std::vector<double> min = {-kInf, kNan, -1, -0.0, -2, kNan, kNan, -kInf, 7};
  for (ir::ScalarType t : {ir::ScalarType::kF32, ir::ScalarType::kF16, ir::ScalarType::kBF16}) {
    INFO(ir::TypeName(t));
    for (uint32_t block : {32u, 64u}) {
      std::vector<double> got_argmax = RunRows(t, Reduction::kArgmax, x, n_rows, kCols, block);
      std::vector<double> got_max = RunRows(t, Reduction::kMax, x, n_rows, kCols, block);
      std::vector<double> got_min = RunRows(t, Reduction::kMin, x, n_rows, kCols, block);
      std::vector<double> got_sum = RunRows(t, Reduction::kSum, x, n_rows, kCols, block);
      for (uint32_t r = 0; r < n_rows; ++r) {
        INFO("row " << r);
        CHECK(got_argmax[r] == argmax[r]);
        CHECK(Same(got_max[r], max[r]));
        CHECK(Same(got_min[r], min[r]));
        CHECK(got_argmax[r] == kernels::ReduceReference(Reduction::kArgmax, t, rows[r]).index);
        CHECK(Same(got_max[r], kernels::ReduceReference(Reduction::kMax, t, rows[r]).value));
        CHECK(Same(got_min[r], kernels::ReduceReference(Reduction::kMin, t, rows[r]).value));
      }
      CHECK(got_sum[0] == -kInf);
      for (uint32_t r : {1u, 5u, 6u}) CHECK(std::isnan(got_sum[r]));
      CHECK(got_sum[7] == -kInf);
      CHECK(got_sum[8] == 280);
    }
  }
}

TEST_CASE("reduce: integer extremes and ties in rows", "[reduce]") {
  constexpr uint32_t kCols = 70;
  std::vector<double> s(3 * kCols), u(3 * kCols);
  for (uint32_t c = 0; c < kCols; ++c) {
    s[c] = INT32_MIN;                        // all lowest
    s[kCols + c] = c % 7 == 3 ? INT32_MAX : -static_cast<double>(c);  // INT32_MAX first at 3
    s[2 * kCols + c] = c % 2 ? -5 : 5;       // 5 first at 0
    u[c] = 0;
    u[kCols + c] = c == 40 || c == 66 ? UINT32_MAX : c;
    u[2 * kCols + c] = 9;
  }
  CHECK(RunRows(ir::ScalarType::kS32, Reduction::kArgmax, s, 3, kCols) == std::vector<double>{0, 3, 0});
  CHECK(RunRows(ir::ScalarType::kS32, Reduction::kMax, s, 3, kCols) == std::vector<double>{INT32_MIN, INT32_MAX, 5});
  CHECK(RunRows(ir::ScalarType::kS32, Reduction::kMin, s, 3, kCols) == std::vector<double>{INT32_MIN, -69, -5});
  // Sums wrap modulo 2^32.
  CHECK(RunRows(ir::ScalarType::kS32, Reduction::kSum, s, 3, kCols)[0] == 0);
  CHECK(RunRows(ir::ScalarType::kU32, Reduction::kArgmax, u, 3, kCols) == std::vector<double>{0, 40, 0});
  CHECK(RunRows(ir::ScalarType::kU32, Reduction::kMax, u, 3, kCols) == std::vector<double>{0, UINT32_MAX, 9});
  CHECK(RunRows(ir::ScalarType::kU32, Reduction::kMin, u, 3, kCols) == std::vector<double>{0, 0, 9});
  CHECK(RunRows(ir::ScalarType::kU32, Reduction::kSum, u, 3, kCols)[1] ==
        std::fmod(2.0 * UINT32_MAX + (69 * 70 / 2 - 40 - 66), 4294967296.0));
}

TEST_CASE("reduce: ReduceTensor, two launches, every type and op", "[reduce]") {
  std::mt19937_64 rng(5);
  for (size_t t = 0; t < kTypes.size(); ++t) {
    const ir::ScalarType type = kTypes[t];
    for (Reduction op : kOps) {
      // n = 1, one block, one element more, several blocks, and more blocks than the 1024 partials.
      for (uint32_t n : {1u, 64u, 65u, 5003u, 70001u}) {
        INFO(ir::TypeName(type) << " " << kOpNames[static_cast<size_t>(op)] << " n=" << n);
        // Integers in [-8, 8) (u32: [0, 16)) so that there are ties across blocks.
        std::uniform_int_distribution<int> dist(type == ir::ScalarType::kU32 ? 0 : -8, type == ir::ScalarType::kU32 ? 15 : 7);
        std::vector<double> x(n);
        double abs_sum = 0;
        for (double& v : x) {
          v = dist(rng);
          abs_sum += std::fabs(v);
        }
        const double got = RunTensor(type, op, x, 64);
        const kernels::ReduceValue want = kernels::ReduceReference(op, type, x);
        if (op == Reduction::kArgmax) {
          CHECK(got == want.index);
        } else if (op == Reduction::kSum && ir::IsFloat(type)) {
          // Relative to sum |x|: f32 accumulation (a few elements per thread,
          // two trees) is below 1e-6; f16/bf16 round each partial and the
          // result to the storage type: 2 * 2^-11 / 2 * 2^-8 < DefaultTolerance.
          CHECK(std::fabs(got - want.value) <= kernels::DefaultTolerance(type) * abs_sum);
        } else {
          CHECK(got == want.value);
        }
      }
    }
  }
}

TEST_CASE("reduce: ReduceTensor's NaN, infinities and ties across blocks", "[reduce]") {
  std::vector<double> x(3000, -kInf);
  CHECK(RunTensor(ir::ScalarType::kF32, Reduction::kArgmax, x) == 0);
  CHECK(RunTensor(ir::ScalarType::kF32, Reduction::kMax, x) == -kInf);
  x[2999] = 2;
  x[1234] = 2;  // ties in two blocks: the lower index
  CHECK(RunTensor(ir::ScalarType::kF32, Reduction::kArgmax, x) == 1234);
  CHECK(RunTensor(ir::ScalarType::kF16, Reduction::kArgmax, x, 32) == 1234);
  x[2000] = kNan;
  x[1500] = kNan;
  for (ir::ScalarType t : {ir::ScalarType::kF32, ir::ScalarType::kF16, ir::ScalarType::kBF16}) {
    CHECK(RunTensor(t, Reduction::kArgmax, x) == 1500);
    CHECK(std::isnan(RunTensor(t, Reduction::kMax, x)));
    CHECK(std::isnan(RunTensor(t, Reduction::kMin, x)));
    CHECK(std::isnan(RunTensor(t, Reduction::kSum, x)));
  }
  std::vector<double> zeros(700, 0.0);
  zeros[300] = -0.0;
  CHECK(RunTensor(ir::ScalarType::kF32, Reduction::kArgmax, zeros, 32) == 0);
  CHECK(std::signbit(RunTensor(ir::ScalarType::kF32, Reduction::kMin, zeros, 32)));
  CHECK(!std::signbit(RunTensor(ir::ScalarType::kF32, Reduction::kMax, zeros, 32)));
}

TEST_CASE("reduce: tensor mode reads given indices (the second launch)", "[reduce]") {
  // Partials as the first launch leaves them: values with their indices,
  // ties resolved by the lower given index, not the position.
  absl::StatusOr<ir::Kernel> k =
      ReduceSpec{.op = Reduction::kArgmax, .mode = ReduceMode::kTensor, .block = 32}.Build(ir::Target::kSm80);
  REQUIRE(Msg(k) == "OK");
  auto emu = Emulator();
  auto loaded = emu->Load(*k);
  REQUIRE(loaded.ok());
  const std::vector<float> values = {1, 4, -2, 4, 4, -std::numeric_limits<float>::infinity()};
  const std::vector<uint32_t> indices = {17, 900, 3, 450, 451, kNone};
  auto vb = runtime::Buffer<float>::FromHost(*emu, values);
  auto ib = runtime::Buffer<uint32_t>::FromHost(*emu, indices);
  auto out = runtime::Buffer<float>::Allocate(*emu, 1);
  auto out_index = runtime::Buffer<uint32_t>::Allocate(*emu, 1);
  REQUIRE(Msg(emu->Launch(**loaded, {.grid = {1}, .block = {32}},
                          {*vb, *ib, *out, *out_index, static_cast<uint32_t>(values.size())})) == "OK");
  CHECK(out->ToHost()->at(0) == 4.0f);
  CHECK(out_index->ToHost()->at(0) == 450);
}

}  // namespace
}  // namespace ptxforge
