// Dense per-class register numbering.
#include "ir/register_numbering.h"

#include <algorithm>

namespace ptxforge::ir {

RegisterNumbering RegisterNumbering::Compute(const Kernel& kernel) {
  RegisterNumbering n;
  const uint32_t size = static_cast<uint32_t>(kernel.regs.size());
  // Referenced registers are marked 0 first, then numbered in id order.
  // Marking takes no branch on the operand: what names no register (an
  // immediate, an invalid guard, an id past the table) marks the spare
  // entry at `size`, which is dropped at the end.
  n.entry.assign(size + size_t{1}, kUnused);
  uint32_t* const entry = n.entry.data();
  for (const Instruction& inst : kernel.body) {
    for (Reg d : inst.dsts) entry[std::min(d.id, size)] = 0;
    for (const Operand& op : inst.srcs) entry[op.ReadRegIndex(size)] = 0;
    entry[std::min(inst.guard.id, size)] = 0;  // kInvalidId when unguarded
  }
  n.entry.pop_back();
  // Without a branch on whether each register is used: an unused one keeps
  // kUnused and takes no number.
  for (uint32_t id = 0; id < size; ++id) {
    const uint32_t c = static_cast<uint32_t>(RegClassOf(kernel.regs[id].type));
    const uint32_t used = entry[id] == 0;
    const uint32_t numbered = (n.count[c] << kClassBits) | c;
    entry[id] = numbered | (used - 1);  // kUnused (all ones) when not used
    n.count[c] += used;
  }
  return n;
}

void AppendPtxRegName(std::string& out, const RegisterNumbering& numbering, Reg r) {
  char buf[16];
  out.append(buf, WritePtxRegName(buf, numbering, r));
}

}  // namespace ptxforge::ir
