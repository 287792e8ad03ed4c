// Names of modifiers and special registers; legality facts tied to modifiers.
#include "ir/instruction.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace ptxforge::ir {
namespace {

struct SpecialRow {
  std::string_view name;
  ScalarType type;
  int min_ptx;
};

constexpr SpecialRow kSpecials[kNumSpecialRegs] = {
    {"%tid.x", ScalarType::kU32, 0},       {"%tid.y", ScalarType::kU32, 0},
    {"%tid.z", ScalarType::kU32, 0},       {"%ntid.x", ScalarType::kU32, 0},
    {"%ntid.y", ScalarType::kU32, 0},      {"%ntid.z", ScalarType::kU32, 0},
    {"%ctaid.x", ScalarType::kU32, 0},     {"%ctaid.y", ScalarType::kU32, 0},
    {"%ctaid.z", ScalarType::kU32, 0},     {"%nctaid.x", ScalarType::kU32, 0},
    {"%nctaid.y", ScalarType::kU32, 0},    {"%nctaid.z", ScalarType::kU32, 0},
    {"%laneid", ScalarType::kU32, 0},      {"%warpid", ScalarType::kU32, 0},
    {"%nwarpid", ScalarType::kU32, 0},     {"%smid", ScalarType::kU32, 0},
    {"%nsmid", ScalarType::kU32, 0},       {"%lanemask_eq", ScalarType::kU32, 0},
    {"%lanemask_lt", ScalarType::kU32, 0}, {"%lanemask_le", ScalarType::kU32, 0},
    {"%lanemask_gt", ScalarType::kU32, 0}, {"%lanemask_ge", ScalarType::kU32, 0},
    {"%clock", ScalarType::kU32, 0},       {"%clock64", ScalarType::kU64, 0},
    {"%globaltimer", ScalarType::kU64, 0}, {"%dynamic_smem_size", ScalarType::kU32, 41},
};

TargetRequirement Max(TargetRequirement a, const TargetRequirement& b) {
  if (b.arch_specific) {
    a.arch_specific = true;
    a.sm = b.sm;
  } else if (!a.arch_specific) {
    a.sm = std::max(a.sm, b.sm);
  }
  a.ptx = std::max(a.ptx, b.ptx);
  return a;
}

}  // namespace

std::string_view SpecialRegName(SpecialReg r) { return kSpecials[static_cast<int>(r)].name; }
ScalarType SpecialRegType(SpecialReg r) { return kSpecials[static_cast<int>(r)].type; }
PtxVersion SpecialRegMinPtx(SpecialReg r) { return PtxVersion{kSpecials[static_cast<int>(r)].min_ptx}; }

bool CmpAllowsType(CmpOp cmp, ScalarType t) {
  TypeKind k = KindOf(t);
  switch (cmp) {
    case CmpOp::kNone: return false;
    case CmpOp::kEq:
    case CmpOp::kNe: return k == TypeKind::kBits || k == TypeKind::kSigned || k == TypeKind::kUnsigned ||
                            k == TypeKind::kFloat;
    case CmpOp::kLt:
    case CmpOp::kLe:
    case CmpOp::kGt:
    case CmpOp::kGe: return k == TypeKind::kSigned || k == TypeKind::kUnsigned || k == TypeKind::kFloat;
    case CmpOp::kLo:
    case CmpOp::kLs:
    case CmpOp::kHi:
    case CmpOp::kHs: return k == TypeKind::kUnsigned;
    default: return k == TypeKind::kFloat;  // unordered forms, num, nan
  }
}

bool AtomOpAllowsType(AtomOp op, ScalarType t) {
  using T = ScalarType;
  switch (op) {
    case AtomOp::kAdd:  // f16/bf16 and the packed pairs with .noftz
      return t == T::kU32 || t == T::kS32 || t == T::kU64 || t == T::kF32 || t == T::kF64 ||
             IsHalfFamily(t);
    case AtomOp::kMin:
    case AtomOp::kMax: return t == T::kU32 || t == T::kS32 || t == T::kU64 || t == T::kS64;
    case AtomOp::kCas: return t == T::kB16 || t == T::kB32 || t == T::kB64;  // 16-bit: cas only
    case AtomOp::kExch:
    case AtomOp::kAnd:
    case AtomOp::kOr:
    case AtomOp::kXor: return t == T::kB32 || t == T::kB64;
    case AtomOp::kInc:
    case AtomOp::kDec: return t == T::kU32;
    case AtomOp::kNone: return false;
  }
  return false;
}

