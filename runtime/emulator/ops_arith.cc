// Emulator handlers: moves, integer and float arithmetic, bit operations,
// comparison and selection, with PTX's semantics.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ir/semantics.h"
#include "runtime/emulator/float_semantics.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime::emu {
namespace {

using ir::Opcode;
using ir::ScalarType;

template <typename T>
using U = std::make_unsigned_t<T>;

// ---- integer operations (T is the C++ integer type of the instruction)

template <typename T, typename F>
Action IntBinary(Thread& t, const DInst& d, F f) {
  Set<T>(t, d.dst[0], f(Get<T>(t, d.src[0]), Get<T>(t, d.src[1])));
  return Action::kNext;
}

template <typename T>
struct IntOps {
  static Action Add(Block&, Thread& t, const DInst& d) {
    return IntBinary<T>(t, d, ir::sem::Add<T>);
  }
  // add.sat / sub.sat exist for s32 only (the verifier enforces it).
  static T Saturated(int64_t r) { return static_cast<T>(ir::sem::SaturateS32(r)); }
  static Action AddSat(Block&, Thread& t, const DInst& d) {
    return IntBinary<T>(t, d, [](T a, T b) { return Saturated(static_cast<int64_t>(a) + static_cast<int64_t>(b)); });
  }
  static Action Sub(Block&, Thread& t, const DInst& d) {
    return IntBinary<T>(t, d, ir::sem::Sub<T>);
  }
  static Action SubSat(Block&, Thread& t, const DInst& d) {
    return IntBinary<T>(t, d, [](T a, T b) { return Saturated(static_cast<int64_t>(a) - static_cast<int64_t>(b)); });
  }
  static T MulLo(T a, T b) { return ir::sem::MulLo<T>(a, b); }
  static T MulHi(T a, T b) { return ir::sem::MulHi<T>(a, b); }
  using Wide = ir::sem::Wide<T>;
  static Action MulLoOp(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, MulLo); }
  static Action MulHiOp(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, MulHi); }
  static Action MulWide(Block&, Thread& t, const DInst& d) {
    Set<Wide>(t, d.dst[0], ir::sem::MulWide<T>(Get<T>(t, d.src[0]), Get<T>(t, d.src[1])));
    return Action::kNext;
  }
  static Action MadLo(Block&, Thread& t, const DInst& d) {
    T r = MulLo(Get<T>(t, d.src[0]), Get<T>(t, d.src[1]));
    Set<T>(t, d.dst[0], static_cast<T>(static_cast<U<T>>(r) + static_cast<U<T>>(Get<T>(t, d.src[2]))));
    return Action::kNext;
  }
  static Action MadHi(Block&, Thread& t, const DInst& d) {
    T r = MulHi(Get<T>(t, d.src[0]), Get<T>(t, d.src[1]));
    Set<T>(t, d.dst[0], static_cast<T>(static_cast<U<T>>(r) + static_cast<U<T>>(Get<T>(t, d.src[2]))));
    return Action::kNext;
  }
  static Action MadWide(Block&, Thread& t, const DInst& d) {
    using UW = std::make_unsigned_t<Wide>;
    UW p = static_cast<UW>(static_cast<Wide>(Get<T>(t, d.src[0])) * static_cast<Wide>(Get<T>(t, d.src[1])));
    Set<Wide>(t, d.dst[0], static_cast<Wide>(p + static_cast<UW>(Get<Wide>(t, d.src[2]))));
    return Action::kNext;
  }
  static Action Div(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, ir::sem::Div<T>); }
  static Action Rem(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, ir::sem::Rem<T>); }
  static Action Min(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, [](T a, T b) { return a < b ? a : b; }); }
  static Action Max(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, [](T a, T b) { return a > b ? a : b; }); }
  static Action Abs(Block&, Thread& t, const DInst& d) {
    Set<T>(t, d.dst[0], ir::sem::Abs<T>(Get<T>(t, d.src[0])));
    return Action::kNext;
  }
  static Action Neg(Block&, Thread& t, const DInst& d) {
    Set<T>(t, d.dst[0], ir::sem::Neg<T>(Get<T>(t, d.src[0])));
    return Action::kNext;
  }
  static Action And(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, [](T a, T b) { return static_cast<T>(a & b); }); }
  static Action Or(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, [](T a, T b) { return static_cast<T>(a | b); }); }
  static Action Xor(Block&, Thread& t, const DInst& d) { return IntBinary<T>(t, d, [](T a, T b) { return static_cast<T>(a ^ b); }); }
  static Action Not(Block&, Thread& t, const DInst& d) {
    Set<T>(t, d.dst[0], static_cast<T>(~Get<T>(t, d.src[0])));
    return Action::kNext;
  }
  static Action Cnot(Block&, Thread& t, const DInst& d) {
    Set<T>(t, d.dst[0], static_cast<T>(Get<T>(t, d.src[0]) == 0 ? 1 : 0));
    return Action::kNext;
  }
  static constexpr uint32_t kBits = 8 * sizeof(T);
  static Action Shl(Block&, Thread& t, const DInst& d) {
    Set<T>(t, d.dst[0], ir::sem::Shl<T>(Get<T>(t, d.src[0]), Get<uint32_t>(t, d.src[1])));
    return Action::kNext;
  }
  static Action Shr(Block&, Thread& t, const DInst& d) {
    Set<T>(t, d.dst[0], ir::sem::Shr<T>(Get<T>(t, d.src[0]), Get<uint32_t>(t, d.src[1])));
    return Action::kNext;
  }
  static Action Popc(Block&, Thread& t, const DInst& d) {
    Set<uint32_t>(t, d.dst[0], ir::sem::Popc<T>(Get<T>(t, d.src[0])));
    return Action::kNext;
  }
  static Action Clz(Block&, Thread& t, const DInst& d) {
    Set<uint32_t>(t, d.dst[0], ir::sem::Clz<T>(Get<T>(t, d.src[0])));
    return Action::kNext;
  }
  static Action Brev(Block&, Thread& t, const DInst& d) {
    Set<T>(t, d.dst[0], ir::sem::Brev<T>(Get<T>(t, d.src[0])));
    return Action::kNext;
  }
  static Action Bfe(Block&, Thread& t, const DInst& d) {
    U<T> a = static_cast<U<T>>(Get<T>(t, d.src[0]));
    uint32_t pos = Get<uint32_t>(t, d.src[1]) & 0xFF, len = Get<uint32_t>(t, d.src[2]) & 0xFF;
    const uint32_t msb = kBits - 1;
    U<T> sbit = 0;
    if (std::is_signed_v<T> && len != 0) sbit = (a >> std::min(pos + len - 1, msb)) & 1;
    U<T> r = 0;
    for (uint32_t i = 0; i <= msb; ++i) {
      U<T> bit = (i < len && pos + i <= msb) ? (a >> (pos + i)) & 1 : sbit;
      r |= static_cast<U<T>>(bit << i);
    }
    Set<T>(t, d.dst[0], static_cast<T>(r));
    return Action::kNext;
  }
  static Action Bfi(Block&, Thread& t, const DInst& d) {
    U<T> a = static_cast<U<T>>(Get<T>(t, d.src[0]));
    U<T> r = static_cast<U<T>>(Get<T>(t, d.src[1]));
    uint32_t pos = Get<uint32_t>(t, d.src[2]) & 0xFF, len = Get<uint32_t>(t, d.src[3]) & 0xFF;
    for (uint32_t i = 0; i < len && pos + i <= kBits - 1; ++i) {
      U<T> bit = static_cast<U<T>>(U<T>{1} << (pos + i));
      r = static_cast<U<T>>(((a >> i) & 1) ? (r | bit) : (r & ~bit));
    }
    Set<T>(t, d.dst[0], static_cast<T>(r));
    return Action::kNext;
  }
};

