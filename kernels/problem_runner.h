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
};

struct ProblemResult {
  std::vector<OutputResult> outputs;
  bool ok() const;
  // One line per output: "c: 1000 elements, max abs error 0, max rel error 0
  // (tolerance 1e-05): ok" (or "... 3 mismatches, first c[17]: got ..., expected ...").
  std::string Report() const;
};

// Loads `kernel` on `device`, copies the problem's buffers in, launches it,
// and compares every output. Errors (a failed launch, a memory error on the
// emulator) come back as the status; wrong numbers come back in the result.
absl::StatusOr<ProblemResult> RunProblem(runtime::Device& device, const ir::Kernel& kernel, const kernels::TestProblem& problem);

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_PROBLEM_RUNNER_H_
