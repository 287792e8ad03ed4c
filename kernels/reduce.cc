// reduce and reduce_sum, written with the builder.
#include "kernels/reduce.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "builder/collectives.h"
#include "builder/kernel_builder.h"
#include "builder/memory.h"
#include "ir/strings.h"
#include "kernels/type_dispatch.h"
#include "passes/pass.h"

namespace ptxforge::kernels {
namespace {

// ---- reduce

constexpr std::array kReduceTypes = {ir::ScalarType::kF32, ir::ScalarType::kF16, ir::ScalarType::kBF16,
                                     ir::ScalarType::kS32, ir::ScalarType::kU32};
constexpr std::array<std::string_view, 4> kOpNames = {"sum", "max", "min", "argmax"};
constexpr std::array<std::string_view, 2> kModeNames = {"rows", "tensor"};

// The math type (f32 for 16-bit floats) and what a thread accumulates: the
// sum, or an ordered key (argmax: 64 bits, the key and the inverted index).
template <ScalarTag T>
using MathOf = std::conditional_t<std::is_same_v<T, F16> || std::is_same_v<T, BF16>, F32, T>;
template <ScalarTag T, Reduction kOp>
using AccOf = std::conditional_t<kOp == Reduction::kSum, MathOf<T>,
                                 std::conditional_t<kOp == Reduction::kArgmax, U64, U32>>;

// bits ^ ((sign >>s 31) | 0x80000000): with sign = bits, a float's bits as a
// key that orders like the floats; with sign = ~key, the key back to bits.
Value<U32> FlipFloat(KernelBuilder& b, Value<U32> bits, Value<U32> sign) {
  return b.Xor(bits, b.Or(b.Bitcast<U32>(b.Shr(b.Bitcast<S32>(sign), 31u)), 0x80000000u));
}
// v's ordered key (inverted for min); a NaN gets the largest.
template <ScalarTag M>
Value<U32> Key(KernelBuilder& b, Value<M> v, bool invert) {
  Value<U32> k;
  if constexpr (std::is_same_v<M, U32>) k = v;
  if constexpr (std::is_same_v<M, S32>) k = b.Xor(b.Bitcast<U32>(v), 0x80000000u);
  if constexpr (std::is_same_v<M, F32>) {
    Value<U32> bits = b.Bitcast<U32>(v);
    k = FlipFloat(b, bits, bits);
  }
  if (invert) k = b.Not(k);
  if constexpr (std::is_same_v<M, F32>) k = b.Select(b.Setp(ir::CmpOp::kNum, v, v), k, 0xFFFFFFFFu);
  return k;
}
template <ScalarTag M>
Value<M> Unkey(KernelBuilder& b, Value<U32> k, bool invert) {
  if (invert) k = b.Not(k);
  if constexpr (std::is_same_v<M, U32>) return k;
  else if constexpr (std::is_same_v<M, S32>) return b.Bitcast<S32>(b.Xor(k, 0x80000000u));
  else return b.Bitcast<F32>(FlipFloat(b, k, b.Not(k)));
}

template <ScalarTag T, Reduction kOp>
void ReduceBody(KernelBuilder& b, const ReduceSpec& s) {
  using M = MathOf<T>;
  using A = AccOf<T, kOp>;
  constexpr bool kArgmax = kOp == Reduction::kArgmax, kHalf = !std::is_same_v<M, T>;
  const bool tensor = s.mode == ReduceMode::kTensor;
  [[maybe_unused]] constexpr bool kInvert = kOp == Reduction::kMin;
  const ReduceOp op = kOp == Reduction::kSum ? ReduceOp::kSum : ReduceOp::kMax;
  // The key of -inf (or of the lowest integer): what no element is below.
  const uint32_t low = std::is_same_v<M, F32> ? 0x007FFFFFu : 0u;
  const auto identity = static_cast<typename A::CType>(kOp == Reduction::kSum ? 0 : kArgmax ? uint64_t{low} << 32 : low);
  b.SetRequiredThreads(s.block);
  auto x = GlobalParam<T>(b, "x");
  Value<U64> x_index = tensor && kArgmax ? b.Param<U64>("x_index") : Value<U64>();
  auto out = GlobalParam<T>(b, "out");
  auto out_index = tensor && kArgmax ? GlobalParam<U32>(b, "out_index") : out.template As<U32>();
  Value<U32> tid = b.TidX();
  // The element's index: x_index[i] when x_index is not 0 (tensor argmax), else i.
  Value<Pred> indexed = tensor && kArgmax ? b.Ne(x_index, uint64_t{0}) : Value<Pred>();
  auto given_index = Ptr<U32, Global>(b, tensor && kArgmax ? b.CvtaToGlobal(x_index) : Value<U64>());
  // One element's contribution.
  auto element = [&](Value<T> raw, Value<U32> index) -> Value<A> {
    Value<M> v;
    if constexpr (kHalf) v = b.Cvt<F32>(raw); else v = raw;
    if constexpr (kOp == Reduction::kSum) {
      return v;
    } else if constexpr (kArgmax) {
      if constexpr (std::is_same_v<M, F32>) v = b.Add(v, 0.0f, {.rounding = ir::Rounding::kRn});  // -0 -> +0
      Value<B32> hi = b.Bitcast<B32>(Key(b, v, false));
      return b.Bitcast<U64>(b.Pack(b.Bitcast<B32>(b.Not(index)), hi));
    } else {
      return Key(b, v, kInvert);
    }
  };
  auto to_storage = [&](Value<M> v) {
    if constexpr (kHalf) return b.Cvt<T>(v); else return v;
  };
  // Thread 0 writes the block's total to slot.
  auto store = [&](Value<U32> slot, Value<A> total) {
    if constexpr (kOp == Reduction::kSum) {
      out.Store(slot, to_storage(total));
    } else if constexpr (kArgmax) {
      auto [lo, hi] = b.Unpack(b.Bitcast<B64>(total));
      if (tensor) out.Store(slot, to_storage(Unkey<M>(b, b.Bitcast<U32>(hi), false)));
      out_index.Store(slot, b.Not(b.Bitcast<U32>(lo)));
    } else {
      out.Store(slot, to_storage(Unkey<M>(b, total, kInvert)));
    }
  };
  // Elements i = start, start + step, ... < end of xs, reduced into slot.
  auto reduce = [&](Ptr<T, Global> xs, Value<U32> start, Value<U32> end, Src<U32> step, Value<U32> slot) {
    Var<A> acc = b.Mutable<A>(identity);
    b.ForRange<U32>(start, end, step, [&](Value<U32> i) {
      Value<U32> index = i;
      if (tensor && kArgmax) {
        Var<U32> given = b.Mutable<U32>(i);
        b.If(indexed, [&] { b.Assign(given, given_index.Load(i)); });
        index = given;
      }
      b.Assign(acc, Combine(b, op, Value<A>(acc), element(xs.Load(i), index)));
    });
    Value<A> total = BlockReduce(b, op, Value<A>(acc), s.block);
    b.If(b.Eq(tid, 0u), [&] { store(slot, total); });
  };
  // Separate statements: C++ leaves the order of argument evaluation open.
  Value<U32> block_index = b.CtaidX();
  Value<U32> blocks = b.NctaidX();
  if (tensor) {
    Value<U32> n = b.Param<U32>("n");
    Value<U32> start = b.GlobalThreadIdX();
    reduce(x, start, n, b.Mul(blocks, s.block), block_index);
  } else {
    Value<U32> rows = b.Param<U32>("rows");
    Value<U32> cols = b.Param<U32>("cols");
    b.ForRange<U32>(block_index, rows, blocks, [&](Value<U32> r) { reduce(x.At(b.MulWide(r, cols)), tid, cols, s.block, r); });
  }
  b.Ret();
}

template <ScalarTag T>
void ReduceBodyFor(KernelBuilder& b, const ReduceSpec& s) {
  switch (s.op) {
    case Reduction::kSum: ReduceBody<T, Reduction::kSum>(b, s); break;
    case Reduction::kMax: ReduceBody<T, Reduction::kMax>(b, s); break;
    case Reduction::kMin: ReduceBody<T, Reduction::kMin>(b, s); break;
    case Reduction::kArgmax: ReduceBody<T, Reduction::kArgmax>(b, s); break;
  }
}

template <typename E, size_t N>
absl::StatusOr<E> ParseName(std::string_view key, std::string_view value, const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == value) return static_cast<E>(i);
  }
  return absl::InvalidArgumentError(
      StrCat("reduce: ", key, "=", value, " is not supported; choose one of ", StrJoin(names, ", ")));
}

