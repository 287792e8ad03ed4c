// layernorm and rmsnorm, written with the builder's helpers.
#include "kernels/norm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <random>

#include "builder/collectives.h"
#include "builder/memory.h"
#include "ir/strings.h"
#include "kernels/kernel_math.h"

namespace ptxforge::kernels {
namespace {

constexpr std::array kTypes = {ir::ScalarType::kF16, ir::ScalarType::kBF16, ir::ScalarType::kF32};

std::string_view FamilyName(NormKind kind) { return kind == NormKind::kLayerNorm ? "layernorm" : "rmsnorm"; }

// A Welford state: count, mean and M2 (the sum of squared deviations).
struct Moments {
  Value<F32> n, mean, m2;
};

// Chan et al.'s merge of two states; an empty one (n = 0) is the identity.
Moments Merge(KernelBuilder& b, const Moments& a, const Moments& c) {
  Value<F32> n = b.Add(a.n, c.n);
  Value<F32> f = b.Div(c.n, b.Max(n, 1.0f));  // nc / n (0 when both are empty)
  Value<F32> delta = b.Sub(c.mean, a.mean);
  return {n, b.Fma(delta, f, a.mean), b.Fma(b.Mul(delta, delta), b.Mul(a.n, f), b.Add(a.m2, c.m2))};
}

// The merged state of each aligned group of `width` lanes, in all its lanes.
// Kept in mutable registers: their assignments end each step's run of the
// canonical order, so a step's delta and factor die within it.
Moments WarpMerge(KernelBuilder& b, Moments m, uint32_t width) {
  Var<F32> n = b.Mutable<F32>(m.n), mean = b.Mutable<F32>(m.mean), m2 = b.Mutable<F32>(m.m2);
  for (uint32_t mask = width / 2; mask >= 1; mask /= 2) {
    auto other = [&](Value<F32> v) { return Shuffle(b, ir::ShflMode::kBfly, v, mask, 31u); };
    Moments r = Merge(b, {n, mean, m2}, {other(n), other(mean), other(m2)});
    b.Assign(n, r.n);
    b.Assign(mean, r.mean);
    b.Assign(m2, r.m2);
  }
  return {n, mean, m2};
}

// The block's merged state in every thread (the structure of BlockReduce:
// per-warp states through shared memory, two bar.sync so it may sit in a loop).
Moments BlockMerge(KernelBuilder& b, Moments m, uint32_t block) {
  m = WarpMerge(b, m, 32);
  const uint32_t warps = block / 32, width = std::bit_ceil(warps);
  if (warps == 1) return m;
  auto s = SharedArray<F32>(b, "moments", 3 * warps);
  Value<U32> tid = b.TidX(), lane = LaneIndex(b, tid);
  Value<U32> warp = WarpIndex(b, tid);
  b.If(b.Eq(lane, 0u), [&] {
    s.Store(warp, m.n);
    s.At(warps).Store(warp, m.mean);
    s.At(2 * warps).Store(warp, m.m2);
  });
  b.BarSync(0);
  // Every group of `width` lanes reads all the per-warp states (empty past the last warp).
  Value<U32> i = b.And(lane, width - 1);
  auto load = [&](uint32_t k) {
    if (width == warps) return s.At(k * warps).Load(i);
    return b.Select(b.Lt(i, warps), s.At(k * warps).Load(b.Min(i, warps - 1)), 0.0f);
  };
  m = WarpMerge(b, {load(0), load(1), load(2)}, width);
  b.BarSync(0);
  return m;
}

template <ScalarTag T>
void Body(KernelBuilder& b, const NormSpec& s) {
  const bool rms = s.kind == NormKind::kRmsNorm;
  constexpr uint32_t kLogSize = std::countr_zero(static_cast<uint32_t>(ir::TypeSize(T::kType)));
  auto f32 = [&](Value<T> v) { return ConvertTo<F32>(b, v); };
  b.SetRequiredThreads(s.block);
  auto x = GlobalParam<T>(b, "x");
  auto weight = GlobalParam<T>(b, "weight");
  auto bias = rms ? weight : GlobalParam<T>(b, "bias");
  auto y = GlobalParam<T>(b, "y");
  auto mean_out = s.stats && !rms ? GlobalParam<F32>(b, "mean") : Ptr<F32, Global>(b, x.base());
  auto rstd_out = s.stats ? GlobalParam<F32>(b, "rstd") : mean_out;
  Value<U32> rows = b.Param<U32>("rows");
  Value<U32> cols = b.Param<U32>("cols");
  Value<F32> eps = b.Param<F32>("eps");
  Value<F32> inv_cols = b.Rcp(b.Cvt<F32>(cols));
  // %tid.x is read where it is used: kept in a register across the row, it costs ptxas 2 more on sm_90.
  b.ForRange<U32>(b.CtaidX(), rows, b.NctaidX(), [&](Value<U32> r) {
    // Element (r, c) of x and y from one byte offset: row pointers would keep
    // two more 64-bit registers, and Ptr::At's mul.lo.u64 by the size costs
    // ptxas 4 registers more than shl on sm_90.
    Value<U64> start = b.MulWide(r, cols);
    auto at = [&](Value<U32> c) { return b.Shl(b.Add(start, b.Cvt<U64>(c)), kLogSize); };
    auto elem = [&](const Ptr<T, Global>& p, Value<U64> offset) { return Ptr<T, Global>(b, b.Add(p.base(), offset)); };
    Value<F32> mean, var;
    if (rms) {
      Var<F32> ss = b.Mutable<F32>(0.0f);
      b.ForRange<U32>(b.TidX(), cols, s.block, [&](Value<U32> c) {
        Value<F32> v = f32(elem(x, at(c)).Load());
        b.Assign(ss, b.Fma(v, v, ss));
      });
      var = b.Mul(BlockReduce(b, ReduceOp::kSum, Value<F32>(ss), s.block), inv_cols);  // mean square
    } else {
      // Welford's update over this thread's elements.
      Var<F32> n = b.Mutable<F32>(0.0f), mu = b.Mutable<F32>(0.0f), m2 = b.Mutable<F32>(0.0f);
      b.ForRange<U32>(b.TidX(), cols, s.block, [&](Value<U32> c) {
        Value<F32> v = f32(elem(x, at(c)).Load());
        b.Assign(n, b.Add(n, 1.0f));
        Value<F32> delta = b.Sub(v, mu);
        b.Assign(mu, b.Add(mu, b.Div(delta, n)));
        b.Assign(m2, b.Fma(delta, b.Sub(v, mu), m2));
      });
      Moments total = BlockMerge(b, {n, mu, m2}, s.block);
      mean = total.mean;
      var = b.Mul(total.m2, inv_cols);
    }
    Value<F32> rstd = b.Rsqrt(b.Add(var, eps));
    if (s.stats) {
      b.If(b.Eq(b.TidX(), 0u), [&] {
        if (!rms) mean_out.Store(r, mean);
        rstd_out.Store(r, rstd);
      });
    }
    b.ForRange<U32>(b.TidX(), cols, s.block, [&](Value<U32> c) {
      Value<U64> i = at(c);
      Value<F32> v = f32(elem(x, i).Load());
      Value<F32> scaled = b.Mul(rms ? v : b.Sub(v, mean), rstd);
      Value<F32> w = f32(weight.Load(c));
      elem(y, i).Store(ConvertTo<T>(b, rms ? b.Mul(scaled, w) : b.Fma(scaled, w, f32(bias.Load(c)))));
    });
  });
  b.Ret();
}

}  // namespace

std::vector<double> LayerNormReference(std::span<const double> x, std::span<const double> weight,
                                       std::span<const double> bias, uint32_t rows, uint32_t cols, double eps,
                                       std::vector<double>* mean, std::vector<double>* rstd) {
  std::vector<double> y(x.size());
  if (mean) mean->assign(rows, 0);
  if (rstd) rstd->assign(rows, 0);
  for (uint32_t r = 0; r < rows; ++r) {
    const double* row = x.data() + size_t{r} * cols;
    double m = 0, v = 0;
    for (uint32_t c = 0; c < cols; ++c) m += row[c];
    m /= cols;
    for (uint32_t c = 0; c < cols; ++c) v += (row[c] - m) * (row[c] - m);
    const double rs = 1 / std::sqrt(v / cols + eps);
    for (uint32_t c = 0; c < cols; ++c) y[size_t{r} * cols + c] = (row[c] - m) * rs * weight[c] + bias[c];
    if (mean) (*mean)[r] = m;
    if (rstd) (*rstd)[r] = rs;
  }
  return y;
}

std::vector<double> RmsNormReference(std::span<const double> x, std::span<const double> weight, uint32_t rows,
                                     uint32_t cols, double eps, std::vector<double>* rstd) {
  std::vector<double> y(x.size());
  if (rstd) rstd->assign(rows, 0);
  for (uint32_t r = 0; r < rows; ++r) {
    const double* row = x.data() + size_t{r} * cols;
    double ss = 0;
    for (uint32_t c = 0; c < cols; ++c) ss += row[c] * row[c];
    const double rs = 1 / std::sqrt(ss / cols + eps);
    for (uint32_t c = 0; c < cols; ++c) y[size_t{r} * cols + c] = row[c] * rs * weight[c];
    if (rstd) (*rstd)[r] = rs;
  }
  return y;
}

absl::Status NormSpec::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(
        StrCat(FamilyName(kind), ": type ", ir::TypeName(type), " is not supported (f16, bf16, f32)"));
  }
  if (block < 32 || block > 1024 || block % 32 != 0) {
    return absl::InvalidArgumentError(StrCat(FamilyName(kind), ": block=", block, " must be a multiple of 32 in 32..1024"));
  }
  return absl::OkStatus();
}

