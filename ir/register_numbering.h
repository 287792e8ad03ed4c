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

namespace numbering_internal {
// RegClassPrefix by class, padded to 4 bytes so that it is copied whole
// (printer_test compares it with RegClassPrefix).
struct Prefix {
  char text[4];
  uint8_t size;
};
inline constexpr Prefix kPrefixes[8] = {{"%p", 2}, {"%rs", 3}, {"%r", 2}, {"%rd", 3},
                                        {"%f", 2}, {"%fd", 3}, {"", 0},   {"", 0}};
// The type a class's registers are declared with (RegClassDeclType without its dot).
inline constexpr ScalarType kDeclTypes[8] = {ScalarType::kPred, ScalarType::kB16, ScalarType::kB32, ScalarType::kB64,
                                             ScalarType::kF32,  ScalarType::kF64, ScalarType::kNone, ScalarType::kNone};
static_assert(static_cast<int>(RegClass::kPred) == 0 && static_cast<int>(RegClass::kB16) == 1 &&
                  static_cast<int>(RegClass::kB32) == 2 && static_cast<int>(RegClass::kB64) == 3 &&
                  static_cast<int>(RegClass::kF32) == 4 && static_cast<int>(RegClass::kF64) == 5 &&
                  kNumRegClasses <= (1 << RegisterNumbering::kClassBits),
              "kPrefixes and kDeclTypes are indexed by RegClass");
}  // namespace numbering_internal

// Writes the PTX name of `r` under `numbering` ("%rd7", at most 14 bytes)
// at p and returns its end; "%<bad>" for a register the body never
// references.
inline char* WritePtxRegName(char* p, const RegisterNumbering& numbering, Reg r) {
  if (r.id >= numbering.entry.size() || numbering.entry[r.id] == RegisterNumbering::kUnused) [[unlikely]] {
    std::memcpy(p, "%<bad>", 6);
    return p + 6;
  }
  const uint32_t e = numbering.entry[r.id];
  const numbering_internal::Prefix& prefix =
      numbering_internal::kPrefixes[e & ((1u << RegisterNumbering::kClassBits) - 1)];
  std::memcpy(p, prefix.text, sizeof(prefix.text));
  p += prefix.size;
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
inline void AppendPtxRegName(std::string& out, const Kernel& /*kernel*/, const RegisterNumbering& numbering, Reg r) {
  AppendPtxRegName(out, numbering, r);
}

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