// a > b, with +0 above -0 (what max/min's keys order).
bool Above(double a, double b) { return a > b || (a == 0 && b == 0 && !std::signbit(a) && std::signbit(b)); }

// ---- reduce_sum

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

// ---- reduce: the public API

ReduceValue ReduceReference(Reduction op, ir::ScalarType type, std::span<const double> values,
                            std::span<const uint32_t> indices) {
  const bool is_float = ir::IsFloat(type);
  const bool s32 = type == ir::ScalarType::kS32;
  const double lowest = is_float ? -std::numeric_limits<double>::infinity() : s32 ? double{INT32_MIN} : 0.0;
  const double highest = is_float ? std::numeric_limits<double>::infinity() : s32 ? double{INT32_MAX} : double{UINT32_MAX};
  ReduceValue r{.value = op == Reduction::kSum ? 0 : op == Reduction::kMin ? highest : lowest};
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    const uint32_t index = indices.empty() ? static_cast<uint32_t>(i) : indices[i];
    switch (op) {
      case Reduction::kSum: r.value += v; break;
      case Reduction::kMax: if (std::isnan(v) || Above(v, r.value)) r.value = v; break;
      case Reduction::kMin: if (std::isnan(v) || Above(r.value, v)) r.value = v; break;
      case Reduction::kArgmax: {
        const bool tie = (v == r.value || (std::isnan(v) && std::isnan(r.value))) && index < r.index;
        if (tie || (std::isnan(v) && !std::isnan(r.value)) || v > r.value) r = {v, index};
        break;
      }
    }
  }
  return r;
}

