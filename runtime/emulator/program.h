// The emulator's pre-decoded program and execution state (internal).
#ifndef PTXFORGE_RUNTIME_EMULATOR_PROGRAM_H_
#define PTXFORGE_RUNTIME_EMULATOR_PROGRAM_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "ir/register_numbering.h"
#include "runtime/emulator.h"

namespace ptxforge::runtime::emu {

// Where generic addresses of shared and local memory live (global
// allocations start at kGlobalBase and stay far below these).
inline constexpr uint64_t kGlobalBase = uint64_t{1} << 40;
inline constexpr uint64_t kSharedWindow = uint64_t{0x7E} << 40;
inline constexpr uint64_t kLocalWindow = uint64_t{0x7F} << 40;
inline constexpr uint64_t kWindowSize = uint64_t{1} << 32;

inline constexpr uint32_t kNoSlot = UINT32_MAX;

// What a handler tells the thread loop.
enum class Action : uint8_t {
  kNext,   // go on with the next instruction
  kJump,   // the handler set the thread's pc
  kBlock,  // wait for a barrier or a warp collective (pc stays)
  kExit,   // the thread ended
  kError,  // the block's error is set
};

enum class Space : uint8_t { kGeneric, kGlobal, kShared, kLocal, kParam };

struct Block;
struct Thread;
class Observer;
struct DInst;
using Handler = Action (*)(Block& b, Thread& t, const DInst& d);

// Collective operations the scheduler completes once every lane arrived.
// kMatrix (ldmatrix/stmatrix) and kMma (mma.sync, ir::kWarpMatrix) are
// .aligned: all 32 lanes of the warp, no mask.
enum class Collective : uint8_t { kNone, kBarrier, kShfl, kVote, kActiveMask, kWarpSync, kMatrix, kRedux, kMatch, kMma };

// One decoded instruction. Sources are register-file slots; immediates are
// constant slots after the registers, so every operand is a slot read.
// dst and src point into Program::operand_slots (any number of operands:
// register groups of mma have 4 + 10) at the cost of one plain load, no
// branch, on the handlers' hot path.
struct DInst {
  Handler fn = nullptr;
  const uint32_t* dst = nullptr;  // ndst slots
  const uint32_t* src = nullptr;  // nsrc slots
  uint32_t guard = kNoSlot;
  uint32_t base = kNoSlot;  // address base slot (kNoSlot: absolute `imm`)
  int64_t imm = 0;          // address offset/absolute address, branch target, param offset
  uint32_t base2 = kNoSlot;  // the second address (cp.async's global source), as base/imm
  int64_t imm2 = 0;
  uint32_t index = 0;       // the instruction in ir::Kernel::body (for messages)
  uint8_t guard_negated = 0;
  uint8_t op_class = 0;     // ir::OpClass for the counters
  uint16_t ndst = 0;
  uint16_t nsrc = 0;
  uint8_t vec = 1;
  Space space = Space::kGeneric;   // of the (first) address
  Space space2 = Space::kGeneric;  // of the second address
  Collective collective = Collective::kNone;
  ir::Modifiers mods;       // the rest of what the handler needs
};

enum class ThreadState : uint8_t { kRunning, kBarrier, kWarp, kExited };

struct Thread {
  uint64_t* regs = nullptr;
  uint8_t* defined = nullptr;  // per slot, when initialisation is checked
  uint8_t* local = nullptr;
  uint32_t pc = 0;
  uint32_t tid[3] = {0, 0, 0};
  uint32_t linear = 0;
  ThreadState state = ThreadState::kRunning;
  uint64_t executed = 0;
};

struct Program {
  Program() = default;
  // Move-only: the instructions point into operand_slots, whose buffer a
  // move keeps and a copy would not.
  Program(Program&&) = default;
  Program& operator=(Program&&) = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  ir::Kernel kernel;  // for messages
  ir::RegisterNumbering numbering;
  std::vector<DInst> code;
  std::vector<uint32_t> operand_slots;  // every instruction's dst then src slots
  uint32_t num_regs = 0;
  uint32_t num_slots = 0;
  std::vector<uint64_t> initial_slots;  // constants in [num_regs, num_slots)
  // Byte offsets and sizes are 64-bit: a huge array must not wrap around.
  std::vector<uint64_t> variable_offsets;  // shared/local byte offsets by variable
  uint64_t static_shared_bytes = 0;
  uint64_t dynamic_shared_offset = 0;  // where the extern window starts
  uint64_t local_bytes = 0;
  std::vector<uint32_t> param_offsets;
  uint32_t param_bytes = 0;
  bool has_global_atomics = false;
  bool has_cp_async = false;  // cp.async or its commit/wait instructions
  bool check_init = false;

