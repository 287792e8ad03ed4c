// The emulator's observer: warp-level grouping of the instructions threads
// reach (coalescing, bank conflicts, divergence) and the shared- and
// global-memory race checker.
#include "runtime/emulator/observe.h"

#include <algorithm>

#include "ir/strings.h"

namespace ptxforge::runtime::emu {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// Sorts v[0, n) and returns the number of distinct values.
size_t CountDistinct(uint64_t* v, size_t n) {
  std::sort(v, v + n);
  return static_cast<size_t>(std::unique(v, v + n) - v);
}

// Classifies a generic address: the space it falls in and the offset there.
Space Classify(Space declared, uint64_t& address) {
  if (declared != Space::kGeneric) return declared;
  if (address - kSharedWindow < kWindowSize) {
    address -= kSharedWindow;
    return Space::kShared;
  }
  if (address - kLocalWindow < kWindowSize) return Space::kLocal;
  return Space::kGlobal;
}

std::string Coords(uint64_t linear, const uint32_t dims[3]) {
  return StrCat("(", linear % dims[0], ",", linear / dims[0] % dims[1], ",", linear / (uint64_t{dims[0]} * dims[1]), ")");
}

}  // namespace

GlobalShadow::Cell* GlobalShadow::At(uint64_t address) {
  return Page(address >> kPageBits) + (address & ((uint64_t{1} << kPageBits) - 1));
}

GlobalShadow::Cell* GlobalShadow::Page(uint64_t page) {
  for (int i = 0; i < kCacheSize; ++i) {
    if (cached_page_[i] == page) return cached_[i];
  }
  std::unique_ptr<Cell[]>& cells = pages_[page];
  if (cells == nullptr) cells = std::make_unique<Cell[]>(size_t{1} << kPageBits);
  cached_page_[next_] = page;
  cached_[next_] = cells.get();
  next_ = (next_ + 1) % kCacheSize;
  return cells.get();
}

Observer::Observer(const Program& program, const Launch& launch, bool profile, bool race_check, GlobalShadow* global)
    : program_(program),
      launch_(launch),
      profile_(profile),
      race_check_(race_check),
      global_(global),
      ncode_(static_cast<uint32_t>(program.code.size())),
      nthreads_(launch.threads_per_block),
      nwarps_((launch.threads_per_block + 31) / 32) {
  sites_.resize(ncode_);
  for (uint32_t pc = 0; pc < ncode_; ++pc) {
    const DInst& d = program.code[pc];
    if (d.index >= program.kernel.body.size()) continue;  // the final exit
    const ir::Instruction& inst = program.kernel.body[d.index];
    Site& s = sites_[pc];
    const bool memory = d.space != Space::kParam && d.space != Space::kLocal;
    switch (inst.info().rule) {
      case ir::OpRule::kLoad: s.kind = memory ? SiteKind::kLoad : SiteKind::kNone; break;
      case ir::OpRule::kStore: s.kind = memory ? SiteKind::kStore : SiteKind::kNone; break;
      case ir::OpRule::kAtom:
      case ir::OpRule::kRed: s.kind = memory ? SiteKind::kAtomic : SiteKind::kNone; break;
      case ir::OpRule::kBranch: s.kind = d.guard != kNoSlot ? SiteKind::kBranch : SiteKind::kNone; break;
      case ir::OpRule::kCpAsync: s.kind = SiteKind::kCopy; break;
      case ir::OpRule::kMatrix: s.kind = inst.op == ir::Opcode::kLdmatrix ? SiteKind::kLoad : SiteKind::kStore; break;
      default: break;
    }
    if (s.kind == SiteKind::kNone) continue;
    s.bytes = static_cast<uint32_t>(ir::TypeSize(d.mods.type)) * (s.kind == SiteKind::kAtomic ? 1 : d.vec);
    if (inst.info().rule == ir::OpRule::kMatrix) {  // lane 8m + r: row r (16 bytes) of matrix m
      s.bytes = 16;
      s.lanes = 8u * d.vec;
    }
    if (profile_ && s.kind != SiteKind::kAtomic && s.kind != SiteKind::kCopy) {
      s.group = static_cast<uint32_t>(group_pcs_.size());
      group_pcs_.push_back(pc);
    }
  }
  if (profile_) {
    stats_.resize(ncode_);
    visits_.resize(size_t{nthreads_} * ncode_);
    warp_max_.resize(size_t{nwarps_} * ncode_);
    queues_.resize(size_t{nwarps_} * group_pcs_.size());
  }
  if (race_check_) {
    shared_.resize(launch.shared_bytes);
    warp_syncs_.resize(nwarps_);
    warp_sync_epoch_.assign(nwarps_, UINT32_MAX);
  }
}

