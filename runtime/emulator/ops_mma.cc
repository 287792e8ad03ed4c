// Emulator: the warp matrix multiply-accumulate (mma.sync.aligned), run by
// the scheduler once all 32 lanes of a warp arrived, and the fp8 packing
// conversions (cvt.rn.satfinite.e4m3x2.f32 and back) whose element formats
// it shares.
//
// Fragment layouts follow the PTX ISA's "Matrix Fragments for mma.mMnNkK"
// tables. With groupID = lane >> 2 and tig = lane % 4 (threadID_in_group),
// and e = 32 / (element bits) elements per 32-bit register, element j of
// register r of a lane sits at
//   A (M x K): row groupID + 8 * (r & 1),  column tig * e + j + (K / 2) * (r >> 1)
//   B (K x N): row tig * e + j + (K / 2) * r,  column groupID
//   C/D (M x N, element i = r * e + j): row groupID + 8 * (i >> 1), column tig * 2 + (i & 1)
// which is each table of the shapes ptxforge supports (m16n8k4 tf32, m16n8k8
// f16/bf16/tf32, m16n8k16 f16/bf16/s8/u8/e4m3/e5m2, m16n8k32
// s8/u8/e4m3/e5m2) in one formula.
//
// Arithmetic:
//  - floats: every product is exact in double (f16, bf16, tf32 and fp8 have
//    at most 11 significant bits), the K products and C are summed in double
//    and the sum is rounded once, to nearest even, to D's type. Hardware adds
//    in an unspecified order with at least f32 precision, so results may
//    differ from it in the last bits of f32 (tests allow for it); inf and NaN
//    propagate (inf - inf and 0 * inf are NaN; a NaN result is the canonical
//    NaN 0x7fffffff, or 0x7fff for f16).
//  - tf32: only the 19 high bits of each b32 register are used (sign, 8
//    exponent bits, 10 mantissa bits); the low 13 bits are dropped
//    (truncation). The PTX ISA leaves tf32's layout to the implementation for
//    mma.sync and states this truncation only for wgmma; not yet checked on
//    a GPU. Round with cvt.rna.tf32.f32 first to get nearest rounding.
//  - integers: exact; the sum wraps to 32 bits, or with .satfinite clamps to
//    the s32 range.
//  - fp8: decoded exactly (e4m3: no inf, S.1111.111 is NaN, max 448; e5m2:
//    IEEE-like with inf, max 57344).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/float_bits.h"
#include "ir/strings.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime::emu {
namespace {

using ir::ScalarType;

double DecodeE4M3(uint32_t b) {
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  const int exp = (b >> 3) & 15, man = b & 7;
  if (exp == 15 && man == 7) return std::numeric_limits<double>::quiet_NaN();
  if (exp == 0) return sign * std::ldexp(man, -9);
  return sign * std::ldexp(8 + man, exp - 10);
}

double DecodeE5M2(uint32_t b) {
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  const int exp = (b >> 2) & 31, man = b & 3;
  if (exp == 31) return man == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (exp == 0) return sign * std::ldexp(man, -16);
  return sign * std::ldexp(4 + man, exp - 17);
}

// Rounds x to nearest even on a grid of `quantum`, without the host's
// rounding mode (float handlers change it).
double RoundToGrid(double x, double quantum) {
  const double r = x / quantum;  // exact: quantum is a power of two
  double f = std::floor(r);
  const double diff = r - f;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(f, 2.0) != 0)) f += 1;
  return f * quantum;
}

