// The verifier as a pass: runs ir::VerifyKernel (ir/verify.h) between passes,
// unless the kernel is marked verified and unchanged since (ir::VerifyKernelOnce).
#ifndef PTXFORGE_PASSES_VERIFIER_H_
#define PTXFORGE_PASSES_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/kernel.h"
#include "ir/verify.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// The checks live in ir/ (the builder and the emulator use them too); these
// names stay for callers of the pass library.
using ir::VerifyKernel;
using ir::VerifyModule;

class VerifierPass : public Pass {
 public:
  std::string_view name() const override { return "verify"; }
  // A kernel from KernelBuilder::Finish() is verified there and marked: the
  // pass then costs one ir::Fingerprint. After a pass changed it, it is
  // verified again.
  absl::Status Run(ir::Kernel& kernel) override { return ir::VerifyKernelOnce(kernel); }
  // Changes nothing the shared analyses describe.
  uint8_t reads() const override { return 0; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses&) override { return Run(kernel); }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_VERIFIER_H_
