// BodyEdit and the record of what it did.
#include "passes/body_edit.h"

#include <algorithm>

namespace ptxforge::passes {

uint32_t IncreasingRank::Gallop(uint32_t x) {
  const size_t n = v_.size();
  // Steps of 1, 2, 4, ... from the last answer, forward while the
  // elements stepped over are below x (backward while they are not), then
  // a binary search of the last step.
  size_t lo = at_, hi = at_, step = 1;
  if (at_ > 0 && v_[at_ - 1] >= x) {
    while (hi >= step && v_[hi - step] >= x) {
      hi -= step;
      step *= 2;
    }
    lo = hi >= step ? hi - step : 0;
  } else {
    while (lo + step <= n && v_[lo + step - 1] < x) {
      lo += step;
      step *= 2;
    }
    hi = std::min(lo + step, n);
  }
  at_ = static_cast<size_t>(std::lower_bound(v_.begin() + static_cast<ptrdiff_t>(lo), v_.begin() + static_cast<ptrdiff_t>(hi), x) -
                            v_.begin());
  return static_cast<uint32_t>(at_);
}

void BodyEdit::Apply(ir::InstructionList& body, EditMoves* moves,
                     std::optional<absl::FunctionRef<void(uint32_t, const ir::Instruction&)>> placed) {
  if (moves != nullptr) *moves = EditMoves();
  if (empty()) return;
  const uint32_t n = static_cast<uint32_t>(body.size());
  // The insertions in body order, as indices into inserts_ (sorting the
  // instructions themselves moved 128 bytes per swap and took a buffer of
  // half of them); equal positions keep the order they were made in.
  const size_t ni = inserts_.size();
  // Sorted on compact keys (position, phase, index), and the positions kept
  // in an array of their own: the passes below read one per instruction
  // moved, and reading them from inserts_ (128 bytes apart) missed the
  // caches once per insertion at a million instructions.
  struct Key {
    uint32_t pos, phase;
    uint32_t k;
    bool operator<(const Key& o) const { return pos != o.pos ? pos < o.pos : phase != o.phase ? phase < o.phase : k < o.k; }
  };
  std::vector<Key> keys(ni);
  for (uint32_t k = 0; k < ni; ++k) keys[k] = {inserts_[k].pos, inserts_[k].phase, k};
  if (!std::is_sorted(keys.begin(), keys.end())) std::sort(keys.begin(), keys.end());
  std::vector<uint32_t> order(ni), at(ni);
  for (size_t k = 0; k < ni; ++k) {
    order[k] = keys[k].k;
    at[k] = keys[k].pos;
  }
  std::vector<Key>().swap(keys);
  auto pos = [&](size_t k) { return at[k]; };
  if (moves != nullptr) {
    moves->inserted.resize(ni);
    for (size_t k = 0; k < ni; ++k) {
      const ir::Instruction& inst = inserts_[order[k]].inst;
      moves->inserted[k] = pos(k);
      moves->straight &= inst.op != ir::Opcode::kLabel && !ir::EndsBlock(inst);
    }
    moves->dropped.reserve(dropped_);
  }
  const size_t m = n - dropped_ + ni;
  if (m > n) body.resize(m);
  // Each kept instruction's final index f(i) grows with i. Those moving
  // towards the front go first, front to back: the slot f(i) < i they take
  // held a dropped instruction or one that moved to the front already.
  // Then those moving towards the back, back to front, symmetrically. The
  // inserted instructions fill the slots left, last.
  size_t k = 0, out = 0;
  for (uint32_t i = 0; i < n; ++i) {
    while (k < ni && pos(k) <= i) ++k, ++out;
    if (drop_[i]) {
      if (moves != nullptr) {
        // Only its opcode is read (which moving it out left).
        moves->dropped.push_back(i);
        moves->straight &= body[i].op != ir::Opcode::kLabel && !ir::EndsBlock(body[i]);
      }
      continue;
    }
    if (out < i) body[out] = std::move(body[i]);
    ++out;
  }
  k = ni;
  out = m;
  for (uint32_t i = n; i-- > 0;) {
    while (k > 0 && pos(k - 1) > i) --k, --out;
    if (drop_[i]) continue;
    --out;
    if (out > i) body[out] = std::move(body[i]);
  }
  k = 0;
  out = 0;
  for (uint32_t i = 0; i <= n; ++i) {
    while (k < ni && pos(k) <= i) {
      body[out] = std::move(inserts_[order[k++]].inst);
      if (placed) (*placed)(static_cast<uint32_t>(out), body[out]);
      ++out;
    }
    if (i < n && !drop_[i]) ++out;
  }
  if (m < n) body.resize(m);
  body.shrink_to_fit();
  inserts_.clear();
  std::fill(drop_.begin(), drop_.end(), false);
  dropped_ = 0;
}


}  // namespace ptxforge::passes
