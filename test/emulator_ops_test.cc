// Per-opcode semantics of the emulator at edge values: integer wrap-around,
// lo/hi/wide, shifts, bit fields, division edge cases, float rounding modes,
// ftz, sat, NaN and signed zeros, f16/bf16, every kind of cvt, setp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "builder/memory.h"
#include "ir/strings.h"

#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using testing::Binary;
using testing::Bits;
using testing::AsF32;
using testing::AsF64;
using testing::RunScalar;
using testing::Unary;
using R = ir::Rounding;
constexpr float kTiny = 0x1p-30f;
constexpr int32_t kIntMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kIntMax = std::numeric_limits<int32_t>::max();

auto Add = [](KernelBuilder& b, auto x, auto y) { return b.Add(x, y); };
auto Sub = [](KernelBuilder& b, auto x, auto y) { return b.Sub(x, y); };
auto Mul = [](KernelBuilder& b, auto x, auto y) { return b.Mul(x, y); };
auto Div = [](KernelBuilder& b, auto x, auto y) { return b.Div(x, y); };
auto Rem = [](KernelBuilder& b, auto x, auto y) { return b.Rem(x, y); };
auto Min = [](KernelBuilder& b, auto x, auto y) { return b.Min(x, y); };
auto Max = [](KernelBuilder& b, auto x, auto y) { return b.Max(x, y); };
auto MulHi = [](KernelBuilder& b, auto x, auto y) { return b.MulHi(x, y); };
auto Shl = [](KernelBuilder& b, auto x, Value<U32> n) { return b.Shl(x, n); };
auto Shr = [](KernelBuilder& b, auto x, Value<U32> n) { return b.Shr(x, n); };

template <ir::Rounding r>
auto AddR = [](KernelBuilder& b, auto x, auto y) { return b.Add(x, y, {.rounding = r}); };

// Shifts take a u32 amount: build both operands explicitly.
template <ScalarTag T, typename Op>
uint64_t Shift(typename T::CType a, uint32_t n, Op op) {
  return RunScalar([&](KernelBuilder& b) { return op(b, b.Const<T>(a), b.Const<U32>(n)); });
}

TEST_CASE("integer add, sub and mul wrap around") {
  CHECK(Binary<U32>(0xFFFFFFFFu, 1u, Add) == 0);
  CHECK(Binary<U32>(0u, 1u, Sub) == 0xFFFFFFFFu);
  CHECK(Binary<S32>(0x10000, 0x10000, Mul) == 0);
  CHECK(Binary<S32>(-3, 5, Mul) == 0xFFFFFFF1u);
  CHECK(Binary<U64>(~uint64_t{0}, 2, Add) == 1);
  CHECK(Binary<S16>(int16_t{32767}, int16_t{1}, Add) == 0x8000);
}

TEST_CASE("mul.hi and mul.wide") {
  CHECK(Binary<U32>(0xFFFFFFFFu, 0xFFFFFFFFu, MulHi) == 0xFFFFFFFEu);
  CHECK(Binary<S32>(-1, -1, MulHi) == 0);
  CHECK(Binary<S32>(kIntMin, 2, MulHi) == 0xFFFFFFFFu);
  CHECK(Binary<U64>(uint64_t{1} << 63, 4, MulHi) == 2);
  CHECK(Binary<S64>(-1, 1, MulHi) == ~uint64_t{0});
  CHECK(RunScalar([](KernelBuilder& b) { return b.MulWide(b.Const<S32>(-2), 3); }) == static_cast<uint64_t>(-6));
  CHECK(RunScalar([](KernelBuilder& b) { return b.MulWide(b.Const<U16>(65535), uint16_t{65535}); }) == 4294836225u);
}

TEST_CASE("mad lo, hi and wide") {
  CHECK(RunScalar([](KernelBuilder& b) { return b.Mad(b.Const<U32>(3), 4u, 5u); }) == 17);
  CHECK(RunScalar([](KernelBuilder& b) { return b.MadHi(b.Const<U64>(uint64_t{1} << 63), uint64_t{4}, uint64_t{1}); }) == 3);
  CHECK(RunScalar([](KernelBuilder& b) { return b.MadWide(b.Const<U32>(0xFFFFFFFFu), 2u, uint64_t{1}); }) ==
        0x1FFFFFFFFull);
  CHECK(RunScalar([](KernelBuilder& b) { return b.MadWide(b.Const<S32>(-4), 5, int64_t{-1}); }) ==
        static_cast<uint64_t>(-21));
}

TEST_CASE("integer division and remainder edge cases do not trap") {
  CHECK(Binary<U32>(7u, 2u, Div) == 3);
  CHECK(Binary<S32>(-7, 2, Div) == static_cast<uint32_t>(-3));
  CHECK(Binary<U32>(7u, 0u, Div) == 0xFFFFFFFFu);
  CHECK(Binary<S32>(7, 0, Div) == 0xFFFFFFFFu);
  CHECK(Binary<S32>(kIntMin, -1, Div) == static_cast<uint32_t>(kIntMin));
  CHECK(Binary<S32>(-7, 3, Rem) == static_cast<uint32_t>(-1));
  CHECK(Binary<U32>(7u, 0u, Rem) == 7);
  CHECK(Binary<S32>(kIntMin, -1, Rem) == 0);
  CHECK(Binary<S64>(std::numeric_limits<int64_t>::min(), -1, Div) ==
        static_cast<uint64_t>(std::numeric_limits<int64_t>::min()));
}

TEST_CASE("add.sat.s32 and sub.sat.s32 clamp") {
  auto add_sat = [](KernelBuilder& b, auto x, auto y) { return b.Add(x, y, {.sat = true}); };
  auto sub_sat = [](KernelBuilder& b, auto x, auto y) { return b.Sub(x, y, {.sat = true}); };
  CHECK(Binary<S32>(kIntMax, 1, add_sat) == static_cast<uint32_t>(kIntMax));
  CHECK(Binary<S32>(kIntMin, -1, add_sat) == static_cast<uint32_t>(kIntMin));
  CHECK(Binary<S32>(kIntMin, 1, sub_sat) == static_cast<uint32_t>(kIntMin));
  CHECK(Binary<S32>(5, 7, add_sat) == 12);
}

TEST_CASE("integer min, max, abs, neg") {
  CHECK(Binary<S32>(-1, 1, Min) == 0xFFFFFFFFu);
  CHECK(Binary<U32>(0xFFFFFFFFu, 1u, Min) == 1);
  CHECK(Binary<S64>(-5, 3, Max) == 3);
  CHECK(Unary<S32>(kIntMin, [](KernelBuilder& b, auto x) { return b.Abs(x); }) == static_cast<uint32_t>(kIntMin));
  CHECK(Unary<S32>(-9, [](KernelBuilder& b, auto x) { return b.Abs(x); }) == 9);
  CHECK(Unary<S32>(5, [](KernelBuilder& b, auto x) { return b.Neg(x); }) == static_cast<uint32_t>(-5));
}

TEST_CASE("shifts by the width or more") {
  CHECK(Shift<B32>(1u, 31, Shl) == 0x80000000u);
  CHECK(Shift<B32>(1u, 32, Shl) == 0);
  CHECK(Shift<U32>(0x80000000u, 32, Shr) == 0);
  CHECK(Shift<U32>(0x80000000u, 31, Shr) == 1);
  CHECK(Shift<S32>(-8, 1, Shr) == static_cast<uint32_t>(-4));
  CHECK(Shift<S32>(-8, 40, Shr) == 0xFFFFFFFFu);
  CHECK(Shift<S32>(8, 40, Shr) == 0);
  CHECK(Shift<B64>(uint64_t{1}, 63, Shl) == uint64_t{1} << 63);
  CHECK(Shift<U64>(~uint64_t{0}, 64, Shr) == 0);
}