Observer::~Observer() = default;

void Observer::BeginBlock(uint64_t block_index) {
  ++epoch_;
  block_plus1_ = static_cast<uint32_t>(block_index + 1);
  if (profile_) {
    std::fill(visits_.begin(), visits_.end(), 0);
    std::fill(warp_max_.begin(), warp_max_.end(), 0);
  }
}

void Observer::EndBlock() {
  if (!profile_) return;
  for (size_t q = 0; q < queues_.size(); ++q) {
    GroupQueue& queue = queues_[q];
    const uint32_t pc = group_pcs_[q % group_pcs_.size()];
    for (size_t i = queue.head; i < queue.groups.size(); ++i) {
      if (queue.groups[i].reached != 0) Finish(pc, queue.groups[i]);
    }
    queue.groups.clear();
    queue.head = 0;
    queue.first_k = 0;
  }
}

bool Observer::ReachSite(Block& b, Thread& t, const DInst& d, uint64_t k) {
  const uint32_t pc = t.pc;
  const Site& site = sites_[pc];
  const bool on = (d.guard == kNoSlot || (t.regs[d.guard] != 0) != static_cast<bool>(d.guard_negated)) &&
                  t.linear % 32 < site.lanes;
  const uint64_t address = (d.base == kNoSlot ? 0 : t.regs[d.base]) + static_cast<uint64_t>(d.imm);
  if (site.group != kNone) Record(t.linear / 32, t.linear % 32, k, pc, on, address);
  if (!race_check_ || !on || site.kind == SiteKind::kBranch) return true;
  if (site.kind == SiteKind::kCopy) {
    // The global source is read now (its shared write is checked where it
    // lands: CopyLanded); src-size bytes of it, none for src-size 0.
    const uint32_t cp_size = Get<uint32_t>(t, d.src[0]);
    const uint32_t bytes = d.nsrc > 1 ? std::min(cp_size, Get<uint32_t>(t, d.src[1])) : cp_size;
    const uint64_t src = (d.base2 == kNoSlot ? 0 : t.regs[d.base2]) + static_cast<uint64_t>(d.imm2);
    if (bytes == 0 || cp_size == 0 || src % cp_size != 0) return true;  // the handler reports a misaligned one
    return CheckGlobal(b, t, pc, src, bytes, SiteKind::kLoad);
  }
  uint64_t offset = address;
  switch (Classify(d.space, offset)) {
    case Space::kShared: return CheckShared(b, t, pc, offset, site.bytes, site.kind);
    case Space::kGlobal:
      return site.kind == SiteKind::kAtomic || offset % site.bytes != 0 ||
             CheckGlobal(b, t, pc, offset, site.bytes, site.kind);
    default: return true;
  }
}

void Observer::Record(uint32_t warp, uint32_t lane, uint64_t k, uint32_t pc, bool active, uint64_t value) {
  GroupQueue& q = queues_[size_t{warp} * group_pcs_.size() + sites_[pc].group];
  const size_t i = q.head + static_cast<size_t>(k - q.first_k);
  if (i >= q.groups.size()) q.groups.resize(i + 1);
  Group& g = q.groups[i];
  const uint32_t bit = uint32_t{1} << lane;
  g.reached |= bit;
  if (active) {
    g.active |= bit;
    g.address[lane] = value;
  }
  const uint32_t lanes = std::min<uint32_t>(32, nthreads_ - warp * 32);
  const uint32_t full = lanes == 32 ? UINT32_MAX : (uint32_t{1} << lanes) - 1;
  while (q.head < q.groups.size() && q.groups[q.head].reached == full) {
    Finish(pc, q.groups[q.head]);
    q.head++;
    q.first_k++;
  }
  if (q.head == q.groups.size()) {
    q.groups.clear();  // keeps the capacity
    q.head = 0;
  }
}

