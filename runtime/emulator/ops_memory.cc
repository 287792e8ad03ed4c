// Emulator handlers: ld, st, atom and red on param, global, shared, local
// and generic addresses, each access bounds- and alignment-checked; and
// cp.async with its groups (the copy lands at the wait that retires it).
#include <algorithm>
#include <atomic>
#include <cmath>

#include "ir/strings.h"
#include "runtime/emulator/float_semantics.h"
#include "runtime/emulator/observe.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime::emu {
namespace {

using ir::ScalarType;

std::string_view SpaceName(Space s) {
  switch (s) {
    case Space::kGlobal: return "global";
    case Space::kShared: return "shared";
    case Space::kLocal: return "local";
    case Space::kParam: return "param";
    default: return "generic";
  }
}

std::string HexAddr(uint64_t a) { return StrCat("0x", Hex{a}); }

// Describes where `addr` falls relative to the global allocations.
std::string NearestAllocation(const std::vector<GlobalRange>& global, uint64_t addr, uint32_t size) {
  if (global.empty()) return "there are no allocations";
  auto it = std::upper_bound(global.begin(), global.end(), addr,
                             [](uint64_t a, const GlobalRange& r) { return a < r.begin; });
  const GlobalRange* best = nullptr;
  uint64_t best_distance = UINT64_MAX;
  auto consider = [&](const GlobalRange& r) {
    uint64_t distance = addr >= r.end ? addr - r.end : addr < r.begin ? r.begin - addr : 0;
    if (distance < best_distance) {
      best_distance = distance;
      best = &r;
    }
  };
  if (it != global.end()) consider(*it);
  if (it != global.begin()) consider(*std::prev(it));
  const GlobalRange& r = *best;
  std::string where;
  if (addr >= r.end) {
    where = StrCat(addr - r.end, " bytes past its end");
  } else if (addr < r.begin) {
    where = StrCat(r.begin - addr, " bytes before its start");
  } else {
    where = StrCat("at offset ", addr - r.begin, ", running ", addr + size - r.end, " bytes past its end");
  }
  return StrCat("nearest allocation [", HexAddr(r.begin), ", ", HexAddr(r.end), ") of ", r.end - r.begin,
                " bytes; the access is ", where);
}

std::string SharedLayout(const Block& b) {
  const Program& p = *b.program;
  std::vector<std::string> parts;
  for (size_t i = 0; i < p.kernel.variables.size(); ++i) {
    const ir::Variable& v = p.kernel.variables[i];
    if (v.space != ir::StateSpace::kShared) continue;
    uint64_t size = v.is_extern ? b.launch->dynamic_shared_bytes : v.size_bytes();
    parts.push_back(StrCat(v.name, " at ", p.variable_offsets[i], " (", size, " bytes)"));
  }
  return StrCat("the block has ", b.launch->shared_bytes, " bytes of shared memory",
                parts.empty() ? std::string() : StrCat(": ", StrJoin(parts, ", ")));
}

// The host address of [addr, addr + size) in `space`, or nullptr after
// recording the error. `addr` is a generic address for Space::kGeneric.
// `align`: the alignment the access needs (0: its size).
uint8_t* Resolve(Block& b, Thread& t, const DInst& d, Space space, uint64_t addr, uint32_t size, std::string_view what,
                 uint32_t align = 0) {
  if (align == 0) align = size;
  const uint64_t generic = addr;
  if (space == Space::kGeneric) {
    if (addr - kSharedWindow < kWindowSize) {
      space = Space::kShared;
      addr -= kSharedWindow;
    } else if (addr - kLocalWindow < kWindowSize) {
      space = Space::kLocal;
      addr -= kLocalWindow;
    } else {
      space = Space::kGlobal;
    }
  }
  auto fail = [&](std::string problem, std::string detail) -> uint8_t* {
    std::string at = space == Space::kGlobal || generic != addr ? HexAddr(generic)
                                                                : StrCat(SpaceName(space), " address ", addr);
    b.Fail(t, d, StrCat(problem, " ", SpaceName(space), " ", what, " of ", size, " bytes at ", at,
                        detail.empty() ? std::string() : StrCat(": ", detail)));
    return nullptr;
  };
  if (addr % align != 0) return fail("misaligned", StrCat("the access needs ", align, "-byte alignment"));
  switch (space) {
    case Space::kGlobal: {
      const std::vector<GlobalRange>& g = *b.launch->global;
      if (b.global_hint < g.size()) {
        const GlobalRange& r = g[b.global_hint];
        if (addr >= r.begin && addr <= r.end && size <= r.end - addr) return r.data + (addr - r.begin);
      }
      auto it = std::upper_bound(g.begin(), g.end(), addr, [](uint64_t a, const GlobalRange& r) { return a < r.begin; });
      if (it != g.begin()) {
        const GlobalRange& r = *std::prev(it);
        if (addr >= r.begin && addr <= r.end && size <= r.end - addr) {
          b.global_hint = static_cast<size_t>(std::prev(it) - g.begin());
          return r.data + (addr - r.begin);
        }
      }
      return fail("out-of-bounds", NearestAllocation(g, addr, size));
    }
    case Space::kShared:
      if (addr >= b.shared.size() || size > b.shared.size() - addr) return fail("out-of-bounds", SharedLayout(b));
      return b.shared.data() + addr;
    case Space::kLocal:
      if (addr >= b.program->local_bytes || size > b.program->local_bytes - addr) {
        return fail("out-of-bounds", StrCat("each thread has ", b.program->local_bytes, " bytes of local memory"));
      }
      return t.local + addr;
    default:
      return fail("unsupported", "the emulator models generic, global, shared and local memory only");
  }
}

inline bool IsShared(Space declared, uint64_t addr) {
  return declared == Space::kShared || (declared == Space::kGeneric && addr - kSharedWindow < kWindowSize);
}
inline bool IsGlobal(Space declared, uint64_t addr) {
  return declared == Space::kGlobal ||
         (declared == Space::kGeneric && addr - kSharedWindow >= kWindowSize && addr - kLocalWindow >= kWindowSize);
}

template <typename T>
T LoadRelaxed(const uint8_t* p) {
  return std::atomic_ref<T>(*reinterpret_cast<T*>(const_cast<uint8_t*>(p))).load(std::memory_order_relaxed);
}
template <typename T>
void StoreRelaxed(uint8_t* p, T v) {
  std::atomic_ref<T>(*reinterpret_cast<T*>(p)).store(v, std::memory_order_relaxed);
}

// While cp.async copies are in flight: an access through host pointer `p`
// into shared memory must not touch their bytes, and a write elsewhere must
// not overwrite their global sources.
inline bool NotInFlight(Block& b, Thread& t, const DInst& d, const uint8_t* p, uint32_t size, bool write,
                        std::string_view what) {
  if (b.inflight_bytes == 0) return true;
  if (p < b.shared.data() || p >= b.shared.data() + b.shared.size()) {
    if (!write || p + size <= b.sources_lo || p >= b.sources_hi) return true;
    return CheckSourceNotInFlight(b, t, d, p, size, StrCat(what, " of ", size, " bytes"));
  }
  const uint64_t offset = static_cast<uint64_t>(p - b.shared.data());
  return CheckNotInFlight(b, t, d, offset, size, write,
                          StrCat("shared ", what, " of ", size, " bytes at shared address ", offset));
}

// T: the unsigned integer of the access width. 8-bit values load into the
// 16-bit register class (sign-extended for s8).
template <typename T, bool kSigned8>
Action Ld(Block& b, Thread& t, const DInst& d) {
  if (d.space == Space::kParam) {  // a whole param: one value, or a vector of its parts (ld.param.v2.u32 of a u64)
    for (int i = 0; i < d.vec; ++i) {
      T v;
      std::memcpy(&v, b.launch->params + d.imm + i * sizeof(T), sizeof(T));
      Set<T>(t, d.dst[i], v);
      if constexpr (kSigned8) t.regs[d.dst[i]] = static_cast<uint16_t>(static_cast<int8_t>(v));
    }
    return Action::kNext;
  }
  const uint64_t addr = (d.base == kNoSlot ? 0 : t.regs[d.base]) + static_cast<uint64_t>(d.imm);
  const uint32_t size = sizeof(T) * d.vec;
  uint8_t* p = Resolve(b, t, d, d.space, addr, size, "load");
  if (p == nullptr) return Action::kError;
  if (!NotInFlight(b, t, d, p, size, false, "load")) return Action::kError;
  for (int i = 0; i < d.vec; ++i) {
    T v = LoadRelaxed<T>(p + i * sizeof(T));
    Set<T>(t, d.dst[i], v);
    if constexpr (kSigned8) t.regs[d.dst[i]] = static_cast<uint16_t>(static_cast<int8_t>(v));
  }
  if (IsShared(d.space, addr)) {
    b.counters.shared_loads++;
  } else if (IsGlobal(d.space, addr)) {
    b.counters.global_load_bytes += size;
  }
  return Action::kNext;
}

template <typename T>
Action St(Block& b, Thread& t, const DInst& d) {
  const uint64_t addr = (d.base == kNoSlot ? 0 : t.regs[d.base]) + static_cast<uint64_t>(d.imm);
  const uint32_t size = sizeof(T) * d.vec;
  uint8_t* p = Resolve(b, t, d, d.space, addr, size, "store");
  if (p == nullptr) return Action::kError;
  if (!NotInFlight(b, t, d, p, size, true, "store")) return Action::kError;
  for (int i = 0; i < d.vec; ++i) StoreRelaxed<T>(p + i * sizeof(T), Get<T>(t, d.src[i]));
  if (IsShared(d.space, addr)) {
    b.counters.shared_stores++;
  } else if (IsGlobal(d.space, addr)) {
    b.counters.global_store_bytes += size;
  }
  return Action::kNext;
}

}  // namespace

