// softmax, written with the builder's helpers.
#include "kernels/softmax.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "builder/collectives.h"
#include "builder/math.h"
#include "builder/memory.h"
#include "ir/strings.h"

namespace ptxforge::kernels {
namespace {

constexpr std::array kTypes = {ir::ScalarType::kF16, ir::ScalarType::kBF16, ir::ScalarType::kF32};

template <ScalarTag T>
void Body(KernelBuilder& b, uint32_t block) {
  constexpr bool kHalf = !std::is_same_v<T, F32>;
  const Precision p = kHalf ? Precision::kApprox : Precision::kAccurate;
  auto load = [&](const Ptr<T, Global>& row, Value<U32> c) {
    if constexpr (kHalf) return b.Cvt<F32>(row.Load(c)); else return row.Load(c);
  };
  b.SetRequiredThreads(block);
  auto x = GlobalParam<T>(b, "x");
  auto y = GlobalParam<T>(b, "y");
  Value<U32> rows = b.Param<U32>("rows");
  Value<U32> cols = b.Param<U32>("cols");
  Value<U32> tid = b.TidX();
  b.ForRange<U32>(b.CtaidX(), rows, b.NctaidX(), [&](Value<U32> r) {
    Value<U64> start = b.MulWide(r, cols);
    auto xr = x.At(start);
    auto yr = y.At(start);
    // Online max and sum: s = sum of exp(v - m) over this thread's elements.
    Var<F32> m = b.Mutable<F32>(-std::numeric_limits<float>::infinity());
    Var<F32> s = b.Mutable<F32>(0.0f);
    b.ForRange<U32>(tid, cols, block, [&](Value<U32> c) {
      Value<F32> v = load(xr, c);
      Value<F32> e = Exp(b, b.Neg(b.Abs(b.Sub(v, m))), p);  // exp(-|v - m|)
      Value<Pred> grows = b.Gt(v, m);
      b.Assign(s, b.Select(grows, b.Fma(s, e, 1.0f), b.Add(s, e)));
      b.Assign(m, b.Max(m, v));
    });
    Value<F32> max = BlockReduce(b, ReduceOp::kMax, Value<F32>(m), block);
    Value<F32> sum = BlockReduce(b, ReduceOp::kSum, b.Mul(s, Exp(b, b.Sub(m, max), p)), block);
    Value<F32> inv = b.Rcp(sum);
    b.ForRange<U32>(tid, cols, block, [&](Value<U32> c) {
      Value<F32> out = b.Mul(Exp(b, b.Sub(load(xr, c), max), p), inv);
      if constexpr (kHalf) yr.Store(c, b.Cvt<T>(out)); else yr.Store(c, out);
    });
  });
  b.Ret();
}

}  // namespace

std::vector<double> SoftmaxReference(std::span<const double> x, uint32_t rows, uint32_t cols) {
  std::vector<double> y(x.size());
  for (uint32_t r = 0; r < rows; ++r) {
    const double* row = x.data() + size_t{r} * cols;
    double m = *std::max_element(row, row + cols), s = 0;
    for (uint32_t c = 0; c < cols; ++c) s += std::exp(row[c] - m);
    for (uint32_t c = 0; c < cols; ++c) y[size_t{r} * cols + c] = std::exp(row[c] - m) / s;
  }
  return y;
}

absl::Status SoftmaxSpec::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(StrCat("softmax: type ", ir::TypeName(type), " is not supported (f16, bf16, f32)"));
  }
  if (block < 32 || block > 1024 || block % 32 != 0) {
    return absl::InvalidArgumentError(StrCat("softmax: block=", block, " must be a multiple of 32 in 32..1024"));
  }
  return absl::OkStatus();
}

std::string SoftmaxSpec::KernelName() const { return StrCat("softmax_", ir::TypeName(type), "_b", block); }

absl::StatusOr<ir::Kernel> SoftmaxSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  if (absl::Status s = CheckTypeOnTarget("softmax", type, target); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  switch (type) {
    case ir::ScalarType::kF16: Body<F16>(b, block); break;
    case ir::ScalarType::kBF16: Body<BF16>(b, block); break;
    default: Body<F32>(b, block); break;
  }
  return b.Finish();
}

std::span<const ConfigField> SoftmaxFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "storage type: f16, bf16, f32 (math in f32)"},
      {"block", "128", "threads per block (.reqntid), a multiple of 32 in 32..1024"},
      {"rows", "5", "test shape: rows"},
      {"cols", "1000", "test shape: columns (1..65536)"},
      {"grid", "3", "test shape: blocks (fewer than rows: blocks loop over rows)"},
  };
  return kFields;
}

absl::StatusOr<SoftmaxSpec> SoftmaxFamily::SpecFrom(const Config& config) const {
  SoftmaxSpec spec;
  if (absl::Status s = config.GetTypeAndBlock(kTypes, &spec.type, &spec.block); !s.ok()) return s;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> SoftmaxFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<SoftmaxSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<uint32_t> rows = config.GetU32("rows"), cols = config.GetU32("cols"), grid = config.GetU32("grid");
  for (const auto* v : {&rows, &cols, &grid}) {
    if (!v->ok()) return v->status();
  }
  if (*rows == 0 || *cols == 0 || *grid == 0) {
    return absl::InvalidArgumentError("softmax: rows, cols and grid must be positive");
  }
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = spec->type;
  TestProblem p;
  p.buffers.push_back(RandomBuffer("x", t, size_t{*rows} * *cols, rng, -20, 20));
  HostBuffer y = ZeroBuffer("y", t, size_t{*rows} * *cols);
  y.is_output = true;
  y.tolerance = t == ir::ScalarType::kF32 ? 1e-5 : DefaultTolerance(t);
  // Errors are relative to the row's largest probability, not each element.
  std::vector<double> ref = SoftmaxReference(AsDoubles(t, p.buffers[0].data), *rows, *cols);
  y.magnitude = 0;
  for (uint32_t r = 0; r < *rows; ++r) {
    double row_max = *std::max_element(ref.begin() + size_t{r} * *cols, ref.begin() + size_t{r + 1} * *cols);
    y.magnitude = r == 0 ? row_max : std::min(y.magnitude, row_max);
  }
  y.expected = FromDoubles(t, ref);
  p.buffers.push_back(std::move(y));
  p.args = {size_t{0}, size_t{1}, ScalarU32(*rows), ScalarU32(*cols)};
  p.block = {spec->block, 1, 1};
  p.grid = {*grid, 1, 1};
  p.shape = StrCat("rows=", *rows, " cols=", *cols, " grid=", *grid);
  return p;
}

}  // namespace ptxforge::kernels
