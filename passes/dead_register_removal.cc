// Dead-register removal by marking from effects, in one backward sweep.
#include "passes/dead_register_removal.h"

#include <algorithm>
#include <cstdint>
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
  constexpr uint32_t kNone = UINT32_MAX;

  // Marking: a backward sweep visits every instruction once, in order, so
  // the body is read sequentially, and only once. An instruction is live
  // when it has effects or defines a register that is live by then (read by
  // a live instruction swept before it, i.e. after it in the body). A live
  // instruction makes what it reads live; a definition of such a register
  // that is still ahead of the sweep is found live when the sweep gets
  // there. One behind it (a loop-carried register's update, defined after
  // its use) was swept while dead: such definitions are kept in a list per
  // register (`swept_dead`, chained through `head`) and are made live, and
  // their own reads marked, at once. No list of every register's
  // definitions is built: code where everything is live, what a pipeline
  // run mostly meets, allocates nothing per register but the live bits.
  std::vector<bool> live(n, false);
  // By register; one entry more, which marking without a branch (below)
  // sets for operands that read no register and nothing reads.
  std::vector<uint8_t> reg_live(nregs + 1, 0);
  std::vector<uint32_t> head;  // by register: its last entry in swept_dead; made at the first dead definition
  std::vector<std::pair<uint32_t, uint32_t>> swept_dead;  // (instruction, the register's previous entry)
  std::vector<uint32_t> work;
  uint32_t live_count = 0;  // instructions marked live
  auto mark_reg = [&](ir::Reg r) {
    if (r.id >= nregs || reg_live[r.id]) return;
    reg_live[r.id] = true;
    if (head.empty()) return;
    for (uint32_t k = head[r.id]; k != kNone; k = swept_dead[k].second) {
      const uint32_t i = swept_dead[k].first;
      if (live[i]) continue;
      live[i] = true;
      ++live_count;
      work.push_back(i);
    }
  };
  for (uint32_t pos = n; pos > 0;) {
    const uint32_t i = --pos;
    const ir::Instruction& inst = body[i];
    const ir::OpInfo& info = inst.info();
    bool is_live = !info.has(ir::kPure) || info.has(ir::kPseudo);
    for (size_t k = 0; k < inst.dsts.size() && !is_live; ++k) {
      const uint32_t d = inst.dsts[k].id;
      is_live = d < nregs && reg_live[d];
    }
    if (!is_live) {
      for (ir::Reg d : inst.dsts) {
        if (d.id >= nregs) continue;
        if (head.empty()) head.assign(nregs, kNone);
        swept_dead.push_back({i, head[d.id]});
        head[d.id] = static_cast<uint32_t>(swept_dead.size() - 1);
      }
      continue;
    }
    live[i] = true;
    ++live_count;
    if (head.empty()) {
      // No definition swept dead yet (what a pipeline run mostly meets):
      // marking a register live makes nothing else live, so the reads are
      // marked without a branch per operand (what reads no register marks
      // the spare entry).
      const uint32_t spare = static_cast<uint32_t>(nregs);
      for (const ir::Operand& op : inst.srcs) reg_live[op.ReadRegIndex(spare)] = 1;
      reg_live[std::min(inst.guard.id, spare)] = 1;  // kInvalidId when unguarded
      continue;
    }
    ir::ForEachUse(inst, mark_reg);
    while (!work.empty()) {
      const uint32_t j = work.back();
      work.pop_back();
      ir::ForEachUse(body[j], mark_reg);
    }
  }
  // Nothing moves before the first dead instruction (when all are live,
  // as mostly, the count says so without a read of the bits).
  size_t kept = live_count == n ? n : 0;
  while (kept < n && live[kept]) ++kept;
  if (kept < n) analyses.BeforeRemoval([&](uint32_t i) { return !live[i]; });
  for (size_t i = kept; i < n; ++i) {
    if (live[i]) body[kept++] = std::move(body[i]);
  }
  size_t removed = n - kept;
  body.resize(kept);
  return removed;
}

}  // namespace ptxforge::passes
