// Natural-loop detection over the dominator tree.
#include "passes/loops.h"

#include <algorithm>
#include <utility>

namespace ptxforge::passes {

// Without a backward branch every edge goes forward in the body and there
// is no cycle (the common case, decided without building the graph).
bool HasBackwardBranch(const ir::Kernel& kernel) {
  std::vector<bool> bound(kernel.labels.size(), false);
  for (const ir::Instruction& inst : kernel.body) {
    if (inst.srcs.empty() || inst.srcs[0].id >= bound.size()) continue;
    if (inst.op == ir::Opcode::kLabel) bound[inst.srcs[0].id] = true;
    if (inst.op == ir::Opcode::kBra && bound[inst.srcs[0].id]) return true;
  }
  return false;
}

LoopForest FindLoops(const ir::Kernel& kernel) {
  LoopForest f;
  if (!HasBackwardBranch(kernel)) return f;
  f.cfg = ir::Cfg::Build(kernel);
  FindLoopsIn(kernel, ir::ImmediateDominators(f.cfg), f);
  return f;
}

void FindLoopsIn(const ir::Kernel& kernel, const std::vector<uint32_t>& idom, LoopForest& f) {
  const ir::Cfg& cfg = f.cfg;
  const uint32_t nb = static_cast<uint32_t>(cfg.blocks.size());
  f.rank.assign(nb, Loop::kNone);
  f.loops.clear();
  if (nb == 0) return;
  const std::vector<uint32_t> rpo = ir::ReversePostOrder(cfg);
  for (uint32_t i = 0; i < rpo.size(); ++i) f.rank[rpo[i]] = i;
  // Dominator-tree intervals: a dominates b iff pre[a] <= pre[b] and post[b] <= post[a].
  const ir::DominatorTree tree = ir::DominatorTree::FromIdom(idom);
  const std::vector<uint32_t>& child_begin = tree.child_begin;
  const std::vector<uint32_t>& children = tree.children;
  std::vector<uint32_t> pre(nb, 0), post(nb, 0);
  {
    uint32_t clock = 0;
    std::vector<std::pair<uint32_t, uint32_t>> stack = {{0, child_begin[0]}};
    pre[0] = clock++;
    while (!stack.empty()) {
      auto& [b, next] = stack.back();
      if (next < child_begin[b + 1]) {
        const uint32_t c = children[next++];
        pre[c] = clock++;
        stack.push_back({c, child_begin[c]});
      } else {
        post[b] = clock++;
        stack.pop_back();
      }
    }
  }
  auto dominates = [&](uint32_t a, uint32_t b) { return pre[a] <= pre[b] && post[b] <= post[a]; };

  // Headers in reverse post order; each loop's blocks by a backward walk from its latches.
  std::vector<uint32_t> in_loop(nb, Loop::kNone);  // stamp: the header whose walk saw the block
  std::vector<uint32_t> work;
  for (uint32_t h : rpo) {
    work.clear();
    for (uint32_t p : cfg.preds(h)) {
      if (f.rank[p] != Loop::kNone && dominates(h, p)) work.push_back(p);
    }
    if (work.empty()) continue;
    Loop loop;
    loop.header = h;
    in_loop[h] = h;
    loop.blocks.push_back(h);
    for (uint32_t b : work) {
      if (in_loop[b] != h) {
        in_loop[b] = h;
        loop.blocks.push_back(b);
      }
    }
    for (size_t k = 1; k < loop.blocks.size(); ++k) {
      for (uint32_t p : cfg.preds(loop.blocks[k])) {
        if (f.rank[p] == Loop::kNone || in_loop[p] == h) continue;
        in_loop[p] = h;
        loop.blocks.push_back(p);
      }
    }
    std::sort(loop.blocks.begin(), loop.blocks.end(), [&](uint32_t a, uint32_t b) { return f.rank[a] < f.rank[b]; });
    // The entry point: one outside predecessor that falls into the header.
    uint32_t outside = Loop::kNone, count = 0;
    for (uint32_t p : cfg.preds(h)) {
      if (in_loop[p] != h) {
        outside = p;
        ++count;
      }
    }
    if (count == 1 && h != 0 && cfg.blocks[outside].end == cfg.blocks[h].begin) {
      const ir::Instruction& last = kernel.body[cfg.blocks[outside].end - 1];
      const bool branches_to_header = last.op == ir::Opcode::kBra && !last.srcs.empty() &&
                                      last.srcs[0].id < cfg.block_of_label.size() &&
                                      cfg.block_of_label[last.srcs[0].id] == h;
      const bool falls = !ir::EndsBlock(last) || last.guarded();
      if (falls && !branches_to_header) loop.entry_point = cfg.blocks[h].begin;
    }
    f.loops.push_back(std::move(loop));
  }
  // Innermost first, nest by nest: by the rank of the loop's last block,
  // then by size. A loop nested in another has a subset of its blocks, so
  // its last block comes no later and it has fewer blocks: it comes first.
  // Loops of different nests come in body order, so that the loop passes
  // work through one nest at a time while its instructions are in the
  // caches (sorting by size alone visited every innermost loop of the
  // kernel first, then every loop around them: at a million instructions,
  // one read of the body from memory per nesting level).
  std::stable_sort(f.loops.begin(), f.loops.end(), [&](const Loop& a, const Loop& b) {
    const uint32_t la = f.rank[a.blocks.back()], lb = f.rank[b.blocks.back()];
    return la != lb ? la < lb : a.blocks.size() < b.blocks.size();
  });
}

namespace {

// The body indices a loop's blocks span: [first, last).
std::pair<uint32_t, uint32_t> Span(const LoopForest& forest, const Loop& loop) {
  uint32_t first = UINT32_MAX, last = 0;
  for (uint32_t b : loop.blocks) {
    first = std::min(first, forest.cfg.blocks[b].begin);
    last = std::max(last, forest.cfg.blocks[b].end);
  }
  return {first, last};
}

}  // namespace

void LoopReadAhead::Before(size_t l) {
  if (read_ >= kernel_.body.size()) return;
  const auto [first, last] = Span(forest_, forest_.loops[l]);
  // Only in a nest: a loop that is not in another and holds none is read
  // in address order by the pass itself, which the processor's prefetcher
  // follows (reading ahead of sequential loops cost licm 5 and strength
  // reduction 4 ns per instruction at a million instructions). Loops come
  // innermost first, nest by nest: a neighbour in the list holding l, or
  // held by it, says whether l is in a nest.
  auto holds = [](std::pair<uint32_t, uint32_t> outer, std::pair<uint32_t, uint32_t> inner) {
    return outer.first <= inner.first && inner.second <= outer.second;
  };
  const bool nested = (l + 1 < forest_.loops.size() && holds(Span(forest_, forest_.loops[l + 1]), {first, last})) ||
                      (l > 0 && holds({first, last}, Span(forest_, forest_.loops[l - 1])));
  if (!nested) return;
  const size_t from = std::max<size_t>(read_, first), to = size_t{last} + kAhead;
  if (from < to) kernel_.body.Touch(from, to);
  read_ = std::max(read_, to);
}

}  // namespace ptxforge::passes
