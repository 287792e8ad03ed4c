// What the verifier's two files share: ir/verify.cc checks a kernel's
// declarations, labels and definitions and drives the walk over its body;
// ir/verify_instruction.cc checks each instruction against the opcode table
// and PTX's rules. Internal to the library: not installed.
//
// Two files rather than one also matters to a fresh process's first codegen
// when the program is built with GCC 12: start-up maps the code around each
// object's static initializer, and one object of both halves left a window
// of the checks unmapped in about half of all processes (bench/COLD_PATH.md,
// session 39).
#ifndef PTXFORGE_IR_VERIFY_INTERNAL_H_
#define PTXFORGE_IR_VERIFY_INTERNAL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

#include "absl/status/status.h"
#include "ir/kernel.h"
#include "ir/verify.h"

namespace ptxforge::ir::verify_internal {

// How many operands each group of an instruction's signature stands for
// (GroupSizes), found once per instruction by the shape check and read by
// the operand checks after it.
struct Groups {
  std::array<uint8_t, std::tuple_size_v<decltype(ir::Signature::dsts)>> dsts{};
  std::array<uint8_t, std::tuple_size_v<decltype(ir::Signature::srcs)>> srcs{};
  bool dsts_fit = false;  // the destinations fit the signature (dsts is valid)
  bool srcs_fit = false;  // the sources do (srcs is valid; never for "*")
};

// The verifier's messages (see ir/verify.h): "kernel NAME: MSG", and for
// instruction `index` "kernel NAME: FILE:LINE: INSTRUCTION: MSG". Cold: the
// compiler moves the code building a message out of the checks that call
// these (.text.unlikely), so a first verification touches less code (see
// bench/cold_bench.cc).
[[gnu::cold]] absl::Status KernelError(const Kernel& k, std::string_view msg);
[[gnu::cold]] absl::Status InstructionError(const Kernel& k, size_t index, std::string_view msg);

// The checks of one kernel's instructions, one at a time. Made once per
// verification: the reference limits are the kernel's counts.
class InstructionChecker {
 public:
  explicit InstructionChecker(const Kernel& k) : k_(k), limits_(k) {}

  // Everything about instruction i alone: CheckStructure, then its guard,
  // its target, its modifiers and each operand's type. The first error, or
  // OK.
  absl::Status Check(size_t i) const;

  // References exist; the operand counts and kinds are the opcode's. Fills
  // `groups` for the operand checks.
  absl::Status CheckStructure(size_t i, Groups& groups) const;

 private:
  const Kernel& k_;
  const ReferenceLimits limits_;
};

}  // namespace ptxforge::ir::verify_internal

#endif  // PTXFORGE_IR_VERIFY_INTERNAL_H_
