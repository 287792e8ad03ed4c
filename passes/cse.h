// Common-subexpression elimination by dominator-based value numbering.
#ifndef PTXFORGE_PASSES_CSE_H_
#define PTXFORGE_PASSES_CSE_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// Walks the dominator tree in preorder with a scoped table of the
// expressions computed so far on the path from the entry. An instruction
// that computes an expression already in the table is deleted and its
// result's uses read the earlier register (whose definition dominates them).
//
// An expression is an instruction that is pure, unguarded and defines one
// value (passes/values.h). One that reads only values, immediates and
// addresses is numbered in the dominator scope above. One that reads a
// register that is not a value (a mutable register: a loop counter, an
// accumulator) is numbered within its basic block only, and only until the
// block redefines a register it reads: `mul.wide.u32 %a, %i, 4` twice in a
// block with no assignment to %i in between is one instruction.
// Reads of special registers are not merged: %tid.x and the like cost no
// register to read again, and a shared read stays live across the kernel
// (it cost ptxas registers on layernorm, reduce and elementwise); %clock
// and the like change between reads anyway. Memory reads are never merged
// (a store or another thread may change memory between them), except
// ld.param (kernel parameters are read-only); neither are warp-level
// operations (shfl, vote, activemask: they depend on which threads are
// active), nor an add or sub of two registers (one instruction reusing
// nothing: merging it only lengthens a live range, and made ptxas spill on
// a registry kernel; ptxas merges those itself where it pays). The key is the opcode, the modifiers, the destination's type and
// the operands (with earlier merges applied; the two operands of integer
// add, mul, and, or, xor, min and max in a fixed order). Linear in the
// body; the table is only looked up, never iterated, so the output does not
// depend on hashing (a hash only finds candidates, which are compared in
// full). Returns the number of instructions removed. The kernel must pass
// the verifier (every read of a value dominated by its definition, outside
// code the entry cannot reach): reads are renamed as the walk reaches them.
size_t EliminateCommonSubexpressions(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t EliminateCommonSubexpressions(ir::Kernel& kernel, Analyses& analyses);

class CsePass : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  absl::Status Run(ir::Kernel& kernel) override {
    EliminateCommonSubexpressions(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kCfg | analysis::kDominators | analysis::kValues; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    EliminateCommonSubexpressions(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_CSE_H_
