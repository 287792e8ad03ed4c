// Loop-invariant code motion over natural loops, innermost first.
#include "passes/licm.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "ir/semantics.h"
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
    const size_t nregs = kernel_.regs.size();
    const Values& values = analyses_.values();
    dest_.assign(n_, kNone);
    slot_.assign(n_ + 1, kNone);
    stamp_.assign(nregs, kNone);
    def_item_.resize(nregs);
    for (uint32_t r = 0; r < nregs; ++r) def_item_[r] = values.Def(ir::Reg{r});
    clone_of_.assign(nregs, kNone);
    clone_loop_.assign(nregs, kNone);
    use_count_.assign(nregs, 0);
    for (ir::Instruction& inst : kernel_.body) ForEachUseId(inst, [&](uint32_t& r) { ++use_count_[r]; });
    for (const Loop& loop : forest.loops) {
      if (loop.entry_point == Loop::kNone) continue;
      slot_[loop.entry_point] = static_cast<uint32_t>(planted_.size());
      planted_.emplace_back();
    }
    for (uint32_t l = 0; l < forest.loops.size(); ++l) {
      const Loop& loop = forest.loops[l];
      if (loop.entry_point != Loop::kNone) HoistFrom(forest, loop, l);
    }
    if (moved_ == 0) return 0;
    // Instructions move and registers are added: nothing shared stays true.
    analyses_.Invalidate();
    Rebuild();
    return moved_;
  }

 private:
  ir::Instruction& Item(uint32_t id) { return id < n_ ? kernel_.body[id] : clones_[id - n_]; }

  // Calls f(item) for the items of block bb in order: those planted in
  // front of a loop header that starts bb (they belong to the block falling
  // into it, which comes earlier in reverse post order), unless
  // skip_planted, then bb's own instructions that were not moved.
  template <typename F>
  void ForEachItem(const ir::BasicBlock& bb, bool skip_planted, F&& f) {
    if (!skip_planted && slot_[bb.begin] != kNone) {
      const std::vector<uint32_t>& p = planted_[slot_[bb.begin]];
      for (size_t k = 0; k < p.size(); ++k) {  // f may append to another list, never to this one
        if (dest_[p[k]] == bb.begin) f(p[k]);
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
      if (d.id >= def_item_.size() || def_item_[d.id] == kNone) return false;  // not a value
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

    // Registers the loop defines.
    for (uint32_t b : loop.blocks) {
      ForEachItem(forest.cfg.blocks[b], b == loop.header, [&](uint32_t id) {
        for (ir::Reg d : Item(id).dsts) stamp_[d.id] = l;
      });
    }
    for (uint32_t b : loop.blocks) {
      ForEachItem(forest.cfg.blocks[b], b == loop.header, [&](uint32_t id) {
        ir::Instruction& inst = Item(id);
        if (Cheap(inst) || !Hoistable(inst)) return;
        // Every operand defined outside the loop, or by a cheap value inside it.
        bool invariant = true;
        ForEachUseId(inst, [&](uint32_t& r) {
          if (stamp_[r] == l && !(def_item_[r] != kNone && Cheap(Item(def_item_[r])))) invariant = false;
        });
        if (!invariant || Growth(inst, l) > 0) return;
        ForEachUseId(inst, [&](uint32_t& r) {
          if (stamp_[r] == l) {
            --use_count_[r];
            r = CloneInto(r, entry, l);
            ++use_count_[r];
          }
        });
        dest_[id] = entry;
        planted_[slot_[entry]].push_back(id);
        for (ir::Reg d : inst.dsts) stamp_[d.id] = kNone;
        ++moved_;
      });
    }
  }

  // How many more 32-bit registers (a predicate counts one) stay live
  // through the loop if inst moves in front of it: its results do, and the
  // registers it reads that nothing else reads no longer do.
  int Growth(const ir::Instruction& inst, uint32_t l) const {
    int growth = 0;
    for (ir::Reg d : inst.dsts) growth += Units(d.id);
    absl::InlinedVector<uint32_t, 4> seen;
    for (const ir::Operand& op : inst.srcs) {
      if (!op.reads_reg() || stamp_[op.id] == l || std::find(seen.begin(), seen.end(), op.id) != seen.end()) continue;
      seen.push_back(op.id);
      if (use_count_[op.id] == 1) growth -= Units(op.id);
    }
    return growth;
  }
  int Units(uint32_t r) const { return std::max(1, ir::TypeBits(kernel_.regs[r].type) / 32); }

  // A copy at `entry` of the cheap instruction defining r (one per loop).
  uint32_t CloneInto(uint32_t r, uint32_t entry, uint32_t l) {
    if (clone_loop_[r] == l) return clone_of_[r];
    ir::Instruction copy = Item(def_item_[r]);
    const uint32_t reg = static_cast<uint32_t>(kernel_.regs.size());
    ir::RegInfo info = kernel_.regs[r];
    kernel_.regs.push_back(std::move(info));
    copy.dsts[0] = ir::Reg{reg};
    const uint32_t id = n_ + static_cast<uint32_t>(clones_.size());
    clones_.push_back(std::move(copy));
    dest_.push_back(entry);
    planted_[slot_[entry]].push_back(id);
    stamp_.push_back(kNone);
    def_item_.push_back(id);
    clone_of_.push_back(kNone);
    clone_loop_.push_back(kNone);
    use_count_.push_back(0);
    clone_of_[r] = reg;
    clone_loop_[r] = l;
    return reg;
  }

  // Moves the hoisted instructions and the clones to their entry points,
  // in place (BodyEdit).
  void Rebuild() {
    BodyEdit edit(n_);
    for (uint32_t i = 0; i < n_; ++i) {
      if (slot_[i] == kNone) continue;
      for (uint32_t id : planted_[slot_[i]]) {
        if (dest_[id] != i) continue;
        edit.InsertBefore(i, std::move(Item(id)));
        if (id < n_) edit.Drop(id);
      }
    }
    edit.Apply(kernel_.body);
  }

  ir::Kernel& kernel_;
  Analyses& analyses_;
  const uint32_t n_;
  std::vector<ir::Instruction> clones_;
  std::vector<uint32_t> dest_;                  // by item: the entry point it moved to; kNone: in place
  std::vector<uint32_t> slot_;                  // by body index: its list in planted_ (loop entry points); kNone
  std::vector<std::vector<uint32_t>> planted_;  // items moved in front of an entry point, in order
  std::vector<uint32_t> stamp_;                 // by register: the loop being scanned that defines it
  std::vector<uint32_t> def_item_;              // by register: the item defining it, if a value
  std::vector<uint32_t> clone_of_, clone_loop_; // by register: its cheap copy for loop clone_loop_
  std::vector<uint32_t> use_count_;             // by register: instructions reading it (an operand slot each)
  size_t moved_ = 0;
};

}  // namespace

size_t HoistLoopInvariants(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return Hoister(kernel, analyses).Run();
}

size_t HoistLoopInvariants(ir::Kernel& kernel, Analyses& analyses) { return Hoister(kernel, analyses).Run(); }

}  // namespace ptxforge::passes
