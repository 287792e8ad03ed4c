// Value semantics shared by the emulator and the optimizer: integer
// arithmetic, shifts, comparison and conversion exactly as PTX defines them,
// and which special registers change while a thread runs. One copy, so that
// a folded constant is what the instruction would have computed.
#ifndef PTXFORGE_IR_SEMANTICS_H_
#define PTXFORGE_IR_SEMANTICS_H_

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ir/instruction.h"

namespace ptxforge::ir::sem {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

// The low `bits` bits of v (bits 1..64).
inline uint64_t Truncate(uint64_t v, int bits) { return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1); }
// The low `bits` bits of v, sign-extended to 64.
inline int64_t SignExtend(uint64_t v, int bits) {
  return bits >= 64 ? static_cast<int64_t>(v) : static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}

// add/sub/mul.lo wrap around (two's complement).
template <typename T>
T Add(T a, T b) { return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b)); }
template <typename T>
T Sub(T a, T b) { return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b)); }
// (16-bit operands are widened first: uint16_t * uint16_t would multiply as int.)
template <typename T>
T MulLo(T a, T b) {
  using M = std::conditional_t<(sizeof(T) < 4), uint32_t, Unsigned<T>>;
  return static_cast<T>(static_cast<M>(static_cast<Unsigned<T>>(a)) * static_cast<M>(static_cast<Unsigned<T>>(b)));
}
// The high half of the double-width product.
template <typename T>
T MulHi(T a, T b) {
  if constexpr (sizeof(T) == 8) {
    using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> 64);
  } else {
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> (8 * sizeof(T)));
  }
}
// The type .wide produces from T (16 -> 32, 32 -> 64 bits, same signedness).
template <typename T>
using Wide = std::conditional_t<sizeof(T) == 2, std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>,
                                std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
template <typename T>
Wide<T> MulWide(T a, T b) {
  using UW = std::make_unsigned_t<Wide<T>>;
  return static_cast<Wide<T>>(static_cast<UW>(static_cast<Wide<T>>(a)) * static_cast<UW>(static_cast<Wide<T>>(b)));
}
// add.sat / sub.sat (s32 only): clamped to the s32 range.
inline int32_t SaturateS32(int64_t r) {
  return static_cast<int32_t>(std::clamp<int64_t>(r, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
}
// Division by zero gives all ones (no trap); MIN / -1 wraps to MIN.
template <typename T>
T Div(T a, T b) {
  if (b == 0) return static_cast<T>(~Unsigned<T>{0});
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return a;
  }
  return static_cast<T>(a / b);
}
// Remainder by zero gives the dividend; MIN % -1 is 0.
template <typename T>
T Rem(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}
template <typename T>
T Abs(T a) { return a < 0 ? static_cast<T>(Unsigned<T>{0} - static_cast<Unsigned<T>>(a)) : a; }
template <typename T>
T Neg(T a) { return static_cast<T>(Unsigned<T>{0} - static_cast<Unsigned<T>>(a)); }
// Shift amounts of the width or more give 0 (or the sign for shr.s).
template <typename T>
T Shl(T a, uint32_t n) {
  constexpr uint32_t kBits = 8 * sizeof(T);
  return n >= kBits ? T{0} : static_cast<T>(static_cast<Unsigned<T>>(static_cast<Unsigned<T>>(a) << n));
}
template <typename T>
T Shr(T a, uint32_t n) {
  constexpr uint32_t kBits = 8 * sizeof(T);
  if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(a >> (n >= kBits ? kBits - 1 : n));
  } else {
    return n >= kBits ? T{0} : static_cast<T>(a >> n);
  }
}
template <typename T>
uint32_t Popc(T a) { return static_cast<uint32_t>(std::popcount(static_cast<Unsigned<T>>(a))); }
template <typename T>
uint32_t Clz(T a) { return static_cast<uint32_t>(std::countl_zero(static_cast<Unsigned<T>>(a))); }
template <typename T>
T Brev(T v) {
  constexpr uint32_t kBits = 8 * sizeof(T);
  Unsigned<T> a = static_cast<Unsigned<T>>(v), r = 0;
  for (uint32_t i = 0; i < kBits; ++i) r |= static_cast<Unsigned<T>>(((a >> i) & 1) << (kBits - 1 - i));
  return static_cast<T>(r);
}

