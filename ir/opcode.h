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

// The one rule that hangs off a row besides its signature (kGeneric: none).
enum class OpRule : uint8_t {
  kGeneric,    // the signature says it all
  kBitField,   // bfe/bfi: immediate positions and lengths 0..255
  kMov,        // the source may be a special register, a variable address, a half-float immediate
  kSetp,       // a comparison for the type; a third source with a bool op
  kCvt,        // the pair of types decides the rounding modifier
  kCvtPack,    // cvt.rn{.relu}{.satfinite}.f16x2/.bf16x2.f32: two f32 sources, .rn only
  kCvta,       // a state space; a variable or a generic address
  kLoad,       // state space, cache operator, .nc; one destination per vector element
  kStore,      // state space, cache operator; one source per vector element
  kAtom,       // the operation for the type; .cas takes a third source
  kRed,        // the operation for the type
  kBranch,     // a label of this kernel
  kBarrier,    // barrier id 0..15, thread count a multiple of 32
  kShfl,       // a mode; an optional predicate destination
  kVote,       // a mode; ballot is b32
  kMembar,     // a level
  kCpAsync,    // .ca or .cg; cp-size 4, 8 or 16 (.cg: 16); an immediate src-size at most cp-size
  kFence,      // a scope
  kMatrix,     // ldmatrix/stmatrix: .x1/.x2/.x4, a shared-memory address
  kRedux,      // the operation for the type (add/min/max: u32, s32; and/or/xor: b32)
  kLabelDef,   // label (pseudo)
  kRawPtx,     // raw PTX: declared reads and writes
  kLoopPragma, // a loop pragma (pseudo): unguarded, right after a loop header's label
};

// How an operand's type follows from the instruction's types.
enum class TypeRule : uint8_t {
  kType,      // T: the instruction type
  kType2,     // T2: the second type
  kType3,     // T3: the third type (mma: B)
  kType4,     // T4: the fourth type (mma: C)
  kWide,      // W: T, widened by .wide
  kHalf,      // H: the bit type of half T's width (mov packing)
  kDpAcc,     // A: s32 if T or T2 is signed, else u32 (dp4a/dp2a)
  kFixed,     // a fixed type
  kAddress,   // @: a memory address
  kLabel,     // L: a label
};
enum class OperandClass : uint8_t { kValue, kReg, kImm };  // register or immediate / register / immediate

// A register group that is an mma fragment: the lane's part of matrix A
// (M x K), B (K x N) or C/D (M x N) of the row's {shape}.
enum class Fragment : uint8_t { kNone, kA, kB, kC };

// One operand (or register group) of a signature.
struct OperandSpec {
  TypeRule rule = TypeRule::kType;
  ScalarType fixed = ScalarType::kNone;
  OperandClass cls = OperandClass::kValue;
  uint8_t group = 1;        // registers in the group; 0: the vector width (or a fragment)
  Fragment fragment = Fragment::kNone;  // {a} {b} {c}: the group is that fragment
  bool byte_imm = false;    // an immediate must be 0..255
  bool optional = false;    // may be left out (trailing)
  // Addresses: the ir::StateSpace (its value) the address is in, from
  // "@shared", "@global"...; 0 ("@"): the instruction's {space} modifier.
  // An instruction may have several addresses (cp.async: shared <- global).
  uint8_t space = 0;
  bool braces = false;      // printed in braces even as one register ({x})
};

// The parsed signature column: "DESTINATIONS=SOURCES".
struct Signature {
  std::array<OperandSpec, 4> dsts{};
  std::array<OperandSpec, 8> srcs{};
  uint8_t ndst = 0, nsrc = 0;
  char dst_sep = ',';  // '|' for shfl's value|predicate
  bool any = false;    // "*": raw PTX
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
  kPseudo = 1 << 7,         // not an instruction (labels, pragmas): nothing runs
  kOpaque = 1 << 8,         // raw PTX: never removed or looked into
  kWarpMatrix = 1 << 9,     // a warp-wide matrix operation (mma): the emulator runs it once all 32 lanes arrive
  kCommutative = 1 << 10,   // its two sources may swap on integers, bits and predicates (CSE's keys)
};

// A modifier field, in the order the format column prints it.
enum class ModSlot : uint8_t {
  kSem, kScope, kSpace, kTo, kNc, kCache, kVec, kAtom, kShfl, kVote, kCmp,
  kBool, kMode, kRnd, kFtz, kSat, kNoftz, kUni, kLevel, kType, kType2,
  kVariant,  // {variant:a|b|c}: one of the values listed in the format (prmt modes)
  kType3, kType4,
  kShape,    // {shape:m16n8k8|m16n8k16}: mma shapes, listed in the format
  kLayout,   // {layout:row.col}: mma operand layouts, listed in the format
  kLiteral,  // text printed as it is (".shared.global" in "{cache}.shared.global"): OpInfo::slot_text
  kNum,      // {num}: ldmatrix/stmatrix's .x1/.x2/.x4 (Modifiers::vec)
};
static_assert(static_cast<int>(ModSlot::kNum) < 32, "OpInfo::slot_mask has a bit per slot");

