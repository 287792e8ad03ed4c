// Verification of single instructions: the references, the operand counts
// and kinds, the guard, the target, the modifiers and each operand's type,
// against the opcode table and PTX's rules. ir/verify.cc runs these for
// every instruction of a body.
#include <array>
#include <cassert>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/enum_ranges.h"
#include "ir/format.h"
#include "ir/strings.h"
#include "ir/verify_internal.h"

namespace ptxforge::ir::verify_internal {
namespace {

std::string TypeList(ir::TypeMask mask) {
  std::vector<std::string_view> names;
  for (int t = 1; t < ir::kNumScalarTypes; ++t) {
    if (ir::InMask(mask, static_cast<ScalarType>(t))) names.push_back(ir::TypeName(static_cast<ScalarType>(t)));
  }
  return StrJoin(names, ", ");
}

bool HasSlot(const OpInfo& info, ir::ModSlot slot) { return info.has_slot(slot); }

// InstructionChecker's checks, with the kernel and its limits as members:
// made for each call (two references). Its checks are public because only
// InstructionChecker, in this file, uses the class.
class Checker {
 public:
  Checker(const ir::Kernel& k, const ReferenceLimits& limits) : k_(k), limits_(limits) {}

  // ---- operand checks; `n` is the operand's PTX position (destinations first).

  // A register whose type fits `expected`: the success path of ExpectReg,
  // inline. Only the checks after CheckStructure ask, which refused any
  // register that is not of this kernel (FindBadReference), and every type
  // they compare is valid (CheckDeclarationEnums, EnumsValid), as
  // TypesCompatibleBits needs.
  bool RegFits(ir::Reg r, ScalarType expected) const {
    assert(k_.valid_reg(r));
    const ScalarType t = k_.type_of(r);
    return expected == t || ir::TypesCompatibleBits(expected, t);
  }

  absl::Status ExpectReg(size_t i, size_t n, ir::Reg r, ScalarType expected) const {
    if (RegFits(r, expected)) return absl::OkStatus();
    return RegError(i, n, r, expected);
  }

  [[gnu::cold]] absl::Status RegError(size_t i, size_t n, ir::Reg r, ScalarType expected) const {
    if (!k_.valid_reg(r)) return Error(i, StrCat("operand ", n, " is not a register of this kernel"));
    if (!ir::TypesCompatible(expected, k_.type_of(r))) {
      return Error(i, StrCat("operand ", n, " is ", RegDesc(r), ", expected ", ir::TypeName(expected)));
    }
    return absl::OkStatus();
  }

  absl::Status ExpectDst(size_t i, size_t d, ScalarType expected) const { return ExpectReg(i, d, k_.body[i].dsts[d], expected); }

  // A register or an immediate of a type compatible with `expected`.
  absl::Status ExpectValue(size_t i, size_t s, ScalarType expected, bool allow_imm = true) const {
    const Operand& op = k_.body[i].srcs[s];
    if (op.is_reg() ? RegFits(op.reg(), expected) : allow_imm && op.is_imm() && ImmFits(op, expected)) {
      return absl::OkStatus();
    }
    return CheckValue(i, s, expected, allow_imm);
  }

  // An immediate CheckValue accepts where `expected` is wanted: none of the
  // half family, of a compatible type (a float operand: that float type),
  // its bits within its type.
  static bool ImmFits(const Operand& op, ScalarType expected) {
    const int bits = ir::TypeBits(op.type);
    return !ir::IsHalfFamily(expected) && op.type != ScalarType::kPred && ir::TypesCompatibleBits(expected, op.type) &&
           !(ir::IsFloat(expected) && op.type != expected) && !(bits < 64 && (op.bits() >> bits) != 0);
  }

