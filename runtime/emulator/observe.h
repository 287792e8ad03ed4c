// The emulator's observer (internal): sees every instruction a thread
// reaches when profiling or race checking is on, and builds the
// EmulatorProfile and the race reports. With both off no Observer exists and
// the thread loop does not call it.
#ifndef PTXFORGE_RUNTIME_EMULATOR_OBSERVE_H_
#define PTXFORGE_RUNTIME_EMULATOR_OBSERVE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include <unordered_map>
#include "runtime/emulator/program.h"
#include "runtime/emulator_profile.h"

namespace ptxforge::runtime::emu {

// The earlier accesses to one byte that a later one may race with: the
// last writer and up to two readers, each with where it happened. Who is
// the accessor + 1 (a thread or a block; 0: none).
template <typename Who>
struct AccessCell {
  Who writer = 0;
  Who reader[2] = {0, 0};  // different accessors
  uint32_t writer_at = 0;
  uint32_t reader_at[2] = {0, 0};

  // The accessor an access by `me` races with (the writer; for a write also
  // a reader), or 0. `writer_ok`: the writer does not count (both atomic).
  Who Conflict(Who me, bool write, bool writer_ok, uint32_t* at) const {
    if (writer != 0 && writer != me && !writer_ok) {
      *at = writer_at;
      return writer;
    }
    for (int r = 0; r < 2 && write; ++r) {
      if (reader[r] != 0 && reader[r] != me) {
        *at = reader_at[r];
        return reader[r];
      }
    }
    return 0;
  }
  // Records an access that raced with nothing.
  void Note(Who me, uint32_t at, bool write) {
    if (write) {
      writer = me;
      writer_at = at;
      reader[0] = reader[1] = 0;  // they were `me` (anyone else raced)
    } else if (reader[0] == 0 || reader[0] == me) {
      reader[0] = me;
      reader_at[0] = at;
    } else if (reader[1] == 0 || reader[1] == me) {
      reader[1] = me;
      reader_at[1] = at;
    }  // else two other readers are known: any later write races with one
  }
};

// Who accessed global memory, per byte, across the blocks of one launch
// (race checking runs the blocks on one host thread, so it is unguarded).
class GlobalShadow {
 public:
  using Cell = AccessCell<uint32_t>;  // who: block + 1; at: thread << 22 | pc
  // The cells of [address, address + bytes), which must not cross a 4 KiB
  // page (an aligned access of up to 32 bytes never does).
  Cell* At(uint64_t address);

 private:
  static constexpr int kPageBits = 12;
  static constexpr int kCacheSize = 4;  // recently used pages (a kernel streams through a few arrays)
  Cell* Page(uint64_t page);
  std::unordered_map<uint64_t, std::unique_ptr<Cell[]>> pages_;
  uint64_t cached_page_[kCacheSize] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
  Cell* cached_[kCacheSize] = {};
  int next_ = 0;
};

class Observer {
 public:
  // `global` is the launch's global shadow when race checking, else null.
  Observer(const Program& program, const Launch& launch, bool profile, bool race_check, GlobalShadow* global);
  ~Observer();

  void BeginBlock(uint64_t block_index);
  // Thread `t` of `b` reached code[t.pc] (before its guard is evaluated).
  // Returns false after recording a race as the block's error.
  bool Reach(Block& b, Thread& t, const DInst& d) {
    uint64_t k = 0;
    if (profile_) k = Visit(t);
    return sites_[t.pc].kind == SiteKind::kNone || ReachSite(b, t, d, k);
  }
  // A barrier released threads: later shared accesses are ordered after
  // earlier ones.
  void BarrierReleased() { ++epoch_; }
  // bar.warp.sync completed for the lanes `members` of `warp`: their shared
  // accesses before it are ordered before their accesses after it.
  void WarpSynced(uint32_t warp, uint32_t members);
  // A cp.async that thread t issued at `pc` landed (at t's wait) on
  // [offset, offset + bytes) of shared memory: a write by t, checked now.
  // Returns false after recording a race as the block's error.
  bool CopyLanded(Block& b, Thread& t, uint32_t pc, uint64_t offset, uint32_t bytes) {
    return !race_check_ || CheckShared(b, t, pc, offset, bytes, SiteKind::kCopy);
  }
  void EndBlock();

