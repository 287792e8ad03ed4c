// Loop-invariant code motion over natural loops, innermost first.
#include "passes/licm.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "ir/semantics.h"
#include "passes/body_edit.h"
#include "passes/loops.h"
#include "passes/values.h"

namespace ptxforge::passes {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// `mov` of an immediate, a special register or a variable's address: no
// work to redo, so it is copied next to a hoisted reader instead of moved.
bool Cheap(const ir::Instruction& inst) {
  if (inst.op != ir::Opcode::kMov || inst.guarded() || inst.srcs.size() != 1 || inst.dsts.size() != 1) return false;
  const ir::OperandKind k = inst.srcs[0].kind;
  if (k == ir::OperandKind::kSpecial) return !ir::sem::SpecialRegIsVolatile(static_cast<ir::SpecialReg>(inst.srcs[0].id));
  return k == ir::OperandKind::kImm || k == ir::OperandKind::kSymbol;
}

// The instructions are items: body[i] for i < n, clones_[i - n] after.
class Hoister {
 public:
  Hoister(ir::Kernel& kernel, Analyses& analyses)
      : kernel_(kernel),
        analyses_(analyses),
        n_(static_cast<uint32_t>(kernel.body.size())) {}

  size_t Run() {
    const LoopForest& forest = analyses_.loops();
    if (forest.loops.empty()) return 0;
    nregs_ = static_cast<uint32_t>(kernel_.regs.size());
    values_ = &analyses_.values();
    dest_.assign(n_, kNone);
    stamp_.assign(nregs_, kNone);
    use_count_.assign(nregs_, 0);
    for (ir::Instruction& inst : kernel_.body) {
      ForEachUseId(inst, [&](uint32_t& r) {
        if (use_count_[r] < kMany) ++use_count_[r];
      });
    }
    // Entry points in body order, each with its list of planted items.
    for (const Loop& loop : forest.loops) {
      if (loop.entry_point != Loop::kNone) entries_.emplace_back(loop.entry_point, 0);
    }
    std::sort(entries_.begin(), entries_.end());
    entries_.erase(std::unique(entries_.begin(), entries_.end()), entries_.end());
    planted_.resize(entries_.size());
    for (uint32_t k = 0; k < entries_.size(); ++k) entries_[k].second = k;
    slot_of_block_.assign(forest.cfg.blocks.size(), kNone);
    for (const Loop& loop : forest.loops) {
      if (loop.entry_point != Loop::kNone) slot_of_block_[loop.header] = Slot(loop.entry_point);
    }
    LoopReadAhead read_ahead(kernel_, forest);
    for (uint32_t l = 0; l < forest.loops.size(); ++l) {
      const Loop& loop = forest.loops[l];
      read_ahead.Before(l);
      if (loop.entry_point != Loop::kNone) HoistFrom(forest, loop, l);
    }
    if (moved_ == 0) return 0;
    Rebuild();
    return moved_;
  }

 private:
  ir::Instruction& Item(uint32_t id) { return id < n_ ? kernel_.body[id] : clones_[id - n_]; }

