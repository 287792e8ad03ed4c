// vector_add, written with the builder.
#include "kernels/vector_add.h"

#include <array>

#include "ir/strings.h"
#include "builder/kernel_builder.h"
#include "kernels/type_dispatch.h"

namespace ptxforge::kernels {
namespace {

constexpr std::array kTypes = {ir::ScalarType::kF16, ir::ScalarType::kF32, ir::ScalarType::kF64,
                               ir::ScalarType::kS32, ir::ScalarType::kU32, ir::ScalarType::kS64,
                               ir::ScalarType::kU64};

template <ScalarTag T>
void Body(KernelBuilder& b, uint32_t block) {
  using ir::StateSpace;
  b.SetMaxThreads(block);
  Value<U64> a = b.CvtaToGlobal(b.Param<U64>("a"));
  Value<U64> bb = b.CvtaToGlobal(b.Param<U64>("b"));
  Value<U64> c = b.CvtaToGlobal(b.Param<U64>("c"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> i = b.Name(b.GlobalThreadIdX(), "i");
  b.If(b.Lt(i, n), [&] {
    Value<T> x = b.Load<T>(StateSpace::kGlobal, b.ElementAddr<T>(a, i));
    Value<T> y = b.Load<T>(StateSpace::kGlobal, b.ElementAddr<T>(bb, i));
    b.Store(StateSpace::kGlobal, b.ElementAddr<T>(c, i), b.Add(x, y));
  });
  b.Ret();
}

}  // namespace

absl::Status VectorAddSpec::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(StrCat("vector_add: type ", ir::TypeName(type),
                                                   " is not supported (f16, f32, f64, s32, u32, s64, u64)"));
  }
  if (block == 0 || block > 1024) {
    return absl::InvalidArgumentError(StrCat("vector_add: block=", block, " must be in 1..1024"));
  }
  return absl::OkStatus();
}

std::string VectorAddSpec::KernelName() const { return StrCat("vector_add_", ir::TypeName(type)); }

absl::StatusOr<ir::Kernel> VectorAddSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  DispatchType(type, [&]<ScalarTag T>() { Body<T>(b, block); });
  return b.Finish();
}

std::span<const ConfigField> VectorAddFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "element type: f16, f32, f64, s32, u32, s64, u64"},
      {"block", "256", "maximum threads per block (.maxntid)"},
  };
  return kFields;
}

absl::StatusOr<VectorAddSpec> VectorAddFamily::SpecFrom(const Config& config) {
  VectorAddSpec spec;
  absl::StatusOr<ir::ScalarType> type = config.GetType("type", kTypes);
  if (!type.ok()) return type.status();
  absl::StatusOr<uint32_t> block = config.GetU32("block");
  if (!block.ok()) return block.status();
  spec.type = *type;
  spec.block = *block;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<ir::Kernel> VectorAddFamily::Build(const Config& config, ir::Target target) const {
  absl::StatusOr<VectorAddSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  return spec->Build(target);
}

}  // namespace ptxforge::kernels