uint8_t EnumValue(const Modifiers& m, ModSlot slot) {
  switch (slot) {
    case ModSlot::kVariant: return m.variant;
    case ModSlot::kShape: return m.shape;
    case ModSlot::kLayout: return m.layout;
    default: return 0;
  }
}

ScalarType FragmentRegType(ScalarType t) {
  if (IsF16Family(t)) return ScalarType::kF16x2;
  if (IsBF16Family(t)) return ScalarType::kBF16x2;
  if (TypeBits(t) < 32 || IsInstructionOnlyType(t)) return t == ScalarType::kNone ? t : ScalarType::kB32;
  return t;
}

ScalarType ElementType(const Instruction& inst, const OperandSpec& spec) {
  const Modifiers& m = inst.mods;
  switch (spec.rule) {
    case TypeRule::kType: return m.type;
    case TypeRule::kType2: return m.type2;
    case TypeRule::kType3: return m.type3;
    case TypeRule::kType4: return m.type4;
    case TypeRule::kWide: return m.mode == Mode::kWide ? WidenedType(m.type) : m.type;
    case TypeRule::kHalf: return TypeBits(m.type) >= 16 ? BitsTypeOfSize(TypeBits(m.type) / 2) : ScalarType::kNone;
    case TypeRule::kDpAcc: return IsSigned(m.type) || IsSigned(m.type2) ? ScalarType::kS32 : ScalarType::kU32;
    case TypeRule::kFixed: return spec.fixed;
    case TypeRule::kAddress:
    case TypeRule::kLabel: return ScalarType::kNone;
  }
  return ScalarType::kNone;
}

ScalarType OperandType(const Instruction& inst, const OperandSpec& spec) {
  const ScalarType t = ElementType(inst, spec);
  return spec.fragment == Fragment::kNone ? t : FragmentRegType(t);
}

int GroupCount(const Instruction& inst, const OperandSpec& spec) {
  if (spec.fragment == Fragment::kNone) return spec.group == 0 ? inst.mods.vec : spec.group;
  // A warp of 32 lanes holds the matrix; each lane's elements packed in 32-bit registers.
  const MatrixShape s = ParseMatrixShape(EnumValueName(inst.info(), ModSlot::kShape, inst.mods.shape));
  const int bits = TypeBits(ElementType(inst, spec));
  const int elements = spec.fragment == Fragment::kA ? s.m * s.k : spec.fragment == Fragment::kB ? s.k * s.n : s.m * s.n;
  return elements * bits / (32 * 32);
}

bool GroupSizes(const Instruction& inst, std::span<const OperandSpec> specs, size_t count, uint8_t* sizes) {
  size_t total = 0;
  for (size_t k = 0; k < specs.size(); ++k) {
    const OperandSpec& spec = specs[k];
    // GroupCount, with its common case (a fixed group) inline.
    const uint8_t n = static_cast<uint8_t>(spec.fragment == Fragment::kNone && spec.group != 0 ? spec.group
                                                                                             : GroupCount(inst, spec));
    sizes[k] = n;
    total += n;
  }
  // Optional operands are trailing: leave them out from the end.
  for (size_t k = specs.size(); k-- > 0 && total > count && specs[k].optional;) {
    total -= sizes[k];
    sizes[k] = 0;
  }
  return total == count;
}

bool GroupSizes(const Instruction& inst, std::span<const OperandSpec> specs, size_t count,
                absl::InlinedVector<uint8_t, 8>& sizes) {
  sizes.resize(specs.size());
  return GroupSizes(inst, specs, count, sizes.data());
}

