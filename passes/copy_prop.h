// Copy propagation: uses of a copied register read the original instead.
#ifndef PTXFORGE_PASSES_COPY_PROP_H_
#define PTXFORGE_PASSES_COPY_PROP_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// For every unguarded `mov.T d, s` where d and s are values
// (passes/values.h) of the same type, every use of d reads s instead and the
// mov is deleted. Both are defined once, and s's definition dominates the
// mov, which dominates every use of d, so s holds the same bits there.
// Copies into or out of mutable (loop-carried) registers stay. Two linear
// sweeps. Returns the number of movs removed.
size_t PropagateCopies(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t PropagateCopies(ir::Kernel& kernel, Analyses& analyses);

class CopyPropagationPass : public Pass {
 public:
  std::string_view name() const override { return "copyprop"; }
  absl::Status Run(ir::Kernel& kernel) override {
    PropagateCopies(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kValues; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    PropagateCopies(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_COPY_PROP_H_
