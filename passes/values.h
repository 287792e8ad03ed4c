// What the optimizer passes share: which registers are values (defined once,
// unconditionally), renaming uses, and deleting marked instructions.
#ifndef PTXFORGE_PASSES_VALUES_H_
#define PTXFORGE_PASSES_VALUES_H_

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "ir/cfg.h"
#include "ir/kernel.h"
#include "passes/body_edit.h"

namespace ptxforge::passes {

class Analyses;  // passes/analyses.h

// What kinds of instruction a body holds, for passes to find out in O(1)
// that they have nothing to do instead of reading the whole body (at a
// million instructions each read streams 120 MB from memory). It may say
// more than the body holds, never less: deleting instructions leaves it
// true, and a pass that turns an instruction into another opcode notes that
// opcode (Analyses::NoteOpcode).
struct BodySummary {
  std::bitset<ir::kNumOpcodes> ops;  // opcodes that occur
  bool any_guard = false;            // some instruction is guarded
  bool early_end = false;            // a branch, ret or exit comes before the last instruction
  bool mov_to_pred = false;          // a mov defines a predicate register (a constant guard's source)
  bool mov_to_fixed = false;         // an unguarded mov copies a register that is not mutable into another (a copy's candidate)
  bool mov_imm_to_fixed = false;     // a mov puts an immediate in a register that is not mutable (a known constant)
  bool imm_sources = false;          // an instruction other than mov reads immediates only (it may fold)
  bool Has(ir::Opcode op) const { return ops.test(static_cast<size_t>(op)); }
  // Adds what `inst`, an instruction of `kernel`, says, except early_end
  // (which depends on where it is).
  void Note(const ir::Kernel& kernel, const ir::Instruction& inst);
  // Adds what `other` says.
  void Add(const BodySummary& other) {
    ops |= other.ops;
    any_guard |= other.any_guard;
    early_end |= other.early_end;
    mov_to_pred |= other.mov_to_pred;
    mov_to_fixed |= other.mov_to_fixed;
    mov_imm_to_fixed |= other.mov_imm_to_fixed;
    imm_sources |= other.imm_sources;
  }
  // Whether this says at least what `fresh` (of the same body) says.
  bool Covers(const BodySummary& fresh) const {
    return (fresh.ops & ~ops).none() && (any_guard || !fresh.any_guard) && (early_end || !fresh.early_end) &&
           (mov_to_pred || !fresh.mov_to_pred) && (mov_to_fixed || !fresh.mov_to_fixed) &&
           (mov_imm_to_fixed || !fresh.mov_imm_to_fixed) && (imm_sources || !fresh.imm_sources);
  }
};

// A register is a *value* when it is not mutable and the body defines it
// exactly once, by an unguarded instruction that is not raw PTX. The
// verifier's must-defined check then makes that definition dominate every
// use, so the register holds the same bits at every use: a value can be
// replaced by an equal value or a constant everywhere. Mutable registers
// (loop-carried) are never values.
class Values {
 public:
  static constexpr uint32_t kNotAValue = UINT32_MAX;

  // `summary`, when given, is filled from the same read of the body, and
  // `cfg` is given every instruction (ir::CfgBuilder::Add): one read of the
  // body for all three.
  explicit Values(const ir::Kernel& kernel, BodySummary* summary = nullptr, ir::CfgBuilder* cfg = nullptr);
  // The index of r's one definition; kNotAValue when r is not a value.
  uint32_t Def(ir::Reg r) const { return r.id < def_.size() ? def_[r.id] : kNotAValue; }
  bool IsValue(ir::Reg r) const { return Def(r) != kNotAValue; }
  // After a BodyEdit (`moves`: what it did) that dropped and inserted
  // instructions, where each dropped instruction's definitions were values
  // it was the one definition of, and no inserted instruction defines a
  // register that a kept one defines (licm moves a definition, or copies
  // one into a new register; strength reduction drops reduced values and
  // its steps define new registers): the kept
  // definitions move to their new indices, dropped ones go, and each
  // register that inserted instructions define is a value of its one
  // definition there if it has one. `inserted` holds those definitions
  // (AddDefinitions, in any order); `nregs` is the kernel's number of
  // registers after the edit.
  void AfterEdit(const EditMoves& moves, std::vector<std::pair<uint32_t, uint32_t>>& inserted, size_t nregs);
  // AfterEdit for an edit that only dropped instructions (`dropped`, old
  // indices, increasing), under the same condition: the kept definitions
  // move down, the dropped ones go.
  void AfterRemoval(std::span<const uint32_t> dropped);
  // Adds to `defs` the definitions that `inst`, at body index `index`, makes:
  // (register, index), the index kNotAValue where the definition cannot
  // make a value (guarded, raw PTX, a mutable register).
  static void AddDefinitions(const ir::Kernel& kernel, uint32_t index, const ir::Instruction& inst,
                             std::vector<std::pair<uint32_t, uint32_t>>& defs);
  friend bool operator==(const Values&, const Values&) = default;