TEST_CASE("bfe and bfi follow the PTX definitions") {
  auto bfe = [](uint32_t pos, uint32_t len) {
    return [=](KernelBuilder& b, auto x) { return b.Bfe(x, pos, len); };
  };
  CHECK(Unary<U32>(0xABCD1234u, bfe(8, 8)) == 0x12);
  CHECK(Unary<S32>(0x0000F000, bfe(12, 4)) == 0xFFFFFFFFu);  // the field's top bit is 1
  CHECK(Unary<S32>(0x00007000, bfe(12, 4)) == 7);
  CHECK(Unary<U32>(0xABCD1234u, bfe(28, 8)) == 0xA);         // past the msb: zero fill
  CHECK(Unary<S32>(kIntMin, bfe(28, 8)) == 0xFFFFFFF8u);     // past the msb: sign fill
  CHECK(Unary<S32>(-1, bfe(3, 0)) == 0);                     // length 0
  // A register position uses its low 8 bits (immediates above 255 are rejected).
  CHECK(RunScalar([](KernelBuilder& b) { return b.Bfe(b.Const<U32>(0xFFu), b.Const<U32>(0x104), 4u); }) == 0xF);
  auto bfi = [](uint32_t pos, uint32_t len) {
    return [=](KernelBuilder& b, auto x) { return b.Bfi(x, 0u, pos, len); };
  };
  CHECK(Unary<B32>(0xFu, bfi(4, 4)) == 0xF0);
  CHECK(Unary<B32>(0xFFu, bfi(28, 8)) == 0xF0000000u);
  CHECK(Unary<B32>(0xFFu, bfi(32, 8)) == 0);
}

TEST_CASE("popc, clz, brev, not, cnot") {
  CHECK(Unary<B32>(0xF0F0u, [](KernelBuilder& b, auto x) { return b.Popc(x); }) == 8);
  CHECK(Unary<B64>(~uint64_t{0}, [](KernelBuilder& b, auto x) { return b.Popc(x); }) == 64);
  CHECK(Unary<B32>(0u, [](KernelBuilder& b, auto x) { return b.Clz(x); }) == 32);
  CHECK(Unary<B32>(1u, [](KernelBuilder& b, auto x) { return b.Clz(x); }) == 31);
  CHECK(Unary<B64>(uint64_t{1}, [](KernelBuilder& b, auto x) { return b.Clz(x); }) == 63);
  CHECK(Unary<B32>(1u, [](KernelBuilder& b, auto x) { return b.Brev(x); }) == 0x80000000u);
  CHECK(Unary<B32>(0u, [](KernelBuilder& b, auto x) { return b.Not(x); }) == 0xFFFFFFFFu);
  CHECK(Unary<B32>(0u, [](KernelBuilder& b, auto x) { return b.Cnot(x); }) == 1);
  CHECK(Unary<B32>(5u, [](KernelBuilder& b, auto x) { return b.Cnot(x); }) == 0);
}

TEST_CASE("predicate logic") {
  auto pred = [](bool a, bool c, auto op) {
    return RunScalar([&](KernelBuilder& b) { return op(b, b.Const<Pred>(a), b.Const<Pred>(c)); });
  };
  auto p_and = [](KernelBuilder& b, auto x, auto y) { return b.And(x, y); };
  auto p_or = [](KernelBuilder& b, auto x, auto y) { return b.Or(x, y); };
  auto p_xor = [](KernelBuilder& b, auto x, auto y) { return b.Xor(x, y); };
  CHECK(pred(true, false, p_and) == 0);
  CHECK(pred(true, false, p_or) == 1);
  CHECK(pred(true, true, p_xor) == 0);
  CHECK(RunScalar([](KernelBuilder& b) { return b.Not(b.Const<Pred>(true)); }) == 0);
}

TEST_CASE("f32 rounding modes") {
  CHECK(AsF32(Binary<F32>(1.0f, kTiny, AddR<R::kRn>)) == 1.0f);
  CHECK(AsF32(Binary<F32>(1.0f, kTiny, AddR<R::kRz>)) == 1.0f);
  CHECK(AsF32(Binary<F32>(1.0f, kTiny, AddR<R::kRp>)) == std::nextafter(1.0f, 2.0f));
  CHECK(AsF32(Binary<F32>(1.0f, kTiny, AddR<R::kRm>)) == 1.0f);
  CHECK(AsF32(Binary<F32>(-1.0f, -kTiny, AddR<R::kRm>)) == -std::nextafter(1.0f, 2.0f));
  CHECK(AsF32(Binary<F32>(-1.0f, -kTiny, AddR<R::kRz>)) == -1.0f);
  auto div = [](ir::Rounding r) { return [=](KernelBuilder& b, auto x, auto y) { return b.Div(x, y, {.rounding = r}); }; };
  CHECK(Binary<F32>(1.0f, 3.0f, div(R::kRn)) == 0x3EAAAAABu);
  CHECK(Binary<F32>(1.0f, 3.0f, div(R::kRz)) == 0x3EAAAAAAu);
  CHECK(Binary<F32>(-1.0f, 3.0f, div(R::kRp)) == 0xBEAAAAAAu);
  // The host rounding mode is restored: a later rn add rounds to nearest.
  CHECK(AsF32(RunScalar([](KernelBuilder& b) {
          b.Add(b.Const<F32>(1.0f), kTiny, {.rounding = R::kRp});
          return b.Add(b.Const<F32>(1.0f), kTiny);
        })) == 1.0f);
}

TEST_CASE("f64 rounding modes") {
  CHECK(AsF64(Binary<F64>(1.0, 0x1p-60, AddR<R::kRn>)) == 1.0);
  CHECK(AsF64(Binary<F64>(1.0, 0x1p-60, AddR<R::kRp>)) == std::nextafter(1.0, 2.0));
  CHECK(AsF64(Binary<F64>(-1.0, -0x1p-60, AddR<R::kRm>)) == -std::nextafter(1.0, 2.0));
  CHECK(AsF64(Binary<F64>(1.0, 3.0, Div)) == 1.0 / 3.0);
}

TEST_CASE("f32 ftz flushes subnormal inputs and outputs") {
  auto mul_ftz = [](KernelBuilder& b, auto x, auto y) { return b.Mul(x, y, {.ftz = true}); };
  CHECK(AsF32(Binary<F32>(1e-20f, 1e-20f, Mul)) == 1e-20f * 1e-20f);  // a subnormal survives without ftz
  CHECK(std::fpclassify(AsF32(Binary<F32>(1e-20f, 1e-20f, Mul))) == FP_SUBNORMAL);
  CHECK(Binary<F32>(1e-20f, 1e-20f, mul_ftz) == 0);
  CHECK(Binary<F32>(-1e-20f, 1e-20f, mul_ftz) == 0x80000000u);  // sign kept
  auto add_ftz = [](KernelBuilder& b, auto x, auto y) { return b.Add(x, y, {.ftz = true}); };
  CHECK(Binary<F32>(1e-40f, 1.0f, add_ftz) == Bits(1.0f));
  CHECK(AsF32(Binary<F32>(1e-40f, 0.0f, Add)) == 1e-40f);
  CHECK(Binary<F32>(1e-40f, 0.0f, add_ftz) == 0);
}

TEST_CASE("f32 sat clamps to [0, 1] and sends NaN to 0") {
  auto add_sat = [](KernelBuilder& b, auto x, auto y) { return b.Add(x, y, {.sat = true}); };
  CHECK(AsF32(Binary<F32>(0.7f, 0.7f, add_sat)) == 1.0f);
  CHECK(AsF32(Binary<F32>(0.2f, -0.7f, add_sat)) == 0.0f);
  CHECK(AsF32(Binary<F32>(0.25f, 0.25f, add_sat)) == 0.5f);
  CHECK(Binary<F32>(INFINITY, -INFINITY, add_sat) == 0);
}

TEST_CASE("f32 NaN results are canonical, min/max prefer numbers and order zeros") {
  CHECK(Binary<F32>(INFINITY, -INFINITY, Add) == 0x7FFFFFFFu);
  CHECK(Binary<F32>(0.0f, 0.0f, Div) == 0x7FFFFFFFu);
  CHECK(AsF32(Binary<F32>(NAN, 1.0f, Min)) == 1.0f);
  CHECK(AsF32(Binary<F32>(2.0f, NAN, Max)) == 2.0f);
  CHECK(Binary<F32>(NAN, NAN, Min) == 0x7FFFFFFFu);
  CHECK(Binary<F32>(-0.0f, 0.0f, Min) == 0x80000000u);
  CHECK(Binary<F32>(0.0f, -0.0f, Min) == 0x80000000u);
  CHECK(Binary<F32>(-0.0f, 0.0f, Max) == 0);
  CHECK(AsF32(Binary<F32>(1.0f, 0.0f, Div)) == INFINITY);
  CHECK(Unary<F32>(-0.0f, [](KernelBuilder& b, auto x) { return b.Abs(x); }) == 0);
  CHECK(Unary<F32>(2.0f, [](KernelBuilder& b, auto x) { return b.Neg(x); }) == Bits(-2.0f));
}

