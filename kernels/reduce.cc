// reduce_sum, written with the builder.
#include "kernels/reduce.h"

#include <array>
#include <cmath>
#include <random>

#include "ir/strings.h"

#include "ir/strings.h"
#include "builder/kernel_builder.h"
#include "kernels/type_dispatch.h"

namespace ptxforge::kernels {
namespace {

constexpr std::array kTypes = {ir::ScalarType::kF32, ir::ScalarType::kF64, ir::ScalarType::kS32,
                               ir::ScalarType::kU32, ir::ScalarType::kS64, ir::ScalarType::kU64};

template <ScalarTag T>
void Body(KernelBuilder& b, uint32_t block) {
  using ir::StateSpace;
  constexpr int64_t kSize = ir::TypeSize(T::kType);
  b.SetRequiredThreads(block);
  Value<U64> x = b.CvtaToGlobal(b.Param<U64>("x"));
  Value<U64> partial = b.CvtaToGlobal(b.Param<U64>("partial"));
  Value<U32> n = b.Param<U32>("n");
  Symbol<T> tile = b.Shared<T>("tile", block);

  Value<U32> tid = b.Name(b.TidX(), "tid");
  Value<U32> nctaid = b.NctaidX();  // separate statements: argument order is unspecified
  Value<U32> ntid = b.NtidX();
  Value<U32> stride = b.Name(b.Mul(ntid, nctaid), "stride");
  Var<T> sum = b.Mutable<T>(0, "sum");
  b.ForRange<U32>(b.GlobalThreadIdX(), n, stride, [&](Value<U32> j) {
    b.Assign(sum, b.Add<T>(sum, b.Load<T>(StateSpace::kGlobal, b.ElementAddr<T>(x, j))));
  });
  Value<U32> mine = b.Name(b.ElementAddr(tile, tid), "mine");
  b.Store<T>(StateSpace::kShared, mine, sum);
  b.BarSync();
  // The tree: at each level the lower half adds the upper half.
  for (uint32_t half = block / 2; half >= 1; half /= 2) {
    b.If(b.Lt(tid, half), [&] {
      Value<T> other = b.Load<T>(StateSpace::kShared, Address(mine, half * kSize));
      Value<T> self = b.Load<T>(StateSpace::kShared, mine);
      b.Store(StateSpace::kShared, mine, b.Add(self, other));
    });
    if (half > 1) b.BarSync();
  }
  b.If(b.Eq(tid, 0u), [&] {
    Value<T> total = b.Load<T>(StateSpace::kShared, tile);
    b.Store(StateSpace::kGlobal, b.ElementAddr<T>(partial, b.CtaidX()), total);
  });
  b.Ret();
}

}  // namespace

absl::Status ReduceSumSpec::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(StrCat("reduce_sum: type ", ir::TypeName(type),
                                                   " is not supported (f32, f64, s32, u32, s64, u64)"));
  }
  if (block < 32 || block > 1024 || (block & (block - 1)) != 0) {
    return absl::InvalidArgumentError(StrCat("reduce_sum: block=", block, " must be a power of two in 32..1024"));
  }
  return absl::OkStatus();
}

std::string ReduceSumSpec::KernelName() const {
  return StrCat("reduce_sum_", ir::TypeName(type), "_b", block);
}

absl::StatusOr<ir::Kernel> ReduceSumSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  DispatchType(type, [&]<ScalarTag T>() { Body<T>(b, block); });
  return b.Finish();
}

std::span<const ConfigField> ReduceSumFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "element type: f32, f64, s32, u32, s64, u64"},
      {"block", "256", "threads per block, a power of two in 32..1024 (.reqntid)"},
      {"n", "5000", "test shape: number of elements"},
      {"grid", "8", "test shape: number of blocks"},
  };
  return kFields;
}

absl::StatusOr<ReduceSumSpec> ReduceSumFamily::SpecFrom(const Config& config) const {
  ReduceSumSpec spec;
  if (absl::Status s = config.GetTypeAndBlock(kTypes, &spec.type, &spec.block); !s.ok()) return s;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> ReduceSumFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<ReduceSumSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<uint32_t> n = config.GetU32("n");
  if (!n.ok()) return n.status();
  absl::StatusOr<uint32_t> grid = config.GetU32("grid");
  if (!grid.ok()) return grid.status();
  if (*grid == 0) return absl::InvalidArgumentError("reduce_sum: grid must be positive");
  if (*grid > 0x7FFFFFFFu) return absl::InvalidArgumentError("reduce_sum: grid must be at most 2147483647 (CUDA's limit)");
  const uint64_t size = static_cast<uint64_t>(ir::TypeSize(spec->type));
  // x and the reference's two 8-byte copies of it; partial, its expected
  // value and the reference's 8-byte sums.
  if (absl::Status s = CheckProblemSize("reduce_sum", StrCat("n=", *n, " grid=", *grid), {{*n, size + 16}, {*grid, 2 * size + 16}});
      !s.ok()) {
    return s;
  }
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = spec->type;
  TestProblem p;
  p.buffers.push_back(RandomBuffer("x", t, *n, rng, ir::IsSigned(t) || ir::IsFloat(t) ? -10 : 0, 10));
  HostBuffer partial = ZeroBuffer("partial", t, *grid);
  partial.is_output = true;
  partial.tolerance = DefaultTolerance(t);
  if (ir::IsFloat(t)) {
    std::vector<double> x = AsDoubles(t, p.buffers[0].data);
    partial.expected = FromDoubles(t, ReduceSumReference<double>(x, *grid, spec->block));
    // Rounding error grows with the sum of magnitudes, not with the result.
    std::vector<double> abs_x(x.size());
    for (size_t i = 0; i < x.size(); ++i) abs_x[i] = std::fabs(x[i]);
    for (double m : ReduceSumReference<double>(abs_x, *grid, spec->block)) partial.magnitude = std::max(partial.magnitude, m);
  } else {
    std::vector<int64_t> x = AsInts(t, p.buffers[0].data);
    partial.expected = FromInts(t, ReduceSumReference<int64_t>(x, *grid, spec->block));
  }
  p.buffers.push_back(std::move(partial));
  p.args = {size_t{0}, size_t{1}, ScalarU32(*n)};
  p.block = {spec->block, 1, 1};
  p.grid = {*grid, 1, 1};
  p.shape = StrCat("n=", *n, " grid=", *grid);
  return p;
}

}  // namespace ptxforge::kernels