std::string NormSpec::KernelName() const {
  return StrCat(FamilyName(kind), "_", ir::TypeName(type), "_b", block, stats ? "_stats" : "");
}

absl::StatusOr<ir::Kernel> NormSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  if (absl::Status s = CheckTypeOnTarget(FamilyName(kind), type, target); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  switch (type) {
    case ir::ScalarType::kF16: Body<F16>(b, *this); break;
    case ir::ScalarType::kBF16: Body<BF16>(b, *this); break;
    default: Body<F32>(b, *this); break;
  }
  return b.Finish();
}

std::string_view NormFamily::description() const {
  return kind_ == NormKind::kLayerNorm
             ? "row layer norm: Welford per thread, Chan's merge across the block, affine weight and bias"
             : "row RMS norm: block sum of squares, weight only (no mean subtraction)";
}

std::span<const ConfigField> NormFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "storage type of x, weight, bias, y: f16, bf16, f32 (math in f32)"},
      {"block", "128", "threads per block (.reqntid), a multiple of 32 in 32..1024"},
      {"stats", "false", "also write f32 per-row statistics: mean (layernorm) and rstd"},
      {"rows", "5", "test shape: rows"},
      {"cols", "1000", "test shape: columns (any, >= 1)"},
      {"grid", "3", "test shape: blocks (fewer than rows: blocks loop over rows)"},
      {"eps", "1e-5", "test problem: the eps param (a number >= 0)"},
  };
  return kFields;
}

