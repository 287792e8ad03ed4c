// Basic blocks and edges of a kernel body, and a small bit set for dataflow.
#ifndef PTXFORGE_IR_CFG_H_
#define PTXFORGE_IR_CFG_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "ir/kernel.h"

namespace ptxforge::ir {

// A dense set of small integers (register ids).
class BitSet {
 public:
  BitSet() = default;
  explicit BitSet(size_t n, bool all = false) : words_((n + 63) / 64, all ? ~uint64_t{0} : 0), size_(n) {
    if (all) ClearTail();
  }
  void Set(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  void Reset(size_t i) { words_[i / 64] &= ~(uint64_t{1} << (i % 64)); }
  bool Test(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  // Each returns whether this set changed.
  bool UnionWith(const BitSet& o);
  bool IntersectWith(const BitSet& o);
  size_t size() const { return size_; }
  friend bool operator==(const BitSet&, const BitSet&) = default;
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      for (uint64_t bits = words_[w]; bits; bits &= bits - 1) f(w * 64 + __builtin_ctzll(bits));
    }
  }

 private:
  void ClearTail() {
    if (size_ % 64 && !words_.empty()) words_.back() &= (uint64_t{1} << (size_ % 64)) - 1;
  }
  std::vector<uint64_t> words_;
  size_t size_ = 0;
};

struct BasicBlock {
  uint32_t begin = 0;  // first instruction index
  uint32_t end = 0;    // one past the last
  absl::InlinedVector<uint32_t, 2> succs;
  absl::InlinedVector<uint32_t, 2> preds;
};

// Blocks start at index 0, at every label and after every branch or
// terminator. A guarded branch or terminator also falls through.
struct Cfg {
  std::vector<BasicBlock> blocks;
  std::vector<uint32_t> block_of_label;  // by label id; UINT32_MAX if unbound

  static Cfg Build(const Kernel& kernel);
};

// Cfg::Build in steps, for a caller that reads the body for other reasons
// too and builds the graph in the same read (passes/analyses.h: with the
// value table): Add every instruction in order, then Finish.
class CfgBuilder {
 public:
  explicit CfgBuilder(const Kernel& kernel);
  void Add(uint32_t i, const Instruction& inst) {
    if (starts_block_ || inst.op == Opcode::kLabel) {
      cfg_.blocks.push_back(BasicBlock{i, i, {}, {}});
      exits_.emplace_back();
    }
    cfg_.blocks.back().end = i + 1;
    if (inst.op == Opcode::kLabel && !inst.srcs.empty() && inst.srcs[0].id < cfg_.block_of_label.size() &&
        cfg_.block_of_label[inst.srcs[0].id] == UINT32_MAX) {
      cfg_.block_of_label[inst.srcs[0].id] = static_cast<uint32_t>(cfg_.blocks.size() - 1);
    }
    starts_block_ = EndsBlock(inst);
    if (starts_block_) {  // the last instruction of its block
      if (inst.op == Opcode::kBra) exits_.back().label = inst.srcs.empty() ? UINT32_MAX : inst.srcs[0].id;
      exits_.back().falls_through = inst.guarded();
    }
  }
  // The graph of the instructions added (edges from the blocks' exits).
  Cfg Finish();

 private:
  struct Exit {
    uint32_t label = UINT32_MAX;  // the branch target's label, if the block ends in bra
    bool falls_through = true;
  };
  Cfg cfg_;
  std::vector<Exit> exits_;
  bool starts_block_ = true;
};

// The blocks reachable from block 0 in reverse post order (block 0 first).
std::vector<uint32_t> ReversePostOrder(const Cfg& cfg);

// Whether some block has a successor at or before it (only a branch's target
// can be: falling through goes to the next block). Without one the graph has
// no cycle and block order is a topological order: every predecessor of a
// block comes before it.
bool HasBackwardEdge(const Cfg& cfg);

// Immediate dominators, by Cooper, Harvey and Kennedy's iterative algorithm
// over reverse post order (one or two sweeps for structured code): idom[0] is
// 0, and blocks that block 0 cannot reach get UINT32_MAX.
std::vector<uint32_t> ImmediateDominators(const Cfg& cfg);

// The dominator tree from ImmediateDominators' result, as flattened child
// lists: the children of block b, in block order, are
// children[child_begin[b]] up to children[child_begin[b + 1]].
struct DominatorTree {
  std::vector<uint32_t> child_begin;  // one per block, plus one
  std::vector<uint32_t> children;

  static DominatorTree FromIdom(const std::vector<uint32_t>& idom);
};

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_CFG_H_
