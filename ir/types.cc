// Scalar type properties.
#include "ir/types.h"

#include <array>

namespace ptxforge::ir {
namespace {

using types_internal::kTypes;

}  // namespace

std::optional<ScalarType> ParseType(std::string_view name) {
  for (int i = 1; i < kNumScalarTypes; ++i) {
    if (kTypes[i].name == name) return static_cast<ScalarType>(i);
  }
  return std::nullopt;
}


ScalarType BitsTypeOfSize(int bits) {
  switch (bits) {
    case 1: return ScalarType::kPred;
    case 8: return ScalarType::kB8;
    case 16: return ScalarType::kB16;
    case 32: return ScalarType::kB32;
    case 64: return ScalarType::kB64;
    default: return ScalarType::kNone;
  }
}

ScalarType WidenedType(ScalarType t) {
  switch (t) {
    case ScalarType::kU8: return ScalarType::kU16;
    case ScalarType::kU16: return ScalarType::kU32;
    case ScalarType::kU32: return ScalarType::kU64;
    case ScalarType::kS8: return ScalarType::kS16;
    case ScalarType::kS16: return ScalarType::kS32;
    case ScalarType::kS32: return ScalarType::kS64;
    case ScalarType::kB8: return ScalarType::kB16;
    case ScalarType::kB16: return ScalarType::kB32;
    case ScalarType::kB32: return ScalarType::kB64;
    default: return ScalarType::kNone;
  }
}

}  // namespace ptxforge::ir
