// Register counts and liveness-based pressure, linear in the kernel's size.
//
// Each block's upward-exposed uses and definitions are sorted runs in one
// flat array (4 bytes per register a block reads or writes), and live-in sets
// are sparse runs of words in one pool (below): their memory follows what
// they hold, not the number of registers, so a kernel of 200k blocks costs
// what its live ranges cost. (Use and definition sets as llvm::SparseBitVector
// cost about 48 bytes of list node per 128-register element, 85 bytes per
// instruction on a kernel with a block every 5 instructions, the largest part
// of the pipeline's peak heap.) When one dense set per block is small next to the
// body (a few words per block: every registry kernel, and straight-line
// code of any size), the live-in sets are dense bit rows of one flat array
// instead, which costs no list nodes and no sorting. Each block is then
// walked backwards once with one dense scratch set and per-class counters
// updated on insertion and removal: no set is copied per instruction and no
// set is scanned to count it. The same sweep of the body that gathers the
// use and definition sets counts the instructions and the registers
// referenced (what ir::RegisterNumbering counts), and the CFG is the
// pipeline run's shared one.
//
// A graph without backward edges (straight-line code, if-statements: no
// loop) needs none of that: its blocks walked last to first each find
// their successors' live-in sets complete, so one backward walk of the body
// counts everything: the live set a block's walk leaves goes on into the
// block before it when that one falls through, and the live-in sets that
// branches need are lists of registers in one pool (CountForward). No
// gathering read of the body, no per-register stamps, no dataflow sweeps.
#include "passes/register_count.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "ir/register_numbering.h"
#include "ir/cfg.h"

namespace ptxforge::passes {
namespace {

// The sparse live-in sets: each block's set is a run of (word index, bits)
// pairs in increasing index order, zero words left out, stored in one pool.
// A set that changes in a dataflow sweep is appended anew (the old run
// becomes garbage). This is llvm::SparseBitVector<64> without a list node
// per element: with 200k blocks the SparseBitVector sets cost a temporary
// set, its nodes' mallocs and frees and a comparison per block and sweep,
// and register counting at a million instructions took 2.3x its time per
// instruction at 1k (see README "Design notes").
//
// The pool is the largest thing register counting holds on a kernel of
// many loops (scale_bench's nests of three loops: a million words for 237k
// blocks at a million instructions), so a word is 12 bytes, not 16 (packed:
// x86 reads the unaligned 64 bits at no cost), garbage is collected in
// place, and the pool is made of segments, not one growing array. Each run
// starts with a header word naming its block and lies within one segment (a
// segment holds the longest set there can be), and a collection slides the
// runs still current down over the rest, segment after segment, then frees
// the segments left empty. One array that doubled needed its old and its
// new copy at once, three times what it held, which made register counting
// the peak of the whole codegen on nests of loops (and collecting into a
// second pool held both pools at once); segments add one segment at a
// time, and the pool holds about a quarter more than the current runs, plus
// a segment and the ends of segments that the next run did not fit in (a
// run is at most the longest set: with runs longer than half a segment,
// up to half of each).
struct __attribute__((packed, aligned(4))) SetWord {
  uint32_t index;  // register / 64 (a header: the block)
  uint64_t bits;   // (a header: the run's length)
};
static_assert(sizeof(SetWord) == 12);

class SetPool {
 public:
  // For nb blocks' sets of registers below 64 * words.
  SetPool(size_t nb, size_t words)
      : shift_(std::max<uint32_t>(kMinShift, std::bit_width(words))),  // 2^shift_ > words: any run fits
        begin_(nb, kNoRun) {}
  std::span<const SetWord> Get(size_t b) const {
    if (begin_[b] == kNoRun) return {};
    const SetWord* run = At(begin_[b]);
    return {run, static_cast<size_t>(run[-1].bits)};  // the header's length
  }
  // Makes `words` block b's set; false if it was that already.
  bool Update(size_t b, const std::vector<SetWord>& words) {
    std::span<const SetWord> old = Get(b);
    if (old.size() == words.size() &&
        std::equal(old.begin(), old.end(), words.begin(),
                   [](const SetWord& x, const SetWord& y) { return x.index == y.index && x.bits == y.bits; })) {
      return false;
    }
    if (!old.empty()) {
      live_ -= old.size() + 1;
      garbage_ += old.size() + 1;
    }
    begin_[b] = kNoRun;  // the old run is garbage: a collection below drops it
    if (words.empty()) return true;
    const size_t need = words.size() + 1;
    // Collect when the garbage made since the last collection (replaced
    // runs, skipped segment ends) outgrows a quarter of the current runs
    // and a segment: each collection moves the current runs once, after
    // more than a quarter of their size was written or skipped since the
    // last, so a word is moved about four times per time it is written.
    if (garbage_ > live_ / 4 + (size_t{1} << shift_)) Compact();
    SetWord* run = Append(b, need);
    std::copy(words.begin(), words.end(), run + 1);
    begin_[b] = Index(run + 1);
    live_ += need;
    return true;
  }