Action NotPred(Block&, Thread& t, const DInst& d) {
  t.regs[d.dst[0]] = t.regs[d.src[0]] ? 0 : 1;
  return Action::kNext;
}

// ---- moves

template <typename T>
Action Mov(Block&, Thread& t, const DInst& d) {
  Set<T>(t, d.dst[0], Get<T>(t, d.src[0]));
  return Action::kNext;
}

// ---- byte permutes, logic tables, dot products, packing

// prmt.b32: bytes of {b, a} (a is bytes 0..3) picked by c; mods.variant is
// the mode (0: the general form, 1..6: f4e b4e rc8 ecl ecr rc16).
Action Prmt(Block&, Thread& t, const DInst& d) {
  const uint64_t x = (uint64_t{Get<uint32_t>(t, d.src[1])} << 32) | Get<uint32_t>(t, d.src[0]);
  const uint32_t c = Get<uint32_t>(t, d.src[2]);
  const uint32_t sel = c & 3;
  uint32_t r = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    uint32_t pick = 0;
    bool replicate_sign = false;
    switch (d.mods.variant) {
      case 0: pick = (c >> (4 * i)) & 7; replicate_sign = (c >> (4 * i + 3)) & 1; break;
      case 1: pick = sel + i; break;                        // f4e
      case 2: pick = (sel - i) & 7; break;                  // b4e
      case 3: pick = sel; break;                            // rc8
      case 4: pick = std::max(i, sel); break;               // ecl
      case 5: pick = std::min(i, sel); break;               // ecr
      default: pick = (sel & 1) * 2 + (i & 1); break;       // rc16
    }
    uint32_t byte = static_cast<uint32_t>(x >> (8 * pick)) & 0xFF;
    if (replicate_sign) byte = (byte & 0x80) ? 0xFF : 0;
    r |= byte << (8 * i);
  }
  Set<uint32_t>(t, d.dst[0], r);
  return Action::kNext;
}

