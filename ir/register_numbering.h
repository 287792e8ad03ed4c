// Dense per-class numbering of the registers a kernel uses (%r0, %r1, ...).
#ifndef PTXFORGE_IR_REGISTER_NUMBERING_H_
#define PTXFORGE_IR_REGISTER_NUMBERING_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace ptxforge::ir {

// Registers referenced by the body (as destination, source, address base or
// guard) get consecutive numbers per register class in the order of their
// virtual ids; unreferenced registers get none. Deterministic by construction.
struct RegisterNumbering {
  static constexpr uint32_t kUnused = UINT32_MAX;
  std::vector<uint32_t> number;                   // by virtual id; kUnused if unreferenced
  std::array<uint32_t, kNumRegClasses> count{};   // registers per class

  static RegisterNumbering Compute(const Kernel& kernel);
};

// Appends the PTX name of `r` under `numbering` ("%rd7"); "%<bad>" for a
// register the body never references.
void AppendPtxRegName(std::string& out, const Kernel& kernel, const RegisterNumbering& numbering, Reg r);

// Calls f(Reg) for every register an instruction reads (sources, address
// bases, the guard, raw-PTX inputs).
template <typename F>
void ForEachUse(const Instruction& inst, F&& f) {
  for (const Operand& op : inst.srcs) {
    if (op.reads_reg()) f(op.reg());
  }
  if (inst.guard.valid()) f(inst.guard);
}

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_REGISTER_NUMBERING_H_