// ldmatrix/stmatrix .x1/.x2/.x4 (.trans): lane l holds, in register m, the
// elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of matrix m, the lower column
// in the low half; .trans swaps rows and columns. A row is 8 b16 (16 bytes,
// 16-byte aligned) at the address lane 8m + row gives.
bool RunMatrix(Block& b, Thread* const* by_lane, const DInst* const* insts) {
  const DInst& first = *insts[0];
  const bool store = b.program->kernel.body[first.index].op == ir::Opcode::kStmatrix;
  const bool trans = first.mods.variant == 1;  // {variant:trans}
  const int num = first.vec;
  uint8_t* rows[4][8] = {};
  for (int m = 0; m < num; ++m) {
    for (int r = 0; r < 8; ++r) {
      Thread& t = *by_lane[8 * m + r];
      const DInst& d = *insts[8 * m + r];
      const uint64_t addr = (d.base == kNoSlot ? 0 : t.regs[d.base]) + static_cast<uint64_t>(d.imm);
      rows[m][r] = Resolve(b, t, d, Space::kShared, addr, 16, store ? "store" : "load");
      if (rows[m][r] == nullptr) return false;
    }
  }
  (store ? b.counters.shared_stores : b.counters.shared_loads) += 8 * num;
  for (int m = 0; m < num; ++m) {
    for (int lane = 0; lane < 32; ++lane) {
      Thread& t = *by_lane[lane];
      const DInst& d = *insts[lane];
      uint32_t word = store ? Get<uint32_t>(t, d.src[m]) : 0;
      for (int h = 0; h < 2; ++h) {
        int row = lane / 4, col = 2 * (lane % 4) + h;
        if (trans) std::swap(row, col);
        uint8_t* p = rows[m][row] + 2 * col;
        if (store) {
          StoreRelaxed<uint16_t>(p, static_cast<uint16_t>(word >> (16 * h)));
        } else {
          word |= uint32_t{LoadRelaxed<uint16_t>(p)} << (16 * h);
        }
      }
      if (!store) Set<uint32_t>(t, d.dst[m], word);
    }
  }
  return true;
}

