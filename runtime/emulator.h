// The CPU emulator: runs ptxforge kernels on the CPU with GPU semantics,
// behind the same Device API as the CUDA driver.
//
//   std::unique_ptr<Emulator> emu = MakeEmulator();
//   auto k = emu->Load(kernel);          // verifies and pre-decodes
//   auto counters = emu->LaunchCounted(**k, {.grid = {4}, .block = {256}}, {*a, *b, *c, n});
//   counters->ToString();                // how much work that launch did
//
// Every access is checked: out of bounds or misaligned global/shared/local
// memory stops the launch with an error naming the kernel, the instruction
// (as PTX), the block and thread, the address and the nearest allocation.
// bar.sync has block-wide semantics (threads really wait for each other);
// a deadlock (threads at different barriers, or threads that exited while
// others wait) is an error naming the block and the threads.
//
// How it runs: each thread executes until it reaches a barrier, a warp
// collective (shfl.sync, vote.sync, activemask) or its end; when no thread
// of the block can go on, the scheduler completes the collectives and
// barriers whose threads have all arrived. Threads are not preempted, so a
// thread spinning on a flag another thread of its block sets only stops at
// max_instructions_per_thread. Shared memory starts as 0xFF bytes.
// Differences from hardware, all on the strict side: a bar.sync without a
// thread count needs every thread of the block (an exited thread is
// reported); a shuffle reading a lane outside its member mask yields
// 0xFFFFFFFF (and counts as unwritten when initialisation is checked).
// cp.async reads its global source when issued and writes shared memory
// when the issuing thread's cp.async.wait_group/wait_all retires its group;
// touching a shared byte of a copy still in flight (any thread, any access),
// a copy misaligned to its cp-size, and a thread ending with copies in
// flight are errors. bar.arrive counts a thread toward a named barrier
// once per barrier phase. fence and membar order nothing further: each
// thread's accesses already happen in program order.
#ifndef PTXFORGE_RUNTIME_EMULATOR_H_
#define PTXFORGE_RUNTIME_EMULATOR_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "ir/opcode.h"
#include "runtime/device.h"
#include "runtime/emulator_profile.h"

namespace ptxforge::runtime {

struct EmulatorOptions {
  // Host threads running blocks: 0 = one per core (at most 8), 1 = serial.
  // Kernels with global atomics always run their blocks in order on one
  // thread, so every result is deterministic.
  int worker_threads = 0;
  // Run the verifier in Load(). Verified kernels cannot read an undefined
  // register; unverified ones are checked for that at run time instead.
  bool verify = true;
  // A thread that executes more instructions than this stops the launch
  // (an infinite loop, most likely).
  uint64_t max_instructions_per_thread = uint64_t{1} << 30;
  // Nonzero: run a launch's blocks, and the warps of each block between
  // barriers and warp collectives, in a pseudo-random order drawn from this
  // seed (on one host thread), to flush out results that depend on the
  // scheduling order (atomics handing out slots, races between warps). The
  // same seed gives the same order on every platform. 0: blocks in index
  // order, warps in order. Grids of more than 2^24 blocks are refused.
  uint64_t schedule_seed = 0;
  // Return the f32 approximations (ex2, lg2, sin, cos, tanh, rsqrt; sqrt,
  // rcp and div with .approx; div.full) with the worst error the PTX ISA
  // documents for each (ex2 2 ulp, lg2 absolute 2^-22, sin/cos absolute
  // 2^-20.5, tanh relative 2^-10.987, rsqrt relative 2^-22.9, sqrt relative
  // 2^-23, rcp 1 ulp, div 2 ulp), added or subtracted as a hash of the input
  // bits says: deterministic, and a kernel's tolerance tested against it
  // holds on hardware. Off: they are exact (correctly rounded).
  bool approx_worst_error = false;
  // Bounds on a whole launch (0: none): the thread-instructions all its
  // threads may execute together, and the wall-clock time it may take. A
  // launch past either stops with an error saying which limit it hit.
  uint64_t max_launch_instructions = 0;
  std::chrono::milliseconds launch_timeout{0};
  // Host memory one worker may use for a block's registers, local and shared
  // memory; a launch that needs more is refused before it runs.
  uint64_t max_block_memory_bytes = uint64_t{4} << 30;
  // Memory-efficiency metrics per launch and instruction (coalescing, bank
  // conflicts, divergence): last_profile(). Costs up to ~3x emulation time.
  bool profile = false;
  // Race checking: a launch fails with a message naming both accesses (their
  // threads, PTX and builder lines) and the address when
  //  - two threads of a block access the same shared bytes between the same
  //    barriers, at least one writing and not both atomic (threads of one
  //    warp included: warp-synchronous code without a barrier is a race);
  //  - two blocks access the same global bytes with plain ld/st, at least
  //    one writing (there is no ordering between blocks within a launch;
  //    orderings built from atomics and fences are not modelled).
  // Blocks then run on one host thread. Costs up to ~3x emulation time.
  bool race_check = false;
};

// Work done by one launch, summed over all threads.
struct EmulatorCounters {
  uint64_t instructions = 0;  // thread-instructions (a predicated-off one counts)
  std::array<uint64_t, ir::kNumOpClasses> by_class{};
  uint64_t global_load_bytes = 0;
  uint64_t global_store_bytes = 0;
  uint64_t shared_loads = 0;   // accesses (a v4 load counts once)
  uint64_t shared_stores = 0;
  uint64_t atomics = 0;
  uint64_t barriers = 0;       // bar.sync executions (per thread)

