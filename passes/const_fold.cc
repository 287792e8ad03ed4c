// Constant folding and propagation with PTX's integer semantics.
#include "passes/const_fold.h"

#include <bit>
#include <cmath>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "ir/semantics.h"
#include "passes/values.h"

namespace ptxforge::passes {
namespace {

using ir::Opcode;
using ir::ScalarType;
namespace sem = ir::sem;

template <typename T>
uint64_t Bits(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else {
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
  }
}

// Calls f.template operator()<T>() with T the C++ type of integer type t
// (bit types as unsigned); nullopt for other types.
template <typename F>
std::optional<uint64_t> WithIntType(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::kU16:
    case ScalarType::kB16: return f.template operator()<uint16_t>();
    case ScalarType::kS16: return f.template operator()<int16_t>();
    case ScalarType::kU32:
    case ScalarType::kB32: return f.template operator()<uint32_t>();
    case ScalarType::kS32: return f.template operator()<int32_t>();
    case ScalarType::kU64:
    case ScalarType::kB64: return f.template operator()<uint64_t>();
    case ScalarType::kS64: return f.template operator()<int64_t>();
    default: return std::nullopt;
  }
}

// Predicate logic (and, or, xor, not on .pred).
std::optional<uint64_t> EvaluatePred(const ir::Instruction& inst, std::span<const uint64_t> v) {
  const bool a = v[0] & 1;
  switch (inst.op) {
    case Opcode::kAnd: return Bits(a && (v[1] & 1));
    case Opcode::kOr: return Bits(a || (v[1] & 1));
    case Opcode::kXor: return Bits(a != static_cast<bool>(v[1] & 1));
    case Opcode::kNot: return Bits(!a);
    default: return std::nullopt;
  }
}

template <typename F>
std::optional<uint64_t> FloatArith(Opcode op, F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::nullopt;
  F r;
  switch (op) {
    case Opcode::kAdd: r = a + b; break;
    case Opcode::kSub: r = a - b; break;
    case Opcode::kMul: r = a * b; break;
    default: return std::nullopt;
  }
  if (std::isnan(r)) return std::nullopt;
  if constexpr (sizeof(F) == 4) {
    return std::bit_cast<uint32_t>(r);
  } else {
    return std::bit_cast<uint64_t>(r);
  }
}

// f32/f64 add, sub, mul and setp where the result is bit-exact.
std::optional<uint64_t> EvaluateFloat(const ir::Instruction& inst, std::span<const uint64_t> v) {
  const ir::Modifiers& m = inst.mods;
  if (m.ftz || m.sat) return std::nullopt;
  const bool f32 = m.type == ScalarType::kF32;
  if (!f32 && m.type != ScalarType::kF64) return std::nullopt;
  auto f = [&](int k) { return std::bit_cast<float>(static_cast<uint32_t>(v[k])); };
  auto d = [&](int k) { return std::bit_cast<double>(v[k]); };
  if (inst.op == Opcode::kSetp) {
    bool r = f32 ? sem::Compare<float>(m.cmp, f(0), f(1)) : sem::Compare<double>(m.cmp, d(0), d(1));
    return Bits(sem::Combine(m.bool_op, r, v.size() > 2 && (v[2] & 1)));
  }
  if (m.rounding != ir::Rounding::kNone && m.rounding != ir::Rounding::kRn) return std::nullopt;
  if (m.mode != ir::Mode::kNone) return std::nullopt;
  return f32 ? FloatArith<float>(inst.op, f(0), f(1)) : FloatArith<double>(inst.op, d(0), d(1));
}

std::optional<uint64_t> EvaluateInt(const ir::Instruction& inst, std::span<const uint64_t> v) {
  const ir::Modifiers& m = inst.mods;
  const Opcode op = inst.op;
  if (op == Opcode::kCvt) {
    const int wt = ir::TypeBits(m.type), wf = ir::TypeBits(m.type2);
    const bool ints = (ir::IsInteger(m.type) || ir::IsBits(m.type)) && (ir::IsInteger(m.type2) || ir::IsBits(m.type2));
    if (!ints || wt < 16 || wf < 16 || m.rounding != ir::Rounding::kNone || m.ftz) return std::nullopt;
    return sem::ConvertInt(v[0], m.type2, m.type, m.sat);
  }
  return WithIntType(m.type, [&]<typename T>() -> std::optional<uint64_t> {
    auto a = [&] { return static_cast<T>(v[0]); };
    auto b = [&] { return static_cast<T>(v[1]); };
    switch (op) {
      case Opcode::kAdd:
      case Opcode::kSub:
        if (m.rounding != ir::Rounding::kNone) return std::nullopt;
        if (m.sat) {
          if constexpr (!std::is_same_v<T, int32_t>) {
            return std::nullopt;
          } else {
            int64_t x = a(), y = b();
            return Bits(sem::SaturateS32(op == Opcode::kAdd ? x + y : x - y));
          }
        }
        return Bits(op == Opcode::kAdd ? sem::Add<T>(a(), b()) : sem::Sub<T>(a(), b()));
      case Opcode::kMul:
      case Opcode::kMad: {
        if (m.sat || m.rounding != ir::Rounding::kNone) return std::nullopt;
        const bool mad = op == Opcode::kMad;
        switch (m.mode) {
          case ir::Mode::kLo: return Bits(mad ? sem::Add<T>(sem::MulLo<T>(a(), b()), static_cast<T>(v[2])) : sem::MulLo<T>(a(), b()));
          case ir::Mode::kHi: return Bits(mad ? sem::Add<T>(sem::MulHi<T>(a(), b()), static_cast<T>(v[2])) : sem::MulHi<T>(a(), b()));
          case ir::Mode::kWide:
            if constexpr (sizeof(T) == 8) {
              return std::nullopt;
            } else {
              using W = sem::Wide<T>;
              W p = sem::MulWide<T>(a(), b());
              return Bits(mad ? sem::Add<W>(p, static_cast<W>(v[2])) : p);
            }
          default: return std::nullopt;
        }
      }
      case Opcode::kDiv: return Bits(sem::Div<T>(a(), b()));
      case Opcode::kRem: return Bits(sem::Rem<T>(a(), b()));
      case Opcode::kMin: return Bits(a() < b() ? a() : b());
      case Opcode::kMax: return Bits(a() > b() ? a() : b());
      case Opcode::kAbs: return Bits(sem::Abs<T>(a()));
      case Opcode::kNeg: return Bits(sem::Neg<T>(a()));
      case Opcode::kAnd: return Bits(static_cast<T>(a() & b()));
      case Opcode::kOr: return Bits(static_cast<T>(a() | b()));
      case Opcode::kXor: return Bits(static_cast<T>(a() ^ b()));
      case Opcode::kNot: return Bits(static_cast<T>(~a()));
      case Opcode::kCnot: return Bits(static_cast<T>(a() == 0 ? 1 : 0));
      case Opcode::kShl: return Bits(sem::Shl<T>(a(), static_cast<uint32_t>(v[1])));
      case Opcode::kShr: return Bits(sem::Shr<T>(a(), static_cast<uint32_t>(v[1])));
      case Opcode::kPopc: return Bits(sem::Popc<T>(a()));
      case Opcode::kClz: return Bits(sem::Clz<T>(a()));
      case Opcode::kBrev: return Bits(sem::Brev<T>(a()));
      case Opcode::kSetp:
        return Bits(sem::Combine(m.bool_op, sem::Compare<T>(m.cmp, a(), b()), v.size() > 2 && (v[2] & 1)));
      default: return std::nullopt;
    }
  });
}

// The type each source operand has, by the row's signature (kNone where the
// signature gives none), and whether it may be an immediate.
struct SourceSlot {
  ScalarType type = ScalarType::kNone;
  bool imm_ok = false;
};

absl::InlinedVector<SourceSlot, 4> SourceSlots(const ir::Instruction& inst) {
  absl::InlinedVector<SourceSlot, 4> slots(inst.srcs.size());
  const ir::Signature& sig = inst.info().sig;
  absl::InlinedVector<uint8_t, 8> sizes;
  if (sig.any || !ir::GroupSizes(inst, std::span(sig.srcs.data(), sig.nsrc), inst.srcs.size(), sizes)) return slots;
  for (size_t g = 0, s = 0; g < sizes.size(); ++g) {
    const ir::OperandSpec& spec = sig.srcs[g];
    for (uint8_t k = 0; k < sizes[g] && s < slots.size(); ++k, ++s) {
      slots[s].type = ir::OperandType(inst, spec);
      slots[s].imm_ok = spec.cls != ir::OperandClass::kReg;
    }
  }
  return slots;
}

// May the constant in a register of type `reg_type` stand as an immediate in
// a slot of type `slot`? (The verifier's rule for immediates, and no 8-bit,
// predicate or half immediates.)
bool ImmediateFits(ScalarType slot, ScalarType reg_type) {
  if (slot == ScalarType::kNone || slot == ScalarType::kPred || ir::IsHalfFamily(slot)) return false;
  if (ir::TypeBits(slot) < 16) return false;
  if (ir::IsFloat(slot) || ir::IsFloat(reg_type)) return slot == reg_type;
  return ir::TypesCompatible(slot, reg_type);
}

// Which instructions take propagated immediates: pure ones that neither read
// memory nor talk to other threads, checked by the signature rules below.
bool TakesImmediates(const ir::Instruction& inst) {
  const ir::OpInfo& info = inst.info();
  if (!info.has(ir::kPure) || info.has(ir::kPseudo) || info.has(ir::kOpaque) || info.has(ir::kConvergent) ||
      info.has(ir::kReadsMemory)) {
    return false;
  }
  switch (info.rule) {
    case ir::OpRule::kGeneric:
    case ir::OpRule::kMov:
    case ir::OpRule::kSetp:
    case ir::OpRule::kBitField:
      return true;
    default:
      return false;  // cvt, cvta: leave their operands as they are
  }
}

}  // namespace

