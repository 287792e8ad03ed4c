// Analyses shared by the passes of one pipeline run: the control-flow graph,
// its immediate dominators, the natural loops and the value table, computed
// at first use and kept for the following passes while they stay true.
#ifndef PTXFORGE_PASSES_ANALYSES_H_
#define PTXFORGE_PASSES_ANALYSES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ir/cfg.h"
#include "ir/kernel.h"
#include "passes/body_edit.h"
#include "passes/loops.h"
#include "passes/pass.h"
#include "passes/values.h"

namespace ptxforge::passes {

// One kernel's analyses, as Pipeline::Run hands them from pass to pass: each
// pass that builds a CFG, dominators, loops or the value table asks for them
// here, so that a pipeline run builds each once for as long as no pass
// changes what it describes (before, every pass rebuilt its own: four CFGs
// per codegen).
//
// What a pass must tell it when it changes the body:
// - in-place rewrites that keep every instruction's index, its definitions
//   (dsts), its guard's presence and every label, branch and terminator
//   (constant folding, identities: an add becoming a mov) need only
//   NoteOpcode for the opcodes they make;
// - deleting instructions goes through RemoveMarked(kernel, dead, this)
//   (passes/values.h), which updates the CFG and the value table in place
//   when only straight-line instructions went and no block emptied, and
//   drops them otherwise;
// - inserting, moving and deleting instructions with a BodyEdit goes
//   through ApplyEdit(edit, kernel), which follows the edit when it keeps
//   the graph's shape and drops everything otherwise;
// - anything else (a guard removed, new registers) calls Invalidate().
// A pass that does not know about Analyses (Pass::Run(kernel) only) may
// change anything: the pipeline invalidates after it. With verify_each on,
// the pipeline also checks after every pass that what is kept equals a
// fresh computation (Check), so a pass that forgets to invalidate fails
// the tests that turn it on.
class Analyses {
 public:
  explicit Analyses(const ir::Kernel& kernel) : kernel_(&kernel) {}
  Analyses(const Analyses&) = delete;
  Analyses& operator=(const Analyses&) = delete;

  const ir::Kernel& kernel() const { return *kernel_; }

  // ir::Cfg::Build(kernel) (without reading the body when summary() is at
  // hand and rules out labels, branches and an early exit: one block).
  const ir::Cfg& cfg();
  // ir::ImmediateDominators(cfg()).
  const std::vector<uint32_t>& idom();
  // FindLoops(kernel) (passes/loops.h), sharing cfg() and idom(); its `cfg`
  // member is empty when the kernel has no loop.
  const LoopForest& loops();
  // Values(kernel) (passes/values.h); builds cfg() in the same read of the
  // body when it is not at hand.
  const Values& values();
  // Which opcodes the body holds and whether any instruction is guarded
  // (BodySummary, passes/values.h), read with values(): passes that have
  // nothing to do on a body without their opcodes return without reading
  // it. It outlives deletions (it may say more than the body holds, never
  // less); a pass that rewrites an instruction into another opcode in place
  // calls NoteOpcode.
  const BodySummary& summary();
  // Whether summary() is at hand without reading the body.
  bool has_summary() const { return summary_.has_value(); }
  // A mov made may define a predicate or a register that is not mutable,
  // from a register or an immediate, and an instruction rewritten in place
  // may read immediates only: that is noted too.
  void NoteOpcode(ir::Opcode op) {
    if (!summary_) return;
    summary_->ops.set(static_cast<size_t>(op));
    summary_->mov_to_pred |= op == ir::Opcode::kMov;
    summary_->mov_to_fixed |= op == ir::Opcode::kMov;
    summary_->mov_imm_to_fixed |= op == ir::Opcode::kMov;
    summary_->imm_sources = true;
  }

  // Notes instructions rewritten in place from what they are now (`made`:
  // BodySummary::Note of each): precise where NoteOpcode(kMov) must assume
  // every kind of mov, a mov to a predicate among them, after which
  // dead-branch removal read the whole body for constant guards (at a
  // million instructions, a read of 120 MB).
  void NoteMade(const BodySummary& made) {
    if (summary_) summary_->Add(made);
  }