// lop3.b32: each result bit is bit (a<<2 | b<<1 | c) of the table immediate.
Action Lop3(Block&, Thread& t, const DInst& d) {
  const uint32_t a = Get<uint32_t>(t, d.src[0]), b = Get<uint32_t>(t, d.src[1]), c = Get<uint32_t>(t, d.src[2]);
  const uint32_t lut = Get<uint32_t>(t, d.src[3]) & 0xFF;
  uint32_t r = 0;
  for (int k = 0; k < 8; ++k) {
    if (!((lut >> k) & 1)) continue;
    r |= ((k & 4) ? a : ~a) & ((k & 2) ? b : ~b) & ((k & 1) ? c : ~c);
  }
  Set<uint32_t>(t, d.dst[0], r);
  return Action::kNext;
}

// Part `k` of `v` (`bits` wide), sign-extended when `is_signed`.
int64_t Lane(uint32_t v, int bits, int k, bool is_signed) {
  const uint32_t u = (v >> (bits * k)) & ((1u << bits) - 1);
  return is_signed ? static_cast<int64_t>(static_cast<int32_t>(u << (32 - bits)) >> (32 - bits)) : int64_t{u};
}

// dp4a: c + the dot product of a's and b's four bytes. dp2a.lo/hi: c + a's
// two halves times b's bytes 0,1 (lo) or 2,3 (hi). Sums wrap to 32 bits.
Action DotProduct(Block&, Thread& t, const DInst& d) {
  const bool sa = ir::IsSigned(d.mods.type), sb = ir::IsSigned(d.mods.type2);
  const uint32_t a = Get<uint32_t>(t, d.src[0]), b = Get<uint32_t>(t, d.src[1]);
  int64_t sum = static_cast<int64_t>(Get<uint32_t>(t, d.src[2]));
  if (d.mods.variant == 0) {
    for (int k = 0; k < 4; ++k) sum += Lane(a, 8, k, sa) * Lane(b, 8, k, sb);
  } else {
    const int first = d.mods.variant == 1 ? 0 : 2;
    for (int k = 0; k < 2; ++k) sum += Lane(a, 16, k, sa) * Lane(b, 8, first + k, sb);
  }
  Set<uint32_t>(t, d.dst[0], static_cast<uint32_t>(sum));
  return Action::kNext;
}