std::optional<uint64_t> EvaluateConstant(const ir::Kernel& kernel, const ir::Instruction& inst,
                                         std::span<const uint64_t> sources) {
  if (inst.dsts.size() != 1 || sources.size() != inst.srcs.size() || sources.empty()) return std::nullopt;
  const ir::OpInfo& info = inst.info();
  if (!info.has(ir::kPure) || info.has(ir::kReadsMemory) || info.has(ir::kConvergent) || info.has(ir::kOpaque)) {
    return std::nullopt;
  }
  // Operand counts the opcode row expects (a malformed instruction is the verifier's business).
  const ScalarType t = inst.mods.type;
  std::optional<uint64_t> r;
  if (t == ScalarType::kPred) {
    r = EvaluatePred(inst, sources);
  } else if (ir::IsFloat(t) && inst.op != Opcode::kCvt) {
    r = EvaluateFloat(inst, sources);
  } else {
    r = EvaluateInt(inst, sources);
  }
  if (!r) return r;
  const ScalarType dt = kernel.type_of(inst.dsts[0]);
  return dt == ScalarType::kPred ? (*r & 1) : sem::Truncate(*r, ir::TypeBits(dt));
}

size_t FoldConstants(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return FoldConstants(kernel, analyses);
}

// Rewrites instructions in place (MakeMove keeps the definitions and the
// guard; no branch or label changes): the shared analyses stay true.
size_t FoldConstants(ir::Kernel& kernel, Analyses& analyses) {
  const Values& values = analyses.values();
  // Nothing folds without a constant to start from: a register a mov of an
  // immediate defines, or an instruction that reads immediates only. The
  // summary (read with the value table) rules both out without a read of
  // the body (at a million instructions a read streams 120 MB).
  const BodySummary& summary = analyses.summary();
  if (!summary.mov_imm_to_fixed && !summary.imm_sources) return 0;
  const size_t nregs = kernel.regs.size();
  // By register: whether it holds a known constant, and which. Made at the
  // first constant found (a kernel without any allocates nothing: at a
  // million registers they were 8 MB of fresh pages per run); `nk` is
  // their size, 0 or nregs.
  std::vector<bool> known;
  std::vector<uint64_t> value;
  size_t nk = 0;
  size_t changed = 0;
  BodySummary made;  // what the rewritten instructions are now
  absl::InlinedVector<uint64_t, 4> vals;
  for (ir::Instruction& inst : kernel.body) {
    if (!TakesImmediates(inst) && inst.op != Opcode::kCvt) continue;
    // The sources' constant bits, where known.
    vals.clear();
    bool all_known = !inst.srcs.empty();
    for (const ir::Operand& op : inst.srcs) {
      if (op.is_imm()) {
        vals.push_back(op.bits());
      } else if (op.is_reg() && op.id < nk && known[op.id]) {
        vals.push_back(value[op.id]);
      } else {
        vals.push_back(0);
        all_known = false;
      }
    }
    bool done = false;
    if (inst.op == Opcode::kSelp && inst.srcs.size() == 3 && inst.srcs[2].is_reg() && inst.srcs[2].id < nk &&
        known[inst.srcs[2].id]) {
      const ir::Operand chosen = inst.srcs[(vals[2] & 1) ? 0 : 1];
      MakeMove(kernel, inst, chosen);
      made.Note(kernel, inst);
      ++changed;
    } else if (all_known && inst.op != Opcode::kMov) {
      if (std::optional<uint64_t> r = EvaluateConstant(kernel, inst, vals)) {
        MakeMove(kernel, inst, ir::Operand::Imm(kernel.type_of(inst.dsts[0]), *r));
        made.Note(kernel, inst);
        ++changed;
        done = true;
      }
    }
    // Decoding the signature (SourceSlots) is most of this pass's cost per
    // instruction: only for an instruction that reads a known constant.
    bool reads_constant = false;
    for (const ir::Operand& op : inst.srcs) reads_constant |= op.is_reg() && op.id < nk && known[op.id];
    if (!done && reads_constant && TakesImmediates(inst)) {
      const absl::InlinedVector<SourceSlot, 4> slots = SourceSlots(inst);
      bool any = false;
      for (size_t s = 0; s < inst.srcs.size(); ++s) {
        ir::Operand& op = inst.srcs[s];
        if (!op.is_reg() || op.id >= nk || !known[op.id] || !slots[s].imm_ok) continue;
        const ScalarType rt = kernel.regs[op.id].type;
        if (!ImmediateFits(slots[s].type, rt)) continue;
        // bfe/bfi take immediate positions and lengths of 0..255 only (a
        // register's is masked to 8 bits at run time).
        if (inst.info().rule == ir::OpRule::kBitField && s + 2 >= inst.srcs.size() && value[op.id] > 255) continue;
        op = ir::Operand::Imm(slots[s].type, sem::Truncate(value[op.id], ir::TypeBits(slots[s].type)));
        any = true;
      }
      if (any) made.Note(kernel, inst);
      changed += any;
    }
    // What this instruction makes known.
    if (inst.op == Opcode::kMov && !inst.guarded() && inst.dsts.size() == 1 && inst.srcs.size() == 1 &&
        inst.srcs[0].is_imm() && values.IsValue(inst.dsts[0])) {
      const ScalarType dt = kernel.type_of(inst.dsts[0]);
      if (dt == ScalarType::kPred || (!ir::IsHalfFamily(dt) && ir::TypeBits(dt) >= 16)) {
        if (nk == 0) {
          nk = nregs;
          known.assign(nk, false);
          value.assign(nk, 0);
        }
        known[inst.dsts[0].id] = true;
        value[inst.dsts[0].id] = inst.srcs[0].bits();
      }
    }
  }
  analyses.NoteMade(made);
  return changed;
}

}  // namespace ptxforge::passes
