// Bit-exact conversions between double and the IEEE formats PTX uses (f16,
// bf16, f32) with PTX's four rounding modes. Used for f16 immediates and by
// the emulator's cvt.
#ifndef PTXFORGE_IR_FLOAT_BITS_H_
#define PTXFORGE_IR_FLOAT_BITS_H_

#include <cstdint>

#include "ir/instruction.h"

namespace ptxforge::ir {

struct FloatFormat {
  int exp_bits;
  int mant_bits;
};
inline constexpr FloatFormat kHalfFormat{5, 10};
inline constexpr FloatFormat kBF16Format{8, 7};
inline constexpr FloatFormat kF32Format{8, 23};

// Rounds `x` to `fmt` with rounding mode `r` (kRn, kRz, kRm, kRp; kNone means
// kRn) and returns the bits. NaN becomes the canonical quiet NaN with x's sign.
uint32_t EncodeFloat(double x, FloatFormat fmt, Rounding r = Rounding::kRn);
// The exact value of `bits` in `fmt`.
double DecodeFloat(uint32_t bits, FloatFormat fmt);

inline uint16_t F32ToF16Bits(float x, Rounding r = Rounding::kRn) {
  return static_cast<uint16_t>(EncodeFloat(x, kHalfFormat, r));
}
inline float F16BitsToF32(uint16_t b) { return static_cast<float>(DecodeFloat(b, kHalfFormat)); }
inline uint16_t F32ToBF16Bits(float x, Rounding r = Rounding::kRn) {
  return static_cast<uint16_t>(EncodeFloat(x, kBF16Format, r));
}
inline float BF16BitsToF32(uint16_t b) { return static_cast<float>(DecodeFloat(b, kBF16Format)); }

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_FLOAT_BITS_H_
