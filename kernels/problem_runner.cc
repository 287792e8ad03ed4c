// RunProblem: allocate, copy, launch, copy back, compare.
#include "kernels/problem_runner.h"

#include "ir/strings.h"

namespace ptxforge::kernels {

using runtime::Buffer;
using runtime::KernelArg;
using runtime::LaunchConfig;
using runtime::LoadedKernel;

bool ProblemResult::ok() const {
  for (const OutputResult& o : outputs) {
    if (!o.comparison.ok()) return false;
  }
  return true;
}

std::string ProblemResult::Report() const {
  std::string out;
  for (const OutputResult& o : outputs) {
    const kernels::Comparison& c = o.comparison;
    StrAppend(&out, o.name, ": ", c.elements, " elements, max abs error ", c.max_abs_error, ", max rel error ",
              c.max_rel_error, " (tolerance ", o.tolerance, "): ");
    if (c.ok()) {
      out.append("ok\n");
    } else {
      StrAppend(&out, c.mismatches, " mismatches, first ", c.first_mismatch, "\n");
    }
  }
  return out;
}

absl::StatusOr<ProblemResult> RunProblem(runtime::Device& device, const ir::Kernel& kernel, const kernels::TestProblem& problem) {
  absl::StatusOr<std::unique_ptr<LoadedKernel>> loaded = device.Load(kernel);
  if (!loaded.ok()) return loaded.status();
  std::vector<Buffer<uint8_t>> buffers;
  for (const kernels::HostBuffer& hb : problem.buffers) {
    absl::StatusOr<Buffer<uint8_t>> b = Buffer<uint8_t>::FromHost(device, hb.data);
    if (!b.ok()) return b.status();
    buffers.push_back(std::move(*b));
  }
  std::vector<KernelArg> args;
  for (const auto& arg : problem.args) {
    if (const size_t* index = std::get_if<size_t>(&arg)) {
      if (*index >= buffers.size()) return absl::InternalError(StrCat("problem argument names buffer ", *index));
      args.push_back(buffers[*index]);
    } else {
      const kernels::HostScalar& s = std::get<kernels::HostScalar>(arg);
      KernelArg a;
      a.type = s.type;
      a.bits = s.bits;
      args.push_back(a);
    }
  }
  LaunchConfig config;
  config.grid = {problem.grid[0], problem.grid[1], problem.grid[2]};
  config.block = {problem.block[0], problem.block[1], problem.block[2]};
  config.dynamic_shared_bytes = problem.dynamic_shared_bytes;
  if (absl::Status s = device.Launch(**loaded, config, args); !s.ok()) return s;
  if (absl::Status s = device.Synchronize(); !s.ok()) return s;
  ProblemResult result;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const kernels::HostBuffer& hb = problem.buffers[i];
    if (!hb.is_output) continue;
    absl::StatusOr<std::vector<uint8_t>> actual = buffers[i].ToHost();
    if (!actual.ok()) return actual.status();
    result.outputs.push_back(OutputResult{hb.name, hb.tolerance, kernels::CompareOutput(hb, *actual)});
  }
  return result;
}

}  // namespace ptxforge::kernels
