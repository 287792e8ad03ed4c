// Constant guards, unreachable blocks and branches to the next instruction.
#include "passes/dead_branches.h"

#include <optional>
#include <vector>

#include "ir/cfg.h"
#include "passes/values.h"

namespace ptxforge::passes {

size_t RemoveDeadBranches(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return RemoveDeadBranches(kernel, analyses);
}

size_t RemoveDeadBranches(ir::Kernel& kernel, Analyses& analyses) {
  // The shared body summary (read with the value table, which step 1 needs
  // anyway) tells which of the three steps can find anything, so that
  // straight-line code without guards reads the body no further and builds
  // no Cfg. Blocks can be unreachable only after an instruction that does
  // not fall through (a branch, ret, exit) that is not the last one; step 1
  // can make such a branch (a guard found true).
  const BodySummary& summary = analyses.summary();
  const bool any_guard = summary.any_guard, any_bra = summary.Has(ir::Opcode::kBra), early_end = summary.early_end;
  // A guard is a known constant only when a mov defines it.
  const bool any_constant_guard = any_guard && summary.mov_to_pred;
  size_t changed = 0;
  if (any_constant_guard) {
    const Values& values = analyses.values();
    std::vector<bool> dead(kernel.body.size(), false);
    bool any_dead = false;
    for (size_t i = 0; i < kernel.body.size(); ++i) {
      ir::Instruction& inst = kernel.body[i];
      if (!inst.guarded()) continue;
      std::optional<uint64_t> c = ConstantOf(kernel, values, inst.guard);
      if (!c) continue;
      if (((*c & 1) != 0) != inst.guard_negated) {
        inst.guard = ir::Reg{};
        inst.guard_negated = false;
      } else {
        // Never runs. A definition of a non-mutable register stays (its uses
        // would lose their definition); nothing else that never runs does.
        bool defines_value = false;
        for (ir::Reg d : inst.dsts) defines_value |= d.id >= kernel.regs.size() || !kernel.regs[d.id].is_mutable;
        if (defines_value) continue;
        dead[i] = true;
        any_dead = true;
      }
      ++changed;
    }
    // A guard dropped changes the CFG (the block no longer falls through)
    // and may make a register a value.
    if (changed != 0) analyses.Invalidate();
    if (any_dead) RemoveMarked(kernel, dead, &analyses);
  }
  // Unreachable blocks.
  if (any_guard || early_end) {
    // The shared dominators (CSE's, unless step 1 changed the body) say
    // which blocks the entry reaches: no search of the graph of our own.
    const ir::Cfg& cfg = analyses.cfg();
    const std::vector<uint32_t>& idom = analyses.idom();
    std::vector<bool> dead;  // made at the first unreachable block
    size_t n = 0;
    for (size_t b = 0; b < cfg.blocks.size(); ++b) {
      if (idom[b] != UINT32_MAX) continue;  // reachable
      if (dead.empty()) dead.assign(kernel.body.size(), false);
      for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) dead[i] = true;
      n += cfg.blocks[b].end - cfg.blocks[b].begin;
    }
    if (n > 0) changed += RemoveMarked(kernel, dead, &analyses);
  }
  // Branches to the next instruction.
  // A branch ends its block: the blocks' last instructions are all there is
  // to read (the CFG is at hand from step 2, or is one read of the body).
  if (any_bra) {
    auto& body = kernel.body;
    const ir::Cfg& cfg = analyses.cfg();
    std::vector<bool> dead;  // made at the first branch that goes
    for (const ir::BasicBlock& bb : cfg.blocks) {
      const uint32_t i = bb.end - 1;
      const ir::Instruction& inst = body[i];
      if (inst.op != ir::Opcode::kBra || inst.guarded() || inst.srcs.empty()) continue;
      for (size_t j = i + 1; j < body.size() && body[j].op == ir::Opcode::kLabel; ++j) {
        if (!body[j].srcs.empty() && body[j].srcs[0].id == inst.srcs[0].id) {
          if (dead.empty()) dead.assign(body.size(), false);
          dead[i] = true;
          break;
        }
      }
    }
    if (!dead.empty()) changed += RemoveMarked(kernel, dead, &analyses);
  }
  return changed;
}

}  // namespace ptxforge::passes
