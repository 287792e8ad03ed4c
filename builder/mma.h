// Typed mma fragments: the A, B and C/D operands of mma.sync.aligned as C++
// types that hold the right number of registers of the right type, and say
// which matrix element each register part holds in which lane.
//
//   MmaFragA<MmaShape::kM16N8K16, F16> a;   // four f16x2 registers: eight halves of A
//   MmaFragB<MmaShape::kM16N8K16, F16> bf;  // two f16x2 registers
//   auto c = b.MmaZero<MmaShape::kM16N8K16, F32>();   // four f32 zeros
//   MmaFragC<MmaShape::kM16N8K16, F32> d = b.Mma(a, bf, c);
//
// A lane fills its fragments from memory with the Coord() functions (row and
// column of each element it holds; PTX's "Matrix Fragments for mma" tables)
// and reads D the same way; Coord(lane, ...) is Coord(0, ...) plus
// LaneOffset(lane), so a kernel adds the lane's offset at run time to
// constant per-element offsets. b.MmaPack<Frag>(elements) builds a fragment
// from F16/BF16/F32/S32 element values, b.MmaUnpack(d) returns D's four.
#ifndef PTXFORGE_BUILDER_MMA_H_
#define PTXFORGE_BUILDER_MMA_H_

#include <array>
#include <type_traits>

#include "builder/value.h"

