// Emulator handlers: branches, ret/exit, bar.sync, bar.arrive, membar,
// fence, and the warp collectives (shfl.sync, vote.sync, activemask,
// bar.warp.sync, redux.sync, match.sync, ldmatrix/stmatrix, mma.sync) that
// the scheduler completes.
#include <algorithm>

#include "ir/strings.h"
#include "runtime/emulator/observe.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime::emu {
namespace {

Action Bra(Block&, Thread& t, const DInst& d) {
  t.pc = static_cast<uint32_t>(d.imm);
  return Action::kJump;
}

// A thread must not end with cp.async copies in flight: no wait would ever
// land them, and no other thread could know when they land (hardware
// completes them at an unknown time; the emulator is strict).
Action Exit(Block& b, Thread& t, const DInst& d) {
  if (!b.copies.empty() && !b.copies[t.linear].empty()) return ExitWithCopiesInFlight(b, t, d);
  return Action::kExit;
}

// bar.arrive id, count: counts this thread toward barrier `id` and goes on.
// One arrival per thread and barrier phase; ReleaseBarriers counts a warp
// as arrived when each of its lanes waits at the barrier or arrived.
Action BarArrive(Block& b, Thread& t, const DInst& d) {
  const uint32_t id = Get<uint32_t>(t, d.src[0]);
  const uint32_t count = Get<uint32_t>(t, d.src[1]);
  if (id > 15) return b.Fail(t, d, StrCat("barrier id ", id, " is out of range (0..15)"));
  if (count == 0 || count % 32 != 0) {
    return b.Fail(t, d, StrCat("the bar.arrive thread count ", count, " is not a positive multiple of 32"));
  }
  uint16_t& arrived = b.arrived[t.linear];
  if (arrived >> id & 1) {
    return b.Fail(t, d, StrCat("the thread arrives at barrier ", id, " again before the barrier completed (the "
                               "emulator counts one arrival per thread and barrier phase)"));
  }
  if (b.arrive_count[id] != 0 && b.arrive_count[id] != count) {
    return b.Fail(t, d, StrCat("threads arrive at barrier ", id, " for different thread counts (", b.arrive_count[id],
                               " threads and ", count, " threads)"));
  }
  b.arrive_count[id] = count;
  arrived |= static_cast<uint16_t>(1u << id);
  b.counters.barriers++;
  return Action::kNext;
}

Action Nop(Block&, Thread&, const DInst&) { return Action::kNext; }

Action WaitBarrier(Block&, Thread& t, const DInst&) {
  t.state = ThreadState::kBarrier;
  return Action::kBlock;
}

Action WaitWarp(Block&, Thread& t, const DInst&) {
  t.state = ThreadState::kWarp;
  return Action::kBlock;
}

}  // namespace

Handler SelectControl(const ir::Instruction& inst) {
  switch (inst.op) {
    case ir::Opcode::kBra: return &Bra;
    case ir::Opcode::kRet:
    case ir::Opcode::kExit: return &Exit;
    case ir::Opcode::kMembar:  // blocks run one at a time per host thread; memory is coherent
    case ir::Opcode::kFence: return &Nop;  // each thread's accesses happen in program order (README)
    case ir::Opcode::kBarSync: return &WaitBarrier;
    case ir::Opcode::kBarArrive: return &BarArrive;
    case ir::Opcode::kShfl:
    case ir::Opcode::kVote:
    case ir::Opcode::kActiveMask:
    case ir::Opcode::kBarWarpSync:
    case ir::Opcode::kRedux:
    case ir::Opcode::kMatchAny:
    case ir::Opcode::kMatchAll:
    case ir::Opcode::kLdmatrix:
    case ir::Opcode::kStmatrix: return &WaitWarp;
    default: return inst.info().has(ir::kWarpMatrix) ? &WaitWarp : nullptr;
  }
}

