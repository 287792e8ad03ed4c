// Shared helpers of the foundation tests: status text, hand-built IR, ptxas lookup, registry kernels.
#ifndef PTXFORGE_TEST_TEST_UTIL_H_
#define PTXFORGE_TEST_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "builder/kernel_builder.h"
#include "ir/kernel.h"
#include "ir/strings.h"
#include "kernels/registry.h"
#include "passes/pass.h"
#include "runtime/ptxas.h"

namespace ptxforge::testing {

// "OK" or the status message, so a REQUIRE shows the message on failure.
inline std::string Msg(const absl::Status& s) { return s.ok() ? "OK" : std::string(s.message()); }
template <typename T>
std::string Msg(const absl::StatusOr<T>& s) {
  return Msg(s.status());
}

// A kernel assembled by hand, for IR the typed builder would never produce.
class HandKernel {
 public:
  explicit HandKernel(std::string name = "k", ir::Target target = ir::Target::kSm80) {
    kernel_.name = std::move(name);
    kernel_.target = target;
  }
  ir::Reg Reg(ir::ScalarType type, bool is_mutable = false, std::string hint = "") {
    return kernel_.AddReg(type, is_mutable, hint);
  }
  ir::Label NewLabel(std::string hint = "") {
    return kernel_.AddLabel(hint);
  }
  uint32_t Param(std::string name, ir::ScalarType type) {
    kernel_.params.push_back(ir::Param{std::move(name), type});
    return static_cast<uint32_t>(kernel_.params.size() - 1);
  }
  uint32_t Variable(ir::Variable v) {
    kernel_.variables.push_back(std::move(v));
    return static_cast<uint32_t>(kernel_.variables.size() - 1);
  }
  // Appends an instruction and returns it for further edits (guard, loc...).
  ir::Instruction& Add(ir::Opcode op, ir::Modifiers mods, std::initializer_list<ir::Reg> dsts,
                       std::initializer_list<ir::Operand> srcs) {
    ir::Instruction inst;
    inst.op = op;
    inst.mods = mods;
    inst.dsts.assign(dsts.begin(), dsts.end());
    inst.srcs.assign(srcs.begin(), srcs.end());
    kernel_.body.push_back(std::move(inst));
    return kernel_.body.back();
  }
  ir::Instruction& Bind(ir::Label l) { return Add(ir::Opcode::kLabel, {}, {}, {ir::Operand::FromLabel(l)}); }
  ir::Instruction& Bra(ir::Label l) { return Add(ir::Opcode::kBra, {}, {}, {ir::Operand::FromLabel(l)}); }
  ir::Instruction& Ret() { return Add(ir::Opcode::kRet, {}, {}, {}); }
  // mov.<type> dst, imm: defines `dst` from an immediate.
  ir::Instruction& MovImm(ir::Reg dst, ir::ScalarType type, uint64_t bits) {
    return Add(ir::Opcode::kMov, ir::Modifiers{.type = type}, {dst}, {ir::Operand::Imm(type, bits)});
  }

  ir::Kernel& kernel() { return kernel_; }
  const ir::Kernel& kernel() const { return kernel_; }

 private:
  ir::Kernel kernel_;
};

// The builder's kernel; fails the test with the builder's message if Finish() fails.
inline ir::Kernel Finished(KernelBuilder& b) {
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  return *std::move(k);
}

inline ir::Operand Imm(ir::ScalarType t, uint64_t bits) { return ir::Operand::Imm(t, bits); }

// The ptxas to test with, or nullopt after a visible skip notice (CTest's
// SKIP_REGULAR_EXPRESSION "SKIPPED:" turns the test into "skipped").
inline std::optional<std::string> PtxasOrSkip() {
  std::optional<std::string> ptxas = runtime::FindPtxas();
  if (!ptxas) WARN("SKIPPED: ptxas not found ($PTXFORGE_PTXAS, PATH, /usr/local/cuda/bin/ptxas)");
  return ptxas;
}

// A registry kernel with its default configuration, through the standard pipeline.
inline absl::StatusOr<ir::Kernel> BuildRegistryKernel(const kernels::KernelFamily& family, ir::Target target) {
  absl::StatusOr<kernels::Config> config = family.MakeConfig();
  if (!config.ok()) return config.status();
  absl::StatusOr<ir::Kernel> kernel = family.Build(*config, target);
  if (!kernel.ok()) return kernel;
  if (absl::Status s = passes::Pipeline::Standard().Run(*kernel); !s.ok()) return s;
  return kernel;
}

// The whole file as a string; nullopt when it cannot be read.
inline std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace ptxforge::testing

#endif  // PTXFORGE_TEST_TEST_UTIL_H_