TEST_CASE("fma rounds once") {
  const float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  CHECK(AsF32(RunScalar([&](KernelBuilder& b) { return b.Fma(b.Const<F32>(a), a, c); })) == 0x1p-24f);
  CHECK(AsF32(RunScalar([&](KernelBuilder& b) { return b.Add(b.Mul(b.Const<F32>(a), a), c); })) == 0.0f);
  CHECK(AsF64(RunScalar([](KernelBuilder& b) { return b.Fma(b.Const<F64>(2.0), 3.0, 1.0); })) == 7.0);
}

TEST_CASE("f32 square roots, reciprocals and approximate functions") {
  auto un = [](auto op) { return [=](float x) { return AsF32(Unary<F32>(x, op)); }; };
  auto sqrt_rn = un([](KernelBuilder& b, auto x) { return b.Sqrt(x); });
  auto sqrt_approx = un([](KernelBuilder& b, auto x) { return b.Sqrt(x, {.mode = ir::Mode::kApprox}); });
  auto rsqrt = un([](KernelBuilder& b, auto x) { return b.Rsqrt(x); });
  auto rcp = un([](KernelBuilder& b, auto x) { return b.Rcp(x); });
  auto rcp_approx = un([](KernelBuilder& b, auto x) { return b.Rcp(x, {.mode = ir::Mode::kApprox}); });
  auto ex2 = un([](KernelBuilder& b, auto x) { return b.Ex2(x); });
  auto lg2 = un([](KernelBuilder& b, auto x) { return b.Lg2(x); });
  auto sin = un([](KernelBuilder& b, auto x) { return b.Sin(x); });
  auto cos = un([](KernelBuilder& b, auto x) { return b.Cos(x); });
  auto tanh = un([](KernelBuilder& b, auto x) { return b.Tanh(x); });
  CHECK(sqrt_rn(2.0f) == std::sqrt(2.0f));
  CHECK(std::isnan(sqrt_rn(-1.0f)));
  CHECK(sqrt_approx(16.0f) == 4.0f);
  CHECK(rsqrt(4.0f) == 0.5f);
  CHECK(rcp(4.0f) == 0.25f);
  CHECK(rcp_approx(0.0f) == INFINITY);
  CHECK(ex2(3.0f) == 8.0f);
  CHECK(ex2(-INFINITY) == 0.0f);
  CHECK(lg2(8.0f) == 3.0f);
  CHECK(lg2(0.0f) == -INFINITY);
  CHECK(std::isnan(lg2(-1.0f)));
  CHECK(sin(0.0f) == 0.0f);
  CHECK(cos(0.0f) == 1.0f);
  CHECK(tanh(20.0f) == 1.0f);
  CHECK(std::fabs(sin(1.0f) - std::sin(1.0f)) <= 1e-6f);
}

TEST_CASE("f16, bf16 and f16x2 arithmetic round to the format") {
  CHECK(Binary<F16>(2048.0f, 1.0f, Add) == 0x6800);  // 2049 is a tie: to even, 2048
  CHECK(Binary<F16>(2048.0f, 3.0f, Add) == 0x6802);  // 2051 -> 2052
  CHECK(Binary<F16>(0.1f, 10.0f, Mul) == 0x3C00);    // 0.099975586 * 10 is a tie between 1-2^-11 and 1: even
  CHECK(Binary<F16>(65504.0f, 65504.0f, Add) == 0x7C00);  // overflow to inf
  CHECK(Binary<BF16>(1.0f, 0x1p-8f, Add) == 0x3F80);  // tie: to even
  CHECK(Binary<BF16>(1.0f, 0x1p-7f, Add) == 0x3F81);
  CHECK(Binary<F16x2>(0x40003C00u, 0x40003C00u, Add) == 0x44004000u);  // lanes (1, 2) + (1, 2)
  CHECK(Binary<F16>(-0.0f, 0.0f, Min) == 0x8000);
  CHECK(RunScalar([](KernelBuilder& b) { return b.Fma(b.Const<F16>(2.0f), b.Const<F16>(3.0f), b.Const<F16>(1.0f)); }) ==
        0x4700);  // 7
}

TEST_CASE("half-format fma and wide integer conversions round once") {
  // bf16 1.0625 * 1.0625 is a tie; the tiny c must break it upward.
  CHECK(RunScalar([](KernelBuilder& b) {
          Value<BF16> a = b.Bitcast<BF16>(b.Const<U16>(0x3F88));
          return b.Fma(a, a, b.Bitcast<BF16>(b.Const<U16>(0x0D80)));
        }) == 0x3F91);
  auto to_bf16 = [](auto value, ir::Rounding r) {
    return RunScalar([&](KernelBuilder& b) {
      using T = std::conditional_t<std::is_signed_v<decltype(value)>, S64, U64>;
      return b.Cvt<BF16>(b.Const<T>(value), {.rounding = r});
    });
  };
  CHECK(to_bf16((int64_t{1} << 62) + (int64_t{1} << 54) + 1, R::kRn) == 0x5E81);
  CHECK(to_bf16((uint64_t{1} << 62) + 1, R::kRp) == 0x5E81);
  CHECK(to_bf16((uint64_t{1} << 62) + 1, R::kRn) == 0x5E80);
  CHECK(to_bf16(-((int64_t{1} << 62) + 1), R::kRm) == 0xDE81);
}

TEST_CASE("16-bit multiplication wraps (no int overflow on the host)") {
  CHECK(Binary<U16>(uint16_t{0xFFFF}, uint16_t{0xFFFF}, Mul) == 1);
  CHECK(Binary<S16>(int16_t{-32768}, int16_t{-1}, Mul) == 0x8000);
}

TEST_CASE("rcp.approx.ftz.f64 flushes f64 subnormals") {
  const double tiny = std::numeric_limits<double>::denorm_min();
  CHECK(AsF64(Unary<F64>(1e308, [](KernelBuilder& b, auto x) {
          return b.Rcp(x, {.mode = ir::Mode::kApprox, .ftz = true});
        })) == 0.0);  // 1e-308 is subnormal
  CHECK(AsF64(Unary<F64>(tiny, [](KernelBuilder& b, auto x) {
          return b.Rcp(x, {.mode = ir::Mode::kApprox, .ftz = true});
        })) == INFINITY);
  CHECK(AsF64(Unary<F64>(1e308, [](KernelBuilder& b, auto x) { return b.Rcp(x); })) == 1.0 / 1e308);
}

TEST_CASE("saturation sends -0 to +0, ftz applies to f16 abs") {
  CHECK(RunScalar([](KernelBuilder& b) { return b.Cvt<F64>(b.Const<F32>(-0.0f), {.sat = true}); }) == 0);
  CHECK(Binary<F32>(-0.0f, 0.0f, [](KernelBuilder& b, auto x, auto y) { return b.Mul(x, y, {.sat = true}); }) == 0);
  CHECK(RunScalar([](KernelBuilder& b) { return b.Abs(b.Bitcast<F16>(b.Const<U16>(0x8001)), {.ftz = true}); }) == 0);
  CHECK(RunScalar([](KernelBuilder& b) { return b.Abs(b.Bitcast<F16>(b.Const<U16>(0x8001))); }) == 0x0001);
}

template <ScalarTag To, ScalarTag From>
uint64_t Cvt(typename From::CType v, CvtOpts o = {}) {
  return RunScalar([&](KernelBuilder& b) { return b.Cvt<To>(b.Const<From>(v), o); });
}

TEST_CASE("cvt float to integer: rounding, saturation, NaN") {
  CHECK(Cvt<S32, F32>(-2.7f) == static_cast<uint32_t>(-2));  // default rzi
  CHECK(Cvt<S32, F32>(2.5f, {.rounding = R::kRni}) == 2);
  CHECK(Cvt<S32, F32>(3.5f, {.rounding = R::kRni}) == 4);
  CHECK(Cvt<S32, F32>(-2.1f, {.rounding = R::kRmi}) == static_cast<uint32_t>(-3));
  CHECK(Cvt<S32, F32>(2.1f, {.rounding = R::kRpi}) == 3);
  CHECK(Cvt<S32, F32>(1e10f) == static_cast<uint32_t>(kIntMax));
  CHECK(Cvt<S32, F32>(-1e10f) == static_cast<uint32_t>(kIntMin));
  CHECK(Cvt<S32, F32>(NAN) == 0);
  CHECK(Cvt<U32, F32>(-5.0f) == 0);
  CHECK(Cvt<U8, F32>(300.0f) == 255);
  CHECK(Cvt<S8, F64>(-300.0) == 0x80);  // -128 (st.s8 stores one byte)
  CHECK(Cvt<U64, F64>(1e30) == ~uint64_t{0});
  CHECK(Cvt<S64, F64>(-3.99) == static_cast<uint64_t>(-3));
}

