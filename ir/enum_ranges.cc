// Range checks for the IR's enums (each bounded by its last enumerator).
#include "ir/enum_ranges.h"

namespace ptxforge::ir {

bool IsValid(Target v) { return static_cast<size_t>(v) < AllTargets().size(); }

bool EnumsValid(const Instruction& inst) {
  // Combined with `&` rather than `&&`: a few compares with no branch
  // between them (every instruction takes this path, in the builder and in
  // the verifier).
  const Modifiers& m = inst.mods;
  bool ok = IsValid(inst.op) & IsValid(m.type) & IsValid(m.type2) & IsValid(m.type3) & IsValid(m.type4) &
            IsValid(m.rounding) & IsValid(m.mode) & IsValid(m.cmp) & IsValid(m.bool_op) & IsValid(m.space) &
            IsValid(m.cache) & IsValid(m.atom) & IsValid(m.scope) & IsValid(m.sem) & IsValid(m.shfl) &
            IsValid(m.vote);
  for (const Operand& op : inst.srcs) {
    ok &= !(op.kind == OperandKind::kSpecial && op.id >= static_cast<uint32_t>(kNumSpecialRegs)) & IsValid(op.type);
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