// mov.b32 %r, {%h0, %h1} (and .b64 of two b32): the first is the low half.
template <typename Whole, typename Part>
Action MovPack(Block&, Thread& t, const DInst& d) {
  Set<Whole>(t, d.dst[0], static_cast<Whole>(Get<Part>(t, d.src[0]) |
                                              (static_cast<Whole>(Get<Part>(t, d.src[1])) << (8 * sizeof(Part)))));
  return Action::kNext;
}
template <typename Whole, typename Part>
Action MovUnpack(Block&, Thread& t, const DInst& d) {
  const Whole w = Get<Whole>(t, d.src[0]);
  Set<Part>(t, d.dst[0], static_cast<Part>(w));
  Set<Part>(t, d.dst[1], static_cast<Part>(w >> (8 * sizeof(Part))));
  return Action::kNext;
}

Action MovSpecial(Block& b, Thread& t, const DInst& d) {
  const Launch& l = *b.launch;
  uint32_t lane = t.linear % 32;
  uint64_t v = 0;
  switch (static_cast<ir::SpecialReg>(d.imm)) {
    case ir::SpecialReg::kTidX: v = t.tid[0]; break;
    case ir::SpecialReg::kTidY: v = t.tid[1]; break;
    case ir::SpecialReg::kTidZ: v = t.tid[2]; break;
    case ir::SpecialReg::kNtidX: v = l.block[0]; break;
    case ir::SpecialReg::kNtidY: v = l.block[1]; break;
    case ir::SpecialReg::kNtidZ: v = l.block[2]; break;
    case ir::SpecialReg::kCtaidX: v = b.ctaid[0]; break;
    case ir::SpecialReg::kCtaidY: v = b.ctaid[1]; break;
    case ir::SpecialReg::kCtaidZ: v = b.ctaid[2]; break;
    case ir::SpecialReg::kNctaidX: v = l.grid[0]; break;
    case ir::SpecialReg::kNctaidY: v = l.grid[1]; break;
    case ir::SpecialReg::kNctaidZ: v = l.grid[2]; break;
    case ir::SpecialReg::kLaneId: v = lane; break;
    case ir::SpecialReg::kWarpId: v = t.linear / 32; break;
    case ir::SpecialReg::kNWarpId: v = (l.threads_per_block + 31) / 32; break;
    case ir::SpecialReg::kSmId: v = 0; break;
    case ir::SpecialReg::kNSmId: v = 1; break;
    case ir::SpecialReg::kLanemaskEq: v = uint32_t{1} << lane; break;
    case ir::SpecialReg::kLanemaskLt: v = (uint32_t{1} << lane) - 1; break;
    case ir::SpecialReg::kLanemaskLe: v = static_cast<uint32_t>((uint64_t{2} << lane) - 1); break;
    case ir::SpecialReg::kLanemaskGt: v = static_cast<uint32_t>(~((uint64_t{2} << lane) - 1)); break;
    case ir::SpecialReg::kLanemaskGe: v = static_cast<uint32_t>(~((uint32_t{1} << lane) - 1)); break;
    // Clocks count the thread's executed instructions: deterministic.
    case ir::SpecialReg::kClock: v = static_cast<uint32_t>(t.executed); break;
    case ir::SpecialReg::kClock64:
    case ir::SpecialReg::kGlobalTimer: v = t.executed; break;
    case ir::SpecialReg::kDynamicSmemSize: v = l.dynamic_shared_bytes; break;
  }
  t.regs[d.dst[0]] = v;
  return Action::kNext;
}

// ---- floats (F is float or double)