TEST_CASE("cvt integer to integer: truncation, extension, saturation") {
  CHECK(Cvt<U8, U32>(300u) == 44);
  CHECK(Cvt<U8, S32>(300, {.sat = true}) == 255);
  CHECK(Cvt<U8, S32>(-5, {.sat = true}) == 0);
  CHECK(Cvt<S64, S32>(-1) == ~uint64_t{0});
  CHECK(Cvt<U64, S32>(-1) == ~uint64_t{0});
  CHECK(Cvt<U64, U32>(0xFFFFFFFFu) == 0xFFFFFFFFu);
  CHECK(Cvt<S16, S64>(int64_t{-40000}, {.sat = true}) == 0x8000);
  CHECK(Cvt<S32, U32>(0xFFFFFFFFu, {.sat = true}) == static_cast<uint32_t>(kIntMax));
  CHECK(RunScalar([](KernelBuilder& b) { return b.Cvt<S32>(b.Cvt<S8>(b.Const<S32>(200))); }) ==
        static_cast<uint32_t>(-56));
}

TEST_CASE("cvt integer to float with rounding") {
  CHECK(AsF32(Cvt<F32, S32>(16777217)) == 16777216.0f);
  CHECK(AsF32(Cvt<F32, S32>(16777217, {.rounding = R::kRp})) == 16777218.0f);
  CHECK(Cvt<F32, U32>(0xFFFFFFFFu, {.rounding = R::kRz}) == 0x4F7FFFFFu);
  CHECK(AsF32(Cvt<F32, U32>(0xFFFFFFFFu)) == 4294967296.0f);
  CHECK(AsF64(Cvt<F64, S64>(int64_t{-5})) == -5.0);
  CHECK(Cvt<F16, S32>(70000) == 0x7C00);
}

TEST_CASE("cvt between float types") {
  CHECK(AsF32(Cvt<F32, F64>(0.1)) == 0.1f);
  CHECK(Cvt<F32, F64>(0.1, {.rounding = R::kRz}) == 0x3DCCCCCCu);
  CHECK(AsF64(Cvt<F64, F32>(0.1f)) == static_cast<double>(0.1f));
  CHECK(Cvt<F16, F32>(65520.0f) == 0x7C00);                            // tie past the largest: inf
  CHECK(Cvt<F16, F32>(65520.0f, {.rounding = R::kRz}) == 0x7BFF);
  CHECK(Cvt<F16, F32>(1e-7f) == 0x0002);                               // subnormal f16
  CHECK(AsF32(RunScalar([](KernelBuilder& b) { return b.Cvt<F32>(b.Bitcast<F16>(b.Const<U16>(1))); })) == 0x1p-24f);
  CHECK(Cvt<BF16, F32>(1.00390625f) == 0x3F80);
  CHECK(AsF32(RunScalar([](KernelBuilder& b) { return b.Cvt<F32>(b.Bitcast<BF16>(b.Const<U16>(0x3F81))); })) ==
        1.0078125f);
  CHECK(AsF32(Cvt<F32, F32>(2.5f, {.rounding = R::kRni})) == 2.0f);
  CHECK(Cvt<F32, F32>(1e-40f, {.ftz = true}) == 0);
  CHECK(AsF32(Cvt<F32, F32>(1.5f, {.sat = true})) == 1.0f);
}

TEST_CASE("cvt to and from predicates") {
  CHECK(RunScalar([](KernelBuilder& b) { return b.Cvt<U32>(b.Lt(b.Const<U32>(1), 2u)); }) == 1);
  CHECK(RunScalar([](KernelBuilder& b) { return b.Cvt<F32>(b.Lt(b.Const<U32>(3), 2u)); }) == 0);
  CHECK(RunScalar([](KernelBuilder& b) { return b.Cvt<Pred>(b.Const<U32>(7)); }) == 1);
}

template <ScalarTag T>
uint64_t Cmp(ir::CmpOp op, typename T::CType a, typename T::CType c) {
  return RunScalar([&](KernelBuilder& b) { return b.Setp(op, b.Const<T>(a), c); });
}

TEST_CASE("setp: signed, unsigned and unordered comparisons") {
  using C = ir::CmpOp;
  CHECK(Cmp<S32>(C::kLt, -1, 1) == 1);
  CHECK(Cmp<U32>(C::kLt, 0xFFFFFFFFu, 1u) == 0);
  CHECK(Cmp<U32>(C::kLo, 1u, 0xFFFFFFFFu) == 1);
  CHECK(Cmp<U32>(C::kHs, 5u, 5u) == 1);
  CHECK(Cmp<U32>(C::kHi, 5u, 5u) == 0);
  CHECK(Cmp<F32>(C::kEq, NAN, NAN) == 0);
  CHECK(Cmp<F32>(C::kNe, NAN, 1.0f) == 0);
  CHECK(Cmp<F32>(C::kNeu, NAN, 1.0f) == 1);
  CHECK(Cmp<F32>(C::kEqu, NAN, NAN) == 1);
  CHECK(Cmp<F32>(C::kLtu, NAN, 1.0f) == 1);
  CHECK(Cmp<F32>(C::kGe, 2.0f, 2.0f) == 1);
  CHECK(Cmp<F32>(C::kNum, 1.0f, 2.0f) == 1);
  CHECK(Cmp<F32>(C::kNan, 1.0f, NAN) == 1);
  CHECK(Cmp<F32>(C::kEq, -0.0f, 0.0f) == 1);
  CHECK(Cmp<F64>(C::kLe, 1.0, 2.0) == 1);
  CHECK(Cmp<F16>(C::kGt, 2.0f, 1.0f) == 1);
  auto combine = [](ir::BoolOp op, bool c) {
    return RunScalar([&](KernelBuilder& b) {
      return b.SetpCombine(ir::CmpOp::kLt, op, b.Const<S32>(1), 2, b.Const<Pred>(c));
    });
  };
  CHECK(combine(ir::BoolOp::kAnd, false) == 0);
  CHECK(combine(ir::BoolOp::kOr, false) == 1);
  CHECK(combine(ir::BoolOp::kXor, true) == 0);
}

TEST_CASE("selp picks by predicate") {
  CHECK(RunScalar([](KernelBuilder& b) { return b.Select(b.Const<Pred>(true), b.Const<F32>(1.5f), 2.5f); }) ==
        Bits(1.5f));
  CHECK(RunScalar([](KernelBuilder& b) { return b.Select(b.Const<Pred>(false), b.Const<S64>(1), int64_t{-2}); }) ==
        static_cast<uint64_t>(-2));
}

// ---- instructions added through the operand signatures (issue 9)

TEST_CASE("prmt.b32 in the general form and every mode") {
  // {b, a} holds bytes 23 42 61 80 (a, bytes 0..3) C4 D3 E2 F1 (b, bytes 4..7).
  using M = KernelBuilder::PrmtMode;
  auto prmt = [](uint32_t c, M mode) {
    return RunScalar([&](KernelBuilder& b) { return b.Prmt(b.Const<B32>(0x80614223u), 0xF1E2D3C4u, c, mode); });
  };
  CHECK(prmt(0x3210, M::kGeneral) == 0x80614223u);
  CHECK(prmt(0x7654, M::kGeneral) == 0xF1E2D3C4u);
  CHECK(prmt(0x0004, M::kGeneral) == 0x232323C4u);
  CHECK(prmt(0x000B, M::kGeneral) == 0x232323FFu);  // bit 3: replicate the sign of byte 3 (0x80)
  CHECK(prmt(0x0009, M::kGeneral) == 0x23232300u);  // byte 1 (0x42) is positive
  CHECK(prmt(1, M::kF4e) == 0xC4806142u);
  CHECK(prmt(0, M::kB4e) == 0xD3E2F123u);
  CHECK(prmt(2, M::kRc8) == 0x61616161u);
  CHECK(prmt(1, M::kEcl) == 0x80614242u);
  CHECK(prmt(2, M::kEcr) == 0x61614223u);
  CHECK(prmt(1, M::kRc16) == 0x80618061u);
  CHECK(prmt(0x7, M::kF4e) == 0xE2D3C480u);  // only c[1:0] (3) counts in the modes
}

