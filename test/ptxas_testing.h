// A module of library kernels through ptxas -v: accepted, and 0 spill bytes
// in every kernel (the kernel-family ptxas tests).
#ifndef PTXFORGE_TEST_PTXAS_TESTING_H_
#define PTXFORGE_TEST_PTXAS_TESTING_H_

#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "emit/ptx_printer.h"
#include "ir/kernel.h"
#include "runtime/ptxas.h"
#include "test/test_util.h"

namespace ptxforge::testing {

// Prints `module` and assembles it with `ptxas -v -arch=<module.target>`:
// ptxas must accept it and report 0 spill stores and loads for each kernel.
inline void CheckAssemblesWithoutSpills(const std::string& ptxas, const ir::Module& module) {
  absl::StatusOr<std::string> ptx = emit::PrintPtx(module);
  REQUIRE(Msg(ptx) == "OK");
  absl::StatusOr<runtime::PtxasResult> r = runtime::RunPtxas(ptxas, *ptx, module.target, {"-v"});
  REQUIRE(Msg(r) == "OK");
  INFO(r->output);
  REQUIRE(r->exit_code == 0);
  const std::regex spills(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  size_t reports = 0;
  for (auto it = std::sregex_iterator(r->output.begin(), r->output.end(), spills); it != std::sregex_iterator(); ++it) {
    CHECK((*it)[1] == "0");
    CHECK((*it)[2] == "0");
    ++reports;
  }
  CHECK(reports == module.kernels.size());
}

}  // namespace ptxforge::testing

#endif  // PTXFORGE_TEST_PTXAS_TESTING_H_
