// Dead-register removal by marking from effects.
#include "passes/dead_register_removal.h"

#include <vector>

#include "ir/register_numbering.h"

namespace ptxforge::passes {

size_t RemoveDeadRegisters(ir::Kernel& kernel) {
  auto& body = kernel.body;
  const size_t n = body.size();
  // The instructions defining each register, flattened: those of register r
  // are def_list[def_begin[r] .. def_begin[r + 1]) (one allocation, not one
  // per register).
  const size_t nregs = kernel.regs.size();
  std::vector<uint32_t> def_begin(nregs + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    for (ir::Reg d : body[i].dsts) {
      if (d.id < nregs) ++def_begin[d.id + 1];
    }
  }
  for (size_t r = 0; r < nregs; ++r) def_begin[r + 1] += def_begin[r];
  std::vector<uint32_t> def_list(def_begin[nregs]);
  {
    std::vector<uint32_t> fill(def_begin.begin(), def_begin.end() - 1);
    for (uint32_t i = 0; i < n; ++i) {
      for (ir::Reg d : body[i].dsts) {
        if (d.id < nregs) def_list[fill[d.id]++] = i;
      }
    }
  }
  std::vector<bool> live(n, false);
  std::vector<bool> reg_live(nregs, false);
  std::vector<uint32_t> work;
  auto mark_reg = [&](ir::Reg r) {
    if (r.id >= nregs || reg_live[r.id]) return;
    reg_live[r.id] = true;
    for (uint32_t k = def_begin[r.id]; k < def_begin[r.id + 1]; ++k) {
      const uint32_t i = def_list[k];
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
