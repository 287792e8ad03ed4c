// Canonical order: the IR as a function of the program's data flow, not of
// the order C++ happened to evaluate builder calls in.
#ifndef PTXFORGE_IR_CANONICAL_ORDER_H_
#define PTXFORGE_IR_CANONICAL_ORDER_H_

#include "ir/kernel.h"

namespace ptxforge::ir {

// C++ leaves the order of evaluating function arguments unspecified, so
// `b.Add(b.Load(x), b.Load(y))` records its loads in either order (g++ and
// clang++ differ). This puts the body in a canonical order and renumbers the
// registers, so that two recordings of the same program give identical IR:
//
// - Instructions that are not "movable" stay where they are and split each
//   basic block into runs. Movable: pure (loads included), unguarded, not a
//   label or raw PTX, defining no mutable register, reading no special
//   register that changes while a thread runs (%clock ...). Everything else (stores,
//   atomics, barriers, branches, labels, assignments to mutable registers)
//   is sequenced by C++ statements and keeps its place, so no load moves
//   across a store.
// - Within a run, instructions are emitted in post order of their operands
//   (operand order, then the guard), starting first from the run's results
//   that neither the run nor the instruction ending it reads, in the order of
//   their first use after the run (position in the canonical order, then
//   operand slot; results never read keep their recorded order), then from
//   the operands of the instruction that ends the run, in operand order.
//   Runs are ordered last to first so that those first uses are final.
//   A store ending a run has its values' operands visited before its
//   address's, so the address is made next to the store and is not live
//   while the values are computed (elementwise f32 gelu, whose rcp.rn is a
//   call on sm_90+: ptxas registers sm_75 27 -> 25, sm_90-sm_100a 32 -> 31,
//   but sm_86 26 -> 27; the other registry kernels unchanged but
//   nf4.gemm_transpose sm_75, 73 -> 74).
// - Eager placement: an instruction that is the only reader of at least as
//   many registers made in its run as it defines (and of one at least) is
//   placed as soon as the last of the run's instructions it reads is, not
//   when the walk reaches it, since placing it ends those registers' lives
//   (the kernel-wide readers are counted, up to two). So two loads'
//   conversions and their sum are made before the activation of either.
//   One already on the walk's stack is placed the same way (the walk then
//   skips it). When one placement makes several ready, they are placed in
//   the order of where the values they read were made (use by use:
//   position, then result slot); two never tie, since each reads a
//   register of the run that nothing else reads. (elementwise f32 gelu,
//   where rcp.rn's slow path is a subroutine that ptxas places above every
//   register live at any of its calls: sm_100/100a 31 -> 30, sm_80-89
//   25 -> 22 with the gelu and erf operand orders of builder/math.cc.)
// - Registers are then numbered by first appearance (uses before
//   definitions, operands in order); registers that never appear keep their
//   relative order after those that do.
//
// Linear in instructions plus registers, plus sorting each run's unread
// results and the instructions one placement makes ready. The program's
// meaning is unchanged: every instruction still follows the definitions it
// reads.
void CanonicalizeOrder(Kernel& kernel);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_CANONICAL_ORDER_H_
