// The verifier: checks a kernel against the opcode table and PTX's rules.
//
// Every message starts "kernel NAME: FILE:LINE: INSTRUCTION: " (the builder
// call that made the instruction, and the instruction with virtual register
// names), then says what is wrong. Operands are numbered in PTX order:
// destinations first, from 0.
#ifndef PTXFORGE_PASSES_VERIFIER_H_
#define PTXFORGE_PASSES_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/kernel.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// Checks: kernel/param/variable names; operand counts and types per opcode;
// modifiers each opcode allows; the instruction's minimum target; registers
// defined before use on every path and defined once unless mutable; labels
// bound once and every branch target bound; params and variables referenced
// exist; the body ends in ret, exit or a branch.
absl::Status VerifyKernel(const ir::Kernel& kernel);
// VerifyKernel on each kernel, plus: kernels share the module's target and
// have distinct names; a pinned PTX version is high enough.
absl::Status VerifyModule(const ir::Module& module);

class VerifierPass : public Pass {
 public:
  std::string_view name() const override { return "verify"; }
  absl::Status Run(ir::Kernel& kernel) override { return VerifyKernel(kernel); }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_VERIFIER_H_