template <typename F>
inline F In(const Thread& t, uint32_t slot, bool ftz) {
  F v = Get<F>(t, slot);
  return ftz ? Flush(v) : v;
}

template <typename F>
inline void Out(Thread& t, uint32_t slot, F v, const ir::Modifiers& m) {
  if (m.sat) v = Saturate(v);
  if (m.ftz) v = Flush(v);
  Set<F>(t, slot, Canon(v));
}

enum class FOp { kAdd, kSub, kMul, kDiv, kMin, kMax, kFma, kAbs, kNeg, kSqrt, kRsqrt, kRcp, kEx2, kLg2, kSin, kCos, kTanh };

template <typename F, FOp op>
F Compute(F a, F b, F c) {
  if constexpr (op == FOp::kAdd) return a + b;
  if constexpr (op == FOp::kSub) return a - b;
  if constexpr (op == FOp::kMul) return a * b;
  if constexpr (op == FOp::kDiv) return a / b;
  if constexpr (op == FOp::kMin) return FMin(a, b);
  if constexpr (op == FOp::kMax) return FMax(a, b);
  if constexpr (op == FOp::kFma) return std::fma(a, b, c);
  if constexpr (op == FOp::kAbs) return std::fabs(a);
  if constexpr (op == FOp::kNeg) return -a;
  if constexpr (op == FOp::kSqrt) return std::sqrt(a);
  if constexpr (op == FOp::kRsqrt) return F{1} / std::sqrt(a);
  if constexpr (op == FOp::kRcp) return F{1} / a;
  if constexpr (op == FOp::kEx2) return std::exp2(a);
  if constexpr (op == FOp::kLg2) return std::log2(a);
  if constexpr (op == FOp::kSin) return std::sin(a);
  if constexpr (op == FOp::kCos) return std::cos(a);
  if constexpr (op == FOp::kTanh) return std::tanh(a);
  return a;
}

constexpr int Arity(FOp op) {
  return op == FOp::kFma ? 3 : (op == FOp::kAdd || op == FOp::kSub || op == FOp::kMul || op == FOp::kDiv ||
                                op == FOp::kMin || op == FOp::kMax)
                                   ? 2
                                   : 1;
}

// f32/f64 with every modifier.
template <typename F, FOp op>
Action FloatOp(Block&, Thread& t, const DInst& d) {
  const ir::Modifiers& m = d.mods;
  F a = In<F>(t, d.src[0], m.ftz);
  F b = Arity(op) >= 2 ? In<F>(t, d.src[1], m.ftz) : F{0};
  F c = Arity(op) >= 3 ? In<F>(t, d.src[2], m.ftz) : F{0};
  F r = WithRounding(m.rounding, [&] {
    volatile F x = a, y = b, z = c;  // keep the computation under the rounding mode
    return Compute<F, op>(x, y, z);
  });
  if constexpr (op == FOp::kAbs || op == FOp::kNeg) {
    // abs/neg only change the sign bit (NaN payloads stay NaN).
    Set<F>(t, d.dst[0], std::isnan(r) ? r : (m.ftz ? Flush(r) : r));
    return Action::kNext;
  }
  Out<F>(t, d.dst[0], r, m);
  return Action::kNext;
}

// The common case: f32/f64, round to nearest, no ftz/sat.
template <typename F, FOp op>
Action FloatFast(Block&, Thread& t, const DInst& d) {
  F a = Get<F>(t, d.src[0]);
  F b = Arity(op) >= 2 ? Get<F>(t, d.src[1]) : F{0};
  F c = Arity(op) >= 3 ? Get<F>(t, d.src[2]) : F{0};
  Set<F>(t, d.dst[0], Canon(Compute<F, op>(a, b, c)));
  return Action::kNext;
}

