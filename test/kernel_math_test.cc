// kernels/kernel_math.h: division by a constant as a multiply-high
// (MagicDivisorFor, DivByConstant), exact over the range it is asked for.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "emit/ir_printer.h"
#include "kernels/kernel_math.h"
#include "runtime/emulator.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using kernels::DivByConstant;
using kernels::MagicDivide;
using kernels::MagicDivisor;
using kernels::MagicDivisorFor;
using testing::FinishOrDie;

constexpr uint32_t kMaxU32 = std::numeric_limits<uint32_t>::max();

// The halo loads of conv2d.backward_filter's default configuration: 1020
// indices split by 340, then 340 by 34 (one mul.hi each, no shift).
static_assert(MagicDivisorFor(340, 1019) == MagicDivisor{12632257, 0});
static_assert(MagicDivisorFor(34, 339) == MagicDivisor{126322568, 0});

TEST_CASE("MagicDivisorFor is exact for every dividend of the range it is asked for", "[kernel_math]") {
  const std::vector<uint32_t> divisors = {3,  5,  6,   7,   9,   10,  11,  12,   25,   27,
                                          34, 35, 100, 204, 245, 340, 641, 1000, 65537};
  const std::vector<uint32_t> ranges = {339, 1019, 4095, 65535, uint32_t{1} << 20, uint32_t{1} << 24};
  int checked = 0;
  for (uint32_t d : divisors) {
    for (uint32_t max_n : ranges) {
      std::optional<MagicDivisor> m = MagicDivisorFor(d, max_n);
      INFO("d " << d << " max_n " << max_n);
      REQUIRE(m.has_value());  // every one of these fits in 32 bits
      CHECK(m->shift < 32);
      uint32_t wrong = 0;
      for (uint32_t n = 0; n <= max_n; ++n) {
        if (MagicDivide(n, *m) != n / d) ++wrong;
      }
      CHECK(wrong == 0);
      ++checked;
    }
  }
  CHECK(checked == static_cast<int>(divisors.size() * ranges.size()));
}

TEST_CASE("MagicDivisorFor over all of u32: exact where a 32-bit multiplier suffices", "[kernel_math]") {
  // Exhaustive over 2^32 is too slow for a unit test: every quotient's first
  // and last dividend in the top and bottom 2^22, and a stride through the rest.
  for (uint32_t d : {3u, 5u, 10u, 34u, 340u, 641u}) {
    std::optional<MagicDivisor> m = MagicDivisorFor(d, kMaxU32);
    INFO("d " << d);
    REQUIRE(m.has_value());
    uint32_t wrong = 0;
    auto check = [&](uint32_t n) {
      if (MagicDivide(n, *m) != n / d) ++wrong;
    };
    for (uint64_t n = 0; n < (uint64_t{1} << 22); ++n) check(static_cast<uint32_t>(n));
    for (uint64_t n = kMaxU32 - (uint64_t{1} << 22); n <= kMaxU32; ++n) check(static_cast<uint32_t>(n));
    for (uint64_t n = 0; n <= kMaxU32; n += 4099) check(static_cast<uint32_t>(n));
    CHECK(wrong == 0);
  }
}

TEST_CASE("MagicDivisorFor falls back when it cannot prove a 32-bit multiplier exact", "[kernel_math]") {
  CHECK_FALSE(MagicDivisorFor(0, 100).has_value());
  CHECK_FALSE(MagicDivisorFor(1, 100).has_value());
  // n / 7 over all of u32 needs a 33-bit multiplier: the largest that fits
  // (shift 2) is wrong at 4294967291, and MagicDivisorFor says no.
  CHECK_FALSE(MagicDivisorFor(7, kMaxU32).has_value());
  const MagicDivisor shift2{2454267027u, 2};
  CHECK(MagicDivide(4294967291u, shift2) != 4294967291u / 7);
  // Up to 3435973836 (the last N with N·e < 2^34) that multiplier is proved exact.
  CHECK(MagicDivisorFor(7, 3435973836u) == shift2);
  CHECK_FALSE(MagicDivisorFor(7, 3435973837u).has_value());
  // Beyond the range asked for, the constant for a small range may be wrong:
  // 34 over [0, 339] is a bare mul.hi, which fails somewhere in u32.
  const MagicDivisor small = *MagicDivisorFor(34, 339);
  bool wrong_somewhere = false;
  for (uint64_t n = 0; n <= kMaxU32 && !wrong_somewhere; n += 34) {
    wrong_somewhere = MagicDivide(static_cast<uint32_t>(n + 33), small) != (n + 33) / 34;
  }
  CHECK(wrong_somewhere);
}