void Observer::Finish(uint32_t pc, const Group& g) {
  const Site& site = sites_[pc];
  ProfileCounts& s = stats_[pc];
  if (site.kind == SiteKind::kBranch) {
    s.branch_executions++;
    if (g.active != 0 && g.active != g.reached) s.branch_splits++;
    return;
  }
  if (g.active == 0) return;
  const DInst& d = program_.code[pc];
  const uint32_t bytes = site.bytes;
  uint64_t global[32], shared[32];
  int nglobal = 0, nshared = 0;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    if ((g.active >> lane & 1) == 0) continue;
    uint64_t a = g.address[lane];
    Space space = Classify(d.space, a);
    if (space == Space::kGlobal) global[nglobal++] = a;
    if (space == Space::kShared) shared[nshared++] = a | uint64_t{lane} << 58;  // the lane rides along for phases
  }
  if (nglobal > 0) {
    uint64_t sectors[64], lines[64];
    size_t ns = 0, nl = 0;
    for (int i = 0; i < nglobal; ++i) {
      for (uint64_t x = global[i] >> 5; x <= (global[i] + bytes - 1) >> 5 && ns < 64; ++x) sectors[ns++] = x;
      for (uint64_t x = global[i] >> 7; x <= (global[i] + bytes - 1) >> 7 && nl < 64; ++x) lines[nl++] = x;
    }
    const uint64_t distinct_bytes = uint64_t{bytes} * CountDistinct(global, static_cast<size_t>(nglobal));
    s.global_requests++;
    s.global_bytes += distinct_bytes;
    s.sectors += CountDistinct(sectors, ns);
    s.lines += CountDistinct(lines, nl);
    s.ideal_sectors += (distinct_bytes + 31) / 32;
  }
  if (nshared > 0) {
    // Lanes served together: the whole warp up to 4 bytes, else 128 bytes' worth.
    const uint32_t phase_lanes = bytes <= 4 ? 32 : 128 / bytes;
    s.shared_requests++;
    for (uint32_t first = 0; first < 32; first += phase_lanes) {
      uint64_t words[128];
      size_t nw = 0;
      for (int i = 0; i < nshared; ++i) {
        const uint32_t lane = static_cast<uint32_t>(shared[i] >> 58);
        if (lane < first || lane >= first + phase_lanes) continue;
        const uint64_t a = shared[i] & ((uint64_t{1} << 58) - 1);
        for (uint64_t w = a >> 2; w <= (a + bytes - 1) >> 2 && nw < 128; ++w) words[nw++] = w;
      }
      if (nw == 0) continue;
      const size_t distinct = CountDistinct(words, nw);
      uint32_t per_bank[32] = {};
      uint32_t most = 0;
      for (size_t i = 0; i < distinct; ++i) most = std::max(most, ++per_bank[words[i] & 31]);
      s.wavefronts += most;
      s.ideal_wavefronts += 1;
    }
  }
}

bool Observer::CheckShared(Block& b, Thread& t, uint32_t pc, uint64_t offset, uint32_t bytes, SiteKind kind) {
  if (offset >= shared_.size() || bytes > shared_.size() - offset || offset % bytes != 0) {
    return true;  // the handler reports it
  }
  const uint16_t me = static_cast<uint16_t>(t.linear + 1);
  const bool write = kind != SiteKind::kLoad;
  const bool atomic = kind == SiteKind::kAtomic;
  const uint32_t my_syncs = static_cast<uint32_t>(WarpSyncs(t.linear / 32).size());
  for (uint64_t byte = offset; byte < offset + bytes; ++byte) {
    SharedCell& c = shared_[byte];
    if (c.epoch != epoch_) {
      c = SharedCell();
      c.epoch = epoch_;
    }
    // The earlier accesses that a bar.warp.sync of both threads orders
    // before this one do not race with it.
    AccessCell<uint16_t> unordered = c;
    if (my_syncs > 0) {
      if (unordered.writer != 0 && SyncedSince(unordered.writer - 1u, c.writer_sync, t.linear)) unordered.writer = 0;
      for (int r = 0; r < 2; ++r) {
        if (unordered.reader[r] != 0 && SyncedSince(unordered.reader[r] - 1u, c.reader_sync[r], t.linear)) {
          unordered.reader[r] = 0;
        }
      }
    }
    uint32_t other_pc = 0;
    const uint16_t other = unordered.Conflict(me, write, atomic && c.writer_atomic, &other_pc);
    if (other != 0) {
      b.error = absl::FailedPreconditionError(StrCat(
          "kernel ", program_.kernel.name, ": shared-memory data race in block (", b.ctaid[0], ",", b.ctaid[1], ",",
          b.ctaid[2], ") on shared address ", byte, " (two threads, at least one writing, no barrier between): ",
          Describe(other - 1, other_pc), "; ", Describe(t.linear, pc)));
      return false;
    }
    c.Note(me, pc, write);
    if (write) {
      c.writer_atomic = atomic;
      c.writer_sync = my_syncs;
    }
    for (int r = 0; r < 2 && !write; ++r) {
      if (c.reader[r] == me) c.reader_sync[r] = my_syncs;
    }
  }
  return true;
}

