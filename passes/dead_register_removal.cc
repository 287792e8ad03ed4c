// Dead-register removal by marking from effects, in one backward sweep.
#include "passes/dead_register_removal.h"

#include <utility>
#include <vector>

#include "ir/register_numbering.h"
#include "passes/analyses.h"

namespace ptxforge::passes {

size_t RemoveDeadRegisters(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return RemoveDeadRegisters(kernel, analyses);
}

size_t RemoveDeadRegisters(ir::Kernel& kernel, Analyses& analyses) {
  auto& body = kernel.body;
  const uint32_t n = static_cast<uint32_t>(body.size());
  const size_t nregs = kernel.regs.size();
  // The instructions defining each register, flattened: one sweep of the body
  // collects (register, instruction) pairs, a counting sort groups them, so
  // those of register r are def_list[def_begin[r] .. def_begin[r + 1]) in body
  // order (one allocation, not one per register).
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  pairs.reserve(n);
  std::vector<uint32_t> def_begin(nregs + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    for (ir::Reg d : body[i].dsts) {
      if (d.id < nregs) {
        pairs.push_back({d.id, i});
        ++def_begin[d.id + 1];
      }
    }
  }
  for (size_t r = 0; r < nregs; ++r) def_begin[r + 1] += def_begin[r];
  std::vector<uint32_t> def_list(pairs.size());
  {
    std::vector<uint32_t> fill(def_begin.begin(), def_begin.end() - 1);
    for (const auto& [r, i] : pairs) def_list[fill[r]++] = i;
  }
  pairs = {};

  // Marking: a backward sweep visits every instruction once, in order, so
  // the body is read sequentially. A live instruction makes the definitions
  // of what it reads live; those still ahead of the sweep are visited when it
  // gets there, those behind it (a loop-carried register's update, defined
  // after its use) go on a worklist and are handled at once.
  std::vector<bool> live(n, false);
  std::vector<bool> reg_live(nregs, false);
  std::vector<uint32_t> work;
  uint32_t pos = n;  // instructions at or after pos have been swept
  auto mark_reg = [&](ir::Reg r) {
    if (r.id >= nregs || reg_live[r.id]) return;
    reg_live[r.id] = true;
    for (uint32_t k = def_begin[r.id]; k < def_begin[r.id + 1]; ++k) {
      const uint32_t i = def_list[k];
      if (live[i]) continue;
      live[i] = true;
      if (i >= pos) work.push_back(i);
    }
  };
  while (pos > 0) {
    const uint32_t i = --pos;
    const ir::OpInfo& info = body[i].info();
    if (!info.has(ir::kPure) || info.has(ir::kPseudo)) live[i] = true;
    if (!live[i]) continue;
    ir::ForEachUse(body[i], mark_reg);
    while (!work.empty()) {
      const uint32_t j = work.back();
      work.pop_back();
      ir::ForEachUse(body[j], mark_reg);
    }
  }
  size_t kept = 0;
  while (kept < n && live[kept]) ++kept;  // nothing moves before the first dead instruction
  if (kept < n) analyses.BeforeRemoval([&](uint32_t i) { return !live[i]; });
  for (size_t i = kept; i < n; ++i) {
    if (live[i]) body[kept++] = std::move(body[i]);
  }
  size_t removed = n - kept;
  body.resize(kept);
  return removed;
}

}  // namespace ptxforge::passes
