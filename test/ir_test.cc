// Tests of ir/: types, the target table, version parsing, float rounding, immediate spelling.
#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ir/enum_ranges.h"
#include "ir/float_bits.h"
#include "ir/format.h"
#include "ir/instruction.h"
#include "ir/opcode.h"
#include "ir/strings.h"
#include "ir/target.h"
#include "ir/types.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::Rounding;
using ir::ScalarType;
using testing::Msg;

TEST_CASE("type names round-trip and sizes are right", "[types]") {
  std::vector<std::string> names;
  for (int i = 1; i < ir::kNumScalarTypes; ++i) {
    ScalarType t = static_cast<ScalarType>(i);
    names.emplace_back(ir::TypeName(t));
    REQUIRE(ir::ParseType(ir::TypeName(t)) == t);
  }
  REQUIRE(StrJoin(names, " ") ==
          "pred b8 b16 b32 b64 u8 u16 u32 u64 s8 s16 s32 s64 f16 f16x2 bf16 bf16x2 f32 f64 tf32 e4m3 e5m2 e4m3x2 e5m2x2");
  REQUIRE(ir::ParseType("none") == std::nullopt);
  REQUIRE(ir::ParseType("f128") == std::nullopt);
  REQUIRE(ir::ParseType("") == std::nullopt);

  REQUIRE(ir::TypeBits(ScalarType::kPred) == 1);
  REQUIRE(ir::TypeSize(ScalarType::kPred) == 0);
  REQUIRE(ir::TypeBits(ScalarType::kS8) == 8);
  REQUIRE(ir::TypeSize(ScalarType::kBF16) == 2);
  REQUIRE(ir::TypeSize(ScalarType::kF16x2) == 4);
  REQUIRE(ir::TypeSize(ScalarType::kF64) == 8);
  REQUIRE(ir::TypeBits(ScalarType::kNone) == 0);
}

TEST_CASE("the half family's mask names f16 f16x2 bf16 bf16x2 and no type out of range", "[types]") {
  std::vector<std::string> half;
  for (int i = 0; i < 256; ++i) {
    const ScalarType t = static_cast<ScalarType>(i);
    if (ir::IsHalfFamilyNoBranch(t)) half.emplace_back(ir::TypeName(t));
    if (i < ir::kNumScalarTypes) REQUIRE(ir::IsHalfFamilyNoBranch(t) == ir::IsHalfFamily(t));
  }
  REQUIRE(StrJoin(half, " ") == "f16 f16x2 bf16 bf16x2");
}

TEST_CASE("an operand's register index is the register it reads or the spare entry", "[types]") {
  using ir::Operand;
  const uint32_t spare = 10;
  CHECK(Operand(ir::Reg{3}).ReadRegIndex(spare) == 3);
  CHECK(Operand(ir::Reg{9}).ReadRegIndex(spare) == 9);
  CHECK(Operand(ir::Reg{10}).ReadRegIndex(spare) == 10);   // past the table: the spare
  CHECK(Operand(ir::Reg{4000}).ReadRegIndex(spare) == 10);
  CHECK(Operand::AddrReg(ir::Reg{7}, 16).ReadRegIndex(spare) == 7);
  CHECK(Operand::Imm(ScalarType::kU32, 3).ReadRegIndex(spare) == 10);  // id 0, but no register
  CHECK(Operand::AddrParam(2).ReadRegIndex(spare) == 10);
  CHECK(Operand::AddrSymbol(1, 0).ReadRegIndex(spare) == 10);
  CHECK(Operand::Special(ir::SpecialReg::kTidX).ReadRegIndex(spare) == 10);
  CHECK(Operand::FromLabel(ir::Label{5}).ReadRegIndex(spare) == 10);
}

TEST_CASE("register classes, prefixes and declaration types", "[types]") {
  REQUIRE(ir::RegClassOf(ScalarType::kPred) == ir::RegClass::kPred);
  REQUIRE(ir::RegClassOf(ScalarType::kU8) == ir::RegClass::kB16);
  REQUIRE(ir::RegClassOf(ScalarType::kF16) == ir::RegClass::kB16);
  REQUIRE(ir::RegClassOf(ScalarType::kBF16x2) == ir::RegClass::kB32);
  REQUIRE(ir::RegClassOf(ScalarType::kS32) == ir::RegClass::kB32);
  REQUIRE(ir::RegClassOf(ScalarType::kU64) == ir::RegClass::kB64);
  REQUIRE(ir::RegClassOf(ScalarType::kF32) == ir::RegClass::kF32);
  REQUIRE(ir::RegClassOf(ScalarType::kF64) == ir::RegClass::kF64);
  std::string all;
  for (int c = 0; c < ir::kNumRegClasses; ++c) {
    auto rc = static_cast<ir::RegClass>(c);
    StrAppend(&all, ir::RegClassName(rc), ":", ir::RegClassPrefix(rc), ":", ir::RegClassDeclType(rc), " ");
  }
  REQUIRE(all == "pred:%p:.pred b16:%rs:.b16 b32:%r:.b32 b64:%rd:.b64 f32:%f:.f32 f64:%fd:.f64 ");
}

TEST_CASE("operand type compatibility follows PTX's rules", "[types]") {
  using T = ScalarType;
  REQUIRE(ir::TypesCompatible(T::kU32, T::kU32));
  REQUIRE(ir::TypesCompatible(T::kU32, T::kS32));   // integers of one size
  REQUIRE(ir::TypesCompatible(T::kB32, T::kF32));   // a bit type takes any 32-bit value
  REQUIRE(ir::TypesCompatible(T::kF16, T::kB16));
  REQUIRE_FALSE(ir::TypesCompatible(T::kF32, T::kU32));
  REQUIRE_FALSE(ir::TypesCompatible(T::kF16, T::kBF16));
  REQUIRE_FALSE(ir::TypesCompatible(T::kU64, T::kU32));
  REQUIRE_FALSE(ir::TypesCompatible(T::kPred, T::kB8));
  REQUIRE_FALSE(ir::TypesCompatible(T::kNone, T::kB32));
  REQUIRE(ir::WidenedType(T::kU32) == T::kU64);
  REQUIRE(ir::WidenedType(T::kS16) == T::kS32);
  REQUIRE(ir::WidenedType(T::kS64) == T::kNone);
  REQUIRE(ir::WidenedType(T::kF32) == T::kNone);
  REQUIRE(ir::BitsTypeOfSize(1) == T::kPred);
  REQUIRE(ir::BitsTypeOfSize(16) == T::kB16);
  REQUIRE(ir::BitsTypeOfSize(12) == T::kNone);
}

