// elementwise, written with the builder's helpers.
#include "kernels/elementwise.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <random>

#include "builder/math.h"
#include "builder/memory.h"
#include "ir/strings.h"

namespace ptxforge::kernels {
namespace {

constexpr std::array kTypes = {ir::ScalarType::kF16, ir::ScalarType::kBF16, ir::ScalarType::kF32};
constexpr std::array<std::string_view, 4> kOpNames = {"copy", "add", "sub", "mul"};
constexpr std::array<std::string_view, 6> kActNames = {"none", "relu", "gelu", "gelu_tanh", "silu", "sigmoid"};

Value<F32> Apply(KernelBuilder& b, const ElementwiseSpec& s, Value<F32> x, Value<F32> z, Precision p) {
  Value<F32> v = x;
  if (s.op == ElementwiseOp::kAdd) v = b.Add(x, z);
  if (s.op == ElementwiseOp::kSub) v = b.Sub(x, z);
  if (s.op == ElementwiseOp::kMul) v = b.Mul(x, z);
  switch (s.act) {
    case Activation::kNone: return v;
    case Activation::kRelu: return b.Max(v, 0.0f);
    case Activation::kGelu: return Gelu(b, v);
    case Activation::kGeluTanh: return Gelu(b, v, GeluForm::kTanh, p);
    case Activation::kSilu: return Silu(b, v, p);
    case Activation::kSigmoid: return Sigmoid(b, v, p);
  }
  return v;
}

// Storage <-> f32.
template <ScalarTag T>
Value<F32> ToF32(KernelBuilder& b, Value<T> v) {
  if constexpr (std::is_same_v<T, F32>) return v; else return b.Cvt<F32>(v);
}
template <ScalarTag T>
Value<T> FromF32(KernelBuilder& b, Value<F32> v) {
  if constexpr (std::is_same_v<T, F32>) return v; else return b.Cvt<T>(v);
}
// The two 16-bit halves of a 32-bit word, and back.
template <ScalarTag T>
std::array<Value<T>, 2> Unpack(KernelBuilder& b, Value<U32> w) {
  return {b.Bitcast<T>(b.Cvt<U16>(w)), b.Bitcast<T>(b.Cvt<U16>(b.Shr(w, 16u)))};
}
template <ScalarTag T>
Value<U32> Pack(KernelBuilder& b, Value<T> lo, Value<T> hi) {
  Value<U32> h = b.Shl(b.Cvt<U32>(b.Bitcast<U16>(hi)), 16u);
  return b.Or(h, b.Cvt<U32>(b.Bitcast<U16>(lo)));
}

template <ScalarTag T>
void Body(KernelBuilder& b, const ElementwiseSpec& s) {
  constexpr bool kHalf = !std::is_same_v<T, F32>;
  constexpr uint32_t kPerVector = 16 / ir::TypeSize(T::kType);  // elements per 128-bit access
  const Precision p = kHalf ? Precision::kApprox : Precision::kAccurate;
  const bool binary = s.op != ElementwiseOp::kCopy;
  b.SetMaxThreads(s.block);
  auto x = GlobalParam<T>(b, "a");
  auto z = GlobalParam<T>(b, "b");
  auto y = GlobalParam<T>(b, "y");
  Value<U32> n = b.Param<U32>("n");
  auto f = [&](Value<T> u, Value<T> v) { return FromF32<T>(b, Apply(b, s, ToF32(b, u), ToF32(b, v), p)); };
  // 16-byte accesses when every pointer is 16-byte aligned.
  Value<U64> any_bits = b.Or(x.base(), y.base());
  if (binary) any_bits = b.Or(any_bits, z.base());
  Value<Pred> aligned = b.Eq(b.And(any_bits, uint64_t{15}), uint64_t{0});
  Value<U32> vectors = b.Select(aligned, b.Shr(n, static_cast<uint32_t>(std::countr_zero(kPerVector))), 0u);
  // Vector j: the 16 bytes at j * 16, one mul.wide shared by the three
  // addresses (not a shl to a word index and then a scaled index).
  GridStrideLoop(b, vectors, [&](Value<U32> j) {
    Value<U64> offset = b.MulWide(j, 16u);
    auto words = [&](const auto& view) {
      return b.LoadVec<U32, 4>(ir::StateSpace::kGlobal, Address(b.Add(view.base(), offset)));
    };
    std::array<Value<U32>, 4> xs = words(x);
    std::array<Value<U32>, 4> zs = binary ? words(z) : xs;
    std::array<Value<U32>, 4> out;
    for (int k = 0; k < 4; ++k) {
      if constexpr (kHalf) {
        auto [x0, x1] = Unpack<T>(b, xs[k]);
        auto [z0, z1] = Unpack<T>(b, zs[k]);
        Value<T> lo = f(x0, z0);
        out[k] = Pack<T>(b, lo, f(x1, z1));
      } else {
        out[k] = b.Bitcast<U32>(f(b.Bitcast<F32>(xs[k]), b.Bitcast<F32>(zs[k])));
      }
    }
    b.StoreVec(ir::StateSpace::kGlobal, Address(b.Add(y.base(), offset)), out);
  });
  GridStrideLoop(b, b.Mul(vectors, kPerVector), n, [&](Value<U32> i) {
    Value<T> u = x.Load(i);
    y.Store(i, f(u, binary ? z.Load(i) : u));
  });
  b.Ret();
}

double Activate(Activation act, double v) {
  switch (act) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > 0 ? v : 0;
    case Activation::kGelu: return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case Activation::kGeluTanh:
      return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    case Activation::kSilu: return v / (1 + std::exp(-v));
    case Activation::kSigmoid: return 1 / (1 + std::exp(-v));
  }
  return v;
}

template <typename E, size_t N>
absl::StatusOr<E> ParseName(std::string_view family, std::string_view key, std::string_view value,
                            const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == value) return static_cast<E>(i);
  }
  return absl::InvalidArgumentError(
      StrCat(family, ": ", key, "=", value, " is not supported; choose one of ", StrJoin(names, ", ")));
}

}  // namespace