namespace {

// ---- atomics: T is the C++ value type; returns the old value.

template <typename T, typename F>
T CasLoop(std::atomic_ref<T> ref, F update) {
  T old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(old, update(old), std::memory_order_relaxed)) {
  }
  return old;
}

// flush: atom.add.f32 on global memory flushes subnormal inputs and results.
template <typename T>
T AtomicApply(ir::AtomOp op, ir::ScalarType type, uint8_t* p, T b, T c, bool flush) {
  std::atomic_ref<T> ref(*reinterpret_cast<T*>(p));
  switch (op) {
    case ir::AtomOp::kAdd:
      if constexpr (std::is_same_v<T, float>) {
        if (flush) return CasLoop(ref, [&](T old) { return FlushF32(FlushF32(old) + FlushF32(b)); });
        return ref.fetch_add(b, std::memory_order_relaxed);
      } else if constexpr (sizeof(T) <= 4 && std::is_unsigned_v<T>) {
        if (ir::IsHalfFamily(type)) {
          // f16 / bf16 add (.noftz), and f16x2 / bf16x2: each 16-bit lane on its own.
          const ir::FloatFormat f = HalfFormat(type);
          return CasLoop(ref, [&](T old) {
            T sum = 0;
            for (size_t lane = 0; lane < sizeof(T) / 2; ++lane) {
              const auto part = [&](T v) { return static_cast<uint16_t>(v >> (16 * lane)); };
              const uint16_t bits =
                  HalfBits(HalfValue(part(old), f, false) + HalfValue(part(b), f, false), f, ir::Rounding::kRn, false, false);
              sum = static_cast<T>(sum | (T{bits} << (16 * lane)));
            }
            return sum;
          });
        }
        return ref.fetch_add(b, std::memory_order_relaxed);
      } else {
        return ref.fetch_add(b, std::memory_order_relaxed);
      }
    case ir::AtomOp::kMin: return CasLoop(ref, [&](T old) { return b < old ? b : old; });
    case ir::AtomOp::kMax: return CasLoop(ref, [&](T old) { return b > old ? b : old; });
    case ir::AtomOp::kExch: return ref.exchange(b, std::memory_order_relaxed);
    case ir::AtomOp::kCas: {
      T expected = b;
      ref.compare_exchange_strong(expected, c, std::memory_order_relaxed);
      return expected;
    }
    case ir::AtomOp::kInc:
      if constexpr (std::is_integral_v<T>) return CasLoop(ref, [&](T old) { return old >= b ? T{0} : static_cast<T>(old + 1); });
      break;
    case ir::AtomOp::kDec:
      if constexpr (std::is_integral_v<T>) return CasLoop(ref, [&](T old) { return (old == 0 || old > b) ? b : static_cast<T>(old - 1); });
      break;
    case ir::AtomOp::kAnd:
      if constexpr (std::is_integral_v<T>) return ref.fetch_and(b, std::memory_order_relaxed);
      break;
    case ir::AtomOp::kOr:
      if constexpr (std::is_integral_v<T>) return ref.fetch_or(b, std::memory_order_relaxed);
      break;
    case ir::AtomOp::kXor:
      if constexpr (std::is_integral_v<T>) return ref.fetch_xor(b, std::memory_order_relaxed);
      break;
    default: break;
  }
  return T{};
}

