// Dominator-based value numbering of pure instructions.
#include "passes/cse.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/cfg.h"
#include "passes/values.h"

namespace ptxforge::passes {
namespace {

using ir::Opcode;

static_assert(std::has_unique_object_representations_v<ir::Modifiers>,
              "CSE hashes and compares Modifiers' bytes: it must have no padding");

bool Commutative(const ir::Instruction& inst) {
  // The opcode's flag first, one load: most instructions are not these.
  if (!inst.info().has(ir::kCommutative)) return false;
  const ir::ScalarType t = inst.mods.type;
  return (ir::IsInteger(t) || ir::IsBits(t) || t == ir::ScalarType::kPred) && inst.srcs.size() == 2;
}

// Operands equal as expressions (registers by id: renamings are applied first).
bool SameOperand(const ir::Operand& a, const ir::Operand& b) {
  if (a.kind != b.kind || a.id != b.id) return false;
  if (a.is_reg()) return true;
  return a.base == b.base && a.type == b.type && a.value == b.value;
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

uint64_t HashOperand(const ir::Operand& op) {
  uint64_t h = Mix(static_cast<uint64_t>(op.kind), op.id);
  if (op.is_reg()) return h;
  h = Mix(h, static_cast<uint64_t>(op.base) | static_cast<uint64_t>(op.type) << 8);
  return Mix(h, static_cast<uint64_t>(op.value));
}


// A map from 32-bit expression keys to instruction indices: open addressing
// with linear probing in one array, deleted entries closed up by backward
// shifting (no tombstones: the scoped table erases as much as it inserts).
// It starts with 32 slots in the object (a 20-instruction kernel's table
// makes no allocation) and doubles at half full. absl::flat_hash_map did
// this job with a second hash of an already hashed key, control bytes and
// more code on the first call of a process: this is one small array for a
// 20-instruction kernel and one probe per lookup at a million.
class ExprTable {
 public:
  static constexpr uint32_t kEmpty = UINT32_MAX;  // no instruction has this index
  struct Slot {
    uint32_t key;
    uint32_t value;  // kEmpty: a free slot
  };
  static_assert(sizeof(Slot) == 8 && kEmpty == UINT32_MAX, "a slot of all one bits is free");

  ExprTable() { std::memset(inline_, 0xFF, sizeof inline_); }
  ExprTable(const ExprTable&) = delete;
  ExprTable& operator=(const ExprTable&) = delete;

  // The slot of `key`, made with `value` if there was none (then true).
  // The pointer stays valid until the next TryEmplace.
  std::pair<Slot*, bool> TryEmplace(uint32_t key, uint32_t value) {
    if ((size_ + 1) * 2 > mask_ + 1) Rehash((mask_ + 1) * 2);
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value == kEmpty) {
        s = {key, value};
        ++size_;
        return {&s, true};
      }
      if (s.key == key) return {&s, false};
    }
  }
  Slot* Find(uint32_t key) {
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value == kEmpty) return nullptr;
      if (s.key == key) return &s;
    }
  }
  // Makes room for `entries` keys without growing (a large kernel's table
  // otherwise doubles a dozen times, rehashing every key each time).
  void Reserve(size_t entries) {
    size_t cap = kInline;
    while (cap < 2 * (entries + 1)) cap *= 2;
    if (cap > mask_ + 1) Rehash(cap);
  }
  // Asks for the cache line where a lookup of `key` starts.
  void Prefetch(uint32_t key) const { __builtin_prefetch(&slots_[Home(key)]); }
  void Erase(uint32_t key) {
    Slot* s = Find(key);
    if (s == nullptr) return;
    // Knuth's algorithm R: move later entries of the run into the hole
    // unless their home lies cyclically in (hole, their slot].
    size_t hole = static_cast<size_t>(s - slots_);
    for (size_t j = (hole + 1) & mask_; slots_[j].value != kEmpty; j = (j + 1) & mask_) {
      const size_t home = Home(slots_[j].key);
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = kEmpty;
    --size_;
  }

 private:
  static constexpr size_t kInline = 32;  // a power of two

  size_t Home(uint32_t key) const { return static_cast<uint32_t>(key * 0x9E3779B1u) >> shift_; }
  [[gnu::noinline]] void Rehash(size_t cap) {
    std::unique_ptr<Slot[]> bigger(new Slot[cap]);
    std::memset(bigger.get(), 0xFF, cap * sizeof(Slot));
    const Slot* old = slots_;
    const size_t old_cap = mask_ + 1;
    mask_ = cap - 1;
    shift_ = 32 - static_cast<uint32_t>(__builtin_ctzll(cap));
    for (size_t k = 0; k < old_cap; ++k) {
      const Slot& s = old[k];
      if (s.value == kEmpty) continue;
      size_t i = Home(s.key);
      while (bigger[i].value != kEmpty) i = (i + 1) & mask_;
      bigger[i] = s;
    }
    heap_ = std::move(bigger);  // frees the old heap array, if any
    slots_ = heap_.get();
  }

  Slot* slots_ = inline_;
  size_t size_ = 0;
  size_t mask_ = kInline - 1;
  uint32_t shift_ = 32 - 5;  // log2(kInline)
  std::unique_ptr<Slot[]> heap_;
  Slot inline_[kInline];
};

