// Basic blocks and edges of a kernel body, and a small bit set for dataflow.
#ifndef PTXFORGE_IR_CFG_H_
#define PTXFORGE_IR_CFG_H_

#include <cstdint>
#include <span>
#include <vector>

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

// A block's successors: at most two (a branch's target and the fall-through
// to the next block; a block ends at its one branch or terminator), held in
// the block itself. A range of uint32_t block indices.
class Successors {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  const uint32_t* begin() const { return s_; }
  const uint32_t* end() const { return s_ + size(); }
  size_t size() const { return (s_[0] != kNone) + (s_[1] != kNone); }
  bool empty() const { return s_[0] == kNone; }
  uint32_t operator[](size_t k) const { return s_[k]; }
  // At most twice per block (CfgBuilder).
  void push_back(uint32_t b) { s_[s_[0] == kNone ? 0 : 1] = b; }
  friend bool operator==(const Successors&, const Successors&) = default;

 private:
  uint32_t s_[2] = {kNone, kNone};
};

// 24 bytes: a kernel of 200k blocks keeps 4.8 MB of blocks, which every
// pass that walks the graph reads (with two inlined vectors for the edges
// a block was 56 bytes). Predecessors are a range of Cfg::pred_list.
struct BasicBlock {
  uint32_t begin = 0;  // first instruction index
  uint32_t end = 0;    // one past the last
  Successors succs;    // in the order: branch target, then fall-through
  uint32_t pred_begin = 0;  // this block's predecessors are
  uint32_t pred_end = 0;    // Cfg::pred_list[pred_begin, pred_end)
};

// Blocks start at index 0, at every label and after every branch or
// terminator. A guarded branch or terminator also falls through.
struct Cfg {
  std::vector<BasicBlock> blocks;
  // Every block's predecessors, in increasing order, block after block
  // (one array for the whole graph: no allocation per block).
  std::vector<uint32_t> pred_list;
  std::vector<uint32_t> block_of_label;  // by label id; UINT32_MAX if unbound
  // Whether some block has a successor at or before it (HasBackwardEdge),
  // found while the edges are made.
  bool backward_edge = false;

  // The predecessors of block b, in increasing order.
  std::span<const uint32_t> preds(size_t b) const {
    return std::span<const uint32_t>(pred_list.data() + blocks[b].pred_begin, blocks[b].pred_end - blocks[b].pred_begin);
  }

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
      cfg_.blocks.push_back(BasicBlock{i, i, {}, 0, 0});
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
// block comes before it. Kept in the graph (cfg.backward_edge): no read of
// the blocks.
inline bool HasBackwardEdge(const Cfg& cfg) { return cfg.backward_edge; }

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