// cvt.rn.satfinite to e4m3 (e5m2 when !e4m3): nearest even, finite values
// beyond the largest and infinities clamp to it, NaN is 0x7f.
uint32_t EncodeF8(double x, bool e4m3) {
  if (std::isnan(x)) return 0x7F;
  const uint32_t sign = std::signbit(x) ? 0x80 : 0;
  const int man_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const double max = e4m3 ? 448.0 : 57344.0;
  const uint32_t max_code = e4m3 ? 0x7E : 0x7B;
  double a = std::fabs(x);
  if (a >= max) return sign | max_code;  // includes inf (satfinite)
  const int emin = 1 - bias;
  int e = a == 0 ? emin : std::max(emin, std::ilogb(a));
  double v = RoundToGrid(a, std::ldexp(1.0, e - man_bits));
  if (v > max) return sign | max_code;
  if (v == 0) return sign;
  if (v < std::ldexp(1.0, emin)) return sign | static_cast<uint32_t>(v / std::ldexp(1.0, emin - man_bits));
  e = std::ilogb(v);
  const uint32_t man = static_cast<uint32_t>(v / std::ldexp(1.0, e - man_bits)) - (1u << man_bits);
  return sign | static_cast<uint32_t>(e + bias) << man_bits | man;
}

// The exact value of one input element of `type` (its bits in the low end).
double DecodeInput(ScalarType type, uint32_t bits) {
  switch (type) {
    case ScalarType::kF16: return ir::DecodeFloat(bits, ir::kHalfFormat);
    case ScalarType::kBF16: return ir::DecodeFloat(bits, ir::kBF16Format);
    case ScalarType::kTF32: return ir::DecodeFloat(bits & 0xFFFFE000u, ir::kF32Format);
    case ScalarType::kF32: return ir::DecodeFloat(bits, ir::kF32Format);
    case ScalarType::kE4M3: return DecodeE4M3(bits);
    case ScalarType::kE5M2: return DecodeE5M2(bits);
    case ScalarType::kS8: return static_cast<int8_t>(bits);
    case ScalarType::kU8: return static_cast<uint8_t>(bits);
    case ScalarType::kS32: return static_cast<int32_t>(bits);
    default: return 0;
  }
}

// cvt.rn.satfinite.e4m3x2.f32 d, a, b / .e5m2x2: a to the high byte, b to the low byte.
Action CvtPackF8(Block&, Thread& t, const DInst& d) {
  const bool e4m3 = d.mods.type == ScalarType::kE4M3x2;
  const uint32_t hi = EncodeF8(Get<float>(t, d.src[0]), e4m3), lo = EncodeF8(Get<float>(t, d.src[1]), e4m3);
  Set<uint16_t>(t, d.dst[0], static_cast<uint16_t>(hi << 8 | lo));
  return Action::kNext;
}

// cvt.rn.f16x2.e4m3x2 d, a / .e5m2x2: each byte to the f16 half in the same
// place (exact: every e4m3 and e5m2 value is an f16 value).
Action CvtUnpackF8(Block&, Thread& t, const DInst& d) {
  const bool e4m3 = d.mods.type2 == ScalarType::kE4M3x2;
  const uint32_t a = Get<uint16_t>(t, d.src[0]);
  uint32_t r = 0;
  for (int k = 0; k < 2; ++k) {
    const uint32_t byte = (a >> (8 * k)) & 0xFF;
    const double v = e4m3 ? DecodeE4M3(byte) : DecodeE5M2(byte);
    r |= ir::EncodeFloat(v, ir::kHalfFormat, ir::Rounding::kRn) << (16 * k);
  }
  Set<uint32_t>(t, d.dst[0], r);
  return Action::kNext;
}

}  // namespace

Handler SelectMma(const ir::Instruction& inst) {
  switch (inst.op) {
    case ir::Opcode::kCvtPackF8: return &CvtPackF8;
    case ir::Opcode::kCvtUnpackF8: return &CvtUnpackF8;
    default: return nullptr;
  }
}