absl::StatusOr<NormSpec> NormFamily::SpecFrom(const Config& config) const {
  NormSpec spec{.kind = kind_};
  if (absl::Status s = config.GetTypeAndBlock(kTypes, &spec.type, &spec.block); !s.ok()) return s;
  absl::StatusOr<bool> stats = config.GetBool("stats");
  if (!stats.ok()) return stats.status();
  spec.stats = *stats;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> NormFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<NormSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  const std::string_view family = name();
  absl::StatusOr<uint32_t> rows = config.GetU32("rows"), cols = config.GetU32("cols"), grid = config.GetU32("grid");
  for (auto [key, v] : {std::pair{"rows", &rows}, std::pair{"cols", &cols}, std::pair{"grid", &grid}}) {
    if (!v->ok()) return v->status();
    if (**v == 0) return absl::InvalidArgumentError(StrCat(family, ": ", key, "=0 must be at least 1"));
  }
  absl::StatusOr<double> eps = config.GetDouble("eps");
  if (!eps.ok()) return eps.status();
  if (!std::isfinite(*eps) || *eps < 0) {
    return absl::InvalidArgumentError(StrCat(family, ": eps=", *eps, " must be a finite number >= 0"));
  }
  const bool rms = kind_ == NormKind::kRmsNorm;
  const ir::ScalarType t = spec->type;
  const std::string shape = StrCat("rows=", *rows, " cols=", *cols, " grid=", *grid, " eps=", *eps);
  const uint64_t size = ir::TypeSize(t);
  if (absl::Status s = CheckProblemSize(family, shape, {{uint64_t{*rows} * *cols, 2 * size + 16}, {*cols, 2 * size + 16},
                                                       {*rows, 32}});
      !s.ok()) {
    return s;
  }
  std::mt19937_64 rng(seed);
  const size_t n = size_t{*rows} * *cols;
  TestProblem p;
  // x off-centre (mean about 1) so that the mean subtraction matters.
  p.buffers.push_back(RandomBuffer("x", t, n, rng, -3, 5));
  p.buffers.push_back(RandomBuffer("weight", t, *cols, rng, -2, 2));
  if (!rms) p.buffers.push_back(RandomBuffer("bias", t, *cols, rng, -1, 1));
  const std::vector<double> xd = AsDoubles(t, p.buffers[0].data), wd = AsDoubles(t, p.buffers[1].data);
  std::vector<double> mean, rstd;
  std::vector<double> ref = rms ? RmsNormReference(xd, wd, *rows, *cols, *eps, &rstd)
                                : LayerNormReference(xd, wd, AsDoubles(t, p.buffers[2].data), *rows, *cols, *eps,
                                                     &mean, &rstd);
  // Tolerances, relative to max(|expected|, 1) (y is about unit scale; weights up
  // to 2): f32 1e-5 covers the f32 Welford / sum-of-squares rounding (a few
  // 1e-7 relative for these rows) and rsqrt.approx (2^-22.9); f16/bf16 outputs
  // are rounded once from f32 (1 storage ulp, under DefaultTolerance's 1e-2).
  auto output = [&](std::string name, ir::ScalarType type, const std::vector<double>& values) {
    HostBuffer out = ZeroBuffer(std::move(name), type, values.size());
    out.is_output = true;
    out.tolerance = type == ir::ScalarType::kF32 ? 1e-5 : DefaultTolerance(type);
    out.magnitude = 1;
    out.expected = FromDoubles(type, values);
    p.buffers.push_back(std::move(out));
  };
  output("y", t, ref);
  if (spec->stats && !rms) output("mean", ir::ScalarType::kF32, mean);
  if (spec->stats) output("rstd", ir::ScalarType::kF32, rstd);
  for (size_t i = 0; i < p.buffers.size(); ++i) p.args.push_back(i);
  p.args.push_back(ScalarU32(*rows));
  p.args.push_back(ScalarU32(*cols));
  p.args.push_back(Scalar(ir::ScalarType::kF32, std::bit_cast<uint32_t>(static_cast<float>(*eps))));
  p.block = {spec->block, 1, 1};
  p.grid = {*grid, 1, 1};
  p.shape = shape;
  return p;
}

}  // namespace ptxforge::kernels
