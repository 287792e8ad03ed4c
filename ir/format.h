// Renders instructions as PTX-syntax text. Both printers and the verifier's
// messages use it; register and label names come from the caller (virtual
// ids in the IR dump, renumbered per class in PTX).
#ifndef PTXFORGE_IR_FORMAT_H_
#define PTXFORGE_IR_FORMAT_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "ir/kernel.h"

namespace ptxforge::ir {

using RegNameFn = absl::FunctionRef<void(std::string& out, Reg r)>;

// "$L3_loop": label names are the label id plus its hint, so they are unique.
void AppendLabelName(std::string& out, const Kernel& kernel, Label label);
// Immediates in PTX spelling: 0f3F800000 (f32), 0d... (f64), hex for bit
// types, decimal for integers.
void AppendImmediate(std::string& out, ScalarType type, uint64_t bits);
// The mnemonic with its modifiers: "ld.global.nc.v4.f32".
void AppendOpcode(std::string& out, const Instruction& inst);
void AppendOperand(std::string& out, const Kernel& kernel, const Operand& op, RegNameFn reg_name);
// A whole instruction without indentation or trailing newline:
// "@!%p1 bra $L2_endif;" or "add.rn.f32 %f3, %f1, %f2;". Raw PTX has its
// placeholders replaced (and may span several lines). The IR dump leaves out
// the destinations (it prints them first) and the semicolon.
struct FormatStyle {
  bool dsts = true;
  bool semicolon = true;
};
void AppendInstruction(std::string& out, const Kernel& kernel, const Instruction& inst, RegNameFn reg_name,
                       FormatStyle style = {});

// AppendInstruction with PTX register names under `numbering` (the PTX
// printer's), read without a call through a function reference per register.
struct RegisterNumbering;
void AppendPtxInstruction(std::string& out, const Kernel& kernel, const Instruction& inst,
                          const RegisterNumbering& numbering);
// What slot i of the opcode's format prints, by a switch on the slot: what
// AppendOpcode's tables say for each slot and value (ir_test compares them).
void AppendSlot(std::string& out, const Instruction& inst, int i);

// The virtual name of a register in the IR dump and messages: "%7".
void AppendVirtualRegName(std::string& out, Reg r);
std::string InstructionText(const Kernel& kernel, const Instruction& inst);  // with virtual names

// "kernel_builder_test.cc:42" (the file's base name); "" when unknown.
std::string FormatLoc(const SourceLoc& loc);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_FORMAT_H_