template <typename T, bool kHasResult>
Action Atom(Block& b, Thread& t, const DInst& d) {
  const uint64_t addr = (d.base == kNoSlot ? 0 : t.regs[d.base]) + static_cast<uint64_t>(d.imm);
  uint8_t* p = Resolve(b, t, d, d.space, addr, sizeof(T), "atomic");
  if (p == nullptr) return Action::kError;
  if (!NotInFlight(b, t, d, p, sizeof(T), true, "atomic")) return Action::kError;
  T bv = Get<T>(t, d.src[0]);
  T cv = d.nsrc > 1 ? Get<T>(t, d.src[1]) : T{};
  T old = AtomicApply<T>(d.mods.atom, d.mods.type, p, bv, cv, IsGlobal(d.space, addr));
  if constexpr (kHasResult) Set<T>(t, d.dst[0], old);
  b.counters.atomics++;
  return Action::kNext;
}

template <bool kHasResult>
Handler AtomHandler(const ir::Modifiers& m) {
  switch (m.type) {
    case ScalarType::kF32: return &Atom<float, kHasResult>;
    case ScalarType::kF64: return &Atom<double, kHasResult>;
    case ScalarType::kF16:
    case ScalarType::kBF16:
    case ScalarType::kB16: return &Atom<uint16_t, kHasResult>;  // half add; b16: cas only
    case ScalarType::kF16x2:
    case ScalarType::kBF16x2: return &Atom<uint32_t, kHasResult>;  // packed half add
    case ScalarType::kS32: return &Atom<int32_t, kHasResult>;
    case ScalarType::kS64: return &Atom<int64_t, kHasResult>;
    case ScalarType::kU32:
    case ScalarType::kB32: return &Atom<uint32_t, kHasResult>;
    case ScalarType::kU64:
    case ScalarType::kB64: return &Atom<uint64_t, kHasResult>;
    default: return nullptr;
  }
}

// ---- cp.async: the source is read when the copy is issued (a later write
// to it by a thread of the block before the wait is a memcheck error: the
// ISA orders the read only at the wait); the bytes land in shared memory
// when a wait retires the copy's group, in issue order.

