// Canonical instruction order and register numbering.
#include "ir/canonical_order.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "ir/register_numbering.h"
#include "ir/semantics.h"

namespace ptxforge::ir {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

bool Movable(const Kernel& kernel, const Instruction& inst) {
  const OpInfo& info = inst.info();
  if (!info.has(kPure) || info.has(kPseudo) || info.has(kOpaque) || inst.guarded()) return false;
  // Reads of %clock and the like are ordered by the program (two reads
  // measure the time between them).
  for (const Operand& op : inst.srcs) {
    if (op.kind == OperandKind::kSpecial && sem::SpecialRegIsVolatile(static_cast<SpecialReg>(op.id))) return false;
  }
  for (Reg d : inst.dsts) {
    if (d.id >= kernel.regs.size() || kernel.regs[d.id].is_mutable) return false;
  }
  return true;
}

// The registers an instruction reads, one at a time, in the order
// ForEachUse visits them: `cursor` (0 at first) walks the sources, then the
// guard. Returns false when there are no more.
bool NextUse(const Instruction& inst, uint32_t& cursor, Reg& r) {
  const uint32_t n = static_cast<uint32_t>(inst.srcs.size());
  while (cursor < n) {
    const Operand& op = inst.srcs[cursor++];
    if (op.reads_reg()) {
      r = op.reg();
      return true;
    }
  }
  if (cursor == n) {
    ++cursor;
    if (inst.guard.valid()) {
      r = inst.guard;
      return true;
    }
  }
  return false;
}

// Computes the canonical permutation of a kernel body.
class Orderer {
 public:
  explicit Orderer(const Kernel& kernel)
      : kernel_(kernel),
        def_at_(kernel.regs.size(), kNone),
        first_use_(kernel.regs.size(), kUnused),
        state_(kernel.body.size(), 0) {}

  std::vector<uint32_t> Run() && {
    const auto& body = kernel_.body;
    const uint32_t n = static_cast<uint32_t>(body.size());
    uint32_t run = 0, longest = 0;  // movable instructions in a row
    for (uint32_t i = 0; i < n; ++i) {
      if (Movable(kernel_, body[i])) {
        state_[i] = kMovable;
        longest = std::max(longest, ++run);
      } else {
        run = 0;
      }
    }
    // The runs (maximal sequences of movable instructions) and the fixed
    // instructions between them are ordered last to first: a run's unread
    // results are placed by their first use after the run, which needs the
    // final order of everything after it.
    order_.resize(n);
    // Neither holds more than one run's instructions: one allocation each,
    // no regrowth.
    stack_.reserve(longest);
    roots_.reserve(longest);
    for (uint32_t end = n; end > 0;) {
      uint32_t begin = end - 1;
      if (state_[begin] & kMovable) {
        while (begin > 0 && (state_[begin - 1] & kMovable)) --begin;
        OrderRun(begin, end);
      } else {
        order_[begin] = begin;
      }
      // Record uses last to first, so each register keeps its earliest use.
      for (uint32_t k = end; k-- > begin;) NoteUses(order_[k], k);
      end = begin;
    }
    return std::move(order_);
  }

 private:
  static constexpr uint8_t kConsumed = 1;  // read later in the run or by the instruction ending it
  static constexpr uint8_t kVisited = 2;   // emitted or being emitted
  static constexpr uint8_t kMovable = 4;   // Movable(): may be reordered within its run

  struct Frame {
    uint32_t inst;
    uint32_t cursor = 0;  // NextUse's: the operands of `inst` visited so far
  };

  // The instruction of the current run, before `j`, that defines r; kNone if none.
  uint32_t Producer(Reg r, uint32_t j) const {
    if (r.id >= def_at_.size()) return kNone;
    uint32_t p = def_at_[r.id];
    return p != kNone && p >= begin_ && p < j ? p : kNone;
  }

  // Where a register is first read, as (final position, operand slot) packed
  // into one key: earlier uses have smaller keys.
  void NoteUses(uint32_t inst, uint32_t position) {
    uint64_t slot = 0;
    ForEachUse(kernel_.body[inst], [&](Reg r) {
      if (r.id < first_use_.size()) {
        uint64_t key = (uint64_t{position} << 16) | std::min<uint64_t>(slot, 0xffff);
        first_use_[r.id] = std::min(first_use_[r.id], key);
      }
      ++slot;
    });
  }

  // The earliest use of any result of `inst` (kUnused when none is read).
  uint64_t FirstUseOf(uint32_t inst) const {
    uint64_t key = kUnused;
    for (Reg d : kernel_.body[inst].dsts) {
      if (d.id < first_use_.size()) key = std::min(key, first_use_[d.id]);
    }
    return key;
  }

