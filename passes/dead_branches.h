// Dead-branch removal: constant guards resolved, unreachable blocks deleted.
#ifndef PTXFORGE_PASSES_DEAD_BRANCHES_H_
#define PTXFORGE_PASSES_DEAD_BRANCHES_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// 1. An instruction guarded by a predicate that is a value defined by
//    `mov.pred p, IMM` (what constant folding leaves) either always runs
//    (the guard is dropped: `@p bra L` becomes `bra L`) or never runs (it is
//    deleted, unless it defines a non-mutable register).
// 2. Blocks the entry cannot reach are deleted, labels and all.
// 3. An unconditional `bra L` whose next instruction is label L (after
//    other labels only) is deleted.
// Only paths go away, so every register defined on all paths to a use still
// is. Linear in the body. Returns the number of instructions removed or changed.
size_t RemoveDeadBranches(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t RemoveDeadBranches(ir::Kernel& kernel, Analyses& analyses);

class DeadBranchPass : public Pass {
 public:
  std::string_view name() const override { return "branches"; }
  absl::Status Run(ir::Kernel& kernel) override {
    RemoveDeadBranches(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kCfg | analysis::kDominators | analysis::kValues; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    RemoveDeadBranches(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_DEAD_BRANCHES_H_