  // "ld.global.f32 %f0, [%rd7];" as the PTX printer would print it.
  std::string PtxText(uint32_t index) const;
  // "vector_add.cc:42" or "" when unknown.
  std::string SourceLoc(uint32_t index) const;
};

// Decodes a kernel that ir::CheckWellFormed accepted. Fails on what the
// emulator cannot run (raw PTX, const memory, cvta.param), naming the
// instruction and why. approx_worst_error: see EmulatorOptions.
absl::StatusOr<Program> Decode(const ir::Kernel& kernel, bool check_init, bool approx_worst_error = false);

// Global memory during a launch: a sorted table of allocations.
struct GlobalRange {
  uint64_t begin;
  uint64_t end;
  uint8_t* data;
};

struct Launch {
  const Program* program;
  const std::vector<GlobalRange>* global;
  const uint8_t* params;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t threads_per_block;
  uint32_t dynamic_shared_bytes;
  uint32_t shared_bytes;  // static + dynamic
  uint64_t max_instructions;
  // Whole-launch bounds (EmulatorOptions): threads add their instructions to
  // `executed` in chunks of kLaunchCheckInterval and at the end of a block.
  uint64_t max_launch_instructions = 0;                 // 0: none
  std::chrono::steady_clock::time_point deadline;        // when has_deadline
  bool has_deadline = false;
  std::chrono::milliseconds timeout{0};
  std::atomic<uint64_t>* executed = nullptr;

  // "" while within the bounds; else what was exceeded.
  std::string OverLimit() const;
};
inline constexpr uint64_t kLaunchCheckInterval = uint64_t{1} << 16;

// One block being run; reused for the blocks a worker runs.
struct Block {
  const Launch* launch = nullptr;
  const Program* program = nullptr;
  uint32_t ctaid[3] = {0, 0, 0};
  std::vector<uint8_t> shared;
  std::vector<uint64_t> regs;     // threads x slots
  std::vector<uint8_t> defined;   // threads x slots, when checked
  std::vector<uint8_t> local;     // threads x local bytes
  std::vector<Thread> threads;
  EmulatorCounters counters;
  absl::Status error;
  size_t global_hint = 0;  // index of the last allocation hit
  // The order warps run in each scheduling round; shuffled in every round
  // when order_state is nonzero (EmulatorOptions::schedule_seed).
  std::vector<uint32_t> warp_order;
  uint64_t order_state = 0;
  Observer* observer = nullptr;  // when profiling or race checking
  // cp.async, in programs that have it (sized then, empty otherwise).
  // A copy reads its source when issued and lands (writes shared memory)
  // when a wait retires its group; until then it is in flight.
  struct AsyncCopy {
    uint32_t dst = 0;    // shared offset
    uint32_t pc = 0;     // the cp.async
    uint32_t group = 0;  // the thread's commit count when it was issued
    uint32_t size = 0;   // cp-size
    uint32_t src_size = 0;           // bytes read from global memory
    const uint8_t* from = nullptr;   // their host address
    uint64_t src = 0;                // and their global address
    uint8_t data[16] = {};
  };
  std::vector<std::vector<AsyncCopy>> copies;  // by thread, in issue order
  std::vector<uint32_t> committed;             // by thread: groups committed
  // By shared byte: the copy in flight that will write it, as
  // (thread + 1) << 32 | pc; 0: none.
  std::vector<uint64_t> inflight;
  uint64_t inflight_bytes = 0;
  // The host range holding every global source of the copies in flight (a
  // quick test before a global write looks for the copy it overwrites).
  const uint8_t* sources_lo = nullptr;
  const uint8_t* sources_hi = nullptr;
  // bar.arrive: by thread, the barriers it arrived at in their current
  // phase (bit per id); by barrier, the thread count the arrivals named.
  std::vector<uint16_t> arrived;
  uint32_t arrive_count[16] = {};