TEST_CASE("lop3.b32 computes its table on every bit") {
  const uint32_t a = 0xF0F0FF00u, b = 0xCCCC0FF0u, c = 0xAAAA3C3Cu;
  auto lop3 = [&](uint8_t lut) {
    return RunScalar([&](KernelBuilder& k) { return k.Lop3(k.Const<B32>(a), b, c, lut); });
  };
  CHECK(lop3(0xEA) == ((a & b) | c));
  CHECK(lop3(0xF8) == (a | (b & c)));
  CHECK(lop3(0x96) == (a ^ b ^ c));
  CHECK(lop3(0xE8) == ((a & b) | (a & c) | (b & c)));  // majority
  CHECK(lop3(0x00) == 0);
  CHECK(lop3(0xFF) == 0xFFFFFFFFu);
  CHECK(lop3(0x0F) == static_cast<uint32_t>(~a));
}

TEST_CASE("dp4a and dp2a with signed and unsigned bytes") {
  // a bytes: 0xFF (255 or -1), 2, 0x80 (128 or -128), 7; b bytes: 3, 0xFE (254 or -2), 5, 1.
  const uint32_t a = 0x0780'02FFu, b = 0x0105'FE03u;
  auto dp4a = [&](auto ta, auto tb, auto c) {
    return RunScalar([&](KernelBuilder& k) {
      return k.Dp4a(k.Const<decltype(ta)>(static_cast<typename decltype(ta)::CType>(a)),
                    k.Const<decltype(tb)>(static_cast<typename decltype(tb)::CType>(b)), c);
    });
  };
  CHECK(dp4a(U32{}, U32{}, 10u) == 10u + 255 * 3 + 2 * 254 + 128 * 5 + 7 * 1);
  CHECK(static_cast<int32_t>(dp4a(S32{}, S32{}, -10)) == -10 + (-1) * 3 + 2 * (-2) + (-128) * 5 + 7 * 1);
  CHECK(static_cast<int32_t>(dp4a(S32{}, U32{}, 0)) == (-1) * 3 + 2 * 254 + (-128) * 5 + 7 * 1);
  CHECK(static_cast<int32_t>(dp4a(U32{}, S32{}, 0)) == 255 * 3 + 2 * (-2) + 128 * 5 + 7 * 1);
  CHECK(dp4a(U32{}, U32{}, 0xFFFFFFFFu) == static_cast<uint32_t>(0xFFFFFFFFull + 255 * 3 + 2 * 254 + 128 * 5 + 7));  // wraps
  // dp2a: a's halves 0x02FF (767) and 0x0780 (1920) as s16/u16 alike; b bytes 0,1 (lo) or 2,3 (hi).
  auto dp2a = [&](bool hi) {
    return RunScalar([&](KernelBuilder& k) { return k.Dp2a(hi, k.Const<S32>(static_cast<int32_t>(a)), k.Const<S32>(static_cast<int32_t>(b)), 1); });
  };
  CHECK(static_cast<int32_t>(dp2a(false)) == 1 + 767 * 3 + 1920 * (-2));
  CHECK(static_cast<int32_t>(dp2a(true)) == 1 + 767 * 5 + 1920 * 1);
  const uint32_t neg = 0x8000'FFFFu;  // halves -1 and -32768 when signed
  CHECK(static_cast<int32_t>(RunScalar([&](KernelBuilder& k) {
          return k.Dp2a(false, k.Const<S32>(static_cast<int32_t>(neg)), k.Const<U32>(0x0000'02FFu), 0);
        })) == -1 * 255 + -32768 * 2);
}

TEST_CASE("mov packs two halves and unpacks them") {
  CHECK(RunScalar([](KernelBuilder& b) { return b.Pack(b.Const<B16>(0x1234), b.Const<B16>(0xABCD)); }) == 0xABCD1234u);
  CHECK(RunScalar([](KernelBuilder& b) { return b.Pack(b.Const<B32>(0x89ABCDEFu), b.Const<B32>(0x01234567u)); }) ==
        0x0123456789ABCDEFull);
  CHECK(RunScalar([](KernelBuilder& b) {
          auto [lo, hi] = b.Unpack(b.Const<B64>(0x0123456789ABCDEFull));
          return b.Pack(hi, lo);  // swapped
        }) == 0x89ABCDEF01234567ull);
  CHECK(RunScalar([](KernelBuilder& b) {
          auto parts = b.Unpack(b.Const<B32>(0xABCD1234u));
          return b.Pack(parts[1], parts[0]);
        }) == 0x1234ABCDu);
}

// Issue 11 item 19: setp on packed halves, ex2 and tanh on bf16. The same
// values (but for tanh's approximation) came out of an H100 for the same PTX.
TEST_CASE("setp.f16x2 and .bf16x2 compare each half into its own predicate") {
  // The result as bits: 1 for the low halves' predicate, 2 for the high halves'.
  auto pair = [](auto tag, uint32_t a, uint32_t b, ir::CmpOp cmp, ir::BoolOp bool_op = ir::BoolOp::kNone,
                 bool c = false) {
    using X = decltype(tag);
    return RunScalar([&](KernelBuilder& k) {
      std::array<Value<Pred>, 2> p = k.SetpPair(cmp, k.Bitcast<X>(k.Const<U32>(a)), k.Bitcast<X>(k.Const<U32>(b)),
                                                false, bool_op, k.Setp(ir::CmpOp::kEq, k.Const<U32>(c ? 1 : 0), 1u));
      return k.Add(k.Select(p[0], k.Const<U32>(1), 0u), k.Select(p[1], k.Const<U32>(2), 0u));
    });
  };
  // f16x2 (1, 3) vs (2, 2).
  CHECK(pair(F16x2{}, 0x42003C00u, 0x40004000u, ir::CmpOp::kLt) == 1);
  CHECK(pair(F16x2{}, 0x42003C00u, 0x40004000u, ir::CmpOp::kGt) == 2);
  CHECK(pair(F16x2{}, 0x42003C00u, 0x42003C00u, ir::CmpOp::kEq) == 3);
  // (NaN, 1) vs (1, 1): unordered comparisons hold for the NaN half only.
  CHECK(pair(F16x2{}, 0x3C007E00u, 0x3C003C00u, ir::CmpOp::kLtu) == 1);
  CHECK(pair(F16x2{}, 0x3C007E00u, 0x3C003C00u, ir::CmpOp::kGe) == 2);
  CHECK(pair(F16x2{}, 0x3C007E00u, 0x3C003C00u, ir::CmpOp::kNan) == 1);
  // bf16x2 (1, 3) vs (2, 2), combined with a third predicate.
  CHECK(pair(BF16x2{}, 0x40403F80u, 0x40004000u, ir::CmpOp::kGt, ir::BoolOp::kAnd, true) == 2);
  CHECK(pair(BF16x2{}, 0x40403F80u, 0x40004000u, ir::CmpOp::kGt, ir::BoolOp::kAnd, false) == 0);
  CHECK(pair(BF16x2{}, 0x40403F80u, 0x40004000u, ir::CmpOp::kGt, ir::BoolOp::kXor, true) == 1);
  CHECK(pair(BF16x2{}, 0x40403F80u, 0x40004000u, ir::CmpOp::kLe, ir::BoolOp::kOr, true) == 3);
}

TEST_CASE("ex2.approx.ftz and tanh.approx on bf16 and bf16x2") {
  auto bf16 = [](uint16_t bits, auto op) {
    return RunScalar([&](KernelBuilder& k) { return op(k, k.Bitcast<BF16>(k.Const<U16>(bits))); });
  };
  auto bf16x2 = [](uint32_t bits, auto op) {
    return RunScalar([&](KernelBuilder& k) { return op(k, k.Bitcast<BF16x2>(k.Const<U32>(bits))); });
  };
  auto ex2 = [](KernelBuilder& k, auto x) { return k.Ex2(x); };  // .ftz: the only ex2 on bf16
  auto tanh = [](KernelBuilder& k, auto x) { return k.Tanh(x); };
  CHECK(bf16(0x3F80, ex2) == 0x4000);  // 2^1
  CHECK(bf16(0xBF80, ex2) == 0x3F00);  // 2^-1
  CHECK(bf16(0xC302, ex2) == 0x0000);  // 2^-130 is subnormal in bf16 (0x0008): flushed
  CHECK(bf16(0x8001, ex2) == 0x3F80);  // a subnormal input is flushed: 2^-0
  CHECK(bf16x2(0xBF803F80u, ex2) == 0x3F004000u);
  // tanh(0.5) = 0.46212 rounds to 0x3EED; an H100 gives 0x3EEC (.approx, one bf16 ulp off): the emulator
  // rounds the exact value, as for every approximate instruction without approx_worst_error.
  CHECK(bf16(0x3F00, tanh) == 0x3EED);
  CHECK(bf16(0x41A0, tanh) == 0x3F80);  // tanh(20) = 1
  CHECK(bf16x2(0xBF003F00u, tanh) == 0xBEED3EEDu);
}

// ---- warp collectives: ldmatrix/stmatrix, redux.sync, match.sync; packing cvt

constexpr ir::StateSpace kGlobalSpace = ir::StateSpace::kGlobal;
constexpr ir::StateSpace kSharedSpace = ir::StateSpace::kShared;

// Runs `k` (params: in, out; both u32 arrays) on one block of `threads`;
// returns `out`, or the launch's error.
absl::StatusOr<std::vector<uint32_t>> RunInOut(const ir::Kernel& k, const std::vector<uint32_t>& in, size_t out_words,
                                               uint32_t threads = 32) {
  auto emu = runtime::MakeEmulator({.worker_threads = 1});
  auto a = runtime::Buffer<uint32_t>::Allocate(*emu, in.size());
  auto o = runtime::Buffer<uint32_t>::Allocate(*emu, out_words);
  REQUIRE(a.ok());
  REQUIRE(o.ok());
  REQUIRE(a->CopyFrom(in).ok());
  REQUIRE(o->CopyFrom(std::vector<uint32_t>(out_words, 0xDEADBEEFu)).ok());
  auto loaded = emu->Load(k);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  if (absl::Status s = emu->Launch(**loaded, {.grid = {1}, .block = {threads}}, {*a, *o}); !s.ok()) return s;
  return *o->ToHost();
}

// "OK" or the error's message.
std::string Said(const absl::Status& s) { return s.ok() ? "OK" : std::string(s.message()); }

std::vector<uint32_t> RandomWords(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (uint32_t& w : v) w = static_cast<uint32_t>(rng());
  return v;
}

// The ldmatrix/stmatrix tests keep 32 rows of 16 bytes in a shared tile;
// lane i gives the address of row slot (5i + 3) % 32, so the matrices' rows
// are scattered (and every lane's address differs).
uint32_t RowSlot(uint32_t lane) { return (5 * lane + 3) % 32; }

// Element (row, col) of matrix m when the tile's 128 words are `tile`.
uint16_t TileElement(const std::vector<uint32_t>& tile, int m, int row, int col) {
  const uint32_t word = tile[RowSlot(8 * m + row) * 4 + col / 2];
  return static_cast<uint16_t>(word >> (16 * (col % 2)));
}

// The row address lane `lane` gives (plus `skew` bytes on lane `skew_lane`).
Value<U32> RowAddress(KernelBuilder& b, Symbol<B32> tile, Value<U32> lane, uint32_t skew_lane, uint32_t skew) {
  Value<U32> slot = b.And(b.Add(b.Mul(lane, 5u), 3u), 31u);
  Value<U32> addr = b.Mad(slot, 16u, b.SymbolAddr(tile));
  return b.Select(b.Eq(lane, skew_lane), b.Add(addr, skew), addr);
}

// in: the tile's 128 words; out[lane * N + m]: lane's register m.
int ldmatrix_line = 0;  // where LdMatrixKernel calls LdMatrix
template <int N>
ir::Kernel LdMatrixKernel(bool trans, uint32_t skew_lane = 99, uint32_t skew = 0) {
  KernelBuilder b("ldmatrix_test", ir::Target::kSm75);
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<B32> tile = b.Shared<B32>("tile", 128, 16);
  Value<U32> lane = b.LaneId();
  for (uint32_t k = 0; k < 4; ++k) {
    Value<U32> i = b.Add(b.Mul(lane, 4u), k);
    b.Store(kSharedSpace, Address(b.ElementAddr(tile, i)), b.Load<B32>(kGlobalSpace, Address(b.ElementAddr<B32>(in, i))));
  }
  b.BarSync();
  ldmatrix_line = __LINE__ + 1;
  std::array<Value<B32>, N> frags = b.LdMatrix<N>(Address(RowAddress(b, tile, lane, skew_lane, skew)), trans);
  for (int m = 0; m < N; ++m) {
    Value<U32> i = b.Add(b.Mul(lane, static_cast<uint32_t>(N)), static_cast<uint32_t>(m));
    b.Store(kGlobalSpace, Address(b.ElementAddr<B32>(out, i)), frags[m]);
  }
  return testing::FinishOrDie(b);
}

// in[lane * N + m]: lane's register m; out: the tile's 128 words after the
// stmatrix (rows no lane addresses stay 0).
template <int N>
ir::Kernel StMatrixKernel(bool trans) {
  KernelBuilder b("stmatrix_test", ir::Target::kSm90);
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Symbol<B32> tile = b.Shared<B32>("tile", 128, 16);
  Value<U32> lane = b.LaneId();
  for (uint32_t k = 0; k < 4; ++k) {
    b.Store(kSharedSpace, Address(b.ElementAddr(tile, b.Add(b.Mul(lane, 4u), k))), b.Const<B32>(0));
  }
  b.BarSync();
  std::array<Value<B32>, N> frags;
  for (int m = 0; m < N; ++m) {
    Value<U32> i = b.Add(b.Mul(lane, static_cast<uint32_t>(N)), static_cast<uint32_t>(m));
    frags[m] = b.Load<B32>(kGlobalSpace, Address(b.ElementAddr<B32>(in, i)));
  }
  b.StMatrix(Address(RowAddress(b, tile, lane, 99, 0)), frags, trans);
  b.BarSync();
  for (uint32_t k = 0; k < 4; ++k) {
    Value<U32> i = b.Add(b.Mul(lane, 4u), k);
    b.Store(kGlobalSpace, Address(b.ElementAddr<B32>(out, i)), b.Load<B32>(kSharedSpace, Address(b.ElementAddr(tile, i))));
  }
  return testing::FinishOrDie(b);
}

template <int N>
void CheckLdMatrix(bool trans, uint32_t seed) {
  INFO("ldmatrix.x" << N << (trans ? ".trans" : "") << ", seed " << seed);
  const std::vector<uint32_t> tile = RandomWords(128, seed);
  absl::StatusOr<std::vector<uint32_t>> out = RunInOut(LdMatrixKernel<N>(trans), tile, 32 * N);
  REQUIRE(Said(out.status()) == "OK");
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (int m = 0; m < N; ++m) {
      uint32_t want = 0;
      for (int h = 0; h < 2; ++h) {
        int row = static_cast<int>(lane / 4), col = static_cast<int>(2 * (lane % 4)) + h;
        if (trans) std::swap(row, col);
        want |= uint32_t{TileElement(tile, m, row, col)} << (16 * h);
      }
      INFO("lane " << lane << " register " << m);
      CHECK((*out)[lane * N + m] == want);
    }
  }
}

template <int N>
void CheckStMatrix(bool trans, uint32_t seed) {
  INFO("stmatrix.x" << N << (trans ? ".trans" : "") << ", seed " << seed);
  const std::vector<uint32_t> frags = RandomWords(32 * N, seed);
  absl::StatusOr<std::vector<uint32_t>> out = RunInOut(StMatrixKernel<N>(trans), frags, 128);
  REQUIRE(Said(out.status()) == "OK");
  std::vector<uint32_t> want(128, 0);
  for (int m = 0; m < N; ++m) {
    for (int row = 0; row < 8; ++row) {
      for (int col = 0; col < 8; ++col) {
        // Element (row, col) of matrix m comes from lane 4 row + col / 2, half col % 2 (.trans: transposed).
        const int r = trans ? col : row, c = trans ? row : col;
        const uint32_t lane = static_cast<uint32_t>(4 * r + c / 2);
        const uint32_t half = (frags[lane * N + m] >> (16 * (c % 2))) & 0xFFFF;
        want[RowSlot(8 * m + row) * 4 + col / 2] |= half << (16 * (col % 2));
      }
    }
  }
  CHECK(*out == want);
}

TEST_CASE("ldmatrix: lane l gets row l/4, columns 2(l%4) and +1 of each matrix (.trans: of the transpose)") {
  // Known answers first: each element holds its row slot * 8 + column.
  std::vector<uint32_t> tile(128);
  for (uint32_t slot = 0; slot < 32; ++slot) {
    for (uint32_t w = 0; w < 4; ++w) tile[slot * 4 + w] = (slot * 8 + 2 * w) | (slot * 8 + 2 * w + 1) << 16;
  }
  absl::StatusOr<std::vector<uint32_t>> x1 = RunInOut(LdMatrixKernel<1>(false), tile, 32);
  REQUIRE(Said(x1.status()) == "OK");
  CHECK((*x1)[0] == (24u | 25u << 16));   // lane 0: row 0 (slot 3), columns 0, 1
  CHECK((*x1)[5] == (66u | 67u << 16));   // lane 5: row 1 (slot 8), columns 2, 3
  CHECK((*x1)[31] == (54u | 55u << 16));  // lane 31: row 7 (slot 38 % 32 = 6), columns 6, 7
  absl::StatusOr<std::vector<uint32_t>> x1t = RunInOut(LdMatrixKernel<1>(true), tile, 32);
  REQUIRE(Said(x1t.status()) == "OK");
  CHECK((*x1t)[0] == (24u | 64u << 16));  // lane 0: column 0 of rows 0 (slot 3) and 1 (slot 8)
  CHECK((*x1t)[5] == (105u | 145u << 16));  // lane 5: column 1 of rows 2 (slot 13) and 3 (slot 18)
  for (uint32_t seed : {1u, 2u}) {
    for (bool trans : {false, true}) {
      CheckLdMatrix<1>(trans, seed);
      CheckLdMatrix<2>(trans, seed);
      CheckLdMatrix<4>(trans, seed);
    }
  }
}

TEST_CASE("stmatrix stores what ldmatrix would load, .x1/.x2/.x4, with and without .trans") {
  for (uint32_t seed : {3u, 4u}) {
    for (bool trans : {false, true}) {
      CheckStMatrix<1>(trans, seed);
      CheckStMatrix<2>(trans, seed);
      CheckStMatrix<4>(trans, seed);
    }
  }
}

TEST_CASE("ldmatrix: a misaligned row address and a partial warp are errors naming the lane") {
  // Lane 9 gives row 1 of matrix 1 at row slot 16 (byte 256), 8 bytes off.
  ir::Kernel k = LdMatrixKernel<2>(false, /*skew_lane=*/9, /*skew=*/8);
  absl::StatusOr<std::vector<uint32_t>> out = RunInOut(k, RandomWords(128, 5), 64);
  CHECK(Said(out.status()) ==
        StrCat("kernel ldmatrix_test: misaligned shared load of 16 bytes at shared address 264: the access needs "
               "16-byte alignment; block (0,0,0) thread (9,0,0) at `ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r28, "
               "%r29}, [%r27];` (emulator_ops_test.cc:", ldmatrix_line, ")"));
  // Lane 9's address is not read by .x1 (only lanes 0-7 give rows).
  CHECK(Said(RunInOut(LdMatrixKernel<1>(false, 9, 8), RandomWords(128, 5), 32).status()) == "OK");
  absl::StatusOr<std::vector<uint32_t>> partial = RunInOut(LdMatrixKernel<1>(false), RandomWords(128, 5), 32, 16);
  CHECK(Said(partial.status()) ==
        StrCat("kernel ldmatrix_test: ldmatrix.sync.aligned.m8n8 needs all 32 lanes of the warp, but lane 16 is not "
               "in the block; block (0,0,0) thread (0,0,0) at `ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r28}, "
               "[%r27];` (emulator_ops_test.cc:", ldmatrix_line, ")"));
}

// out[lane * 8 + k]: redux add.u32, min.u32, max.u32, min.s32, max.s32, and, or, xor of `in` over the
// lane's member group (lanes 0-11 and 12-31, each with its own mask).
TEST_CASE("redux.sync reduces over the member mask only") {
  KernelBuilder b("redux_test", ir::Target::kSm80);
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> lane = b.LaneId();
  Value<U32> v = b.Load<U32>(kGlobalSpace, Address(b.ElementAddr<U32>(in, lane)));
  Value<S32> sv = b.Bitcast<S32>(v);
  Value<U32> mask = b.Select(b.Lt(lane, 12u), b.Const<U32>(0x00000FFFu), 0xFFFFF000u);
  using ir::AtomOp;
  std::array<Value<U32>, 8> r = {
      b.Redux(AtomOp::kAdd, v, mask),
      b.Redux(AtomOp::kMin, v, mask),
      b.Redux(AtomOp::kMax, v, mask),
      b.Bitcast<U32>(b.Redux(AtomOp::kMin, sv, mask)),
      b.Bitcast<U32>(b.Redux(AtomOp::kMax, sv, mask)),
      b.Redux(AtomOp::kAnd, v, mask),
      b.Redux(AtomOp::kOr, v, mask),
      b.Redux(AtomOp::kXor, v, mask)};
  for (uint32_t k = 0; k < 8; ++k) {
    b.Store(kGlobalSpace, Address(b.ElementAddr<U32>(out, b.Add(b.Mul(lane, 8u), k))), r[k]);
  }
  ir::Kernel kernel = testing::FinishOrDie(b);
  std::vector<uint32_t> in_words = RandomWords(32, 6);
  in_words[3] = 0x80000000u;  // the signed minimum in the first group
  in_words[20] = 0x7FFFFFFFu;
  absl::StatusOr<std::vector<uint32_t>> got = RunInOut(kernel, in_words, 256);
  REQUIRE(Said(got.status()) == "OK");
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t lo = lane < 12 ? 0 : 12, hi = lane < 12 ? 12 : 32;
    uint32_t add = 0, umin = UINT32_MAX, umax = 0, band = UINT32_MAX, bor = 0, bxor = 0;
    int32_t smin = INT32_MAX, smax = INT32_MIN;
    for (uint32_t j = lo; j < hi; ++j) {
      const uint32_t x = in_words[j];
      add += x;
      umin = std::min(umin, x);
      umax = std::max(umax, x);
      smin = std::min(smin, static_cast<int32_t>(x));
      smax = std::max(smax, static_cast<int32_t>(x));
      band &= x;
      bor |= x;
      bxor ^= x;
    }
    INFO("lane " << lane);
    CHECK(std::vector<uint32_t>(got->begin() + lane * 8, got->begin() + lane * 8 + 8) ==
          std::vector<uint32_t>{add, umin, umax, static_cast<uint32_t>(smin), static_cast<uint32_t>(smax), band, bor,
                                bxor});
  }
  CHECK((*got)[3] == 0x80000000u);       // min.s32 of the first group
  CHECK((*got)[20 * 8 + 4] == 0x7FFFFFFFu);  // max.s32 of the second
}