// f16/bf16 (scalar) and f16x2/bf16x2 (two lanes): computed in double,
// rounded to the format with the instruction's rounding mode.
template <FOp op, bool kPair>
Action HalfOp(Block&, Thread& t, const DInst& d) {
  const ir::Modifiers& m = d.mods;
  const ir::FloatFormat f = HalfFormat(m.type);
  const ir::Rounding r = m.rounding == ir::Rounding::kNone ? ir::Rounding::kRn : m.rounding;
  uint32_t out = 0;
  for (int lane = 0; lane < (kPair ? 2 : 1); ++lane) {
    auto value = [&](int s) {
      uint32_t bits = Get<uint32_t>(t, d.src[s]);
      return HalfValue(static_cast<uint16_t>(bits >> (16 * lane)), f, m.ftz);
    };
    double a = value(0);
    double b = Arity(op) >= 2 ? value(1) : 0.0;
    double c = Arity(op) >= 3 ? value(2) : 0.0;
    // fma: a*b + c can need more than 53 bits (bf16's exponent range), so
    // it is rounded to odd first; the other operations are exact in double.
    double v = op == FOp::kFma ? FmaRoundToOdd(a, b, c) : Compute<double, op>(a, b, c);
    uint16_t bits;
    if constexpr (op == FOp::kAbs || op == FOp::kNeg) {
      uint16_t in = static_cast<uint16_t>(Get<uint32_t>(t, d.src[0]) >> (16 * lane));
      bits = op == FOp::kAbs ? static_cast<uint16_t>(in & 0x7FFF) : static_cast<uint16_t>(in ^ 0x8000);
      if (m.ftz) bits = FlushHalf(bits, f);
    } else {
      bits = HalfBits(v, f, r, m.ftz, m.sat);
    }
    out |= uint32_t{bits} << (16 * lane);
  }
  Set<uint32_t>(t, d.dst[0], out);
  return Action::kNext;
}

template <FOp op>
Handler FloatHandler(const ir::Modifiers& m) {
  switch (m.type) {
    case ScalarType::kF32:
      if ((m.rounding == ir::Rounding::kNone || m.rounding == ir::Rounding::kRn) && !m.ftz && !m.sat &&
          op != FOp::kAbs && op != FOp::kNeg) {
        return &FloatFast<float, op>;
      }
      return &FloatOp<float, op>;
    case ScalarType::kF64:
      if ((m.rounding == ir::Rounding::kNone || m.rounding == ir::Rounding::kRn) && !m.sat && !m.ftz) {
        return &FloatFast<double, op>;
      }
      return &FloatOp<double, op>;
    case ScalarType::kF16:
    case ScalarType::kBF16: return &HalfOp<op, false>;
    case ScalarType::kF16x2:
    case ScalarType::kBF16x2: return &HalfOp<op, true>;
    default: return nullptr;
  }
}

// ---- comparison

using ir::sem::Combine;
using ir::sem::Compare;

template <typename T>
Action Setp(Block&, Thread& t, const DInst& d) {
  T a, b;
  if constexpr (std::is_same_v<T, float>) {
    a = In<float>(t, d.src[0], d.mods.ftz);
    b = In<float>(t, d.src[1], d.mods.ftz);
  } else {
    a = Get<T>(t, d.src[0]);
    b = Get<T>(t, d.src[1]);
  }
  bool r = Combine(d.mods.bool_op, Compare<T>(d.mods.cmp, a, b), d.nsrc > 2 && t.regs[d.src[2]] != 0);
  t.regs[d.dst[0]] = r ? 1 : 0;
  return Action::kNext;
}

Action SetpHalf(Block&, Thread& t, const DInst& d) {
  const ir::FloatFormat f = HalfFormat(d.mods.type);
  double a = HalfValue(Get<uint16_t>(t, d.src[0]), f, d.mods.ftz);
  double b = HalfValue(Get<uint16_t>(t, d.src[1]), f, d.mods.ftz);
  bool r = Combine(d.mods.bool_op, Compare<double>(d.mods.cmp, a, b), d.nsrc > 2 && t.regs[d.src[2]] != 0);
  t.regs[d.dst[0]] = r ? 1 : 0;
  return Action::kNext;
}

