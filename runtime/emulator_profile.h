// The emulator's memory-efficiency report for one launch: global coalescing,
// shared-memory bank conflicts and divergence, per instruction and in total
// (EmulatorOptions::profile; Emulator::last_profile()).
//
// Everything is counted per warp-level execution: the lanes of one warp that
// reach the same instruction for the k-th time form one execution (a request,
// for a memory instruction), as the hardware would issue it. A lane whose
// guard predicate is false reaches the instruction but accesses nothing.
//  - Global ld/st: the distinct 32-byte sectors and 128-byte lines the
//    request touches, against the ideal sectors the distinct bytes it
//    requests need (ceil(bytes / 32)). A coalesced 4-byte-per-lane request
//    touches 4 sectors (ideal 4); a stride of 32 floats touches 32 (ideal 4).
//  - Shared ld/st: wavefronts with 32 banks of 4 bytes. Accesses of up to 4
//    bytes are served for the whole warp at once, 8-byte accesses per half
//    warp and 16-byte accesses per quarter warp (32-byte ones per 4 lanes);
//    each such phase takes as many wavefronts as the most distinct 4-byte
//    words any one bank holds (lanes reading the same word share it). The
//    ideal is one wavefront per phase with an active lane; the excess is the
//    bank conflicts.
//  - Branches: a guarded bra splits a warp when some lanes that reach it
//    take it and others do not.
// Atomics are not part of the memory metrics. Generic addresses count as
// global or shared by the window they fall in.
#ifndef PTXFORGE_RUNTIME_EMULATOR_PROFILE_H_
#define PTXFORGE_RUNTIME_EMULATOR_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ptxforge::runtime {

// Counts for one instruction or a whole launch.
struct ProfileCounts {
  uint64_t warp_executions = 0;    // warp-level executions (requests, for ld/st)
  uint64_t thread_executions = 0;  // lanes that reached the instruction, summed
  // Global ld/st: requests with at least one lane accessing global memory.
  uint64_t global_requests = 0;
  uint64_t global_bytes = 0;       // distinct bytes requested, summed over requests
  uint64_t sectors = 0;            // 32-byte sectors touched
  uint64_t ideal_sectors = 0;      // ceil(distinct bytes / 32), summed
  uint64_t lines = 0;              // 128-byte lines touched
  // Shared ld/st.
  uint64_t shared_requests = 0;
  uint64_t wavefronts = 0;
  uint64_t ideal_wavefronts = 0;
  // Guarded branches.
  uint64_t branch_executions = 0;  // warp-level executions
  uint64_t branch_splits = 0;      // of those, the ones that split the warp

  uint64_t excess_sectors() const { return sectors - ideal_sectors; }
  uint64_t bank_conflicts() const { return wavefronts - ideal_wavefronts; }
  double sectors_per_request() const;
  double active_lanes_per_instruction() const;  // thread over warp executions
  ProfileCounts& operator+=(const ProfileCounts& o);
};

// One instruction of the kernel that ran.
struct InstructionProfile {
  uint32_t index = 0;  // in ir::Kernel::body
  std::string ptx;     // as the PTX printer prints it: "ld.global.f32 %f1, [%rd4];"
  std::string loc;     // the builder call: "transpose.cc:42" ("" when unknown)
  ProfileCounts counts;
};

struct EmulatorProfile {
  std::vector<InstructionProfile> instructions;  // the executed ones, in body order
  ProfileCounts total;

  // The instruction at ir::Kernel::body index `index`, or nullptr if it never ran.
  const InstructionProfile* Find(uint32_t index) const;
  // "global: 64 requests, 4.00 sectors/request, 0 excess sectors (256 ideal),
  // 64 lines; shared: 0 requests, 0 bank conflicts (0 wavefronts); branches:
  // 8 warp executions, 0 splits; 32.00 active lanes/instruction"
  std::string Summary() const;
  // The summary, then the `top` instructions with the most excess sectors and
  // the `top` with the most bank conflicts (those with none are left out).
  std::string Table(int top = 5) const;
};

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_EMULATOR_PROFILE_H_
