// BodyEdit and the record of what it did.
#include "passes/body_edit.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <new>
#include <type_traits>

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

namespace {

// Moves the instruction out of `from` into slot `to`, which holds one that
// owns no heap storage (moved from, dropped with what it owned freed, or
// made by resize): built there without destroying it, since its destructor
// does nothing, so the slot is written without being read. Move assignment
// reads the destination first (to free what it owns), and at a million
// instructions that read missed the caches once per instruction moved: the
// slot is one that the backward pass read as a source megabytes earlier.
void MoveInto(ir::Instruction& to, ir::Instruction&& from) { new (&to) ir::Instruction(std::move(from)); }

// What makes "owns no heap storage" mean "its destructor does nothing", and
// what makes assigning a default instruction free what one owns: operands
// that are plain bytes (absl's vector frees its allocation and copies them).
static_assert(std::is_trivially_copyable_v<ir::Operand> && std::is_trivially_destructible_v<ir::Operand>);
static_assert(std::is_trivially_copyable_v<ir::Reg> && std::is_trivially_destructible_v<ir::Reg>);

}  // namespace

BodyEdit::~BodyEdit() {
  // Not applied: the inserted instructions are live.
  for (size_t k = 0; k < keys_.size(); ++k) std::destroy_at(&Inserted(k));
}

ir::Instruction& BodyEdit::Inserted(size_t k) {
  return *std::launder(reinterpret_cast<ir::Instruction*>(blocks_[k / kBlock][k % kBlock].bytes));
}

void BodyEdit::Add(uint32_t pos, uint32_t phase, ir::Instruction inst) {
  straight_ &= IsStraight(inst);
  const size_t k = keys_.size();
  if (k % kBlock == 0) blocks_.push_back(std::make_unique_for_overwrite<Slot[]>(kBlock));
  keys_.push_back({pos, phase, static_cast<uint32_t>(k)});
  new (blocks_[k / kBlock][k % kBlock].bytes) ir::Instruction(std::move(inst));
}

void BodyEdit::Apply(ir::InstructionList& body, EditMoves* moves,
                     std::optional<absl::FunctionRef<void(uint32_t, const ir::Instruction&)>> placed) {
  assert(&body == body_ && body.size() == drop_.size());
  if (moves != nullptr) *moves = EditMoves();
  if (empty()) return;
  const uint32_t n = static_cast<uint32_t>(body.size());
  // What dropped instructions own is freed first: every slot written below
  // then holds an instruction that owns nothing (MoveInto).
  for (uint32_t i : owning_) body[i] = ir::Instruction();
  // The insertions in body order; equal positions keep the order they were
  // made in.
  const size_t ni = keys_.size();
  if (!std::is_sorted(keys_.begin(), keys_.end())) std::sort(keys_.begin(), keys_.end());
  // Allocated before anything moves (an allocation failing halfway would
  // leave the body half moved).
  std::vector<uint32_t> at(ni), slot(ni);
  for (size_t k = 0; k < ni; ++k) at[k] = keys_[k].pos;
  auto pos = [&](size_t k) { return at[k]; };
  if (moves != nullptr) {
    moves->inserted = at;
    moves->straight = straight_;
    moves->dropped.reserve(dropped_);
  }
  const size_t m = n - dropped_ + ni;
  if (m > n) body.resize(m);
  // Each kept instruction's final index f(i) grows with i. Those moving
  // towards the front go first, front to back: the slot f(i) < i they take
  // held a dropped instruction or one that moved to the front already.
  // Then those moving towards the back, back to front, symmetrically.
  size_t k = 0, out = 0;
  for (uint32_t i = 0; i < n; ++i) {
    while (k < ni && pos(k) <= i) ++k, ++out;
    if (drop_[i]) {
      if (moves != nullptr) moves->dropped.push_back(i);
      continue;
    }
    if (out < i) MoveInto(body[out], std::move(body[i]));
    ++out;
  }
  // The inserted instructions go in during the second walk, while that
  // part of the body is in the caches (a third walk putting them in missed
  // the caches once per insertion at a million instructions). An
  // insertion's slot s is free once it is known, at the walk's i = pos - 1:
  // if s > i, the old instruction at s has been moved back or was dropped
  // (it cannot stay: s is the insertion's); if s <= i, it comes before the
  // insertion, so it was dropped or moved to the front in the first walk.
  // Each still waits until the walk reaches s, which keeps the writes near
  // the walk's.
  size_t next = ni;  // the insertions from `next` on have their slots
  size_t put = ni;   // and those from `put` on are in
  auto put_from = [&](uint32_t lowest) {
    while (put > next && slot[put - 1] >= lowest) {
      --put;
      ir::Instruction& inst = Inserted(keys_[put].k);
      // Told from where it is read (the slot it goes to is not in the caches).
      if (placed) (*placed)(slot[put], inst);
      MoveInto(body[slot[put]], std::move(inst));
    }
  };
  out = m;
  for (uint32_t i = n; i-- > 0;) {
    while (next > 0 && pos(next - 1) > i) slot[--next] = static_cast<uint32_t>(--out);
    put_from(i);
    if (drop_[i]) continue;
    --out;
    if (out > i) MoveInto(body[out], std::move(body[i]));
  }
  while (next > 0) slot[--next] = static_cast<uint32_t>(--out);  // in front of body[0]
  put_from(0);
  if (m < n) body.resize(m);
  body.shrink_to_fit();
  keys_.clear();
  std::vector<std::unique_ptr<Slot[]>>().swap(blocks_);
  std::fill(drop_.begin(), drop_.end(), false);
  dropped_ = 0;
  straight_ = true;
  owning_.clear();
}

}  // namespace ptxforge::passes
