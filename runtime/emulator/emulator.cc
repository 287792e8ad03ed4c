// The emulator device: memory, Load, Launch, and the block scheduler that
// gives bar.sync and warp collectives their block-wide semantics.
#include "runtime/emulator.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <new>
#include <thread>

#include "ir/strings.h"
#include "ir/verify.h"
#include "runtime/emulator/float_semantics.h"
#include "runtime/emulator/observe.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime {

using emu::Action;
using emu::Block;
using emu::DInst;
using emu::Program;
using emu::Thread;
using emu::ThreadState;

namespace {

// The largest shared memory a block may use (sm_90: 227 KiB).
constexpr uint32_t kMaxSharedBytes = 227 * 1024;

class EmulatedKernel : public LoadedKernel {
 public:
  EmulatedKernel(const ir::Kernel& kernel, Program program, const Emulator& owner)
      : LoadedKernel(kernel, owner), program_(std::move(program)) {}
  const Program& program() const { return program_; }

 private:
  Program program_;
};

std::string Hex64(uint64_t v) { return StrCat("0x", Hex{v}); }

// splitmix64: the generator behind EmulatorOptions::schedule_seed (the same
// sequence everywhere, unlike std::shuffle's distributions).
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Fisher-Yates with NextRandom (the modulo bias is irrelevant here).
template <typename T>
void Shuffle(std::vector<T>& v, uint64_t& state) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[NextRandom(state) % i]);
}

}  // namespace

// ---- counters

EmulatorCounters& EmulatorCounters::operator+=(const EmulatorCounters& o) {
  instructions += o.instructions;
  for (int i = 0; i < ir::kNumOpClasses; ++i) by_class[i] += o.by_class[i];
  global_load_bytes += o.global_load_bytes;
  global_store_bytes += o.global_store_bytes;
  shared_loads += o.shared_loads;
  shared_stores += o.shared_stores;
  atomics += o.atomics;
  barriers += o.barriers;
  return *this;
}

std::string EmulatorCounters::ToString() const {
  std::string out = StrCat("instructions=", instructions, " (");
  bool first = true;
  for (int i = 0; i < ir::kNumOpClasses; ++i) {
    if (by_class[i] == 0) continue;
    StrAppend(&out, first ? "" : " ", ir::OpClassName(static_cast<ir::OpClass>(i)), "=", by_class[i]);
    first = false;
  }
  StrAppend(&out, ") global_load_bytes=", global_load_bytes, " global_store_bytes=", global_store_bytes,
            " shared_loads=", shared_loads, " shared_stores=", shared_stores, " atomics=", atomics,
            " barriers=", barriers);
  return out;
}

