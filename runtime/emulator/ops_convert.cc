// Emulator handlers: cvt between every pair of types (PTX rounding,
// saturation and ftz rules) and cvta between address spaces.
#include <cmath>
#include <limits>

#include "ir/semantics.h"
#include "runtime/emulator/float_semantics.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime::emu {
namespace {

using ir::ScalarType;

// A source value read from a register, by kind.
struct Value {
  bool is_float = false;
  double f = 0;      // floats (exact for f16/bf16/f32/f64)
  int64_t s = 0;     // signed integers
  uint64_t u = 0;    // unsigned integers
  bool is_signed = false;
};

Value Read(const Thread& t, uint32_t slot, ScalarType type, bool ftz) {
  Value v;
  uint64_t bits = t.regs[slot];
  switch (type) {
    case ScalarType::kF32: {
      float x = Get<float>(t, slot);
      if (ftz) x = FlushF32(x);
      v.is_float = true;
      v.f = x;
      return v;
    }
    case ScalarType::kF64:
      v.is_float = true;
      v.f = Get<double>(t, slot);
      return v;
    case ScalarType::kF16:
    case ScalarType::kBF16:
      v.is_float = true;
      v.f = HalfValue(static_cast<uint16_t>(bits), HalfFormat(type), ftz);
      return v;
    default: break;
  }
  int width = ir::TypeBits(type);
  uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  v.u = bits & mask;
  v.is_signed = ir::IsSigned(type);
  if (v.is_signed) {
    v.s = width >= 64 ? static_cast<int64_t>(v.u) : static_cast<int64_t>(v.u << (64 - width)) >> (64 - width);
  } else {
    v.s = static_cast<int64_t>(v.u);
  }
  return v;
}

// Writes an integer of `type` (bits truncated; s8/s16 sign-extended in the slot).
void WriteInt(Thread& t, uint32_t slot, ScalarType type, uint64_t bits) {
  int width = ir::TypeBits(type);
  uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  bits &= mask;
  if (ir::IsSigned(type) && width < 64 && (bits >> (width - 1)) & 1) bits |= ~mask & 0xFFFF;  // sign in the b16 slot
  t.regs[slot] = bits;
}

void IntRange(ScalarType type, long double& lo, long double& hi) {
  int width = ir::TypeBits(type);
  if (ir::IsSigned(type)) {
    lo = -std::ldexp(1.0L, width - 1);
    hi = std::ldexp(1.0L, width - 1) - 1;
  } else {
    lo = 0;
    hi = std::ldexp(1.0L, width) - 1;
  }
}

double RoundToIntegral(double x, ir::Rounding r) {
  switch (r) {
    case ir::Rounding::kRni: return std::nearbyint(x);  // the host mode is round-to-nearest-even
    case ir::Rounding::kRzi: return std::trunc(x);
    case ir::Rounding::kRmi: return std::floor(x);
    case ir::Rounding::kRpi: return std::ceil(x);
    default: return x;
  }
}

// An integer to f32/f64 with the host converting under rounding mode r.
template <typename F>
F IntToFloat(const Value& v, ir::Rounding r) {
  return WithRounding(r, [&] {
    volatile int64_t s = v.s;
    volatile uint64_t u = v.u;
    return v.is_signed ? static_cast<F>(s) : static_cast<F>(u);
  });
}

Action Cvt(Block&, Thread& t, const DInst& d) {
  const ir::Modifiers& m = d.mods;
  const ScalarType to = m.type, from = m.type2;
  Value v = Read(t, d.src[0], from, m.ftz);
  if (ir::IsInteger(to)) {
    if (v.is_float) {
      // Float to integer: round, then saturate (always, in PTX); NaN is 0.
      if (std::isnan(v.f)) {
        WriteInt(t, d.dst[0], to, 0);
        return Action::kNext;
      }
      long double lo, hi;
      IntRange(to, lo, hi);
      long double x = RoundToIntegral(v.f, m.rounding);
      x = x < lo ? lo : x > hi ? hi : x;
      uint64_t bits = ir::IsSigned(to) ? static_cast<uint64_t>(static_cast<int64_t>(x)) : static_cast<uint64_t>(x);
      WriteInt(t, d.dst[0], to, bits);
      return Action::kNext;
    }
    WriteInt(t, d.dst[0], to, ir::sem::ConvertInt(v.u, from, to, m.sat));
    return Action::kNext;
  }
  // To a float type.
  const ir::Rounding r = m.rounding;
  switch (to) {
    case ScalarType::kF64: {
      double x;
      if (v.is_float) {
        x = ir::IsIntegerRounding(r) ? RoundToIntegral(v.f, r) : v.f;
      } else {
        x = IntToFloat<double>(v, r);
      }
      if (m.sat) x = Saturate(x);
      Set<double>(t, d.dst[0], Canon(x));
      return Action::kNext;
    }
    case ScalarType::kF32: {
      float x;
      if (v.is_float) {
        if (ir::IsIntegerRounding(r)) {
          x = static_cast<float>(RoundToIntegral(v.f, r));  // same type: exact
        } else {
          x = std::bit_cast<float>(ir::EncodeFloat(v.f, ir::kF32Format, r));  // v.f is exact
        }
      } else {
        x = IntToFloat<float>(v, r);
      }
      if (m.sat) x = Saturate(x);
      if (m.ftz) x = FlushF32(x);
      Set<float>(t, d.dst[0], Canon(x));
      return Action::kNext;
    }
    case ScalarType::kF16:
    case ScalarType::kBF16: {
      const ir::FloatFormat f = HalfFormat(to);
      // Integers wider than 53 bits are rounded to odd first, so the rounding
      // to the half format below is the only one that counts.
      double x = v.is_float ? v.f : IntToDoubleRoundToOdd(v.s, v.u, v.is_signed);
      uint16_t bits;
      if (ir::IsIntegerRounding(r)) {
        bits = HalfBits(RoundToIntegral(x, r), f, ir::Rounding::kRn, m.ftz, m.sat);
      } else {
        bits = HalfBits(x, f, r == ir::Rounding::kNone ? ir::Rounding::kRn : r, m.ftz, m.sat);
      }
      Set<uint16_t>(t, d.dst[0], bits);
      return Action::kNext;
    }
    default: return Action::kNext;
  }
}

// cvt.rn{.relu}{.satfinite}.f16x2/.bf16x2.f32 d, a, b: a rounds into the
// upper half, b into the lower (.relu: negative values to +0; NaN stays a
// canonical NaN; .satfinite: a magnitude beyond the largest finite value,
// infinity included, gives that value with the sign kept).
Action CvtPack(Block&, Thread& t, const DInst& d) {
  const ir::FloatFormat f = HalfFormat(d.mods.type);
  const bool relu = d.mods.variant == 1 || d.mods.variant == 3;  // {variant:relu|satfinite|relu.satfinite}
  const bool satfinite = d.mods.variant >= 2;
  auto half = [&](uint32_t slot) -> uint32_t {
    double x = Get<float>(t, slot);
    if (relu && x < 0) x = 0.0;
    uint32_t bits = HalfBits(x, f, ir::Rounding::kRn, false, false);
    // Rounding past the largest finite value gives infinity, whose encoding
    // is one more than the largest finite value's (f16 0x7C00, bf16 0x7F80).
    const uint32_t inf = d.mods.type == ir::ScalarType::kF16x2 ? 0x7C00u : 0x7F80u;
    if (satfinite && (bits & 0x7FFFu) == inf) bits -= 1;
    return bits;
  };
  Set<uint32_t>(t, d.dst[0], half(d.src[0]) << 16 | half(d.src[1]));
  return Action::kNext;
}

// cvta: generic <-> state space addresses. Shared and local addresses are
// offsets; their generic forms live in fixed windows.
Action CvtaToGeneric(Block&, Thread& t, const DInst& d) {
  uint64_t window = d.space == Space::kShared ? kSharedWindow : d.space == Space::kLocal ? kLocalWindow : 0;
  t.regs[d.dst[0]] = t.regs[d.src[0]] + window;
  return Action::kNext;
}

Action CvtaFromGeneric(Block&, Thread& t, const DInst& d) {
  uint64_t window = d.space == Space::kShared ? kSharedWindow : d.space == Space::kLocal ? kLocalWindow : 0;
  t.regs[d.dst[0]] = t.regs[d.src[0]] - window;
  return Action::kNext;
}

}  // namespace

Handler SelectConvert(const ir::Instruction& inst) {
  switch (inst.op) {
    case ir::Opcode::kCvt: return &Cvt;
    case ir::Opcode::kCvtPack: return &CvtPack;
    case ir::Opcode::kCvta: return inst.mods.cvta_to ? &CvtaFromGeneric : &CvtaToGeneric;
    default: return nullptr;
  }
}

}  // namespace ptxforge::runtime::emu
