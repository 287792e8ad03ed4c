// Range checks for the IR's enums: a value cast from an out-of-range integer
// (`ir::Rounding(200)`) is refused with a message before any table lookup.
#ifndef PTXFORGE_IR_ENUM_RANGES_H_
#define PTXFORGE_IR_ENUM_RANGES_H_

#include <string>

#include "ir/instruction.h"
#include "ir/target.h"
#include "ir/types.h"

namespace ptxforge::ir {

namespace enum_ranges_internal {
template <typename E>
constexpr bool UpTo(E v, E last) {
  return static_cast<int>(v) <= static_cast<int>(last);
}
}  // namespace enum_ranges_internal

// Each bounded by its last enumerator (inline: EnumsValid runs them on every
// instruction).
bool IsValid(Target v);
constexpr bool IsValid(ScalarType v) { return static_cast<int>(v) < kNumScalarTypes; }
constexpr bool IsValid(Opcode v) { return static_cast<int>(v) < kNumOpcodes; }
constexpr bool IsValid(SpecialReg v) { return static_cast<int>(v) < kNumSpecialRegs; }
constexpr bool IsValid(Rounding v) { return enum_ranges_internal::UpTo(v, Rounding::kRpi); }
constexpr bool IsValid(Mode v) { return enum_ranges_internal::UpTo(v, Mode::kFull); }
constexpr bool IsValid(CmpOp v) { return enum_ranges_internal::UpTo(v, CmpOp::kNan); }
constexpr bool IsValid(BoolOp v) { return enum_ranges_internal::UpTo(v, BoolOp::kXor); }
constexpr bool IsValid(StateSpace v) { return enum_ranges_internal::UpTo(v, StateSpace::kConst); }
constexpr bool IsValid(CacheOp v) { return enum_ranges_internal::UpTo(v, CacheOp::kWt); }
constexpr bool IsValid(AtomOp v) { return enum_ranges_internal::UpTo(v, AtomOp::kXor); }
constexpr bool IsValid(Scope v) { return enum_ranges_internal::UpTo(v, Scope::kSys); }
constexpr bool IsValid(MemSem v) { return enum_ranges_internal::UpTo(v, MemSem::kAcqRel); }
constexpr bool IsValid(ShflMode v) { return enum_ranges_internal::UpTo(v, ShflMode::kIdx); }
constexpr bool IsValid(VoteMode v) { return enum_ranges_internal::UpTo(v, VoteMode::kBallot); }

// "ir::Rounding value 200 is out of range": the message for an invalid value.
template <typename E>
std::string OutOfRange(std::string_view enum_name, E v) {
  return std::string("ir::") + std::string(enum_name) + " value " + std::to_string(static_cast<int>(v)) +
         " is out of range";
}

// Whether every enum of `inst` is in range: InvalidEnum(inst) is "" exactly
// when this is true. No strings: the check on every instruction's success
// path (builder and verifier) costs a few compares; build the message with
// InvalidEnum only when this fails.
bool EnumsValid(const Instruction& inst);

// The first out-of-range enum of `m` (OutOfRange's message), or "".
std::string InvalidEnum(const Modifiers& m);
// The same for an instruction: its opcode, modifiers, and the special
// registers and immediate types of its operands.
std::string InvalidEnum(const Instruction& inst);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_ENUM_RANGES_H_