// An mma shape's dimensions, parsed from its name ("m16n8k16").
struct MatrixShape {
  int m = 0, n = 0, k = 0;
};
// {16, 8, 16} for "m16n8k16"; all zero for anything else.
MatrixShape ParseMatrixShape(std::string_view name);

struct OpInfo {
  std::string_view mnemonic;
  std::string_view format;
  std::string_view signature_text;
  OpRule rule;
  TypeMask types;
  uint16_t flags;
  OpClass op_class;
  TargetRequirement base;  // any type
  TargetRequirement f16;   // f16 / f16x2 forms
  TargetRequirement bf16;  // bf16 / bf16x2 forms
  std::string_view variants;  // "f4e|b4e|...": the values of the {variant:...} modifier
  bool variant_required;      // "{variant:!lo|hi}": one must be given
  std::array<ModSlot, 12> slots;  // parsed `format`
  int num_slots;
  std::array<std::string_view, 12> slot_text;  // for kLiteral slots: the text

  Signature sig;                 // parsed `signature_text`
  // {shape:...} and {layout:...} lists, as `variants` ('!': one must be given).
  // A value may end in "@SM" (m16n8k16@80): it needs that target or newer.
  std::string_view shapes, layouts;
  bool shape_required = false, layout_required = false;
  // Types a type slot allows when the format lists them ({type2:f16|bf16});
  // 0: the `types` column (type, and type2 outside cvt), or any (cvt's type2).
  // Indexed type, type2, type3, type4.
  std::array<TypeMask, 4> type_lists{};

  // Facts derived from the columns above when the table is built, so that
  // checks run on every instruction do not re-derive them (ir_test compares
  // each with its slow derivation, for every row):
  // bit (1 << ModSlot) for each slot of `slots`;
  uint32_t slot_mask = 0;
  // NumEnumValues of kVariant, kShape and kLayout.
  std::array<uint8_t, 3> enum_counts{};
  // Bit b for each byte b of Modifiers that a slot prints (ModifierByte in
  // instruction.h): a modifier set anywhere else does not apply.
  uint32_t printed_bytes = 0;
  // Whether every operand group of the signature has a fixed size (no {v},
  // {x}, fragment or optional operand); then it takes exactly
  // fixed_dsts destinations and fixed_srcs sources.
  bool fixed_operands = false;
  uint8_t fixed_dsts = 0, fixed_srcs = 0;
  // Whether a source of the signature is an address ("@").
  bool has_address = false;

  bool has(OpFlag f) const { return (flags & f) != 0; }
  // Whether the format has `slot` (one of `slots`).
  bool has_slot(ModSlot slot) const { return (slot_mask >> static_cast<int>(slot)) & 1; }
};
// The bit of `slot` in OpInfo::slot_mask.
constexpr uint32_t SlotBit(ModSlot slot) { return uint32_t{1} << static_cast<int>(slot); }

namespace opcode_internal {
extern const std::array<OpInfo, kNumOpcodes> kOpInfos;  // opcodes.def, parsed at compile time (opcode.cc)
}  // namespace opcode_internal
inline const OpInfo& GetOpInfo(Opcode op) { return opcode_internal::kOpInfos[static_cast<int>(op)]; }
// The name of variant `v` (1-based; 0 is none) of an opcode: "f4e"; "" if out of range.
std::string_view VariantName(const OpInfo& info, int v);
int NumVariants(const OpInfo& info);
// The same for any enumerated slot (kVariant, kShape, kLayout): the name of
// value `v` (1-based; "" if out of range, without its "@SM" suffix), how many
// the row lists, whether one is required, the kind's word for messages
// ("mode", "shape", "layout"), and the target value `v` needs ({} if none).
std::string_view EnumValueName(const OpInfo& info, ModSlot slot, int v);
int NumEnumValues(const OpInfo& info, ModSlot slot);
bool EnumRequired(const OpInfo& info, ModSlot slot);
std::string_view EnumKindName(ModSlot slot);
TargetRequirement EnumValueRequirement(const OpInfo& info, ModSlot slot, int v);
// The allowed types of type slot `n` (0..3: type, type2, type3, type4).
inline TypeMask TypeSlotMask(const OpInfo& info, int n) {
  if (info.type_lists[n] != 0) return info.type_lists[n];
  return n <= 1 ? info.types : 0;
}
// The opcode table's minimum-target columns: sm (or SM_A(sm) for an "a"
// target of exactly that SM, e.g. SM_A(90) for sm_90a) and ptx.
#define SM_A(sm) (1000 + (sm))
constexpr TargetRequirement TableRequirement(int sm, int ptx) {
  return sm >= 1000 ? TargetRequirement{sm - 1000, true, PtxVersion{ptx}} : TargetRequirement{sm, false, PtxVersion{ptx}};
}
inline std::string_view Mnemonic(Opcode op) { return GetOpInfo(op).mnemonic; }
// The OP id without its "k": "Add", "BarSync" (for IR dumps and messages).
std::string_view OpcodeName(Opcode op);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_OPCODE_H_
