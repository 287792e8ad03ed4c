// Natural loops of a kernel body and where code can be put before them.
#ifndef PTXFORGE_PASSES_LOOPS_H_
#define PTXFORGE_PASSES_LOOPS_H_

#include <cstdint>
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

// Brings the body into the caches ahead of a pass that visits the loops in
// order: Before(l), called before the pass works on forest.loops[l], reads
// (InstructionList::Touch) the instructions from the start of that loop's
// span (or where the last read stopped, if later) up to kAhead past its
// end, when the loop is in a nest (see loops.cc). Loops are visited innermost
// first, so a pass's own reads jump backwards within each nest, from one
// dependent load to the next, and at a million instructions each jump
// missed the caches: on nests of three loops a third of strength
// reduction's time was the first read of each instruction. Reading in
// address order ahead of the pass lets the processor fetch many lines at
// once; reading only the loop about to be visited saved little.
class LoopReadAhead {
 public:
  // 128 instructions (15 KB): a few loops' worth, well inside the L1 cache
  // (64 and 256 measured the same; 1024 a little slower).
  static constexpr uint32_t kAhead = 128;
  // Bodies of fewer instructions (1 MB) stay in the L2 cache: no reads.
  static constexpr uint32_t kFrom = 8192;

  LoopReadAhead(const ir::Kernel& kernel, const LoopForest& forest)
      : kernel_(kernel), forest_(forest), read_(kernel.body.size() < kFrom ? kernel.body.size() : 0) {}
  void Before(size_t l);

 private:
  const ir::Kernel& kernel_;
  const LoopForest& forest_;
  size_t read_;  // the instructions before this one were read (all of a small body)
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_LOOPS_H_
