// Shared helpers of the kernel-family tests: ptx-dump's usage error for a
// refused setting, and a family's test problem run on the emulator.
#ifndef PTXFORGE_TEST_FAMILY_TESTING_H_
#define PTXFORGE_TEST_FAMILY_TESTING_H_

#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ir/strings.h"
#include "kernels/problem_runner.h"
#include "kernels/registry.h"
#include "runtime/emulator.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge::testing {

using Overrides = std::vector<std::pair<std::string, std::string>>;

// ptx-dump's one-line error for `family` with `settings`, which must be a
// usage error (exit code 2, nothing on stdout). `run` adds --run=emulator,
// so that the test problem is made too (it checks the shape fields).
inline std::string DumpUsageError(const std::string& family, const Overrides& settings, bool run = false) {
  std::vector<std::string> args = {family};
  if (run) args.push_back("--run=emulator");
  for (const auto& [k, v] : settings) args.push_back(StrCat("--set=", k, "=", v));
  std::ostringstream out, err;
  CHECK(tools::RunPtxDump(args, out, err) == 2);
  CHECK(out.str().empty());
  return err.str();
}

// Runs the family's test problem for `settings` (inputs from `seed`) on the
// emulator, with the approximate instructions at their worst error and race
// checking on, and checks every output against the family's reference.
inline void RunFamilyOnEmulator(const std::string& family_name, const Overrides& settings, uint64_t seed = 7) {
  const kernels::KernelFamily* family = kernels::FindFamily(family_name);
  REQUIRE(family != nullptr);
  absl::StatusOr<kernels::Config> config = family->MakeConfig(settings);
  REQUIRE(Msg(config) == "OK");
  absl::StatusOr<ir::Kernel> kernel = family->Build(*config, ir::Target::kSm80);
  REQUIRE(Msg(kernel) == "OK");
  INFO(kernel->name);
  absl::StatusOr<kernels::TestProblem> problem = family->MakeProblem(*config, seed);
  REQUIRE(Msg(problem) == "OK");
  INFO(problem->shape);
  auto emu = runtime::MakeEmulator({.approx_worst_error = true, .race_check = true});
  absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(*emu, *kernel, *problem);
  REQUIRE(Msg(result) == "OK");
  INFO(result->Report());
  CHECK(result->ok());
}

}  // namespace ptxforge::testing

#endif  // PTXFORGE_TEST_FAMILY_TESTING_H_