// setp's comparison. Floats: the ordered forms are false and the unordered
// (…u, nan) true when an operand is NaN. Integers: lo/ls/hi/hs are lt/le/gt/ge
// (the type decides signedness).
template <typename T>
bool Compare(CmpOp c, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    bool unordered = std::isnan(a) || std::isnan(b);
    switch (c) {
      case CmpOp::kEq: return !unordered && a == b;
      case CmpOp::kNe: return !unordered && a != b;
      case CmpOp::kLt: return !unordered && a < b;
      case CmpOp::kLe: return !unordered && a <= b;
      case CmpOp::kGt: return !unordered && a > b;
      case CmpOp::kGe: return !unordered && a >= b;
      case CmpOp::kEqu: return unordered || a == b;
      case CmpOp::kNeu: return unordered || a != b;
      case CmpOp::kLtu: return unordered || a < b;
      case CmpOp::kLeu: return unordered || a <= b;
      case CmpOp::kGtu: return unordered || a > b;
      case CmpOp::kGeu: return unordered || a >= b;
      case CmpOp::kNum: return !unordered;
      case CmpOp::kNan: return unordered;
      default: return false;
    }
  } else {
    switch (c) {
      case CmpOp::kEq: return a == b;
      case CmpOp::kNe: return a != b;
      case CmpOp::kLt:
      case CmpOp::kLo: return a < b;
      case CmpOp::kLe:
      case CmpOp::kLs: return a <= b;
      case CmpOp::kGt:
      case CmpOp::kHi: return a > b;
      case CmpOp::kGe:
      case CmpOp::kHs: return a >= b;
      default: return false;
    }
  }
}

// setp's optional boolean combination with its third (predicate) source.
inline bool Combine(BoolOp op, bool a, bool c) {
  switch (op) {
    case BoolOp::kAnd: return a && c;
    case BoolOp::kOr: return a || c;
    case BoolOp::kXor: return a != c;
    default: return a;
  }
}

// cvt between integer types (bits of the source, already truncated to its
// width): truncation or sign/zero extension; with .sat, clamped to the
// destination's range. Returns the destination's bits (its width, zero-extended).
inline uint64_t ConvertInt(uint64_t bits, ScalarType from, ScalarType to, bool sat) {
  const int wf = TypeBits(from), wt = TypeBits(to);
  const bool sf = IsSigned(from), st = IsSigned(to);
  const int64_t s = sf ? SignExtend(bits, wf) : static_cast<int64_t>(Truncate(bits, wf));
  const uint64_t u = Truncate(bits, wf);
  if (sat) {
    if (st) {
      const int64_t hi = wt >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (wt - 1)) - 1;
      const int64_t lo = -hi - 1;
      if (!sf) return Truncate(u > static_cast<uint64_t>(hi) ? static_cast<uint64_t>(hi) : u, wt);
      return Truncate(static_cast<uint64_t>(std::clamp(s, lo, hi)), wt);
    }
    const uint64_t hi = wt >= 64 ? ~uint64_t{0} : (uint64_t{1} << wt) - 1;
    if (sf) return s < 0 ? 0 : std::min(static_cast<uint64_t>(s), hi);
    return std::min(u, hi);
  }
  return Truncate(sf ? static_cast<uint64_t>(s) : u, wt);
}

// Special registers whose value may differ between two reads by one thread
// (clocks, timers, and the warp and SM ids, which can change when a warp is
// preempted and resumed elsewhere): never merged or hoisted.
inline bool SpecialRegIsVolatile(SpecialReg r) {
  switch (r) {
    case SpecialReg::kClock:
    case SpecialReg::kClock64:
    case SpecialReg::kGlobalTimer:
    case SpecialReg::kWarpId:
    case SpecialReg::kSmId:
      return true;
    default:
      return false;
  }
}

}  // namespace ptxforge::ir::sem

#endif  // PTXFORGE_IR_SEMANTICS_H_
