// Exact algebraic identities on integer, bit and predicate instructions.
#include "passes/identities.h"

#include <optional>
#include <vector>

#include "ir/semantics.h"
#include "passes/values.h"

namespace ptxforge::passes {
namespace {

using ir::Opcode;
using ir::Operand;
using ir::ScalarType;

bool IsImm(const Operand& op, int bits, uint64_t v) {
  return op.is_imm() && ir::sem::Truncate(op.bits(), bits) == ir::sem::Truncate(v, bits);
}

// Which register each value this run turned into a copy of another value
// stands for (x*1 and x/1 are x), so that a later x*1 - x is seen as x - x
// before copy propagation has renamed anything. Only values (defined once,
// unconditionally: passes/values.h) are followed: their definition dominates
// every use, so the two hold the same bits wherever both are read.
class Copies {
 public:
  Copies(const Values& values, size_t nregs) : values_(values), renaming_(nregs) {}
  void Record(ir::Reg dst, const Operand& src) {
    if (src.is_reg() && values_.IsValue(dst) && values_.IsValue(src.reg())) renaming_.Link(dst, src.reg());
  }
  bool Same(const Operand& a, const Operand& b) {
    return a.is_reg() && b.is_reg() && renaming_.Find(a.id) == renaming_.Find(b.id);
  }

 private:
  const Values& values_;
  Renaming renaming_;
};

// What the instruction reduces to: one of its operands or a zero; nullopt if
// no identity applies.
std::optional<Operand> Reduce(const ir::Kernel& kernel, const ir::Instruction& inst, Copies& copies) {
  const ir::Modifiers& m = inst.mods;
  const ScalarType t = m.type;
  const bool pred = t == ScalarType::kPred;
  if (!pred && !ir::IsInteger(t) && !ir::IsBits(t)) return std::nullopt;
  const int w = pred ? 1 : ir::TypeBits(t);
  if (!pred && w < 16) return std::nullopt;
  const auto& s = inst.srcs;
  auto SameReg = [&](const Operand& a, const Operand& b) { return copies.Same(a, b); };
  auto zero = [&] { return Operand::Imm(kernel.type_of(inst.dsts[0]), 0); };
  auto is0 = [&](size_t k) { return IsImm(s[k], w, 0); };
  auto is1 = [&](size_t k) { return IsImm(s[k], w, 1); };
  auto is_ones = [&](size_t k) { return IsImm(s[k], w, ~uint64_t{0}); };
  switch (inst.op) {
    case Opcode::kAdd:
      if (m.rounding != ir::Rounding::kNone) return std::nullopt;
      if (is0(1)) return s[0];
      if (is0(0)) return s[1];
      return std::nullopt;
    case Opcode::kSub:
      if (m.rounding != ir::Rounding::kNone) return std::nullopt;
      if (is0(1)) return s[0];
      if (SameReg(s[0], s[1])) return zero();
      return std::nullopt;
    case Opcode::kMul:
      if (m.sat || m.rounding != ir::Rounding::kNone) return std::nullopt;
      if (is0(0) || is0(1)) return zero();
      if (m.mode == ir::Mode::kLo) {
        if (is1(1)) return s[0];
        if (is1(0)) return s[1];
      }
      return std::nullopt;
    case Opcode::kMad:
      if (m.sat || m.mode == ir::Mode::kWide) return std::nullopt;  // c is wider than the product's operands
      if ((is0(0) || is0(1)) && !s[2].is_imm()) return s[2];
      return std::nullopt;
    case Opcode::kDiv:
      if (is1(1)) return s[0];
      return std::nullopt;
    case Opcode::kRem:
      if (is1(1)) return zero();
      return std::nullopt;
    case Opcode::kShl:
    case Opcode::kShr:
      if (IsImm(s[1], 32, 0)) return s[0];
      return std::nullopt;
    case Opcode::kAnd:
      if (SameReg(s[0], s[1])) return s[0];
      if (pred) return std::nullopt;
      if (is0(0) || is0(1)) return zero();
      if (is_ones(1)) return s[0];
      if (is_ones(0)) return s[1];
      return std::nullopt;
    case Opcode::kOr:
      if (SameReg(s[0], s[1])) return s[0];
      if (pred) return std::nullopt;
      if (is0(1)) return s[0];
      if (is0(0)) return s[1];
      return std::nullopt;
    case Opcode::kXor:
      if (SameReg(s[0], s[1])) return pred ? std::nullopt : std::optional<Operand>(zero());
      if (pred) return std::nullopt;
      if (is0(1)) return s[0];
      if (is0(0)) return s[1];
      return std::nullopt;
    case Opcode::kMin:
    case Opcode::kMax:
      if (SameReg(s[0], s[1])) return s[0];
      return std::nullopt;
    case Opcode::kSelp:
      if (SameReg(s[0], s[1])) return s[0];
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

size_t Simplify(ir::Kernel& kernel, const Values& values) {
  Copies copies(values, kernel.regs.size());
  size_t changed = 0;
  for (ir::Instruction& inst : kernel.body) {
    const ir::OpInfo& info = inst.info();
    if (!info.has(ir::kPure) || info.has(ir::kReadsMemory) || info.has(ir::kConvergent) || info.has(ir::kOpaque) ||
        info.has(ir::kPseudo) || inst.dsts.size() != 1) {
      continue;
    }
    std::optional<Operand> r = Reduce(kernel, inst, copies);
    if (!r) continue;
    // A register operand must have the destination's type for the mov to
    // say the same thing (mov.T d, x with d and x of type T).
    if (r->is_reg() && kernel.type_of(r->reg()) != kernel.type_of(inst.dsts[0])) continue;
    if (r->is_imm()) {
      const ScalarType dt = kernel.type_of(inst.dsts[0]);
      *r = Operand::Imm(dt, dt == ScalarType::kPred ? r->bits() & 1 : ir::sem::Truncate(r->bits(), ir::TypeBits(dt)));
    }
    copies.Record(inst.dsts[0], *r);
    MakeMove(kernel, inst, *r);
    ++changed;
  }
  return changed;
}

}  // namespace

size_t SimplifyIdentities(ir::Kernel& kernel) { return Simplify(kernel, Values(kernel)); }

// Rewrites instructions in place (MakeMove keeps the definitions and the
// guard): the shared analyses stay true.
size_t SimplifyIdentities(ir::Kernel& kernel, Analyses& analyses) {
  const size_t changed = Simplify(kernel, analyses.values());
  if (changed != 0) analyses.NoteOpcode(Opcode::kMov);
  return changed;
}

}  // namespace ptxforge::passes
