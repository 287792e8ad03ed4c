// vector_add, written with the builder.
#include "kernels/vector_add.h"

#include <array>
#include <random>

#include "ir/strings.h"

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
    Value<T> sum = b.Add(x, y);  // before the address, in this order with any compiler
    b.Store(StateSpace::kGlobal, b.ElementAddr<T>(c, i), sum);
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
      {"n", "1000", "test shape: number of elements"},
  };
  return kFields;
}

absl::StatusOr<VectorAddSpec> VectorAddFamily::SpecFrom(const Config& config) const {
  VectorAddSpec spec;
  if (absl::Status s = config.GetTypeAndBlock(kTypes, &spec.type, &spec.block); !s.ok()) return s;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> VectorAddFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<VectorAddSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<uint32_t> n = config.GetU32("n");
  if (!n.ok()) return n.status();
  if (*n == 0) return absl::InvalidArgumentError("vector_add: n must be positive");
  const uint64_t size = static_cast<uint64_t>(ir::TypeSize(spec->type));
  // a, b, c and the expected c, plus the reference's three vectors of 8-byte values.
  if (absl::Status s = CheckProblemSize("vector_add", StrCat("n=", *n), {{*n, 4 * size + 24}}); !s.ok()) return s;
  absl::StatusOr<uint32_t> grid = GridFor("vector_add", *n, spec->block);
  if (!grid.ok()) return grid.status();
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = spec->type;
  TestProblem p;
  p.buffers.push_back(RandomBuffer("a", t, *n, rng, -100, 100));
  p.buffers.push_back(RandomBuffer("b", t, *n, rng, -100, 100));
  HostBuffer c = ZeroBuffer("c", t, *n);
  c.is_output = true;
  c.tolerance = DefaultTolerance(t);
  if (ir::IsFloat(t)) {
    std::vector<double> a = AsDoubles(t, p.buffers[0].data), b = AsDoubles(t, p.buffers[1].data);
    c.expected = FromDoubles(t, VectorAddReference<double>(a, b));
  } else {
    std::vector<int64_t> a = AsInts(t, p.buffers[0].data), b = AsInts(t, p.buffers[1].data);
    c.expected = FromInts(t, VectorAddReference<int64_t>(a, b));
  }
  p.buffers.push_back(std::move(c));
  p.args = {size_t{0}, size_t{1}, size_t{2}, ScalarU32(*n)};
  p.block = {spec->block, 1, 1};
  p.grid = {*grid, 1, 1};
  p.shape = StrCat("n=", *n);
  return p;
}

}  // namespace ptxforge::kernels