TEST_CASE("the target table", "[target]") {
  REQUIRE(ir::SupportedTargetList() ==
          "sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_120, sm_120a");
  std::string table;
  for (const ir::TargetInfo& t : ir::AllTargets()) {
    REQUIRE(&ir::GetTargetInfo(t.target) == &t);
    REQUIRE(ir::TargetName(t.target) == t.name);
    StrAppend(&table, t.name, "=", t.sm, t.arch_specific ? "a" : "", "/", t.min_ptx.ToString(), " ");
  }
  REQUIRE(table ==
          "sm_75=75/6.3 sm_80=80/7.0 sm_86=86/7.1 sm_87=87/7.4 sm_89=89/7.8 sm_90=90/7.8 sm_90a=90a/8.0 "
          "sm_100=100/8.6 sm_100a=100a/8.6 sm_120=120/8.7 sm_120a=120a/8.7 ");
  REQUIRE(ir::MaxPtxVersion().ToString() == "9.0");
  REQUIRE(ir::KnownPtxVersions().size() == 25);
}

TEST_CASE("target requirements", "[target]") {
  ir::TargetRequirement sm80{80, false, {70}};
  ir::TargetRequirement sm90a{90, true, {80}};
  REQUIRE(ir::TargetSatisfies(ir::Target::kSm80, sm80));
  REQUIRE(ir::TargetSatisfies(ir::Target::kSm120a, sm80));
  REQUIRE_FALSE(ir::TargetSatisfies(ir::Target::kSm75, sm80));
  REQUIRE(ir::TargetSatisfies(ir::Target::kSm90a, sm90a));
  REQUIRE_FALSE(ir::TargetSatisfies(ir::Target::kSm90, sm90a));
  REQUIRE_FALSE(ir::TargetSatisfies(ir::Target::kSm100a, sm90a));
  REQUIRE(ir::RequirementName(sm80) == "sm_80");
  REQUIRE(ir::RequirementName(sm90a) == "sm_90a");
}

TEST_CASE("ParsePtxVersion accepts known versions and explains the rest", "[target]") {
  absl::StatusOr<ir::PtxVersion> v = ir::ParsePtxVersion("7.8");
  REQUIRE(Msg(v) == "OK");
  REQUIRE(v->value == 78);
  REQUIRE(v->major() == 7);
  REQUIRE(v->minor() == 8);
  REQUIRE(ir::ParsePtxVersion("9.0")->value == 90);
  const std::string bad = ": expected MAJOR.MINOR such as 7.8";
  REQUIRE(Msg(ir::ParsePtxVersion("7")) == "bad PTX version '7'" + bad);
  REQUIRE(Msg(ir::ParsePtxVersion("7.10")) == "bad PTX version '7.10'" + bad);
  REQUIRE(Msg(ir::ParsePtxVersion("a.b")) == "bad PTX version 'a.b'" + bad);
  REQUIRE(Msg(ir::ParsePtxVersion("")) == "bad PTX version ''" + bad);
  const std::string known =
      "; known versions: 6.0, 6.1, 6.2, 6.3, 6.4, 6.5, 7.0, 7.1, 7.2, 7.3, 7.4, 7.5, 7.6, 7.7, 7.8, 8.0, 8.1, "
      "8.2, 8.3, 8.4, 8.5, 8.6, 8.7, 8.8, 9.0";
  REQUIRE(Msg(ir::ParsePtxVersion("6.6")) == "unknown PTX version 6.6" + known);
  REQUIRE(Msg(ir::ParsePtxVersion("7.9")) == "unknown PTX version 7.9" + known);
  REQUIRE(Msg(ir::ParsePtxVersion("9.1")) == "unknown PTX version 9.1" + known);
}

TEST_CASE("ParseTarget lists the supported targets on error", "[target]") {
  REQUIRE(*ir::ParseTarget("sm_90a") == ir::Target::kSm90a);
  REQUIRE(*ir::ParseTarget("sm_75") == ir::Target::kSm75);
  const std::string list =
      "; supported targets: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_120, sm_120a";
  REQUIRE(Msg(ir::ParseTarget("sm_81")) == "unknown target 'sm_81'" + list);
  REQUIRE(Msg(ir::ParseTarget("SM_80")) == "unknown target 'SM_80'" + list);
  REQUIRE(Msg(ir::ParseTarget("")) == "unknown target ''" + list);
}

// ---- float_bits

uint32_t F16(double x, Rounding r = Rounding::kRn) { return ir::EncodeFloat(x, ir::kHalfFormat, r); }
uint32_t Bf16(double x, Rounding r = Rounding::kRn) { return ir::EncodeFloat(x, ir::kBF16Format, r); }
uint32_t F32(double x, Rounding r = Rounding::kRn) { return ir::EncodeFloat(x, ir::kF32Format, r); }

