// Copy propagation over values.
#include "passes/copy_prop.h"

#include <vector>

#include "passes/values.h"

namespace ptxforge::passes {

size_t PropagateCopies(ir::Kernel& kernel) {
  const Values values(kernel);
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
    if (!values.IsValue(d) || !values.IsValue(s) || kernel.type_of(d) != kernel.type_of(s)) continue;
    // A copy of itself (only in code the entry cannot reach, where the
    // verifier's must-defined check has nothing to say) stays.
    const uint32_t root = renaming.Find(s.id);
    if (root == d.id) continue;
    renaming.Set(d, ir::Reg{root});
    dead[i] = true;
  }
  if (renaming.size() == 0) return 0;
  for (ir::Instruction& inst : kernel.body) renaming.Apply(inst);
  return RemoveMarked(kernel, dead);
}

}  // namespace ptxforge::passes
