// Copy propagation over values.
#include "passes/copy_prop.h"

#include <optional>
#include <vector>

#include "passes/values.h"

namespace ptxforge::passes {

size_t PropagateCopies(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return PropagateCopies(kernel, analyses);
}

size_t PropagateCopies(ir::Kernel& kernel, Analyses& analyses) {
  // Without an unguarded mov of a register that is not mutable into another (the
  // shared summary, when a pass before built it) there is nothing to read.
  if (analyses.has_summary() && !analyses.summary().mov_to_fixed) return 0;
  const Values* values = nullptr;  // asked for at the first candidate: code without copies never needs it
  const size_t n = kernel.body.size();
  Renaming renaming(kernel.regs.size());
  std::vector<bool> dead(n, false);
  for (size_t i = 0; i < n; ++i) {
    const ir::Instruction& inst = kernel.body[i];
    if (inst.op != ir::Opcode::kMov || inst.guarded() || inst.dsts.size() != 1 || inst.srcs.size() != 1 ||
        !inst.srcs[0].is_reg()) {
      continue;
    }
    const ir::Reg d = inst.dsts[0], s = inst.srcs[0].reg();
    // Cheap tests first: a mutable register (a loop-carried value) is never a value.
    if (kernel.regs[d.id].is_mutable || kernel.regs[s.id].is_mutable || kernel.type_of(d) != kernel.type_of(s)) continue;
    if (values == nullptr) values = &analyses.values();
    if (!values->IsValue(d) || !values->IsValue(s)) continue;
    dead[i] = renaming.Link(d, s);  // a copy of itself stays
  }
  if (renaming.size() == 0) return 0;
  for (ir::Instruction& inst : kernel.body) renaming.Apply(inst);
  return RemoveMarked(kernel, dead, &analyses);
}

}  // namespace ptxforge::passes
