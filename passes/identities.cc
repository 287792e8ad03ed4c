// Exact algebraic identities on integer, bit and predicate instructions.
#include "passes/identities.h"

#include <array>
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

bool IsImm(const Operand& op, int bits, uint64_t v) {
  return op.is_imm() && ir::sem::Truncate(op.bits(), bits) == ir::sem::Truncate(v, bits);
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
  Copies(const Values& values, size_t nregs) : values_(values), renaming_(nregs), nregs_(nregs) {}
  void Record(ir::Reg dst, const Operand& src) {
    if (!values_.IsValue(dst)) return;
    if (src.is_imm()) {
      if (is_constant_.empty()) is_constant_.assign((nregs_ + 63) / 64, 0);
      is_constant_[dst.id / 64] |= uint64_t{1} << (dst.id % 64);
      constants_.emplace(dst.id, src.bits());
    } else if (src.is_reg() && values_.IsValue(src.reg())) {
      renaming_.Link(dst, src.reg());
    }
  }
  bool Same(const Operand& a, const Operand& b) {
    return a.is_reg() && b.is_reg() && renaming_.Find(a.id) == renaming_.Find(b.id);
  }
  bool AnyConstant() const { return !is_constant_.empty(); }
  // The bits of a register this run made a constant (directly or through
  // copies); nullopt for anything else.
  std::optional<uint64_t> Bits(const Operand& op) {
    if (is_constant_.empty() || !op.is_reg()) return std::nullopt;
    const uint32_t root = renaming_.Find(op.id);
    if ((is_constant_[root / 64] >> (root % 64) & 1) == 0) return std::nullopt;
    return constants_.find(root)->second;
  }

 private:
  const Values& values_;
  Renaming renaming_;
  size_t nregs_;
  // The constants by the root of a register's copies, and a bit per register
  // saying which roots have one: most operands are not constants, and the
  // bit answers them without a hash lookup (at the first constant a kernel
  // made, looking up every operand made the pass 2-3x slower).
  absl::flat_hash_map<uint32_t, uint64_t> constants_;
  std::vector<uint64_t> is_constant_;  // made at the first constant
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
  // Each source as an immediate where it is one or a constant this run made
  // (then the mov replacing an instruction names the immediate, not the
  // register), else the source itself. Until the run makes a constant the
  // sources are read as they are (no copy, no lookup).
  std::array<Operand, 3> made;
  const Operand* k = s.data();
  if (copies.AnyConstant()) {
    for (size_t i = 0; i < s.size() && i < made.size(); ++i) {
      std::optional<uint64_t> bits = s[i].is_imm() ? std::nullopt : copies.Bits(s[i]);
      made[i] = bits ? Operand::Imm(kernel.type_of(s[i].reg()), *bits) : s[i];
    }
    k = made.data();
  }
  auto SameReg = [&](const Operand& a, const Operand& b) { return copies.Same(a, b); };
  auto zero = [&] { return Operand::Imm(kernel.type_of(inst.dsts[0]), 0); };
  auto known = [&](size_t i) { return k[i]; };
  auto is0 = [&](size_t i) { return IsImm(k[i], w, 0); };
  auto is1 = [&](size_t i) { return IsImm(k[i], w, 1); };
  auto is_ones = [&](size_t i) { return IsImm(k[i], w, ~uint64_t{0}); };
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
      if (IsImm(k[1], 32, 0)) return known(0);
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
  const Operand& c = inst.srcs[2];
  const std::optional<uint64_t> bits = c.is_imm() ? std::optional<uint64_t>(c.bits()) : copies.Bits(c);
  if (!bits || ir::sem::Truncate(*bits, ir::TypeBits(m.type)) != 0) return false;
  inst.op = Opcode::kMul;
  inst.srcs.pop_back();
  return true;
}

// Whether the last run rewrote a mad as a mul (its caller notes the opcode).
struct Counts {
  size_t changed = 0;
  BodySummary made;  // what the rewritten instructions are now
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
        counts.made.Note(kernel, inst);
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
    counts.made.Note(kernel, inst);
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
  analyses.NoteMade(counts.made);
  return counts.changed;
}

}  // namespace ptxforge::passes