  // The profile of a launch from its workers' observers.
  static EmulatorProfile Merge(const Program& program, const std::vector<std::unique_ptr<Observer>>& observers);

 private:
  // kCopy: cp.async, a global read when issued and a shared write where it lands.
  enum class SiteKind : uint8_t { kNone, kLoad, kStore, kAtomic, kBranch, kCopy };
  struct Site {
    SiteKind kind = SiteKind::kNone;
    uint32_t bytes = 0;      // per lane (ld/st/atom)
    uint32_t lanes = 32;     // lanes that access (ldmatrix.x1: 0-7 give row addresses)
    uint32_t group = UINT32_MAX;  // index among the grouped sites (profiled ld/st and guarded bra)
  };
  // The lanes of one warp at the k-th execution of a site.
  struct Group {
    uint32_t reached = 0;
    uint32_t active = 0;  // accessed (ld/st) or took the branch
    uint64_t address[32];
  };
  // The groups of one warp and site not yet finished: groups[head + i] is
  // execution first_k + i. A group is finished once every lane reached it
  // (or at the end of the block).
  struct GroupQueue {
    uint64_t first_k = 0;
    size_t head = 0;
    std::vector<Group> groups;
  };
  // Who: thread + 1; at: pc. Valid in its epoch (between two barriers).
  // *_sync: how many bar.warp.syncs the accessor's warp had completed in
  // the epoch when it accessed.
  struct SharedCell : AccessCell<uint16_t> {
    uint32_t epoch = 0;
    bool writer_atomic = false;
    uint32_t writer_sync = 0;
    uint32_t reader_sync[2] = {0, 0};
  };

  // Counts the visit of t to its pc; returns how many earlier visits it made.
  uint64_t Visit(const Thread& t) {
    const uint32_t pc = t.pc;
    uint32_t& visits = visits_[size_t{t.linear} * ncode_ + pc];
    const uint64_t k = visits++;
    uint32_t& most = warp_max_[size_t{t.linear / 32} * ncode_ + pc];
    ProfileCounts& s = stats_[pc];
    if (visits > most) {
      most = visits;
      s.warp_executions++;
    }
    s.thread_executions++;
    return k;
  }
  bool ReachSite(Block& b, Thread& t, const DInst& d, uint64_t k);
  void Record(uint32_t warp, uint32_t lane, uint64_t k, uint32_t pc, bool active, uint64_t value);
  void Finish(uint32_t pc, const Group& g);
  bool CheckShared(Block& b, Thread& t, uint32_t pc, uint64_t offset, uint32_t bytes, SiteKind kind);
  // The member masks of the bar.warp.syncs `warp` completed in this epoch.
  std::vector<uint32_t>& WarpSyncs(uint32_t warp);
  // Whether threads `a` and `b` (linear ids) took part in one bar.warp.sync
  // after a's first `since` ones of this epoch.
  bool SyncedSince(uint32_t a, uint32_t since, uint32_t b);
  bool CheckGlobal(Block& b, Thread& t, uint32_t pc, uint64_t address, uint32_t bytes, SiteKind kind);
  // "thread (3,0,0) stores at `st.shared.f32 [%r4], %f1;` (reduce.cc:40)"
  std::string Describe(uint32_t thread, uint32_t pc) const;

  const Program& program_;
  const Launch& launch_;
  const bool profile_;
  const bool race_check_;
  GlobalShadow* global_;
  const uint32_t ncode_;
  const uint32_t nthreads_;
  const uint32_t nwarps_;
  std::vector<Site> sites_;          // by pc
  std::vector<uint32_t> group_pcs_;  // by group index
  std::vector<ProfileCounts> stats_;  // by pc
  // Profiling, per block.
  std::vector<uint32_t> visits_;     // threads x pcs
  std::vector<uint32_t> warp_max_;   // warps x pcs: the most visits of any lane
  std::vector<GroupQueue> queues_;   // warps x groups
  // Race checking.
  std::vector<SharedCell> shared_;
  uint32_t epoch_ = 0;
  std::vector<std::vector<uint32_t>> warp_syncs_;  // by warp
  std::vector<uint32_t> warp_sync_epoch_;           // by warp: the epoch warp_syncs_ belongs to
  uint32_t block_plus1_ = 0;
};

}  // namespace ptxforge::runtime::emu

#endif  // PTXFORGE_RUNTIME_EMULATOR_OBSERVE_H_