  // The list of items planted in front of body index i; kNone when i is
  // not a loop's entry point. (A binary search: slot_of_block_ has the
  // answer for each loop's header without one.)
  uint32_t Slot(uint32_t i) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), std::pair<uint32_t, uint32_t>(i, 0));
    return it != entries_.end() && it->first == i ? it->second : kNone;
  }

  // By item: body instructions, then clones.
  uint32_t& Dest(uint32_t id) { return id < n_ ? dest_[id] : clone_dest_[id - n_]; }
  // By register: the tables of the registers the kernel had, then those of
  // the clones' registers (few: never grows a table of every register).
  uint32_t& Stamp(uint32_t r) { return r < nregs_ ? stamp_[r] : clone_regs_[r - nregs_].stamp; }
  uint8_t& Uses(uint32_t r) { return r < nregs_ ? use_count_[r] : clone_regs_[r - nregs_].uses; }
  uint32_t DefItem(uint32_t r) const {
    return r < nregs_ ? values_->Def(ir::Reg{r}) : clone_regs_[r - nregs_].def_item;
  }

  // Calls f(item) for the items of block bb in order: those planted in
  // front of a loop header that starts bb (they belong to the block falling
  // into it, which comes earlier in reverse post order), unless
  // skip_planted, then bb's own instructions that were not moved.
  template <typename F>
  void ForEachItem(uint32_t b, const ir::BasicBlock& bb, bool skip_planted, F&& f) {
    if (const uint32_t slot = skip_planted ? kNone : slot_of_block_[b]; slot != kNone) {
      const std::vector<uint32_t>& p = planted_[slot];
      for (size_t k = 0; k < p.size(); ++k) {  // f may append to another list, never to this one
        if (Dest(p[k]) == bb.begin) f(p[k]);
      }
    }
    for (uint32_t i = bb.begin; i < bb.end; ++i) {
      if (dest_[i] == kNone) f(i);
    }
  }

  bool Hoistable(const ir::Instruction& inst) const {
    const ir::OpInfo& info = inst.info();
    if (!info.has(ir::kPure) || info.has(ir::kPseudo) || info.has(ir::kOpaque) || info.has(ir::kConvergent) ||
        info.has(ir::kWarpMatrix) || inst.guarded() || inst.dsts.empty()) {
      return false;
    }
    if (info.has(ir::kReadsMemory) && !(inst.op == ir::Opcode::kLd && inst.mods.space == ir::StateSpace::kParam)) {
      return false;
    }
    for (ir::Reg d : inst.dsts) {
      if (d.id >= kernel_.regs.size() || DefItem(d.id) == kNone) return false;  // not a value
    }
    for (const ir::Operand& op : inst.srcs) {
      if (op.kind == ir::OperandKind::kSpecial && ir::sem::SpecialRegIsVolatile(static_cast<ir::SpecialReg>(op.id))) {
        return false;
      }
    }
    return true;
  }

  void HoistFrom(const LoopForest& forest, const Loop& loop, uint32_t l) {
    const uint32_t entry = loop.entry_point;
    const uint32_t slot = slot_of_block_[loop.header];

    // Registers the loop defines.
    for (uint32_t b : loop.blocks) {
      ForEachItem(b, forest.cfg.blocks[b], b == loop.header, [&](uint32_t id) {
        for (ir::Reg d : Item(id).dsts) Stamp(d.id) = l;
      });
    }
    for (uint32_t b : loop.blocks) {
      ForEachItem(b, forest.cfg.blocks[b], b == loop.header, [&](uint32_t id) {
        ir::Instruction& inst = Item(id);
        if (Cheap(inst) || !Hoistable(inst)) return;
        // Every operand defined outside the loop, or by a cheap value inside it.
        bool invariant = true;
        ForEachUseId(inst, [&](uint32_t& r) {
          if (Stamp(r) == l && !(DefItem(r) != kNone && Cheap(Item(DefItem(r))))) invariant = false;
        });
        if (!invariant || Growth(inst, l) > 0) return;
        ForEachUseId(inst, [&](uint32_t& r) {
          if (Stamp(r) == l) {
            if (Uses(r) < kMany) --Uses(r);
            r = CloneInto(r, entry, slot, l);
            if (Uses(r) < kMany) ++Uses(r);
          }
        });
        Dest(id) = entry;
        planted_[slot].push_back(id);
        for (ir::Reg d : inst.dsts) Stamp(d.id) = kNone;
        ++moved_;
      });
    }
  }

  // How many more 32-bit registers (a predicate counts one) stay live
  // through the loop if inst moves in front of it: its results do, and the
  // registers it reads that nothing else reads no longer do.
  int Growth(const ir::Instruction& inst, uint32_t l) {
    int growth = 0;
    for (ir::Reg d : inst.dsts) growth += Units(d.id);
    absl::InlinedVector<uint32_t, 4> seen;
    for (const ir::Operand& op : inst.srcs) {
      if (!op.reads_reg() || Stamp(op.id) == l || std::find(seen.begin(), seen.end(), op.id) != seen.end()) continue;
      seen.push_back(op.id);
      if (Uses(op.id) == 1) growth -= Units(op.id);
    }
    return growth;
  }
  int Units(uint32_t r) const { return std::max(1, ir::TypeBits(kernel_.regs[r].type) / 32); }

  // A copy at `entry` (planted in list `slot`) of the cheap instruction
  // defining r (one per loop).
  uint32_t CloneInto(uint32_t r, uint32_t entry, uint32_t slot, uint32_t l) {
    auto [it, added] = clone_of_.try_emplace(r, kNone, kNone);
    if (!added && it->second.second == l) return it->second.first;
    ir::Instruction copy = Item(DefItem(r));
    const uint32_t reg = static_cast<uint32_t>(kernel_.regs.size());
    ir::RegInfo info = kernel_.regs[r];
    kernel_.regs.push_back(std::move(info));
    copy.dsts[0] = ir::Reg{reg};
    const uint32_t id = n_ + static_cast<uint32_t>(clones_.size());
    clones_.push_back(std::move(copy));
    clone_dest_.push_back(entry);
    planted_[slot].push_back(id);
    clone_regs_.push_back(CloneReg{kNone, id, 0});
    it->second = {reg, l};
    return reg;
  }

  // Moves the hoisted instructions and the clones to their entry points,
  // in place (BodyEdit). They go to the end of the block falling into the
  // loop's header, and they are straight-line code: the analyses follow
  // the edit (the CFG keeps its shape, the value table its values, with
  // the clones' registers as new ones).
  void Rebuild() {
    BodyEdit edit(kernel_.body);
    for (const auto& [i, slot] : entries_) {
      for (uint32_t id : planted_[slot]) {
        if (Dest(id) != i) continue;
        edit.InsertBefore(i, std::move(Item(id)));
        if (id < n_) edit.Drop(id);
      }
    }
    analyses_.ApplyEdit(edit, kernel_);
  }

  ir::Kernel& kernel_;
  Analyses& analyses_;
  const uint32_t n_;
  static constexpr uint8_t kMany = UINT8_MAX;  // Uses(): at least this many, for good

  struct CloneReg {
    uint32_t stamp;
    uint32_t def_item;
    uint8_t uses;
  };

  const Values* values_ = nullptr;
  uint32_t nregs_ = 0;  // the registers before any clone
  std::vector<ir::Instruction> clones_;
  std::vector<uint32_t> dest_;        // by body index: the entry point it moved to; kNone: in place
  std::vector<uint32_t> clone_dest_;  // the same by clone
  std::vector<std::pair<uint32_t, uint32_t>> entries_;  // (loop entry point, its list in planted_), sorted
  std::vector<std::vector<uint32_t>> planted_;  // items moved in front of an entry point, in order
  std::vector<uint32_t> slot_of_block_;  // by block: its list in planted_ when it is a loop's header with an entry point
  std::vector<uint32_t> stamp_;   // by register: the loop being scanned that defines it
  std::vector<uint8_t> use_count_;  // by register: operand slots reading it, up to kMany
  std::vector<CloneReg> clone_regs_;  // by clone register - nregs_
  // By register defined by a cheap instruction: its copy, and the loop the copy was made for.
  absl::flat_hash_map<uint32_t, std::pair<uint32_t, uint32_t>> clone_of_;
  size_t moved_ = 0;
};

}  // namespace

size_t HoistLoopInvariants(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return Hoister(kernel, analyses).Run();
}

size_t HoistLoopInvariants(ir::Kernel& kernel, Analyses& analyses) { return Hoister(kernel, analyses).Run(); }

}  // namespace ptxforge::passes
