// Natural loops of a kernel body and where code can be put before them.
#ifndef PTXFORGE_PASSES_LOOPS_H_
#define PTXFORGE_PASSES_LOOPS_H_

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "ir/cfg.h"
#include "ir/kernel.h"

namespace ptxforge::passes {

// A natural loop: a header block that dominates the sources of the edges
// back into it (the latches), and every block that reaches a latch without
// passing the header. Loops sharing a header are one loop.
struct Loop {
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t header = 0;
  // The loop's blocks in reverse post order (the header first), so that a
  // block comes after every block of the loop that dominates it.
  std::vector<uint32_t> blocks;
  // Where code that must run once before the loop goes: the body index of
  // the header's first instruction (its label), when the header has exactly
  // one predecessor outside the loop, that predecessor ends right before the
  // header and enters it only by falling through (no branch of it targets
  // the header). Code inserted at that index runs exactly when the loop is
  // entered. kNone otherwise (no preheader is created: such loops are left
  // alone).
  uint32_t entry_point = kNone;
};

struct LoopForest {
  ir::Cfg cfg;  // empty from FindLoops when the kernel has no loop
  std::vector<uint32_t> rank;  // position of each block in reverse post order; kNone: unreachable
  // Innermost first: a loop comes before every loop that contains it.
  std::vector<Loop> loops;
};

// Finds the natural loops of a kernel. Linear in the body plus the sum of
// the loops' sizes (each block is listed once per loop containing it). A
// kernel without a branch back to an earlier label has none, and gets an
// empty forest (no cfg either) after one read of the body.
LoopForest FindLoops(const ir::Kernel& kernel);
// Whether some branch targets a label bound at or before it (FindLoops'
// first test: without one the kernel has no loop).
bool HasBackwardBranch(const ir::Kernel& kernel);
// The same from the kernel's CFG, without reading the body: ir::HasBackwardEdge.
// FindLoops' work on a forest whose `cfg` is already the kernel's, given
// its immediate dominators (ir::ImmediateDominators): fills `rank` and
// `loops`. What passes/analyses.h uses to share one CFG between passes.
void FindLoopsIn(const ir::Kernel& kernel, const std::vector<uint32_t>& idom, LoopForest& forest);

// An edit of a kernel body that the loop passes make: instructions dropped
// and instructions inserted, applied in place. The body is rearranged
// within its own storage (grown once if the edit adds instructions)
// instead of being rebuilt in a second vector: at a million instructions a
// fresh body is over a hundred megabytes of new pages, and faulting them in
// cost more than the passes' own work (measured on scale_bench's loop
// shapes: it made licm and strength reduction 2-3x slower per instruction
// at 1M than at 1k).
class BodyEdit {
 public:
  // For a body of n instructions; indices name them as they are before Apply.
  explicit BodyEdit(size_t n) : drop_(n, false) {}
  // Drops body[i] (its contents are not read again: it may be moved from).
  void Drop(uint32_t i) {
    if (!drop_[i]) ++dropped_;
    drop_[i] = true;
  }
  // Puts inst in front of body[i] (i == body size: at the end), after what
  // was put there before.
  void InsertBefore(uint32_t i, ir::Instruction inst) { inserts_.push_back({i, 1, std::move(inst)}); }
  // Puts inst right after body[i], before what is put in front of body[i + 1].
  void InsertAfter(uint32_t i, ir::Instruction inst) { inserts_.push_back({i + 1, 0, std::move(inst)}); }
  bool empty() const { return dropped_ == 0 && inserts_.empty(); }
  // The body becomes, for each i in order: what was inserted after body[i - 1],
  // what was inserted before body[i], then body[i] unless dropped. Linear in
  // the body (plus sorting the insertions' indices).
  void Apply(ir::InstructionList& body);

 private:
  struct Insert {
    uint32_t pos;    // in front of body[pos]
    uint32_t phase;  // 0: after body[pos - 1]; 1: before body[pos]
    ir::Instruction inst;
  };
  std::vector<bool> drop_;
  size_t dropped_ = 0;
  // A deque: growing it never holds two copies of the inserted
  // instructions, as a vector's doubling does (strength reduction inserts
  // two per loop: at a million instructions of loops that doubling was the
  // codegen's peak heap).
  std::deque<Insert> inserts_;
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_LOOPS_H_
