// Algebraic identities that hold for every input bit pattern.
#ifndef PTXFORGE_PASSES_IDENTITIES_H_
#define PTXFORGE_PASSES_IDENTITIES_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// Rewrites instructions on integer, bit and predicate types (16..64 bits)
// whose result is one of their operands or a constant, whatever the other
// operand holds, into `mov.T dst, that`:
//   x+0  0+x  x-0  x*1  1*x  x/1  x<<0  x>>0  x&-1  -1&x  x|0  0|x  x^0  0^x
//   x&x  x|x  min(x,x)  max(x,x)  selp(x,x,p)                   -> x
//   x*0  0*x  (mul.lo, .hi, .wide)  x-x  x^x  x%1  mad(x,0,c) -> 0 / c
// and mad.lo/.hi(a, b, 0) becomes mul.lo/.hi(a, b). A value (passes/values.h)
// this run made a constant counts as that immediate in what follows, and a
// mov it makes names the immediate: x - x is 0, so (x - x) * 3 is 0 and
// mad(a, b, x - x) is a * b. (Constant folding, which runs before, has
// already put the builder's own constants in as immediates.)
// Floats are left alone: x+0 is not x for -0, x*1 quiets a signalling NaN,
// and x*0 is not 0 for infinities and NaN. The movs are left for copy
// propagation and constant propagation. Returns the instructions rewritten.
size_t SimplifyIdentities(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t SimplifyIdentities(ir::Kernel& kernel, Analyses& analyses);

class IdentitiesPass : public Pass {
 public:
  std::string_view name() const override { return "identities"; }
  absl::Status Run(ir::Kernel& kernel) override {
    SimplifyIdentities(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kValues; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    SimplifyIdentities(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_IDENTITIES_H_
