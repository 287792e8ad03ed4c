// PTX float semantics shared by the emulator's handlers: rounding modes,
// flush-to-zero, saturation, canonical NaN, min/max. Compiled with
// -frounding-math (the directed modes use fesetround).
#ifndef PTXFORGE_RUNTIME_EMULATOR_FLOAT_SEMANTICS_H_
#define PTXFORGE_RUNTIME_EMULATOR_FLOAT_SEMANTICS_H_

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>

#include "ir/float_bits.h"
#include "ir/instruction.h"

namespace ptxforge::runtime::emu {

// PTX's canonical NaN for f32 results.
inline float CanonicalNan32() { return std::bit_cast<float>(uint32_t{0x7FFFFFFF}); }
inline double CanonicalNan64() { return std::bit_cast<double>(uint64_t{0x7FFFFFFFFFFFFFFF}); }
inline float Canon(float v) { return std::isnan(v) ? CanonicalNan32() : v; }
inline double Canon(double v) { return std::isnan(v) ? CanonicalNan64() : v; }

// Subnormals to a zero of the same sign.
inline float FlushF32(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }
// .ftz on f64 exists only for rcp.approx.ftz.f64.
inline double Flush(double v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0, v) : v; }
inline float Flush(float v) { return FlushF32(v); }
// Clamps to [+0.0, 1.0]; NaN and -0.0 give +0.0.
inline double Saturate(double v) { return !(v > 0) ? 0.0 : v > 1 ? 1.0 : v; }
inline float Saturate(float v) { return !(v > 0) ? 0.0f : v > 1 ? 1.0f : v; }

inline int FeRound(ir::Rounding r) {
  switch (r) {
    case ir::Rounding::kRz:
    case ir::Rounding::kRzi: return FE_TOWARDZERO;
    case ir::Rounding::kRm:
    case ir::Rounding::kRmi: return FE_DOWNWARD;
    case ir::Rounding::kRp:
    case ir::Rounding::kRpi: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

// Runs fn() with the host rounding mode set to r. Launches run with the
// mode at nearest (see ScopedFloatEnvironment), so that is what is restored.
// The result goes through a volatile so the computation cannot be moved
// past the second fesetround.
template <typename Fn>
inline auto WithRounding(ir::Rounding r, Fn fn) {
  int mode = FeRound(r);
  if (mode == FE_TONEAREST) return fn();
  std::fesetround(mode);
  volatile auto v = fn();
  std::fesetround(FE_TONEAREST);
  auto result = v;
  return result;
}

// For the length of a launch on this host thread: round to nearest, no
// flush-to-zero or denormals-are-zero (a caller built with -ffast-math sets
// those), and the caller's environment restored afterwards.
class ScopedFloatEnvironment {
 public:
  ScopedFloatEnvironment();
  ~ScopedFloatEnvironment();
  ScopedFloatEnvironment(const ScopedFloatEnvironment&) = delete;
  ScopedFloatEnvironment& operator=(const ScopedFloatEnvironment&) = delete;

 private:
  std::fenv_t saved_;
  unsigned csr_ = 0;
};

// The exact a*b + c rounded to odd in double (a, b, c half-format values),
// so that a second rounding to a narrower format (f16, bf16) is correct.
double FmaRoundToOdd(double a, double b, double c);
// An integer as a double, rounded to odd when it has more than 53 bits.
double IntToDoubleRoundToOdd(int64_t s, uint64_t u, bool is_signed);

// PTX min/max on floats: a NaN operand yields the other one; -0 < +0.
template <typename F>
inline F FMin(F a, F b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename F>
inline F FMax(F a, F b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

// Half formats: value <-> bits with PTX rounding; subnormal flush for .ftz.
inline ir::FloatFormat HalfFormat(ir::ScalarType t) {
  return ir::IsBF16Family(t) ? ir::kBF16Format : ir::kHalfFormat;
}
inline double HalfValue(uint16_t bits, ir::FloatFormat f, bool ftz) {
  double v = ir::DecodeFloat(bits, f);
  if (ftz && (bits & ((1u << (f.exp_bits + f.mant_bits)) - 1)) != 0 && ((bits >> f.mant_bits) & ((1u << f.exp_bits) - 1)) == 0) {
    return std::signbit(v) ? -0.0 : 0.0;
  }
  return v;
}
inline uint16_t FlushHalf(uint16_t bits, ir::FloatFormat f) {
  if (((bits >> f.mant_bits) & ((1u << f.exp_bits) - 1)) == 0) bits &= static_cast<uint16_t>(1u << (f.exp_bits + f.mant_bits));
  return bits;
}
inline uint16_t HalfBits(double v, ir::FloatFormat f, ir::Rounding r, bool ftz, bool sat) {
  if (sat) v = Saturate(v);
  uint16_t bits = static_cast<uint16_t>(ir::EncodeFloat(v, f, r));
  if (ftz) bits = FlushHalf(bits, f);
  if (std::isnan(v)) bits = static_cast<uint16_t>((1u << (f.exp_bits + f.mant_bits)) - 1);  // canonical NaN
  return bits;
}

}  // namespace ptxforge::runtime::emu

#endif  // PTXFORGE_RUNTIME_EMULATOR_FLOAT_SEMANTICS_H_