namespace emu {

std::string Launch::OverLimit() const {
  if (max_launch_instructions != 0 && executed->load(std::memory_order_relaxed) > max_launch_instructions) {
    return StrCat("the launch executed more than ", max_launch_instructions,
                  " thread-instructions (EmulatorOptions::max_launch_instructions)");
  }
  if (has_deadline && std::chrono::steady_clock::now() > deadline) {
    return StrCat("the launch ran longer than ", timeout.count(), " ms (EmulatorOptions::launch_timeout)");
  }
  return "";
}

std::string Block::Where(const Thread& t) const {
  return StrCat("block (", ctaid[0], ",", ctaid[1], ",", ctaid[2], ") thread (", t.tid[0], ",", t.tid[1], ",", t.tid[2],
                ")");
}

Action Block::Fail(const Thread& t, const DInst& d, std::string message) {
  if (!error.ok()) return Action::kError;
  std::string loc = program->SourceLoc(d.index);
  std::string text = program->PtxText(d.index);
  error = absl::FailedPreconditionError(StrCat("kernel ", program->kernel.name, ": ", message, "; ", Where(t),
                                               text.empty() ? std::string() : StrCat(" at `", text, "`"),
                                               loc.empty() ? std::string() : StrCat(" (", loc, ")")));
  return Action::kError;
}

namespace {

// Runs a thread until it waits, exits or fails. kObserve: b.observer sees
// each instruction the thread reaches.
template <bool kCheckInit, bool kObserve>
void RunThread(Block& b, Thread& t) {
  const DInst* code = b.program->code.data();
  auto& by_class = b.counters.by_class;
  const uint64_t limit = b.launch->max_instructions;
  for (;;) {
    const DInst& d = code[t.pc];
    ++by_class[d.op_class];
    if (++t.executed > limit) {
      b.Fail(t, d, StrCat("a thread executed more than ", limit, " instructions (an infinite loop?)"));
      return;
    }
    if ((t.executed & (kLaunchCheckInterval - 1)) == 0) {
      b.launch->executed->fetch_add(kLaunchCheckInterval, std::memory_order_relaxed);
      if (std::string over = b.launch->OverLimit(); !over.empty()) {
        b.Fail(t, d, over);
        return;
      }
    }
    if constexpr (kObserve) {
      if (!b.observer->Reach(b, t, d)) return;
    }
    if (d.guard != kNoSlot) {
      if constexpr (kCheckInit) {
        if (!t.defined[d.guard]) {
          std::string name;
          ir::AppendPtxRegName(name, b.program->numbering, ir::Reg{d.guard});
          b.Fail(t, d, StrCat("read of guard predicate ", name, ", which was never written"));
          return;
        }
      }
      if ((t.regs[d.guard] != 0) == static_cast<bool>(d.guard_negated)) {
        ++t.pc;
        continue;
      }
    }
    if constexpr (kCheckInit) {
      auto check = [&](uint32_t slot) {
        if (slot == kNoSlot || t.defined[slot]) return true;
        std::string name;
        ir::AppendPtxRegName(name, b.program->numbering, ir::Reg{slot});
        b.Fail(t, d, StrCat("read of register ", name, ", which was never written"));
        return false;
      };
      for (int k = 0; k < d.nsrc; ++k) {
        if (!check(d.src[k])) return;
      }
      if (!check(d.base) || !check(d.base2)) return;
    }
    Action a = d.fn(b, t, d);
    if constexpr (kCheckInit) {
      if (a == Action::kNext || a == Action::kJump) {
        for (int k = 0; k < d.ndst; ++k) t.defined[d.dst[k]] = 1;
      }
    }
    switch (a) {
      case Action::kNext: ++t.pc; break;
      case Action::kJump: break;
      case Action::kBlock: return;
      case Action::kExit: t.state = ThreadState::kExited; return;
      case Action::kError: return;
    }
  }
}

// "0-127" style ranges of linear thread indices.
std::string Ranges(const std::vector<uint32_t>& ids) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    parts.push_back(i == j ? StrCat(ids[i]) : StrCat(ids[i], "-", ids[j]));
    i = j + 1;
  }
  return StrJoin(parts, ",");
}

void Deadlock(Block& b) {
  const Program& p = *b.program;
  // Group threads by what they are doing.
  std::map<std::pair<int, uint32_t>, std::vector<uint32_t>> groups;  // (state, pc) -> threads
  for (const Thread& t : b.threads) {
    groups[{static_cast<int>(t.state), t.state == ThreadState::kExited ? 0 : t.pc}].push_back(t.linear);
  }
  std::vector<std::string> parts;
  for (const auto& [key, ids] : groups) {
    auto state = static_cast<ThreadState>(key.first);
    std::string what;
    if (state == ThreadState::kExited) {
      what = "exited";
    } else {
      const DInst& d = p.code[key.second];
      std::string loc = p.SourceLoc(d.index);
      what = StrCat(state == ThreadState::kBarrier ? "wait at `" : "wait in warp collective `", p.PtxText(d.index), "`",
                    loc.empty() ? std::string() : StrCat(" (", loc, ")"));
    }
    parts.push_back(StrCat("threads ", Ranges(ids), " ", what));
  }
  const uint32_t* nt = b.launch->block;
  bool multi = nt[1] > 1 || nt[2] > 1;
  b.error = absl::FailedPreconditionError(
      StrCat("kernel ", p.kernel.name, ": deadlock in block (", b.ctaid[0], ",", b.ctaid[1], ",", b.ctaid[2],
             "): ", StrJoin(parts, "; "),
             multi ? StrCat(" (thread numbers are linear: x + y*", nt[0], " + z*", nt[0] * nt[1], ")") : std::string()));
}