Action RunCollective(Block& b, Thread* const* lanes, const DInst* const* insts, int count) {
  Thread* by_lane[32] = {};
  uint32_t members = 0;
  for (int i = 0; i < count; ++i) {
    uint32_t lane = lanes[i]->linear % 32;
    by_lane[lane] = lanes[i];
    members |= uint32_t{1} << lane;
  }
  // Lanes whose result is undefined (a shuffle from a lane outside the member
  // mask) get 0xFFFFFFFF and, when initialisation is checked, stay unwritten.
  bool poisoned[32] = {};
  const Collective kind = insts[0]->collective;
  if (kind == Collective::kShfl) {
    uint32_t values[32] = {};
    for (int i = 0; i < count; ++i) values[lanes[i]->linear % 32] = Get<uint32_t>(*lanes[i], insts[i]->src[0]);
    for (int i = 0; i < count; ++i) {
      Thread& t = *lanes[i];
      const DInst& d = *insts[i];
      uint32_t lane = t.linear % 32;
      uint32_t bval = Get<uint32_t>(t, d.src[1]) & 31, c = Get<uint32_t>(t, d.src[2]);
      uint32_t cval = c & 31, segmask = (c >> 8) & 31;
      uint32_t max_lane = (lane & segmask) | (cval & ~segmask), min_lane = lane & segmask;
      int64_t j = lane;
      bool pval = false;
      switch (d.mods.shfl) {
        case ir::ShflMode::kUp: j = int64_t{lane} - bval; pval = j >= int64_t{max_lane}; break;
        case ir::ShflMode::kDown: j = int64_t{lane} + bval; pval = j <= int64_t{max_lane}; break;
        case ir::ShflMode::kBfly: j = lane ^ bval; pval = j <= int64_t{max_lane}; break;
        case ir::ShflMode::kIdx: j = min_lane | (bval & ~segmask); pval = j <= int64_t{max_lane}; break;
        default: break;
      }
      if (!pval) j = lane;
      if (j >= 0 && j <= 31 && by_lane[j] != nullptr) {
        Set<uint32_t>(t, d.dst[0], values[j]);
      } else {
        Set<uint32_t>(t, d.dst[0], 0xFFFFFFFFu);
        poisoned[lane] = true;
      }
      if (d.ndst > 1) t.regs[d.dst[1]] = pval ? 1 : 0;
    }
  } else if (kind == Collective::kVote) {
    uint32_t ballot = 0;
    for (int i = 0; i < count; ++i) {
      if (lanes[i]->regs[insts[i]->src[0]] != 0) ballot |= uint32_t{1} << (lanes[i]->linear % 32);
    }
    for (int i = 0; i < count; ++i) {
      uint64_t r = 0;
      switch (insts[i]->mods.vote) {
        case ir::VoteMode::kBallot: r = ballot; break;
        case ir::VoteMode::kAll: r = ballot == members; break;
        case ir::VoteMode::kAny: r = ballot != 0; break;
        case ir::VoteMode::kUni: r = ballot == 0 || ballot == members; break;
        default: break;
      }
      lanes[i]->regs[insts[i]->dst[0]] = r;
    }
  } else if (kind == Collective::kRedux) {
    // add wraps; min/max compare as the type says (u32 or s32); and/or/xor on bits.
    const ir::AtomOp op = insts[0]->mods.atom;
    const bool is_signed = insts[0]->mods.type == ir::ScalarType::kS32;
    uint32_t acc = 0;
    for (int i = 0; i < count; ++i) {
      const uint32_t v = Get<uint32_t>(*lanes[i], insts[i]->src[0]);
      if (i == 0) {
        acc = v;
        continue;
      }
      switch (op) {
        case ir::AtomOp::kAdd: acc += v; break;
        case ir::AtomOp::kMin:
          acc = is_signed ? static_cast<uint32_t>(std::min(static_cast<int32_t>(acc), static_cast<int32_t>(v)))
                          : std::min(acc, v);
          break;
        case ir::AtomOp::kMax:
          acc = is_signed ? static_cast<uint32_t>(std::max(static_cast<int32_t>(acc), static_cast<int32_t>(v)))
                          : std::max(acc, v);
          break;
        case ir::AtomOp::kAnd: acc &= v; break;
        case ir::AtomOp::kOr: acc |= v; break;
        case ir::AtomOp::kXor: acc ^= v; break;
        default: break;
      }
    }
    for (int i = 0; i < count; ++i) Set<uint32_t>(*lanes[i], insts[i]->dst[0], acc);
  } else if (kind == Collective::kMatch) {
    // any: the members holding my value; all: every member if all hold the
    // same value (else 0), and the optional predicate says whether they do.
    const bool wide = insts[0]->mods.type == ir::ScalarType::kB64;
    uint64_t values[32] = {};
    for (int i = 0; i < count; ++i) {
      const uint64_t v = lanes[i]->regs[insts[i]->src[0]];
      values[lanes[i]->linear % 32] = wide ? v : static_cast<uint32_t>(v);
    }
    bool all_equal = true;
    for (int i = 1; i < count; ++i) all_equal &= values[lanes[i]->linear % 32] == values[lanes[0]->linear % 32];
    for (int i = 0; i < count; ++i) {
      const DInst& d = *insts[i];
      uint32_t same = 0;
      for (int j = 0; j < count; ++j) {
        if (values[lanes[j]->linear % 32] == values[lanes[i]->linear % 32]) same |= uint32_t{1} << (lanes[j]->linear % 32);
      }
      if (b.program->kernel.body[d.index].op == ir::Opcode::kMatchAll) {
        Set<uint32_t>(*lanes[i], d.dst[0], all_equal ? members : 0);
        if (d.ndst > 1) lanes[i]->regs[d.dst[1]] = all_equal ? 1 : 0;
      } else {
        Set<uint32_t>(*lanes[i], d.dst[0], same);
      }
    }
  } else if (kind == Collective::kMatrix) {
    Thread* ordered[32] = {};
    const DInst* inst_of[32] = {};
    for (int i = 0; i < count; ++i) {
      ordered[lanes[i]->linear % 32] = lanes[i];
      inst_of[lanes[i]->linear % 32] = insts[i];
    }
    if (!RunMatrix(b, ordered, inst_of)) return Action::kError;
    // .sync: the warp's accesses after it are ordered after its accesses before.
    if (b.observer != nullptr) b.observer->WarpSynced(lanes[0]->linear / 32, 0xFFFFFFFFu);
  } else if (kind == Collective::kActiveMask) {
    for (int i = 0; i < count; ++i) Set<uint32_t>(*lanes[i], insts[i]->dst[0], members);
  } else if (kind == Collective::kMma) {
    if (!RunMma(b, lanes, insts, count)) return Action::kError;
  } else if (kind == Collective::kWarpSync && b.observer != nullptr) {
    b.observer->WarpSynced(lanes[0]->linear / 32, members);  // orders the lanes' shared accesses
  }
  for (int i = 0; i < count; ++i) {
    Thread& t = *lanes[i];
    const DInst& d = *insts[i];
    if (t.defined != nullptr) {
      for (int k = 0; k < d.ndst; ++k) t.defined[d.dst[k]] = 1;
      if (poisoned[t.linear % 32]) t.defined[d.dst[0]] = 0;
    }
    t.state = ThreadState::kRunning;
    t.pc++;
  }
  return Action::kNext;
}

}  // namespace ptxforge::runtime::emu