 private:
  static constexpr uint32_t kMinShift = 12;  // segments of 4096 words (48 KB) at least
  static constexpr uint32_t kNoRun = UINT32_MAX;

  // Word g of the pool: segment g >> shift_, at g's low bits.
  SetWord* At(uint32_t g) const { return segments_[g >> shift_].get() + (g & ((uint32_t{1} << shift_) - 1)); }
  uint32_t Index(const SetWord* w) const {
    const size_t s = segments_.size() - 1;  // only the last segment is appended to
    return static_cast<uint32_t>((s << shift_) + (w - segments_[s].get()));
  }
  // Room for a run of `need` words (its header, written here, included) at
  // the end of the last segment, or in a new one.
  SetWord* Append(size_t b, size_t need) {
    const size_t size = size_t{1} << shift_;
    if (segments_.empty() || fill_.back() + need > size) {
      if (!segments_.empty()) garbage_ += size - fill_.back();  // the old segment's end
      // Word indices are 32 bits: 4G words are 48 GB, past any machine's
      // memory for one kernel's sets; refused as running out of it would be.
      if ((segments_.size() + 1) << shift_ > size_t{UINT32_MAX}) throw std::bad_alloc();
      segments_.push_back(std::make_unique_for_overwrite<SetWord[]>(size));
      fill_.push_back(0);
    }
    SetWord* run = segments_.back().get() + fill_.back();
    run[0] = {static_cast<uint32_t>(b), need - 1};
    fill_.back() += static_cast<uint32_t>(need);
    return run;
  }
  // Slides the current runs (in pool order) down over the garbage, then
  // frees the segments left empty. A run that does not fit at the end of
  // the segment written to goes to the start of the next: that is never
  // past where it lies (had it lain in the segment written to, at or after
  // the write position, it would have fit).
  void Compact() {
    const size_t size = size_t{1} << shift_;
    size_t out_seg = 0, out = 0;
    for (size_t s = 0; s < segments_.size(); ++s) {
      for (size_t at = 0; at < fill_[s];) {
        SetWord* run = segments_[s].get() + at;
        const uint32_t b = run[0].index;
        const size_t n = static_cast<size_t>(run[0].bits) + 1;
        if (begin_[b] == (s << shift_) + at + 1) {
          if (out + n > size) {
            fill_[out_seg] = static_cast<uint32_t>(out);
            ++out_seg, out = 0;
          }
          SetWord* to = segments_[out_seg].get() + out;
          if (to != run) std::memmove(to, run, n * sizeof(SetWord));
          begin_[b] = static_cast<uint32_t>((out_seg << shift_) + out + 1);
          out += n;
        }
        at += n;
      }
    }
    fill_[out_seg] = static_cast<uint32_t>(out);
    segments_.resize(out_seg + 1);
    fill_.resize(out_seg + 1);
    garbage_ = 0;
  }