// setp.f16x2 / .bf16x2 p|q: the low halves' comparison to p, the high halves' to q.
Action SetpHalfPair(Block&, Thread& t, const DInst& d) {
  const ir::FloatFormat f = HalfFormat(d.mods.type);
  const uint32_t x = Get<uint32_t>(t, d.src[0]), y = Get<uint32_t>(t, d.src[1]);
  const bool c = d.nsrc > 2 && t.regs[d.src[2]] != 0;
  for (int lane = 0; lane < 2; ++lane) {
    double a = HalfValue(static_cast<uint16_t>(x >> (16 * lane)), f, d.mods.ftz);
    double b = HalfValue(static_cast<uint16_t>(y >> (16 * lane)), f, d.mods.ftz);
    t.regs[d.dst[lane]] = Combine(d.mods.bool_op, Compare<double>(d.mods.cmp, a, b), c) ? 1 : 0;
  }
  return Action::kNext;
}

template <typename T>
Action Selp(Block&, Thread& t, const DInst& d) {
  Set<T>(t, d.dst[0], t.regs[d.src[2]] ? Get<T>(t, d.src[0]) : Get<T>(t, d.src[1]));
  return Action::kNext;
}

// ---- selection by type

template <template <typename> class H, typename Pick>
Handler ByInt(ScalarType t, Pick pick) {
  switch (t) {
    case ScalarType::kU16:
    case ScalarType::kB16: return pick(H<uint16_t>{});
    case ScalarType::kU32:
    case ScalarType::kB32: return pick(H<uint32_t>{});
    case ScalarType::kU64:
    case ScalarType::kB64: return pick(H<uint64_t>{});
    case ScalarType::kS16: return pick(H<int16_t>{});
    case ScalarType::kS32: return pick(H<int32_t>{});
    case ScalarType::kS64: return pick(H<int64_t>{});
    case ScalarType::kPred: return pick(H<uint64_t>{});
    default: return nullptr;
  }
}

#define INT_HANDLER(name) ByInt<IntOps>(m.type, [](auto ops) -> Handler { return &decltype(ops)::name; })

Handler BySize(ScalarType t, Handler h16, Handler h32, Handler h64) {
  switch (ir::TypeBits(t)) {
    case 1:
    case 64: return h64;
    case 32: return h32;
    default: return h16;
  }
}

}  // namespace