 private:
  std::vector<uint32_t> def_;
};

// The constant a value register holds: r is a value defined by
// `mov.T r, IMM` (its immediate's bits). nullopt otherwise.
std::optional<uint64_t> ConstantOf(const ir::Kernel& kernel, const Values& values, ir::Reg r);

// Calls f(uint32_t& id) for each register id an instruction reads (sources,
// address bases, the guard), so that it can rename it.
template <typename F>
void ForEachUseId(ir::Instruction& inst, F&& f) {
  for (ir::Operand& op : inst.srcs) {
    if (op.reads_reg()) f(op.id);
  }
  if (inst.guard.valid()) f(inst.guard.id);
}

// Register renaming with chains resolved (a -> b -> c reads as a -> c).
// Its table (4 bytes per register) is made at the first Set: a pass that
// renames nothing allocates nothing, and Apply then touches nothing. For up
// to 64 registers it is an array in the object (no allocation on a small
// kernel's first codegen).
class Renaming {
 public:
  explicit Renaming(size_t nregs) : nregs_(nregs) {}
  Renaming(const Renaming&) = delete;  // to_ may point into the object
  Renaming& operator=(const Renaming&) = delete;
  void Set(ir::Reg from, ir::Reg to) {
    if (n_ == 0) Make();
    to_[from.id] = to.id;
    ++count_;
  }
  // `from` stands for what `to` stands for now, unless that is `from`
  // itself: in code the entry cannot reach (where the verifier's
  // must-defined check has nothing to say) a value may be read above its
  // definition, and `e = d; d = e` would make a cycle. Returns whether it
  // linked.
  bool Link(ir::Reg from, ir::Reg to) {
    const uint32_t root = Find(to.id);
    if (root == from.id) return false;
    Set(from, ir::Reg{root});
    return true;
  }
  // Apply for a renaming none of whose targets is renamed itself (CSE: a
  // merged instruction's result reads as its leader's, and a leader is
  // never merged): one look-up per use, no chain to follow.
  void ApplyFlat(ir::Instruction& inst) {
    if (count_ == 0) return;
    const uint32_t* to = to_;
    const size_t n = n_;
    ForEachUseId(inst, [&](uint32_t& id) {
      if (id < n && to[id] != ir::Reg::kInvalidId) id = to[id];
    });
  }
  // How many renamings were set.
  size_t size() const { return count_; }
  // What r stands for now.
  uint32_t Find(uint32_t r);
  // Renames every use in `inst`. Writes only the ids that change, so that
  // a sweep over a body with nothing to rename leaves its memory clean (at
  // a million instructions, writing every id back cost a write-back of the
  // whole body).
  void Apply(ir::Instruction& inst) {
    if (count_ == 0) return;
    ForEachUseId(inst, [&](uint32_t& id) {
      const uint32_t to = Find(id);
      if (to != id) id = to;
    });
  }

 private:
  void Make() {
    if (nregs_ > std::size(inline_)) {
      heap_ = std::make_unique_for_overwrite<uint32_t[]>(nregs_);
      to_ = heap_.get();
    }
    std::fill_n(to_, nregs_, ir::Reg::kInvalidId);
    n_ = nregs_;
  }

  size_t nregs_;
  uint32_t* to_ = inline_;
  size_t n_ = 0;  // the table's size: 0 until the first Set, then nregs_
  std::unique_ptr<uint32_t[]> heap_;
  uint32_t inline_[64];
  size_t count_ = 0;
};

// Deletes the instructions marked in `dead` (by body index), keeping the
// order of the others. Returns how many went. `analyses`, when given, are
// updated for the deletion (or dropped where they cannot follow it).
size_t RemoveMarked(ir::Kernel& kernel, const std::vector<bool>& dead, Analyses* analyses = nullptr);
// RemoveMarked for the instructions at `dropped` (body indices, strictly
// increasing): no bitmap of the body to make and read.
size_t RemoveDropped(ir::Kernel& kernel, std::span<const uint32_t> dropped, Analyses* analyses = nullptr);

// `mov.T dst, src`: what a simplified instruction becomes. T is dst's type.
void MakeMove(const ir::Kernel& kernel, ir::Instruction& inst, ir::Operand src);

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_VALUES_H_