namespace {

// By special register, its PTX version; the entry after the last is 0, for
// an operand that is no special register.
constexpr std::array<int, kNumSpecialRegs + 1> kSpecialMinPtx = [] {
  std::array<int, kNumSpecialRegs + 1> v{};
  for (int r = 0; r < kNumSpecialRegs; ++r) v[r] = kSpecials[r].min_ptx;
  return v;
}();

// RequirementOf for the forms that can raise the opcode's base: cvt of a
// bf16 value, an f16 or bf16 type, an enumerated modifier value, a .v4
// load or store, cvta of the param space. `req`: the base with the
// special registers' PTX versions.
[[gnu::noinline]] TargetRequirement RequirementOfForm(const Instruction& inst, const OpInfo& info,
                                                      TargetRequirement req) {
  const ScalarType t = inst.mods.type;
  if (inst.op == Opcode::kCvt) {
    ScalarType s = inst.mods.type2;
    if (IsBF16Family(t) || IsBF16Family(s)) {
      ScalarType other = IsBF16Family(t) ? s : t;
      if (other == ScalarType::kF32) {
        // cvt.rn.bf16.f32 is sm_80 / PTX 7.0; cvt.f32.bf16 needs PTX 7.1, and
        // sm_90 / PTX 7.8 with .ftz.
        if (IsBF16Family(s) && inst.mods.ftz) {
          req = Max(req, TargetRequirement{90, false, PtxVersion{78}});
        } else {
          req = Max(req, TargetRequirement{80, false, PtxVersion{IsBF16Family(s) ? 71 : 70}});
        }
      } else {
        req = Max(req, TargetRequirement{90, false, PtxVersion{78}});
      }
    }
    return req;  // cvt has no f16 or bf16 column of its own, nor the other forms
  }
  if (IsF16Family(t)) req = Max(req, info.f16);
  if (IsBF16Family(t)) req = Max(req, info.bf16);
  // A listed modifier value may need a newer target (mma's m16n8k16@80).
  if ((inst.mods.variant | inst.mods.shape | inst.mods.layout) != 0) {
    for (ModSlot slot : {ModSlot::kVariant, ModSlot::kShape, ModSlot::kLayout}) {
      if (uint8_t v = EnumValue(inst.mods, slot); v != 0) req = Max(req, EnumValueRequirement(info, slot, v));
    }
  }
  // 256-bit loads and stores (.v4 of 64-bit values) are sm_100 / PTX 8.8.
  if ((inst.op == Opcode::kLd || inst.op == Opcode::kSt) && inst.mods.vec == 4 && TypeBits(t) == 64) {
    req = Max(req, TargetRequirement{100, false, PtxVersion{88}});
  }
  // cvta to and from the param space is PTX 7.7.
  if (inst.op == Opcode::kCvta && inst.mods.space == StateSpace::kParam) {
    req = Max(req, TargetRequirement{0, false, PtxVersion{77}});
  }
  return req;
}

}  // namespace

// The verifier asks for every instruction and the printer again: the usual
// instruction takes one walk over its sources and one test, with no branch
// per source or per form (a fresh process's first codegen pays for each
// branch it runs the first time), and the forms that can raise the base go
// to RequirementOfForm. Only the PTX version depends on the special
// registers read, and a maximum of versions is the same in any order.
TargetRequirement RequirementOf(const Instruction& inst) {
  const OpInfo& info = inst.info();
  TargetRequirement req = info.base;
  for (const Operand& op : inst.srcs) {
    const uint32_t special = op.kind == OperandKind::kSpecial ? op.id : uint32_t{kNumSpecialRegs};
    req.ptx.value = std::max(req.ptx.value, kSpecialMinPtx[std::min(special, uint32_t{kNumSpecialRegs})]);
  }
  const ScalarType t = inst.mods.type;
  const bool form = (inst.op == Opcode::kCvt) | IsHalfFamilyNoBranch(t) |
                    ((inst.mods.variant | inst.mods.shape | inst.mods.layout) != 0) |
                    (((inst.op == Opcode::kLd) | (inst.op == Opcode::kSt)) & (inst.mods.vec == 4)) |
                    ((inst.op == Opcode::kCvta) & (inst.mods.space == StateSpace::kParam));
  if (!form) [[likely]] return req;
  return RequirementOfForm(inst, info, req);
}

}  // namespace ptxforge::ir
