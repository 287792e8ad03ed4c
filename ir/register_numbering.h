// Dense per-class numbering of the registers a kernel uses (%r0, %r1, ...).
#ifndef PTXFORGE_IR_REGISTER_NUMBERING_H_
#define PTXFORGE_IR_REGISTER_NUMBERING_H_

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace ptxforge::ir {

// Registers referenced by the body (as destination, source, address base or
// guard) get consecutive numbers per register class in the order of their
// virtual ids; unreferenced registers get none. Deterministic by construction.
struct RegisterNumbering {
  static constexpr uint32_t kUnused = UINT32_MAX;
  // A register's entry holds its number and its class, (number << 3) | class,
  // so that printing its name reads this word only, not the register table
  // as well. A kernel has far fewer than 2^29 registers (the builder allows
  // 2^24; the register table alone would take 4 GiB).
  static constexpr int kClassBits = 3;
  std::vector<uint32_t> entry;                    // by virtual id; kUnused if unreferenced
  std::array<uint32_t, kNumRegClasses> count{};   // registers per class

  static RegisterNumbering Compute(const Kernel& kernel);
};

static_assert(kNumRegClasses <= (1 << RegisterNumbering::kClassBits), "a class fits an entry's class bits");

// Writes the PTX name of `r` under `numbering` ("%rd7", at most 14 bytes)
// at p and returns its end; "%<bad>" for a register the body never
// references.
inline char* WritePtxRegName(char* p, const RegisterNumbering& numbering, Reg r) {
  if (r.id >= numbering.entry.size() || numbering.entry[r.id] == RegisterNumbering::kUnused) [[unlikely]] {
    std::memcpy(p, "%<bad>", 6);
    return p + 6;
  }
  const uint32_t e = numbering.entry[r.id];
  const types_internal::RegClassSpelling& c =
      types_internal::kRegClasses[e & ((1u << RegisterNumbering::kClassBits) - 1)];
  std::memcpy(p, c.prefix, sizeof(c.prefix));
  p += c.prefix_size;
  const uint32_t number = e >> RegisterNumbering::kClassBits;
  if (number >= 100) return std::to_chars(p, p + 10, number).ptr;
  // One or two digits without a branch on which: both are stored, and
  // under 10 the units digit moves to the front.
  const bool one = number < 10;
  p[0] = static_cast<char>('0' + number / 10);
  p[1] = static_cast<char>('0' + number % 10);
  p[0] = p[one];
  return p + 2 - one;
}

// Appends the PTX name of `r` under `numbering` ("%rd7"); "%<bad>" for a
// register the body never references.
void AppendPtxRegName(std::string& out, const RegisterNumbering& numbering, Reg r);

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