absl::Status ReduceSpec::Validate() const {
  if (std::find(kReduceTypes.begin(), kReduceTypes.end(), type) == kReduceTypes.end()) {
    return absl::InvalidArgumentError(
        StrCat("reduce: type ", ir::TypeName(type), " is not supported (f32, f16, bf16, s32, u32)"));
  }
  if (static_cast<size_t>(op) >= kOpNames.size() || static_cast<size_t>(mode) >= kModeNames.size()) {
    return absl::InvalidArgumentError("reduce: unknown op or mode");
  }
  if (block < 32 || block > 1024 || block % 32 != 0) {
    return absl::InvalidArgumentError(StrCat("reduce: block=", block, " must be a multiple of 32 in 32..1024"));
  }
  return absl::OkStatus();
}

std::string ReduceSpec::KernelName() const {
  return StrCat("reduce_", kModeNames[static_cast<size_t>(mode)], "_", kOpNames[static_cast<size_t>(op)], "_",
                ir::TypeName(type), "_b", block);
}

absl::StatusOr<ir::Kernel> ReduceSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  if (absl::Status s = CheckTypeOnTarget("reduce", type, target); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  switch (type) {
    case ir::ScalarType::kF16: ReduceBodyFor<F16>(b, *this); break;
    case ir::ScalarType::kBF16: ReduceBodyFor<BF16>(b, *this); break;
    case ir::ScalarType::kS32: ReduceBodyFor<S32>(b, *this); break;
    case ir::ScalarType::kU32: ReduceBodyFor<U32>(b, *this); break;
    default: ReduceBodyFor<F32>(b, *this); break;
  }
  return b.Finish();
}

