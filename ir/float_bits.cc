// Rounding double to narrower IEEE binary formats.
#include "ir/float_bits.h"

#include <bit>
#include <cmath>

namespace ptxforge::ir {

uint32_t EncodeFloat(double x, FloatFormat fmt, Rounding r) {
  // Works on the bits of the double: the emulator calls this for every
  // f16/bf16 result, so no frexp/ldexp.
  const int m = fmt.mant_bits;
  const int bias = (1 << (fmt.exp_bits - 1)) - 1;
  const uint32_t exp_all = (1u << fmt.exp_bits) - 1;
  const uint64_t in = std::bit_cast<uint64_t>(x);
  const bool negative = (in >> 63) != 0;
  const uint32_t sign = negative ? 1u << (fmt.exp_bits + m) : 0u;
  const int dexp = static_cast<int>((in >> 52) & 0x7FF);
  const uint64_t dmant = in & ((uint64_t{1} << 52) - 1);
  if (dexp == 0x7FF) return dmant ? sign | (exp_all << m) | (1u << (m - 1)) : sign | (exp_all << m);
  const uint32_t inf = sign | (exp_all << m);
  const uint32_t max_finite = sign | ((exp_all - 1) << m) | ((1u << m) - 1);
  if (dexp == 0 && dmant == 0) return sign;

  // x = sig * 2^(e - 52) with sig a 53-bit integer (double subnormals are
  // far below every target format and only matter as "not zero").
  uint64_t sig = dexp == 0 ? dmant : dmant | (uint64_t{1} << 52);
  int e = dexp == 0 ? -1022 : dexp - 1023;
  const int emin = 1 - bias;
  // Keep m fraction bits at exponent max(e, emin); the rest is shifted out.
  int shift = 52 - m + (e < emin ? emin - e : 0);
  if (e < emin) e = emin;
  uint64_t q, rest, half;
  if (shift >= 64) {
    q = 0;
    rest = sig;  // not zero
    half = ~uint64_t{0};  // only "more than half" / "exactly half" matter: neither
  } else {
    q = sig >> shift;
    rest = sig & ((uint64_t{1} << shift) - 1);
    half = uint64_t{1} << (shift - 1);
  }
  bool up = false;
  switch (r) {
    case Rounding::kRz: break;
    case Rounding::kRm: up = negative && rest != 0; break;
    case Rounding::kRp: up = !negative && rest != 0; break;
    default: up = rest > half || (rest == half && (q & 1) != 0); break;  // nearest, ties to even
  }
  q += up;
  if (q >> (m + 1)) {  // rounded up to the next binade
    q >>= 1;
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
  uint32_t biased = mant >> m ? static_cast<uint32_t>(e + bias) : 0u;  // else subnormal
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