// A kernel whose thread i < count writes out[i] = DivByConstant(base + i, d,
// max_n) when base + i <= max_n.
ir::Kernel DivKernel(uint32_t d, uint32_t max_n) {
  KernelBuilder b("div_by_constant", ir::Target::kSm80);
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> base = b.Param<U32>("base");
  Value<U32> count = b.Param<U32>("count");
  Value<U32> i = b.GlobalThreadIdX();
  Value<U32> n = b.Add(base, i);
  b.If(b.And(b.Lt(i, count), b.Le(n, max_n)), [&] {
    b.Store(ir::StateSpace::kGlobal, b.ElementAddr<U32>(out, i), DivByConstant(b, n, d, max_n));
  });
  b.Ret();
  return FinishOrDie(b);
}

TEST_CASE("DivByConstant: mul.hi where proved exact and div.u32 otherwise", "[kernel_math]") {
  auto instructions = [](uint32_t d, uint32_t max_n) { return emit::PrintIr(DivKernel(d, max_n)); };
  const std::string by34 = instructions(34, 339);
  CHECK(by34.find("mul.hi.u32") != std::string::npos);
  CHECK(by34.find("div.u32") == std::string::npos);
  CHECK(by34.find("shr.u32") == std::string::npos);  // shift 0
  const std::string by7 = instructions(7, 3435973836u);  // shift 2
  CHECK(by7.find("mul.hi.u32") != std::string::npos);
  CHECK(by7.find("shr.u32") != std::string::npos);
  CHECK(by7.find("div.u32") == std::string::npos);
  const std::string by7_all = instructions(7, kMaxU32);  // not provable: a plain div
  CHECK(by7_all.find("div.u32") != std::string::npos);
  CHECK(by7_all.find("mul.hi") == std::string::npos);
  const std::string by16 = instructions(16, 4095);  // a power of two stays a div (pow2div makes it a shift)
  CHECK(by16.find("div.u32") != std::string::npos);
  CHECK(by16.find("mul.hi") == std::string::npos);
}

TEST_CASE("DivByConstant on the emulator: every dividend of the range and the top of a wide one", "[kernel_math]") {
  struct Case {
    uint32_t d, max_n, base, count;
  };
  const std::vector<Case> cases = {
      {34, 339, 0, 340},          {340, 1019, 0, 1020},  {7, 5000, 0, 5001}, {245, 2449, 0, 2450},
      {7, 3435973836u, 3435973836u - 4999, 5000},  // shift 2, the last dividends it is proved for
      {340, kMaxU32, kMaxU32 - 4999, 5000},         // mul.hi and shr up to 2^32 - 1
  };
  for (const Case& c : cases) {
    INFO("d " << c.d << " max_n " << c.max_n << " base " << c.base);
    ir::Kernel k = DivKernel(c.d, c.max_n);
    auto emu = runtime::MakeEmulator();
    auto out = runtime::Buffer<uint32_t>::FromHost(*emu, std::vector<uint32_t>(c.count, kMaxU32));
    REQUIRE(out.ok());
    auto loaded = testing::LoadOrDie(*emu, k);
    const uint32_t threads = 128;
    absl::Status s =
        emu->Launch(*loaded, {.grid = {(c.count + threads - 1) / threads}, .block = {threads}}, {*out, c.base, c.count});
    INFO(s.ToString());
    REQUIRE(s.ok());
    std::vector<uint32_t> got = *out->ToHost();
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < c.count; ++i) {
      if (got[i] != (c.base + i) / c.d) ++wrong;
    }
    CHECK(wrong == 0);
  }
}

}  // namespace
}  // namespace ptxforge