TEST_CASE("f16 rounding: normal values and ties", "[float_bits]") {
  REQUIRE(F16(1.0) == 0x3C00);
  REQUIRE(F16(-2.0) == 0xC000);
  REQUIRE(F16(0.0) == 0x0000);
  REQUIRE(F16(-0.0) == 0x8000);
  REQUIRE(F16(0.1) == 0x2E66);
  REQUIRE(F16(0.1, Rounding::kRz) == 0x2E66);
  REQUIRE(F16(0.1, Rounding::kRm) == 0x2E66);
  REQUIRE(F16(0.1, Rounding::kRp) == 0x2E67);
  REQUIRE(F16(-0.1, Rounding::kRm) == 0xAE67);
  REQUIRE(F16(-0.1, Rounding::kRp) == 0xAE66);
  // 1 + 2^-11 is half-way between 0x3C00 and 0x3C01: ties go to even.
  REQUIRE(F16(1.0 + std::ldexp(1.0, -11)) == 0x3C00);
  REQUIRE(F16(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3C02);
  REQUIRE(F16(1.0 + std::ldexp(1.0, -11), Rounding::kRp) == 0x3C01);
  REQUIRE(F16(1.0 + std::ldexp(1.0, -11), Rounding::kRz) == 0x3C00);
  REQUIRE(F16(-(1.0 + std::ldexp(1.0, -11)), Rounding::kRm) == 0xBC01);
  REQUIRE(F16(-(1.0 + std::ldexp(1.0, -11)), Rounding::kRp) == 0xBC00);
  // Kernels pass kNone for "default": it means rn.
  REQUIRE(F16(1.0 + 3 * std::ldexp(1.0, -11), Rounding::kNone) == 0x3C02);
}

TEST_CASE("f16 rounding: overflow by mode", "[float_bits]") {
  REQUIRE(F16(65504.0) == 0x7BFF);
  REQUIRE(F16(65519.0) == 0x7BFF);
  REQUIRE(F16(65519.0, Rounding::kRp) == 0x7C00);
  // 65520 is half-way between the largest finite value and 2^16.
  REQUIRE(F16(65520.0, Rounding::kRn) == 0x7C00);
  REQUIRE(F16(65520.0, Rounding::kRz) == 0x7BFF);
  REQUIRE(F16(65520.0, Rounding::kRm) == 0x7BFF);
  REQUIRE(F16(65520.0, Rounding::kRp) == 0x7C00);
  REQUIRE(F16(-65520.0, Rounding::kRn) == 0xFC00);
  REQUIRE(F16(-65520.0, Rounding::kRz) == 0xFBFF);
  REQUIRE(F16(-65520.0, Rounding::kRm) == 0xFC00);
  REQUIRE(F16(-65520.0, Rounding::kRp) == 0xFBFF);
  REQUIRE(F16(1e10, Rounding::kRz) == 0x7BFF);
  REQUIRE(F16(INFINITY) == 0x7C00);
  REQUIRE(F16(-INFINITY, Rounding::kRz) == 0xFC00);
}

TEST_CASE("f16 rounding: subnormals", "[float_bits]") {
  const double tiny = std::ldexp(1.0, -24);  // the smallest subnormal
  REQUIRE(F16(tiny) == 0x0001);
  REQUIRE(F16(-tiny) == 0x8001);
  REQUIRE(F16(tiny / 2) == 0x0000);  // a tie with 0: even
  REQUIRE(F16(tiny / 2, Rounding::kRp) == 0x0001);
  REQUIRE(F16(tiny / 2, Rounding::kRz) == 0x0000);
  REQUIRE(F16(-tiny / 2, Rounding::kRn) == 0x8000);
  REQUIRE(F16(-tiny / 2, Rounding::kRm) == 0x8001);
  REQUIRE(F16(tiny * 0.75) == 0x0001);
  REQUIRE(F16(tiny * 1.5) == 0x0002);  // tie between 1 and 2 ulps: even
  REQUIRE(F16(tiny * 2.5) == 0x0002);
  REQUIRE(F16(1023 * tiny) == 0x03FF);  // the largest subnormal
  // Rounding up out of the subnormals gives the smallest normal.
  REQUIRE(F16(1023.5 * tiny) == 0x0400);
  REQUIRE(F16(1023.5 * tiny, Rounding::kRz) == 0x03FF);
  REQUIRE(F16(std::ldexp(1.0, -14)) == 0x0400);
  REQUIRE(F16(std::ldexp(1.0, -30), Rounding::kRp) == 0x0001);
  REQUIRE(F16(std::ldexp(1.0, -30), Rounding::kRm) == 0x0000);
}

TEST_CASE("NaN becomes the canonical quiet NaN with its sign", "[float_bits]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE(F16(nan) == 0x7E00);
  REQUIRE(F16(-nan) == 0xFE00);
  REQUIRE(Bf16(nan, Rounding::kRz) == 0x7FC0);
  REQUIRE(Bf16(-nan) == 0xFFC0);
  REQUIRE(F32(nan, Rounding::kRm) == 0x7FC00000u);
  REQUIRE(F32(-nan) == 0xFFC00000u);
}

TEST_CASE("bf16 rounding", "[float_bits]") {
  REQUIRE(Bf16(1.0) == 0x3F80);
  REQUIRE(Bf16(0.1) == 0x3DCD);
  REQUIRE(Bf16(0.1, Rounding::kRz) == 0x3DCC);
  REQUIRE(Bf16(0.1, Rounding::kRm) == 0x3DCC);
  REQUIRE(Bf16(0.1, Rounding::kRp) == 0x3DCD);
  REQUIRE(Bf16(1.0 + std::ldexp(1.0, -8)) == 0x3F80);  // tie: even
  REQUIRE(Bf16(1.0 + 3 * std::ldexp(1.0, -8)) == 0x3F82);
  REQUIRE(Bf16(1.0 + std::ldexp(1.0, -8), Rounding::kRp) == 0x3F81);
  const double flt_max = std::numeric_limits<float>::max();
  REQUIRE(Bf16(flt_max) == 0x7F80);  // rounds past the largest bf16
  REQUIRE(Bf16(flt_max, Rounding::kRz) == 0x7F7F);
  REQUIRE(Bf16(-flt_max, Rounding::kRp) == 0xFF7F);
  REQUIRE(Bf16(-flt_max, Rounding::kRm) == 0xFF80);
  const double tiny = std::ldexp(1.0, -133);  // the smallest bf16 subnormal
  REQUIRE(Bf16(tiny) == 0x0001);
  REQUIRE(Bf16(tiny / 2) == 0x0000);
  REQUIRE(Bf16(tiny / 2, Rounding::kRp) == 0x0001);
  REQUIRE(Bf16(127.5 * tiny) == 0x0080);  // up into the normals
  REQUIRE(ir::F32ToBF16Bits(1.5f) == 0x3FC0);
  REQUIRE(ir::BF16BitsToF32(0x3FC0) == 1.5f);
  REQUIRE(ir::F32ToF16Bits(-1.5f) == 0xBE00);
  REQUIRE(ir::F16BitsToF32(0xBE00) == -1.5f);
}

TEST_CASE("f32 rounding: hand-picked cases", "[float_bits]") {
  REQUIRE(F32(1.0) == 0x3F800000u);
  REQUIRE(F32(0.1) == 0x3DCCCCCDu);
  REQUIRE(F32(0.1, Rounding::kRz) == 0x3DCCCCCCu);
  REQUIRE(F32(-0.1, Rounding::kRm) == 0xBDCCCCCDu);
  REQUIRE(F32(-0.1, Rounding::kRp) == 0xBDCCCCCCu);
  REQUIRE(F32(1.0 + std::ldexp(1.0, -24)) == 0x3F800000u);
  REQUIRE(F32(1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -40)) == 0x3F800001u);
  const double half_ulp_past_max = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  REQUIRE(F32(half_ulp_past_max) == 0x7F800000u);
  REQUIRE(F32(half_ulp_past_max, Rounding::kRz) == 0x7F7FFFFFu);
  REQUIRE(F32(std::ldexp(1.0, -149)) == 0x00000001u);
  REQUIRE(F32(std::ldexp(1.0, -150)) == 0x00000000u);
  REQUIRE(F32(std::ldexp(1.0, -150), Rounding::kRp) == 0x00000001u);
  REQUIRE(F32(std::ldexp(1.5, -149)) == 0x00000002u);
}

