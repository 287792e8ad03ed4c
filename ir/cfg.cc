// Control-flow graph construction.
#include "ir/cfg.h"

#include <algorithm>
#include <utility>

namespace ptxforge::ir {

bool BitSet::UnionWith(const BitSet& o) {
  bool changed = false;
  for (size_t i = 0; i < words_.size(); ++i) {
    uint64_t n = words_[i] | o.words_[i];
    changed |= n != words_[i];
    words_[i] = n;
  }
  return changed;
}

bool BitSet::IntersectWith(const BitSet& o) {
  bool changed = false;
  for (size_t i = 0; i < words_.size(); ++i) {
    uint64_t n = words_[i] & o.words_[i];
    changed |= n != words_[i];
    words_[i] = n;
  }
  return changed;
}

// The label table is made at its size by the constructor (assign on an
// empty vector runs its growth path: branches more on a first codegen).
CfgBuilder::CfgBuilder(const Kernel& kernel) : cfg_{{}, {}, std::vector<uint32_t>(kernel.labels.size(), UINT32_MAX)} {
  // A block starts at the entry, at a label or after a branch, and a branch
  // needs a label: about two blocks per label (an if-statement: the block
  // ending in its branch and the one its label starts). Reserved once, so
  // that a kernel of 200k blocks does not grow its block array by doubling
  // (each step a fresh allocation of megabytes, copied and page-faulted in).
  const size_t expected = 2 * kernel.labels.size() + 1;
  cfg_.blocks.reserve(expected);
  exits_.reserve(expected);
}

Cfg CfgBuilder::Finish() {
  // Successors from the exits, and each block's number of predecessors
  // (counted in pred_end).
  const uint32_t nb = static_cast<uint32_t>(cfg_.blocks.size());
  bool backward = false;
  for (uint32_t b = 0; b < nb; ++b) {
    BasicBlock& bb = cfg_.blocks[b];
    const uint32_t label = exits_[b].label;
    if (label < cfg_.block_of_label.size() && cfg_.block_of_label[label] != UINT32_MAX) {
      const uint32_t t = cfg_.block_of_label[label];
      bb.succs.push_back(t);
      backward |= t <= b;
      ++cfg_.blocks[t].pred_end;
    }
    if (exits_[b].falls_through && b + 1 < nb && (bb.succs.empty() || bb.succs[0] != b + 1)) {
      bb.succs.push_back(b + 1);
      ++cfg_.blocks[b + 1].pred_end;
    }
  }
  cfg_.backward_edge = backward;
  // Predecessor ranges (a prefix sum of the counts), then the lists, filled
  // in block order so that each is increasing.
  uint32_t total = 0;
  for (BasicBlock& bb : cfg_.blocks) {
    bb.pred_begin = total;
    total += bb.pred_end;
    bb.pred_end = bb.pred_begin;
  }
  cfg_.pred_list = std::vector<uint32_t>(total);  // made at its size (resize would run the growth path)
  for (uint32_t b = 0; b < nb; ++b) {
    for (uint32_t s : cfg_.blocks[b].succs) cfg_.pred_list[cfg_.blocks[s].pred_end++] = b;
  }
  return std::move(cfg_);
}

// One sweep of the body (it is the large thing to read): blocks, label
// bindings, and how each block ends.
Cfg Cfg::Build(const ir::Kernel& kernel) {
  CfgBuilder builder(kernel);
  const uint32_t n = static_cast<uint32_t>(kernel.body.size());
  for (uint32_t i = 0; i < n; ++i) builder.Add(i, kernel.body[i]);
  return builder.Finish();
}

std::vector<uint32_t> ReversePostOrder(const Cfg& cfg) {
  const uint32_t nb = static_cast<uint32_t>(cfg.blocks.size());
  std::vector<uint32_t> order;
  if (nb == 0) return order;
  order.reserve(nb);
  // Iterative depth-first search (kernels have 200k blocks: no recursion).
  std::vector<bool> seen(nb, false);
  std::vector<std::pair<uint32_t, uint32_t>> stack;  // block, next successor
  stack.push_back({0, 0});
  seen[0] = true;
  while (!stack.empty()) {
    auto& [b, next] = stack.back();
    const auto& succs = cfg.blocks[b].succs;
    if (next < succs.size()) {
      uint32_t s = succs[next++];
      if (!seen[s]) {
        seen[s] = true;
        stack.push_back({s, 0});
      }
    } else {
      order.push_back(b);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<uint32_t> ImmediateDominators(const Cfg& cfg) {
  const uint32_t nb = static_cast<uint32_t>(cfg.blocks.size());
  std::vector<uint32_t> idom(nb, UINT32_MAX);
  if (nb == 0) return idom;
  // Without a backward edge (no loop) the block order is a topological
  // order: every predecessor comes before its block, so one sweep in block
  // order, with the block index as the rank, finds every immediate
  // dominator (the same ones: they are unique). No depth-first search and no
  // rank array (at 200k blocks these were arrays of megabytes per run).
  if (!HasBackwardEdge(cfg)) {
    idom[0] = 0;
    for (uint32_t b = 1; b < nb; ++b) {
      uint32_t d = UINT32_MAX;
      for (uint32_t p : cfg.preds(b)) {
        if (idom[p] == UINT32_MAX) continue;  // unreachable
        if (d == UINT32_MAX) {
          d = p;
          continue;
        }
        uint32_t a = p;
        while (a != d) {
          while (a > d) a = idom[a];
          while (d > a) d = idom[d];
        }
      }
      idom[b] = d;
    }
    return idom;
  }
  std::vector<uint32_t> order = ReversePostOrder(cfg);
  std::vector<uint32_t> rank(nb, UINT32_MAX);
  for (uint32_t i = 0; i < order.size(); ++i) rank[order[i]] = i;
  auto intersect = [&](uint32_t a, uint32_t b) {
    while (a != b) {
      while (rank[a] > rank[b]) a = idom[a];
      while (rank[b] > rank[a]) b = idom[b];
    }
    return a;
  };
  idom[0] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 1; i < order.size(); ++i) {
      const uint32_t b = order[i];
      uint32_t d = UINT32_MAX;
      for (uint32_t p : cfg.preds(b)) {
        if (idom[p] == UINT32_MAX) continue;  // unreachable, or not processed yet
        d = d == UINT32_MAX ? p : intersect(p, d);
      }
      if (d != idom[b]) {
        idom[b] = d;
        changed = true;
      }
    }
  }
  return idom;
}

DominatorTree DominatorTree::FromIdom(const std::vector<uint32_t>& idom) {
  const uint32_t nb = static_cast<uint32_t>(idom.size());
  DominatorTree t;
  // Counts by parent, summed so that child_begin[p] is where p's children
  // end; then the children, last block first, each put in front of its
  // parent's end, which leaves child_begin[p] where they begin and each list
  // in block order. The vectors are made at their size (constructors, not
  // assign and resize, whose growth paths a first codegen would run), and
  // no second array of fill positions is needed.
  t.child_begin = std::vector<uint32_t>(nb + 1, 0);
  for (uint32_t b = 1; b < nb; ++b) {
    if (idom[b] != UINT32_MAX) ++t.child_begin[idom[b]];
  }
  for (uint32_t b = 0; b < nb; ++b) t.child_begin[b + 1] += t.child_begin[b];
  t.children = std::vector<uint32_t>(t.child_begin[nb]);
  for (uint32_t b = nb; b-- > 1;) {
    if (idom[b] != UINT32_MAX) t.children[--t.child_begin[idom[b]]] = b;
  }
  return t;
}

}  // namespace ptxforge::ir