// Completes warp collectives whose lanes have all arrived; returns whether
// any did. Only called when no thread can run, so every lane of a warp has
// either exited or waits somewhere.
//  - shfl.sync / vote.sync / bar.warp.sync: every lane of the member mask
//    must wait at an instruction of the same kind with the same mask (on
//    sm_70+ it may be a different instruction). A mask naming an exited or absent lane, or
//    lanes passing different masks, is an error.
//  - redux.sync / match.sync: as shfl.sync, each kind with its own lanes.
//  - ldmatrix / stmatrix (.sync.aligned, no mask): all 32 lanes of the warp
//    must wait at that same instruction.
//  - activemask: the lanes waiting at that instruction form the mask.
bool ReleaseWarps(Block& b) {
  const Program& p = *b.program;
  bool progressed = false;
  const uint32_t n = static_cast<uint32_t>(b.threads.size());
  for (uint32_t warp = 0; warp * 32 < n && b.error.ok(); ++warp) {
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t i = warp * 32 + lane;
      if (i >= n) break;
      Thread& first = b.threads[i];
      if (first.state != ThreadState::kWarp) continue;
      const DInst& d = p.code[first.pc];
      Thread* lanes[32];
      const DInst* insts[32];
      int count = 0;
      if (d.collective == emu::Collective::kActiveMask) {
        for (uint32_t m = 0; m < 32 && warp * 32 + m < n; ++m) {
          Thread& other = b.threads[warp * 32 + m];
          if (other.state == ThreadState::kWarp && other.pc == first.pc) {
            lanes[count] = &other;
            insts[count++] = &d;
          }
        }
        emu::RunCollective(b, lanes, insts, count);
        progressed = true;
        continue;
      }
      // The member mask: shfl.sync d, a, b, c, mask; vote.sync d, p, mask;
      // bar.warp.sync mask.
      auto mask_of = [&](const Thread& t, const DInst& inst) {
        switch (inst.collective) {
          case emu::Collective::kMma: return 0xFFFFFFFFu;  // mma.sync: the whole warp
          case emu::Collective::kShfl: return Get<uint32_t>(t, inst.src[3]);
          case emu::Collective::kWarpSync: return Get<uint32_t>(t, inst.src[0]);
          default: return Get<uint32_t>(t, inst.src[1]);
        }
      };
      // ldmatrix/stmatrix and mma take the whole warp; the messages say so instead of
      // naming a member mask.
      const bool aligned = d.collective == emu::Collective::kMatrix || d.collective == emu::Collective::kMma;
      const std::string who =
          aligned ? StrCat(ir::Mnemonic(p.kernel.body[d.index].op), " needs all 32 lanes of the warp, but")
                  : std::string();
      const uint32_t mask = aligned ? 0xFFFFFFFFu : mask_of(first, d);
      if ((mask >> lane & 1) == 0) {
        b.Fail(first, d, StrCat("the member mask 0x", Hex{mask, 8}, " does not include the calling lane ", lane));
        return false;
      }
      bool ready = true;
      for (uint32_t m = 0; m < 32 && ready; ++m) {
        if ((mask >> m & 1) == 0) continue;
        uint32_t j = warp * 32 + m;
        if (j >= n) {
          b.Fail(first, d, aligned ? StrCat(who, " lane ", m, " is not in the block")
                                   : StrCat("the member mask 0x", Hex{mask, 8}, " names lane ", m,
                                            ", which is not in the block"));
          return false;
        }
        Thread& other = b.threads[j];
        if (other.state == ThreadState::kExited) {
          b.Fail(first, d, aligned ? StrCat(who, " lane ", m, " has exited")
                                   : StrCat("the member mask 0x", Hex{mask, 8}, " names lane ", m, ", which has exited"));
          return false;
        }
        const DInst& od = p.code[other.pc];
        if (other.state != ThreadState::kWarp || od.collective != d.collective) {
          ready = false;  // it waits elsewhere; a deadlock unless it is released
          break;
        }
        if (aligned) {
          if (other.pc != first.pc) {
            b.Fail(first, d, StrCat(who, " lanes ", lane, " and ", m, " wait at different instructions"));
            return false;
          }
        } else if (mask_of(other, od) != mask) {
          b.Fail(first, d, StrCat("lanes ", lane, " and ", m, " wait with different member masks (0x", Hex{mask, 8},
                                  " and 0x", Hex{mask_of(other, od), 8}, ")"));
          return false;
        }
        lanes[count] = &other;
        insts[count++] = &od;
      }
      if (!ready) continue;
      emu::RunCollective(b, lanes, insts, count);
      progressed = true;
    }
  }
  return progressed;
}