// Converts with the FPU in rounding mode `mode` (volatile: not folded at compile time).
uint32_t HardwareF32(double x, int mode) {
  std::fesetround(mode);
  volatile double in = x;
  volatile float out = static_cast<float>(in);
  std::fesetround(FE_TONEAREST);
  return std::bit_cast<uint32_t>(static_cast<float>(out));
}

TEST_CASE("f32 rounding agrees with the FPU in all four modes", "[float_bits]") {
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<int> exponent(-160, 130);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  struct Mode {
    Rounding r;
    int fe;
  };
  const Mode modes[] = {{Rounding::kRn, FE_TONEAREST}, {Rounding::kRz, FE_TOWARDZERO},
                        {Rounding::kRm, FE_DOWNWARD}, {Rounding::kRp, FE_UPWARD}};
  for (int i = 0; i < 20000; ++i) {
    double x = std::ldexp(mantissa(rng), exponent(rng)) * (i % 2 ? -1 : 1);
    for (const Mode& m : modes) {
      uint32_t ours = F32(x, m.r);
      uint32_t fpu = HardwareF32(x, m.fe);
      if (ours != fpu) FAIL("x=" << x << " mode " << ir::RoundingName(m.r) << ": " << ours << " != " << fpu);
    }
  }
}

TEST_CASE("every f16 and bf16 value decodes and re-encodes to itself", "[float_bits]") {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    double h = ir::DecodeFloat(bits, ir::kHalfFormat);
    double b = ir::DecodeFloat(bits, ir::kBF16Format);
    if (!std::isnan(h) && F16(h) != bits) FAIL("f16 " << bits);
    if (!std::isnan(b) && Bf16(b) != bits) FAIL("bf16 " << bits);
  }
  REQUIRE(ir::DecodeFloat(0x0001, ir::kHalfFormat) == std::ldexp(1.0, -24));
  REQUIRE(ir::DecodeFloat(0xFBFF, ir::kHalfFormat) == -65504.0);
  REQUIRE(std::isinf(ir::DecodeFloat(0x7C00, ir::kHalfFormat)));
  REQUIRE(std::isnan(ir::DecodeFloat(0x7E00, ir::kHalfFormat)));
  REQUIRE(ir::DecodeFloat(0x7F7FFFFF, ir::kF32Format) == std::numeric_limits<float>::max());
}

// ---- immediates and names

std::string ImmText(ScalarType t, uint64_t bits) {
  std::string out;
  ir::AppendImmediate(out, t, bits);
  return out;
}

TEST_CASE("StrCat and StrAppend spell every kind of argument", "[strings]") {
  const std::string str = "str";
  const std::string_view view = "view";
  const absl::string_view absl_view = "absl";
  const char* ptr = "ptr";
  CHECK(StrCat() == "");
  CHECK(StrCat(str, '|', view, '|', absl_view, '|', ptr, '|', std::string(), '|', std::string_view()) ==
        "str|view|absl|ptr||");
  CHECK(StrCat(true, ' ', false) == "true false");
  CHECK(StrCat(0, ' ', -1, ' ', std::numeric_limits<int64_t>::min(), ' ', std::numeric_limits<uint64_t>::max()) ==
        "0 -1 -9223372036854775808 18446744073709551615");
  // Small integer types print as numbers; char as a character.
  CHECK(StrCat(int8_t{-128}, ' ', uint8_t{255}, ' ', int16_t{-7}, ' ', uint16_t{65535}, ' ', 'c') ==
        "-128 255 -7 65535 c");
  CHECK(StrCat(uint32_t{4294967295u}, ' ', size_t{42}, ' ', static_cast<long long>(-5)) == "4294967295 42 -5");
  // Floating point: the shortest form that reads back to the same value.
  CHECK(StrCat(0.1, ' ', 0.1f, ' ', 1e300, ' ', -0.0, ' ', 1.5f, ' ', std::numeric_limits<double>::lowest()) ==
        "0.1 0.1 1e+300 -0 1.5 -1.7976931348623157e+308");
  // Hex: upper case, zero-padded to the width, never cut.
  CHECK(StrCat(Hex{0}, ' ', Hex{0xabc}, ' ', Hex{0x3f800000, 8}, ' ', Hex{1, 16}, ' ', Hex{0xabcdef, 2}) ==
        "0 ABC 3F800000 0000000000000001 ABCDEF");
  CHECK(StrCat(Hex{~uint64_t{0}, 16}) == "FFFFFFFFFFFFFFFF");
  std::string out = "x";
  StrAppend(&out, "=", 3, ", ", view, ", ", Hex{255, 4});
  CHECK(out == "x=3, view, 00FF");
  StrAppend(&out);
  CHECK(out == "x=3, view, 00FF");
  // The inline forms the printer uses give the same text.
  std::string inline_form;
  AppendDecimal(inline_form, std::numeric_limits<int64_t>::min());
  inline_form.push_back(' ');
  AppendDecimal(inline_form, uint32_t{7});
  inline_form.push_back(' ');
  AppendHex(inline_form, Hex{0x7f, 4});
  CHECK(inline_form == StrCat(std::numeric_limits<int64_t>::min(), ' ', uint32_t{7}, ' ', Hex{0x7f, 4}));
  // A long argument list.
  std::string many;
  for (int i = 0; i < 3; ++i) StrAppend(&many, i, ",", i * 10, ";", std::string(3, static_cast<char>('a' + i)), " ");
  CHECK(many == "0,0;aaa 1,10;bbb 2,20;ccc ");
  CHECK(StrJoin(std::vector<int>{1, -2, 3}, ", ") == "1, -2, 3");
  CHECK(ForMessage("a\tb\n\x01") == "a\\tb\\n\\x01");
}

