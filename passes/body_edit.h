// An in-place edit of a kernel body (instructions dropped and inserted), and
// the record of where it put them that lets analyses follow it.
#ifndef PTXFORGE_PASSES_BODY_EDIT_H_
#define PTXFORGE_PASSES_BODY_EDIT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "ir/kernel.h"

namespace ptxforge::passes {

// What an applied BodyEdit did, in old body indices: enough to say where
// each old instruction and each inserted one is now without reading the
// body (EditCursor). Analyses::ApplyEdit (passes/analyses.h) remaps the CFG,
// the loops and the value table with it instead of building them again: at
// a million instructions each build reads the whole body from memory.
struct EditMoves {
  // Each insertion's position (it went in front of old body[pos]; pos ==
  // the old size: at the end), in the order of the new body.
  std::vector<uint32_t> inserted;
  // The dropped old indices, increasing.
  std::vector<uint32_t> dropped;
  // Whether every inserted and dropped instruction is straight-line code:
  // neither a label nor one that ends a block (ir::EndsBlock).
  bool straight = true;
};

// How many elements of an increasing list are below x, for a run of
// queries: O(1) amortised while the x asked for mostly increase (it gallops
// from the last answer, either way), O(log) otherwise.
class IncreasingRank {
 public:
  explicit IncreasingRank(std::span<const uint32_t> v) : v_(v) {}
  uint32_t Less(uint32_t x) {
    // The common cases inline: the answer did not move, or moved by one.
    const size_t n = v_.size();
    if ((at_ == 0 || v_[at_ - 1] < x) && (at_ == n || v_[at_] >= x)) return static_cast<uint32_t>(at_);
    if (at_ < n && v_[at_] < x && (at_ + 1 == n || v_[at_ + 1] >= x)) return static_cast<uint32_t>(++at_);
    return Gallop(x);
  }

 private:
  uint32_t Gallop(uint32_t x);

  std::span<const uint32_t> v_;
  size_t at_ = 0;  // the last answer
};

// New indices from an EditMoves (IncreasingRank: queries cost O(1) while
// the indices asked for mostly increase).
class EditCursor {
 public:
  explicit EditCursor(const EditMoves& moves)
      : moves_(moves), inserted_(moves.inserted), dropped_(moves.dropped) {}
  // Whether old body[i] was dropped.
  bool Dropped(uint32_t i) { return dropped_.Less(i + 1) != dropped_.Less(i); }
  // How many instructions of the new body come from in front of old
  // position p: the kept old instructions before p and the insertions in
  // front of them (not those in front of body[p]).
  uint32_t Before(uint32_t p) { return p - dropped_.Less(p) + inserted_.Less(p); }
  // How many instructions went in front of old body[p].
  uint32_t InsertedAt(uint32_t p) { return inserted_.Less(p + 1) - inserted_.Less(p); }
  // The new index of old body[i], which was kept.
  uint32_t Kept(uint32_t i) { return i - dropped_.Less(i) + inserted_.Less(i + 1); }
  // The new index of the k-th insertion (in new body order).
  uint32_t Inserted(uint32_t k) {
    const uint32_t pos = moves_.inserted[k];
    return pos - dropped_.Less(pos) + k;
  }

 private:
  const EditMoves& moves_;
  IncreasingRank inserted_, dropped_;
};

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
  // For `body` as it is now; indices name its instructions as they are
  // before Apply, which is given the same body.
  explicit BodyEdit(const ir::InstructionList& body) : body_(&body), drop_(body.size(), false) {}
  BodyEdit(const BodyEdit&) = delete;
  BodyEdit& operator=(const BodyEdit&) = delete;
  ~BodyEdit();
  // Drops body[i]. It is read here (the caller has it at hand) and not
  // again: afterwards it may be moved from, not given storage of its own
  // (what it owns now is freed by Apply).
  void Drop(uint32_t i) {
    if (drop_[i]) return;
    drop_[i] = true;
    ++dropped_;
    const ir::Instruction& inst = (*body_)[i];
    straight_ &= IsStraight(inst);
    if (ir::OwnsHeapStorage(inst)) owning_.push_back(i);
  }
  // Puts inst in front of body[i] (i == body size: at the end), after what
  // was put there before.
  void InsertBefore(uint32_t i, ir::Instruction inst) { Add(i, 1, std::move(inst)); }
  // Puts inst right after body[i], before what is put in front of body[i + 1].
  void InsertAfter(uint32_t i, ir::Instruction inst) { Add(i + 1, 0, std::move(inst)); }
  bool empty() const { return dropped_ == 0 && keys_.empty(); }
  // The body becomes, for each i in order: what was inserted after body[i - 1],
  // what was inserted before body[i], then body[i] unless dropped. Linear in
  // the body (plus sorting the insertions' indices). `moves`, when given,
  // gets what the edit did, and `placed`, when given, is called with each
  // inserted instruction and its new index right before it is put there
  // (while it is in the caches; the reference is not valid afterwards), in
  // no particular order. The edit is empty afterwards.
  void Apply(ir::InstructionList& body, EditMoves* moves = nullptr,
             std::optional<absl::FunctionRef<void(uint32_t, const ir::Instruction&)>> placed = std::nullopt);

 private:
  // An insertion's place, in an array of its own: Apply sorts these
  // (position, phase, which insertion) and reads one per instruction it
  // moves; reading them from beside the instructions (128 bytes apart)
  // missed the caches once per insertion at a million instructions.
  struct Key {
    uint32_t pos;    // in front of body[pos]
    uint32_t phase;  // 0: after body[pos - 1]; 1: before body[pos]
    uint32_t k;      // the k-th insertion made
    bool operator<(const Key& o) const { return pos != o.pos ? pos < o.pos : phase != o.phase ? phase < o.phase : k < o.k; }
  };
  static constexpr size_t kBlock = 16;  // inserted instructions per block of storage (2 KB)
  struct alignas(ir::Instruction) Slot {
    unsigned char bytes[sizeof(ir::Instruction)];
  };
  static bool IsStraight(const ir::Instruction& inst) { return inst.op != ir::Opcode::kLabel && !ir::EndsBlock(inst); }
  void Add(uint32_t pos, uint32_t phase, ir::Instruction inst);
  ir::Instruction& Inserted(size_t k);

  const ir::InstructionList* body_;
  std::vector<bool> drop_;
  size_t dropped_ = 0;
  // Whether every instruction dropped and inserted so far is straight-line
  // code (EditMoves::straight), told as each is given: Apply reading the
  // dropped ones again missed the caches once each at a million
  // instructions.
  bool straight_ = true;
  // The dropped instructions that owned heap storage when dropped (few:
  // most instructions hold their operands inline).
  std::vector<uint32_t> owning_;
  std::vector<Key> keys_;  // one per insertion, in the order made
  // The inserted instructions, in the order made, in blocks that never
  // move: growing never holds two copies of them, as a vector's doubling
  // would (strength reduction inserts two per loop: at a million
  // instructions of loops that doubling was the codegen's peak heap).
  // Apply moves each into the body and frees the blocks without
  // destroying what it moved from, which owns nothing (its destructor
  // would do nothing): destroying them read every one from memory again.
  std::vector<std::unique_ptr<Slot[]>> blocks_;
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_BODY_EDIT_H_
