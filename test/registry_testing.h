// Helpers for kernel-family tests: run a registry family's test problem on the
// emulator, and run ptx-dump in-process.
#ifndef PTXFORGE_TEST_REGISTRY_TESTING_H_
#define PTXFORGE_TEST_REGISTRY_TESTING_H_

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/problem_runner.h"
#include "kernels/registry.h"
#include "passes/pass.h"
#include "runtime/emulator.h"
#include "tools/ptx_dump.h"

namespace ptxforge::testing {

using Overrides = std::vector<std::pair<std::string, std::string>>;

// Builds `family` with `overrides` for sm_80, runs its test problem on
// `emu` and requires every output to match the reference. Returns the
// emulator's counters of the launch.
inline runtime::EmulatorCounters RunFamilyOnEmulator(std::string_view family_name, const Overrides& overrides,
                                                     runtime::Emulator& emu, uint64_t seed = 1) {
  const kernels::KernelFamily* family = kernels::FindFamily(family_name);
  REQUIRE(family != nullptr);
  absl::StatusOr<kernels::Config> config = family->MakeConfig(overrides);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  absl::StatusOr<ir::Kernel> kernel = family->Build(*config, ir::Target::kSm80);
  INFO(kernel.status().ToString());
  REQUIRE(kernel.ok());
  REQUIRE(passes::Pipeline::Standard().Run(*kernel).ok());
  absl::StatusOr<kernels::TestProblem> problem = family->MakeProblem(*config, seed);
  INFO(problem.status().ToString());
  REQUIRE(problem.ok());
  INFO(kernel->name << " " << problem->shape);
  absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(emu, *kernel, *problem);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  INFO(result->Report());
  CHECK(result->ok());
  return emu.last_counters();
}

struct DumpResult {
  int code = 0;
  std::string out;
  std::string err;
};

inline DumpResult PtxDump(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = tools::RunPtxDump(args, out, err);
  return {code, out.str(), err.str()};
}

// `ptx-dump family --set k=v ...` fails as a usage error (exit code 2) with exactly `message`.
inline void RequireDumpError(std::string_view family, const Overrides& overrides, const std::string& message) {
  std::vector<std::string> args = {std::string(family)};
  for (const auto& [key, value] : overrides) {
    args.push_back("--set");
    args.push_back(key + "=" + value);
  }
  DumpResult r = PtxDump(args);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "ptx-dump: " + message + "\n");
}

}  // namespace ptxforge::testing

#endif  // PTXFORGE_TEST_REGISTRY_TESTING_H_