TEST_CASE("immediates are spelled the way PTX wants", "[format]") {
  REQUIRE(ImmText(ScalarType::kF32, 0x3F800000) == "0f3F800000");
  REQUIRE(ImmText(ScalarType::kF32, 0) == "0f00000000");
  REQUIRE(ImmText(ScalarType::kF64, 0x3FF0000000000000) == "0d3FF0000000000000");
  REQUIRE(ImmText(ScalarType::kF64, std::bit_cast<uint64_t>(-2.5)) == "0dC004000000000000");
  REQUIRE(ImmText(ScalarType::kS32, 0xFFFFFFFF) == "-1");
  REQUIRE(ImmText(ScalarType::kS8, 0x80) == "-128");
  REQUIRE(ImmText(ScalarType::kS16, 0x7FFF) == "32767");
  REQUIRE(ImmText(ScalarType::kS64, 0x8000000000000000) == "-9223372036854775808");
  REQUIRE(ImmText(ScalarType::kU32, 0xFFFFFFFF) == "4294967295");
  REQUIRE(ImmText(ScalarType::kU64, ~uint64_t{0}) == "18446744073709551615");
  REQUIRE(ImmText(ScalarType::kU16, 0x1FFFF) == "65535");  // masked to the type
  REQUIRE(ImmText(ScalarType::kU8, 300) == "44");
  REQUIRE(ImmText(ScalarType::kB32, 0xff) == "0xFF");
  REQUIRE(ImmText(ScalarType::kB64, 0) == "0x0");
  REQUIRE(ImmText(ScalarType::kF16, 0x3C00) == "0x3C00");
  REQUIRE(ImmText(ScalarType::kBF16x2, 0x3F803F80) == "0x3F803F80");
  REQUIRE(ImmText(ScalarType::kPred, 1) == "1");
  REQUIRE(ImmText(ScalarType::kPred, 0) == "0");
}

TEST_CASE("special registers, modifier names and opcode names", "[format]") {
  REQUIRE(ir::SpecialRegName(ir::SpecialReg::kTidX) == "%tid.x");
  REQUIRE(ir::SpecialRegName(ir::SpecialReg::kLanemaskGe) == "%lanemask_ge");
  REQUIRE(ir::SpecialRegName(ir::SpecialReg::kDynamicSmemSize) == "%dynamic_smem_size");
  REQUIRE(ir::SpecialRegType(ir::SpecialReg::kClock64) == ScalarType::kU64);
  REQUIRE(ir::SpecialRegType(ir::SpecialReg::kGlobalTimer) == ScalarType::kU64);
  REQUIRE(ir::SpecialRegType(ir::SpecialReg::kClock) == ScalarType::kU32);
  REQUIRE(ir::SpecialRegMinPtx(ir::SpecialReg::kDynamicSmemSize).value == 41);
  REQUIRE(ir::SpecialRegMinPtx(ir::SpecialReg::kTidX).value == 0);
  REQUIRE(ir::OpcodeName(ir::Opcode::kBarSync) == "BarSync");
  REQUIRE(ir::Mnemonic(ir::Opcode::kShfl) == "shfl.sync");
  REQUIRE(ir::OpClassName(ir::GetOpInfo(ir::Opcode::kFma).op_class) == "arith");
  REQUIRE(ir::MemSemName(ir::MemSem::kAcqRel) == "acq_rel");
  REQUIRE(ir::StateSpaceName(ir::StateSpace::kGeneric).empty());
  REQUIRE(ir::FormatLoc(ir::SourceLoc()) == "");
}

TEST_CASE("the commutative opcodes are the two-source ones whose sources may swap", "[opcode]") {
  std::string flagged;
  for (int op = 0; op < ir::kNumOpcodes; ++op) {
    const ir::OpInfo& info = ir::GetOpInfo(static_cast<ir::Opcode>(op));
    if (!info.has(ir::kCommutative)) continue;
    StrAppend(&flagged, info.mnemonic, " ");
    REQUIRE(info.has(ir::kPure));
  }
  REQUIRE(flagged == "add mul min max and or xor ");
}

TEST_CASE("the opcode table's derived facts agree with its columns", "[opcode]") {
  // slot_mask and enum_counts are computed when the table is built; each
  // must say what the slow derivation from the parsed format says, for
  // every row (so that they cannot drift from opcodes.def).
  int listed = 0;
  for (int op = 0; op < ir::kNumOpcodes; ++op) {
    const ir::OpInfo& info = ir::GetOpInfo(static_cast<ir::Opcode>(op));
    INFO(ir::OpcodeName(static_cast<ir::Opcode>(op)));
    for (int slot = 0; slot <= static_cast<int>(ir::ModSlot::kNum); ++slot) {
      bool in_format = false;
      for (int k = 0; k < info.num_slots; ++k) in_format |= info.slots[k] == static_cast<ir::ModSlot>(slot);
      REQUIRE(info.has_slot(static_cast<ir::ModSlot>(slot)) == in_format);
      REQUIRE(((info.slot_mask & ir::SlotBit(static_cast<ir::ModSlot>(slot))) != 0) == in_format);
    }
    REQUIRE(info.slot_mask >> (static_cast<int>(ir::ModSlot::kNum) + 1) == 0);
    const ir::ModSlot enums[] = {ir::ModSlot::kVariant, ir::ModSlot::kShape, ir::ModSlot::kLayout};
    for (int e = 0; e < 3; ++e) {
      REQUIRE(info.enum_counts[e] == ir::NumEnumValues(info, enums[e]));
      listed += info.enum_counts[e];
    }
  }
  REQUIRE(listed > 0);
  // A few rows by hand: prmt's six modes, mma's shapes and its one layout.
  const ir::OpInfo& prmt = ir::GetOpInfo(ir::Opcode::kPrmt);
  REQUIRE(prmt.enum_counts == std::array<uint8_t, 3>{6, 0, 0});
  REQUIRE(prmt.slot_mask == (ir::SlotBit(ir::ModSlot::kType) | ir::SlotBit(ir::ModSlot::kVariant)));
  REQUIRE(ir::GetOpInfo(ir::Opcode::kMmaF16).enum_counts == std::array<uint8_t, 3>{0, 2, 1});
  REQUIRE(ir::GetOpInfo(ir::Opcode::kRet).slot_mask == 0);
  REQUIRE(ir::GetOpInfo(ir::Opcode::kMembar).slot_mask == ir::SlotBit(ir::ModSlot::kLevel));
}

