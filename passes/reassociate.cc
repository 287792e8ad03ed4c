// Integer add/sub chains read as sums over 2^width.
#include "passes/reassociate.h"

#include <array>
#include <cstdint>
#include <vector>

#include "ir/semantics.h"
#include "passes/values.h"

namespace ptxforge::passes {
namespace {

using ir::Instruction;
using ir::Opcode;
using ir::Operand;

constexpr int kMaxTerms = 4;      // terms a sum may have
constexpr int kMaxFollowed = 8;   // definitions one instruction follows (so also how deep)

// c + sum of coef * reg, modulo 2^width (`mask` is 2^width - 1). Terms are
// kept in the order they were added (one that cancels and comes back goes
// last), so the rewritten instruction reads its operands in an order that
// depends only on the IR.
struct Sum {
  struct Term {
    uint32_t reg;
    uint64_t coef;
  };
  uint64_t c = 0;
  std::array<Term, kMaxTerms> terms;  // the first n are set
  int n = 0;

  // Adds coef * reg; false when that would need a fifth term.
  bool Add(uint32_t reg, uint64_t coef, uint64_t mask) {
    for (int i = 0; i < n; ++i) {
      if (terms[i].reg != reg) continue;
      terms[i].coef = (terms[i].coef + coef) & mask;
      if (terms[i].coef == 0) {
        for (int j = i + 1; j < n; ++j) terms[j - 1] = terms[j];
        --n;
      }
      return true;
    }
    if (n == kMaxTerms) return false;
    terms[n++] = Term{reg, coef & mask};
    return true;
  }
  bool Has(uint32_t reg) const {
    for (int i = 0; i < n; ++i) {
      if (terms[i].reg == reg) return true;
    }
    return false;
  }
};

bool IntegerOfWidth(ir::ScalarType t, int w) { return ir::IsInteger(t) && ir::TypeBits(t) == w; }
bool IntegerOrBitsOfWidth(ir::ScalarType t, int w) {
  return (ir::IsInteger(t) || ir::IsBits(t)) && ir::TypeBits(t) == w;
}

// An add, sub or neg on `width`-bit integers that wraps (no .sat).
bool LinearArith(const Instruction& inst, int width) {
  if (inst.op != Opcode::kAdd && inst.op != Opcode::kSub && inst.op != Opcode::kNeg) return false;
  return !inst.mods.sat && inst.mods.rounding == ir::Rounding::kNone && IntegerOfWidth(inst.mods.type, width) &&
         inst.dsts.size() == 1 && inst.srcs.size() == (inst.op == Opcode::kNeg ? 1u : 2u);
}

class Expander {
 public:
  Expander(const ir::Kernel& kernel, const Values& values) : kernel_(kernel), values_(values) {}

  // The value defined at `at` has no sum of at most kMaxTerms terms within
  // the budget where it was followed (as an instruction of its own or
  // inside another's sum): later instructions read it as a term without
  // following it again. (Chains of adds of adds would otherwise be followed
  // to the budget from every instruction: on the synthetic kernels of
  // bench/ this pass cost 80 ns per instruction, against 7 for identities;
  // marking the instructions alone brought it to 14-28, marking what they
  // followed too cuts the definitions followed per instruction by 13-16%.)
  void TooBig(uint32_t at) {
    const ir::Instruction& inst = kernel_.body[at];
    if (too_big_.empty()) too_big_.assign(kernel_.regs.size(), false);
    too_big_[inst.dsts[0].id] = true;
  }

  // The sum the instruction at `at` computes, if it is a linear arithmetic
  // instruction and at least one of its operands' definitions was tried
  // (else false: its sum is its own operands).
  bool Root(uint32_t at, Sum& sum) {
    const Instruction& inst = kernel_.body[at];
    const int width = ir::TypeBits(inst.mods.type);
    if ((width != 16 && width != 32 && width != 64) || !LinearArith(inst, width)) return false;
    width_ = width;
    mask_ = ir::sem::Truncate(~uint64_t{0}, width);
    limit_ = at;
    for (const Operand& op : inst.srcs) {
      if (!op.is_reg() && !op.is_imm()) return false;
    }
    budget_ = kMaxFollowed;
    // Nothing followed: the sum is the instruction's own operands.
    if (Linear(inst, 1, sum)) return budget_ != kMaxFollowed;
    TooBig(at);
    return false;
  }

 private:
  // Whether r is a value defined (above the instruction) by an add, sub, neg
  // or same-width mov that reads only values and immediates.
  bool Followable(ir::Reg r) const {
    const uint32_t d = values_.Def(r);
    if (d == Values::kNotAValue || d >= limit_ || (!too_big_.empty() && too_big_[r.id])) return false;
    const Instruction& def = kernel_.body[d];
    if (!IntegerOrBitsOfWidth(kernel_.type_of(r), width_)) return false;
    if (def.op == Opcode::kMov) {
      if (def.srcs.size() != 1 || !IntegerOrBitsOfWidth(def.mods.type, width_)) return false;
      const Operand& s = def.srcs[0];
      return s.is_imm() || (s.is_reg() && IntegerOrBitsOfWidth(kernel_.type_of(s.reg()), width_) &&
                            values_.IsValue(s.reg()));
    }
    if (!LinearArith(def, width_)) return false;
    for (const Operand& s : def.srcs) {
      if (!s.is_imm() && !(s.is_reg() && values_.IsValue(s.reg()))) return false;
    }
    return true;
  }

