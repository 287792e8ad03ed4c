// Math the library's kernels share, built from builder instructions: 2^x in
// f32 (ex2.approx) and in f64 (PTX has no f64 ex2), conversions between a
// storage type and an accumulation type, and unsigned division by a constant
// as a multiply-high (exact over a known range of dividends).
#ifndef PTXFORGE_KERNELS_KERNEL_MATH_H_
#define PTXFORGE_KERNELS_KERNEL_MATH_H_

#include <bit>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "builder/kernel_builder.h"

namespace ptxforge::kernels {

// x as a To: cvt (the builder's default rounding) or, when x already is a
// To, x itself (storage <-> accumulation type in generic kernel bodies).
template <ScalarTag To, ScalarTag From>
Value<To> ConvertTo(KernelBuilder& b, Value<From> x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else {
    return b.Cvt<To>(x);
  }
}

inline constexpr double kLog2E = 1.4426950408889634;

// ex2.approx.f32 (relative error about 2^-22).
inline Value<F32> Exp2(KernelBuilder& b, Value<F32> x) { return b.Ex2(x); }

// 2^x to double precision: a range reduction to t = (x - round(x)) * ln 2
// and e^t by its Taylor series to t^13 / 13! (truncation below 1e-17 for
// |t| <= ln 2 / 2), scaled by 2^round(x) built in the exponent bits. x is
// clamped to [-1022, 1023]: below, the result is 2^-1022 instead of a
// subnormal or 0.
inline Value<F64> Exp2(KernelBuilder& b, Value<F64> x) {
  constexpr double kLn2 = 0.6931471805599453;
  Value<F64> xc = b.Min(b.Max(x, -1022.0), 1023.0);
  Value<S32> n = b.Cvt<S32>(xc, CvtOpts{.rounding = ir::Rounding::kRni});
  Value<F64> t = b.Mul(b.Sub(xc, b.Cvt<F64>(n)), kLn2);
  double coeff[14];
  coeff[0] = 1;
  for (int k = 1; k < 14; ++k) coeff[k] = coeff[k - 1] / k;
  Value<F64> poly = b.Const<F64>(coeff[13]);
  for (int k = 12; k >= 0; --k) poly = b.Fma(poly, t, coeff[k]);
  Value<S64> exponent = b.Shl(b.Cvt<S64>(b.Add(n, 1023)), 52u);
  return b.Mul(poly, b.Bitcast<F64>(exponent));
}

// n / d as mul.hi.u32(n, multiplier) >> shift, for every n in [0, max_dividend].
struct MagicDivisor {
  uint32_t multiplier;
  uint32_t shift;
  friend bool operator==(const MagicDivisor&, const MagicDivisor&) = default;
};

// The round-up method: with k = 32 + shift, multiplier m = ceil(2^k / d) and
// e = m·d − 2^k (0 <= e < d), n·m / 2^k = n/d + n·e / (d·2^k). Writing
// n = q·d + r (r <= d − 1), floor(n·m / 2^k) = q + floor((r + n·e/2^k) / d),
// which is q whenever n·e < 2^k. So the divisor is exact over [0, N] when
// N·e < 2^k, and floor(floor(n·m / 2^32) / 2^shift) = floor(n·m / 2^k).
// Returns the smallest such shift (and multiplier) whose multiplier fits in
// 32 bits, or nullopt when there is none (then some n <= N may need a 33-bit
// multiplier, as n / 7 over all of u32 does) or when d < 2.
constexpr std::optional<MagicDivisor> MagicDivisorFor(uint32_t d, uint32_t max_dividend) {
  if (d < 2) return std::nullopt;
  for (uint32_t shift = 0; shift < 32; ++shift) {
    const uint64_t two_k = uint64_t{1} << (32 + shift);
    const uint64_t m = (two_k + d - 1) / d;  // two_k <= 2^63: no overflow
    if (m > UINT32_MAX) return std::nullopt;  // grows with shift
    const uint64_t e = m * d - two_k;         // m·d < 2^64
    if (uint64_t{max_dividend} * e < two_k) return MagicDivisor{static_cast<uint32_t>(m), shift};
  }
  return std::nullopt;
}

// The quotient mul.hi.u32 and shr compute with m: n / d for every n up to
// the max_dividend m was made for (the reference for MagicDivisorFor's tests).
constexpr uint32_t MagicDivide(uint32_t n, MagicDivisor m) {
  return static_cast<uint32_t>((uint64_t{n} * m.multiplier) >> 32) >> m.shift;
}

// n / d for a constant d, when the caller knows n <= max_dividend: a power of
// two is a plain div (the pow2div pass makes it a shift); otherwise
// mul.hi.u32 and shr when MagicDivisorFor proves them exact over the range,
// and a plain div.u32 (which ptxas expands around a run-time reciprocal)
// when it cannot. Kernels choose it where it saves registers: a general
// rewrite of every div by a constant raised conv2d.backward_data on sm_80.
inline Value<U32> DivByConstant(KernelBuilder& b, Value<U32> n, uint32_t d, uint32_t max_dividend) {
  std::optional<MagicDivisor> magic = std::has_single_bit(d) ? std::nullopt : MagicDivisorFor(d, max_dividend);
  if (!magic) return b.Div(n, d);
  Value<U32> q = b.MulHi(n, magic->multiplier);
  return magic->shift == 0 ? q : b.Shr(q, magic->shift);
}

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_KERNEL_MATH_H_