TEST_CASE("the opcode table's printed bytes and operand facts agree with its columns", "[opcode]") {
  // ChangedModifierBytes: one bit per field that differs from Modifiers{}.
  REQUIRE(ir::ChangedModifierBytes(ir::Modifiers{}) == 0);
  const auto bytes = [](const ir::Modifiers& m) {
    std::array<uint8_t, sizeof(ir::Modifiers)> b{};
    std::memcpy(b.data(), &m, sizeof m);
    return b;
  };
  const auto defaults = bytes(ir::Modifiers{});
  std::mt19937 rng(13);
  for (int round = 0; round < 2000; ++round) {
    auto b = defaults;
    for (uint8_t& x : b) {
      if (rng() % 4 == 0) x = static_cast<uint8_t>(rng() % (round % 2 ? 256 : 3));
    }
    ir::Modifiers m;
    std::memcpy(&m, b.data(), sizeof m);
    uint32_t want = 0;
    for (size_t k = 0; k < b.size(); ++k) want |= uint32_t{b[k] != defaults[k]} << k;
    REQUIRE(ir::ChangedModifierBytes(m) == want);
  }
  for (int op = 0; op < ir::kNumOpcodes; ++op) {
    const ir::OpInfo& info = ir::GetOpInfo(static_cast<ir::Opcode>(op));
    INFO(ir::OpcodeName(static_cast<ir::Opcode>(op)));
    // printed_bytes: the bytes of the format's slots.
    uint32_t printed = 0;
    for (int k = 0; k < info.num_slots; ++k) {
      if (info.slots[k] != ir::ModSlot::kLiteral) printed |= uint32_t{1} << ir::ModifierByte(info.slots[k]);
    }
    REQUIRE(info.printed_bytes == printed);
    // The operand facts, against GroupSizes (the slow derivation) and the specs.
    const ir::Signature& sig = info.sig;
    bool has_address = false;
    for (int k = 0; k < sig.nsrc; ++k) has_address |= sig.srcs[k].rule == ir::TypeRule::kAddress;
    REQUIRE(info.has_address == has_address);
    bool fixed = !sig.any;
    for (int k = 0; k < sig.ndst; ++k) fixed &= sig.dsts[k].group != 0 && sig.dsts[k].fragment == ir::Fragment::kNone && !sig.dsts[k].optional;
    for (int k = 0; k < sig.nsrc; ++k) fixed &= sig.srcs[k].group != 0 && sig.srcs[k].fragment == ir::Fragment::kNone && !sig.srcs[k].optional;
    REQUIRE(info.fixed_operands == fixed);
    if (!fixed) continue;
    for (uint8_t vec : {1, 2, 4}) {
      ir::Instruction inst;
      inst.op = static_cast<ir::Opcode>(op);
      inst.mods.vec = vec;
      absl::InlinedVector<uint8_t, 8> sizes;
      REQUIRE(ir::GroupSizes(inst, std::span(sig.dsts.data(), sig.ndst), info.fixed_dsts, sizes));
      for (int k = 0; k < sig.ndst; ++k) REQUIRE(sizes[k] == sig.dsts[k].group);
      REQUIRE(ir::GroupSizes(inst, std::span(sig.srcs.data(), sig.nsrc), info.fixed_srcs, sizes));
      for (int k = 0; k < sig.nsrc; ++k) REQUIRE(sizes[k] == sig.srcs[k].group);
      REQUIRE(!ir::GroupSizes(inst, std::span(sig.srcs.data(), sig.nsrc), info.fixed_srcs + 1, sizes));
    }
  }
  REQUIRE(ir::GetOpInfo(ir::Opcode::kAdd).fixed_operands);
  REQUIRE(ir::GetOpInfo(ir::Opcode::kAdd).fixed_srcs == 2);
  REQUIRE(!ir::GetOpInfo(ir::Opcode::kLd).fixed_operands);
  REQUIRE(ir::GetOpInfo(ir::Opcode::kLd).has_address);
  REQUIRE(!ir::GetOpInfo(ir::Opcode::kSetp).fixed_operands);
  REQUIRE(ir::GetOpInfo(ir::Opcode::kMembar).printed_bytes ==
          uint32_t{1} << ir::ModifierByte(ir::ModSlot::kScope));
}

TEST_CASE("TypesCompatibleBits agrees with TypesCompatible for every pair of types", "[types]") {
  // The verifier tests a bit of the compile-time table where it called
  // TypesCompatible; the table is built from it.
  int compatible = 0;
  for (int e = 0; e < ir::kNumScalarTypes; ++e) {
    for (int r = 0; r < ir::kNumScalarTypes; ++r) {
      const auto te = static_cast<ir::ScalarType>(e), tr = static_cast<ir::ScalarType>(r);
      INFO(ir::TypeName(te) << " " << ir::TypeName(tr));
      REQUIRE(ir::TypesCompatibleBits(te, tr) == ir::TypesCompatible(te, tr));
      compatible += ir::TypesCompatible(te, tr);
    }
  }
  REQUIRE(compatible > ir::kNumScalarTypes);  // more than each type with itself
  REQUIRE(ir::TypesCompatibleBits(ir::ScalarType::kB32, ir::ScalarType::kF32));
  REQUIRE(!ir::TypesCompatibleBits(ir::ScalarType::kF32, ir::ScalarType::kU32));
}

TEST_CASE("EnumsValid agrees with InvalidEnum for every value of every modifier byte", "[enums]") {
  // EnumsValid checks all of Modifiers in a few word operations;
  // InvalidEnum (the message) checks field by field.
  const ir::Modifiers defaults;
  std::array<uint8_t, sizeof(ir::Modifiers)> bytes{};
  std::memcpy(bytes.data(), &defaults, sizeof defaults);
  const size_t flags_begin = offsetof(ir::Modifiers, ftz), flags_end = offsetof(ir::Modifiers, cvta_to) + 1;
  int refused = 0;
  for (size_t b = 0; b < bytes.size(); ++b) {
    const int values = b >= flags_begin && b < flags_end ? 2 : 256;  // bools hold 0 or 1
    for (int v = 0; v < values; ++v) {
      auto changed = bytes;
      changed[b] = static_cast<uint8_t>(v);
      ir::Instruction inst;
      inst.op = ir::Opcode::kAdd;
      std::memcpy(&inst.mods, changed.data(), sizeof(ir::Modifiers));
      INFO("byte " << b << " value " << v);
      REQUIRE(ir::EnumsValid(inst) == ir::InvalidEnum(inst).empty());
      refused += !ir::EnumsValid(inst);
    }
  }
  REQUIRE(refused > 15 * 200);  // each of the 15 enum fields refuses most values
  ir::Instruction two;
  two.mods.rounding = static_cast<ir::Rounding>(200);
  two.mods.vote = static_cast<ir::VoteMode>(5);
  REQUIRE(!ir::EnumsValid(two));
  REQUIRE(ir::InvalidEnum(two) == "ir::Rounding value 200 is out of range");
}

