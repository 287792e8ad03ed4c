// Emulator handlers: branches, ret/exit, bar.sync, membar, and the warp
// collectives (shfl.sync, vote.sync) that the scheduler completes.
#include "ir/strings.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime::emu {
namespace {

Action Bra(Block&, Thread& t, const DInst& d) {
  t.pc = static_cast<uint32_t>(d.imm);
  return Action::kJump;
}

Action Exit(Block&, Thread&, const DInst&) { return Action::kExit; }

Action Nop(Block&, Thread&, const DInst&) { return Action::kNext; }

Action WaitBarrier(Block&, Thread& t, const DInst&) {
  t.state = ThreadState::kBarrier;
  return Action::kBlock;
}

Action WaitWarp(Block&, Thread& t, const DInst&) {
  t.state = ThreadState::kWarp;
  return Action::kBlock;
}

// The lanes of the thread's warp that have not exited.
Action ActiveMask(Block& b, Thread& t, const DInst& d) {
  uint32_t warp = t.linear / 32, mask = 0;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t i = warp * 32 + lane;
    if (i < b.threads.size() && b.threads[i].state != ThreadState::kExited) mask |= uint32_t{1} << lane;
  }
  Set<uint32_t>(t, d.dst[0], mask);
  return Action::kNext;
}

}  // namespace

Handler SelectControl(const ir::Instruction& inst) {
  switch (inst.op) {
    case ir::Opcode::kBra: return &Bra;
    case ir::Opcode::kRet:
    case ir::Opcode::kExit: return &Exit;
    case ir::Opcode::kMembar: return &Nop;  // blocks run one at a time per host thread; memory is coherent
    case ir::Opcode::kBarSync: return &WaitBarrier;
    case ir::Opcode::kShfl:
    case ir::Opcode::kVote: return &WaitWarp;
    case ir::Opcode::kActiveMask: return &ActiveMask;
    default: return nullptr;
  }
}

Action RunCollective(Block& b, const DInst& d, Thread* const* lanes, int count) {
  Thread* by_lane[32] = {};
  for (int i = 0; i < count; ++i) by_lane[lanes[i]->linear % 32] = lanes[i];
  if (d.collective == Collective::kShfl) {
    uint32_t values[32] = {};
    for (int i = 0; i < count; ++i) values[lanes[i]->linear % 32] = Get<uint32_t>(*lanes[i], d.src[0]);
    for (int i = 0; i < count; ++i) {
      Thread& t = *lanes[i];
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
      if (j < 0 || j > 31 || by_lane[j] == nullptr) {
        return b.Fail(t, d, StrCat("lane ", lane, " reads lane ", j, ", which is not in the member mask (or not in the block)"));
      }
      Set<uint32_t>(t, d.dst[0], values[j]);
      if (d.ndst > 1) t.regs[d.dst[1]] = pval ? 1 : 0;
    }
  } else if (d.collective == Collective::kVote) {
    uint32_t ballot = 0;
    for (int i = 0; i < count; ++i) {
      if (lanes[i]->regs[d.src[0]] != 0) ballot |= uint32_t{1} << (lanes[i]->linear % 32);
    }
    uint32_t members = 0;
    for (int i = 0; i < count; ++i) members |= uint32_t{1} << (lanes[i]->linear % 32);
    for (int i = 0; i < count; ++i) {
      Thread& t = *lanes[i];
      uint64_t r = 0;
      switch (d.mods.vote) {
        case ir::VoteMode::kBallot: r = ballot; break;
        case ir::VoteMode::kAll: r = ballot == members; break;
        case ir::VoteMode::kAny: r = ballot != 0; break;
        case ir::VoteMode::kUni: r = ballot == 0 || ballot == members; break;
        default: break;
      }
      t.regs[d.dst[0]] = r;
    }
  }
  for (int i = 0; i < count; ++i) {
    Thread& t = *lanes[i];
    if (t.defined != nullptr) {
      for (int k = 0; k < d.ndst; ++k) t.defined[d.dst[k]] = 1;
    }
    t.state = ThreadState::kRunning;
    t.pc++;
  }
  return Action::kNext;
}

}  // namespace ptxforge::runtime::emu
