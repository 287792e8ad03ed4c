// Register counting: per-class register counts and a max-live estimate.
#ifndef PTXFORGE_PASSES_REGISTER_COUNT_H_
#define PTXFORGE_PASSES_REGISTER_COUNT_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// Counts the registers the printer will declare per class (dense per-class
// numbering of the registers the body references) and estimates the maximum
// number live at once from liveness over the CFG (a guarded definition does
// not end a live range). max_live counts 32-bit units: b64/f64 registers
// count 2, predicates are not counted (they have their own file).
ir::KernelStats CountRegisters(const ir::Kernel& kernel);
// The same with the CFG of a pipeline run (passes/analyses.h).
ir::KernelStats CountRegisters(const ir::Kernel& kernel, Analyses& analyses);

// How the blocks' live-in sets are kept: dense bit rows (one word per 64
// registers per block) or sparse runs of nonzero words in a pool. kAuto
// takes one backward walk without dataflow when no edge of the graph goes
// backwards (no loop) and the live-in lists it keeps for branch targets stay
// within the dense rows' budget below, and otherwise picks dense when the
// rows total at most 4 words per instruction plus 4096. The numbers are the
// same either way (tests force each).
enum class LiveInSets { kAuto, kDense, kSparse };
ir::KernelStats CountRegisters(const ir::Kernel& kernel, LiveInSets sets);

class RegisterCountPass : public Pass {
 public:
  std::string_view name() const override { return "regcount"; }
  absl::Status Run(ir::Kernel& kernel) override {
    kernel.stats = CountRegisters(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kCfg; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    kernel.stats = CountRegisters(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_REGISTER_COUNT_H_