// out[lane * 5 + k]: match.any.b32, match.all.b32 and its predicate, match.any.b64, match.all.b64 over
// the lane's member group (lanes 0-11 and 12-31).
TEST_CASE("match.any.sync and match.all.sync over partial member masks, b32 and b64") {
  KernelBuilder b("match_test", ir::Target::kSm80);
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> lane = b.LaneId();
  Value<U32> v = b.Load<U32>(kGlobalSpace, Address(b.ElementAddr<U32>(in, lane)));
  // The 64-bit value differs only in its high word: lanes 0-11 hold lane % 3 there, the others 7.
  Value<U64> wide = b.Or(b.Shl(b.Cvt<U64>(v), 32u), b.Const<U64>(5));
  Value<U32> mask = b.Select(b.Lt(lane, 12u), b.Const<U32>(0x00000FFFu), 0xFFFFF000u);
  Value<U32> any = b.MatchAny(v, mask);
  auto [all, agree] = b.MatchAll(v, mask);
  Value<U32> any64 = b.MatchAny(wide, mask);
  auto [all64, agree64] = b.MatchAll(wide, mask);
  std::array<Value<U32>, 6> r = {any, all, b.Cvt<U32>(agree), any64, all64, b.Cvt<U32>(agree64)};
  for (uint32_t k = 0; k < 6; ++k) {
    b.Store(kGlobalSpace, Address(b.ElementAddr<U32>(out, b.Add(b.Mul(lane, 6u), k))), r[k]);
  }
  ir::Kernel kernel = testing::FinishOrDie(b);
  std::vector<uint32_t> in_words(32);
  for (uint32_t l = 0; l < 32; ++l) in_words[l] = l < 12 ? l % 3 : 7;
  absl::StatusOr<std::vector<uint32_t>> got = RunInOut(kernel, in_words, 192);
  REQUIRE(Said(got.status()) == "OK");
  for (uint32_t lane = 0; lane < 32; ++lane) {
    INFO("lane " << lane);
    if (lane < 12) {
      const uint32_t same = 0x249u << (lane % 3);  // lanes l % 3 == lane % 3 among 0-11
      CHECK(std::vector<uint32_t>(got->begin() + lane * 6, got->begin() + lane * 6 + 6) ==
            std::vector<uint32_t>{same, 0, 0, same, 0, 0});
    } else {
      CHECK(std::vector<uint32_t>(got->begin() + lane * 6, got->begin() + lane * 6 + 6) ==
            std::vector<uint32_t>{0xFFFFF000u, 0xFFFFF000u, 1, 0xFFFFF000u, 0xFFFFF000u, 1});
    }
  }
}