  // Drops everything (the body changed in a way nothing here follows).
  void Invalidate();
  // Applies `edit` to the body of `kernel` (the kernel these analyses are
  // of), and follows it without reading the body again when the CFG is at
  // hand and the edit keeps the graph's shape: every dropped and inserted
  // instruction is straight-line code (no label, branch or terminator), no
  // block is left empty, and nothing is inserted where it would start a
  // block of its own (after a block's branch or terminator and in front of
  // a label, in front of a label at index 0, or after the last block's).
  // Then the blocks shift, the
  // dominators stay, the loops keep their blocks and their entry points
  // shift, and the value table and summary take the edit in
  // (Values::AfterEdit says what the edit may do to definitions: each
  // dropped instruction's definitions must be values it was the one
  // definition of, as RemoveMarked checks for itself, and no inserted
  // instruction may define a register a kept one defines).
  // Otherwise everything is dropped. At a million instructions licm and
  // strength reduction each made the passes after them build the CFG, the
  // dominators, the loops and the value table again: three reads of the
  // body from memory.
  void ApplyEdit(BodyEdit& edit, ir::Kernel& kernel);
  // What the passes after the current one read (analysis::k* bits,
  // passes/pass.h; all unless told). Pipeline::Run tells it before each
  // pass. ApplyEdit and BeforeRemoval (RemoveMarked), which a pass calls
  // when it is done reading, first drop the analyses no later pass reads
  // instead of following the edit with them (Trim), and the pipeline trims
  // after each pass. So references to analyses taken before those calls
  // must not be used after them (as before, when a deletion could not be
  // followed), and a pass that reads again after one gets what was dropped
  // built again (dead branches' later steps, when licm and strength
  // reduction are off): after strength reduction the loops, the dominators and the value
  // table went on being updated and held through dce and register counting
  // (at a thousand instructions of nested loops, 19 bytes per instruction
  // more at register counting's peak).
  void SetReadLater(uint8_t kinds) { read_later_ = kinds; }
  // Drops what no later pass reads (the body summary stays: it is small).
  // The loops and the dominators keep the CFG they are of.
  void Trim();
  // What is at hand without computing (for tests).
  bool has_cfg() const { return has_cfg_; }
  bool has_dominators() const { return idom_.has_value(); }
  bool has_loops() const { return has_loops_; }
  bool has_values() const { return values_.has_value(); }
  // Called by RemoveMarked before it deletes the instructions with
  // is_dead(i): updates what it can (new instruction indices) and drops
  // the rest.
  template <typename F>
  void BeforeRemoval(F&& is_dead);
  // BeforeRemoval for a deletion of the instructions at `dropped` (body
  // indices, strictly increasing; RemoveDropped).
  void BeforeDrops(std::span<const uint32_t> dropped);

  // Whether what is kept equals a fresh computation on the kernel as it is
  // now; the error names the analysis that is stale.
  absl::Status Check() const;

 private:
  // After a deletion (BeforeRemoval, BeforeDrops) of the instructions at
  // `dropped` (increasing): `straight` says whether the CFG can follow
  // (none of them is a label, branch or terminator), `values_ok` whether
  // the value table can (each one's definitions were values it defined).
  void RemapAfterRemoval(std::span<const uint32_t> dropped, bool straight, bool values_ok);
  // The CFG's blocks after an edit (ApplyEdit); false when its shape changed.
  bool RemapBlocks(const EditMoves& moves);
  // RemapBlocks for an edit that only dropped `dropped` (increasing, none
  // a label, branch or terminator): false when a block emptied.
  bool DropFromBlocks(std::span<const uint32_t> dropped);

  const ir::Kernel* kernel_;
  uint8_t read_later_ = analysis::kAll;
  bool has_cfg_ = false;         // forest_.cfg holds the CFG
  bool has_loops_ = false;       // forest_'s rank and loops are computed
  LoopForest forest_;            // its cfg is the shared CFG
  std::optional<std::vector<uint32_t>> idom_;
  std::optional<Values> values_;
  std::optional<BodySummary> summary_;  // set with values_; kept when a deletion drops values_
};

template <typename F>
void Analyses::BeforeRemoval(F&& is_dead) {
  Trim();
  if (!has_cfg_ && !values_) {
    has_loops_ = false;
    return;
  }
  std::vector<uint32_t> dropped;  // the dead instructions
  const uint32_t n = static_cast<uint32_t>(kernel_->body.size());
  for (uint32_t i = 0; i < n; ++i) {
    if (is_dead(i)) dropped.push_back(i);
  }
  BeforeDrops(dropped);
}

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_ANALYSES_H_
