// Unsigned division and remainder by a power of two become shifts and masks.
#ifndef PTXFORGE_PASSES_POW2_DIVISION_H_
#define PTXFORGE_PASSES_POW2_DIVISION_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// Rewrites, for an unsigned type T (u16, u32, u64) and an immediate divisor
// 2^k (k >= 0, modulo T's width):
//   div.T d, x, 2^k  ->  shr.T d, x, k
//   rem.T d, x, 2^k  ->  and.bN d, x, 2^k - 1      (N: T's width)
// in place, keeping the guard. Exact for every x: both sides are the floor
// quotient and the remainder of an unsigned value. ptxas 13.0 does not do
// this itself: `div.u32 d, x, 32` assembles to the generic reciprocal and
// correction sequence of an unknown divisor (I2F, MUFU.RCP, F2I and two
// fix-ups), and the extra registers it holds show in ptxas -v (attention:
// 74 -> 63 on sm_100, measured when the pass was added). Signed division is left alone (it rounds towards zero,
// which a shift does not for negative x), and so are divisors held in
// registers (constant folding first turns known ones into immediates) and
// divisors that are not powers of two (a multiply-high sequence is exact
// too, but measured on the registry kernels it raised ptxas's count in some,
// conv2d.backward_data 30 -> 32 on sm_80). x/1 becomes x >> 0 and x%1 x & 0,
// which the identities pass turns into movs. Linear in the body. Returns the
// instructions rewritten.
size_t ReducePow2Division(ir::Kernel& kernel);
// The same in a pipeline run: returns at once when the shared body summary
// (passes/analyses.h) has no div or rem, and notes the opcodes it makes.
size_t ReducePow2Division(ir::Kernel& kernel, Analyses& analyses);

class Pow2DivisionPass : public Pass {
 public:
  std::string_view name() const override { return "pow2div"; }
  absl::Status Run(ir::Kernel& kernel) override {
    ReducePow2Division(kernel);
    return absl::OkStatus();
  }
  // It rewrites instructions in place, keeping their registers, guards and
  // places: the pipeline's shared analyses (passes/analyses.h) stay true.
  uint8_t reads() const override { return 0; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    ReducePow2Division(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_POW2_DIVISION_H_
