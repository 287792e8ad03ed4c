// Scalar types of the IR: PTX spelling, size, kind and register class.
#ifndef PTXFORGE_IR_TYPES_H_
#define PTXFORGE_IR_TYPES_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxforge::ir {

// Every type a register, immediate or instruction can have.
enum class ScalarType : uint8_t {
  kNone,  // "no type": an instruction without a type suffix
  kPred,
  kB8, kB16, kB32, kB64,
  kU8, kU16, kU32, kU64,
  kS8, kS16, kS32, kS64,
  kF16, kF16x2, kBF16, kBF16x2,
  kF32, kF64,
  // Instruction-only types: an instruction may name them (mma's .tf32/.e4m3
  // inputs, cvt's .e4m3x2 result), but no register, immediate, param or
  // variable has them: their data lives in b32/b16 registers.
  kTF32, kE4M3, kE5M2, kE4M3x2, kE5M2x2,
};
inline constexpr int kNumScalarTypes = static_cast<int>(ScalarType::kE5M2x2) + 1;

// Register classes: how the printer declares registers (`.reg .b32 %r<N>;`).
enum class RegClass : uint8_t { kPred, kB16, kB32, kB64, kF32, kF64 };
inline constexpr int kNumRegClasses = 6;

enum class TypeKind : uint8_t { kNone, kPred, kBits, kUnsigned, kSigned, kFloat };

namespace types_internal {
// One row per ScalarType: its spelling, kind and register class. In the
// header so that TypeName, KindOf and RegClassOf inline (the verifier and the
// passes ask them for every operand) and are usable in constant expressions.
struct TypeRow {
  std::string_view name;
  TypeKind kind;
  RegClass reg_class;
  bool instruction_only = false;  // no register, immediate, param or variable has it
};
// 32 rows, a power of two, so that Row() masks the index: what is read is
// inside the table for any byte, and g++ 12's -Warray-bounds stops seeing a
// read past the end on paths where a switch's default leaves the type
// unbounded (ir::sem::ConvertInt). Rows past kE5M2x2 are never named.
inline constexpr int kTypeRows = 32;
static_assert(kNumScalarTypes <= kTypeRows);
inline constexpr TypeRow kTypes[kTypeRows] = {
    {"none", TypeKind::kNone, RegClass::kB32},
    {"pred", TypeKind::kPred, RegClass::kPred},
    {"b8", TypeKind::kBits, RegClass::kB16},
    {"b16", TypeKind::kBits, RegClass::kB16},
    {"b32", TypeKind::kBits, RegClass::kB32},
    {"b64", TypeKind::kBits, RegClass::kB64},
    {"u8", TypeKind::kUnsigned, RegClass::kB16},
    {"u16", TypeKind::kUnsigned, RegClass::kB16},
    {"u32", TypeKind::kUnsigned, RegClass::kB32},
    {"u64", TypeKind::kUnsigned, RegClass::kB64},
    {"s8", TypeKind::kSigned, RegClass::kB16},
    {"s16", TypeKind::kSigned, RegClass::kB16},
    {"s32", TypeKind::kSigned, RegClass::kB32},
    {"s64", TypeKind::kSigned, RegClass::kB64},
    {"f16", TypeKind::kFloat, RegClass::kB16},
    {"f16x2", TypeKind::kFloat, RegClass::kB32},
    {"bf16", TypeKind::kFloat, RegClass::kB16},
    {"bf16x2", TypeKind::kFloat, RegClass::kB32},
    {"f32", TypeKind::kFloat, RegClass::kF32},
    {"f64", TypeKind::kFloat, RegClass::kF64},
    {"tf32", TypeKind::kFloat, RegClass::kB32, true},
    {"e4m3", TypeKind::kFloat, RegClass::kB16, true},
    {"e5m2", TypeKind::kFloat, RegClass::kB16, true},
    {"e4m3x2", TypeKind::kFloat, RegClass::kB16, true},
    {"e5m2x2", TypeKind::kFloat, RegClass::kB16, true},
};
// A row for every ScalarType and none beyond (a new type needs its row).
static_assert(kTypes[kNumScalarTypes - 1].name == "e5m2x2" && kTypes[kNumScalarTypes].name.empty());
constexpr const TypeRow& Row(ScalarType t) { return kTypes[static_cast<unsigned>(t) & (kTypeRows - 1)]; }
}  // namespace types_internal

