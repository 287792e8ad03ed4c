// The CPU emulator: runs ptxforge kernels on the CPU with GPU semantics,
// behind the same Device API as the CUDA driver.
//
//   std::unique_ptr<Emulator> emu = MakeEmulator();
//   auto k = emu->Load(kernel);          // verifies and pre-decodes
//   emu->Launch(**k, {.grid = {4}, .block = {256}}, {*a, *b, *c, n});
//   emu->last_counters().ToString();     // how much work the launch did
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
#ifndef PTXFORGE_RUNTIME_EMULATOR_H_
#define PTXFORGE_RUNTIME_EMULATOR_H_

#include <array>
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

  // Counters of the most recent launch. After a failed launch they are
  // partial (and depend on how far the other host threads got).
  const EmulatorCounters& last_counters() const { return counters_; }
  // The profile of the most recent launch (empty unless options().profile).
  const EmulatorProfile& last_profile() const { return profile_; }
  const EmulatorOptions& options() const { return options_; }

  struct Allocation {
    uint64_t size = 0;
    std::unique_ptr<uint8_t[]> data;
  };

 protected:
  absl::Status DoLaunch(LoadedKernel& kernel, const LaunchConfig& config, std::span<const KernelArg> args) override;

 private:
  // Finds the allocation holding [address, address + bytes).
  absl::StatusOr<uint8_t*> HostPointer(uint64_t address, size_t bytes, std::string_view what);

  EmulatorOptions options_;
  std::mutex mu_;  // guards allocations_ between launches
  std::map<uint64_t, Allocation> allocations_;
  uint64_t next_address_;
  EmulatorCounters counters_;
  EmulatorProfile profile_;
};

std::unique_ptr<Emulator> MakeEmulator(EmulatorOptions options = {});

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_EMULATOR_H_
