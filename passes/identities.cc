// Exact algebraic identities on integer, bit and predicate instructions.
#include "passes/identities.h"

#include <optional>

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

bool SameReg(const Operand& a, const Operand& b) { return a.is_reg() && b.is_reg() && a.id == b.id; }

// What the instruction reduces to: one of its operands or a zero; nullopt if
// no identity applies.
std::optional<Operand> Reduce(const ir::Kernel& kernel, const ir::Instruction& inst) {
  const ir::Modifiers& m = inst.mods;
  const ScalarType t = m.type;
  const bool pred = t == ScalarType::kPred;
  if (!pred && !ir::IsInteger(t) && !ir::IsBits(t)) return std::nullopt;
  const int w = pred ? 1 : ir::TypeBits(t);
  if (!pred && w < 16) return std::nullopt;
  const auto& s = inst.srcs;
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

}  // namespace

size_t SimplifyIdentities(ir::Kernel& kernel) {
  size_t changed = 0;
  for (ir::Instruction& inst : kernel.body) {
    const ir::OpInfo& info = inst.info();
    if (!info.has(ir::kPure) || info.has(ir::kReadsMemory) || info.has(ir::kConvergent) || info.has(ir::kOpaque) ||
        info.has(ir::kPseudo) || inst.dsts.size() != 1) {
      continue;
    }
    std::optional<Operand> r = Reduce(kernel, inst);
    if (!r) continue;
    // A register operand must have the destination's type for the mov to
    // say the same thing (mov.T d, x with d and x of type T).
    if (r->is_reg() && kernel.type_of(r->reg()) != kernel.type_of(inst.dsts[0])) continue;
    if (r->is_imm()) {
      const ScalarType dt = kernel.type_of(inst.dsts[0]);
      *r = Operand::Imm(dt, dt == ScalarType::kPred ? r->bits() & 1 : ir::sem::Truncate(r->bits(), ir::TypeBits(dt)));
    }
    MakeMove(kernel, inst, *r);
    ++changed;
  }
  return changed;
}

// Rewrites instructions in place (MakeMove keeps the definitions and the
// guard): the shared analyses stay true.
size_t SimplifyIdentities(ir::Kernel& kernel, Analyses&) { return SimplifyIdentities(kernel); }

}  // namespace ptxforge::passes