  EmulatorCounters& operator+=(const EmulatorCounters& o);
  // "instructions=123 (arith=40 load=10 ...) global_load_bytes=... ..."
  std::string ToString() const;
};

class Emulator : public Device {
 public:
  explicit Emulator(EmulatorOptions options = {});
  ~Emulator() override;

  DeviceKind kind() const override { return DeviceKind::kEmulator; }
  std::string name() const override { return "ptxforge CPU emulator"; }
  absl::StatusOr<uint64_t> Allocate(size_t bytes) override;
  absl::Status Free(uint64_t address) override;
  absl::Status CopyToDevice(uint64_t dst, const void* src, size_t bytes) override;
  absl::Status CopyToHost(void* dst, uint64_t src, size_t bytes) override;
  absl::StatusOr<std::unique_ptr<LoadedKernel>> Load(const ir::Kernel& kernel) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }

  // Launch() that returns this launch's counters: with launches from several
  // threads, each gets its own.
  absl::StatusOr<EmulatorCounters> LaunchCounted(LoadedKernel& kernel, const LaunchConfig& config,
                                                 std::span<const KernelArg> args);
  absl::StatusOr<EmulatorCounters> LaunchCounted(LoadedKernel& kernel, const LaunchConfig& config,
                                                 std::initializer_list<KernelArg> args) {
    return LaunchCounted(kernel, config, std::span<const KernelArg>(args.begin(), args.size()));
  }
  // Counters of the launch that finished last (a copy). After a failed
  // launch they are partial (and depend on how far the other host threads
  // got). With concurrent launches, use LaunchCounted instead.
  EmulatorCounters last_counters() const;
  // The profile of the most recent launch (a copy; empty unless options().profile).
  EmulatorProfile last_profile() const;
  const EmulatorOptions& options() const { return options_; }

  struct Allocation {
    uint64_t size = 0;
    std::unique_ptr<uint8_t[]> data;
  };

 protected:
  absl::Status DoLaunch(LoadedKernel& kernel, const LaunchConfig& config, std::span<const KernelArg> args) override;

 private:
  // Runs a checked launch; its counters go to *counters (and last_counters).
  absl::Status RunLaunch(LoadedKernel& kernel, const LaunchConfig& config, std::span<const KernelArg> args,
                         EmulatorCounters* counters);
  // Finds the allocation holding [address, address + bytes).
  absl::StatusOr<uint8_t*> HostPointer(uint64_t address, size_t bytes, std::string_view what);

  EmulatorOptions options_;
  std::mutex mu_;  // guards allocations_; held for a whole launch (launches run one at a time)
  std::map<uint64_t, Allocation> allocations_;
  uint64_t next_address_;
  mutable std::mutex counters_mu_;  // guards last_counters_ and profile_
  EmulatorCounters last_counters_;
  EmulatorProfile profile_;
};

std::unique_ptr<Emulator> MakeEmulator(EmulatorOptions options = {});

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_EMULATOR_H_
