// Values, renaming and deletion shared by the optimizer passes.
#include "passes/values.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "passes/analyses.h"

namespace ptxforge::passes {

// The constructor calls it for each instruction it reads.
void BodySummary::Note(const ir::Kernel& kernel, const ir::Instruction& inst) {
  ops.set(static_cast<size_t>(inst.op));
  any_guard |= inst.guarded();
  if (inst.op == ir::Opcode::kMov) {
    const size_t nregs = kernel.regs.size();
    for (ir::Reg d : inst.dsts) mov_to_pred |= d.id < nregs && kernel.regs[d.id].type == ir::ScalarType::kPred;
    // Operands are read for a mov of one register only (most instructions are not movs).
    if (!mov_imm_to_fixed && inst.dsts.size() == 1 && inst.dsts[0].id < nregs &&
        !kernel.regs[inst.dsts[0].id].is_mutable && inst.srcs.size() == 1 && inst.srcs[0].is_imm()) {
      mov_imm_to_fixed = true;
    }
    if (!mov_to_fixed && !inst.guarded() && inst.dsts.size() == 1 && inst.dsts[0].id < nregs &&
        !kernel.regs[inst.dsts[0].id].is_mutable && inst.srcs.size() == 1 && inst.srcs[0].is_reg() &&
        inst.srcs[0].id < nregs) {
      mov_to_fixed = !kernel.regs[inst.srcs[0].id].is_mutable;
    }
  } else if (!imm_sources && !inst.srcs.empty() && inst.srcs[0].is_imm()) {
    bool all = true;
    for (const ir::Operand& op : inst.srcs) all &= op.is_imm();
    imm_sources = all;
  }
}

// One write of the table (filled with kNone), the body's read, and one
// sweep turning kNone into kNotAValue. A definition of a mutable register
// is kNotAValue at once, so the sweep does not read kernel.regs (8 bytes a
// register: 8 MB at a million).
Values::Values(const ir::Kernel& kernel, BodySummary* summary, ir::CfgBuilder* cfg)
    : def_(kernel.regs.size(), kNotAValue - 1) {
  constexpr uint32_t kNone = kNotAValue - 1;  // while counting: not defined yet
  const uint32_t n = static_cast<uint32_t>(kernel.body.size());
  BodySummary s;
  uint32_t last_end = 0;  // 1 + the index of the last branch, ret or exit
  // The loop twice, with and without the CFG's builder, so that no
  // instruction asks which (a branch each on a first codegen).
  auto read = [&](auto with_cfg) {
    for (uint32_t i = 0; i < n; ++i) {
      const ir::Instruction& inst = kernel.body[i];
      if constexpr (decltype(with_cfg)::value) cfg->Add(i, inst);
      // Bitwise: each operand is cheap to compute, and a short-circuit
      // test is a branch each.
      const bool ok = !inst.guarded() & (inst.op != ir::Opcode::kRaw);
      s.Note(kernel, inst);
      if (ir::EndsBlock(inst)) {
        s.early_end |= last_end != 0;
        last_end = i + 1;
      }
      for (ir::Reg d : inst.dsts) {
        if (d.id >= def_.size()) continue;
        const bool first = ok & (def_[d.id] == kNone) & !kernel.regs[d.id].is_mutable;
        def_[d.id] = first ? i : kNotAValue;
      }
    }
  };
  if (cfg != nullptr) {
    read(std::true_type{});
  } else {
    read(std::false_type{});
  }
  s.early_end |= last_end != 0 && last_end != n;
  if (summary != nullptr) *summary = s;
  // kNone is kNotAValue with its low bit clear: setting that bit turns it
  // into kNotAValue and leaves every index and kNotAValue as they are (no
  // branch, and the loop vectorizes).
  static_assert(kNone + 1 == kNotAValue && (kNone & 1) == 0);
  for (uint32_t& d : def_) d |= static_cast<uint32_t>(d == kNone);
}

void Values::AddDefinitions(const ir::Kernel& kernel, uint32_t index, const ir::Instruction& inst,
                            std::vector<std::pair<uint32_t, uint32_t>>& defs) {
  const bool ok = !inst.guarded() && inst.op != ir::Opcode::kRaw;
  for (ir::Reg d : inst.dsts) {
    if (d.id < kernel.regs.size()) defs.emplace_back(d.id, ok && !kernel.regs[d.id].is_mutable ? index : kNotAValue);
  }
}

void Values::AfterEdit(const EditMoves& moves, std::vector<std::pair<uint32_t, uint32_t>>& inserted, size_t nregs) {
  // Definitions mostly come in body order: the ranks move little from one to the next.
  IncreasingRank dropped(moves.dropped), before(moves.inserted);
  for (uint32_t& d : def_) {
    if (d == kNotAValue) continue;
    const uint32_t below = dropped.Less(d);
    d = below < moves.dropped.size() && moves.dropped[below] == d ? kNotAValue : d - below + before.Less(d + 1);
  }
  def_.resize(nregs, kNotAValue);
  // By register, so that one defined twice is seen.
  std::sort(inserted.begin(), inserted.end());
  for (size_t a = 0, b = 0; a < inserted.size(); a = b) {
    while (b < inserted.size() && inserted[b].first == inserted[a].first) ++b;
    if (inserted[a].first < def_.size()) def_[inserted[a].first] = b - a == 1 ? inserted[a].second : kNotAValue;
  }
}

void Values::AfterRemoval(std::span<const uint32_t> dropped) {
  // Up to four drops (a small kernel's CSE) are compared with every
  // definition, padded with kNotAValue, which no definition is below and
  // only kNotAValue equals: no branch on the data (the ranks' search is
  // several per definition, which a first codegen mispredicts).
  if (dropped.size() <= 4) {
    uint32_t x[4] = {kNotAValue, kNotAValue, kNotAValue, kNotAValue};
    std::copy(dropped.begin(), dropped.end(), x);
    for (uint32_t& d : def_) {
      const uint32_t below = (x[0] < d) + (x[1] < d) + (x[2] < d) + (x[3] < d);
      const bool gone = (x[0] == d) | (x[1] == d) | (x[2] == d) | (x[3] == d) | (d == kNotAValue);
      d = gone ? kNotAValue : d - below;
    }
    return;
  }
  IncreasingRank rank(dropped);
  for (uint32_t& d : def_) {
    if (d == kNotAValue) continue;
    const uint32_t below = rank.Less(d);
    d = below < dropped.size() && dropped[below] == d ? kNotAValue : d - below;
  }
}

std::optional<uint64_t> ConstantOf(const ir::Kernel& kernel, const Values& values, ir::Reg r) {
  uint32_t d = values.Def(r);
  if (d == Values::kNotAValue) return std::nullopt;
  const ir::Instruction& inst = kernel.body[d];
  if (inst.op != ir::Opcode::kMov || inst.srcs.size() != 1 || !inst.srcs[0].is_imm()) return std::nullopt;
  return inst.srcs[0].bits();
}

uint32_t Renaming::Find(uint32_t r) {
  const size_t n = n_;
  uint32_t root = r;
  while (root < n && to_[root] != ir::Reg::kInvalidId) root = to_[root];
  while (r < n && to_[r] != ir::Reg::kInvalidId && to_[r] != root) {  // path compression
    const uint32_t next = to_[r];
    to_[r] = root;
    r = next;
  }
  return root;
}

size_t RemoveMarked(ir::Kernel& kernel, const std::vector<bool>& dead, Analyses* analyses) {
  std::vector<uint32_t> dropped;
  const uint32_t n = static_cast<uint32_t>(kernel.body.size());
  for (uint32_t i = 0; i < n; ++i) {
    if (dead[i]) dropped.push_back(i);
  }
  return RemoveDropped(kernel, dropped, analyses);
}

size_t RemoveDropped(ir::Kernel& kernel, std::span<const uint32_t> dropped, Analyses* analyses) {
  const size_t nd = dropped.size();
  if (nd == 0) return 0;
  if (analyses != nullptr) analyses->BeforeDrops(dropped);
  // The kept instructions between one dropped and the next move down.
  auto& body = kernel.body;
  const size_t n = body.size();
  size_t kept = dropped[0];
  for (size_t k = 0; k < nd; ++k) {
    const size_t end = k + 1 < nd ? dropped[k + 1] : n;
    for (size_t i = dropped[k] + 1; i < end; ++i) body[kept++] = std::move(body[i]);
  }
  body.resize(kept);
  body.shrink_to_fit();
  return nd;
}

void MakeMove(const ir::Kernel& kernel, ir::Instruction& inst, ir::Operand src) {
  ir::Instruction mov;
  mov.op = ir::Opcode::kMov;
  mov.mods.type = kernel.type_of(inst.dsts[0]);
  mov.dsts = {inst.dsts[0]};
  mov.srcs = {src};
  mov.guard = inst.guard;
  mov.guard_negated = inst.guard_negated;
  mov.loc = inst.loc;
  inst = std::move(mov);
}

}  // namespace ptxforge::passes
