// Range checks for the IR's enums (each bounded by its last enumerator).
#include "ir/enum_ranges.h"

#include <array>
#include <cstddef>
#include <cstring>

namespace ptxforge::ir {
namespace {

// The largest value IsValid accepts for E (each enum's valid values are 0 up to it).
template <typename E>
constexpr uint8_t LastValid() {
  int last = 0;
  for (int v = 0; v < 256; ++v) {
    if (IsValid(static_cast<E>(v))) last = v;
  }
  return static_cast<uint8_t>(last);
}

// Modifiers as four little-endian words (ChangedModifierBytes' layout): per
// byte, the largest valid value of the enum stored there, and 0x80 in
// `unchecked` for the bytes no range applies to (vec, flags, list indices).
struct ByteLimits {
  std::array<uint64_t, 4> limit{}, unchecked{};
};
constexpr ByteLimits MakeByteLimits() {
  std::array<uint8_t, 32> limit{};
  limit.fill(0xFF);
  limit[offsetof(Modifiers, type)] = LastValid<ScalarType>();
  limit[offsetof(Modifiers, type2)] = LastValid<ScalarType>();
  limit[offsetof(Modifiers, type3)] = LastValid<ScalarType>();
  limit[offsetof(Modifiers, type4)] = LastValid<ScalarType>();
  limit[offsetof(Modifiers, rounding)] = LastValid<Rounding>();
  limit[offsetof(Modifiers, mode)] = LastValid<Mode>();
  limit[offsetof(Modifiers, cmp)] = LastValid<CmpOp>();
  limit[offsetof(Modifiers, bool_op)] = LastValid<BoolOp>();
  limit[offsetof(Modifiers, space)] = LastValid<StateSpace>();
  limit[offsetof(Modifiers, cache)] = LastValid<CacheOp>();
  limit[offsetof(Modifiers, atom)] = LastValid<AtomOp>();
  limit[offsetof(Modifiers, scope)] = LastValid<Scope>();
  limit[offsetof(Modifiers, sem)] = LastValid<MemSem>();
  limit[offsetof(Modifiers, shfl)] = LastValid<ShflMode>();
  limit[offsetof(Modifiers, vote)] = LastValid<VoteMode>();
  ByteLimits out;
  for (int b = 0; b < 32; ++b) {
    if (limit[b] != 0xFF && limit[b] >= 0x80) throw "ModifiersValid needs ranges below 128";
    out.limit[b / 8] |= uint64_t{limit[b]} << (8 * (b % 8));
    if (limit[b] == 0xFF) out.unchecked[b / 8] |= uint64_t{0x80} << (8 * (b % 8));
  }
  return out;
}
constexpr ByteLimits kByteLimits = MakeByteLimits();

// Every enum of `m` in range: for each byte, value <= limit, all bytes at
// once. With H the high bit of each byte, (limit | H) - (value & ~H) keeps
// H exactly when value's low 7 bits are at most the limit (the limits are
// below 128, so no byte borrows from the next); the value's own H must be
// clear. Bytes without a range pass.
bool ModifiersValid(const Modifiers& m) {
  uint64_t w[4] = {0, 0, 0, 0};
  std::memcpy(w, &m, sizeof(Modifiers));
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  uint64_t ok = kHigh;
  for (int k = 0; k < 4; ++k) {
    const uint64_t fits = (kByteLimits.limit[k] | kHigh) - (w[k] & ~kHigh);
    ok &= kByteLimits.unchecked[k] | (~w[k] & fits);
  }
  return ok == kHigh;
}

}  // namespace

bool IsValid(Target v) { return static_cast<size_t>(v) < AllTargets().size(); }

bool EnumsValid(const Instruction& inst) {
  // A few word operations with no branch between them (every instruction
  // takes this path, in the builder and in the verifier); ir_test checks
  // that this agrees with InvalidEnum for every value of every byte.
  // (int & int: both calls always run, and clang does not take & for a slip of &&.)
  bool ok = (static_cast<int>(IsValid(inst.op)) & static_cast<int>(ModifiersValid(inst.mods))) != 0;
  for (const Operand& op : inst.srcs) {
    // & for &&: a branch on each operand's kind was taken or not by the data.
    ok &= !((op.kind == OperandKind::kSpecial) & (op.id >= static_cast<uint32_t>(kNumSpecialRegs))) & IsValid(op.type);
  }
  return ok;
}

std::string InvalidEnum(const Modifiers& m) {
  if (!IsValid(m.type)) return OutOfRange("ScalarType", m.type);
  if (!IsValid(m.type2)) return OutOfRange("ScalarType", m.type2);
  if (!IsValid(m.type3)) return OutOfRange("ScalarType", m.type3);
  if (!IsValid(m.type4)) return OutOfRange("ScalarType", m.type4);
  if (!IsValid(m.rounding)) return OutOfRange("Rounding", m.rounding);
  if (!IsValid(m.mode)) return OutOfRange("Mode", m.mode);
  if (!IsValid(m.cmp)) return OutOfRange("CmpOp", m.cmp);
  if (!IsValid(m.bool_op)) return OutOfRange("BoolOp", m.bool_op);
  if (!IsValid(m.space)) return OutOfRange("StateSpace", m.space);
  if (!IsValid(m.cache)) return OutOfRange("CacheOp", m.cache);
  if (!IsValid(m.atom)) return OutOfRange("AtomOp", m.atom);
  if (!IsValid(m.scope)) return OutOfRange("Scope", m.scope);
  if (!IsValid(m.sem)) return OutOfRange("MemSem", m.sem);
  if (!IsValid(m.shfl)) return OutOfRange("ShflMode", m.shfl);
  if (!IsValid(m.vote)) return OutOfRange("VoteMode", m.vote);
  return "";
}

std::string InvalidEnum(const Instruction& inst) {
  if (!IsValid(inst.op)) return OutOfRange("Opcode", inst.op);
  if (std::string e = InvalidEnum(inst.mods); !e.empty()) return e;
  for (const Operand& op : inst.srcs) {
    if (op.kind == OperandKind::kSpecial && op.id >= static_cast<uint32_t>(kNumSpecialRegs)) {
      return OutOfRange("SpecialReg", op.id);
    }
    if (!IsValid(op.type)) return OutOfRange("ScalarType", op.type);
  }
  return "";
}

}  // namespace ptxforge::ir