class Numbering {
 public:
  Numbering(ir::Kernel& kernel, Analyses& analyses)
      : kernel_(kernel),
        analyses_(analyses),
        values_(analyses.values()),
        renaming_(kernel.regs.size()) {}

  size_t Run() {
    const ir::Cfg& cfg = analyses_.cfg();
    const uint32_t nb = static_cast<uint32_t>(cfg.blocks.size());
    if (nb == 0) return 0;
    // Most of a large kernel's instructions are expressions: room for half
    // of them at once.
    if (kernel_.body.size() >= kAheadFrom) table_.Reserve(kernel_.body.size() / 2);
    const std::vector<uint32_t>& idom = analyses_.idom();  // read before RemoveDropped, which may drop it
    // The walk is a preorder of the dominator tree (children in block
    // order). When the blocks in their own order are that preorder, as in
    // structured code, they are walked so, with no tree to build.
    const bool block_order = InPreorder(idom);
    if (block_order) {
      WalkBlocks(cfg, idom);
    } else {
      WalkTree(cfg, idom);
    }
    if (dropped_.empty()) return 0;
    // The walk renamed every instruction it visited at its turn, with every
    // renaming that could apply to it: a removed value's uses are in
    // blocks its definition dominates, which the preorder visits after it.
    // What it did not visit (blocks the entry cannot reach: those without
    // an immediate dominator, which the walk of the tree never meets) is
    // renamed here; renaming the whole body again read all of it from
    // memory once more at a million instructions.
    uint32_t i = 0;
    for (uint32_t b = 0; b < nb; ++b) {
      if (idom[b] != UINT32_MAX) {
        for (; i < cfg.blocks[b].begin; ++i) renaming_.ApplyFlat(kernel_.body[i]);
        i = cfg.blocks[b].end;
      }
    }
    for (; i < kernel_.body.size(); ++i) renaming_.ApplyFlat(kernel_.body[i]);
    // Removed in the order visited: in block order that is increasing.
    if (!block_order) std::sort(dropped_.data(), dropped_.data() + dropped_.size());
    return RemoveDropped(kernel_, std::span<const uint32_t>(dropped_.begin(), dropped_.size()), &analyses_);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Whether the blocks the entry reaches, in block order, are a preorder
  // of the dominator tree: each one's immediate dominator is on the path
  // from the entry to the block before it (that block or one of its
  // dominators). Each block's immediate dominator must come before it,
  // which makes the climb end; the climbs take as many steps in all as
  // there are blocks, since a block climbed past is never on the path
  // again.
  static bool InPreorder(const std::vector<uint32_t>& idom) {
    const uint32_t nb = static_cast<uint32_t>(idom.size());
    uint32_t prev = 0;
    for (uint32_t b = 1; b < nb; ++b) {
      const uint32_t d = idom[b];
      if (d == UINT32_MAX) continue;  // unreachable
      if (d >= b) return false;
      uint32_t x = prev;
      while (x > d) x = idom[x];
      if (x != d) return false;
      prev = b;
    }
    return true;
  }

  // The preorder walk in block order (InPreorder). The table must hold the
  // entries of a block's dominators only when the block is visited: the
  // entries made since its immediate dominator's own are undone first
  // (they are of blocks in the dominator's subtree, visited since). A block
  // on the tree's last path (the chain of dominators of the last block
  // visited) records nothing to undo, as in WalkTree.
  void WalkBlocks(const ir::Cfg& cfg, const std::vector<uint32_t>& idom) {
    const uint32_t nb = static_cast<uint32_t>(idom.size());
    // own_end[b]: undo_.size() after block b's own entries; before the
    // walk, kLastPath for the blocks on the last path.
    constexpr uint32_t kLastPath = UINT32_MAX;
    uint32_t small[64];
    std::vector<uint32_t> large;
    uint32_t* own_end = small;
    if (nb > std::size(small)) {
      large = std::vector<uint32_t>(nb);
      own_end = large.data();
    } else {
      std::fill_n(small, nb, 0);  // what the stack held might read as kLastPath
    }
    uint32_t last = nb - 1;
    while (idom[last] == UINT32_MAX) --last;  // idom[0] is 0
    for (uint32_t b = last; b != 0; b = idom[b]) own_end[b] = kLastPath;
    record_undo_ = false;
    VisitBlock(cfg.blocks[0]);
    own_end[0] = static_cast<uint32_t>(undo_.size());
    for (uint32_t b = 1; b <= last; ++b) {
      const uint32_t d = idom[b];
      if (d == UINT32_MAX) continue;
      UndoTo(own_end[d]);
      record_undo_ = own_end[b] != kLastPath;
      VisitBlock(cfg.blocks[b]);
      own_end[b] = static_cast<uint32_t>(undo_.size());
    }
  }

  // The preorder walk of the dominator tree, iterative. The table must
  // hold the entries of the blocks on the stack only when the next block
  // is visited, so a block's entries go when its parent (or an ancestor)
  // enters its next child: before that child is visited, everything
  // entered after the parent's own entries is undone. Entries of blocks
  // left after the last visit are never undone: in a dominator tree that
  // is a long chain (a kernel of if-statements: each join block is the
  // child of the block before it), leaving the chain at the end used to
  // erase every entry of the kernel one by one, a cache miss each at a
  // million instructions. For the same reason a block on the tree's last
  // path (the entry, its last child, that one's last child...) records
  // nothing to undo: after it only blocks it dominates are visited. That
  // is every block of straight-line code and every join block of a chain
  // of if-statements.
  void WalkTree(const ir::Cfg& cfg, const std::vector<uint32_t>& idom) {
    const ir::DominatorTree tree = ir::DominatorTree::FromIdom(idom);
    const std::vector<uint32_t>& child_begin = tree.child_begin;
    const std::vector<uint32_t>& children = tree.children;
    struct Frame {
      uint32_t block;
      uint32_t next_child;
      size_t own_end;  // undo_.size() after the block's own entries
      bool last_path;  // the block is on the tree's last path
    };
    std::vector<Frame> stack;
    record_undo_ = false;
    VisitBlock(cfg.blocks[0]);
    stack.push_back({0, child_begin[0], undo_.size(), true});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next_child < child_begin[f.block + 1]) {
        const uint32_t c = children[f.next_child++];
        const bool last_path = f.last_path && f.next_child == child_begin[f.block + 1];
        UndoTo(f.own_end);
        record_undo_ = !last_path;
        VisitBlock(cfg.blocks[c]);
        stack.push_back({c, child_begin[c], undo_.size(), last_path});
        continue;
      }
      stack.pop_back();
    }
  }


  // Takes the table back to what it held when undo_ had `mark` entries.
  void UndoTo(size_t mark) {
    while (undo_.size() > mark) {
      const auto [hash, inst] = undo_.back();
      undo_.pop_back();
      if (Shadowed(inst) == kNone) {
        table_.Erase(hash);
      } else {
        table_.Find(hash)->value = Shadowed(inst);
      }
    }
  }

  // The table maps an expression's hash to the innermost instruction in
  // scope with that hash; shadowed_[i] is the one i hid (same hash, an outer
  // scope or a collision), so lookups walk that chain and scope exits restore it.
  //
  // Expressions that read a register that is not a value (a mutable one) go
  // to local_ instead, which holds only this block's instructions: such an
  // expression stands for the same bits until the block redefines one of
  // the registers it reads (last_def_ says where that happened), and never
  // beyond the block (another path into a later block may redefine them).
  //
  // The instruction kAhead places further in the body is renamed,
  // classified and hashed before its turn, and the table slot its lookup
  // will read is prefetched then: in a kernel of a million instructions
  // the table is megabytes and each lookup a cache miss, which made CSE
  // cost 2-3x more per instruction than at a thousand. The walk's order is
  // mostly the body's (preorder of the dominator tree of structured code),
  // so this crosses block boundaries; an instruction whose turn comes out
  // of that order, or after a merge (a new renaming), is prepared again
  // then. Renaming early is safe: a renaming's target is never renamed
  // itself, so renaming again later gives what renaming once then would.
  // Below kAheadFrom instructions the table stays in the caches and each
  // instruction is simply prepared at its turn.
  void VisitBlock(const ir::BasicBlock& bb) {
    const uint32_t n = static_cast<uint32_t>(kernel_.body.size());
    if (n < kAheadFrom) {
      for (uint32_t i = bb.begin; i < bb.end; ++i) Visit(i, Prepare(i));
    } else {
      for (uint32_t i = bb.begin; i < bb.end; ++i) {
        Ahead cur = ahead_[i % kAhead];
        if (i + kAhead < n) {
          const Ahead next = ahead_[i % kAhead] = Prepare(i + kAhead);
          if (next.kind == Kind::kValues) table_.Prefetch(next.key);
        }
        if (cur.index != i || cur.renamings != renaming_.size()) cur = Prepare(i);
        Visit(i, cur);
      }
    }
    ClearLocal();
  }

  enum class Kind {
    kNone,     // not an expression
    kValues,   // reads only values, immediates and addresses: numbered in dominator scope
    kMutable,  // reads a register that is not a value: numbered within its block
  };

  // body[j] renamed, classified and hashed, and how many renamings there
  // were then.
  struct Ahead {
    uint32_t index = kNone;  // j
    Kind kind = Kind::kNone;
    uint32_t key = 0;
    size_t renamings = 0;
  };
  static constexpr uint32_t kAhead = 8;  // a power of two
  static constexpr uint32_t kAheadFrom = 16384;

  Ahead Prepare(uint32_t j) {
    ir::Instruction& inst = kernel_.body[j];
    renaming_.ApplyFlat(inst);
    Ahead a;
    a.index = j;
    a.kind = Classify(inst);
    if (a.kind != Kind::kNone) a.key = Key(Hash(inst));
    a.renamings = renaming_.size();
    return a;
  }

  // Numbers body[i], prepared as `cur`.
  void Visit(uint32_t i, const Ahead& cur) {
    if (cur.kind != Kind::kNone) {
      if (cur.kind == Kind::kValues) {
        Number(i, cur.key);
      } else {
        NumberLocal(i, cur.key);
      }
    }
    // Only registers that are not values are ever looked up (Holds), and
    // only for definitions after an entry of local_ in this block: before
    // the block's first one there is nothing to note. A definition left
    // unnoted leaves last_def_ before the block's first entry or outside
    // the block, never between two of its instructions that are entries,
    // which is all Holds asks about. Raw PTX may write registers it does
    // not list: it makes the block forget its expressions (when it has
    // any).
    if (!local_keys_.empty()) {
      const ir::Instruction& inst = kernel_.body[i];
      NoteDefinitions(inst, i);
      if (inst.op == Opcode::kRaw) ClearLocal();
    }
  }

  // Looks body[i] up in the scoped table; deletes it if an equal expression is there.
  void Number(uint32_t i, uint32_t hash) {
    ir::Instruction& inst = kernel_.body[i];
    auto [it, inserted] = table_.TryEmplace(hash, i);
    if (!inserted) {
      for (uint32_t j = it->value; j != kNone; j = Shadowed(j)) {
        if (Same(kernel_.body[j], inst)) {
          Merge(i, j);
          return;
        }
      }
      SetShadowed(i, it->value);
      it->value = i;
    }
    if (record_undo_) undo_.push_back({hash, i});
  }

  // As Number, in this block's table of expressions reading mutable
  // registers. Entries whose registers were redefined since are unlinked
  // from their chain as a lookup meets them (they can never hold again), so
  // a block that recomputes `f(r)` after every step of r keeps one entry.
  void NumberLocal(uint32_t i, uint32_t hash) {
    ir::Instruction& inst = kernel_.body[i];
    auto [it, inserted] = local_.TryEmplace(hash, i);
    if (inserted) {
      local_keys_.push_back(hash);
      return;
    }
    uint32_t prev = kNone;
    for (uint32_t j = it->value; j != kNone;) {
      const uint32_t next = Shadowed(j);
      if (!Holds(j, i)) {  // unlink j
        if (prev == kNone) {
          it->value = next;
        } else {
          SetShadowed(prev, next);
        }
      } else if (Same(kernel_.body[j], inst)) {
        Merge(i, j);
        return;
      } else {
        prev = j;
      }
      j = next;
    }
    SetShadowed(i, it->value);
    it->value = i;
  }

  // shadowed_[i], made at the first instruction that hides another (a
  // kernel without repeated expressions never makes it).
  uint32_t Shadowed(uint32_t i) const { return i < shadowed_.size() ? shadowed_[i] : kNone; }
  void SetShadowed(uint32_t i, uint32_t j) {
    if (shadowed_.empty()) shadowed_.assign(kernel_.body.size(), kNone);
    shadowed_[i] = j;
  }

  void NoteDefinitions(const ir::Instruction& inst, uint32_t i) {
    for (ir::Reg d : inst.dsts) {
      if (d.id < kernel_.regs.size() && !values_.IsValue(d)) {
        if (d.id >= last_def_.size()) last_def_.resize(d.id + 1, kNone);
        last_def_[d.id] = i;
      }
    }
  }

  // Whether body[j], earlier in this block than body[i], still computes
  // what it did at i: no register it reads was redefined in between.
  bool Holds(uint32_t j, uint32_t i) const {
    for (const ir::Operand& op : kernel_.body[j].srcs) {
      if (!op.reads_reg() || values_.IsValue(op.reg()) || op.id >= last_def_.size()) continue;
      if (last_def_[op.id] > j && last_def_[op.id] < i) return false;
    }
    return true;
  }

  void ClearLocal() {
    for (uint32_t hash : local_keys_) local_.Erase(hash);
    local_keys_.clear();
  }

  // Deletes body[i], whose expression body[j] computed already.
  void Merge(uint32_t i, uint32_t j) {
    renaming_.Set(kernel_.body[i].dsts[0], kernel_.body[j].dsts[0]);
    dropped_.push_back(i);
  }

  Kind Classify(const ir::Instruction& inst) const {
    // Pure, and neither a pseudo-instruction, raw PTX, convergent nor a
    // memory read: one test of the flags (a test per flag was a branch
    // each on a first codegen). A memory read qualifies when it is ld.param.
    constexpr uint16_t kTested = ir::kPure | ir::kPseudo | ir::kOpaque | ir::kConvergent | ir::kReadsMemory;
    const uint16_t flags = inst.info().flags & kTested;
    if (flags != ir::kPure &&
        !(flags == (ir::kPure | ir::kReadsMemory) && inst.op == Opcode::kLd && inst.mods.space == ir::StateSpace::kParam)) {
      return Kind::kNone;
    }
    if (inst.guarded() || inst.dsts.size() != 1 || !values_.IsValue(inst.dsts[0])) return Kind::kNone;
    // An add or sub of two registers is one instruction that reuses nothing:
    // merging it only keeps its result live longer. ptxas merges it where
    // that pays (measured: merging them made ptxas spill on nf4.gemm_transpose
    // for sm_120 and cost registers on nf4.gemm; leaving them never did).
    if ((inst.op == Opcode::kAdd || inst.op == Opcode::kSub) && inst.srcs.size() == 2 && inst.srcs[0].is_reg() &&
        inst.srcs[1].is_reg()) {
      return Kind::kNone;
    }
    // A read of a special register (%tid.x ...) is not merged either: it
    // needs no register to recompute, and sharing one keeps it live across
    // the kernel (measured: layernorm, reduce and elementwise each took 1..3
    // more registers under ptxas when their later %tid.x reads were merged).
    Kind kind = Kind::kValues;
    for (const ir::Operand& op : inst.srcs) {
      if (op.kind == ir::OperandKind::kSpecial) return Kind::kNone;
      if (op.reads_reg() && !values_.IsValue(op.reg())) kind = Kind::kMutable;
    }
    return kind;
  }

  // Over the opcode, the destination's type, the modifiers and the operands
  // (those of a commutative instruction in either order).
  uint64_t Hash(const ir::Instruction& inst) const {
    uint64_t h = Mix(static_cast<uint64_t>(inst.op), static_cast<uint64_t>(kernel_.type_of(inst.dsts[0])));
    uint64_t words[(sizeof(ir::Modifiers) + 7) / 8] = {};
    std::memcpy(words, &inst.mods, sizeof inst.mods);
    for (uint64_t w : words) h = Mix(h, w);
    if (Commutative(inst)) {
      uint64_t a = HashOperand(inst.srcs[0]), b = HashOperand(inst.srcs[1]);
      return Mix(Mix(h, std::min(a, b)), std::max(a, b));
    }
    for (const ir::Operand& op : inst.srcs) h = Mix(h, HashOperand(op));
    return Mix(h, inst.srcs.size());
  }

  // The table's key: 32 bits of the hash. Half the size of a 64-bit key's
  // table, which matters once it outgrows the caches (a million-instruction
  // block); a collision only lengthens a chain that Same() walks, so the
  // leader found is the same.
  static uint32_t Key(uint64_t h) { return static_cast<uint32_t>(h ^ (h >> 32)); }

  bool Same(const ir::Instruction& a, const ir::Instruction& b) const {
    if (a.op != b.op || a.srcs.size() != b.srcs.size() || kernel_.type_of(a.dsts[0]) != kernel_.type_of(b.dsts[0]) ||
        std::memcmp(&a.mods, &b.mods, sizeof a.mods) != 0) {
      return false;
    }
    bool same = true;
    for (size_t k = 0; k < a.srcs.size() && same; ++k) same = SameOperand(a.srcs[k], b.srcs[k]);
    if (!same && Commutative(a)) {
      same = SameOperand(a.srcs[0], b.srcs[1]) && SameOperand(a.srcs[1], b.srcs[0]);
    }
    return same;
  }

  std::array<Ahead, kAhead> ahead_;  // by body index mod kAhead
  ir::Kernel& kernel_;
  Analyses& analyses_;
  const Values& values_;
  Renaming renaming_;
  // The lists below keep 16 entries in the object: a small kernel's CSE
  // allocates none (each malloc and free is some twenty branches on a first
  // codegen).
  ir::InlineList<uint32_t, 16> dropped_;  // the instructions merged, in the order visited
  std::vector<uint32_t> shadowed_;  // by instruction (Shadowed); made when first needed
  std::vector<uint32_t> last_def_;  // by register that is not a value: the last definition visited (body index); kNone; grown as needed
  ExprTable table_;
  ExprTable local_;  // this block's expressions reading mutable registers
  ir::InlineList<uint32_t, 16> local_keys_;               // local_'s keys
  struct Entered {
    uint32_t hash;
    uint32_t inst;
  };
  ir::InlineList<Entered, 16> undo_;  // entered in the scoped table, innermost last
  bool record_undo_ = true;  // whether the block being visited records its entries in undo_
};

}  // namespace

size_t EliminateCommonSubexpressions(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return Numbering(kernel, analyses).Run();
}

size_t EliminateCommonSubexpressions(ir::Kernel& kernel, Analyses& analyses) {
  return Numbering(kernel, analyses).Run();
}

}  // namespace ptxforge::passes
