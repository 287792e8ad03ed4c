// Strength reduction of address arithmetic in loops: `base + i * size`
// recomputed in every iteration becomes a register stepped with i.
#ifndef PTXFORGE_PASSES_STRENGTH_REDUCTION_H_
#define PTXFORGE_PASSES_STRENGTH_REDUCTION_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// In each natural loop with an entry point (passes/loops.h):
// - An induction variable is a mutable integer register i of 32 or 64 bits
//   whose every definition inside the loop is an unguarded step by a
//   constant: `i = add.T i, S`, or `t = add.T i, S` followed by
//   `i = mov.T t` (what KernelBuilder::ForRange records).
// - An address is a value x defined in the loop as `x = add.T b, y` (either
//   order) with `y = mul.lo.T i, C` or `y = shl.bN i, K`, or as
//   `x = mad.lo.T i, C, b`, where b is an immediate or a register the loop
//   does not define, and all of x, y and i have i's width.
// Each distinct (i, C, b) can get one mutable register p, set to
// `mad.lo.T i, C, b` at the loop's entry point and stepped by
// `add.T p, p, S*C` right after every step of i, so that p equals b + i*C
// everywhere in the loop. x's definition then goes: its uses read p when
// they all follow it in its block with no step of i in between; otherwise
// it becomes `x = mov.T p`. Dead-register removal deletes y if nothing
// else reads it. A (i, C, b) gets its p only when that takes more
// instructions out of the loop (each x that goes, and each y only x read)
// than its steps add: a lone mad.lo, or an add whose i*C is read elsewhere
// too, stays as it is.
//
// Exact because the arithmetic is modulo 2^width on both sides: (i + S) * C
// = i * C + S * C however often i wraps. The widening forms that the
// builder's ElementAddr records for a 32-bit index (`mul.wide.u32 i, C`
// and `add.u64`) are NOT reduced: a 64-bit pointer stepped by S*C leaves
// b + zext(i)*C as soon as i wraps past 2^32, which a loop such as
// `for (i = start; i < end; i += S)` does when end > 2^32 - S; without
// knowing that it cannot, reducing them would change what such a kernel
// reads. Where it would be exact, the trade is mixed
// (`bench/widened_strength.py` reduces reduce_sum's strided loop by hand;
// ptxas 13.0): 2 SASS instructions fewer per iteration on sm_75 to sm_89
// (8 -> 6: there ptxas rebuilds the stride from the constant bank in every
// iteration to save registers), as many on sm_90 to sm_120 (6, where the
// widened address is one IMAD.WIDE), and 10-12 -> 14 registers on every
// target. nvcc leaves the same loop widened (one IMAD.WIDE.U32 per access
// on sm_90). Proving that i cannot wrap (range facts, or a loop version
// behind a test of end against 2^32 - S) is what doing it would take.
// Linear in the body times the loop depth. Returns the number of addresses
// reduced.
size_t ReduceAddressStrength(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t ReduceAddressStrength(ir::Kernel& kernel, Analyses& analyses);

class StrengthReductionPass : public Pass {
 public:
  std::string_view name() const override { return "strength"; }
  absl::Status Run(ir::Kernel& kernel) override {
    ReduceAddressStrength(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kAll; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    ReduceAddressStrength(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_STRENGTH_REDUCTION_H_