  // Orders the movable run [begin, end) into order_[begin, end); body[end],
  // if any, ends it.
  void OrderRun(uint32_t begin, uint32_t end) {
    const auto& body = kernel_.body;
    begin_ = begin;
    next_ = begin;
    for (uint32_t j = begin; j < end; ++j) {
      ForEachUse(body[j], [&](Reg r) {
        if (uint32_t p = Producer(r, j); p != kNone) state_[p] |= kConsumed;
      });
      for (Reg d : body[j].dsts) def_at_[d.id] = j;
    }
    if (end < body.size()) {
      ForEachUse(body[end], [&](Reg r) {
        if (uint32_t p = Producer(r, end); p != kNone) state_[p] |= kConsumed;
      });
    }
    // Results read only after the run, in the order of their first use there
    // (recorded order for those never read, and between equal keys: roots_
    // is filled in recorded order, so sorting the (key, instruction) pairs
    // is the stable sort by key, and needs no buffer).
    roots_.clear();
    for (uint32_t j = begin; j < end; ++j) {
      if (!(state_[j] & kConsumed)) roots_.emplace_back(FirstUseOf(j), j);
    }
    std::sort(roots_.begin(), roots_.end());
    for (const auto& [key, j] : roots_) Visit(j);
    if (end < body.size()) {
      // A store's values before its address: the address is made last,
      // next to the store, and is not live while the values are computed.
      const Instruction& last = body[end];
      auto visit = [&](Reg r) {
        if (uint32_t p = Producer(r, end); p != kNone) Visit(p);
      };
      if (last.info().has(kWritesMemory) && !last.info().has(kReadsMemory)) {
        for (const Operand& op : last.srcs) {
          if (op.reads_reg() && !op.is_address()) visit(op.reg());
        }
        for (const Operand& op : last.srcs) {
          if (op.reads_reg() && op.is_address()) visit(op.reg());
        }
        if (last.guard.valid()) visit(last.guard);
      } else {
        ForEachUse(last, visit);
      }
    }
  }

  // Emits `root` after the producers of its operands, operands in order.
  void Visit(uint32_t root) {
    if (state_[root] & kVisited) return;
    state_[root] |= kVisited;
    stack_.push_back(Frame{root});
    while (!stack_.empty()) {
      Frame& top = stack_.back();
      Reg r;
      if (!NextUse(kernel_.body[top.inst], top.cursor, r)) {
        order_[next_++] = top.inst;
        stack_.pop_back();
        continue;
      }
      uint32_t p = Producer(r, top.inst);
      if (p == kNone || (state_[p] & kVisited)) continue;
      state_[p] |= kVisited;
      stack_.push_back(Frame{p});
    }
  }

  const Kernel& kernel_;
  static constexpr uint64_t kUnused = UINT64_MAX;

  std::vector<uint32_t> def_at_;     // by register: the last instruction seen defining it
  std::vector<uint64_t> first_use_;  // by register: its earliest use after the runs ordered so far
  std::vector<uint8_t> state_;    // by instruction
  std::vector<uint32_t> order_;
  std::vector<Frame> stack_;
  std::vector<std::pair<uint64_t, uint32_t>> roots_;  // (first use, instruction)
  uint32_t begin_ = 0;
  uint32_t next_ = 0;  // where Visit puts the next instruction of the run
};

// items[i] = old items[order[i]] for every i, in place (order is a
// permutation), by following its cycles: no second array of the items.
// Uses up `order`: each position placed is marked done as order[j] = j.
template <typename Items>
void PermuteInPlace(Items& items, std::vector<uint32_t>& order) {
  using T = typename Items::value_type;
  for (uint32_t start = 0; start < items.size(); ++start) {
    if (order[start] == start) continue;
    T first = std::move(items[start]);
    uint32_t j = start;
    while (order[j] != start) {
      const uint32_t from = order[j];
      items[j] = std::move(items[from]);
      order[j] = j;
      j = from;
    }
    items[j] = std::move(first);
    order[j] = j;
  }
}

// Renumbers registers by first appearance in the body.
void RenumberRegisters(Kernel& kernel) {
  const size_t nregs = kernel.regs.size();
  std::vector<uint32_t> new_id(nregs, kNone);
  std::vector<uint32_t> old_of;
  old_of.reserve(nregs);
  auto see = [&](Reg r) {
    if (r.id < nregs && new_id[r.id] == kNone) {
      new_id[r.id] = static_cast<uint32_t>(old_of.size());
      old_of.push_back(r.id);
    }
  };
  for (const Instruction& inst : kernel.body) {
    ForEachUse(inst, see);
    for (Reg d : inst.dsts) see(d);
  }
  for (uint32_t r = 0; r < nregs; ++r) see(Reg{r});
  auto map = [&](Reg& r) {
    if (r.id < nregs) r.id = new_id[r.id];
  };
  for (Instruction& inst : kernel.body) {
    for (Operand& op : inst.srcs) {
      if (op.reads_reg() && op.id < nregs) op.id = new_id[op.id];
    }
    for (Reg& d : inst.dsts) map(d);
    if (inst.guard.valid()) map(inst.guard);
  }
  PermuteInPlace(kernel.regs, old_of);
}

}  // namespace

void CanonicalizeOrder(Kernel& kernel) {
  std::vector<uint32_t> order = Orderer(kernel).Run();
  bool moved = false;
  for (uint32_t i = 0; i < order.size() && !moved; ++i) moved = order[i] != i;
  if (moved) PermuteInPlace(kernel.body, order);
  RenumberRegisters(kernel);
}

}  // namespace ptxforge::ir
