// Math the library's kernels share, built from builder instructions: 2^x in
// f32 (ex2.approx) and in f64 (PTX has no f64 ex2), and conversions between
// a storage type and an accumulation type.
#ifndef PTXFORGE_KERNELS_KERNEL_MATH_H_
#define PTXFORGE_KERNELS_KERNEL_MATH_H_

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

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_KERNEL_MATH_H_