// "`cp.async.ca.shared.global [%r1], [%rd2], 16;` (gemm.cc:40)"
std::string CopyText(const Block& b, uint32_t pc) {
  const uint32_t index = b.program->code[pc].index;
  const std::string loc = b.program->SourceLoc(index);
  return StrCat("`", b.program->PtxText(index), "`", loc.empty() ? std::string() : StrCat(" (", loc, ")"));
}

Action CpAsync(Block& b, Thread& t, const DInst& d) {
  const uint32_t cp_size = Get<uint32_t>(t, d.src[0]);
  const uint32_t src_size = d.nsrc > 1 ? Get<uint32_t>(t, d.src[1]) : cp_size;
  if (src_size > cp_size) {
    return b.Fail(t, d, StrCat("cp.async src-size ", src_size, " is larger than the cp-size ", cp_size));
  }
  const uint64_t dst = (d.base == kNoSlot ? 0 : t.regs[d.base]) + static_cast<uint64_t>(d.imm);
  const uint64_t src = (d.base2 == kNoSlot ? 0 : t.regs[d.base2]) + static_cast<uint64_t>(d.imm2);
  uint8_t* to = Resolve(b, t, d, Space::kShared, dst, cp_size, "cp.async destination");
  if (to == nullptr) return Action::kError;
  // Aligned to cp-size even when src-size reads fewer bytes (or none).
  if (src % cp_size != 0) {
    return b.Fail(t, d, StrCat("misaligned global cp.async source of ", cp_size, " bytes at 0x", Hex{src},
                               ": the access needs ", cp_size, "-byte alignment"));
  }
  Block::AsyncCopy copy;
  copy.dst = static_cast<uint32_t>(to - b.shared.data());
  copy.pc = t.pc;
  copy.group = b.committed[t.linear];
  copy.size = cp_size;
  if (src_size > 0) {
    const uint8_t* from = Resolve(b, t, d, Space::kGlobal, src, src_size, "cp.async source", cp_size);
    if (from == nullptr) return Action::kError;
    for (uint32_t i = 0; i < src_size; ++i) copy.data[i] = LoadRelaxed<uint8_t>(from + i);
    copy.from = from;
    copy.src = src;
    copy.src_size = src_size;
    if (b.sources_lo == nullptr || from < b.sources_lo) b.sources_lo = from;
    if (from + src_size > b.sources_hi) b.sources_hi = from + src_size;
  }
  if (!CheckNotInFlight(b, t, d, copy.dst, cp_size, true,
                        StrCat("cp.async of ", cp_size, " bytes to shared address ", copy.dst))) {
    return Action::kError;
  }
  const uint64_t owner = (uint64_t{t.linear} + 1) << 32 | t.pc;
  for (uint32_t i = 0; i < cp_size; ++i) b.inflight[copy.dst + i] = owner;
  b.inflight_bytes += cp_size;
  b.copies[t.linear].push_back(copy);
  b.counters.global_load_bytes += src_size;
  return Action::kNext;
}

// Lands the thread's copies of groups before `group` (all with UINT32_MAX).
void Land(Block& b, Thread& t, uint32_t group) {
  std::vector<Block::AsyncCopy>& copies = b.copies[t.linear];
  size_t kept = 0;
  for (size_t i = 0; i < copies.size(); ++i) {
    const Block::AsyncCopy& c = copies[i];
    if (c.group >= group) {
      copies[kept++] = c;
      continue;
    }
    for (uint32_t k = 0; k < c.size; ++k) {
      StoreRelaxed<uint8_t>(b.shared.data() + c.dst + k, c.data[k]);
      b.inflight[c.dst + k] = 0;
    }
    b.inflight_bytes -= c.size;
    if (b.inflight_bytes == 0) b.sources_lo = b.sources_hi = nullptr;
    b.counters.shared_stores++;
    // The race checker sees the write here, where the copy lands.
    if (b.observer != nullptr) b.observer->CopyLanded(b, t, c.pc, c.dst, c.size);
  }
  copies.resize(kept);
}

Action CpAsyncCommit(Block& b, Thread& t, const DInst&) {
  b.committed[t.linear]++;
  return Action::kNext;
}

// wait_group n: the groups committed before the n most recent ones land.
Action CpAsyncWait(Block& b, Thread& t, const DInst& d) {
  const uint32_t n = Get<uint32_t>(t, d.src[0]);
  const uint32_t committed = b.committed[t.linear];
  if (committed > n) Land(b, t, committed - n);
  return b.error.ok() ? Action::kNext : Action::kError;
}

