// Calls a templated lambda with the builder type tag of a runtime ScalarType.
#ifndef PTXFORGE_KERNELS_TYPE_DISPATCH_H_
#define PTXFORGE_KERNELS_TYPE_DISPATCH_H_

#include "builder/value.h"
#include "ir/types.h"

namespace ptxforge::kernels {

// f(.template operator()<F32>()) for kF32, and so on for every arithmetic
// type. Types a caller does not support must be rejected before (Validate).
template <typename F>
void DispatchType(ir::ScalarType t, F&& f) {
  switch (t) {
    case ir::ScalarType::kF16: f.template operator()<F16>(); break;
    case ir::ScalarType::kBF16: f.template operator()<BF16>(); break;
    case ir::ScalarType::kF32: f.template operator()<F32>(); break;
    case ir::ScalarType::kF64: f.template operator()<F64>(); break;
    case ir::ScalarType::kS32: f.template operator()<S32>(); break;
    case ir::ScalarType::kU32: f.template operator()<U32>(); break;
    case ir::ScalarType::kS64: f.template operator()<S64>(); break;
    case ir::ScalarType::kU64: f.template operator()<U64>(); break;
    default: break;
  }
}

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_TYPE_DISPATCH_H_