double ElementwiseReference(ElementwiseOp op, Activation act, double a, double b) {
  double v = op == ElementwiseOp::kAdd ? a + b : op == ElementwiseOp::kSub ? a - b : op == ElementwiseOp::kMul ? a * b : a;
  return Activate(act, v);
}

absl::Status ElementwiseSpec::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(
        StrCat("elementwise: type ", ir::TypeName(type), " is not supported (f16, bf16, f32)"));
  }
  if (static_cast<size_t>(op) >= kOpNames.size() || static_cast<size_t>(act) >= kActNames.size()) {
    return absl::InvalidArgumentError("elementwise: unknown op or activation");
  }
  if (block < 32 || block > 1024) {
    return absl::InvalidArgumentError(StrCat("elementwise: block=", block, " must be in 32..1024"));
  }
  return absl::OkStatus();
}

std::string ElementwiseSpec::KernelName() const {
  return StrCat("elementwise_", kOpNames[static_cast<size_t>(op)], "_", kActNames[static_cast<size_t>(act)], "_",
                ir::TypeName(type));
}

absl::StatusOr<ir::Kernel> ElementwiseSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  if (absl::Status s = CheckTypeOnTarget("elementwise", type, target); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  switch (type) {
    case ir::ScalarType::kF16: Body<F16>(b, *this); break;
    case ir::ScalarType::kBF16: Body<BF16>(b, *this); break;
    default: Body<F32>(b, *this); break;
  }
  return b.Finish();
}

std::span<const ConfigField> ElementwiseFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "storage type: f16, bf16, f32 (math in f32)"},
      {"op", "add", "copy, add, sub, mul"},
      {"act", "gelu", "none, relu, gelu, gelu_tanh, silu, sigmoid"},
      {"block", "256", "maximum threads per block (.maxntid), 32..1024"},
      {"n", "1003", "test shape: number of elements"},
      {"grid", "3", "test shape: number of blocks"},
  };
  return kFields;
}

absl::StatusOr<ElementwiseSpec> ElementwiseFamily::SpecFrom(const Config& config) const {
  ElementwiseSpec spec;
  if (absl::Status s = config.GetTypeAndBlock(kTypes, &spec.type, &spec.block); !s.ok()) return s;
  absl::StatusOr<std::string> op = config.GetString("op");
  if (!op.ok()) return op.status();
  absl::StatusOr<ElementwiseOp> o = ParseName<ElementwiseOp>("elementwise", "op", *op, kOpNames);
  if (!o.ok()) return o.status();
  absl::StatusOr<std::string> act = config.GetString("act");
  if (!act.ok()) return act.status();
  absl::StatusOr<Activation> a = ParseName<Activation>("elementwise", "act", *act, kActNames);
  if (!a.ok()) return a.status();
  spec.op = *o;
  spec.act = *a;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> ElementwiseFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<ElementwiseSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<uint32_t> n = config.GetU32("n");
  if (!n.ok()) return n.status();
  absl::StatusOr<uint32_t> grid = config.GetU32("grid");
  if (!grid.ok()) return grid.status();
  if (*n == 0) return absl::InvalidArgumentError("elementwise: n must be positive");
  if (*grid == 0) return absl::InvalidArgumentError("elementwise: grid must be positive");
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = spec->type;
  TestProblem p;
  p.buffers.push_back(RandomBuffer("a", t, *n, rng, -4, 4));
  p.buffers.push_back(RandomBuffer("b", t, *n, rng, -4, 4));
  HostBuffer y = ZeroBuffer("y", t, *n);
  y.is_output = true;
  y.tolerance = DefaultTolerance(t);
  std::vector<double> a = AsDoubles(t, p.buffers[0].data), b = AsDoubles(t, p.buffers[1].data), out(*n);
  for (uint32_t i = 0; i < *n; ++i) out[i] = ElementwiseReference(spec->op, spec->act, a[i], b[i]);
  y.expected = FromDoubles(t, out);
  p.buffers.push_back(std::move(y));
  p.args = {size_t{0}, size_t{1}, size_t{2}, ScalarU32(*n)};
  p.block = {spec->block, 1, 1};
  p.grid = {*grid, 1, 1};
  p.shape = StrCat("n=", *n, " grid=", *grid);
  return p;
}

}  // namespace ptxforge::kernels