  const uint32_t shift_;
  std::vector<std::unique_ptr<SetWord[]>> segments_;
  std::vector<uint32_t> fill_;   // by segment: the words written
  std::vector<uint32_t> begin_;  // by block: where its run's words start (after its header); kNoRun for an empty set
  size_t live_ = 0;              // words (headers included) in the blocks' current runs
  size_t garbage_ = 0;           // words of runs replaced, and segment ends skipped, since the last collection
};

// out = a | b (sorted runs).
void Union(std::span<const SetWord> a, std::span<const SetWord> b, std::vector<SetWord>& out) {
  out.clear();
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].index < b[j].index) {
      out.push_back(a[i++]);
    } else if (b[j].index < a[i].index) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].index, a[i].bits | b[j].bits});
      ++i, ++j;
    }
  }
  out.insert(out.end(), a.begin() + i, a.end());
  out.insert(out.end(), b.begin() + j, b.end());
}

int Units(ir::RegClass c) {
  switch (c) {
    case ir::RegClass::kPred: return 0;
    case ir::RegClass::kB64:
    case ir::RegClass::kF64: return 2;
    default: return 1;
  }
}

// A dense set of `n` bits, cleared, whose words are in the object up to 256
// bits: a small kernel's register counting allocates none for its live set
// or its referenced registers (an allocation and its free are some forty
// branches on a first codegen). Reads and writes go through one pointer,
// as a vector's do.
class FixedBits {
 public:
  explicit FixedBits(size_t n) : n_(n) {
    const size_t words = (n + 63) / 64;
    if (words > std::size(inline_)) {
      heap_ = std::make_unique<uint64_t[]>(words);  // zeroed
      words_ = heap_.get();
    }
  }
  FixedBits(const FixedBits&) = delete;  // words_ may point into the object
  FixedBits& operator=(const FixedBits&) = delete;
  size_t size() const { return n_; }
  bool Test(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  void Set(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  uint64_t& Word(size_t w) { return words_[w]; }
  const uint64_t& Word(size_t w) const { return words_[w]; }

 private:
  size_t n_;
  uint64_t inline_[4] = {};
  std::unique_ptr<uint64_t[]> heap_;
  uint64_t* words_ = inline_;
};

// The live set of the backward walk: a dense bit per register plus the
// number live per class, and the members, to clear it cheaply.
class LiveSet {
 public:
  LiveSet(const std::vector<uint8_t>& cls, size_t nregs) : cls_(cls), bits_(nregs) { members_.reserve(64); }
  bool Test(uint32_t r) const { return (bits_.Word(r / 64) >> (r % 64)) & 1; }
  void Insert(uint32_t r) {
    uint64_t& w = bits_.Word(r / 64);
    uint64_t bit = uint64_t{1} << (r % 64);
    if (w & bit) return;
    w |= bit;
    ++count_[cls_[r]];
    members_.push_back(r);
  }
  void Erase(uint32_t r) {
    uint64_t& w = bits_.Word(r / 64);
    uint64_t bit = uint64_t{1} << (r % 64);
    if (!(w & bit)) return;
    w &= ~bit;
    --count_[cls_[r]];
  }
  void Clear() {
    for (uint32_t r : members_) Erase(r);
    members_.clear();
  }
  // Appends the registers in the set to `out`, each once, and keeps the set
  // (its member list then holds exactly them).
  void AppendMembers(std::vector<uint32_t>& out) {
    const size_t start = out.size();
    for (uint32_t r : members_) {
      if (Test(r)) {  // a register erased and inserted again is listed twice: the Erase skips the second
        out.push_back(r);
        Erase(r);
      }
    }
    members_.clear();
    for (size_t k = start; k < out.size(); ++k) Insert(out[k]);
  }
  // Drops the stale entries of the member list (registers erased since)
  // when they outnumber the live ones, so that a set kept across many
  // blocks does not grow its list without bound.
  void Compact(std::vector<uint32_t>& scratch) {
    uint32_t live = 0;
    for (uint32_t c : count_) live += c;
    if (members_.size() <= 2 * static_cast<size_t>(live) + 64) return;
    scratch.clear();
    AppendMembers(scratch);
  }
  const std::array<uint32_t, ir::kNumRegClasses>& counts() const { return count_; }

 private:
  const std::vector<uint8_t>& cls_;
  FixedBits bits_;
  std::vector<uint32_t> members_;  // inserted since the last Clear (a superset of the live ones)
  std::array<uint32_t, ir::kNumRegClasses> count_{};
};

class UseCounter;

// Measures the live set after each instruction of a block walked backwards
// (plus the instruction's own definitions, which occupy registers too) and
// at its entry, into the per-class and unit maxima.
class PressureMeter {
 public:
  explicit PressureMeter(const std::vector<uint8_t>& cls) : cls_(cls) {}
  // Walks body[begin, end) backwards from `live` (the block's live-out),
  // leaving the block's live-in in it. With `used`, counts each
  // instruction and the registers it references there too (UseCounter::Note,
  // in the same loops over the operands: a second set of loops was
  // branches more on a first codegen, and a second pass over each
  // instruction's operands).
  [[gnu::always_inline]] inline void WalkBlock(const ir::Kernel& kernel, uint32_t begin, uint32_t end, LiveSet& live, UseCounter* used,
                 ir::KernelStats& stats);
  void Finish(ir::KernelStats& stats) const {
    stats.max_live = max_live_;
    stats.max_live_per_class = per_class_;
  }

 private:
  void Measure(const std::array<uint32_t, ir::kNumRegClasses>& counts) {
    uint32_t units = 0;
    for (int c = 0; c < ir::kNumRegClasses; ++c) {
      per_class_[c] = std::max(per_class_[c], counts[c]);
      units += counts[c] * Units(static_cast<ir::RegClass>(c));
    }
    max_live_ = std::max(max_live_, units);
  }

  const std::vector<uint8_t>& cls_;
  std::array<uint32_t, ir::kNumRegClasses> per_class_{};
  uint32_t max_live_ = 0;
};

// Counts the instructions and the registers referenced into stats.
class UseCounter {
 public:
  explicit UseCounter(size_t nregs) : used_(nregs) {}
  void Note(const ir::Instruction& inst, ir::KernelStats& stats) {
    stats.instructions += !inst.info().has(ir::kPseudo);
    const size_t nregs = used_.size();
    ir::ForEachUse(inst, [&](ir::Reg r) {
      if (r.id < nregs) used_.Set(r.id);
    });
    for (ir::Reg d : inst.dsts) {
      if (d.id < nregs) used_.Set(d.id);
    }
  }
  // One register of an instruction noted (a source, the guard or a
  // definition), below the number of registers.
  void Mark(uint32_t r) { used_.Set(r); }
  void Finish(const std::vector<uint8_t>& cls, ir::KernelStats& stats) const {
    for (size_t r = 0; r < used_.size(); ++r) stats.regs_per_class[cls[r]] += used_.Test(r);
  }

 private:
  FixedBits used_;  // referenced by the body (ir::RegisterNumbering's count)
};

[[gnu::always_inline]] inline void PressureMeter::WalkBlock(const ir::Kernel& kernel, uint32_t begin, uint32_t end, LiveSet& live,
                              UseCounter* used, ir::KernelStats& stats) {
  const uint32_t nregs = static_cast<uint32_t>(cls_.size());
  for (uint32_t i = end; i-- > begin;) {
    const ir::Instruction& inst = kernel.body[i];
    if (used != nullptr) stats.instructions += !inst.info().has(ir::kPseudo);
    std::array<uint32_t, ir::kNumRegClasses> at = live.counts();
    for (size_t k = 0; k < inst.dsts.size(); ++k) {
      uint32_t d = inst.dsts[k].id;
      bool repeated = false;
      for (size_t j = 0; j < k; ++j) repeated |= inst.dsts[j].id == d;
      if (!repeated && !live.Test(d)) ++at[cls_[d]];
      if (used != nullptr && d < nregs) used->Mark(d);
    }
    Measure(at);
    if (!inst.guarded()) {
      for (ir::Reg d : inst.dsts) live.Erase(d.id);
    }
    // What ir::ForEachUse visits: the registers read, then the guard.
    auto use = [&](uint32_t r) {
      if (r < nregs) {
        live.Insert(r);
        if (used != nullptr) used->Mark(r);
      }
    };
    for (const ir::Operand& op : inst.srcs) {
      if (op.reads_reg()) use(op.id);
    }
    if (inst.guard.valid()) use(inst.guard.id);
  }
  Measure(live.counts());
}
// A graph whose every edge goes to a later block (code without loops: a
// kernel of if-statements) needs no dataflow: walking the blocks last to
// first, each block's successors have their live-in sets complete when it
// is walked, and its own live-in is what the walk leaves. One read of the
// body (no gathering of use and definition sets before it). The live set
// the walk of block b + 1 leaves is kept for block b when b falls through
// to it; the live-in sets that other predecessors (a branch's source) need
// are register lists in one pool. A list costs 4 bytes per register, where
// a dense row costs a bit: when the pool outgrows the dense rows' budget (4
// words per instruction plus 4096, in bytes) the walk gives up (nullopt)
// and the caller runs the dataflow, whose memory that budget bounds (many
// values live across many if-statements).
std::optional<ir::KernelStats> CountForward(const ir::Kernel& kernel, const ir::Cfg& cfg,
                                            const std::vector<uint8_t>& cls, ir::KernelStats stats) {
  const size_t nregs = cls.size();
  const size_t nb = cfg.blocks.size();
  UseCounter used(nregs);
  PressureMeter meter(cls);
  LiveSet live(cls, nregs);
  // Block b's live-in registers are pool[in[b].first] up to
  // pool[in[b].second], kept for the blocks with a predecessor other than
  // b - 1 (one array for both ends: one allocation less).
  std::vector<uint32_t> pool, scratch;
  std::vector<std::pair<uint32_t, uint32_t>> in(nb);
  const size_t pool_cap = 8 * kernel.body.size() + 8192;
  for (size_t b = nb; b-- > 0;) {
    const ir::BasicBlock& bb = cfg.blocks[b];
    // `live` holds block b + 1's live-in (or nothing, for the last block).
    bool next_is_succ = false;
    for (uint32_t s : bb.succs) next_is_succ |= s == b + 1;
    if (next_is_succ) {
      live.Compact(scratch);
    } else {
      live.Clear();
    }
    for (uint32_t s : bb.succs) {
      if (s == b + 1) continue;
      for (uint32_t k = in[s].first; k < in[s].second; ++k) live.Insert(pool[k]);
    }
    meter.WalkBlock(kernel, bb.begin, bb.end, live, &used, stats);
    bool branched_to = false;
    for (uint32_t p : cfg.preds(b)) branched_to |= p + 1 != b;
    if (branched_to) {
      in[b].first = static_cast<uint32_t>(pool.size());
      live.AppendMembers(pool);
      in[b].second = static_cast<uint32_t>(pool.size());
      if (pool.size() > pool_cap) return std::nullopt;
    }
  }
  meter.Finish(stats);
  used.Finish(cls, stats);
  return stats;
}

}  // namespace

namespace {

ir::KernelStats Count(const ir::Kernel& kernel, const ir::Cfg& cfg, LiveInSets sets) {
  ir::KernelStats stats;
  const size_t nregs = kernel.regs.size();
  std::vector<uint8_t> cls(nregs);
  for (size_t r = 0; r < nregs; ++r) cls[r] = static_cast<uint8_t>(ir::RegClassOf(kernel.regs[r].type));

  const size_t nb = cfg.blocks.size();
  const size_t words = (nregs + 63) / 64;
  if (sets == LiveInSets::kAuto && !ir::HasBackwardEdge(cfg)) {
    if (std::optional<ir::KernelStats> counted = CountForward(kernel, cfg, cls, stats)) return *counted;
  }
  // Without an edge (straight-line code: one block) nothing is live into a
  // block from another: the per-block uses and definitions are not
  // gathered, and the backward walk alone reads the body (once, not twice).
  const bool any_edge = !cfg.pred_list.empty();
  // Dense live-in rows when they total at most a few words per instruction.
  const bool dense = sets == LiveInSets::kAuto ? nb * words <= 4 * kernel.body.size() + 4096 : sets == LiveInSets::kDense;
  // Block b's upward-exposed uses (read before any unconditional write in b)
  // are flat[use_begin[b]] up to flat[def_begin[b]], its unconditional
  // definitions flat[def_begin[b]] up to flat[use_begin[b + 1]], each sorted.
  std::vector<uint32_t> flat, use_begin(nb + 1), def_begin(nb);
  // Each block's registers are gathered first and sorted: the sparse sets'
  // merge below walks two sorted runs at once.
  std::vector<uint32_t> def_stamp(any_edge ? nregs : 0, UINT32_MAX);  // the last block that wrote each register
  std::vector<uint32_t> use_stamp(any_edge ? nregs : 0, UINT32_MAX);  // the last block that read it first
  std::vector<uint32_t> block_uses, block_defs;
  // Sized once for the common case (an instruction reads and writes about
  // three registers), so that a small kernel does not grow them step by step.
  if (any_edge) flat.reserve(3 * kernel.body.size());
  block_uses.reserve(64);
  block_defs.reserve(64);
  auto fill = [&flat, dense](std::vector<uint32_t>& regs) {
    // Registers are numbered by first appearance, so a block's definitions
    // usually come sorted: check in one pass before paying O(n log n) (a
    // million-instruction block spent more on this sort than on the rest).
    // Dense rows need no order.
    if (!dense && !std::is_sorted(regs.begin(), regs.end())) std::sort(regs.begin(), regs.end());
    flat.insert(flat.end(), regs.begin(), regs.end());
    regs.clear();
  };
  UseCounter used(nregs);
  for (uint32_t b = 0; b < nb && any_edge; ++b) {
    for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
      const ir::Instruction& inst = kernel.body[i];
      used.Note(inst, stats);
      ir::ForEachUse(inst, [&](ir::Reg r) {
        if (r.id < nregs && def_stamp[r.id] != b && use_stamp[r.id] != b) {
          use_stamp[r.id] = b;
          block_uses.push_back(r.id);
        }
      });
      if (!inst.guarded()) {
        for (ir::Reg d : inst.dsts) {
          if (def_stamp[d.id] != b) {
            def_stamp[d.id] = b;
            block_defs.push_back(d.id);
          }
        }
      }
    }
    use_begin[b] = static_cast<uint32_t>(flat.size());
    fill(block_uses);
    def_begin[b] = static_cast<uint32_t>(flat.size());
    fill(block_defs);
  }
  use_begin[nb] = static_cast<uint32_t>(flat.size());
  // The stamps are not needed again, nor flat's room to spare: freed before
  // the live-in sets are made, they are not part of the peak.
  std::vector<uint32_t>().swap(def_stamp);
  std::vector<uint32_t>().swap(use_stamp);
  flat.shrink_to_fit();
  SetPool live_in(dense ? 0 : nb, words);
  std::vector<uint64_t> dense_in(dense ? nb * words : 0);  // block b's row: words [b * words, (b + 1) * words)
  // Backward dataflow to a fixed point; blocks in reverse order, so straight
  // code converges in one sweep and each loop adds a sweep per nesting level.
  if (dense) {
    std::vector<uint64_t> in(words);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t b = nb; b-- > 0;) {
        std::fill(in.begin(), in.end(), 0);
        for (uint32_t s : cfg.blocks[b].succs) {
          const uint64_t* row = &dense_in[s * words];
          for (size_t w = 0; w < words; ++w) in[w] |= row[w];
        }
        for (uint32_t k = def_begin[b]; k < use_begin[b + 1]; ++k) in[flat[k] / 64] &= ~(uint64_t{1} << (flat[k] % 64));
        for (uint32_t k = use_begin[b]; k < def_begin[b]; ++k) in[flat[k] / 64] |= uint64_t{1} << (flat[k] % 64);
        uint64_t* row = &dense_in[b * words];
        if (!std::equal(in.begin(), in.end(), row)) {
          std::copy(in.begin(), in.end(), row);
          changed = true;
        }
      }
    }
  }
  std::vector<SetWord> in, tmp, uses;
  for (bool changed = !dense; changed;) {
    changed = false;
    for (size_t b = nb; b-- > 0;) {
      in.clear();
      for (uint32_t s : cfg.blocks[b].succs) {
        Union(in, live_in.Get(s), tmp);
        std::swap(in, tmp);
      }
      // Definitions out (both sorted: one walk), then uses in.
      size_t w = 0;
      for (uint32_t k = def_begin[b]; k < use_begin[b + 1]; ++k) {
        const uint32_t r = flat[k];
        while (w < in.size() && in[w].index < r / 64) ++w;
        if (w < in.size() && in[w].index == r / 64) in[w].bits &= ~(uint64_t{1} << (r % 64));
      }
      std::erase_if(in, [](const SetWord& x) { return x.bits == 0; });
      uses.clear();
      for (uint32_t k = use_begin[b]; k < def_begin[b]; ++k) {
        const uint32_t r = flat[k];
        if (!uses.empty() && uses.back().index == r / 64) {
          uses.back().bits |= uint64_t{1} << (r % 64);
        } else {
          uses.push_back({r / 64, uint64_t{1} << (r % 64)});
        }
      }
      if (!uses.empty()) {
        Union(in, uses, tmp);
        std::swap(in, tmp);
      }
      changed |= live_in.Update(b, in);
    }
  }
  std::vector<uint32_t>().swap(flat);

  // Walk each block backwards, measuring the live set after each instruction
  // (plus the instruction's own definitions).
  // Blocks last to first, each backwards: the body is read in one
  // descending stream, which the hardware prefetches (blocks in order, each
  // read backwards, jumped forwards every few instructions and stalled on
  // every block of a kernel that outgrows the caches). The maximum does not
  // depend on the order.
  PressureMeter meter(cls);
  LiveSet live(cls, nregs);
  for (size_t b = nb; b-- > 0;) {
    for (uint32_t s : cfg.blocks[b].succs) {
      if (dense) {
        for (size_t w = 0; w < words; ++w) {
          for (uint64_t bits = dense_in[s * words + w]; bits; bits &= bits - 1) {
            live.Insert(static_cast<uint32_t>(w * 64 + __builtin_ctzll(bits)));
          }
        }
      } else {
        for (const SetWord& x : live_in.Get(s)) {
          for (uint64_t bits = x.bits; bits; bits &= bits - 1) {
            live.Insert(x.index * 64 + static_cast<uint32_t>(__builtin_ctzll(bits)));
          }
        }
      }
    }
    meter.WalkBlock(kernel, cfg.blocks[b].begin, cfg.blocks[b].end, live, any_edge ? nullptr : &used, stats);
    live.Clear();
  }
  meter.Finish(stats);
  used.Finish(cls, stats);
  return stats;
}

}  // namespace

ir::KernelStats CountRegisters(const ir::Kernel& kernel) { return Count(kernel, ir::Cfg::Build(kernel), LiveInSets::kAuto); }

ir::KernelStats CountRegisters(const ir::Kernel& kernel, Analyses& analyses) {
  return Count(kernel, analyses.cfg(), LiveInSets::kAuto);
}

ir::KernelStats CountRegisters(const ir::Kernel& kernel, LiveInSets sets) {
  return Count(kernel, ir::Cfg::Build(kernel), sets);
}

}  // namespace ptxforge::passes