absl::StatusOr<runtime::Buffer<uint8_t>> ReduceTensor(runtime::Device& device, ir::ScalarType type, Reduction op,
                                                      runtime::BufferView<uint8_t> x, uint32_t n, ir::Target target,
                                                      uint32_t block) {
  using runtime::Buffer;
  const ReduceSpec spec{.type = type, .op = op, .mode = ReduceMode::kTensor, .block = block};
  absl::StatusOr<ir::Kernel> kernel = spec.Build(target);
  if (!kernel.ok()) return kernel.status();
  if (n == 0 || n > (1u << 31)) {
    return absl::InvalidArgumentError(StrCat("ReduceTensor: n=", n, " must be in 1..2147483648"));
  }
  const uint64_t size = ir::TypeSize(type);
  if (x.bytes() != n * size) {
    return absl::InvalidArgumentError(StrCat("ReduceTensor: x holds ", x.bytes(), " bytes; n=", n, " ",
                                             ir::TypeName(type), " elements need ", n * size));
  }
  if (absl::Status s = passes::Pipeline::Standard().Run(*kernel); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> loaded = device.Load(*kernel);
  if (!loaded.ok()) return loaded.status();
  const uint32_t grid = static_cast<uint32_t>(std::min<uint64_t>((uint64_t{n} + block - 1) / block, 1024));
  const bool argmax = op == Reduction::kArgmax;
  absl::StatusOr<Buffer<uint8_t>> partial = Buffer<uint8_t>::Allocate(device, grid * size);
  if (!partial.ok()) return partial.status();
  absl::StatusOr<Buffer<uint32_t>> partial_index = Buffer<uint32_t>::Allocate(device, grid);
  if (!partial_index.ok()) return partial_index.status();
  absl::StatusOr<Buffer<uint8_t>> result = Buffer<uint8_t>::Allocate(device, argmax ? 4 : size);
  if (!result.ok()) return result.status();
  // Argmax: the values go to `value`, the indices to `result`.
  absl::StatusOr<Buffer<uint8_t>> value = Buffer<uint8_t>::Allocate(device, size);
  if (!value.ok()) return value.status();
  auto launch = [&](runtime::KernelArg in, runtime::KernelArg in_index, runtime::KernelArg out,
                    runtime::KernelArg out_index, uint32_t count, uint32_t blocks) {
    const runtime::LaunchConfig config{.grid = {blocks}, .block = {block}};
    if (argmax) return device.Launch(**loaded, config, {in, in_index, out, out_index, count});
    return device.Launch(**loaded, config, {in, out, count});
  };
  const runtime::KernelArg none = uint64_t{0};
  absl::Status s = grid == 1 ? launch(x, none, argmax ? *value : *result, *result, n, 1)
                             : launch(x, none, *partial, *partial_index, n, grid);
  if (s.ok() && grid > 1) s = launch(*partial, *partial_index, argmax ? *value : *result, *result, grid, 1);
  if (s.ok()) s = device.Synchronize();
  if (!s.ok()) return s;
  return std::move(*result);
}

std::span<const ConfigField> ReduceFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "storage type: f32, f16, bf16 (f32 math), s32, u32"},
      {"op", "sum", "sum, max, min, argmax (u32 index, ties to the lower index; NaN wins)"},
      {"mode", "rows", "rows: x [rows, cols] -> out [rows]; tensor: per-block partials of x [n]"},
      {"block", "256", "threads per block (.reqntid), a multiple of 32 in 32..1024"},
      {"rows", "5", "test shape (rows mode): rows"},
      {"cols", "1000", "test shape (rows mode): columns"},
      {"n", "5000", "test shape (tensor mode): elements"},
      {"grid", "3", "test shape: blocks"},
  };
  return kFields;
}

