// RunProblem: allocate, copy, launch, copy back, compare.
#include "kernels/problem_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "ir/strings.h"
#include "runtime/cuda_device.h"

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
  if (!launch_us.empty()) {
    std::vector<double> sorted = launch_us;
    std::sort(sorted.begin(), sorted.end());
    StrAppend(&out, "time: median ", std::round(sorted[sorted.size() / 2] * 10) / 10, " us, min ",
              std::round(sorted.front() * 10) / 10, " us over ", sorted.size(), " launches (", timer, ")\n");
  }
  return out;
}

namespace {

// Launches `kernel` `count` times, timing each launch.
absl::Status TimeLaunches(runtime::Device& device, LoadedKernel& kernel, const LaunchConfig& config,
                          std::span<const KernelArg> args, int count, ProblemResult& result) {
  if (auto* cuda = dynamic_cast<runtime::CudaDevice*>(&device)) {
    result.timer = "CUDA events";
    absl::StatusOr<runtime::CudaEvent> start = cuda->CreateEvent();
    if (!start.ok()) return start.status();
    absl::StatusOr<runtime::CudaEvent> end = cuda->CreateEvent();
    if (!end.ok()) return end.status();
    for (int i = 0; i < count; ++i) {
      if (absl::Status s = start->Record(); !s.ok()) return s;
      if (absl::Status s = device.Launch(kernel, config, args); !s.ok()) return s;
      if (absl::Status s = end->Record(); !s.ok()) return s;
      absl::StatusOr<float> ms = runtime::CudaEvent::ElapsedMs(*start, *end);
      if (!ms.ok()) return ms.status();
      result.launch_us.push_back(*ms * 1000.0);
    }
    return absl::OkStatus();
  }
  result.timer = "host clock";
  for (int i = 0; i < count; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (absl::Status s = device.Launch(kernel, config, args); !s.ok()) return s;
    if (absl::Status s = device.Synchronize(); !s.ok()) return s;
    result.launch_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ProblemResult> RunProblem(runtime::Device& device, const ir::Kernel& kernel, const kernels::TestProblem& problem,
                                         const RunOptions& options) {
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
    kernels::Comparison comparison = kernels::CompareOutput(hb, *actual);
    result.outputs.push_back(OutputResult{hb.name, hb.tolerance, std::move(comparison), *std::move(actual)});
  }
  if (options.timed_launches > 0) {
    if (absl::Status s = TimeLaunches(device, **loaded, config, args, options.timed_launches, result); !s.ok()) return s;
  }
  return result;
}

}  // namespace ptxforge::kernels
