// Opcodes and their static facts, generated from opcodes.def.
#ifndef PTXFORGE_IR_OPCODE_H_
#define PTXFORGE_IR_OPCODE_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "ir/target.h"
#include "ir/types.h"

namespace ptxforge::ir {

enum class Opcode : uint8_t {
#define OP(id, ...) id,
#include "ir/opcodes.def"
#undef OP
};
inline constexpr int kNumOpcodes = 0
#define OP(id, ...) +1
#include "ir/opcodes.def"
#undef OP
    ;

// How the verifier checks an opcode's operands.
enum class OpRule : uint8_t {
  kMov,          // d:T <- reg/imm:T | special register | variable address (u32/u64)
  kUnary,        // d:T <- a:T
  kBinary,       // d:T <- a:T, b:T   (mul.wide: d is twice as wide)
  kTernary,      // d:T <- a:T, b:T, c:T   (mad.wide: d and c twice as wide)
  kShift,        // d:T <- a:T, b:u32
  kCount,        // d:u32 <- a:T   (popc, clz)
  kBfe,          // d:T <- a:T, pos:u32, len:u32
  kBfi,          // d:T <- a:T, b:T, pos:u32, len:u32
  kSetp,         // p:pred <- a:T, b:T [, c:pred with a bool op]
  kSelp,         // d:T <- a:T, b:T, c:pred
  kCvt,          // d:type <- a:type2
  kCvta,         // d:u64 <- a:u64 | variable
  kLoad,         // d0..d(vec-1):T <- [address]
  kStore,        // [address] <- v0..v(vec-1):T
  kAtom,         // d:T <- [address], b:T [, c:T for cas]
  kRed,          // [address] <- b:T
  kBranch,       // label
  kBarrier,      // barrier id:u32 [, thread count:u32]
  kShfl,         // d:b32 [, p:pred] <- a:b32, b:u32, c:u32, membermask:u32
  kVote,         // d:pred|b32 <- a:pred, membermask:u32
  kNullary,      // d:T
  kNoOperands,   // ret, exit, membar
  kLabelDef,     // label (pseudo)
  kRawPtx,       // raw PTX: declared reads and writes
};

// The counter class the emulator reports per executed instruction.
enum class OpClass : uint8_t {
  kMove, kArith, kSpecialFunc, kLogic, kCompare, kConvert, kLoad, kStore,
  kAtomic, kControl, kSync, kWarp, kRaw,
};
inline constexpr int kNumOpClasses = static_cast<int>(OpClass::kRaw) + 1;
std::string_view OpClassName(OpClass c);

enum OpFlag : uint16_t {
  kPure = 1 << 0,           // no side effects: removable when its results are unused
  kReadsMemory = 1 << 1,
  kWritesMemory = 1 << 2,
  kBranch = 1 << 3,
  kTerminator = 1 << 4,     // ends the thread (ret, exit)
  kBarrierFlag = 1 << 5,    // block-wide synchronisation
  kConvergent = 1 << 6,     // threads must arrive together (barriers, warp ops)
  kPseudo = 1 << 7,         // not an instruction (labels)
  kOpaque = 1 << 8,         // raw PTX: never removed or looked into
};

// A modifier field, in the order the format column prints it.
enum class ModSlot : uint8_t {
  kSem, kScope, kSpace, kTo, kNc, kCache, kVec, kAtom, kShfl, kVote, kCmp,
  kBool, kMode, kRnd, kFtz, kSat, kNoftz, kUni, kLevel, kType, kType2,
};

struct OpInfo {
  std::string_view mnemonic;
  std::string_view format;
  int ndst;
  int nsrc;
  OpRule rule;
  TypeMask types;
  uint16_t flags;
  OpClass op_class;
  TargetRequirement base;  // any type
  TargetRequirement f16;   // f16 / f16x2 forms
  TargetRequirement bf16;  // bf16 / bf16x2 forms
  std::array<ModSlot, 8> slots;  // parsed `format`
  int num_slots;

  bool has(OpFlag f) const { return (flags & f) != 0; }
};

const OpInfo& GetOpInfo(Opcode op);
inline std::string_view Mnemonic(Opcode op) { return GetOpInfo(op).mnemonic; }
// The OP id without its "k": "Add", "BarSync" (for IR dumps and messages).
std::string_view OpcodeName(Opcode op);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_OPCODE_H_
