// Exact algebraic identities on integer, bit and predicate instructions.
#include "passes/identities.h"

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "ir/semantics.h"
#include "passes/values.h"

namespace ptxforge::passes {
namespace {

using ir::Opcode;
using ir::Operand;
using ir::ScalarType;

bool Equal(std::optional<uint64_t> bits, int width, uint64_t v) {
  return bits && ir::sem::Truncate(*bits, width) == ir::sem::Truncate(v, width);
}

// Which register each value this run turned into a copy of another value
// stands for (x*1 and x/1 are x), so that a later x*1 - x is seen as x - x
// before copy propagation has renamed anything; and which values this run
// made constants (x - x is 0), so that a later use of one is seen as that
// immediate: (x - x) * 3 is 0 too. Constant folding runs before this pass
// and takes every constant the builder made; the ones made here would
// otherwise wait for ptxas. Only values (defined once, unconditionally:
// passes/values.h) are followed: their definition dominates every use, so
// the two hold the same bits wherever both are read.
class Copies {
 public:
  Copies(const Values& values, size_t nregs) : values_(values), renaming_(nregs) {}
  void Record(ir::Reg dst, const Operand& src) {
    if (!values_.IsValue(dst)) return;
    if (src.is_imm()) {
      constants_.emplace(dst.id, src.bits());
    } else if (src.is_reg() && values_.IsValue(src.reg())) {
      renaming_.Link(dst, src.reg());
    }
  }
  bool Same(const Operand& a, const Operand& b) {
    return a.is_reg() && b.is_reg() && renaming_.Find(a.id) == renaming_.Find(b.id);
  }
  // The bits of an immediate operand or of a register this run made a
  // constant (directly or through copies); nullopt otherwise.
  std::optional<uint64_t> Bits(const Operand& op) {
    if (op.is_imm()) return op.bits();
    if (constants_.empty() || !op.is_reg()) return std::nullopt;
    auto it = constants_.find(renaming_.Find(op.id));
    if (it == constants_.end()) return std::nullopt;
    return it->second;
  }

 private:
  const Values& values_;
  Renaming renaming_;
  absl::flat_hash_map<uint32_t, uint64_t> constants_;  // by the root of a register's copies
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
  // An operand a constant made here stands for its immediate: the mov
  // replacing an instruction names the immediate, not the register.
  auto known = [&](size_t k) -> Operand {
    if (s[k].is_imm()) return s[k];
    std::optional<uint64_t> bits = copies.Bits(s[k]);
    return bits ? Operand::Imm(kernel.type_of(s[k].reg()), *bits) : s[k];
  };
  auto is0 = [&](size_t k) { return Equal(copies.Bits(s[k]), w, 0); };
  auto is1 = [&](size_t k) { return Equal(copies.Bits(s[k]), w, 1); };
  auto is_ones = [&](size_t k) { return Equal(copies.Bits(s[k]), w, ~uint64_t{0}); };
  switch (inst.op) {
    case Opcode::kAdd:
      if (m.rounding != ir::Rounding::kNone) return std::nullopt;
      if (is0(1)) return known(0);
      if (is0(0)) return known(1);
      return std::nullopt;
    case Opcode::kSub:
      if (m.rounding != ir::Rounding::kNone) return std::nullopt;
      if (is0(1)) return known(0);
      if (SameReg(s[0], s[1])) return zero();
      return std::nullopt;
    case Opcode::kMul:
      if (m.sat || m.rounding != ir::Rounding::kNone) return std::nullopt;
      if (is0(0) || is0(1)) return zero();
      if (m.mode == ir::Mode::kLo) {
        if (is1(1)) return known(0);
        if (is1(0)) return known(1);
      }
      return std::nullopt;
    case Opcode::kMad:
      if (m.sat || m.mode == ir::Mode::kWide) return std::nullopt;  // c is wider than the product's operands
      if (is0(0) || is0(1)) return known(2);
      return std::nullopt;
    case Opcode::kDiv:
      if (is1(1)) return known(0);
      return std::nullopt;
    case Opcode::kRem:
      if (is1(1)) return zero();
      return std::nullopt;
    case Opcode::kShl:
    case Opcode::kShr:
      if (Equal(copies.Bits(s[1]), 32, 0)) return known(0);
      return std::nullopt;
    case Opcode::kAnd:
      if (SameReg(s[0], s[1])) return known(0);
      if (pred) return std::nullopt;
      if (is0(0) || is0(1)) return zero();
      if (is_ones(1)) return known(0);
      if (is_ones(0)) return known(1);
      return std::nullopt;
    case Opcode::kOr:
      if (SameReg(s[0], s[1])) return known(0);
      if (pred) return std::nullopt;
      if (is0(1)) return known(0);
      if (is0(0)) return known(1);
      return std::nullopt;
    case Opcode::kXor:
      if (SameReg(s[0], s[1])) return pred ? std::nullopt : std::optional<Operand>(zero());
      if (pred) return std::nullopt;
      if (is0(1)) return known(0);
      if (is0(0)) return known(1);
      return std::nullopt;
    case Opcode::kMin:
    case Opcode::kMax:
      if (SameReg(s[0], s[1])) return known(0);
      return std::nullopt;
    case Opcode::kSelp:
      if (SameReg(s[0], s[1])) return known(0);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// mad.lo/.hi a, b, 0 is mul.lo/.hi a, b (integer, without .sat; .wide's
// addend is wider than its product's operands and is left alone). The zero
// is an immediate or a constant this run made. Returns whether it rewrote.
bool MadOfZero(ir::Instruction& inst, Copies& copies) {
  const ir::Modifiers& m = inst.mods;
  if (inst.op != Opcode::kMad || m.sat || (m.mode != ir::Mode::kLo && m.mode != ir::Mode::kHi)) return false;
  if (!ir::IsInteger(m.type) && !ir::IsBits(m.type)) return false;
  if (!Equal(copies.Bits(inst.srcs[2]), ir::TypeBits(m.type), 0)) return false;
  inst.op = Opcode::kMul;
  inst.srcs.pop_back();
  return true;
}

// Whether the last run rewrote a mad as a mul (its caller notes the opcode).
struct Counts {
  size_t changed = 0;
  bool made_mul = false;
};

Counts Simplify(ir::Kernel& kernel, const Values& values) {
  Copies copies(values, kernel.regs.size());
  Counts counts;
  size_t& changed = counts.changed;
  for (ir::Instruction& inst : kernel.body) {
    const ir::OpInfo& info = inst.info();
    if (!info.has(ir::kPure) || info.has(ir::kReadsMemory) || info.has(ir::kConvergent) || info.has(ir::kOpaque) ||
        info.has(ir::kPseudo) || inst.dsts.size() != 1) {
      continue;
    }
    std::optional<Operand> r = Reduce(kernel, inst, copies);
    if (!r) {
      if (MadOfZero(inst, copies)) {
        counts.made_mul = true;
        ++changed;
      }
      continue;
    }
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
  return counts;
}

}  // namespace

size_t SimplifyIdentities(ir::Kernel& kernel) { return Simplify(kernel, Values(kernel)).changed; }

// Rewrites instructions in place (MakeMove keeps the definitions and the
// guard): the shared analyses stay true.
size_t SimplifyIdentities(ir::Kernel& kernel, Analyses& analyses) {
  const Counts counts = Simplify(kernel, analyses.values());
  if (counts.changed != 0) analyses.NoteOpcode(Opcode::kMov);
  if (counts.made_mul) analyses.NoteOpcode(Opcode::kMul);
  return counts.changed;
}

}  // namespace ptxforge::passes
