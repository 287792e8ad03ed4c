// Canonical instruction order and register numbering.
#include "ir/canonical_order.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <utility>

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

// An array of trivially copyable T in memory handed out by the orderer's
// scratch, with the few vector operations the orderer uses and no growth:
// every size is bounded before the walk.
template <typename T>
class FixedArray {
 public:
  void Init(T* data, size_t capacity) {
    data_ = data;
    size_ = 0;
    capacity_ = capacity;
  }
  void push_back(const T& v) {
    assert(size_ < capacity_);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  T& back() { return data_[size_ - 1]; }
  void clear() { size_ = 0; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // n elements, each v.
  void assign(size_t n, const T& v) {
    assert(n <= capacity_);
    std::fill_n(data_, n, v);
    size_ = n;
  }
  // n elements; those not there before are left as they are.
  void resize(size_t n) {
    assert(n <= capacity_);
    size_ = n;
  }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Hands out arrays, each aligned for its type, from a buffer of the
// caller's (on its stack) while they fit and from a heap block of their own
// for each Reserve() that does not: a small kernel's ordering allocates
// nothing. (vector_add's arrays took two heap blocks, 449 and 756 bytes,
// and the renumbering a third, 168. A fresh process's first codegen pays a
// page fault for each heap page it is the first to touch, and blocks that
// size, freed, go to glibc's per-thread caches, where nothing else the
// codegen asks for reuses them: the heap's top moved up by ~1.4 KB.)
class Carver {
 public:
  explicit Carver(std::span<std::byte> local) : next_(local.data()), end_(local.data() + local.size()) {}
  Carver(const Carver&) = delete;
  Carver& operator=(const Carver&) = delete;
  // The bytes to ask for an array of n T.
  template <typename T>
  static size_t Bytes(size_t n) {
    return n * sizeof(T) + alignof(T);
  }
  // Room for arrays of `bytes` in all (a sum of Bytes()), taken by the
  // Take() calls that follow. At most kBlocks of them need the heap.
  void Reserve(size_t bytes) {
    if (static_cast<size_t>(end_ - next_) >= bytes) return;
    assert(blocks_ < kBlocks);
    // ::operator new, not new[]: libstdc++'s operator new[] calls operator
    // new through its own lazily bound PLT slot, so the first new[] (and
    // delete[]) of a process ran the dynamic linker's symbol lookup inside a
    // first codegen; nothing else on that path uses new[].
    heap_[blocks_].reset(static_cast<std::byte*>(::operator new(bytes)));
    next_ = heap_[blocks_++].get();
    end_ = next_ + bytes;
  }
  template <typename T>
  T* Take(size_t n) {
    std::byte* p = next_ + (-reinterpret_cast<uintptr_t>(next_) & (alignof(T) - 1));
    next_ = p + n * sizeof(T);
    assert(next_ <= end_);
    return reinterpret_cast<T*>(p);
  }

 private:
  static constexpr int kBlocks = 2;
  struct Free {
    void operator()(std::byte* p) const { ::operator delete(p); }
  };
  std::byte* next_;
  std::byte* end_;
  std::unique_ptr<std::byte, Free> heap_[kBlocks];
  int blocks_ = 0;
};

// The bytes of CanonicalizeOrder's buffer on the stack, for the orderer's
// arrays and then the renumbering's: vector_add's need 1,205 and 168; a
// kernel of up to about 30 instructions fits, a larger one takes heap
// blocks (where its arrays are a small part of what its codegen
// allocates). The buffer makes this the deepest stack of a codegen (6.4 KB
// below the caller with no buffer, 7.9 KB with it: each KiB more is a page
// the stack may touch for the first time), so it is no larger.
constexpr size_t kLocalBytes = 1536;

// Computes the canonical permutation of a kernel body.
class Orderer {
 public:
  // The arrays by register and by instruction come from `local` or one
  // allocation, and so do the run's (they were four vectors, and the run's
  // arrays nine more: a first codegen in a fresh process paid for each
  // allocation, its growth and its free). The arrays by register have one
  // entry more, BadReg()'s. `one_` holds the uses of one instruction
  // (CollectUses).
  Orderer(const Kernel& kernel, std::span<std::byte> local)
      : kernel_(kernel),
        nregs_(kernel.regs.size()),
        n_(kernel.body.size()),
        one_room_(UseRoom(kernel.body)),
        whole_(local) {
    whole_.Reserve(Carver::Bytes<uint64_t>(nregs_ + 1) + Carver::Bytes<uint32_t>(nregs_ + 1) +
                   Carver::Bytes<uint8_t>(nregs_ + 1) + Carver::Bytes<uint8_t>(n_) + Carver::Bytes<uint32_t>(n_) +
                   Carver::Bytes<uint32_t>(one_room_));
    first_use_ = whole_.Take<uint64_t>(nregs_ + 1);
    def_at_ = whole_.Take<uint32_t>(nregs_ + 1);
    readers_ = whole_.Take<uint8_t>(nregs_ + 1);
    state_ = whole_.Take<uint8_t>(n_);
    order_ = whole_.Take<uint32_t>(n_);
    one_ = whole_.Take<uint32_t>(one_room_);
    // kUnused and kNone are all ones, the counts and states zero; each pair
    // is adjacent (uint64_t, then uint32_t; then bytes): two memsets.
    static_assert(kUnused == UINT64_MAX && kNone == UINT32_MAX);
    std::memset(first_use_, 0xff,
                reinterpret_cast<std::byte*>(def_at_ + nregs_ + 1) - reinterpret_cast<std::byte*>(first_use_));
    std::memset(readers_, 0, nregs_ + 1 + n_);
  }

  // The canonical order: body[order[i]] goes to position i. Valid while
  // the orderer lives.
  std::span<uint32_t> Run() {
    const auto& body = kernel_.body;
    const uint32_t n = static_cast<uint32_t>(n_);
    uint32_t run = 0, longest = 0;  // movable instructions in a row
    size_t uses = 0, most_uses = 0;  // registers those read, and the instruction ending them
    size_t room = 0, most_room = 0;  // the same in CollectUses's room
    for (uint32_t i = 0; i < n; ++i) {
      const size_t reads = CountReaders(OneUses(body[i]));
      const size_t its_room = body[i].srcs.size() + 1;
      if (Movable(kernel_, body[i])) {
        state_[i] = kMovable;
        longest = std::max(longest, ++run);
        uses += reads;
        most_uses = std::max(most_uses, uses);
        room += its_room;
        most_room = std::max(most_room, room);
      } else {
        most_uses = std::max(most_uses, uses + reads);
        most_room = std::max(most_room, room + its_room);
        run = 0;
        uses = 0;
        room = 0;
      }
    }
    // The runs (maximal sequences of movable instructions) and the fixed
    // instructions between them are ordered last to first: a run's unread
    // results are placed by their first use after the run, which needs the
    // final order of everything after it.
    // None of these holds more than one run's instructions (or its uses):
    // one reservation for them all (the rest of the stack buffer, or one
    // heap block), no regrowth.
    whole_.Reserve(Carver::Bytes<std::pair<uint64_t, uint32_t>>(longest) + Carver::Bytes<Frame>(longest) +
                   3 * Carver::Bytes<uint32_t>(longest) + Carver::Bytes<uint32_t>(longest + 1) +
                   Carver::Bytes<uint32_t>(longest + 2) + Carver::Bytes<uint32_t>(most_room) +
                   Carver::Bytes<uint32_t>(most_uses));
    roots_.Init(whole_.Take<std::pair<uint64_t, uint32_t>>(longest), longest);
    stack_.Init(whole_.Take<Frame>(longest), longest);
    pending_.Init(whole_.Take<uint32_t>(longest), longest);
    position_.Init(whole_.Take<uint32_t>(longest), longest);
    ready_.Init(whole_.Take<uint32_t>(longest), longest);
    edge_start_.Init(whole_.Take<uint32_t>(longest + 1), longest + 1);
    use_start_ = whole_.Take<uint32_t>(longest + 2);
    uses_ = whole_.Take<uint32_t>(most_room);
    edges_.Init(whole_.Take<uint32_t>(most_uses), most_uses);
    for (uint32_t end = n; end > 0;) {
      uint32_t begin = end - 1;
      if (state_[begin] & kMovable) {
        while (begin > 0 && (state_[begin - 1] & kMovable)) --begin;
        OrderRun(begin, end);
        // Uses recorded last to first, so each register keeps its earliest.
        for (uint32_t k = end; k-- > begin;) NoteUses(Uses(order_[k]), k);
      } else {
        order_[begin] = begin;
        NoteUses(OneUses(kernel_.body[begin]), begin);
      }
      end = begin;
    }
    return {order_, n_};
  }

 private:
  static constexpr uint8_t kConsumed = 1;  // read later in the run or by the instruction ending it
  static constexpr uint8_t kVisited = 2;   // emitted or being emitted
  static constexpr uint8_t kMovable = 4;   // Movable(): may be reordered within its run
  static constexpr uint8_t kEager = 8;     // placed as soon as its operands are (see Frees())
  static constexpr uint8_t kPlaced = 16;   // in order_

  struct Frame {
    uint32_t inst;
    uint32_t next;  // the index in uses_ of the next use of `inst` to visit
  };

  // The register ids the current run's body[j] reads, in ForEachUse's
  // order, from the run's flat list (made once per run by OrderRun: the
  // walks below read it instead of the operands, whose kinds and guard
  // they would test again each time). An id the kernel has no register for
  // is BadReg() there (the verifier reports it). A list for the whole body
  // read the same (vector_add's first codegen 0.961 and 1/1.034, session
  // 28) but made BM_Build at 1M 1.05-1.16x slower with 9-16 B/inst more
  // peak: it is written and read back from memory, a run's from L1.
  std::span<const uint32_t> Uses(uint32_t j) const {
    const uint32_t k = j - begin_;
    return {uses_ + use_start_[k], uses_ + use_start_[k + 1]};
  }

  // The most any instruction's uses need of CollectUses's room: one entry
  // per source and one for the guard.
  static size_t UseRoom(const InstructionList& body) {
    size_t room = 0;
    for (const Instruction& inst : body) room = std::max(room, inst.srcs.size() + 1);
    return room;
  }

  // Writes the registers `inst` reads (ForEachUse's order: sources, then the
  // guard) to out[at...], clamped, without a branch per operand: each
  // source is written, and kept only if it reads a register (room for
  // srcs.size() + 1 entries). Returns the end of what it kept.
  uint32_t CollectUses(const Instruction& inst, uint32_t* out, uint32_t at) const {
    for (const Operand& op : inst.srcs) {
      out[at] = Clamp(op.reg());
      at += op.reads_reg();
    }
    out[at] = Clamp(inst.guard);
    return at + inst.guard.valid();
  }
  // The registers `inst` reads, in one_ (valid until the next call).
  std::span<const uint32_t> OneUses(const Instruction& inst) {
    return {one_, CollectUses(inst, one_, 0)};
  }

  // The entry for ids out of range in the arrays by register: never
  // defined in a run, so never a producer.
  uint32_t BadReg() const { return static_cast<uint32_t>(nregs_); }

  // The instruction of the current run, before `j`, that defines register
  // id r (BadReg() included); kNone if none. One unsigned comparison covers
  // kNone, definitions before the run and those after j.
  uint32_t Producer(uint32_t r, uint32_t j) const {
    const uint32_t p = def_at_[r];
    return p - begin_ < j - begin_ ? p : kNone;
  }

  // Where a register is first read, as (final position, operand slot) packed
  // into one key: earlier uses have smaller keys.
  void NoteUse(uint32_t r, uint32_t position, uint64_t slot) {
    const uint64_t key = (uint64_t{position} << 16) | std::min<uint64_t>(slot, 0xffff);
    first_use_[r] = std::min(first_use_[r], key);
  }
  void NoteUses(std::span<const uint32_t> uses, uint32_t position) {
    for (uint32_t slot = 0; slot < uses.size(); ++slot) NoteUse(uses[slot], position, slot);
  }
  uint32_t Clamp(Reg r) const { return r.id < nregs_ ? r.id : BadReg(); }

  // The earliest use of any result of `inst` (kUnused when none is read).
  uint64_t FirstUseOf(uint32_t inst) const {
    uint64_t key = kUnused;
    for (Reg d : kernel_.body[inst].dsts) key = std::min(key, first_use_[d.id]);  // a run's are in range
    return key;
  }

  // readers_[r]: how many instructions of the kernel read r, counted up to
  // 2 (a register one instruction reads twice counts once). Takes the
  // registers one instruction reads; returns how many (repeats included).
  size_t CountReaders(std::span<const uint32_t> uses) {
    for (uint32_t slot = 0; slot < uses.size(); ++slot) {
      const uint32_t r = uses[slot];
      if (r != BadReg() && readers_[r] < 2 && std::find(uses.begin(), uses.begin() + slot, r) == uses.begin() + slot) {
        ++readers_[r];
      }
    }
    return uses.size();
  }

  // Eager placement. An instruction that is the only reader of at least as
  // many registers made in its run as it defines (and of one at least) frees
  // registers when it is placed, so it is placed as soon as the last of the
  // run's instructions it reads is, not when the walk from the roots reaches
  // it: two loads' conversions and their sum are made before either's
  // activation, not one after it. (elementwise f32 with gelu on sm_100:
  // ptxas places rcp.rn's slow path, a subroutine, above every register live
  // at any of its calls.)
  bool Frees(uint32_t j) const {
    const std::span<const uint32_t> uses = Uses(j);
    uint32_t freed = 0;
    for (uint32_t slot = 0; slot < uses.size(); ++slot) {
      const uint32_t r = uses[slot];
      freed += Producer(r, j) != kNone && readers_[r] == 1 &&
               std::find(uses.begin(), uses.begin() + slot, r) == uses.begin() + slot;
    }
    return freed > 0 && freed >= kernel_.body[j].dsts.size();
  }

  // Where the run made register r, read by body[j]: (position, result slot)
  // in one key; after every such key when r comes from before the run.
  uint64_t Where(uint32_t r, uint32_t j) const {
    const uint32_t p = Producer(r, j);
    if (p == kNone) return UINT64_MAX;
    const RegList& dsts = kernel_.body[p].dsts;
    uint32_t slot = 0;
    while (slot + 1 < dsts.size() && dsts[slot].id != r) ++slot;
    return (uint64_t{position_[p - begin_]} << 8) | std::min<uint32_t>(slot, 0xff);
  }

  // Whether body[a] comes before body[b] when one placement makes both
  // ready: by where the values they read were made in the run, use by use
  // (position, then result slot): data flow, not recorded order. Never
  // equal: each reads a register of the run that nothing else reads.
  bool ReadyBefore(uint32_t a, uint32_t b) const {
    const std::span<const uint32_t> x = Uses(a), y = Uses(b);
    for (size_t k = 0; k < x.size() && k < y.size(); ++k) {
      const uint64_t ka = Where(x[k], a), kb = Where(y[k], b);
      if (ka != kb) return ka < kb;
    }
    return x.size() < y.size();
  }

  // Records that body[inst] was put at order_[next_], then places what that
  // made ready and is eager, depth first.
  void Place(uint32_t inst) {
    state_[inst] |= kPlaced;
    ready_.clear();
    ready_.push_back(inst);
    while (!ready_.empty()) {
      const uint32_t x = ready_.back();
      ready_.pop_back();
      position_[x - begin_] = next_;
      order_[next_++] = x;
      const size_t first = ready_.size();
      for (uint32_t e = edge_start_[x - begin_]; e < edge_start_[x - begin_ + 1]; ++e) {
        const uint32_t j = edges_[e];
        if (--pending_[j - begin_] != 0) continue;
        // Not yet placed; possibly on the walk's stack (then its operands,
        // all placed now, were its last), and the walk skips it.
        if ((state_[j] & (kEager | kPlaced)) == kEager) {
          state_[j] |= kVisited | kPlaced;
          ready_.push_back(j);
        }
      }
      // The first to place at the back (mostly none or one: no sort).
      if (ready_.size() - first > 1) {
        std::sort(ready_.begin() + first, ready_.end(), [&](uint32_t a, uint32_t b) { return ReadyBefore(b, a); });
      }
    }
  }

  // Orders the movable run [begin, end) into order_[begin, end); body[end],
  // if any, ends it.
  void OrderRun(uint32_t begin, uint32_t end) {
    const auto& body = kernel_.body;
    begin_ = begin;
    next_ = begin;
    const uint32_t length = end - begin;
    const bool ended = end < body.size();
    // The registers each instruction of the run reads (and the one ending
    // it), in one flat list: the run's only walk over their operands.
    uint32_t at = 0;
    for (uint32_t j = begin; j < end + ended; ++j) {
      use_start_[j - begin] = at;
      at = CollectUses(body[j], uses_, at);
    }
    use_start_[length + ended] = at;
    pending_.assign(length, 0);
    position_.resize(length);
    edge_start_.assign(length + 1, 0);
    for (uint32_t j = begin; j < end; ++j) {
      for (uint32_t r : Uses(j)) {
        if (uint32_t p = Producer(r, j); p != kNone) {
          state_[p] |= kConsumed;
          ++pending_[j - begin];
          ++edge_start_[p - begin + 1];
        }
      }
      for (Reg d : body[j].dsts) def_at_[d.id] = j;
    }
    // The run's producer -> reader edges, grouped by producer.
    for (uint32_t k = 0; k < length; ++k) edge_start_[k + 1] += edge_start_[k];
    edges_.resize(edge_start_[length]);
    for (uint32_t j = begin; j < end; ++j) {
      for (uint32_t r : Uses(j)) {
        if (uint32_t p = Producer(r, j); p != kNone) edges_[edge_start_[p - begin]++] = j;
      }
      if (Frees(j)) state_[j] |= kEager;
    }
    for (uint32_t k = length; k > 0; --k) edge_start_[k] = edge_start_[k - 1];
    edge_start_[0] = 0;
    if (ended) {
      for (uint32_t r : Uses(end)) {
        if (uint32_t p = Producer(r, end); p != kNone) state_[p] |= kConsumed;
      }
    }
    // Results read only after the run, in the order of their first use there
    // (recorded order for those never read, and between equal keys: roots_
    // is filled in recorded order, so sorting the (key, instruction) pairs
    // is the stable sort by key, and needs no buffer).
    roots_.clear();
    for (uint32_t j = begin; j < end; ++j) {
      if (!(state_[j] & kConsumed)) roots_.push_back({FirstUseOf(j), j});
    }
    std::sort(roots_.begin(), roots_.end());
    for (const auto& [key, j] : roots_) Visit(j);
    if (ended) {
      // A store's values before its address: the address is made last,
      // next to the store, and is not live while the values are computed.
      const Instruction& last = body[end];
      auto visit = [&](Reg r) {
        if (uint32_t p = Producer(Clamp(r), end); p != kNone) Visit(p);
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
        for (uint32_t r : Uses(end)) {
          if (uint32_t p = Producer(r, end); p != kNone) Visit(p);
        }
      }
    }
  }

  // Emits `root` after the producers of its operands, operands in order.
  void Visit(uint32_t root) {
    if (state_[root] & kVisited) return;
    state_[root] |= kVisited;
    stack_.push_back(Frame{root, use_start_[root - begin_]});
    while (!stack_.empty()) {
      Frame& top = stack_.back();
      if (state_[top.inst] & kPlaced) {  // by Place(), with the operand just placed
        stack_.pop_back();
        continue;
      }
      if (top.next == use_start_[top.inst - begin_ + 1]) {
        const uint32_t placed = top.inst;
        stack_.pop_back();
        Place(placed);
        continue;
      }
      const uint32_t p = Producer(uses_[top.next++], top.inst);
      if (p == kNone || (state_[p] & kVisited)) continue;
      state_[p] |= kVisited;
      stack_.push_back(Frame{p, use_start_[p - begin_]});
    }
  }

  const Kernel& kernel_;
  static constexpr uint64_t kUnused = UINT64_MAX;
  const size_t nregs_, n_;
  const size_t one_room_;      // one_'s entries
  // The arrays below: those by register and by instruction, then the
  // run's, reserved once the longest run is known.
  Carver whole_;

  uint64_t* first_use_;  // by register: its earliest use after the runs ordered so far
  uint32_t* def_at_;     // by register: the last instruction seen defining it
  uint8_t* readers_;     // by register: instructions reading it, up to 2
  uint8_t* state_;       // by instruction
  uint32_t* order_;      // by position: the instruction placed there
  uint32_t* one_;        // the uses of one instruction (OneUses)
  FixedArray<Frame> stack_;
  FixedArray<std::pair<uint64_t, uint32_t>> roots_;  // (first use, instruction)
  // The current run's, by instruction - begin_: uses of the run's results
  // not yet placed, where it was placed, its readers in the run
  // (edges_[edge_start_[k] .. edge_start_[k + 1])), and the registers it
  // reads (uses_[use_start_[k] .. use_start_[k + 1]); the instruction ending
  // the run, if any, at k = length).
  FixedArray<uint32_t> pending_;
  FixedArray<uint32_t> position_;
  FixedArray<uint32_t> edge_start_;
  uint32_t* use_start_ = nullptr;
  uint32_t* uses_ = nullptr;
  FixedArray<uint32_t> edges_;
  FixedArray<uint32_t> ready_;  // Place()'s work list
  uint32_t begin_ = 0;
  uint32_t next_ = 0;  // where Visit puts the next instruction of the run
};

// items[i] = old items[order[i]] for every i, in place (order is a
// permutation), by following its cycles: no second array of the items.
// Uses up `order`: each position placed is marked done as order[j] = j.
template <typename Items>
void PermuteInPlace(Items& items, std::span<uint32_t> order) {
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

// Renumbers registers by first appearance in the body (uses before
// definitions, operands in order; those that never appear after, in their
// order). One walk: a register's number is final when it is first seen, so
// each operand is renumbered as it is seen.
void RenumberRegisters(Kernel& kernel, std::span<std::byte> local) {
  const size_t nregs = kernel.regs.size();
  // By old id the new one, then by new id the old one.
  Carver carver(local);
  carver.Reserve(Carver::Bytes<uint32_t>(2 * nregs));
  uint32_t* new_id = carver.Take<uint32_t>(2 * nregs);
  std::fill_n(new_id, nregs, kNone);
  const std::span<uint32_t> old_of(new_id + nregs, nregs);
  uint32_t seen = 0;
  auto renumber = [&](uint32_t& id) {
    if (id >= nregs) return;
    if (new_id[id] == kNone) {
      new_id[id] = seen;
      old_of[seen++] = id;
    }
    id = new_id[id];
  };
  for (Instruction& inst : kernel.body) {
    for (Operand& op : inst.srcs) {
      if (op.reads_reg()) renumber(op.id);
    }
    renumber(inst.guard.id);  // kInvalidId when unguarded: out of range
    for (Reg& d : inst.dsts) renumber(d.id);
  }
  for (uint32_t r = 0; r < nregs; ++r) {
    if (new_id[r] == kNone) old_of[seen++] = r;
  }
  PermuteInPlace(kernel.regs, old_of);
}

}  // namespace

void CanonicalizeOrder(Kernel& kernel) {
  alignas(uint64_t) std::byte local[kLocalBytes];
  {
    Orderer orderer(kernel, local);
    const std::span<uint32_t> order = orderer.Run();
    bool moved = false;
    for (uint32_t i = 0; i < order.size() && !moved; ++i) moved = order[i] != i;
    if (moved) PermuteInPlace(kernel.body, order);
  }
  RenumberRegisters(kernel, local);
}

}  // namespace ptxforge::ir