TEST_CASE("cvt.rn.f16x2.f32 and .bf16x2.f32: the first source to the upper half, rounded to nearest even") {
  auto pack = [](auto tag, float hi, float lo, bool relu = false) {
    using To = decltype(tag);
    return RunScalar([&](KernelBuilder& k) { return k.CvtPack<To>(k.Const<F32>(hi), k.Const<F32>(lo), relu); });
  };
  CHECK(pack(F16x2{}, 1.0f, -2.0f) == 0x3C00C000u);
  CHECK(pack(F16x2{}, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f) == 0x3C003C02u);  // ties to even: down, then up
  CHECK(pack(F16x2{}, 70000.0f, -70000.0f) == 0x7C00FC00u);              // overflow to infinity
  CHECK(pack(F16x2{}, 0x1p-24f, 0x1p-26f) == 0x00010000u);               // the smallest subnormal; below half of it, 0
  CHECK(pack(F16x2{}, std::numeric_limits<float>::quiet_NaN(), 0.5f) == 0x7FFF3800u);
  CHECK(pack(F16x2{}, -3.0f, 3.0f, true) == 0x00004200u);  // .relu
  CHECK(pack(BF16x2{}, 1.0f, -2.0f) == 0x3F80C000u);
  CHECK(pack(BF16x2{}, AsF32(0x3F808000u), AsF32(0x3F818000u)) == 0x3F803F82u);  // ties to even
  CHECK(pack(BF16x2{}, AsF32(0x3F808001u), -0.0f) == 0x3F818000u);             // above the tie: up; -0 kept
  CHECK(pack(BF16x2{}, std::numeric_limits<float>::infinity(), -1.0f, true) == 0x7F800000u);
}

