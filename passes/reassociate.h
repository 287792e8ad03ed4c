// Reassociation of integer add/sub chains: sums that cancel.
#ifndef PTXFORGE_PASSES_REASSOCIATE_H_
#define PTXFORGE_PASSES_REASSOCIATE_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// Reads each integer add, sub and neg (16, 32 or 64 bits, without .sat) as a
// sum c + k1*x1 + k2*x2 + ... over 2^width, following the values
// (passes/values.h) its operands name through the add, sub, neg and
// same-width integer or bit-typed movs that define them (a signed/unsigned
// bitcast is a mov.bN). Where that sum needs at most one instruction and the
// instruction read an intermediate value to get it, the instruction is
// rewritten to read the terms directly:
//   c            -> mov c
//   x, x + c     -> mov x, add x, c        c - x  -> sub c, x
//   x + y, x - y -> add x, y / sub x, y
// So `((y0 + ty) - (y0 - 2)) - 2` is `mov ty` whatever y0 holds (the tile
// origin of conv2d.backward_data's shared index), and the intermediates are
// left for dead-register removal. The arithmetic is exact: add and sub wrap,
// so the sums are equal for every input.
// Only values are expanded, and only those whose definition reads values:
// a mutable register (a loop counter) may change between an intermediate's
// definition and the instruction, so it is a term only where the
// instruction itself reads it. A definition at or after the instruction in
// the body is never followed (code the entry cannot reach may read a value
// above its definition; a later definition that dominates through a
// backward branch only goes unsimplified). Each
// instruction follows at most 8 definitions and keeps at most 4 terms, so
// the pass is linear in the body. Returns the instructions rewritten.
size_t Reassociate(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t Reassociate(ir::Kernel& kernel, Analyses& analyses);

class ReassociatePass : public Pass {
 public:
  std::string_view name() const override { return "reassoc"; }
  absl::Status Run(ir::Kernel& kernel) override {
    Reassociate(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kValues; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    Reassociate(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_REASSOCIATE_H_