// "f32", "u64", "pred"... (no leading dot).
constexpr std::string_view TypeName(ScalarType t) { return types_internal::Row(t).name; }
// Parses TypeName's spelling; nullopt for anything else.
std::optional<ScalarType> ParseType(std::string_view name);
// Size in bytes (pred: 0 since it has no memory form; f16x2: 4).
constexpr int TypeBits(ScalarType t) {
  switch (t) {
    case ScalarType::kNone: return 0;
    case ScalarType::kPred: return 1;
    case ScalarType::kB8: case ScalarType::kU8: case ScalarType::kS8:
    case ScalarType::kE4M3: case ScalarType::kE5M2: return 8;
    case ScalarType::kB16: case ScalarType::kU16: case ScalarType::kS16:
    case ScalarType::kF16: case ScalarType::kBF16: case ScalarType::kE4M3x2: case ScalarType::kE5M2x2: return 16;
    case ScalarType::kB64: case ScalarType::kU64: case ScalarType::kS64: case ScalarType::kF64: return 64;
    default: return 32;
  }
}
constexpr int TypeSize(ScalarType t) { return t == ScalarType::kPred ? 0 : TypeBits(t) / 8; }
constexpr TypeKind KindOf(ScalarType t) { return types_internal::Row(t).kind; }
constexpr RegClass RegClassOf(ScalarType t) { return types_internal::Row(t).reg_class; }
namespace types_internal {
// How a register class is spelled, by RegClass: its PTX name prefix
// (padded to 4 bytes, so that the printer copies it whole), its declaration
// type, its name. The two spare rows (up to 8 classes, a register number's
// three class bits) are b32's, as a class out of range has always read.
struct RegClassSpelling {
  char prefix[4];
  uint8_t prefix_size;
  std::string_view decl;
  std::string_view name;
};
inline constexpr RegClassSpelling kRegClasses[8] = {
    {"%p", 2, ".pred", "pred"}, {"%rs", 3, ".b16", "b16"}, {"%r", 2, ".b32", "b32"}, {"%rd", 3, ".b64", "b64"},
    {"%f", 2, ".f32", "f32"},   {"%fd", 3, ".f64", "f64"}, {"%r", 2, ".b32", "b32"}, {"%r", 2, ".b32", "b32"}};
static_assert(static_cast<int>(RegClass::kPred) == 0 && static_cast<int>(RegClass::kB16) == 1 &&
                  static_cast<int>(RegClass::kB32) == 2 && static_cast<int>(RegClass::kB64) == 3 &&
                  static_cast<int>(RegClass::kF32) == 4 && static_cast<int>(RegClass::kF64) == 5 && kNumRegClasses <= 8,
              "kRegClasses is indexed by RegClass");
constexpr const RegClassSpelling& Spelling(RegClass c) {
  const unsigned i = static_cast<unsigned>(c);
  return kRegClasses[i < 8 ? i : static_cast<unsigned>(RegClass::kB32)];
}
}  // namespace types_internal

// ".pred", ".b16"... the declaration type of a register class.
constexpr std::string_view RegClassDeclType(RegClass c) { return types_internal::Spelling(c).decl; }
// "%p", "%rs", "%r", "%rd", "%f", "%fd".
constexpr std::string_view RegClassPrefix(RegClass c) {
  const types_internal::RegClassSpelling& s = types_internal::Spelling(c);
  return std::string_view(s.prefix, s.prefix_size);
}
constexpr std::string_view RegClassName(RegClass c) { return types_internal::Spelling(c).name; }

