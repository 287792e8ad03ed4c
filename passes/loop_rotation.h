// Loop rotation: an innermost loop that tests at its top tests at its
// bottom, with a copy of the test in front of it.
#ifndef PTXFORGE_PASSES_LOOP_ROTATION_H_
#define PTXFORGE_PASSES_LOOP_ROTATION_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// A loop as KernelBuilder::ForRange and While make it,
//
//       ...                            (falls into the loop)
//   $L: p = setp.CMP a, b
//       @p bra $E                      (or @!p)
//       BODY                           (one or more blocks)
//       bra $L
//   $E: ...
//
// becomes
//
//       ...
//       p = setp.CMP a, b              (the guard: left out when the loop
//       @p bra $E                       is known to run at least once)
//   $L: BODY
//       p = setp.CMP a, b
//       @!p bra $L                     (the test inverted: the guard's @!p
//   $E: ...                             gives @p)
//
// One branch per iteration fewer. Measured with ptxas 13.0 on the registry
// kernels in every element type they take, on sm_75, sm_80, sm_86, sm_89,
// sm_90, sm_100 and sm_120 (README "PTX that ptxas allocates well"):
// reduce 17-20 -> 13-15 registers, rmsnorm 22-24 -> 16-19, softmax 26-30 ->
// 17-21, moe.topk_gating and conv2d.direct 1-6 fewer on some targets; one
// row more (conv2d.pointwise f16 on sm_80, 40 -> 44). Only innermost loops
// of at most 64 instructions are rotated: rotating the loop around
// conv2d.direct's unrolled window cost it 1-2 registers on sm_75, sm_86,
// sm_89 and sm_120, and conv2d.pointwise's main loop (180 instructions in
// f64) made ptxas spill on sm_75.
//
// A loop is rotated when
// - it contains no other loop, has at most 64 instructions, and has an
//   entry point (passes/loops.h: one block outside it falls into the header
//   and nothing else enters it);
// - its header is exactly the label, `.pragma "nounroll"` if the loop has
//   it (it stays after the label), an unguarded setp with one destination p
//   that does not read p, and a branch on p (either polarity) to a label $E
//   outside the loop;
// - it has one latch, which ends in an unguarded `bra $L` right before $E.
// The copies define p again: p becomes mutable, and holds what it held
// before wherever it is read (false inside the loop, true at $E). The guard
// is left out when the setp's sources are immediates, or registers that the
// block falling into the loop last sets with a mov of an immediate, and the
// setp then keeps the thread in the loop (EvaluateConstant,
// passes/const_fold.h); not when the loop's blocks read p or the loop has
// another way out than the header's branch (before the test at the end, p
// would have no value there). The branch at the end never keeps `.uni`.
// Linear in the sum of the loops' sizes plus one edit of the body. Returns
// the number of loops rotated.
size_t RotateLoops(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h),
// dropped when a loop is rotated (branches move).
size_t RotateLoops(ir::Kernel& kernel, Analyses& analyses);

class LoopRotationPass : public Pass {
 public:
  std::string_view name() const override { return "rotate"; }
  absl::Status Run(ir::Kernel& kernel) override {
    RotateLoops(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kCfg | analysis::kDominators | analysis::kLoops; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    RotateLoops(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_LOOP_ROTATION_H_
