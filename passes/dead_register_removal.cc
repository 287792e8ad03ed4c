// Dead-register removal by marking from effects.
#include "passes/dead_register_removal.h"

#include <vector>

#include "ir/register_numbering.h"

namespace ptxforge::passes {

size_t RemoveDeadRegisters(ir::Kernel& kernel) {
  auto& body = kernel.body;
  const size_t n = body.size();
  // defs[r]: instructions defining register r.
  std::vector<std::vector<uint32_t>> defs(kernel.regs.size());
  for (uint32_t i = 0; i < n; ++i) {
    for (ir::Reg d : body[i].dsts) {
      if (d.id < defs.size()) defs[d.id].push_back(i);
    }
  }
  std::vector<bool> live(n, false);
  std::vector<bool> reg_live(kernel.regs.size(), false);
  std::vector<uint32_t> work;
  auto mark_reg = [&](ir::Reg r) {
    if (r.id >= reg_live.size() || reg_live[r.id]) return;
    reg_live[r.id] = true;
    for (uint32_t i : defs[r.id]) {
      if (!live[i]) {
        live[i] = true;
        work.push_back(i);
      }
    }
  };
  for (uint32_t i = 0; i < n; ++i) {
    const ir::OpInfo& info = body[i].info();
    if (!info.has(ir::kPure) || info.has(ir::kPseudo)) {
      live[i] = true;
      work.push_back(i);
    }
  }
  while (!work.empty()) {
    uint32_t i = work.back();
    work.pop_back();
    ir::ForEachUse(body[i], mark_reg);
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (live[i]) {
      if (kept != i) body[kept] = std::move(body[i]);
      ++kept;
    }
  }
  size_t removed = n - kept;
  body.resize(kept);
  return removed;
}

}  // namespace ptxforge::passes