  // Adds coef * (what `inst`, a linear instruction or a mov, computes).
  bool Linear(const Instruction& inst, uint64_t coef, Sum& sum) {
    const uint64_t minus = (0 - coef) & mask_;
    switch (inst.op) {
      case Opcode::kAdd:
        return Term(inst.srcs[0], coef, sum) && Term(inst.srcs[1], coef, sum);
      case Opcode::kSub:
        return Term(inst.srcs[0], coef, sum) && Term(inst.srcs[1], minus, sum);
      case Opcode::kNeg:
        return Term(inst.srcs[0], minus, sum);
      default:  // mov
        return Term(inst.srcs[0], coef, sum);
    }
  }

  // Adds coef * op, following op's definition where it may and the sum
  // stays small, else as a term of its own.
  bool Term(const Operand& op, uint64_t coef, Sum& sum) {
    if (op.is_imm()) {
      sum.c = (sum.c + coef * op.bits()) & mask_;
      return true;
    }
    const ir::Reg r = op.reg();
    if (budget_ > 0 && Followable(r)) {
      --budget_;
      const Sum before = sum;
      if (Linear(kernel_.body[values_.Def(r)], coef, sum)) return true;
      sum = before;
      TooBig(values_.Def(r));
    }
    return sum.Add(r.id, coef, mask_);
  }

  const ir::Kernel& kernel_;
  const Values& values_;
  int width_ = 32;
  uint64_t mask_ = 0;
  uint32_t limit_ = 0;
  int budget_ = 0;
  std::vector<bool> too_big_;  // by register; made at the first TooBig
};

// What the pass made, for the shared summary.
struct Made {
  size_t changed = 0;
  BodySummary summary;  // what the rewritten instructions are now
};

// Rewrites `inst` (whose sum is `sum`) as one instruction reading the terms,
// if that takes one and `inst` read something other than the terms.
bool Rewrite(const ir::Kernel& kernel, Instruction& inst, const Sum& sum, Made& made) {
  bool reads_other = sum.n == 0;
  for (const Operand& op : inst.srcs) reads_other = reads_other || (op.is_reg() && !sum.Has(op.id));
  if (!reads_other) return false;
  const ir::ScalarType t = inst.mods.type;
  const uint64_t minus_one = ir::sem::Truncate(~uint64_t{0}, ir::TypeBits(t));
  auto reg = [](const Sum::Term& term) { return Operand(ir::Reg{term.reg}); };
  auto set = [&](Opcode op, Operand a, Operand b) {
    inst.op = op;
    inst.srcs = {a, b};
  };
  if (sum.n == 0) {
    MakeMove(kernel, inst, Operand::Imm(kernel.type_of(inst.dsts[0]), sum.c));
  } else if (sum.n == 1 && sum.terms[0].coef == 1) {
    if (sum.c == 0) {
      MakeMove(kernel, inst, reg(sum.terms[0]));
    } else {
      set(Opcode::kAdd, reg(sum.terms[0]), Operand::Imm(t, sum.c));
    }
  } else if (sum.n == 1 && sum.terms[0].coef == minus_one) {
    set(Opcode::kSub, Operand::Imm(t, sum.c), reg(sum.terms[0]));
  } else if (sum.n == 2 && sum.c == 0 && sum.terms[0].coef == 1 && sum.terms[1].coef == 1) {
    set(Opcode::kAdd, reg(sum.terms[0]), reg(sum.terms[1]));
  } else if (sum.n == 2 && sum.c == 0 && sum.terms[0].coef == 1 && sum.terms[1].coef == minus_one) {
    set(Opcode::kSub, reg(sum.terms[0]), reg(sum.terms[1]));
  } else if (sum.n == 2 && sum.c == 0 && sum.terms[0].coef == minus_one && sum.terms[1].coef == 1) {
    set(Opcode::kSub, reg(sum.terms[1]), reg(sum.terms[0]));
  } else {
    return false;
  }
  made.summary.Note(kernel, inst);
  ++made.changed;
  return true;
}

Made Run(ir::Kernel& kernel, const Values& values) {
  Made made;
  Expander expander(kernel, values);
  const auto n = static_cast<uint32_t>(kernel.body.size());
  for (uint32_t i = 0; i < n; ++i) {
    Sum sum;
    if (expander.Root(i, sum)) Rewrite(kernel, kernel.body[i], sum, made);
  }
  return made;
}

}  // namespace

size_t Reassociate(ir::Kernel& kernel) { return Run(kernel, Values(kernel)).changed; }

// Rewrites instructions in place (their definitions and guards stay): the
// shared analyses stay true once the opcodes made are noted.
size_t Reassociate(ir::Kernel& kernel, Analyses& analyses) {
  if (analyses.has_summary() && !analyses.summary().Has(Opcode::kAdd) && !analyses.summary().Has(Opcode::kSub) &&
      !analyses.summary().Has(Opcode::kNeg)) {
    return 0;
  }
  const Made made = Run(kernel, analyses.values());
  analyses.NoteMade(made.summary);
  return made.changed;
}

}  // namespace ptxforge::passes
