// Math functions built from the builder's instructions.
#include "builder/math.h"

#include <initializer_list>

namespace ptxforge {
namespace {

constexpr float kLog2e = 1.44269504088896340736f;
constexpr float kLog2eLo = 1.925963033500011e-08f;  // log2(e) - kLog2e
constexpr float kLn2 = 0.693147180559945309417f;

// c[0] + c[1] t + c[2] t^2 + ... by Horner's rule with fma.
Value<F32> Poly(KernelBuilder& b, Value<F32> t, std::initializer_list<float> c, Loc loc) {
  const float* end = c.end();
  Value<F32> acc = b.Const<F32>(*--end, loc);
  while (end != c.begin()) acc = b.Fma(acc, t, *--end, {}, loc);
  return acc;
}

}  // namespace

Value<F32> Exp2(KernelBuilder& b, Value<F32> x, Loc loc) { return b.Ex2(x, {}, loc); }

Value<F32> Exp(KernelBuilder& b, Value<F32> x, Precision p, Loc loc) {
  Value<F32> t = b.Mul(x, kLog2e, {}, loc);
  if (p == Precision::kApprox) return b.Ex2(t, {}, loc);
  // t + lo = x log2(e) to about 2^-48 relative; 2^(t + lo) = 2^t (1 + lo ln 2).
  // lo comes from x clamped to where e^x is a finite nonzero float, so that
  // infinities and NaN reach ex2 alone (fma(inf, log2e, -inf) would be NaN).
  Value<F32> xc = b.Min(b.Max(x, -104.0f, {}, loc), 89.0f, {}, loc);
  Value<F32> tc = b.Mul(xc, kLog2e, {}, loc);
  Value<F32> lo = b.Fma(xc, kLog2e, b.Neg(tc, {}, loc), {}, loc);
  lo = b.Fma(xc, kLog2eLo, lo, {}, loc);
  Value<F32> scale = b.Fma(lo, kLn2, 1.0f, {}, loc);
  return b.Mul(b.Ex2(t, {}, loc), scale, {}, loc);
}

Value<F32> Log2(KernelBuilder& b, Value<F32> x, Loc loc) { return b.Lg2(x, {}, loc); }

Value<F32> Log(KernelBuilder& b, Value<F32> x, Loc loc) { return b.Mul(b.Lg2(x, {}, loc), kLn2, {}, loc); }

Value<F32> Erf(KernelBuilder& b, Value<F32> x, Loc loc) {
  Value<F32> a = b.Abs(x, {}, loc);
  Value<F32> x2 = b.Mul(x, x, {}, loc);
  // |x| < 0.5: 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320).
  constexpr float k = 1.12837916709551257390f;
  Value<F32> small = b.Mul(x, Poly(b, x2, {k, -k / 3, k / 10, -k / 42, k / 216, -k / 1320}, loc), {}, loc);
  // Otherwise 1 - s (a1 + a2 s + ... + a5 s^4) e^(-x^2), s = 1 / (1 + 0.3275911 |x|).
  Value<F32> s = b.Rcp(b.Fma(a, 0.3275911f, 1.0f, {}, loc), {}, loc);
  Value<F32> poly = b.Mul(s, Poly(b, s, {0.254829592f, -0.284496736f, 1.421413741f, -1.453152027f, 1.061405429f}, loc),
                          {}, loc);
  Value<F32> tail = b.Mul(poly, Exp(b, b.Neg(x2, {}, loc), Precision::kAccurate, loc), {}, loc);
  Value<F32> large = b.Sub(b.Const<F32>(1.0f, loc), tail, {}, loc);
  Value<F32> signed_large = b.Select(b.Lt(x, 0.0f, loc), b.Neg(large, {}, loc), large, loc);
  // |x| >= 0.5 (or NaN, which both sides give) selects the rcp path, made
  // first: ptxas then keeps fewer values live across rcp.rn's slow path.
  return b.Select(b.Setp(ir::CmpOp::kGeu, a, 0.5f, false, loc), signed_large, small, loc);
}

Value<F32> Tanh(KernelBuilder& b, Value<F32> x, Precision p, Loc loc) {
  if (p == Precision::kApprox) return b.Tanh(x, loc);
  Value<F32> a = b.Abs(x, {}, loc);
  Value<F32> x2 = b.Mul(x, x, {}, loc);
  // |x| < 0.55: the Taylor series to x^15 (truncation below 4e-8 relative).
  Value<F32> small = b.Mul(
      x,
      Poly(b, x2,
           {1.0f, -1.0f / 3, 2.0f / 15, -17.0f / 315, 62.0f / 2835, -1382.0f / 155925, 21844.0f / 6081075,
            -929569.0f / 638512875.0f},
           loc),
      {}, loc);
  // Otherwise 1 - 2 / (e^2|x| + 1), which tends to 1 (e^2|x| = inf gives 1).
  Value<F32> e = Exp(b, b.Add(a, a, {}, loc), Precision::kAccurate, loc);
  Value<F32> large = b.Sub(b.Const<F32>(1.0f, loc), b.Div(b.Const<F32>(2.0f, loc), b.Add(e, 1.0f, {}, loc), {}, loc),
                           {}, loc);
  Value<F32> signed_large = b.Select(b.Lt(x, 0.0f, loc), b.Neg(large, {}, loc), large, loc);
  return b.Select(b.Lt(a, 0.55f, loc), small, signed_large, loc);
}

Value<F32> Sigmoid(KernelBuilder& b, Value<F32> x, Precision p, Loc loc) {
  Value<F32> e = Exp(b, b.Neg(x, {}, loc), p, loc);
  FloatOpts rcp;
  if (p == Precision::kApprox) rcp.mode = ir::Mode::kApprox;
  return b.Rcp(b.Add(e, 1.0f, {}, loc), rcp, loc);
}

Value<F32> Rsqrt(KernelBuilder& b, Value<F32> x, Precision p, Loc loc) {
  if (p == Precision::kApprox) return b.Rsqrt(x, {}, loc);
  return b.Rcp(b.Sqrt(x, {}, loc), {}, loc);
}

Value<F32> Gelu(KernelBuilder& b, Value<F32> x, GeluForm form, Precision p, Loc loc) {
  Value<F32> half_x = b.Mul(x, 0.5f, {}, loc);
  Value<F32> f;
  if (form == GeluForm::kErf) {
    f = Erf(b, b.Mul(x, 0.70710678118654752440f, {}, loc), loc);
  } else {
    constexpr float k0 = 0.79788456080286535588f;  // sqrt(2 / pi)
    Value<F32> x2 = b.Mul(x, x, {}, loc);
    Value<F32> u = b.Mul(x, b.Fma(x2, k0 * 0.044715f, k0, {}, loc), {}, loc);
    f = Tanh(b, u, p, loc);
  }
  return b.Fma(f, half_x, half_x, {}, loc);  // f first: half_x is made next to its use
}

Value<F32> Silu(KernelBuilder& b, Value<F32> x, Precision p, Loc loc) {
  return b.Mul(x, Sigmoid(b, x, p, loc), {}, loc);
}

}  // namespace ptxforge