absl::StatusOr<ReduceSpec> ReduceFamily::SpecFrom(const Config& config) const {
  ReduceSpec spec;
  if (absl::Status s = config.GetTypeAndBlock(kReduceTypes, &spec.type, &spec.block); !s.ok()) return s;
  absl::StatusOr<std::string> op = config.GetString("op"), mode = config.GetString("mode");
  if (!op.ok()) return op.status();
  if (!mode.ok()) return mode.status();
  absl::StatusOr<Reduction> o = ParseName<Reduction>("op", *op, kOpNames);
  if (!o.ok()) return o.status();
  absl::StatusOr<ReduceMode> m = ParseName<ReduceMode>("mode", *mode, kModeNames);
  if (!m.ok()) return m.status();
  spec.op = *o;
  spec.mode = *m;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> ReduceFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<ReduceSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<uint32_t> rows = config.GetU32("rows"), cols = config.GetU32("cols"), n = config.GetU32("n"),
                           grid = config.GetU32("grid");
  for (const auto* v : {&rows, &cols, &n, &grid}) {
    if (!v->ok()) return v->status();
  }
  if (*rows == 0 || *cols == 0 || *n == 0 || *grid == 0) {
    return absl::InvalidArgumentError("reduce: rows, cols, n and grid must be positive");
  }
  if (*n > (1u << 31)) return absl::InvalidArgumentError("reduce: n must be at most 2147483648");
  if (*grid > 0x7FFFFFFFu) return absl::InvalidArgumentError("reduce: grid must be at most 2147483647 (CUDA's limit)");
  const bool tensor = spec->mode == ReduceMode::kTensor, argmax = spec->op == Reduction::kArgmax;
  const uint64_t count = tensor ? *n : uint64_t{*rows} * *cols, outputs = tensor ? *grid : *rows;
  // x and its double copy; the outputs, their expected values and the references.
  if (absl::Status s = CheckProblemSize("reduce", tensor ? StrCat("n=", *n, " grid=", *grid)
                                                         : StrCat("rows=", *rows, " cols=", *cols),
                                        {{count, 4 + 8 + 4}, {outputs, 2 * (4 + 4) + 16}});
      !s.ok()) {
    return s;
  }
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = spec->type;
  const bool sum = spec->op == Reduction::kSum;
  TestProblem p;
  // Sums: uniform values (integers over the whole range, to wrap); max, min,
  // argmax: integers in [-8, 8) (u32: [0, 16)), so that rows have ties.
  const double lo = ir::IsFloat(t) || t == ir::ScalarType::kS32 ? (sum ? -10 : -8) : 0;
  const double hi = ir::IsFloat(t) ? (sum ? 10 : 8) : t == ir::ScalarType::kS32 ? (sum ? 2147483648.0 : 8) : (sum ? 4294967296.0 : 16);
  p.buffers.push_back(RandomBuffer("x", t, count, rng, sum && t == ir::ScalarType::kS32 ? -2147483648.0 : lo, hi));
  std::vector<double> x = AsDoubles(t, p.buffers[0].data);
  if (!sum && ir::IsFloat(t)) {
    for (double& v : x) v = std::floor(v);
    p.buffers[0].data = FromDoubles(t, x);
  }
  // Group g: the elements row g reduces, or block g's elements j with (j mod (grid * block)) / block == g.
  std::vector<std::vector<double>> groups(outputs);
  std::vector<std::vector<uint32_t>> indices(outputs);
  std::vector<double> abs_sum(outputs, 0.0);
  for (uint64_t j = 0; j < count; ++j) {
    const uint64_t g = tensor ? (j % (uint64_t{*grid} * spec->block)) / spec->block : j / *cols;
    groups[g].push_back(x[j]);
    indices[g].push_back(static_cast<uint32_t>(tensor ? j : j % *cols));
    abs_sum[g] += std::fabs(x[j]);
  }
  std::vector<double> values(outputs), index_values(outputs);
  for (uint64_t g = 0; g < outputs; ++g) {
    ReduceValue r = ReduceReference(spec->op, t, groups[g], indices[g]);
    values[g] = r.value;
    index_values[g] = r.index;
  }
  HostBuffer out = ZeroBuffer("out", argmax && !tensor ? ir::ScalarType::kU32 : t, outputs);
  out.is_output = true;
  out.expected = FromDoubles(out.type, argmax && !tensor ? index_values : values);
  if (sum && ir::IsFloat(t)) {
    // DefaultTolerance covers rounding the result and the expected value to
    // the storage type (2u: f32 1.2e-7, f16 9.8e-4, bf16 7.8e-3). Adding m
    // elements per thread and then log2(block) tree levels in f32 adds at
    // most (m - 1 + log2(block)) * 2^-24 * sum |x|; magnitude is the largest
    // sum |x| of a row (block).
    const double per_thread = static_cast<double>(tensor ? *n : *cols) / spec->block / (tensor ? *grid : 1);
    out.tolerance = DefaultTolerance(t) + (std::ceil(per_thread) + std::log2(spec->block)) * 0x1p-24;
    out.magnitude = *std::max_element(abs_sum.begin(), abs_sum.end());
  }
  p.buffers.push_back(std::move(out));
  p.args = {size_t{0}, size_t{1}};
  if (tensor && argmax) {
    HostBuffer out_index = ZeroBuffer("out_index", ir::ScalarType::kU32, outputs);
    out_index.is_output = true;
    out_index.expected = FromDoubles(ir::ScalarType::kU32, index_values);
    p.buffers.push_back(std::move(out_index));
    p.args = {size_t{0}, Scalar(ir::ScalarType::kU64, 0), size_t{1}, size_t{2}};
  }
  if (tensor) {
    p.args.push_back(ScalarU32(*n));
  } else {
    p.args.push_back(ScalarU32(*rows));
    p.args.push_back(ScalarU32(*cols));
  }
  p.block = {spec->block, 1, 1};
  p.grid = {*grid, 1, 1};
  p.shape = tensor ? StrCat("n=", *n, " grid=", *grid) : StrCat("rows=", *rows, " cols=", *cols, " grid=", *grid);
  return p;
}

// ---- reduce_sum

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