TEST_CASE("the opcode table parses its format column", "[opcode]") {
  // Every slot list is parsed without aborting, and what it says prints.
  for (int op = 0; op < ir::kNumOpcodes; ++op) {
    const ir::OpInfo& info = ir::GetOpInfo(static_cast<ir::Opcode>(op));
    REQUIRE(info.num_slots <= static_cast<int>(info.slots.size()));
  }
  ir::Instruction atom;
  atom.op = ir::Opcode::kAtom;
  atom.mods = ir::Modifiers{.type = ScalarType::kF16, .space = ir::StateSpace::kGlobal, .atom = ir::AtomOp::kAdd,
                            .scope = ir::Scope::kGpu, .sem = ir::MemSem::kRelaxed, .noftz = true};
  std::string text;
  ir::AppendOpcode(text, atom);
  REQUIRE(text == "atom.relaxed.gpu.global.add.noftz.f16");
  ir::Instruction ld;
  ld.op = ir::Opcode::kLd;
  ld.mods = ir::Modifiers{.type = ScalarType::kF32, .space = ir::StateSpace::kGlobal, .cache = ir::CacheOp::kCs,
                          .vec = 4, .nc = true};
  text.clear();
  ir::AppendOpcode(text, ld);
  REQUIRE(text == "ld.global.nc.cs.v4.f32");
  ir::Instruction membar;
  membar.op = ir::Opcode::kMembar;
  membar.mods.scope = ir::Scope::kGpu;
  text.clear();
  ir::AppendOpcode(text, membar);
  REQUIRE(text == "membar.gl");
}

TEST_CASE("AppendOpcode's slot tables print what AppendSlot's switch prints, for every slot and value", "[format]") {
  // Each slot of each opcode set alone to every value its modifier byte
  // may hold (bools 0 and 1, enums in range: EnumsValid); the table-driven
  // AppendOpcode, into a string and into a line buffer, against the
  // mnemonic and each slot by the switch.
  int compared = 0;
  for (int op = 0; op < ir::kNumOpcodes; ++op) {
    const ir::OpInfo& info = ir::GetOpInfo(static_cast<ir::Opcode>(op));
    for (int i = 0; i < info.num_slots; ++i) {
      const int byte = ir::ModifierByte(info.slots[i]);
      const bool is_bool = byte == offsetof(ir::Modifiers, ftz) || byte == offsetof(ir::Modifiers, sat) ||
                           byte == offsetof(ir::Modifiers, nc) || byte == offsetof(ir::Modifiers, uni) ||
                           byte == offsetof(ir::Modifiers, noftz) || byte == offsetof(ir::Modifiers, cvta_to);
      for (int v = 0; v < (byte < 0 ? 1 : is_bool ? 2 : 256); ++v) {
        ir::Instruction inst;
        inst.op = static_cast<ir::Opcode>(op);
        if (byte >= 0) {
          const auto value = static_cast<uint8_t>(v);
          std::memcpy(reinterpret_cast<unsigned char*>(&inst.mods) + byte, &value, 1);
        }
        if (!ir::EnumsValid(inst)) continue;
        std::string expected(info.mnemonic);
        for (int j = 0; j < info.num_slots; ++j) ir::AppendSlot(expected, inst, j);
        std::string text;
        ir::AppendOpcode(text, inst);
        INFO(expected);
        REQUIRE(text == expected);
        std::string buffered;
        {
          char buffer[ir::LineBuffer::kMaxPiece];
          ir::LineBuffer line(buffered, buffer, 0);
          ir::AppendOpcode(line, inst);
        }
        REQUIRE(buffered == expected);
        ++compared;
      }
    }
  }
  CHECK(compared > 1000);
}

TEST_CASE("comparison and atomic operation legality", "[opcode]") {
  using T = ScalarType;
  using ir::CmpOp;
  REQUIRE(ir::CmpAllowsType(CmpOp::kEq, T::kB32));
  REQUIRE_FALSE(ir::CmpAllowsType(CmpOp::kLt, T::kB32));
  REQUIRE(ir::CmpAllowsType(CmpOp::kLt, T::kS32));
  REQUIRE(ir::CmpAllowsType(CmpOp::kLo, T::kU16));
  REQUIRE_FALSE(ir::CmpAllowsType(CmpOp::kLo, T::kS32));
  REQUIRE(ir::CmpAllowsType(CmpOp::kNan, T::kF64));
  REQUIRE_FALSE(ir::CmpAllowsType(CmpOp::kEqu, T::kU32));
  REQUIRE_FALSE(ir::CmpAllowsType(CmpOp::kNone, T::kU32));
  using ir::AtomOp;
  REQUIRE(ir::AtomOpAllowsType(AtomOp::kAdd, T::kBF16));
  REQUIRE_FALSE(ir::AtomOpAllowsType(AtomOp::kAdd, T::kS64));
  REQUIRE(ir::AtomOpAllowsType(AtomOp::kMin, T::kS64));
  REQUIRE(ir::AtomOpAllowsType(AtomOp::kInc, T::kU32));
  REQUIRE_FALSE(ir::AtomOpAllowsType(AtomOp::kInc, T::kU64));
  REQUIRE(ir::AtomOpAllowsType(AtomOp::kCas, T::kB64));
  // Issue 11 item 19: atom.cas.b16 (no other 16-bit operation), .add on packed halves.
  REQUIRE(ir::AtomOpAllowsType(AtomOp::kCas, T::kB16));
  REQUIRE_FALSE(ir::AtomOpAllowsType(AtomOp::kExch, T::kB16));
  REQUIRE(ir::AtomOpAllowsType(AtomOp::kAdd, T::kF16x2));
  REQUIRE(ir::AtomOpAllowsType(AtomOp::kAdd, T::kBF16x2));
  REQUIRE_FALSE(ir::AtomOpAllowsType(AtomOp::kMax, T::kF16x2));
  REQUIRE_FALSE(ir::AtomOpAllowsType(AtomOp::kXor, T::kU32));
  REQUIRE_FALSE(ir::AtomOpAllowsType(AtomOp::kNone, T::kB32));
}

