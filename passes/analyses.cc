// Analyses shared by the passes of one pipeline run.
#include "passes/analyses.h"

#include <algorithm>
#include <utility>

#include "ir/strings.h"

namespace ptxforge::passes {

namespace {

bool SameCfg(const ir::Cfg& a, const ir::Cfg& b) {
  if (a.blocks.size() != b.blocks.size() || a.block_of_label != b.block_of_label || a.pred_list != b.pred_list ||
      a.backward_edge != b.backward_edge) {
    return false;
  }
  for (size_t i = 0; i < a.blocks.size(); ++i) {
    const ir::BasicBlock& x = a.blocks[i];
    const ir::BasicBlock& y = b.blocks[i];
    if (x.begin != y.begin || x.end != y.end || x.succs != y.succs || x.pred_begin != y.pred_begin ||
        x.pred_end != y.pred_end) {
      return false;
    }
  }
  return true;
}

bool SameLoops(const LoopForest& a, const LoopForest& b) {
  if (a.rank != b.rank || a.loops.size() != b.loops.size()) return false;
  for (size_t i = 0; i < a.loops.size(); ++i) {
    const Loop& x = a.loops[i];
    const Loop& y = b.loops[i];
    if (x.header != y.header || x.blocks != y.blocks || x.entry_point != y.entry_point) return false;
  }
  return true;
}

}  // namespace

const ir::Cfg& Analyses::cfg() {
  if (!has_cfg_) {
    if (summary_ && !summary_->Has(ir::Opcode::kLabel) && !summary_->Has(ir::Opcode::kBra) && !summary_->early_end) {
      // No label, no branch, and a ret or exit at most at the end: the body
      // is one block with no edges, which Cfg::Build would find by reading
      // all of it.
      ir::Cfg cfg;
      cfg.block_of_label.assign(kernel_->labels.size(), UINT32_MAX);
      const uint32_t n = static_cast<uint32_t>(kernel_->body.size());
      if (n > 0) cfg.blocks.push_back(ir::BasicBlock{0, n, {}, 0, 0});
      forest_.cfg = std::move(cfg);
    } else {
      forest_.cfg = ir::Cfg::Build(*kernel_);
    }
    has_cfg_ = true;
  }
  return forest_.cfg;
}

const std::vector<uint32_t>& Analyses::idom() {
  if (!idom_) idom_ = ir::ImmediateDominators(cfg());
  return *idom_;
}

const LoopForest& Analyses::loops() {
  if (!has_loops_) {
    forest_.rank.clear();
    forest_.loops.clear();
    // Without a branch there is no loop; without a CFG at hand, one read
    // of the body decides whether one is needed.
    const bool maybe = summary_ ? summary_->Has(ir::Opcode::kBra) : true;
    if (maybe && (has_cfg_ ? ir::HasBackwardEdge(forest_.cfg) : HasBackwardBranch(*kernel_))) {
      cfg();
      FindLoopsIn(*kernel_, idom(), forest_);
    }
    has_loops_ = true;
  }
  return forest_;
}

const Values& Analyses::values() {
  if (!values_) {
    BodySummary summary;
    if (has_cfg_) {
      values_.emplace(*kernel_, &summary);
    } else {
      // Every pipeline run needs the CFG too (CSE, register counting): it
      // is built in the same read of the body.
      ir::CfgBuilder builder(*kernel_);
      values_.emplace(*kernel_, &summary, &builder);
      forest_.cfg = builder.Finish();
      has_cfg_ = true;
    }
    summary_ = summary;
  }
  return *values_;
}

const BodySummary& Analyses::summary() {
  if (!summary_) values();
  return *summary_;
}

void Analyses::Invalidate() {
  has_cfg_ = false;
  has_loops_ = false;
  forest_ = LoopForest();
  idom_.reset();
  values_.reset();
  summary_.reset();
}

void Analyses::Trim() {
  // Most calls find nothing held that the later passes do not read: one
  // test of what is held against what is read (a test per analysis, each
  // going either way from call to call, was mispredicted on a first
  // codegen). The CFG is dropped only when neither it nor the dominators
  // or loops built on it are read, which this test covers too.
  const uint8_t held = (has_cfg_ ? analysis::kCfg : 0) | (idom_ ? analysis::kDominators : 0) |
                       (has_loops_ ? analysis::kLoops : 0) | (values_ ? analysis::kValues : 0);
  if ((held & ~read_later_) == 0) return;
  if (!(read_later_ & analysis::kValues)) values_.reset();
  if (!(read_later_ & analysis::kDominators)) idom_.reset();
  if (!(read_later_ & analysis::kLoops)) {
    has_loops_ = false;
    std::vector<uint32_t>().swap(forest_.rank);  // freed (assigning {} keeps the capacity)
    std::vector<Loop>().swap(forest_.loops);
  }
  if (!(read_later_ & (analysis::kCfg | analysis::kDominators | analysis::kLoops)) && has_cfg_) {
    has_cfg_ = false;
    has_loops_ = false;
    idom_.reset();
    forest_ = LoopForest();
  }
}

void Analyses::ApplyEdit(BodyEdit& edit, ir::Kernel& kernel) {
  Trim();
  if (!has_cfg_) {
    edit.Apply(kernel.body);
    Invalidate();
    return;
  }
  // What the inserted instructions add to the summary and the value table
  // is taken as they are put in (reading them again afterwards missed the
  // caches once each at a million instructions).
  EditMoves moves;
  std::vector<std::pair<uint32_t, uint32_t>> defs;
  edit.Apply(kernel.body, &moves, [&](uint32_t index, const ir::Instruction& inst) {
    if (summary_) summary_->Note(kernel, inst);
    if (values_) Values::AddDefinitions(kernel, index, inst, defs);
  });
  if (!moves.straight || !RemapBlocks(moves)) {
    Invalidate();
    return;
  }
  if (has_loops_) {
    // An entry point is its header's first instruction (its label); the
    // block falling into the header still does, through what was put at
    // its end.
    for (Loop& loop : forest_.loops) {
      if (loop.entry_point != Loop::kNone) loop.entry_point = forest_.cfg.blocks[loop.header].begin;
    }
  }
  if (values_) values_->AfterEdit(moves, defs, kernel.regs.size());
}

bool Analyses::RemapBlocks(const EditMoves& moves) {
  std::vector<ir::BasicBlock>& blocks = forest_.cfg.blocks;
  if (blocks.empty()) return moves.inserted.empty();
  // As edited. It is read only where something was inserted: with drops
  // alone this also serves before they are carried out (RemapAfterRemoval).
  const ir::InstructionList& body = kernel_->body;
  const uint32_t old_n = blocks.back().end;
  EditCursor at(moves);
  // Whether the old body[p - 1] (p > 0) ends a block: the dropped ones
  // never do; a kept one is right in front of what old position p starts.
  auto ends_block_before = [&](uint32_t p) { return !at.Dropped(p - 1) && ir::EndsBlock(body[at.Before(p) - 1]); };
  // Where what starts at old position p (a block's first instruction, or
  // the end) starts now. What was inserted in front of body[p] goes to the
  // block before when that block falls into p (then body[p] is a label),
  // and starts p's block when the block before ends in a branch or
  // terminator, unless body[p] is a label (a block of its own: false).
  bool ok = true;
  auto start = [&](uint32_t p) {
    const uint32_t before = at.Before(p), inserted = at.InsertedAt(p);
    if (inserted == 0) return before;
    if (!ends_block_before(p)) return before + inserted;
    if (p == old_n || (!at.Dropped(p) && body[before + inserted].op == ir::Opcode::kLabel)) ok = false;
    return before;
  };
  // What went in front of body[0] joins block 0, unless body[0] is a
  // label: then it is a block of its own (a block starts at index 0 and at
  // every label after it).
  if (const uint32_t first = at.InsertedAt(0); first > 0 && !at.Dropped(0) && body[first].op == ir::Opcode::kLabel) {
    return false;
  }
  uint32_t begin = 0;
  for (size_t b = 0; b < blocks.size() && ok; ++b) {
    uint32_t end = 0;
    if (b + 1 < blocks.size()) {
      end = start(blocks[b].end);
    } else {
      start(old_n);  // whether what went at the end can join the last block
      end = at.Before(old_n) + at.InsertedAt(old_n);  // the new size
    }
    if (end <= begin) return false;  // every instruction of the block was dropped
    blocks[b].begin = begin;
    blocks[b].end = end;
    begin = end;
  }
  return ok;
}

void Analyses::BeforeDrops(std::span<const uint32_t> dropped) {
  Trim();
  if (!has_cfg_ && !values_) {
    has_loops_ = false;
    return;
  }
  // Whether each kind of analysis can follow: the CFG when none of the
  // dropped instructions is a label, branch or terminator; the value table
  // when each one's definitions were values it defined.
  const ir::Kernel& kernel = *kernel_;
  bool cfg_ok = has_cfg_, values_ok = values_.has_value();
  for (const uint32_t i : dropped) {
    const ir::Instruction& inst = kernel.body[i];
    cfg_ok &= inst.op != ir::Opcode::kLabel && !ir::EndsBlock(inst);
    if (values_ok) {
      for (ir::Reg d : inst.dsts) values_ok &= values_->Def(d) == i;
    }
  }
  RemapAfterRemoval(dropped, cfg_ok, values_ok);
}

void Analyses::RemapAfterRemoval(std::span<const uint32_t> dropped, bool straight, bool values_ok) {
  // Loops name body indices (entry points): found again from the CFG when asked.
  has_loops_ = false;
  std::vector<uint32_t>().swap(forest_.rank);
  std::vector<Loop>().swap(forest_.loops);
  if (dropped.empty()) return;
  // A deletion is an edit with drops only: what ApplyEdit's remapping
  // (RemapBlocks, Values::AfterEdit) does with nothing inserted, in loops
  // that do not ask about insertions (a first codegen's CSE deletes: each
  // question was branches more on its path).
  if (has_cfg_ && !(straight && DropFromBlocks(dropped))) {
    has_cfg_ = false;
    forest_ = LoopForest();
    idom_.reset();
  }
  if (values_ && values_ok) {
    values_->AfterRemoval(dropped);
  } else {
    values_.reset();
  }
}

bool Analyses::DropFromBlocks(std::span<const uint32_t> dropped) {
  // Blocks are contiguous: each one's new end, the old end less the drops
  // in front of it, is the next one's new begin. A block left empty
  // changes the graph's shape (RemapBlocks returns false for it too).
  std::vector<ir::BasicBlock>& blocks = forest_.cfg.blocks;
  const size_t nd = dropped.size();
  size_t k = 0;  // the drops in front of the current block's end
  uint32_t begin = 0;
  for (ir::BasicBlock& bb : blocks) {
    while (k < nd && dropped[k] < bb.end) ++k;
    const uint32_t end = bb.end - static_cast<uint32_t>(k);
    if (end <= begin) return false;
    bb.begin = begin;
    bb.end = end;
    begin = end;
  }
  return true;
}

absl::Status Analyses::Check() const {
  const ir::Kernel& kernel = *kernel_;
  if (has_cfg_ && !SameCfg(forest_.cfg, ir::Cfg::Build(kernel))) {
    return absl::InternalError("the shared control-flow graph is stale (the pass did not invalidate it)");
  }
  if (idom_ && *idom_ != ir::ImmediateDominators(ir::Cfg::Build(kernel))) {
    return absl::InternalError("the shared dominators are stale (the pass did not invalidate them)");
  }
  if (summary_) {
    BodySummary fresh;
    Values unused(kernel, &fresh);
    if (!summary_->Covers(fresh)) {
      return absl::InternalError("the shared body summary is stale (an instruction was rewritten without NoteOpcode or NoteMade)");
    }
  }
  if (has_loops_ && !SameLoops(forest_, FindLoops(kernel))) {
    return absl::InternalError("the shared loops are stale (the pass did not invalidate them)");
  }
  if (values_ && !(*values_ == Values(kernel))) {
    return absl::InternalError("the shared value table is stale (the pass did not invalidate it)");
  }
  return absl::OkStatus();
}

}  // namespace ptxforge::passes
