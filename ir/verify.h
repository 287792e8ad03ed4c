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

// Whether an operand's id names something of a kernel, by one table
// look-up and no branch on the operand: FindBadReference's rules for
// sources (an empty operand fits no limit, an immediate any), which the
// verifier's and the builder's one-walk reference checks apply before they
// run FindBadReference to word an error. Made for the kernel as it is (the
// builder makes one per instruction: its counts grow).
class ReferenceLimits {
 public:
  // Codes: the kind for kinds other than an address, kAddressCode plus the
  // base for an address, kOutOfRange for a kind or base out of range.
  static constexpr unsigned kAddressCode = static_cast<unsigned>(OperandKind::kAddress) + 1;
  static constexpr unsigned kNumCodes = 16;
  static constexpr unsigned kOutOfRange = kNumCodes - 1;
  // The codes of the operands that read a register (Operand::reads_reg).
  static constexpr uint32_t kReadsRegCodes = uint32_t{1} << static_cast<unsigned>(OperandKind::kReg) |
                                             uint32_t{1} << (kAddressCode + static_cast<unsigned>(AddressBase::kReg));
  static_assert(static_cast<int>(OperandKind::kNone) == 0 && static_cast<int>(OperandKind::kAddress) == 6 &&
                    kAddressCode + static_cast<unsigned>(AddressBase::kParam) < kOutOfRange,
                "the operand codes' layout");

  // Each entry stored on its own: a loop or an initializer clears the
  // array with a loop first, and the builder makes one for every
  // instruction.
  explicit ReferenceLimits(const Kernel& k) {
    static_assert(static_cast<unsigned>(OperandKind::kReg) == 1 && static_cast<unsigned>(OperandKind::kImm) == 2 &&
                  static_cast<unsigned>(OperandKind::kSpecial) == 3 && static_cast<unsigned>(OperandKind::kSymbol) == 4 &&
                  static_cast<unsigned>(OperandKind::kLabel) == 5 && kAddressCode == 7 && kNumCodes == 16);
    const uint64_t nregs = k.regs.size();
    limit_[0] = 0;                    // kNone: empty, never fine
    limit_[1] = nregs;                // kReg
    limit_[2] = uint64_t{1} << 32;    // kImm: any id
    limit_[3] = kNumSpecialRegs;      // kSpecial
    limit_[4] = k.variables.size();   // kSymbol
    limit_[5] = k.labels.size();      // kLabel
    limit_[6] = 0;                    // (an address has codes of its own)
    limit_[7] = nregs;                // an address of a register
    limit_[8] = k.variables.size();   // of a variable
    limit_[9] = k.params.size();      // of a param
    limit_[10] = limit_[11] = limit_[12] = limit_[13] = limit_[14] = limit_[15] = 0;  // out of range
  }
  // Arithmetic, not a branch on the kind.
  static unsigned Code(const Operand& op) {
    constexpr unsigned kAddress = static_cast<unsigned>(OperandKind::kAddress);
    const unsigned kind = static_cast<unsigned>(op.kind);
    unsigned code = kind + (kind == kAddress) * (kAddressCode - kind + static_cast<unsigned>(op.base));
    code |= 0u - static_cast<unsigned>(kind > kAddress);  // all ones: out of range
    return code < kOutOfRange ? code : kOutOfRange;
  }
  uint64_t limit(unsigned code) const { return limit_[code]; }
  bool Fits(const Operand& op) const { return op.id < limit_[Code(op)]; }

 private:
  uint64_t limit_[kNumCodes];
};

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
// params, variables, register table, labels, the names their hints index,
// body (not source locations), raw PTX and launch bounds. Not `stats` nor
// the mark. Never 0.
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