// Releases barriers whose threads have arrived. Without a thread count a
// barrier needs every thread of the block (a thread that exited while others
// wait is reported as a deadlock: CUDA makes that undefined). With a count
// (a multiple of 32), arrival is per warp, as in PTX: a warp has arrived
// when all its lanes that have not exited wait at the barrier, and the
// barrier releases the first count/32 arrived warps.
bool ReleaseBarriers(Block& b) {
  const Program& p = *b.program;
  const uint32_t n = static_cast<uint32_t>(b.threads.size());
  uint32_t waiting[16] = {};
  uint32_t expected[16] = {};  // 0: the whole block
  bool seen[16] = {};
  for (Thread& t : b.threads) {
    if (t.state != ThreadState::kBarrier) continue;
    const DInst& d = p.code[t.pc];
    uint32_t id = Get<uint32_t>(t, d.src[0]);
    if (id > 15) {
      b.Fail(t, d, StrCat("barrier id ", id, " is out of range (0..15)"));
      return false;
    }
    uint32_t count = d.nsrc > 1 ? Get<uint32_t>(t, d.src[1]) : 0;
    if (d.nsrc > 1 && (count == 0 || count % 32 != 0)) {
      b.Fail(t, d, StrCat("the bar.sync thread count ", count, " is not a positive multiple of 32"));
      return false;
    }
    if (!seen[id] && b.arrive_count[id] != 0) {  // the count the bar.arrive threads named
      seen[id] = true;
      expected[id] = b.arrive_count[id];
    }
    if (seen[id] && expected[id] != count) {
      auto describe = [](uint32_t c) { return c == 0 ? std::string("all threads") : StrCat(c, " threads"); };
      b.Fail(t, d, StrCat("threads wait at barrier ", id, " for different thread counts (", describe(expected[id]), " and ",
                          describe(count), ")"));
      return false;
    }
    seen[id] = true;
    expected[id] = count;
    waiting[id]++;
  }
  auto release = [&](Thread& t) {
    t.state = ThreadState::kRunning;
    t.pc++;
    b.counters.barriers++;
  };
  auto barrier_of = [&](const Thread& t) { return Get<uint32_t>(t, p.code[t.pc].src[0]); };
  bool progressed = false;
  for (uint32_t id = 0; id < 16; ++id) {
    if (!seen[id]) continue;
    if (expected[id] == 0) {
      if (waiting[id] != n) continue;
      for (Thread& t : b.threads) release(t);
      progressed = true;
      continue;
    }
    // A lane has arrived when it waits here or passed a bar.arrive of this
    // barrier (it may have exited since).
    std::vector<uint32_t> arrived;  // warps, in order
    for (uint32_t w = 0; w * 32 < n; ++w) {
      bool any = false, all = true;
      for (uint32_t i = w * 32; i < std::min(n, w * 32 + 32); ++i) {
        const Thread& t = b.threads[i];
        const bool passed = (b.arrived[i] >> id & 1) != 0;
        if (t.state == ThreadState::kExited && !passed) continue;
        bool here = passed || (t.state == ThreadState::kBarrier && barrier_of(t) == id);
        any |= here;
        all &= here;
      }
      if (any && all) arrived.push_back(w);
    }
    const uint32_t needed = expected[id] / 32;
    if (arrived.size() < needed) continue;
    for (uint32_t k = 0; k < needed; ++k) {
      for (uint32_t i = arrived[k] * 32; i < std::min(n, arrived[k] * 32 + 32); ++i) {
        if (b.threads[i].state == ThreadState::kBarrier && barrier_of(b.threads[i]) == id) release(b.threads[i]);
        b.arrived[i] &= static_cast<uint16_t>(~(1u << id));
      }
    }
    if (b.arrive_count[id] != 0) {
      bool any_left = false;
      for (uint16_t a : b.arrived) any_left |= (a >> id & 1) != 0;
      if (!any_left) b.arrive_count[id] = 0;  // the next phase may name another count
    }
    progressed = true;
  }
  return progressed;
}

}  // namespace