namespace ptxforge {

// Input types that only an instruction names (no Value<TF32> exists: their
// data lives in B32 registers). Tags for mma's template arguments.
struct TF32 : TypeTag<ir::ScalarType::kTF32, float> {};
struct E4M3 : TypeTag<ir::ScalarType::kE4M3, uint8_t> {};
struct E5M2 : TypeTag<ir::ScalarType::kE5M2, uint8_t> {};

// The mma shapes: M x N x K.
// kM16N8K4 is tf32 only.
enum class MmaShape { kM16N8K8, kM16N8K16, kM16N8K32, kM16N8K4 };
struct MmaDims {
  int m, n, k;
};
constexpr MmaDims DimsOf(MmaShape s) {
  switch (s) {
    case MmaShape::kM16N8K4: return {16, 8, 4};
    case MmaShape::kM16N8K8: return {16, 8, 8};
    case MmaShape::kM16N8K16: return {16, 8, 16};
    case MmaShape::kM16N8K32: return {16, 8, 32};
  }
  return {};
}
// "m16n8k16": the shape's name in PTX (and in the opcode table's {shape:...} list).
constexpr std::string_view MmaShapeName(MmaShape s) {
  switch (s) {
    case MmaShape::kM16N8K4: return "m16n8k4";
    case MmaShape::kM16N8K8: return "m16n8k8";
    case MmaShape::kM16N8K16: return "m16n8k16";
    case MmaShape::kM16N8K32: return "m16n8k32";
  }
  return "";
}

// The register tag that holds fragment elements of T: halves in pairs
// (F16x2, BF16x2), 8-bit types and tf32 in B32, F32 and S32 as they are.
template <typename T>
using MmaRegTag = std::conditional_t<
    std::is_same_v<T, F16>, F16x2,
    std::conditional_t<std::is_same_v<T, BF16>, BF16x2,
                       std::conditional_t<std::is_same_v<T, F32> || std::is_same_v<T, S32>, T, B32>>>;

// Where a fragment element sits in its matrix.
struct MmaCoord {
  int row, col;
  friend bool operator==(MmaCoord, MmaCoord) = default;
};

// The lane's part of A (M x K, row-major "row" layout): kRegs registers of
// kPerReg elements each (element j in bits [j*bits, (j+1)*bits)).
template <MmaShape S, typename T>
struct MmaFragA {
  using Elem = T;
  using Reg = MmaRegTag<T>;
  static constexpr int kPerReg = 32 / ir::TypeBits(T::kType);
  static constexpr int kRegs = DimsOf(S).m * DimsOf(S).k / 32 / kPerReg;
  std::array<Value<Reg>, kRegs> regs;
  // Element j of register r of `lane`: row groupID (+8 for odd r), column
  // threadID_in_group * kPerReg + j (+K/2 for r >= 2).
  static constexpr MmaCoord Coord(int lane, int r, int j) {
    return {(lane >> 2) + 8 * (r & 1), (lane & 3) * kPerReg + j + DimsOf(S).k / 2 * (r >> 1)};
  }
  // Coord(lane, r, j) - Coord(0, r, j): (groupID, threadID_in_group * kPerReg).
  static constexpr MmaCoord LaneOffset(int lane) { return {lane >> 2, (lane & 3) * kPerReg}; }
};

// The lane's part of B (K x N, "col" layout: a column's K elements are
// consecutive in the registers).
template <MmaShape S, typename T>
struct MmaFragB {
  using Elem = T;
  using Reg = MmaRegTag<T>;
  static constexpr int kPerReg = 32 / ir::TypeBits(T::kType);
  static constexpr int kRegs = DimsOf(S).k * DimsOf(S).n / 32 / kPerReg;
  std::array<Value<Reg>, kRegs> regs;
  // Element j of register r: row threadID_in_group * kPerReg + j + K/2 * r, column groupID.
  static constexpr MmaCoord Coord(int lane, int r, int j) {
    return {(lane & 3) * kPerReg + j + DimsOf(S).k / 2 * r, lane >> 2};
  }
  // Coord(lane, r, j) - Coord(0, r, j): (threadID_in_group * kPerReg, groupID).
  static constexpr MmaCoord LaneOffset(int lane) { return {(lane & 3) * kPerReg, lane >> 2}; }
};

// The lane's part of the accumulator C, and of the result D (M x N): four
// elements, in four F32/S32 registers or two F16x2.
template <MmaShape S, typename T>
struct MmaFragC {
  using Elem = T;
  using Reg = MmaRegTag<T>;
  static constexpr int kPerReg = 32 / ir::TypeBits(T::kType);
  static constexpr int kRegs = DimsOf(S).m * DimsOf(S).n / 32 / kPerReg;
  std::array<Value<Reg>, kRegs> regs;
  // Element i (0..3; register i / kPerReg, part i % kPerReg): row groupID
  // (+8 for i >= 2), column threadID_in_group * 2 + (i & 1).
  static constexpr MmaCoord Coord(int lane, int i) { return {(lane >> 2) + 8 * (i >> 1), (lane & 3) * 2 + (i & 1)}; }
  // Coord(lane, i) - Coord(0, i): (groupID, threadID_in_group * 2).
  static constexpr MmaCoord LaneOffset(int lane) { return {lane >> 2, (lane & 3) * 2}; }
};

// The opcode of the mma form D(Acc) = A(In) * B(InB) + C(Acc) on shape S, or
// kRet when PTX has none (the builder refuses it at compile time).
template <MmaShape S, typename In, typename InB, typename Acc>
constexpr ir::Opcode MmaOpcode() {
  constexpr bool k4 = S == MmaShape::kM16N8K4, k8 = S == MmaShape::kM16N8K8, k16 = S == MmaShape::kM16N8K16;
  constexpr bool k32 = S == MmaShape::kM16N8K32;
  constexpr bool int8 = std::is_same_v<In, S8> || std::is_same_v<In, U8>;
  constexpr bool int8b = std::is_same_v<InB, S8> || std::is_same_v<InB, U8>;
  constexpr bool fp8 = std::is_same_v<In, E4M3> || std::is_same_v<In, E5M2>;
  constexpr bool fp8b = std::is_same_v<InB, E4M3> || std::is_same_v<InB, E5M2>;
  if constexpr (std::is_same_v<In, F16> && std::is_same_v<InB, F16> && (k8 || k16)) {
    if constexpr (std::is_same_v<Acc, F16>) return ir::Opcode::kMmaF16;
    if constexpr (std::is_same_v<Acc, F32>) return ir::Opcode::kMmaF16F32;
  }
  if constexpr (std::is_same_v<In, BF16> && std::is_same_v<InB, BF16> && std::is_same_v<Acc, F32> && (k8 || k16)) {
    return ir::Opcode::kMmaBF16;
  }
  if constexpr (std::is_same_v<In, TF32> && std::is_same_v<InB, TF32> && std::is_same_v<Acc, F32> && (k4 || k8)) {
    return ir::Opcode::kMmaTF32;
  }
  if constexpr (int8 && int8b && std::is_same_v<Acc, S32> && (k16 || k32)) return ir::Opcode::kMmaI8;
  if constexpr (fp8 && fp8b && std::is_same_v<Acc, F32> && (k16 || k32)) return ir::Opcode::kMmaF8;
  return ir::Opcode::kRet;
}

}  // namespace ptxforge

#endif  // PTXFORGE_BUILDER_MMA_H_
