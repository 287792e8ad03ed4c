// Rounding double to narrower IEEE binary formats.
#include "ir/float_bits.h"

#include <cmath>

namespace ptxforge::ir {

uint32_t EncodeFloat(double x, FloatFormat fmt, Rounding r) {
  const int m = fmt.mant_bits;
  const int bias = (1 << (fmt.exp_bits - 1)) - 1;
  const uint32_t exp_all = (1u << fmt.exp_bits) - 1;
  const uint32_t sign = std::signbit(x) ? 1u << (fmt.exp_bits + m) : 0u;
  if (std::isnan(x)) return sign | (exp_all << m) | (1u << (m - 1));
  const uint32_t inf = sign | (exp_all << m);
  const uint32_t max_finite = sign | ((exp_all - 1) << m) | ((1u << m) - 1);
  if (std::isinf(x)) return inf;
  double a = std::fabs(x);
  if (a == 0) return sign;

  int k = 0;
  std::frexp(a, &k);  // a = f * 2^k, f in [0.5, 1)
  const int emin = 1 - bias;
  int e = k - 1 < emin ? emin : k - 1;
  double scaled = std::ldexp(a, m - e);  // in units of the last mantissa bit; exact
  double q = std::floor(scaled);
  double frac = scaled - q;
  bool negative = sign != 0;
  bool up = false;
  switch (r) {
    case Rounding::kRz: break;
    case Rounding::kRm: up = negative && frac > 0; break;
    case Rounding::kRp: up = !negative && frac > 0; break;
    default:  // kRn / kNone: nearest, ties to even
      up = frac > 0.5 || (frac == 0.5 && std::fmod(q, 2.0) != 0);
      break;
  }
  if (up) q += 1;
  if (q >= std::ldexp(1.0, m + 1)) {  // rounded up to the next binade
    q /= 2;
    ++e;
  }
  if (e > bias) {  // overflow
    switch (r) {
      case Rounding::kRz: return max_finite;
      case Rounding::kRm: return negative ? inf : max_finite;
      case Rounding::kRp: return negative ? max_finite : inf;
      default: return inf;
    }
  }
  uint32_t mant = static_cast<uint32_t>(q);
  uint32_t biased = mant >= (1u << m) ? static_cast<uint32_t>(e + bias) : 0u;  // else subnormal
  return sign | (biased << m) | (mant & ((1u << m) - 1));
}

double DecodeFloat(uint32_t bits, FloatFormat fmt) {
  const int m = fmt.mant_bits;
  const int bias = (1 << (fmt.exp_bits - 1)) - 1;
  const uint32_t exp_all = (1u << fmt.exp_bits) - 1;
  bool negative = (bits >> (fmt.exp_bits + m)) & 1;
  uint32_t exp = (bits >> m) & exp_all;
  uint32_t mant = bits & ((1u << m) - 1);
  double v;
  if (exp == exp_all) {
    v = mant ? std::nan("") : INFINITY;
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - bias - m);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1u << m)), static_cast<int>(exp) - bias - m);
  }
  return negative ? -v : v;
}

}  // namespace ptxforge::ir