void RunBlock(Block& b) {
  const Program& p = *b.program;
  const uint32_t nt = static_cast<uint32_t>(b.threads.size());
  b.arrived.assign(nt, 0);
  std::fill(std::begin(b.arrive_count), std::end(b.arrive_count), 0u);
  b.warp_order.resize((nt + 31) / 32);
  for (uint32_t w = 0; w < b.warp_order.size(); ++w) b.warp_order[w] = w;
  for (;;) {
    if (b.order_state != 0) Shuffle(b.warp_order, b.order_state);
    bool all_exited = true;
    for (uint32_t w : b.warp_order) {
      for (uint32_t i = w * 32; i < std::min(nt, w * 32 + 32); ++i) {
        Thread& t = b.threads[i];
        if (t.state == ThreadState::kRunning) {
          if (b.observer != nullptr) {
            p.check_init ? RunThread<true, true>(b, t) : RunThread<false, true>(b, t);
          } else {
            p.check_init ? RunThread<true, false>(b, t) : RunThread<false, false>(b, t);
          }
          if (!b.error.ok()) return;
        }
        all_exited &= t.state == ThreadState::kExited;
      }
    }
    if (all_exited) return;
    bool progressed = ReleaseWarps(b);
    if (!b.error.ok()) return;
    if (!progressed) {
      progressed = ReleaseBarriers(b);
      if (progressed && b.observer != nullptr) b.observer->BarrierReleased();
    }
    if (!b.error.ok()) return;
    if (!progressed) {
      Deadlock(b);
      return;
    }
  }
}

}  // namespace emu

// ---- the device

Emulator::Emulator(EmulatorOptions options) : options_(options), next_address_(emu::kGlobalBase) {}
Emulator::~Emulator() = default;

std::unique_ptr<Emulator> MakeEmulator(EmulatorOptions options) { return std::make_unique<Emulator>(options); }

absl::StatusOr<uint64_t> Emulator::Allocate(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes > (uint64_t{1} << 36)) {
    return absl::ResourceExhaustedError(StrCat("emulator: cannot allocate ", bytes, " bytes (the limit is 64 GiB)"));
  }
  Allocation a;
  a.size = bytes;
  a.data.reset(new (std::nothrow) uint8_t[bytes == 0 ? 1 : bytes]());
  if (a.data == nullptr) return absl::ResourceExhaustedError(StrCat("emulator: out of host memory allocating ", bytes, " bytes"));
  uint64_t address = next_address_;
  if (address + bytes + 8192 >= emu::kSharedWindow) {
    return absl::ResourceExhaustedError("emulator: out of device address space (allocated addresses are never reused)");
  }
  // A 4 KiB gap after every allocation, so overruns land outside all of them.
  next_address_ = (address + bytes + 4096 + 4095) / 4096 * 4096;
  allocations_.emplace(address, std::move(a));
  return address;
}

