// Dense per-class register numbering.
#include "ir/register_numbering.h"

#include "ir/strings.h"

namespace ptxforge::ir {

RegisterNumbering RegisterNumbering::Compute(const Kernel& kernel) {
  RegisterNumbering n;
  std::vector<bool> used(kernel.regs.size(), false);
  auto mark = [&](Reg r) {
    if (r.id < used.size()) used[r.id] = true;
  };
  for (const Instruction& inst : kernel.body) {
    for (Reg d : inst.dsts) mark(d);
    ForEachUse(inst, mark);
  }
  n.number.assign(kernel.regs.size(), kUnused);
  for (uint32_t id = 0; id < kernel.regs.size(); ++id) {
    if (!used[id]) continue;
    int c = static_cast<int>(RegClassOf(kernel.regs[id].type));
    n.number[id] = n.count[c]++;
  }
  return n;
}

void AppendPtxRegName(std::string& out, const Kernel& kernel, const RegisterNumbering& numbering, Reg r) {
  if (r.id >= numbering.number.size() || numbering.number[r.id] == RegisterNumbering::kUnused) {
    out.append("%<bad>");
    return;
  }
  out.append(RegClassPrefix(RegClassOf(kernel.regs[r.id].type)));
  AppendDecimal(out, numbering.number[r.id]);
}

}  // namespace ptxforge::ir
