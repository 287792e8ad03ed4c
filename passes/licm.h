// Loop-invariant code motion: pure computations that give the same result
// in every iteration move in front of the loop.
#ifndef PTXFORGE_PASSES_LICM_H_
#define PTXFORGE_PASSES_LICM_H_

#include "ir/kernel.h"
#include "passes/analyses.h"
#include "passes/pass.h"

namespace ptxforge::passes {

// For each natural loop (passes/loops.h), innermost first, moves an
// instruction to the loop's entry point (the end of the one block that falls
// into the header; loops entered any other way are left alone, no preheader
// is created) when
// - it is pure, unguarded, not raw PTX, not a warp-level or convergent
//   operation, reads no memory except kernel parameters (ld.param), and
//   reads no special register that changes while a thread runs (%clock,
//   %clock64, %globaltimer, %warpid, %smid);
// - every register it defines is a value (defined once, unguarded, not
//   mutable: passes/values.h), so that moving the one definition earlier
//   keeps it in front of every use;
// - every register it reads has no definition inside the loop (a value
//   defined before the loop, a mutable register the loop never assigns, or
//   the result of an instruction hoisted before it);
// - it does real work: a `mov` of an immediate, a special register (other
//   than those above) or a variable's address is never moved (redoing it
//   costs nothing, and a hoisted one would stay live across the whole loop).
//   A hoisted instruction that reads such a mov's result gets a copy of the
//   mov, with a new register, right before it at the entry point; the mov in
//   the loop stays for its other readers (dead-register removal deletes it
//   if there are none);
// - it does not make more registers live through the loop, counted in
//   32-bit registers (a predicate counts one): what it defines must be paid
//   for by registers it reads that nothing else reads (a copied mov costs
//   nothing). Measured on the registry kernels with ptxas 13.0, hoisting
//   every invariant cost up to 20 registers (gemm.simt) and, at the test
//   shapes, executed more instructions where loops run zero times.
// An instruction hoisted out of an inner loop can leave the outer loop too.
// Hoisting runs an instruction also when the loop body would not have (zero
// iterations, or a branch inside the loop that skips it). That is safe for
// what qualifies: PTX arithmetic never traps (integer division by zero has a
// defined result, ir/semantics.h) and ld.param reads memory that cannot
// change. Instructions keep their relative order at the entry point. Linear
// in the body times the loop depth. Returns the number of instructions moved
// (an instruction that leaves two loops counts twice).
size_t HoistLoopInvariants(ir::Kernel& kernel);
// The same with the analyses a pipeline run shares (passes/analyses.h), kept
// up to date for what it changes.
size_t HoistLoopInvariants(ir::Kernel& kernel, Analyses& analyses);

class LicmPass : public Pass {
 public:
  std::string_view name() const override { return "licm"; }
  absl::Status Run(ir::Kernel& kernel) override {
    HoistLoopInvariants(kernel);
    return absl::OkStatus();
  }
  uint8_t reads() const override { return analysis::kAll; }
  absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses) override {
    HoistLoopInvariants(kernel, analyses);
    return absl::OkStatus();
  }
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_LICM_H_