TEST_CASE("cvt.rn.satfinite.f16x2.f32 and .bf16x2.f32: beyond the largest finite value, that value with its sign") {
  auto pack = [](auto tag, float hi, float lo, bool relu = false) {
    using To = decltype(tag);
    return RunScalar([&](KernelBuilder& k) {
      return k.CvtPack<To>(k.Const<F32>(hi), k.Const<F32>(lo), KernelBuilder::CvtPackOptions{.relu = relu, .satfinite = true});
    });
  };
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(pack(F16x2{}, 70000.0f, -70000.0f) == 0x7BFFFBFFu);  // would overflow to infinity: 65504 and -65504
  CHECK(pack(F16x2{}, 65519.0f, 65520.0f) == 0x7BFF7BFFu);   // below and at the rounding point to infinity
  CHECK(pack(F16x2{}, inf, -inf) == 0x7BFFFBFFu);            // infinities too
  CHECK(pack(F16x2{}, std::numeric_limits<float>::quiet_NaN(), 1.0f) == 0x7FFF3C00u);  // NaN stays NaN
  CHECK(pack(F16x2{}, -inf, 70000.0f, true) == 0x00007BFFu);  // .relu first, then .satfinite
  CHECK(pack(BF16x2{}, inf, std::numeric_limits<float>::max()) == 0x7F7F7F7Fu);  // FLT_MAX rounds up past bf16's max
  CHECK(pack(BF16x2{}, -inf, 1.0f) == 0xFF7F3F80u);
}

TEST_CASE("ld/st.shared vectors from a variable plus an offset") {
  auto kernel = [](uint32_t load_offset) {
    KernelBuilder b("smem_vec", ir::Target::kSm80);
    Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
    Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
    Symbol<F32> smem = b.Shared<F32>("smem", 16, 16);
    for (uint32_t k = 0; k < 16; ++k) {
      b.Store(kSharedSpace, Address(smem, 4 * k), b.Load<F32>(kGlobalSpace, Address(in, 4 * k)));
    }
    std::array<Value<F32>, 4> v = b.LoadVec<F32, 4>(kSharedSpace, Address(smem, load_offset));  // [smem+16]
    b.StoreVec(kSharedSpace, Address(smem, 32), std::array<Value<F32>, 4>{v[3], v[2], v[1], v[0]});
    std::array<Value<F32>, 2> w = b.LoadVec<F32, 2>(kSharedSpace, Address(smem, 40));
    std::array<Value<F32>, 6> all = {v[0], v[1], v[2], v[3], w[0], w[1]};
    for (uint32_t k = 0; k < 6; ++k) b.Store(kGlobalSpace, Address(out, 4 * k), all[k]);
    return testing::FinishOrDie(b);
  };
  std::vector<uint32_t> in(16);
  for (uint32_t k = 0; k < 16; ++k) in[k] = Bits(1.5f * static_cast<float>(k));
  absl::StatusOr<std::vector<uint32_t>> got = RunInOut(kernel(16), in, 6, 1);
  REQUIRE(Said(got.status()) == "OK");
  // v: elements 4..7; stored reversed at 8..11, so [smem+40] holds elements 5 and 4.
  CHECK(*got == std::vector<uint32_t>{in[4], in[5], in[6], in[7], in[5], in[4]});
  // A v4 load 8 bytes past a 16-byte boundary is misaligned.
  ir::Kernel bad = kernel(8);
  CHECK(Said(RunInOut(bad, in, 6, 1).status()).starts_with(
      "kernel smem_vec: misaligned shared load of 16 bytes at shared address 8: the access needs 16-byte alignment; "
      "block (0,0,0) thread (0,0,0) at `ld.shared.v4.f32 {%f16, %f17, %f18, %f19}, [smem+8];`"));
}

TEST_CASE("shared pointers load and store fragments (Ptr::LoadMatrix / StoreMatrix)") {
  KernelBuilder b("ptr_matrix", ir::Target::kSm90);
  Value<U64> in = b.CvtaToGlobal(b.Param<U64>("in"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Ptr<B32, Shared> tile = SharedArray<B32>(b, "tile", 64, 16);
  Value<U32> lane = b.LaneId();
  // Matrix m's row r at bytes 16 (8m + r): lane l gives row l.
  Ptr<B32, Shared> row = tile.At(b.Mul(lane, 4u));
  tile.At(lane).Store(b.Load<B32>(kGlobalSpace, Address(b.ElementAddr<B32>(in, lane))));
  tile.At(b.Add(lane, 32u)).Store(b.Load<B32>(kGlobalSpace, Address(b.ElementAddr<B32>(in, b.Add(lane, 32u)))));
  b.BarSync();
  std::array<Value<B32>, 2> frags = row.LoadMatrix<2>();
  b.BarSync();
  row.StoreMatrix(frags, /*trans=*/true);  // the transpose of each matrix, in place
  b.BarSync();
  tile.At(lane).Store(frags[0]);  // overwrite words 0..31 with the fragments of matrix 0
  b.Store(kGlobalSpace, Address(b.ElementAddr<B32>(out, lane)), tile.At(b.Add(lane, 32u)).Load());
  ir::Kernel k = testing::FinishOrDie(b);
  const std::vector<uint32_t> words = RandomWords(64, 7);
  absl::StatusOr<std::vector<uint32_t>> got = RunInOut(k, words, 32);
  REQUIRE(Said(got.status()) == "OK");
  // Words 32..63 are matrix 1 (rows 0..7, 4 words each) after the transposing store.
  auto element = [&](int row, int col) { return static_cast<uint16_t>(words[32 + row * 4 + col / 2] >> (16 * (col % 2))); };
  for (int row = 0; row < 8; ++row) {
    for (int w = 0; w < 4; ++w) {
      const uint32_t want = element(2 * w, row) | uint32_t{element(2 * w + 1, row)} << 16;
      INFO("row " << row << " word " << w);
      CHECK((*got)[row * 4 + w] == want);
    }
  }
}

}  // namespace
}  // namespace ptxforge