bool RunMma(Block& b, Thread* const* lanes, const DInst* const* insts, int count) {
  const DInst& d0 = *insts[0];
  for (int i = 1; i < count; ++i) {
    if (insts[i]->index != d0.index) {
      b.Fail(*lanes[i], *insts[i],
             StrCat("lanes ", lanes[0]->linear % 32, " and ", lanes[i]->linear % 32,
                    " wait at different mma instructions (`", b.program->PtxText(d0.index), "` and `",
                    b.program->PtxText(insts[i]->index), "`)"));
      return false;
    }
  }
  const ir::Instruction& inst = b.program->kernel.body[d0.index];
  const ir::OpInfo& info = inst.info();
  const ir::Modifiers& m = inst.mods;
  const ir::MatrixShape s = ir::ParseMatrixShape(ir::EnumValueName(info, ir::ModSlot::kShape, m.shape));
  const int na = ir::GroupCount(inst, info.sig.srcs[0]), nb = ir::GroupCount(inst, info.sig.srcs[1]);
  const int nc = ir::GroupCount(inst, info.sig.srcs[2]);
  const int bits_a = ir::TypeBits(m.type2), bits_b = ir::TypeBits(m.type3), bits_c = ir::TypeBits(m.type4);
  const int bits_d = ir::TypeBits(m.type);
  const int ea = 32 / bits_a, eb = 32 / bits_b, ec = 32 / bits_c, ed = 32 / bits_d;
  const bool integer = ir::IsInteger(m.type);

  // The whole matrices, gathered from the lanes' fragments.
  double a[16][32] = {}, bm[32][8] = {}, c[16][8] = {};
  auto part = [](uint32_t word, int bits, int j) {
    return bits == 32 ? word : (word >> (bits * j)) & ((1u << bits) - 1);
  };
  for (int i = 0; i < count; ++i) {
    const Thread& t = *lanes[i];
    const DInst& d = *insts[i];
    const int lane = static_cast<int>(t.linear % 32), g = lane >> 2, tig = lane & 3;
    for (int r = 0; r < na; ++r) {
      const uint32_t w = Get<uint32_t>(t, d.src[r]);
      for (int j = 0; j < ea; ++j) {
        a[g + 8 * (r & 1)][tig * ea + j + (s.k / 2) * (r >> 1)] = DecodeInput(m.type2, part(w, bits_a, j));
      }
    }
    for (int r = 0; r < nb; ++r) {
      const uint32_t w = Get<uint32_t>(t, d.src[na + r]);
      for (int j = 0; j < eb; ++j) bm[tig * eb + j + (s.k / 2) * r][g] = DecodeInput(m.type3, part(w, bits_b, j));
    }
    for (int r = 0; r < nc; ++r) {
      const uint32_t w = Get<uint32_t>(t, d.src[na + nb + r]);
      for (int j = 0; j < ec; ++j) {
        const int e = r * ec + j;
        c[g + 8 * (e >> 1)][tig * 2 + (e & 1)] = DecodeInput(m.type4, part(w, bits_c, j));
      }
    }
  }
  // D = A * B + C, element by element.
  uint32_t dbits[16][8] = {};
  for (int row = 0; row < s.m; ++row) {
    for (int col = 0; col < s.n; ++col) {
      if (integer) {
        int64_t sum = static_cast<int64_t>(c[row][col]);
        for (int k = 0; k < s.k; ++k) sum += static_cast<int64_t>(a[row][k]) * static_cast<int64_t>(bm[k][col]);
        if (m.variant != 0) {  // .satfinite
          sum = std::clamp<int64_t>(sum, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
        }
        dbits[row][col] = static_cast<uint32_t>(sum);
        continue;
      }
      double sum = c[row][col];
      for (int k = 0; k < s.k; ++k) sum += a[row][k] * bm[k][col];
      if (std::isnan(sum)) {
        dbits[row][col] = m.type == ScalarType::kF16 ? 0x7FFFu : 0x7FFFFFFFu;
      } else {
        dbits[row][col] = ir::EncodeFloat(sum, m.type == ScalarType::kF16 ? ir::kHalfFormat : ir::kF32Format,
                                          ir::Rounding::kRn);
      }
    }
  }
  for (int i = 0; i < count; ++i) {
    Thread& t = *lanes[i];
    const DInst& d = *insts[i];
    const int lane = static_cast<int>(t.linear % 32), g = lane >> 2, tig = lane & 3;
    for (int r = 0; r < d.ndst; ++r) {
      uint32_t w = 0;
      for (int j = 0; j < ed; ++j) {
        const int e = r * ed + j;
        w |= dbits[g + 8 * (e >> 1)][tig * 2 + (e & 1)] << (bits_d * j % 32);
      }
      Set<uint32_t>(t, d.dst[r], w);
    }
  }
  return true;
}

}  // namespace ptxforge::runtime::emu
