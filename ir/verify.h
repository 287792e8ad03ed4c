// Verification of kernels: structure (well-formed operands, bound labels,
// defined registers) and typing against the opcode table and PTX's rules.
// The builder, the verifier pass and the emulator all call these.
//
// Every instruction message starts "kernel NAME: FILE:LINE: INSTRUCTION: "
// (the builder call that made the instruction, and the instruction with
// virtual register names), then says what is wrong. Operands are numbered in
// PTX order: destinations first, from 0.
#ifndef PTXFORGE_IR_VERIFY_H_
#define PTXFORGE_IR_VERIFY_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "ir/kernel.h"

namespace ptxforge::ir {

// A PTX identifier as ptxforge accepts it: a letter or '_', then letters,
// digits or '_', at most 200 characters.
bool IsIdentifier(std::string_view s);

// What is wrong with the things `inst` refers to, or nothing: a register,
// variable, param, label or special register that does not exist in `kernel`,
// or an empty operand ("operand 2 is not a register of this kernel").
std::optional<std::string> FindBadReference(const Kernel& kernel, const Instruction& inst);

// The structure every consumer relies on, so that nothing crashes on
// malformed IR: references exist, operand counts and kinds (addresses,
// labels) match the opcode table, labels are bound exactly once, params are
// read whole by ld.param. Types, modifiers, targets and definitions are not
// checked.
absl::Status CheckWellFormed(const Kernel& kernel);

// Everything: CheckWellFormed; kernel/param/variable names; operand types
// per opcode; modifiers each opcode allows; the instruction's minimum
// target; registers defined before use on every path and defined once
// unless mutable; the body ends in ret, exit or a branch.
absl::Status VerifyKernel(const Kernel& kernel);

// Verify once per codegen: KernelBuilder::Finish() verifies and marks the
// kernel, and the pipeline's verify pass (VerifyKernelOnce) then only checks
// that the kernel is unchanged since, which costs a hash of the kernel.
//
// A 64-bit digest of everything VerifyKernel reads: the name, target,
// params, variables, register table, labels, body (not source locations),
// raw PTX and launch bounds. Not `stats` nor the mark. Never 0.
uint64_t Fingerprint(const Kernel& kernel);
// Records that `kernel`, as it is now, passed VerifyKernel. Only code that
// has just verified it (or derived it from a verified kernel by a
// transformation that keeps it valid, such as canonical ordering) calls this.
void MarkVerified(Kernel& kernel);
// Whether MarkVerified was called and the kernel has not changed since.
bool IsMarkedVerified(const Kernel& kernel);
// VerifyKernel unless IsMarkedVerified; marks the kernel when it passes.
absl::Status VerifyKernelOnce(Kernel& kernel);

// VerifyKernel on each kernel, plus: kernels share the module's target and
// have distinct names; a pinned PTX version is high enough.
absl::Status VerifyModule(const Module& module);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_VERIFY_H_