void Observer::WarpSynced(uint32_t warp, uint32_t members) {
  if (race_check_) WarpSyncs(warp).push_back(members);
}

std::vector<uint32_t>& Observer::WarpSyncs(uint32_t warp) {
  if (warp_sync_epoch_[warp] != epoch_) {
    warp_syncs_[warp].clear();
    warp_sync_epoch_[warp] = epoch_;
  }
  return warp_syncs_[warp];
}

bool Observer::SyncedSince(uint32_t a, uint32_t since, uint32_t b) {
  if (a / 32 != b / 32) return false;
  const uint32_t both = (uint32_t{1} << (a % 32)) | (uint32_t{1} << (b % 32));
  const std::vector<uint32_t>& syncs = WarpSyncs(b / 32);
  for (size_t i = since; i < syncs.size(); ++i) {
    if ((syncs[i] & both) == both) return true;
  }
  return false;
}

// `address` is aligned (the caller checks).
bool Observer::CheckGlobal(Block& b, Thread& t, uint32_t pc, uint64_t address, uint32_t bytes, SiteKind kind) {
  const uint32_t me = block_plus1_;
  const uint32_t who = t.linear << 22 | pc;
  const bool write = kind == SiteKind::kStore;
  GlobalShadow::Cell* cells = global_->At(address);
  for (uint64_t byte = address; byte < address + bytes; ++byte) {
    GlobalShadow::Cell& c = cells[byte - address];
    uint32_t other_who = 0;
    const uint32_t other = c.Conflict(me, write, false, &other_who);
    if (other != 0) {
      b.error = absl::FailedPreconditionError(
          StrCat("kernel ", program_.kernel.name, ": global-memory data race on 0x", Hex{byte},
                 " between blocks (plain accesses, at least one writing, no ordering within a launch): block ",
                 Coords(other - 1, launch_.grid), " ", Describe(other_who >> 22, other_who & ((1u << 22) - 1)),
                 "; block ", Coords(me - 1, launch_.grid), " ", Describe(t.linear, pc)));
      return false;
    }
    c.Note(me, who, write);
  }
  return true;
}

// "thread (3,0,0) stores at `st.shared.f32 [%r4], %f1;` (reduce.cc:40)"
std::string Observer::Describe(uint32_t thread, uint32_t pc) const {
  const uint32_t index = program_.code[pc].index;
  const SiteKind kind = sites_[pc].kind;
  const std::string loc = program_.SourceLoc(index);
  return StrCat("thread ", Coords(thread, launch_.block), " ",
                kind == SiteKind::kLoad    ? "loads"
                : kind == SiteKind::kStore ? "stores"
                : kind == SiteKind::kCopy  ? "copies asynchronously (the write lands at its wait)"
                                           : "accesses atomically",
                " at `",
                program_.PtxText(index), "`", loc.empty() ? std::string() : StrCat(" (", loc, ")"));
}

EmulatorProfile Observer::Merge(const Program& program, const std::vector<std::unique_ptr<Observer>>& observers) {
  EmulatorProfile out;
  if (observers.empty() || !observers[0]->profile_) return out;
  for (uint32_t pc = 0; pc < observers[0]->ncode_; ++pc) {
    ProfileCounts counts;
    for (const auto& o : observers) counts += o->stats_[pc];
    const uint32_t index = program.code[pc].index;
    if (counts.warp_executions == 0 || index >= program.kernel.body.size()) continue;  // not run, or the final exit
    out.total += counts;
    out.instructions.push_back({.index = index, .ptx = program.PtxText(index), .loc = program.SourceLoc(index), .counts = counts});
  }
  return out;
}

}  // namespace ptxforge::runtime::emu