absl::Status Emulator::Free(uint64_t address) {
  std::lock_guard<std::mutex> lock(mu_);
  if (allocations_.erase(address) == 0) {
    return absl::InvalidArgumentError(StrCat("emulator: Free(", Hex64(address), "): not the start of an allocation"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint8_t*> Emulator::HostPointer(uint64_t address, size_t bytes, std::string_view what) {
  auto it = allocations_.upper_bound(address);
  if (it != allocations_.begin()) {
    --it;
    if (address - it->first <= it->second.size && bytes <= it->second.size - (address - it->first)) {
      return it->second.data.get() + (address - it->first);
    }
  }
  return absl::OutOfRangeError(StrCat("emulator: ", what, " of ", bytes, " bytes at ", Hex64(address),
                                      " is not inside one allocation"));
}

absl::Status Emulator::CopyToDevice(uint64_t dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<uint8_t*> p = HostPointer(dst, bytes, "copy to the device");
  if (!p.ok()) return p.status();
  if (bytes) std::memcpy(*p, src, bytes);
  return absl::OkStatus();
}

absl::Status Emulator::CopyToHost(void* dst, uint64_t src, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<uint8_t*> p = HostPointer(src, bytes, "copy to the host");
  if (!p.ok()) return p.status();
  if (bytes) std::memcpy(dst, *p, bytes);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LoadedKernel>> Emulator::Load(const ir::Kernel& kernel) {
  // Unverified kernels still get the structural check every consumer relies
  // on; reads of unwritten registers are then caught as the kernel runs.
  absl::Status checked = options_.verify ? ir::VerifyKernel(kernel) : ir::CheckWellFormed(kernel);
  if (!checked.ok()) return checked;
  absl::StatusOr<Program> program = emu::Decode(kernel, /*check_init=*/!options_.verify, options_.approx_worst_error);
  if (!program.ok()) return program.status();
  return std::unique_ptr<LoadedKernel>(new EmulatedKernel(kernel, std::move(*program), *this));
}

EmulatorCounters Emulator::last_counters() const {
  std::lock_guard<std::mutex> lock(counters_mu_);
  return last_counters_;
}

EmulatorProfile Emulator::last_profile() const {
  std::lock_guard<std::mutex> lock(counters_mu_);
  return profile_;
}

absl::StatusOr<EmulatorCounters> Emulator::LaunchCounted(LoadedKernel& kernel, const LaunchConfig& config,
                                                         std::span<const KernelArg> args) {
  if (absl::Status s = CheckOwnKernel(kernel, "LaunchCounted"); !s.ok()) return s;
  if (absl::Status s = CheckLaunchConfig(kernel, config); !s.ok()) return s;
  if (absl::Status s = CheckArgs(kernel, args); !s.ok()) return s;
  EmulatorCounters counters;
  if (absl::Status s = RunLaunch(kernel, config, args, &counters); !s.ok()) return s;
  return counters;
}

absl::Status Emulator::DoLaunch(LoadedKernel& loaded, const LaunchConfig& config, std::span<const KernelArg> args) {
  EmulatorCounters counters;
  return RunLaunch(loaded, config, args, &counters);
}

absl::Status Emulator::RunLaunch(LoadedKernel& loaded, const LaunchConfig& config, std::span<const KernelArg> args,
                                 EmulatorCounters* total) {
  auto* kernel = static_cast<EmulatedKernel*>(&loaded);  // CheckOwnKernel: loaded here
  const Program& p = kernel->program();
  uint64_t shared_bytes = uint64_t{p.dynamic_shared_offset} + config.dynamic_shared_bytes;
  if (config.dynamic_shared_bytes == 0) shared_bytes = p.static_shared_bytes;
  if (shared_bytes > kMaxSharedBytes) {
    return absl::InvalidArgumentError(StrCat("kernel ", p.kernel.name, ": ", shared_bytes,
                                             " bytes of shared memory per block (", p.static_shared_bytes, " static + ",
                                             config.dynamic_shared_bytes, " dynamic) exceed the limit of ",
                                             kMaxSharedBytes));
  }
  // What one worker holds for a block, checked before anything is allocated.
  const uint64_t threads = config.block.count();
  const uint64_t per_thread = uint64_t{p.num_slots} * (sizeof(uint64_t) + (p.check_init ? 1 : 0)) + p.local_bytes +
                              sizeof(Thread);
  const uint64_t block_bytes = threads * per_thread + shared_bytes;  // no overflow: local_bytes <= 4 GiB
  if (block_bytes > options_.max_block_memory_bytes) {
    return absl::ResourceExhaustedError(StrCat("kernel ", p.kernel.name, ": a block of ", threads, " threads with ",
                                               p.local_bytes, " bytes of local memory each needs more than "
                                               "EmulatorOptions::max_block_memory_bytes (",
                                               options_.max_block_memory_bytes, " bytes) of emulator memory"));
  }
  std::vector<uint8_t> params = PackArgs(loaded, args);
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<emu::GlobalRange> global;
  global.reserve(allocations_.size());
  for (auto& [address, a] : allocations_) global.push_back({address, address + a.size, a.data.get()});

  emu::Launch launch;
  launch.program = &p;
  launch.global = &global;
  launch.params = params.data();
  launch.grid[0] = config.grid.x;
  launch.grid[1] = config.grid.y;
  launch.grid[2] = config.grid.z;
  launch.block[0] = config.block.x;
  launch.block[1] = config.block.y;
  launch.block[2] = config.block.z;
  launch.threads_per_block = static_cast<uint32_t>(config.block.count());
  launch.dynamic_shared_bytes = config.dynamic_shared_bytes;
  launch.shared_bytes = static_cast<uint32_t>(shared_bytes);
  launch.max_instructions = options_.max_instructions_per_thread;
  std::atomic<uint64_t> executed{0};
  launch.executed = &executed;
  launch.max_launch_instructions = options_.max_launch_instructions;
  if (options_.launch_timeout.count() > 0) {
    launch.has_deadline = true;
    launch.timeout = options_.launch_timeout;
    launch.deadline = std::chrono::steady_clock::now() + options_.launch_timeout;
  }

  const uint64_t num_blocks = config.grid.count();
  int workers = options_.worker_threads;
  if (workers <= 0) workers = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  if (p.has_global_atomics) workers = 1;  // block order decides atomic results: keep it fixed
  // With a schedule seed: one host thread, blocks in a shuffled order.
  std::vector<uint32_t> block_order;
  const uint64_t seed = options_.schedule_seed;
  if (seed != 0) {
    if (num_blocks > (uint64_t{1} << 24)) {
      return absl::InvalidArgumentError(StrCat("kernel ", p.kernel.name, ": schedule_seed shuffles at most 2^24 blocks, the grid has ", num_blocks));
    }
    workers = 1;
    block_order.resize(num_blocks);
    for (uint32_t i = 0; i < num_blocks; ++i) block_order[i] = i;
    uint64_t state = seed;
    Shuffle(block_order, state);
  }
  if (options_.race_check) workers = 1;   // one global shadow, unguarded
  workers = static_cast<int>(std::min<uint64_t>(workers, num_blocks));

  std::atomic<uint64_t> next_block{0};
  std::atomic<uint64_t> stop_at{num_blocks};  // the lowest failing block
  std::vector<absl::Status> errors(workers);
  std::vector<uint64_t> error_block(workers, UINT64_MAX);
  std::vector<EmulatorCounters> counters(workers);
  std::vector<std::unique_ptr<emu::Observer>> observers;
  emu::GlobalShadow global_shadow;
  if (options_.profile || options_.race_check) {
    for (int w = 0; w < workers; ++w) {
      observers.push_back(std::make_unique<emu::Observer>(p, launch, options_.profile, options_.race_check, &global_shadow));
    }
  }

  auto fail_block = [&](int w, uint64_t block, absl::Status error) {
    errors[w] = std::move(error);
    error_block[w] = block;
    uint64_t current = stop_at.load();
    while (block < current && !stop_at.compare_exchange_weak(current, block)) {
    }
  };
  auto work = [&](int w) {
    emu::ScopedFloatEnvironment float_environment;
    Block b;
    b.launch = &launch;
    b.program = &p;
    const uint32_t nt = launch.threads_per_block;
    try {
      b.threads.resize(nt);
      b.regs.resize(size_t{nt} * p.num_slots);
      if (p.check_init) b.defined.resize(size_t{nt} * p.num_slots);
      b.local.resize(size_t{nt} * p.local_bytes);
      b.shared.resize(launch.shared_bytes);
      if (p.has_cp_async) {
        b.copies.resize(nt);
        b.committed.resize(nt);
        b.inflight.resize(launch.shared_bytes);  // all 0 again after every block (no copy outlives its thread)
      }
    } catch (const std::bad_alloc&) {
      fail_block(w, next_block.load(), absl::ResourceExhaustedError(
          StrCat("kernel ", p.kernel.name, ": out of host memory for a block of ", nt, " threads (", p.local_bytes,
                 " bytes of local memory per thread)")));
      return;
    }
    if (!observers.empty()) b.observer = observers[w].get();
    for (;;) {
      uint64_t block = next_block.fetch_add(1);
      if (block >= num_blocks || block >= stop_at.load()) break;
      const uint64_t id = block_order.empty() ? block : block_order[block];
      b.ctaid[0] = static_cast<uint32_t>(id % config.grid.x);
      b.ctaid[1] = static_cast<uint32_t>(id / config.grid.x % config.grid.y);
      b.ctaid[2] = static_cast<uint32_t>(id / (uint64_t{config.grid.x} * config.grid.y));
      b.order_state = seed == 0 ? 0 : (seed ^ (id * 0xD6E8FEB86659FD93ull)) | 1;
      if (std::string over = launch.OverLimit(); !over.empty()) {
        fail_block(w, block, absl::ResourceExhaustedError(StrCat("kernel ", p.kernel.name, ": ", over,
                                                                 "; stopped before block (", b.ctaid[0], ",",
                                                                 b.ctaid[1], ",", b.ctaid[2], ")")));
        break;
      }
      // Shared memory starts as 0xFF bytes (NaN for floats), so a kernel
      // that reads shared memory it never wrote gets obviously wrong numbers.
      std::fill(b.shared.begin(), b.shared.end(), 0xFF);
      std::fill(b.local.begin(), b.local.end(), 0);
      for (uint32_t i = 0; i < nt; ++i) {
        Thread& t = b.threads[i];
        t = Thread();
        t.regs = b.regs.data() + size_t{i} * p.num_slots;
        std::fill(t.regs, t.regs + p.num_regs, 0);
        std::copy(p.initial_slots.begin(), p.initial_slots.end(), t.regs + p.num_regs);
        if (p.check_init) {
          t.defined = b.defined.data() + size_t{i} * p.num_slots;
          std::fill(t.defined, t.defined + p.num_regs, 0);
          std::fill(t.defined + p.num_regs, t.defined + p.num_slots, 1);
        }
        t.local = b.local.data() + size_t{i} * p.local_bytes;
        if (p.has_cp_async) {
          b.copies[i].clear();
          b.committed[i] = 0;
        }
        t.linear = i;
        t.tid[0] = i % config.block.x;
        t.tid[1] = i / config.block.x % config.block.y;
        t.tid[2] = i / (config.block.x * config.block.y);
      }
      if (b.observer != nullptr) b.observer->BeginBlock(id);
      emu::RunBlock(b);
      for (const Thread& t : b.threads) {
        executed.fetch_add(t.executed & (emu::kLaunchCheckInterval - 1), std::memory_order_relaxed);
      }
      if (b.observer != nullptr) b.observer->EndBlock();
      if (!b.error.ok()) {
        fail_block(w, block, b.error);
        break;
      }
    }
    counters[w] = b.counters;
  };
  if (workers <= 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) threads.emplace_back(work, w);
    for (std::thread& t : threads) t.join();
  }
  EmulatorCounters sum;
  for (const EmulatorCounters& c : counters) sum += c;
  for (uint64_t n : sum.by_class) sum.instructions += n;
  *total = sum;
  {
    std::lock_guard<std::mutex> counters_lock(counters_mu_);
    last_counters_ = sum;
    profile_ = emu::Observer::Merge(p, observers);
  }
  int failed = -1;
  for (int w = 0; w < workers; ++w) {
    if (!errors[w].ok() && (failed < 0 || error_block[w] < error_block[failed])) failed = w;
  }
  return failed < 0 ? absl::OkStatus() : errors[failed];
}

}  // namespace ptxforge::runtime
