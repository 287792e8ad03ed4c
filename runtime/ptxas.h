// Running NVIDIA's ptxas on generated PTX (tests, ptx-dump --validate).
#ifndef PTXFORGE_RUNTIME_PTXAS_H_
#define PTXFORGE_RUNTIME_PTXAS_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/target.h"

namespace ptxforge::runtime {

// The ptxas to use: $PTXFORGE_PTXAS if set, else `ptxas` on PATH, else
// /usr/local/cuda/bin/ptxas. nullopt when none is executable.
std::optional<std::string> FindPtxas();

struct PtxasResult {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};

// How long ptxas may run before it is stopped (ptx-dump --ptxas-timeout).
inline constexpr std::chrono::milliseconds kDefaultPtxasTimeout{60000};

// Runs `ptxas -arch=<target> <extra_args> file.ptx -o /dev/null` on `ptx`
// (written to a temporary file that is removed afterwards). Fails only when
// ptxas cannot be run, or runs longer than `timeout` (then it is killed:
// DeadlineExceeded, "ptxas did not finish within 60 s; it was stopped");
// its verdict is in the result.
absl::StatusOr<PtxasResult> RunPtxas(const std::string& ptxas, std::string_view ptx, ir::Target target,
                                     const std::vector<std::string>& extra_args = {},
                                     std::chrono::milliseconds timeout = kDefaultPtxasTimeout);

// OK when ptxas accepts the PTX; otherwise an error carrying ptxas's output
// (or saying that it printed nothing). FailedPrecondition when ptxas is not
// installed; DeadlineExceeded when it runs longer than `timeout`.
absl::Status ValidateWithPtxas(std::string_view ptx, ir::Target target,
                               std::chrono::milliseconds timeout = kDefaultPtxasTimeout);

}  // namespace ptxforge::runtime

#endif  // PTXFORGE_RUNTIME_PTXAS_H_
