// Unsigned division and remainder by a power of two as shifts and masks.
#include "passes/pow2_division.h"

#include <bit>

#include "ir/semantics.h"
#include "passes/values.h"

namespace ptxforge::passes {

size_t ReducePow2Division(ir::Kernel& kernel) {
  size_t changed = 0;
  for (ir::Instruction& inst : kernel.body) {
    if (inst.op != ir::Opcode::kDiv && inst.op != ir::Opcode::kRem) continue;
    const ir::ScalarType t = inst.mods.type;
    if (!ir::IsUnsigned(t) || inst.srcs.size() != 2 || !inst.srcs[1].is_imm()) continue;
    const int w = ir::TypeBits(t);
    if (w < 16) continue;
    const uint64_t divisor = ir::sem::Truncate(inst.srcs[1].bits(), w);
    if (!std::has_single_bit(divisor)) continue;  // 0 too: x/0 and x%0 have their own results
    if (inst.op == ir::Opcode::kDiv) {
      inst.op = ir::Opcode::kShr;
      inst.srcs[1] = ir::Operand::Imm(ir::ScalarType::kU32, static_cast<uint64_t>(std::countr_zero(divisor)));
    } else {
      inst.op = ir::Opcode::kAnd;
      inst.mods.type = ir::BitsTypeOfSize(w);
      inst.srcs[1] = ir::Operand::Imm(t, divisor - 1);  // as KernelBuilder::And writes an immediate
    }
    ++changed;
  }
  return changed;
}

size_t ReducePow2Division(ir::Kernel& kernel, Analyses& analyses) {
  const BodySummary& summary = analyses.summary();
  if (!summary.Has(ir::Opcode::kDiv) && !summary.Has(ir::Opcode::kRem)) return 0;
  const size_t changed = ReducePow2Division(kernel);
  if (changed != 0) {
    analyses.NoteOpcode(ir::Opcode::kShr);
    analyses.NoteOpcode(ir::Opcode::kAnd);
  }
  return changed;
}

}  // namespace ptxforge::passes
