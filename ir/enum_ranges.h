// Range checks for the IR's enums: a value cast from an out-of-range integer
// (`ir::Rounding(200)`) is refused with a message before any table lookup.
#ifndef PTXFORGE_IR_ENUM_RANGES_H_
#define PTXFORGE_IR_ENUM_RANGES_H_

#include <string>

#include "ir/instruction.h"
#include "ir/target.h"
#include "ir/types.h"

namespace ptxforge::ir {

bool IsValid(ScalarType v);
bool IsValid(Target v);
bool IsValid(Opcode v);
bool IsValid(SpecialReg v);
bool IsValid(Rounding v);
bool IsValid(Mode v);
bool IsValid(CmpOp v);
bool IsValid(BoolOp v);
bool IsValid(StateSpace v);
bool IsValid(CacheOp v);
bool IsValid(AtomOp v);
bool IsValid(Scope v);
bool IsValid(MemSem v);
bool IsValid(ShflMode v);
bool IsValid(VoteMode v);

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