  // ExpectValue but for its register fast path.
  absl::Status CheckValue(size_t i, size_t s, ScalarType expected, bool allow_imm) const {
    const Instruction& inst = k_.body[i];
    const Operand& op = inst.srcs[s];
    size_t n = inst.dsts.size() + s;
    if (op.is_reg()) return ExpectReg(i, n, op.reg(), expected);
    if (op.is_imm() && allow_imm) {
      if (ir::IsHalfFamily(expected)) {
        return Error(i, StrCat("operand ", n, " is an immediate; PTX has no ", ir::TypeName(expected),
                                     " immediates (move it to a register with mov.b", ir::TypeBits(expected), " first)"));
      }
      if (op.type == ScalarType::kPred || !ir::TypesCompatible(expected, op.type)) {
        return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected ", ir::TypeName(expected)));
      }
      // A float operand takes a float literal only (0f..., 0d...): ptxas refuses
      // the bits of a b32/b64 immediate there, though a b32 register is fine.
      if (ir::IsFloat(expected) && op.type != expected) {
        return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected an ", ir::TypeName(expected),
                               " immediate (PTX takes only a float literal for a float operand)"));
      }
      int bits = ir::TypeBits(op.type);
      if (bits < 64 && (op.bits() >> bits) != 0) {
        return Error(i, StrCat("operand ", n, ": immediate 0x", Hex{op.bits()}, " does not fit ",
                                     ir::TypeName(op.type)));
      }
      return absl::OkStatus();
    }
    return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected ",
                                 allow_imm ? "a register or immediate" : "a register", " of type ",
                                 ir::TypeName(expected)));
  }

  // bfe/bfi: immediate bit positions and lengths are 0..255 (ptxas rejects
  // larger ones; registers are masked to 8 bits at run time).
  absl::Status ExpectFieldBounds(size_t i, size_t first) const {
    const Instruction& inst = k_.body[i];
    for (size_t s = first; s < first + 2; ++s) {
      const Operand& op = inst.srcs[s];
      if (op.is_imm() && op.bits() > 255) {
        return Error(i, StrCat("operand ", inst.dsts.size() + s, ": the bit ", s == first ? "position" : "length", " ",
                               op.bits(), " is out of range (0..255)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ExpectCount(size_t i, size_t dsts, size_t srcs) const {
    const Instruction& inst = k_.body[i];
    if (inst.dsts.size() != dsts || inst.srcs.size() != srcs) {
      return Error(i, StrCat(inst.info().mnemonic, " takes ", dsts, " destination(s) and ", srcs,
                                   " source(s), got ", inst.dsts.size(), " and ", inst.srcs.size()));
    }
    return absl::OkStatus();
  }

  absl::Status CheckAddress(size_t i, size_t s, ir::StateSpace space) const {
    const Instruction& inst = k_.body[i];
    const Operand& op = inst.srcs[s];
    size_t n = inst.dsts.size() + s;
    if (!op.is_address()) return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected an address"));
    switch (op.base) {
      case ir::AddressBase::kReg: {
        if (!k_.valid_reg(op.reg())) return Error(i, StrCat("operand ", n, ": the address register is not of this kernel"));
        ScalarType t = k_.type_of(op.reg());
        bool ok64 = ir::TypesCompatibleBits(ScalarType::kU64, t);
        bool ok32 = ir::TypesCompatibleBits(ScalarType::kU32, t) &&
                    (space == ir::StateSpace::kShared || space == ir::StateSpace::kLocal);
        if (!ok64 && !ok32) {
          return Error(i, StrCat("operand ", n, ": the address register is ", RegDesc(op.reg()),
                                       ", expected u64 (or u32 for shared and local)"));
        }
        return absl::OkStatus();
      }
      case ir::AddressBase::kSymbol: {
        if (op.id >= k_.variables.size()) return Error(i, StrCat("operand ", n, " names variable ", op.id, ", which does not exist"));
        const ir::Variable& v = k_.variables[op.id];
        if (v.space != space) {
          return Error(i, StrCat("operand ", n, " addresses ", ir::StateSpaceName(v.space), " variable '", v.name,
                                       "' from ", space == ir::StateSpace::kGeneric ? "generic" : ir::StateSpaceName(space),
                                       " space"));
        }
        return absl::OkStatus();
      }
      case ir::AddressBase::kParam:  // checked by CheckShape
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  // mma's third and fourth types and the listed modifiers (prmt modes, mma
  // shapes and layouts): one of the row's values. Run before the operands
  // are counted when those depend on them (mma fragments).
  absl::Status CheckListedModifiers(size_t i) const {
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    const ir::Modifiers& m = inst.mods;
    // A row without these slots has nothing to check here: CheckModifiers
    // refused any value set in a slot the row does not print.
    constexpr uint32_t kListed = ir::SlotBit(ir::ModSlot::kType3) | ir::SlotBit(ir::ModSlot::kType4) |
                                 ir::SlotBit(ir::ModSlot::kVariant) | ir::SlotBit(ir::ModSlot::kShape) |
                                 ir::SlotBit(ir::ModSlot::kLayout);
    if ((info.slot_mask & kListed) == 0) return absl::OkStatus();
    for (int n : {2, 3}) {
      const ir::ModSlot slot = n == 2 ? ir::ModSlot::kType3 : ir::ModSlot::kType4;
      const ScalarType tn = n == 2 ? m.type3 : m.type4;
      if (HasSlot(info, slot) && !ir::InMask(ir::TypeSlotMask(info, n), tn)) {
        return Error(i, StrCat(info.mnemonic, " needs a ", n == 2 ? "third" : "fourth", " type (supported: ",
                               TypeList(ir::TypeSlotMask(info, n)), ")"));
      }
    }
    for (int e = 0; e < 3; ++e) {
      const ir::ModSlot slot = e == 0 ? ir::ModSlot::kVariant : e == 1 ? ir::ModSlot::kShape : ir::ModSlot::kLayout;
      const int v = ir::EnumValue(m, slot);
      const int count = info.enum_counts[e];
      if ((ir::EnumRequired(info, slot) && v == 0) || v > count) {
        std::vector<std::string_view> names;
        for (int k = 1; k <= count; ++k) names.push_back(ir::EnumValueName(info, slot, k));
        const std::string_view kind = ir::EnumKindName(slot);
        if (v == 0) return Error(i, StrCat(info.mnemonic, " needs a ", kind, " (", StrJoin(names, ", "), ")"));
        return Error(i, StrCat(kind, " ", v, " of ", info.mnemonic, " does not exist (", kind, "s: ",
                               StrJoin(names, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }

  // ---- modifiers

  // The first modifier `inst` sets in a slot its opcode does not print (in
  // ModSlot order), named in the message; OK if there is none. Only called
  // when ChangedModifierBytes and OpInfo::printed_bytes say there is one.
  [[gnu::cold]] absl::Status UnprintedModifier(size_t i) const {
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    const ir::Modifiers& m = inst.mods;
    struct Check {
      ir::ModSlot slot;
      bool set;
    };
    const Check checks[] = {
        {ir::ModSlot::kSem, m.sem != ir::MemSem::kNone},
        {ir::ModSlot::kScope, m.scope != ir::Scope::kNone && !HasSlot(info, ir::ModSlot::kLevel)},
        {ir::ModSlot::kSpace, m.space != ir::StateSpace::kGeneric},
        {ir::ModSlot::kTo, m.cvta_to},
        {ir::ModSlot::kNc, m.nc},
        {ir::ModSlot::kCache, m.cache != ir::CacheOp::kNone},
        {ir::ModSlot::kVec, m.vec != 1 && !HasSlot(info, ir::ModSlot::kNum)},  // ldmatrix's .x1 .. .x4 live there too
        {ir::ModSlot::kAtom, m.atom != ir::AtomOp::kNone},
        {ir::ModSlot::kShfl, m.shfl != ir::ShflMode::kNone},
        {ir::ModSlot::kVote, m.vote != ir::VoteMode::kNone},
        {ir::ModSlot::kCmp, m.cmp != ir::CmpOp::kNone},
        {ir::ModSlot::kBool, m.bool_op != ir::BoolOp::kNone},
        {ir::ModSlot::kMode, m.mode != ir::Mode::kNone},
        {ir::ModSlot::kRnd, m.rounding != ir::Rounding::kNone},
        {ir::ModSlot::kFtz, m.ftz},
        {ir::ModSlot::kSat, m.sat},
        {ir::ModSlot::kNoftz, m.noftz},
        {ir::ModSlot::kUni, m.uni},
        {ir::ModSlot::kType, m.type != ScalarType::kNone},
        {ir::ModSlot::kType2, m.type2 != ScalarType::kNone},
        {ir::ModSlot::kVariant, m.variant != 0},
        {ir::ModSlot::kType3, m.type3 != ScalarType::kNone},
        {ir::ModSlot::kType4, m.type4 != ScalarType::kNone},
        {ir::ModSlot::kShape, m.shape != 0},
        {ir::ModSlot::kLayout, m.layout != 0},
    };
    // The name printed after a '.', looked up only for the message.
    auto name_of = [&](ir::ModSlot slot) -> std::string_view {
      switch (slot) {
        case ir::ModSlot::kSem: return ir::MemSemName(m.sem);
        case ir::ModSlot::kScope: return ir::ScopeName(m.scope);
        case ir::ModSlot::kSpace: return ir::StateSpaceName(m.space);
        case ir::ModSlot::kTo: return "to";
        case ir::ModSlot::kNc: return "nc";
        case ir::ModSlot::kCache: return ir::CacheOpName(m.cache);
        case ir::ModSlot::kVec: return "v";
        case ir::ModSlot::kAtom: return ir::AtomOpName(m.atom);
        case ir::ModSlot::kShfl: return ir::ShflModeName(m.shfl);
        case ir::ModSlot::kVote: return ir::VoteModeName(m.vote);
        case ir::ModSlot::kCmp: return ir::CmpOpName(m.cmp);
        case ir::ModSlot::kBool: return ir::BoolOpName(m.bool_op);
        case ir::ModSlot::kMode: return ir::ModeName(m.mode);
        case ir::ModSlot::kRnd: return ir::RoundingName(m.rounding);
        case ir::ModSlot::kFtz: return "ftz";
        case ir::ModSlot::kSat: return "sat";
        case ir::ModSlot::kNoftz: return "noftz";
        case ir::ModSlot::kUni: return "uni";
        case ir::ModSlot::kVariant:
        case ir::ModSlot::kShape:
        case ir::ModSlot::kLayout: return ir::EnumValueName(info, slot, ir::EnumValue(m, slot));
        default: return "";
      }
    };
    for (const Check& c : checks) {
      if (!c.set || HasSlot(info, c.slot)) continue;
      std::string what = c.slot == ir::ModSlot::kType    ? std::string("a type")
                         : c.slot == ir::ModSlot::kType2 ? std::string("a second type")
                         : c.slot == ir::ModSlot::kType3 ? std::string("a third type")
                         : c.slot == ir::ModSlot::kType4 ? std::string("a fourth type")
                         : c.slot == ir::ModSlot::kVec   ? StrCat(".v", m.vec)
                         : name_of(c.slot).empty()
                             ? StrCat("a ", ir::EnumKindName(c.slot), " (", int{ir::EnumValue(m, c.slot)}, ")")
                             : StrCat(".", name_of(c.slot));
      return Error(i, StrCat(what, " does not apply to ", info.mnemonic));
    }
    return absl::OkStatus();
  }

  absl::Status CheckModifiers(size_t i) const {
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    const ir::Modifiers& m = inst.mods;
    // Each modifier that is set must be one the opcode prints: one test of
    // two masks; the message is built only when it fails.
    if ((ir::ChangedModifierBytes(m) & ~info.printed_bytes) != 0) {
      if (absl::Status s = UnprintedModifier(i); !s.ok()) return s;
    }
    if (inst.op == Opcode::kSetp && (m.type == ScalarType::kF16x2 || m.type == ScalarType::kBF16x2)) {
      return Error(i, StrCat("setp.", ir::TypeName(m.type), " compares each half and writes two predicates (p|q): "
                             "use opcode SetpPair (KernelBuilder::SetpPair); ptxas also takes a single predicate, "
                             "but the PTX ISA does not define that form, so ptxforge refuses it"));
    }
    const TypeMask type_mask = ir::TypeSlotMask(info, 0);
    if (type_mask != 0 && m.type != ScalarType::kNone && !ir::InMask(type_mask, m.type)) {
      return Error(i, StrCat(info.mnemonic, " does not support type ", ir::TypeName(m.type), " (supported: ",
                                   TypeList(type_mask), ")"));
    }
    if (type_mask != 0 && m.type == ScalarType::kNone) return Error(i, StrCat(info.mnemonic, " needs a type"));
    if (HasSlot(info, ir::ModSlot::kType2) && info.rule != OpRule::kCvt && info.rule != OpRule::kCvtPack &&
        !ir::InMask(ir::TypeSlotMask(info, 1), m.type2)) {
      return Error(i, StrCat(info.mnemonic, " needs a second type (supported: ", TypeList(ir::TypeSlotMask(info, 1)),
                             ")"));
    }
    if (absl::Status st = CheckListedModifiers(i); !st.ok()) return st;

    const ScalarType t = m.type;
    const bool is_float = ir::IsFloat(t);
    if (m.rounding != ir::Rounding::kNone && inst.op != Opcode::kCvt) {
      if (!is_float) return Error(i, StrCat(".", ir::RoundingName(m.rounding), " applies to float types only"));
      if (ir::IsIntegerRounding(m.rounding)) {
        return Error(i, StrCat(".", ir::RoundingName(m.rounding), " (round to integer) applies to cvt only"));
      }
      if (inst.op == Opcode::kFma && ir::IsBF16Family(t) && m.rounding != ir::Rounding::kRn) {
        return Error(i, StrCat("fma.", ir::RoundingName(m.rounding), ".", ir::TypeName(t),
                               ": the PTX ISA defines only .rn for bf16 fma; ptxas also accepts .rz, .rm and .rp, "
                               "but what they compute is undocumented, so ptxforge refuses them"));
      }
      if (ir::IsHalfFamily(t) && m.rounding != ir::Rounding::kRn) {
        return Error(i, StrCat(".", ir::RoundingName(m.rounding), " does not apply to ", ir::TypeName(t), " (only .rn)"));
      }
    }
    if (m.ftz && inst.op == Opcode::kRcp && t == ScalarType::kF64 && m.rounding != ir::Rounding::kNone) {
      return Error(i, StrCat("rcp.", ir::RoundingName(m.rounding), ".ftz.f64: the PTX ISA defines .ftz on f64 only for "
                             "rcp.approx.ftz.f64; ptxas also accepts it with a rounding modifier, but what it does "
                             "there is undocumented, so ptxforge refuses it (rcp.", ir::RoundingName(m.rounding),
                             ".f64 is exact)"));
    }
    if (inst.op == Opcode::kEx2 && ir::IsBF16Family(t) && !m.ftz) {
      return Error(i, StrCat("ex2.approx.", ir::TypeName(t), " needs .ftz (PTX defines ex2 on bf16 and bf16x2 only "
                             "with .ftz)"));
    }
    if (m.ftz && inst.op != Opcode::kCvt && t != ScalarType::kF32 && !ir::IsF16Family(t) &&
        !(t == ScalarType::kF64 && m.mode == ir::Mode::kApprox) && !(inst.op == Opcode::kEx2 && ir::IsBF16Family(t))) {
      return Error(i, StrCat(".ftz applies to f32 (and f16) only, not ", ir::TypeName(t)));
    }
    if (m.ftz && inst.op == Opcode::kEx2 && t != ScalarType::kF32 && !ir::IsBF16Family(t)) {
      return Error(i, StrCat(".ftz applies to ex2.f32 and ex2.bf16 only, not ", ir::TypeName(t)));
    }
    if (m.sat && inst.op != Opcode::kCvt) {
      bool sat_ok = (is_float && t != ScalarType::kF64 && !ir::IsBF16Family(t)) ||
                    ((inst.op == Opcode::kAdd || inst.op == Opcode::kSub) && t == ScalarType::kS32);
      if (!sat_ok) {
        return Error(i, StrCat(".sat applies to f32 and f16 (and s32 add/sub) only, not ", ir::TypeName(t)));
      }
    }
    switch (inst.op) {
      case Opcode::kMul:
      case Opcode::kMad:
        if (ir::IsInteger(t)) {
          if (m.mode != ir::Mode::kLo && m.mode != ir::Mode::kHi && m.mode != ir::Mode::kWide) {
            return Error(i, StrCat("integer ", info.mnemonic, " needs .lo, .hi or .wide"));
          }
          if (m.mode == ir::Mode::kWide && ir::TypeBits(t) == 64) {
            return Error(i, StrCat(info.mnemonic, ".wide applies to 16- and 32-bit integers only"));
          }
        } else if (m.mode != ir::Mode::kNone) {
          return Error(i, StrCat(".", ir::ModeName(m.mode), " applies to integer ", info.mnemonic, " only"));
        }
        break;
      case Opcode::kFma:
        if (m.rounding == ir::Rounding::kNone) return Error(i, "fma needs a rounding modifier (.rn, .rz, .rm or .rp)");
        break;
      case Opcode::kDiv:
      case Opcode::kSqrt:
      case Opcode::kRcp:
        if (is_float) {
          bool approx_like = m.mode == ir::Mode::kApprox || (inst.op == Opcode::kDiv && m.mode == ir::Mode::kFull);
          if (m.mode != ir::Mode::kNone && !approx_like) {
            return Error(i, StrCat(".", ir::ModeName(m.mode), " does not apply to ", info.mnemonic));
          }
          if (approx_like == (m.rounding != ir::Rounding::kNone)) {
            return Error(i, StrCat(info.mnemonic, ".", ir::TypeName(t),
                                         " needs exactly one of a rounding modifier (.rn, .rz, .rm, .rp) or ",
                                         inst.op == Opcode::kDiv ? ".approx/.full" : ".approx"));
          }
          if (t == ScalarType::kF64 && approx_like && !(inst.op == Opcode::kRcp && m.ftz)) {
            return Error(i, StrCat(info.mnemonic, ".f64 needs a rounding modifier (only rcp.approx.ftz.f64 is approximate)"));
          }
        } else if (m.mode != ir::Mode::kNone) {
          return Error(i, StrCat(".", ir::ModeName(m.mode), " applies to float ", info.mnemonic, " only"));
        }
        break;
      case Opcode::kRsqrt:
      case Opcode::kEx2:
      case Opcode::kLg2:
      case Opcode::kSin:
      case Opcode::kCos:
      case Opcode::kTanh:
        if (m.mode != ir::Mode::kApprox) return Error(i, StrCat(info.mnemonic, " needs .approx"));
        break;
      default:
        if (m.mode != ir::Mode::kNone && m.mode != ir::Mode::kApprox) {
          return Error(i, StrCat(".", ir::ModeName(m.mode), " does not apply to ", info.mnemonic));
        }
        if (m.mode == ir::Mode::kApprox) return Error(i, StrCat(".approx does not apply to ", info.mnemonic));
        break;
    }
    return absl::OkStatus();
  }

  absl::Status CheckCvt(size_t i) const {
    const Instruction& inst = k_.body[i];
    const ir::Modifiers& m = inst.mods;
    ScalarType to = m.type, from = m.type2;
    const OpInfo& info = inst.info();
    if (from == ScalarType::kNone || !ir::InMask(info.types, from)) {
      return Error(i, StrCat("cvt source type ", ir::TypeName(from), " is not supported (supported: ",
                                   TypeList(info.types), ")"));
    }
    if (ir::IsF16Family(to) && to != ScalarType::kF16) return Error(i, "cvt converts scalars only");
    bool ff = ir::IsFloat(from), ft = ir::IsFloat(to);
    std::string pair = StrCat(ir::TypeName(to), ".", ir::TypeName(from));
    if (ff && !ft) {
      if (!ir::IsIntegerRounding(m.rounding)) {
        return Error(i, StrCat("cvt.", pair, " (float to integer) needs an integer rounding modifier (.rni, .rzi, .rmi, .rpi)"));
      }
    } else if (!ff && ft) {
      if (!ir::IsFloatRounding(m.rounding)) {
        return Error(i, StrCat("cvt.", pair, " (integer to float) needs a rounding modifier (.rn, .rz, .rm, .rp)"));
      }
    } else if (ff && ft) {
      int bt = ir::TypeBits(to), bf = ir::TypeBits(from);
      if (bt < bf || (bt == bf && to != from)) {
        if (!ir::IsFloatRounding(m.rounding)) {
          return Error(i, StrCat("cvt.", pair, " (narrowing) needs a rounding modifier (.rn, .rz, .rm, .rp)"));
        }
      } else if (bt > bf) {
        if (m.rounding != ir::Rounding::kNone) {
          return Error(i, StrCat("cvt.", pair, " (widening) takes no rounding modifier",
                                 ir::IsBF16Family(from) && ir::IsFloatRounding(m.rounding)
                                     ? ": the PTX ISA makes rounding illegal where a conversion loses no precision; "
                                       "ptxas accepts it from bf16, where it changes nothing, but ptxforge refuses it "
                                       "as for every other widening cvt"
                                     : ""));
        }
      } else if (ir::IsFloatRounding(m.rounding)) {
        return Error(i, StrCat("cvt.", pair, " takes only an integer rounding modifier (.rni, .rzi, .rmi, .rpi)"));
      }
    } else if (m.rounding != ir::Rounding::kNone) {
      return Error(i, StrCat("cvt.", pair, " (integer to integer) takes no rounding modifier"));
    } else if (m.sat) {
      // ptxas refuses .sat where every source value fits the destination.
      int bt = ir::TypeBits(to), bf = ir::TypeBits(from);
      bool fits = (ir::IsSigned(to) == ir::IsSigned(from) && bt >= bf) || (ir::IsSigned(to) && bt > bf);
      if (fits) return Error(i, StrCat("cvt.", pair, " cannot overflow, so .sat does not apply"));
    }
    if (m.ftz && to != ScalarType::kF32 && from != ScalarType::kF32) return Error(i, ".ftz applies to cvt with an f32 operand only");
    const bool bf16 = ir::IsBF16Family(to) || ir::IsBF16Family(from);
    if (bf16 && m.sat) return Error(i, StrCat("cvt.", pair, ": .sat does not apply to cvt with bf16"));
    if (bf16 && (ir::TypeBits(to) == 8 || ir::TypeBits(from) == 8)) {
      return Error(i, StrCat("cvt.", pair, ": PTX has no cvt between bf16 and 8-bit integers"));
    }
    if (absl::Status s = ExpectCount(i, 1, 1); !s.ok()) return s;
    if (absl::Status s = ExpectDst(i, 0, to); !s.ok()) return s;
    return ExpectValue(i, 0, from);  // a register or an immediate (none of the half family)
  }

  // Each operand against the row's signature: its class (register, immediate)
  // and the type that follows from the instruction's types.
  // `groups`: CheckShape's, which found that the operands fit the signature.
  absl::Status CheckSignature(size_t i, const Groups& groups) const {
    const Instruction& inst = k_.body[i];
    const ir::Signature& sig = inst.info().sig;
    assert(groups.dsts_fit && groups.srcs_fit);
    for (size_t g = 0, d = 0; g < sig.ndst; ++g) {
      const ScalarType want = ir::OperandType(inst, sig.dsts[g]);
      for (uint8_t k = 0; k < groups.dsts[g]; ++k, ++d) {
        if (RegFits(inst.dsts[d], want)) continue;
        if (absl::Status s = ExpectDst(i, d, want); !s.ok()) return s;
      }
    }
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const ir::OperandSpec& spec = sig.srcs[g];
      const ScalarType want = ir::OperandType(inst, spec);
      // A register where the spec takes one, of a fitting type, and not
      // an mma fragment: nothing else to check.
      const bool plain_reg = spec.rule != ir::TypeRule::kAddress && spec.cls != ir::OperandClass::kImm &&
                             spec.fragment == ir::Fragment::kNone;
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        const Operand& op = inst.srcs[s];
        if (plain_reg && op.is_reg() && RegFits(op.reg(), want)) continue;
        // An immediate where the spec takes one, that fits (and is 0..255 if it must be).
        if (spec.rule != ir::TypeRule::kAddress && spec.cls != ir::OperandClass::kReg && op.is_imm() &&
            ImmFits(op, want) && !(spec.byte_imm && op.bits() > 255)) {
          continue;
        }
        const size_t n = inst.dsts.size() + s;
        if (spec.rule == ir::TypeRule::kAddress) {
          if (absl::Status st = CheckAddress(i, s, ir::AddressSpace(inst, spec)); !st.ok()) return st;
          continue;
        }
        if (spec.cls == ir::OperandClass::kImm && !op.is_imm()) {
          return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected an immediate of type ",
                                 ir::TypeName(want)));
        }
        if (absl::Status st = ExpectValue(i, s, want, spec.cls != ir::OperandClass::kReg); !st.ok()) return st;
        // ptxas refuses float registers where an mma fragment holds packed
        // elements in .b32 ("Arguments mismatch"), though b32 takes any 32-bit type elsewhere.
        if (spec.fragment != ir::Fragment::kNone && want == ScalarType::kB32 && op.is_reg() &&
            ir::IsFloat(k_.type_of(op.reg()))) {
          return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected b32 (an mma fragment of ",
                                 ir::TypeName(ir::ElementType(inst, spec)), " takes no float registers)"));
        }
        if (spec.byte_imm && op.is_imm() && op.bits() > 255) {
          return Error(i, StrCat("operand ", n, ": immediate ", op.bits(), " is out of range (0..255)"));
        }
      }
    }
    return absl::OkStatus();
  }

  // References exist; the operand counts and kinds are the opcode's. Fills
  // `groups` for the operand checks.
  absl::Status CheckStructure(size_t i, Groups& groups) const {
    const Instruction& inst = k_.body[i];
    // Enums out of range (cast from integers) before any table lookup.
    if (!EnumsValid(inst)) {
      std::string where = FormatLoc(inst.loc);
      return KernelError(StrCat(where.empty() ? StrCat("instruction ", i) : where, ": ", InvalidEnum(inst)));
    }
    if (inst.guarded() && inst.op == Opcode::kLabel) return Error(i, "a label cannot be guarded");
    bool suspect = false;
    if (!ReferencesFine(inst, suspect)) {
      if (absl::Status s = BadReference(i); !s.ok()) return s;
    }
    return CheckShape(i, groups, suspect);
  }

  [[gnu::cold]] [[gnu::noinline]] absl::Status BadReference(size_t i) const {
    if (std::optional<std::string> bad = FindBadReference(k_, k_.body[i])) return Error(i, *bad);
    return absl::OkStatus();
  }

  // Whether FindBadReference finds nothing in `inst`, in one walk with no
  // branch per operand: the guard and destinations against the registers,
  // each source's id against the count of what its kind (an address: its
  // base) names, as FindBadReference checks them (an empty operand fits no
  // limit; an immediate any). False runs FindBadReference, which words the
  // error; it may find none where a kind or base is out of range, which it
  // does not check and which answers false here. Also sets `suspect` when a
  // source is an address or an immediate of an instruction-only type (what
  // CheckShape refuses where the signature has no address).
  bool ReferencesFine(const Instruction& inst, bool& suspect) const {
    const uint64_t nregs = k_.regs.size();
    bool ok = !(inst.guard.valid() & (inst.guard.id >= nregs));
    for (ir::Reg d : inst.dsts) ok &= d.id < nregs;
    for (const Operand& op : inst.srcs) {
      ok &= limits_.Fits(op);
      suspect |= op.is_address() | (op.is_imm() & ir::IsInstructionOnlyType(op.type));
    }
    ok &= !((inst.op == Opcode::kRaw) & (inst.raw_index >= k_.raw_ptx.size()));
    return ok;
  }

  // `suspect`: ReferencesFine's (a source is an address or an immediate of
  // an instruction-only type).
  absl::Status CheckShape(size_t i, Groups& groups, bool suspect) const {
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    const size_t nd = inst.dsts.size(), ns = inst.srcs.size();
    const ir::Signature& sig = info.sig;
    groups.dsts_fit = groups.srcs_fit = false;
    switch (info.rule) {
      case OpRule::kLoad:
      case OpRule::kStore: {
        const int vec = inst.mods.vec;
        if (vec != 1 && vec != 2 && vec != 4) return Error(i, StrCat("vector width ", vec, " is not 1, 2 or 4"));
        const bool load = info.rule == OpRule::kLoad;
        if (absl::Status s = load ? ExpectCount(i, vec, 1) : ExpectCount(i, 0, 1 + vec); !s.ok()) return s;
        break;
      }
      case OpRule::kAtom:
      case OpRule::kRed: {
        const bool atom = info.rule == OpRule::kAtom;
        if (absl::Status s = ExpectCount(i, atom ? 1 : 0, atom && inst.mods.atom == AtomOp::kCas ? 3 : 2); !s.ok()) return s;
        break;
      }
      case OpRule::kSetp:
        if (absl::Status s = ExpectCount(i, info.sig.ndst, inst.mods.bool_op != BoolOp::kNone ? 3 : 2); !s.ok()) return s;
        break;
      case OpRule::kShfl:
        if (nd == 0 || nd > 2 || ns != 4) return Error(i, "shfl.sync takes 1 or 2 destinations and 4 sources");
        break;
      case OpRule::kBarrier:
        if (info.sig.srcs[1].optional) {
          if (nd != 0 || ns == 0 || ns > 2) return Error(i, "bar.sync takes a barrier id and optionally a thread count");
        } else if (nd != 0 || ns != 2) {
          return Error(i, StrCat(info.mnemonic, " takes a barrier id and a thread count"));
        }
        break;
      case OpRule::kBranch:
        if (absl::Status s = ExpectCount(i, 0, 1); !s.ok()) return s;
        if (inst.srcs[0].kind != OperandKind::kLabel) return Error(i, "bra needs a label of this kernel");
        break;
      case OpRule::kLabelDef:
        if (nd != 0 || ns != 1 || inst.srcs[0].kind != OperandKind::kLabel) {
          return Error(i, "a label definition needs a label of this kernel");
        }
        break;
      case OpRule::kRawPtx:
        for (const Operand& op : inst.srcs) {
          if (!op.is_reg()) return Error(i, "raw PTX inputs must be registers");
        }
        break;
      case OpRule::kLoopPragma:
        if (inst.guarded()) return Error(i, "a pragma cannot be guarded");
        if (i == 0 || k_.body[i - 1].op != Opcode::kLabel) {
          return Error(i, "must come right after the label of a loop header (ptxas ignores it anywhere else)");
        }
        if (absl::Status s = ExpectCount(i, 0, 0); !s.ok()) return s;
        break;
      case OpRule::kMatrix: {
        const int num = inst.mods.vec;
        if (num != 1 && num != 2 && num != 4) {
          return Error(i, StrCat(info.mnemonic, " moves .x1, .x2 or .x4 matrices, not .x", num));
        }
        [[fallthrough]];
      }
      default: {
        // mma fragments: their sizes follow from the shape and the types, so those are checked first.
        if (!info.shapes.empty()) {
          if (absl::Status st = CheckModifiers(i); !st.ok()) return st;
        }
        if (info.fixed_operands) {  // GroupSizes, for a signature whose groups have fixed sizes
          for (int g = 0; g < sig.ndst; ++g) groups.dsts[g] = sig.dsts[g].group;
          for (int g = 0; g < sig.nsrc; ++g) groups.srcs[g] = sig.srcs[g].group;
          groups.dsts_fit = nd == info.fixed_dsts;
          groups.srcs_fit = groups.dsts_fit && ns == info.fixed_srcs;
        } else {
          groups.dsts_fit = GroupSizes(inst, std::span(sig.dsts.data(), sig.ndst), nd, groups.dsts.data());
          if (groups.dsts_fit) {
            groups.srcs_fit = GroupSizes(inst, std::span(sig.srcs.data(), sig.nsrc), ns, groups.srcs.data());
          }
        }
        if (!groups.dsts_fit || !groups.srcs_fit) {
          size_t want_d = 0, want_s = 0, optional_s = 0;
          for (int k = 0; k < sig.ndst; ++k) want_d += ir::GroupCount(inst, sig.dsts[k]);
          for (int k = 0; k < sig.nsrc; ++k) {
            (sig.srcs[k].optional ? optional_s : want_s) += ir::GroupCount(inst, sig.srcs[k]);
          }
          if (optional_s == 0) return ExpectCount(i, want_d, want_s);
          return Error(i, StrCat(info.mnemonic, " takes ", want_d, " destination(s) and ", want_s, " to ",
                                 want_s + optional_s, " source(s), got ", nd, " and ", ns));
        }
        break;
      }
    }
    // The sources the signature makes addresses (any number: cp.async has
    // two), and only those, are addresses. Nothing to check when the sources
    // do not fit the signature (raw PTX; the rules above checked the counts).
    // No address to check: only an address or an immediate of an
    // instruction-only type can be wrong (SourceKindError says which).
    if (!info.has_address && !sig.any && !suspect) return absl::OkStatus();
    if (!groups.srcs_fit) {
      if (sig.any || !GroupSizes(inst, std::span(sig.srcs.data(), sig.nsrc), ns, groups.srcs.data())) {
        return absl::OkStatus();
      }
      groups.srcs_fit = true;
    }
    // One flag over the sources for the rules SourceKindError words: each
    // is an address exactly where the signature has one, no immediate has
    // an instruction-only type, an address is by param exactly where it is
    // in the param space, and a param is read whole (at offset 0, its own
    // size) by ld. The message, in the order of those rules, only when it
    // is false.
    bool fine = true;
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const ir::OperandSpec& spec = sig.srcs[g];
      const bool address = spec.rule == ir::TypeRule::kAddress;
      const bool param_space = address & (ir::AddressSpace(inst, spec) == StateSpace::kParam);
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        const Operand& op = inst.srcs[s];
        const bool by_param = op.is_address() & (op.base == AddressBase::kParam);
        fine &= (address == op.is_address()) & !(op.is_imm() & ir::IsInstructionOnlyType(op.type)) &
                (by_param == param_space);
        if (by_param) {  // a param that exists (CheckStructure checked the references)
          fine &= (inst.op == Opcode::kLd) & (op.value == 0) &
                  (TypeSize(inst.mods.type) * inst.mods.vec == TypeSize(k_.params[op.id].type));
        }
      }
    }
    if (!fine) return SourceKindError(i, groups);
    return absl::OkStatus();
  }

  // The first source that breaks a rule of CheckShape's flag, in the order
  // of the rules (each address and immediate, then the params); OK if none.
  [[gnu::cold]] [[gnu::noinline]] absl::Status SourceKindError(size_t i, const Groups& groups) const {
    const Instruction& inst = k_.body[i];
    const ir::Signature& sig = inst.info().sig;
    const size_t nd = inst.dsts.size();
    size_t leading = 0, addresses = 0;  // leading addresses, all addresses
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const bool address = sig.srcs[g].rule == ir::TypeRule::kAddress;
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        addresses += address;
        if (address && leading == s) ++leading;
      }
    }
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const bool address = sig.srcs[g].rule == ir::TypeRule::kAddress;
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        const Operand& op = inst.srcs[s];
        if (op.is_imm() && ir::IsInstructionOnlyType(op.type)) {
          return Error(i, StrCat("operand ", nd + s, " is an immediate of type ", ir::TypeName(op.type),
                                 ", which only an instruction can name (its data lives in b32 or b16 values)"));
        }
        if (address && !op.is_address()) {
          return Error(i, StrCat("operand ", nd + s, " is ", OperandDesc(op), ", expected an address"));
        }
        if (!address && op.is_address()) {
          std::string only;
          if (addresses == 1 && leading == 1) only = " (only the first source is an address)";
          if (addresses > 1 && leading == addresses) only = StrCat(" (only the first ", addresses, " sources are addresses)");
          return Error(i, StrCat("operand ", nd + s, " is an address, expected a register or immediate", only));
        }
      }
    }
    // Params: read whole, by name, with ld.param.
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const ir::OperandSpec& spec = sig.srcs[g];
      if (spec.rule != ir::TypeRule::kAddress) {
        s += groups.srcs[g];
        continue;
      }
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        const Operand& a = inst.srcs[s];
        const StateSpace space = ir::AddressSpace(inst, spec);
        if (a.base != AddressBase::kParam) {
          if (space == StateSpace::kParam) return Error(i, "ld.param must address a param by name");
          continue;
        }
        if (space != StateSpace::kParam) return Error(i, "a param can only be read with ld.param");
        if (inst.op != Opcode::kLd) return Error(i, "params are read-only");
        const Param& param = k_.params[a.id];
        const int bytes = TypeSize(inst.mods.type) * inst.mods.vec;
        if (a.value != 0 || bytes != TypeSize(param.type)) {
          return Error(i, StrCat("ld.param reads ", bytes, " bytes at offset ", a.value, " of param '", param.name,
                                 "', which is ", TypeName(param.type), " (", TypeSize(param.type),
                                 " bytes); read a param whole, with its own size"));
        }
      }
    }
    return absl::OkStatus();
  }

  // Inlined into InstructionChecker::Check, its one caller, which GCC left
  // as a call for its size: a call more per instruction and the limits read
  // through this class's reference made the verifier 5-9% slower on large
  // kernels (scale_bench's BM_Verify at 100k; 1-6% with it inlined).
  [[gnu::always_inline]] absl::Status CheckInstruction(size_t i) const {
    Groups groups;
    if (absl::Status s = CheckStructure(i, groups); !s.ok()) return s;
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    if (inst.guarded() && k_.type_of(inst.guard) != ScalarType::kPred) {
      return Error(i, StrCat("the guard is ", RegDesc(inst.guard), ", expected pred"));
    }
    // Target.
    ir::TargetRequirement req = ir::RequirementOf(k_, inst);
    if (!ir::TargetSatisfies(k_.target, req)) {
      std::string name;
      ir::AppendOpcode(name, inst);
      if (inst.op == Opcode::kRaw) name = "raw PTX";
      return Error(i, StrCat(name, " requires ", ir::RequirementName(req), req.arch_specific ? "" : " or newer",
                                   "; the kernel targets ", ir::TargetName(k_.target)));
    }
    if (inst.op != Opcode::kRaw && inst.op != Opcode::kLabel) {
      if (absl::Status s = CheckModifiers(i); !s.ok()) return s;
    }
    const ScalarType t = inst.mods.type;
    switch (info.rule) {
      case OpRule::kMov: {
        if (absl::Status s = ExpectDst(i, 0, t); !s.ok()) return s;
        const Operand& src = inst.srcs[0];
        if (src.kind == OperandKind::kSpecial) {
          ScalarType st = ir::SpecialRegType(static_cast<ir::SpecialReg>(src.id));
          if (!ir::TypesCompatibleBits(t, st)) {
            return Error(i, StrCat(ir::SpecialRegName(static_cast<ir::SpecialReg>(src.id)), " is ",
                                         ir::TypeName(st), "; mov.", ir::TypeName(t), " cannot read it"));
          }
          return absl::OkStatus();
        }
        if (src.kind == OperandKind::kSymbol) {
          if (ir::TypeBits(t) != 32 && ir::TypeBits(t) != 64) return Error(i, "a variable's address is u32 or u64");
          return absl::OkStatus();
        }
        if (src.is_imm() && ir::IsHalfFamily(src.type)) return absl::OkStatus();  // bits of a half constant
        if (src.is_imm() && src.type == ScalarType::kPred && t == ScalarType::kPred) return absl::OkStatus();  // mov.pred %p, 1
        return ExpectValue(i, 0, t);
      }
      case OpRule::kGeneric: return CheckSignature(i, groups);
      case OpRule::kBitField:
        if (absl::Status s = CheckSignature(i, groups); !s.ok()) return s;
        return ExpectFieldBounds(i, inst.srcs.size() - 2);
      case OpRule::kSetp: {
        bool combine = inst.mods.bool_op != ir::BoolOp::kNone;
        if (inst.mods.cmp == ir::CmpOp::kNone) return Error(i, "setp needs a comparison");
        if (!ir::CmpAllowsType(inst.mods.cmp, t)) {
          return Error(i, StrCat("comparison .", ir::CmpOpName(inst.mods.cmp), " does not apply to ",
                                       ir::TypeName(t)));
        }
        for (size_t d = 0; d < inst.dsts.size(); ++d) {  // setp.f16x2 writes p|q
          if (absl::Status s = ExpectDst(i, d, ScalarType::kPred); !s.ok()) return s;
        }
        if (absl::Status s = ExpectValue(i, 0, t); !s.ok()) return s;
        if (absl::Status s = ExpectValue(i, 1, t); !s.ok()) return s;
        if (combine) return ExpectValue(i, 2, ScalarType::kPred, false);
        return absl::OkStatus();
      }
      case OpRule::kCvt: return CheckCvt(i);
      case OpRule::kCvta: {
        ir::StateSpace sp = inst.mods.space;
        if (sp != ir::StateSpace::kGlobal && sp != ir::StateSpace::kShared && sp != ir::StateSpace::kLocal &&
            sp != ir::StateSpace::kConst && sp != ir::StateSpace::kParam) {
          return Error(i, "cvta needs a state space (global, shared, local, const or param)");
        }
        if (absl::Status s = ExpectDst(i, 0, t); !s.ok()) return s;
        const Operand& src = inst.srcs[0];
        if (src.kind == OperandKind::kSymbol) {
          if (inst.mods.cvta_to) return Error(i, "cvta.to converts a generic address register, not a variable");
          if (k_.variables[src.id].space != sp) {
            return Error(i, StrCat("variable '", k_.variables[src.id].name, "' is not in ", ir::StateSpaceName(sp),
                                         " memory"));
          }
          return absl::OkStatus();
        }
        return ExpectValue(i, 0, t, false);
      }
      case OpRule::kLoad:
      case OpRule::kStore: {
        bool load = info.rule == OpRule::kLoad;
        int vec = inst.mods.vec;
        ir::StateSpace sp = inst.mods.space;
        if (!load && sp == ir::StateSpace::kParam) return Error(i, "params are read-only");
        if (!load && sp == ir::StateSpace::kConst) return Error(i, "const memory is read-only");
        if (inst.mods.nc && sp != ir::StateSpace::kGlobal) return Error(i, ".nc applies to ld.global only");
        ir::CacheOp c = inst.mods.cache;
        if (c != ir::CacheOp::kNone) {
          bool ok = load ? (c == ir::CacheOp::kCa || c == ir::CacheOp::kCg || c == ir::CacheOp::kCs ||
                            c == ir::CacheOp::kLu || c == ir::CacheOp::kCv)
                         : (c == ir::CacheOp::kWb || c == ir::CacheOp::kCg || c == ir::CacheOp::kCs ||
                            c == ir::CacheOp::kWt);
          if (!ok) return Error(i, StrCat("cache operator .", ir::CacheOpName(c), " does not apply to ", info.mnemonic));
          if (inst.mods.nc && c != ir::CacheOp::kCa && c != ir::CacheOp::kCg && c != ir::CacheOp::kCs) {
            return Error(i, StrCat("cache operator .", ir::CacheOpName(c), " does not apply to ld.global.nc"));
          }
        }
        if (vec == 4 && ir::TypeBits(t) == 64 && sp != ir::StateSpace::kGlobal && sp != ir::StateSpace::kGeneric) {
          return Error(i, StrCat("256-bit ", info.mnemonic, ".v4 of 64-bit values works on global (or generic) "
                                 "addresses only, not ", ir::StateSpaceName(sp)));
        }
        if (absl::Status s = CheckAddress(i, 0, sp); !s.ok()) return s;
        if (!load && vec > 1 && ir::IsBits(t)) {
          // ptxas refuses some bit-typed vectors that mix an integer immediate with
          // float values ("Vector with elements of different types"); which
          // mixes it takes depends on element order, so all are refused.
          bool int_imm = false, float_value = false;
          for (int v = 0; v < vec; ++v) {
            const Operand& op = inst.srcs[1 + v];
            if (op.is_imm()) {
              (ir::IsFloat(op.type) ? float_value : int_imm) = true;
            } else if (op.is_reg() && op.id < k_.regs.size()) {
              const ir::RegClass c = ir::RegClassOf(k_.regs[op.id].type);
              float_value |= c == ir::RegClass::kF32 || c == ir::RegClass::kF64;
            }
          }
          if (int_imm && float_value) {
            return Error(i, StrCat(info.mnemonic, ".v", vec, " mixes integer immediates with float values, which "
                                   "ptxas refuses (\"Vector with elements of different types\"): put the "
                                   "immediates in registers"));
          }
        }
        for (int v = 0; v < vec; ++v) {
          if (load) {
            if (absl::Status s = ExpectDst(i, v, t); !s.ok()) return s;
          } else if (absl::Status s = ExpectValue(i, 1 + v, t); !s.ok()) {
            return s;
          }
        }
        return absl::OkStatus();
      }
      case OpRule::kAtom:
      case OpRule::kRed: {
        bool atom = info.rule == OpRule::kAtom;
        ir::AtomOp op = inst.mods.atom;
        size_t srcs = op == ir::AtomOp::kCas ? 3 : 2;
        if (op == ir::AtomOp::kNone) {
          return Error(i, StrCat(info.mnemonic, " needs an operation (.add, .min, .max, .inc, .dec, .and, .or, .xor",
                                 atom ? ", .exch, .cas)" : ")"));
        }
        if (!atom && (op == ir::AtomOp::kCas || op == ir::AtomOp::kExch)) {
          return Error(i, StrCat("red has no .", ir::AtomOpName(op), " (use atom.", ir::AtomOpName(op), ")"));
        }
        if (!atom && (inst.mods.sem == ir::MemSem::kAcquire || inst.mods.sem == ir::MemSem::kAcqRel)) {
          return Error(i, StrCat("red has no .", ir::MemSemName(inst.mods.sem), " (only .relaxed and .release)"));
        }
        if (!ir::AtomOpAllowsType(op, t)) {
          return Error(i, StrCat(".", ir::AtomOpName(op), " does not apply to ", ir::TypeName(t)));
        }
        ir::StateSpace sp = inst.mods.space;
        if (sp != ir::StateSpace::kGlobal && sp != ir::StateSpace::kShared && sp != ir::StateSpace::kGeneric) {
          return Error(i, StrCat(info.mnemonic, " works on global, shared or generic addresses, not ",
                                       ir::StateSpaceName(sp)));
        }
        if (inst.mods.noftz != (op == ir::AtomOp::kAdd && ir::IsHalfFamily(t))) {
          return Error(i, ".noftz is required for (and only for) f16/bf16 add");
        }
        if (absl::Status s = CheckAddress(i, 0, sp); !s.ok()) return s;
        if (atom) {
          if (absl::Status s = ExpectDst(i, 0, t); !s.ok()) return s;
        }
        for (size_t s = 1; s < srcs; ++s) {
          if (absl::Status st = ExpectValue(i, s, t); !st.ok()) return st;
        }
        return absl::OkStatus();
      }
      case OpRule::kBranch:
      case OpRule::kLabelDef:
      case OpRule::kRawPtx:
      case OpRule::kLoopPragma:
        return absl::OkStatus();  // CheckShape checked all there is
      case OpRule::kBarrier:
        for (size_t s = 0; s < inst.srcs.size(); ++s) {
          if (absl::Status st = ExpectValue(i, s, ScalarType::kU32); !st.ok()) return st;
        }
        if (inst.srcs[0].is_imm() && inst.srcs[0].bits() > 15) return Error(i, "barrier ids are 0..15");
        if (inst.srcs.size() == 2 && inst.srcs[1].is_imm() && (inst.srcs[1].bits() == 0 || inst.srcs[1].bits() % 32 != 0)) {
          return Error(i, StrCat("the ", info.mnemonic, " thread count must be a positive multiple of 32"));
        }
        return absl::OkStatus();
      case OpRule::kShfl: {
        if (inst.mods.shfl == ir::ShflMode::kNone) return Error(i, "shfl.sync needs a mode (up, down, bfly, idx)");
        if (absl::Status s = ExpectDst(i, 0, t); !s.ok()) return s;
        if (inst.dsts.size() == 2) {
          if (absl::Status s = ExpectDst(i, 1, ScalarType::kPred); !s.ok()) return s;
        }
        if (absl::Status s = ExpectValue(i, 0, t); !s.ok()) return s;
        for (size_t s = 1; s < 4; ++s) {
          if (absl::Status st = ExpectValue(i, s, ScalarType::kU32); !st.ok()) return st;
        }
        return absl::OkStatus();
      }
      case OpRule::kVote: {
        ir::VoteMode v = inst.mods.vote;
        if (v == ir::VoteMode::kNone) return Error(i, "vote.sync needs a mode (all, any, uni, ballot)");
        if ((v == ir::VoteMode::kBallot) != (t == ScalarType::kB32)) {
          return Error(i, "vote.sync.ballot is .b32; all, any and uni are .pred");
        }
        return CheckSignature(i, groups);
      }
      case OpRule::kMembar:
        if (inst.mods.scope == ir::Scope::kNone) return Error(i, "membar needs a level (cta, gl, sys)");
        return absl::OkStatus();
      case OpRule::kFence:
        if (inst.mods.scope == ir::Scope::kNone) return Error(i, "fence needs a scope (cta, gpu, sys)");
        return absl::OkStatus();
      case OpRule::kCpAsync: {
        const ir::CacheOp c = inst.mods.cache;
        if (c == ir::CacheOp::kNone) return Error(i, "cp.async needs a cache operator (.ca or .cg)");
        if (c != ir::CacheOp::kCa && c != ir::CacheOp::kCg) {
          return Error(i, StrCat("cache operator .", ir::CacheOpName(c), " does not apply to cp.async (only .ca and .cg)"));
        }
        if (absl::Status s = CheckSignature(i, groups); !s.ok()) return s;
        const uint64_t cp_size = inst.srcs[2].bits();  // an immediate (the signature)
        if (cp_size != 4 && cp_size != 8 && cp_size != 16) {
          return Error(i, StrCat("cp-size ", cp_size, " is not 4, 8 or 16"));
        }
        if (c == ir::CacheOp::kCg && cp_size != 16) {
          return Error(i, StrCat("cp.async.cg copies 16 bytes, not ", cp_size, " (.ca copies 4, 8 or 16)"));
        }
        if (inst.srcs.size() == 4 && inst.srcs[3].is_imm() && inst.srcs[3].bits() > cp_size) {
          return Error(i, StrCat("src-size ", inst.srcs[3].bits(), " is larger than the cp-size ", cp_size));
        }
        return absl::OkStatus();
      }
      case OpRule::kCvtPack: {
        const std::string name = StrCat("cvt.", ir::TypeName(t));
        if (inst.mods.type2 != ScalarType::kF32) {
          return Error(i, StrCat(name, " packs two f32 values: the second type must be f32, not ",
                                 inst.mods.type2 == ScalarType::kNone ? "none" : ir::TypeName(inst.mods.type2)));
        }
        if (inst.mods.rounding != ir::Rounding::kRn) return Error(i, StrCat(name, ".f32 needs .rn"));
        return CheckSignature(i, groups);
      }
      case OpRule::kMatrix:
        if (inst.mods.space != ir::StateSpace::kShared) {
          return Error(i, StrCat(info.mnemonic, " works on shared memory only (.shared), not ",
                                 inst.mods.space == ir::StateSpace::kGeneric
                                     ? std::string_view("generic addresses")
                                     : ir::StateSpaceName(inst.mods.space)));
        }
        if (absl::Status s = CheckAddress(i, 0, ir::StateSpace::kShared); !s.ok()) return s;
        return CheckSignature(i, groups);
      case OpRule::kRedux: {
        const ir::AtomOp op = inst.mods.atom;
        const bool arith = op == ir::AtomOp::kAdd || op == ir::AtomOp::kMin || op == ir::AtomOp::kMax;
        const bool bits = op == ir::AtomOp::kAnd || op == ir::AtomOp::kOr || op == ir::AtomOp::kXor;
        if (!arith && !bits) {
          return Error(i, StrCat("redux.sync needs an operation (.add, .min, .max on u32/s32; .and, .or, .xor on b32)",
                                 op == ir::AtomOp::kNone ? "" : StrCat(", not .", ir::AtomOpName(op))));
        }
        if (arith && t == ScalarType::kB32) {
          return Error(i, StrCat("redux.sync.", ir::AtomOpName(op), " applies to u32 and s32, not b32"));
        }
        if (bits && t != ScalarType::kB32) {
          return Error(i, StrCat("redux.sync.", ir::AtomOpName(op), " applies to b32 only, not ", ir::TypeName(t)));
        }
        return CheckSignature(i, groups);
      }
    }
    return absl::OkStatus();
  }

 private:
  [[gnu::cold]] absl::Status KernelError(std::string_view msg) const { return verify_internal::KernelError(k_, msg); }

  [[gnu::cold]] absl::Status Error(size_t index, std::string_view msg) const {
    return InstructionError(k_, index, msg);
  }

  std::string RegDesc(ir::Reg r) const {
    return StrCat("%", r.id, " (", ir::TypeName(k_.type_of(r)), ")");
  }

  std::string OperandDesc(const Operand& op) const {
    switch (op.kind) {
      case OperandKind::kReg: return RegDesc(op.reg());
      case OperandKind::kImm: return StrCat("an immediate (", ir::TypeName(op.type), ")");
      case OperandKind::kSpecial: return StrCat(ir::SpecialRegName(static_cast<ir::SpecialReg>(op.id)));
      case OperandKind::kSymbol: return "a variable address";
      case OperandKind::kLabel: return "a label";
      case OperandKind::kAddress: return "an address";
      case OperandKind::kNone: return "empty";
    }
    return "?";
  }

  const ir::Kernel& k_;
  const ReferenceLimits& limits_;  // ReferencesFine's
};

}  // namespace

absl::Status InstructionChecker::Check(size_t i) const { return Checker(k_, limits_).CheckInstruction(i); }

absl::Status InstructionChecker::CheckStructure(size_t i, Groups& groups) const {
  return Checker(k_, limits_).CheckStructure(i, groups);
}

}  // namespace ptxforge::ir::verify_internal
