// Runs a kernel family's test problem on any device and compares the
// outputs with the family's reference (ptx-dump --run, registry tests).
#ifndef PTXFORGE_KERNELS_PROBLEM_RUNNER_H_
#define PTXFORGE_KERNELS_PROBLEM_RUNNER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/problem.h"
#include "runtime/device.h"

namespace ptxforge::kernels {

struct OutputResult {
  std::string name;
  double tolerance = 0;
  kernels::Comparison comparison;
  std::vector<uint8_t> data;  // the bytes the kernel left in the buffer
};

struct ProblemResult {
  std::vector<OutputResult> outputs;
  // With RunOptions::timed_launches > 0: each timed launch's duration in
  // microseconds, in launch order, and how it was measured ("CUDA events" on a
  // CudaDevice: kernel time only; "host clock" elsewhere: launch to synchronize).
  std::vector<double> launch_us;
  std::string timer;
  bool ok() const;
  // One line per output: "c: 1000 elements, max abs error 0, max rel error 0
  // (tolerance 1e-05): ok" (or "... 3 mismatches, first c[17]: got ..., expected ..."),
  // then with timed launches "time: median 4.2 us, min 4.0 us over 20 launches (CUDA events)".
  std::string Report() const;
};

struct RunOptions {
  // After the checked launch, launch the kernel this many more times on the
  // same buffers and time each one (the outputs are compared before them).
  int timed_launches = 0;
};

// Loads `kernel` on `device`, copies the problem's buffers in, launches it,
// and compares every output. Errors (a failed launch, a memory error on the
// emulator) come back as the status; wrong numbers come back in the result.
absl::StatusOr<ProblemResult> RunProblem(runtime::Device& device, const ir::Kernel& kernel, const kernels::TestProblem& problem,
                                         const RunOptions& options = {});

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_PROBLEM_RUNNER_H_