TEST_CASE("instruction requirements come from the table's columns", "[opcode]") {
  auto req = [](ir::Opcode op, ScalarType t, ScalarType t2 = ScalarType::kNone) {
    ir::Instruction inst;
    inst.op = op;
    inst.mods.type = t;
    inst.mods.type2 = t2;
    ir::TargetRequirement r = ir::RequirementOf(inst);
    return StrCat(ir::RequirementName(r), "/", ir::PtxVersion{r.ptx}.ToString());
  };
  REQUIRE(req(ir::Opcode::kAdd, ScalarType::kF32) == "sm_0/0.0");
  REQUIRE(req(ir::Opcode::kAdd, ScalarType::kBF16) == "sm_90/7.8");
  REQUIRE(req(ir::Opcode::kFma, ScalarType::kBF16x2) == "sm_80/7.0");
  REQUIRE(req(ir::Opcode::kCvt, ScalarType::kBF16, ScalarType::kF32) == "sm_80/7.0");
  REQUIRE(req(ir::Opcode::kCvt, ScalarType::kF32, ScalarType::kBF16) == "sm_80/7.1");
  REQUIRE(req(ir::Opcode::kCvt, ScalarType::kBF16, ScalarType::kF16) == "sm_90/7.8");
  REQUIRE(req(ir::Opcode::kCvt, ScalarType::kF32, ScalarType::kF16) == "sm_0/0.0");
  auto name = [](const ir::Instruction& inst) {
    ir::TargetRequirement r = ir::RequirementOf(inst);
    return StrCat(ir::RequirementName(r), "/", ir::PtxVersion{r.ptx}.ToString());
  };
  ir::Instruction cvt_ftz;
  cvt_ftz.op = ir::Opcode::kCvt;
  cvt_ftz.mods = ir::Modifiers{.type = ScalarType::kF32, .type2 = ScalarType::kBF16};
  cvt_ftz.mods.ftz = true;
  REQUIRE(name(cvt_ftz) == "sm_90/7.8");
  ir::Instruction wide_ld;
  wide_ld.op = ir::Opcode::kLd;
  wide_ld.mods = ir::Modifiers{.type = ScalarType::kF64, .space = ir::StateSpace::kGlobal, .vec = 4};
  REQUIRE(name(wide_ld) == "sm_100/8.8");
  wide_ld.mods.vec = 2;
  REQUIRE(name(wide_ld) == "sm_0/0.0");
  wide_ld.mods = ir::Modifiers{.type = ScalarType::kF32, .space = ir::StateSpace::kGlobal, .vec = 4};
  REQUIRE(name(wide_ld) == "sm_0/0.0");
  ir::Instruction cvta;
  cvta.op = ir::Opcode::kCvta;
  cvta.mods = ir::Modifiers{.type = ScalarType::kU64, .space = ir::StateSpace::kParam};
  REQUIRE(name(cvta) == "sm_0/7.7");
  ir::Instruction mov;
  mov.op = ir::Opcode::kMov;
  mov.mods.type = ScalarType::kU32;
  mov.srcs.push_back(ir::Operand::Special(ir::SpecialReg::kDynamicSmemSize));
  REQUIRE(ir::RequirementOf(mov).ptx.value == 41);
  // Rounded up to a version that exists.
  ir::Kernel k;
  k.target = ir::Target::kSm75;
  k.body.push_back(mov);
  REQUIRE(ir::RequiredPtxVersion(ir::Target::kSm75, {&k}).ToString() == "6.3");
  k.target = ir::Target::kSm80;
  REQUIRE(ir::RequiredPtxVersion(ir::Target::kSm80, {&k}).ToString() == "7.0");
}


TEST_CASE("instruction-only types, mma shapes and fragment register types", "[types][mma]") {
  for (ScalarType t : {ScalarType::kTF32, ScalarType::kE4M3, ScalarType::kE5M2, ScalarType::kE4M3x2, ScalarType::kE5M2x2}) {
    CHECK(ir::IsInstructionOnlyType(t));
  }
  for (int i = 1; i <= static_cast<int>(ScalarType::kF64); ++i) CHECK_FALSE(ir::IsInstructionOnlyType(static_cast<ScalarType>(i)));
  CHECK(ir::TypeBits(ScalarType::kTF32) == 32);
  CHECK(ir::TypeBits(ScalarType::kE4M3) == 8);
  CHECK(ir::TypeBits(ScalarType::kE5M2x2) == 16);
  CHECK(ir::FragmentRegType(ScalarType::kF16) == ScalarType::kF16x2);
  CHECK(ir::FragmentRegType(ScalarType::kBF16) == ScalarType::kBF16x2);
  CHECK(ir::FragmentRegType(ScalarType::kTF32) == ScalarType::kB32);
  CHECK(ir::FragmentRegType(ScalarType::kE4M3) == ScalarType::kB32);
  CHECK(ir::FragmentRegType(ScalarType::kS8) == ScalarType::kB32);
  CHECK(ir::FragmentRegType(ScalarType::kF32) == ScalarType::kF32);
  CHECK(ir::FragmentRegType(ScalarType::kS32) == ScalarType::kS32);
  const ir::MatrixShape s = ir::ParseMatrixShape("m16n8k32");
  CHECK((s.m == 16 && s.n == 8 && s.k == 32));
  for (std::string_view bad : {"", "m16n8", "m16n8k", "n8m16k8", "m16n8k8x", "mXn8k8"}) {
    INFO(bad);
    CHECK(ir::ParseMatrixShape(bad).m == 0);
  }
  // Listed modifier values: names, counts, the value's own target.
  const ir::OpInfo& f16 = ir::GetOpInfo(ir::Opcode::kMmaF16F32);
  CHECK(ir::NumEnumValues(f16, ir::ModSlot::kShape) == 2);
  CHECK(ir::EnumValueName(f16, ir::ModSlot::kShape, 2) == "m16n8k16");
  CHECK(ir::EnumValueName(f16, ir::ModSlot::kShape, 3) == "");
  CHECK(ir::EnumValueName(f16, ir::ModSlot::kLayout, 1) == "row.col");
  CHECK(ir::EnumValueRequirement(f16, ir::ModSlot::kShape, 2).sm == 80);
  CHECK(ir::EnumValueRequirement(f16, ir::ModSlot::kShape, 2).ptx.value == 70);
  CHECK(ir::EnumValueRequirement(f16, ir::ModSlot::kShape, 1).sm == 0);
  CHECK(ir::TypeSlotMask(f16, 2) == ir::MaskOf(ScalarType::kF16));
  // Instructions did not grow for mma's four types, shape and layout: the
  // byte-sized fields share the head (x86-64 / aarch64 layout).
  STATIC_REQUIRE(sizeof(ir::Instruction) == 120);
}

}  // namespace
}  // namespace ptxforge
