// Register counts and liveness-based pressure.
#include "passes/register_count.h"

#include <algorithm>

#include "ir/cfg.h"
#include "ir/register_numbering.h"

namespace ptxforge::passes {
namespace {

int Units(ir::RegClass c) {
  switch (c) {
    case ir::RegClass::kPred: return 0;
    case ir::RegClass::kB64:
    case ir::RegClass::kF64: return 2;
    default: return 1;
  }
}

}  // namespace

ir::KernelStats CountRegisters(const ir::Kernel& kernel) {
  ir::KernelStats stats;
  ir::RegisterNumbering numbering = ir::RegisterNumbering::Compute(kernel);
  stats.regs_per_class = numbering.count;
  for (const ir::Instruction& inst : kernel.body) stats.instructions += inst.op != ir::Opcode::kLabel;

  const size_t nregs = kernel.regs.size();
  std::vector<ir::RegClass> cls(nregs);
  for (size_t r = 0; r < nregs; ++r) cls[r] = ir::RegClassOf(kernel.regs[r].type);

  ir::Cfg cfg = ir::Cfg::Build(kernel);
  const size_t nb = cfg.blocks.size();
  // use[b]: read before any unconditional write in b; def[b]: unconditionally written.
  std::vector<ir::BitSet> use(nb, ir::BitSet(nregs)), def(nb, ir::BitSet(nregs)), live_in(nb, ir::BitSet(nregs)),
      live_out(nb, ir::BitSet(nregs));
  for (size_t b = 0; b < nb; ++b) {
    for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
      const ir::Instruction& inst = kernel.body[i];
      ir::ForEachUse(inst, [&](ir::Reg r) {
        if (r.id < nregs && !def[b].Test(r.id)) use[b].Set(r.id);
      });
      if (!inst.guarded()) {
        for (ir::Reg d : inst.dsts) def[b].Set(d.id);
      }
    }
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t bi = nb; bi-- > 0;) {
      ir::BitSet out(nregs);
      for (uint32_t s : cfg.blocks[bi].succs) out.UnionWith(live_in[s]);
      ir::BitSet in = out;
      def[bi].ForEach([&](size_t r) { in.Reset(r); });
      in.UnionWith(use[bi]);
      live_out[bi] = std::move(out);
      if (!(in == live_in[bi])) {
        live_in[bi] = std::move(in);
        changed = true;
      }
    }
  }
  // Walk each block backwards, measuring the live set after each instruction
  // (plus the instruction's own definitions, which occupy registers too).
  std::array<uint32_t, ir::kNumRegClasses> per_class{};
  auto measure = [&](const ir::BitSet& live) {
    std::array<uint32_t, ir::kNumRegClasses> counts{};
    live.ForEach([&](size_t r) { counts[static_cast<int>(cls[r])]++; });
    uint32_t units = 0;
    for (int c = 0; c < ir::kNumRegClasses; ++c) {
      per_class[c] = std::max(per_class[c], counts[c]);
      units += counts[c] * Units(static_cast<ir::RegClass>(c));
    }
    stats.max_live = std::max(stats.max_live, units);
  };
  for (size_t b = 0; b < nb; ++b) {
    ir::BitSet live = live_out[b];
    for (uint32_t i = cfg.blocks[b].end; i-- > cfg.blocks[b].begin;) {
      const ir::Instruction& inst = kernel.body[i];
      ir::BitSet at = live;
      for (ir::Reg d : inst.dsts) at.Set(d.id);
      measure(at);
      if (!inst.guarded()) {
        for (ir::Reg d : inst.dsts) live.Reset(d.id);
      }
      ir::ForEachUse(inst, [&](ir::Reg r) {
        if (r.id < nregs) live.Set(r.id);
      });
    }
    measure(live);
  }
  stats.max_live_per_class = per_class;
  return stats;
}

}  // namespace ptxforge::passes
