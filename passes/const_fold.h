// Constant folding and propagation.
#ifndef PTXFORGE_PASSES_CONST_FOLD_H_
#define PTXFORGE_PASSES_CONST_FOLD_H_

#include <cstdint>
#include <optional>
#include <span>

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// What `inst` computes when its sources have the bits in `sources` (one per
// source operand, each zero-extended from its type), or nullopt when it is
// not folded. Exactly PTX's semantics (ir/semantics.h, shared with the
// emulator): integer add, sub, mul (lo, hi, wide), mad, div, rem, min, max,
// abs, neg, and, or, xor, not, cnot, shl, shr (amounts of the width or more
// included), popc, clz, brev, setp (with its boolean combination), cvt
// between integer types of 16..64 bits (with .sat) and predicate logic.
// Floats only where the result is bit-exact on every target: f32/f64 add,
// sub and mul in round-to-nearest without .ftz/.sat whose operands and
// result are not NaN (NaN payloads differ between the GPU and the host), and
// setp on f32/f64 without .ftz. 8-bit and half types are never folded.
std::optional<uint64_t> EvaluateConstant(const ir::Kernel& kernel, const ir::Instruction& inst,
                                         std::span<const uint64_t> sources);

// One forward sweep over the body:
// - an instruction whose sources are all immediates or registers known to
//   hold a constant becomes `mov.T dst, CONSTANT` (EvaluateConstant);
// - selp on a known predicate becomes a mov of the operand it selects;
// - a register known to be constant is replaced by an immediate in the
//   operands of pure, non-memory, non-warp instructions (mov, arithmetic,
//   logic, setp, selp values, bfe/bfi fields) where PTX takes an immediate of
//   that type (not predicates, not f16/bf16, float operands only from a
//   register of exactly that float type).
// A register is known constant when it is a value (passes/values.h) defined
// by `mov.T r, IMM` earlier in the body. The movs left unused go in dce.
// Returns the number of instructions changed.
size_t FoldConstants(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t FoldConstants(ir::Kernel& kernel, Analyses& analyses);

class ConstantFoldingPass : public Pass {
 public:
  std::string_view name() const override { return "constfold"; }
  absl::Status Run(ir::Kernel& kernel) override {
    FoldConstants(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kValues; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    FoldConstants(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_CONST_FOLD_H_