Handler SelectArith(const ir::Instruction& inst) {
  const ir::Modifiers& m = inst.mods;
  const bool is_float = ir::IsFloat(m.type);
  switch (inst.op) {
    case Opcode::kMov:
      if (!inst.srcs.empty() && inst.srcs[0].kind == ir::OperandKind::kSpecial) return &MovSpecial;
      return BySize(m.type, &Mov<uint16_t>, &Mov<uint32_t>, &Mov<uint64_t>);
    case Opcode::kMovPack:
      return m.type == ScalarType::kB64 ? &MovPack<uint64_t, uint32_t> : &MovPack<uint32_t, uint16_t>;
    case Opcode::kMovUnpack:
      return m.type == ScalarType::kB64 ? &MovUnpack<uint64_t, uint32_t> : &MovUnpack<uint32_t, uint16_t>;
    case Opcode::kPrmt: return &Prmt;
    case Opcode::kLop3: return &Lop3;
    case Opcode::kDp4a:
    case Opcode::kDp2a: return &DotProduct;
    case Opcode::kAdd:
      if (is_float) return FloatHandler<FOp::kAdd>(m);
      return m.sat ? INT_HANDLER(AddSat) : INT_HANDLER(Add);
    case Opcode::kSub:
      if (is_float) return FloatHandler<FOp::kSub>(m);
      return m.sat ? INT_HANDLER(SubSat) : INT_HANDLER(Sub);
    case Opcode::kMul:
      if (is_float) return FloatHandler<FOp::kMul>(m);
      if (m.mode == ir::Mode::kHi) return INT_HANDLER(MulHiOp);
      if (m.mode == ir::Mode::kWide) return INT_HANDLER(MulWide);
      return INT_HANDLER(MulLoOp);
    case Opcode::kMad:
      if (m.mode == ir::Mode::kHi) return INT_HANDLER(MadHi);
      if (m.mode == ir::Mode::kWide) return INT_HANDLER(MadWide);
      return INT_HANDLER(MadLo);
    case Opcode::kFma: return FloatHandler<FOp::kFma>(m);
    case Opcode::kDiv: return is_float ? FloatHandler<FOp::kDiv>(m) : INT_HANDLER(Div);
    case Opcode::kRem: return INT_HANDLER(Rem);
    case Opcode::kMin: return is_float ? FloatHandler<FOp::kMin>(m) : INT_HANDLER(Min);
    case Opcode::kMax: return is_float ? FloatHandler<FOp::kMax>(m) : INT_HANDLER(Max);
    case Opcode::kAbs: return is_float ? FloatHandler<FOp::kAbs>(m) : INT_HANDLER(Abs);
    case Opcode::kNeg: return is_float ? FloatHandler<FOp::kNeg>(m) : INT_HANDLER(Neg);
    case Opcode::kSqrt: return FloatHandler<FOp::kSqrt>(m);
    case Opcode::kRsqrt: return FloatHandler<FOp::kRsqrt>(m);
    case Opcode::kRcp: return FloatHandler<FOp::kRcp>(m);
    case Opcode::kEx2: return FloatHandler<FOp::kEx2>(m);
    case Opcode::kLg2: return FloatHandler<FOp::kLg2>(m);
    case Opcode::kSin: return FloatHandler<FOp::kSin>(m);
    case Opcode::kCos: return FloatHandler<FOp::kCos>(m);
    case Opcode::kTanh: return FloatHandler<FOp::kTanh>(m);
    case Opcode::kAnd: return INT_HANDLER(And);
    case Opcode::kOr: return INT_HANDLER(Or);
    case Opcode::kXor: return INT_HANDLER(Xor);
    case Opcode::kNot: return m.type == ScalarType::kPred ? &NotPred : INT_HANDLER(Not);
    case Opcode::kCnot: return INT_HANDLER(Cnot);
    case Opcode::kShl: return INT_HANDLER(Shl);
    case Opcode::kShr: return INT_HANDLER(Shr);
    case Opcode::kPopc: return INT_HANDLER(Popc);
    case Opcode::kClz: return INT_HANDLER(Clz);
    case Opcode::kBrev: return INT_HANDLER(Brev);
    case Opcode::kBfe: return INT_HANDLER(Bfe);
    case Opcode::kBfi: return INT_HANDLER(Bfi);
    case Opcode::kSetp:
      switch (m.type) {
        case ScalarType::kF32: return &Setp<float>;
        case ScalarType::kF64: return &Setp<double>;
        case ScalarType::kF16:
        case ScalarType::kBF16: return &SetpHalf;
        case ScalarType::kU16:
        case ScalarType::kB16: return &Setp<uint16_t>;
        case ScalarType::kU32:
        case ScalarType::kB32: return &Setp<uint32_t>;
        case ScalarType::kU64:
        case ScalarType::kB64: return &Setp<uint64_t>;
        case ScalarType::kS16: return &Setp<int16_t>;
        case ScalarType::kS32: return &Setp<int32_t>;
        case ScalarType::kS64: return &Setp<int64_t>;
        default: return nullptr;
      }
    case Opcode::kSetpPair: return &SetpHalfPair;
    case Opcode::kSelp: return BySize(m.type, &Selp<uint16_t>, &Selp<uint32_t>, &Selp<uint64_t>);
    default: return nullptr;
  }
}

}  // namespace ptxforge::runtime::emu