// wait_all: commit_group then wait_group 0.
Action CpAsyncWaitAll(Block& b, Thread& t, const DInst&) {
  b.committed[t.linear]++;
  Land(b, t, UINT32_MAX);
  return b.error.ok() ? Action::kNext : Action::kError;
}

}  // namespace

bool CheckNotInFlight(Block& b, Thread& t, const DInst& d, uint64_t offset, uint32_t size, bool write,
                      std::string_view what) {
  for (uint64_t byte = offset; byte < offset + size; ++byte) {
    const uint64_t owner = b.inflight[byte];
    if (owner == 0) continue;
    const uint32_t thread = static_cast<uint32_t>(owner >> 32) - 1;
    const uint32_t pc = static_cast<uint32_t>(owner);
    const Thread& issuer = b.threads[thread];
    const std::string who = thread == t.linear ? std::string("this thread")
                                               : StrCat("thread (", issuer.tid[0], ",", issuer.tid[1], ",",
                                                        issuer.tid[2], ")");
    b.Fail(t, d, StrCat(what, write ? " overwrites" : " reads", " bytes that a cp.async in flight will write (shared "
                        "address ", byte, "): ", who, " issued ", CopyText(b, pc),
                        " and has not waited for it (cp.async.wait_group or cp.async.wait_all)"));
    return false;
  }
  return true;
}

bool CheckSourceNotInFlight(Block& b, Thread& t, const DInst& d, const uint8_t* p, uint32_t size,
                            std::string_view what) {
  for (uint32_t thread = 0; thread < b.copies.size(); ++thread) {
    for (const Block::AsyncCopy& c : b.copies[thread]) {
      if (c.src_size == 0 || p + size <= c.from || p >= c.from + c.src_size) continue;
      const uint64_t byte = c.src + static_cast<uint64_t>(std::max(p, c.from) - c.from);
      const Thread& issuer = b.threads[thread];
      const std::string who = thread == t.linear ? std::string("this thread")
                                                 : StrCat("thread (", issuer.tid[0], ",", issuer.tid[1], ",",
                                                          issuer.tid[2], ")");
      b.Fail(t, d, StrCat("global ", what, " overwrites bytes that a cp.async in flight reads (global address 0x",
                          Hex{byte}, "): ", who, " issued ", CopyText(b, c.pc),
                          " and has not waited for it (cp.async.wait_group or cp.async.wait_all), so the copy may "
                          "read the old or the new bytes"));
      return false;
    }
  }
  return true;
}

Action ExitWithCopiesInFlight(Block& b, Thread& t, const DInst& d) {
  const std::vector<Block::AsyncCopy>& copies = b.copies[t.linear];
  return b.Fail(t, d, StrCat("the thread ends with ", copies.size(), " cp.async cop", copies.size() == 1 ? "y" : "ies",
                             " in flight (the first: ", CopyText(b, copies.front().pc),
                             "); wait for them (cp.async.wait_all) before the thread ends"));
}

Handler SelectMemory(const ir::Instruction& inst) {
  const ir::Modifiers& m = inst.mods;
  switch (inst.op) {
    case ir::Opcode::kLd:
      switch (ir::TypeBits(m.type)) {
        case 8: return m.type == ScalarType::kS8 ? &Ld<uint8_t, true> : &Ld<uint8_t, false>;
        case 16: return &Ld<uint16_t, false>;
        case 32: return &Ld<uint32_t, false>;
        case 64: return &Ld<uint64_t, false>;
        default: return nullptr;
      }
    case ir::Opcode::kSt:
      switch (ir::TypeBits(m.type)) {
        case 8: return &St<uint8_t>;
        case 16: return &St<uint16_t>;
        case 32: return &St<uint32_t>;
        case 64: return &St<uint64_t>;
        default: return nullptr;
      }
    case ir::Opcode::kAtom: return AtomHandler<true>(m);
    case ir::Opcode::kRed: return AtomHandler<false>(m);
    case ir::Opcode::kCpAsync: return &CpAsync;
    case ir::Opcode::kCpAsyncCommit: return &CpAsyncCommit;
    case ir::Opcode::kCpAsyncWait: return &CpAsyncWait;
    case ir::Opcode::kCpAsyncWaitAll: return &CpAsyncWaitAll;
    default: return nullptr;
  }
}

}  // namespace ptxforge::runtime::emu