  // Records the first error of the block; returns Action::kError.
  Action Fail(const Thread& t, const DInst& d, std::string message);
  std::string Where(const Thread& t) const;  // "block (0,0,0) thread (3,0,0)"
};

// Register access: values live in the low bits of 64-bit slots.
template <typename T>
inline T Get(const Thread& t, uint32_t slot) {
  T v;
  std::memcpy(&v, &t.regs[slot], sizeof(T));
  return v;
}
template <typename T>
inline void Set(Thread& t, uint32_t slot, T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  t.regs[slot] = bits;
}

// Handler selection for one instruction (ops_*.cc).
absl::Status SelectHandler(const ir::Kernel& kernel, const ir::Instruction& inst, DInst& d);
Handler SelectArith(const ir::Instruction& inst);
Handler SelectConvert(const ir::Instruction& inst);
Handler SelectMemory(const ir::Instruction& inst);
Handler SelectControl(const ir::Instruction& inst);
// The fp8 packing conversions (ops_mma.cc); null for other instructions.
Handler SelectMma(const ir::Instruction& inst);
// f32 approximations at their documented worst error (ops_approx.cc); null
// for other instructions.
Handler SelectApproxWorst(const ir::Instruction& inst, DInst& d);

// cp.async bookkeeping (ops_memory.cc). Whether an access of [offset,
// offset + size) of shared memory touches bytes of a copy in flight (false
// after recording the error; `what` is "shared load of 4 bytes at shared
// address 16"); checked by every shared access while copies are in flight.
bool CheckNotInFlight(Block& b, Thread& t, const DInst& d, uint64_t offset, uint32_t size, bool write,
                      std::string_view what);
// Whether a write of [p, p + size) to global memory overwrites the source of
// a copy in flight in this block (false after recording the error; `what` is
// "store of 4 bytes"): the copy may read the old or the new bytes.
bool CheckSourceNotInFlight(Block& b, Thread& t, const DInst& d, const uint8_t* p, uint32_t size,
                            std::string_view what);
// The error for a thread ending with copies in flight (Action::kError).
Action ExitWithCopiesInFlight(Block& b, Thread& t, const DInst& d);

// The scheduler's part of warp collectives: lanes[i] waits at insts[i]
// (shfl.sync and vote.sync lanes may wait at different instructions with
// the same member mask, as sm_70+ allows; activemask lanes at one).
Action RunCollective(Block& b, Thread* const* lanes, const DInst* const* insts, int count);
// mma.sync over a whole warp (ops_mma.cc): reads every lane's A, B and C
// fragments and writes its D fragment; false (after b.Fail) when the lanes
// wait at different mma instructions.
bool RunMma(Block& b, Thread* const* lanes, const DInst* const* insts, int count);

// ldmatrix/stmatrix for a whole warp (ops_memory.cc): by_lane[l] is lane l
// and insts[l] the instruction it waits at. Row r of matrix m lives at the
// address lane 8m + r gives; each access is bounds- and alignment-checked.
// Returns false after recording the block's error.
bool RunMatrix(Block& b, Thread* const* by_lane, const DInst* const* insts);

// Runs one block to completion (or its first error).
void RunBlock(Block& b);

}  // namespace ptxforge::runtime::emu

#endif  // PTXFORGE_RUNTIME_EMULATOR_PROGRAM_H_
