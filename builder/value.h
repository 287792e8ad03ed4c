// Typed value handles: Value<F32> and Value<U64> are different C++ types, so
// mixing them in one builder call does not compile.
#ifndef PTXFORGE_BUILDER_VALUE_H_
#define PTXFORGE_BUILDER_VALUE_H_

#include <bit>
#include <cstdint>
#include <type_traits>

#include "ir/float_bits.h"
#include "ir/instruction.h"
#include "ir/types.h"

namespace ptxforge {

// Type tags. `kType` is the IR type; `CType` is the C++ type of an immediate.
template <ir::ScalarType T, typename C>
struct TypeTag {
  static constexpr ir::ScalarType kType = T;
  using CType = C;
};
struct Pred : TypeTag<ir::ScalarType::kPred, bool> {};
struct B8 : TypeTag<ir::ScalarType::kB8, uint8_t> {};
struct B16 : TypeTag<ir::ScalarType::kB16, uint16_t> {};
struct B32 : TypeTag<ir::ScalarType::kB32, uint32_t> {};
struct B64 : TypeTag<ir::ScalarType::kB64, uint64_t> {};
struct U8 : TypeTag<ir::ScalarType::kU8, uint8_t> {};
struct U16 : TypeTag<ir::ScalarType::kU16, uint16_t> {};
struct U32 : TypeTag<ir::ScalarType::kU32, uint32_t> {};
struct U64 : TypeTag<ir::ScalarType::kU64, uint64_t> {};
struct S8 : TypeTag<ir::ScalarType::kS8, int8_t> {};
struct S16 : TypeTag<ir::ScalarType::kS16, int16_t> {};
struct S32 : TypeTag<ir::ScalarType::kS32, int32_t> {};
struct S64 : TypeTag<ir::ScalarType::kS64, int64_t> {};
struct F16 : TypeTag<ir::ScalarType::kF16, float> {};     // immediates rounded to f16
struct BF16 : TypeTag<ir::ScalarType::kBF16, float> {};   // immediates rounded to bf16
struct F16x2 : TypeTag<ir::ScalarType::kF16x2, uint32_t> {};   // immediates are raw bits
struct BF16x2 : TypeTag<ir::ScalarType::kBF16x2, uint32_t> {}; // immediates are raw bits
struct F32 : TypeTag<ir::ScalarType::kF32, float> {};
struct F64 : TypeTag<ir::ScalarType::kF64, double> {};

template <typename T>
concept ScalarTag = requires {
  { T::kType } -> std::convertible_to<ir::ScalarType>;
  typename T::CType;
};

// The tag of the type twice as wide (U32 -> U64), for mul.wide / mad.wide.
template <typename T> struct Widen;
template <> struct Widen<U16> { using type = U32; };
template <> struct Widen<U32> { using type = U64; };
template <> struct Widen<S16> { using type = S32; };
template <> struct Widen<S32> { using type = S64; };
template <typename T> using WidenT = typename Widen<T>::type;

// A register holding a value of type T. Values are defined once.
template <typename T>
struct Value {
  ir::Reg reg;
  Value() = default;
  explicit Value(ir::Reg r) : reg(r) {}
};

// A mutable register (loop-carried values); reads as a Value<T>.
template <typename T>
struct Var : Value<T> {
  Var() = default;
  explicit Var(ir::Reg r) : Value<T>(r) {}
};

// The bits of an immediate of tag T.
template <typename T>
uint64_t ImmBits(typename T::CType c) {
  using C = typename T::CType;
  if constexpr (std::is_same_v<T, F16>) {
    return ir::F32ToF16Bits(c);
  } else if constexpr (std::is_same_v<T, BF16>) {
    return ir::F32ToBF16Bits(c);
  } else if constexpr (std::is_same_v<C, float>) {
    return std::bit_cast<uint32_t>(c);
  } else if constexpr (std::is_same_v<C, double>) {
    return std::bit_cast<uint64_t>(c);
  } else if constexpr (std::is_same_v<C, bool>) {
    return c ? 1 : 0;
  } else {
    // Integers keep their two's complement bits, truncated to the type.
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<C>>(c));
  }
}

// A source operand of type T: a Value<T> or an immediate.
template <typename T>
class Src {
 public:
  Src(Value<T> v) : op_(ir::Operand::FromReg(v.reg)) {}  // NOLINT: implicit by design
  Src(typename T::CType c) : op_(ir::Operand::Imm(T::kType, ImmBits<T>(c))) {}  // NOLINT
  const ir::Operand& operand() const { return op_; }

 private:
  ir::Operand op_;
};
// Source operand whose T is taken from another parameter.
template <typename T>
using SrcOf = std::type_identity_t<Src<T>>;

// Any typed value, for APIs that take values of several types (raw PTX).
struct AnyValue {
  ir::Reg reg;
  template <typename T>
  AnyValue(Value<T> v) : reg(v.reg) {}  // NOLINT: implicit by design
  AnyValue(ir::Reg r) : reg(r) {}       // NOLINT
};

// A shared, dynamic-shared or local array declared in the kernel.
template <typename T>
struct Symbol {
  uint32_t index = 0;  // into Kernel::variables
  ir::StateSpace space = ir::StateSpace::kShared;
};

// A memory address: a register (u64, or u32 for shared/local) or a variable,
// plus a byte offset.
struct Address {
  ir::Operand op;
  template <typename T>
    requires(std::is_same_v<T, U64> || std::is_same_v<T, U32> || std::is_same_v<T, B64> ||
             std::is_same_v<T, B32>)
  Address(Value<T> base, int64_t offset = 0) : op(ir::Operand::AddrReg(base.reg, offset)) {}  // NOLINT
  template <typename T>
  Address(Symbol<T> sym, int64_t offset = 0)  // NOLINT
      : op(ir::Operand::AddrSymbol(sym.index, offset)) {}
  explicit Address(ir::Operand o) : op(o) {}
};

}  // namespace ptxforge

#endif  // PTXFORGE_BUILDER_VALUE_H_
