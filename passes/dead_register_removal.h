// Dead-register removal: deletes side-effect-free instructions whose results
// nothing needs.
#ifndef PTXFORGE_PASSES_DEAD_REGISTER_REMOVAL_H_
#define PTXFORGE_PASSES_DEAD_REGISTER_REMOVAL_H_

#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// Mark and sweep to a fixed point: instructions with effects (stores,
// atomics, barriers, branches, ret/exit, raw PTX, labels) are live; so is
// every instruction defining a register a live instruction reads (including
// guards). Everything else (pure instructions, loads) is removed, so values
// only feeding dead values (such as an unused loop-carried sum) go too.
// Returns the number of instructions removed.
size_t RemoveDeadRegisters(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t RemoveDeadRegisters(ir::Kernel& kernel, Analyses& analyses);

class DeadRegisterRemovalPass : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  absl::Status Run(ir::Kernel& kernel) override {
    RemoveDeadRegisters(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return 0; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    RemoveDeadRegisters(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_DEAD_REGISTER_REMOVAL_H_
