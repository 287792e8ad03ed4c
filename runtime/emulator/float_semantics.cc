// Float environment control and round-to-odd helpers for the emulator.
#include "runtime/emulator/float_semantics.h"

#include <bit>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define PTXFORGE_HAS_MXCSR 1
#endif

namespace ptxforge::runtime::emu {

ScopedFloatEnvironment::ScopedFloatEnvironment() {
  std::fegetenv(&saved_);
  std::fesetround(FE_TONEAREST);
#ifdef PTXFORGE_HAS_MXCSR
  csr_ = _mm_getcsr();
  _mm_setcsr(csr_ & ~0x8040u);  // clear FTZ (bit 15) and DAZ (bit 6)
#endif
}

ScopedFloatEnvironment::~ScopedFloatEnvironment() {
#ifdef PTXFORGE_HAS_MXCSR
  _mm_setcsr(csr_);
#endif
  std::fesetenv(&saved_);
}

namespace {
// If `exact_error` is not zero, moves r (the nearest double to the exact
// value) to whichever of r and its neighbour toward the exact value is odd.
double ToOdd(double r, double exact_error) {
  if (exact_error == 0 || !std::isfinite(r)) return r;
  if ((std::bit_cast<uint64_t>(r) & 1) != 0) return r;
  return std::nextafter(r, exact_error > 0 ? INFINITY : -INFINITY);
}
}  // namespace

double FmaRoundToOdd(double a, double b, double c) {
  double p = a * b;  // exact for f16/bf16 operands (at most 2 x 11 significant bits)
  double s = p + c;
  double bb = s - p;
  double err = (p - (s - bb)) + (c - bb);  // TwoSum: s + err == p + c exactly
  return ToOdd(s, err);
}

double IntToDoubleRoundToOdd(int64_t s, uint64_t u, bool is_signed) {
  bool negative = is_signed && s < 0;
  uint64_t mag = is_signed ? (negative ? 0 - static_cast<uint64_t>(s) : static_cast<uint64_t>(s)) : u;
  if (mag >> 53 == 0) return negative ? -static_cast<double>(mag) : static_cast<double>(mag);
  int shift = 64 - std::countl_zero(mag) - 53;
  uint64_t m = mag >> shift;
  if ((mag & ((uint64_t{1} << shift) - 1)) != 0) m |= 1;  // sticky bit
  double v = std::ldexp(static_cast<double>(m), shift);
  return negative ? -v : v;
}

}  // namespace ptxforge::runtime::emu