constexpr bool IsInteger(ScalarType t) {
  TypeKind k = KindOf(t);
  return k == TypeKind::kUnsigned || k == TypeKind::kSigned;
}
inline bool IsSigned(ScalarType t) { return KindOf(t) == TypeKind::kSigned; }
inline bool IsUnsigned(ScalarType t) { return KindOf(t) == TypeKind::kUnsigned; }
inline bool IsFloat(ScalarType t) { return KindOf(t) == TypeKind::kFloat; }
constexpr bool IsBits(ScalarType t) { return KindOf(t) == TypeKind::kBits; }
// f16, f16x2, bf16, bf16x2 (inline: the verifier asks for every operand).
constexpr bool IsF16Family(ScalarType t) { return t == ScalarType::kF16 || t == ScalarType::kF16x2; }
constexpr bool IsBF16Family(ScalarType t) { return t == ScalarType::kBF16 || t == ScalarType::kBF16x2; }
constexpr bool IsHalfFamily(ScalarType t) { return IsF16Family(t) || IsBF16Family(t); }
// IsHalfFamily as one shift of a mask, where gcc makes four compares
// branches (for code a first codegen runs once per operand or instruction);
// false for a type out of range.
constexpr bool IsHalfFamilyNoBranch(ScalarType t) {
  static_assert(kNumScalarTypes <= 64, "a type set is a 64-bit mask");
  constexpr uint64_t kMask = [] {
    uint64_t mask = 0;
    for (int u = 0; u < kNumScalarTypes; ++u) mask |= uint64_t{IsHalfFamily(static_cast<ScalarType>(u))} << u;
    return mask;
  }();
  const unsigned u = static_cast<unsigned>(t);
  return (u < 64) & ((kMask >> (u & 63)) & 1);
}
// tf32, e4m3, e5m2, e4m3x2, e5m2x2: types only an instruction may name.
constexpr bool IsInstructionOnlyType(ScalarType t) {
  return static_cast<int>(t) < kNumScalarTypes && types_internal::Row(t).instruction_only;
}

// The bit type of the same size (f32 -> b32, u8 -> b8); pred stays pred.
ScalarType BitsTypeOfSize(int bits);
// Same kind, twice the width (u32 -> u64, s16 -> s32); kNone when there is none.
ScalarType WidenedType(ScalarType t);

// PTX operand type-checking: may a register of type `reg` be used where the
// instruction expects `expected`?  Same type; or same size and one side is a
// bit type; or both integers of the same size. (constexpr: the opcode
// table's TypesCompatibleBits is built from it.)
constexpr bool TypesCompatible(ScalarType expected, ScalarType reg) {
  if (expected == reg) return true;
  if (expected == ScalarType::kNone || reg == ScalarType::kNone) return false;
  if (expected == ScalarType::kPred || reg == ScalarType::kPred) return false;
  if (TypeBits(expected) != TypeBits(reg)) return false;
  if (IsBits(expected) || IsBits(reg)) return true;
  return IsInteger(expected) && IsInteger(reg);
}

namespace types_internal {
// Bit r of kCompatibleTypes[e]: TypesCompatible(e, r), for the valid types
// (0 beyond them), built at compile time.
constexpr std::array<uint32_t, 32> MakeCompatibleTypes() {
  static_assert(kNumScalarTypes <= 32, "a row of kCompatibleTypes is a 32-bit mask");
  std::array<uint32_t, 32> table{};
  for (int e = 0; e < kNumScalarTypes; ++e) {
    for (int r = 0; r < kNumScalarTypes; ++r) {
      if (TypesCompatible(static_cast<ScalarType>(e), static_cast<ScalarType>(r))) table[e] |= uint32_t{1} << r;
    }
  }
  return table;
}
inline constexpr std::array<uint32_t, 32> kCompatibleTypes = MakeCompatibleTypes();
}  // namespace types_internal

// TypesCompatible(expected, reg) for valid types, as a load and a bit test
// (no branch): the verifier's operand checks ask for every operand.
inline bool TypesCompatibleBits(ScalarType expected, ScalarType reg) {
  return (types_internal::kCompatibleTypes[static_cast<unsigned>(expected) & 31] >> (static_cast<unsigned>(reg) & 31)) &
         1;
}

// Bitmask helpers for type sets in the opcode table.
using TypeMask = uint32_t;
constexpr TypeMask MaskOf(ScalarType t) { return TypeMask{1} << static_cast<int>(t); }
inline bool InMask(TypeMask m, ScalarType t) { return (m & MaskOf(t)) != 0; }

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_TYPES_H_
