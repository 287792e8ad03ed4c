// lstm.cell, written with the builder.
#include "kernels/lstm.h"

#include <array>
#include <random>

#include "builder/kernel_builder.h"
#include "ir/strings.h"
#include "kernels/accumulate.h"
#include "kernels/kernel_math.h"
#include "kernels/type_dispatch.h"

namespace ptxforge::kernels {
namespace {

using ir::StateSpace;
constexpr StateSpace kGlobal = StateSpace::kGlobal;
constexpr StateSpace kShared = StateSpace::kShared;
constexpr MemOpts kReadOnly = {.nc = true};
constexpr std::array kTypes = {ir::ScalarType::kF32, ir::ScalarType::kF64};
constexpr uint32_t kTileJ = 32;             // hidden units per block (threadIdx.x)
constexpr uint32_t kTileK = 32;             // reduction columns staged per step
constexpr uint32_t kStride = kTileK + 1;    // padded weight-tile row: conflict-free column reads
constexpr uint32_t kGateTile = kTileJ * kStride;

// 1 / (1 + e^-x): Exp2 (kernels/kernel_math.h) and an IEEE reciprocal.
template <ScalarTag T>
Value<T> Sigmoid(KernelBuilder& b, Value<T> x) {
  using C = typename T::CType;
  Value<T> y = b.Mul(x, static_cast<C>(-kLog2E));
  Value<T> e = Exp2(b, y);
  Value<T> denominator = b.Add(e, C{1});
  return b.Rcp(denominator);
}

// tanh(x) = 2 sigmoid(2x) - 1 (saturates cleanly at both ends).
template <ScalarTag T>
Value<T> TanhOf(KernelBuilder& b, Value<T> x) {
  using C = typename T::CType;
  Value<T> twice = b.Add(x, x);
  Value<T> s = Sigmoid<T>(b, twice);
  return b.Fma(s, C{2}, C{-1});
}

template <ScalarTag T>
void Body(KernelBuilder& b, uint32_t bt) {
  using C = typename T::CType;
  constexpr int64_t kSize = ir::TypeSize(T::kType);
  const uint32_t rows_per_thread = kTileJ / bt;
  b.SetRequiredThreads(kTileJ, bt);
  Value<U64> x = b.CvtaToGlobal(b.Param<U64>("x"));
  Value<U64> h_prev = b.CvtaToGlobal(b.Param<U64>("h_prev"));
  Value<U64> c_prev = b.CvtaToGlobal(b.Param<U64>("c_prev"));
  Value<U64> w_x = b.CvtaToGlobal(b.Param<U64>("w_x"));
  Value<U64> w_h = b.CvtaToGlobal(b.Param<U64>("w_h"));
  Value<U64> bias = b.CvtaToGlobal(b.Param<U64>("bias"));
  Value<U64> h_out = b.CvtaToGlobal(b.Param<U64>("h_out"));
  Value<U64> c_out = b.CvtaToGlobal(b.Param<U64>("c_out"));
  Value<U32> batch = b.Param<U32>("batch");
  Value<U32> hidden = b.Param<U32>("hidden");
  Value<U32> input = b.Param<U32>("input");
  // w_tile[q][r][kk]: gate q's weight rows j0 + r, columns k0 + kk (padded);
  // v_tile[bb][kk]: x (or h_prev) rows b0 + bb, the same columns.
  Symbol<T> w_tile = b.template Shared<T>("w_tile", 4 * kGateTile);
  Symbol<T> v_tile = b.template Shared<T>("v_tile", bt * kTileK);

  Value<U32> tx = b.Name(b.TidX(), "tx");
  Value<U32> ty = b.Name(b.TidY(), "ty");
  Value<U32> ctaid_x = b.CtaidX();
  Value<U32> ctaid_y = b.CtaidY();
  Value<U32> j0 = b.Name(b.Mul(ctaid_x, kTileJ), "j0");
  Value<U32> b0 = b.Name(b.Mul(ctaid_y, bt), "b0");
  Value<U32> j = b.Name(b.Add(j0, tx), "j");
  Value<U32> row_b = b.Name(b.Add(b0, ty), "row_b");
  Value<U32> w_base = b.SymbolAddr(w_tile);
  Value<U32> v_base = b.SymbolAddr(v_tile);
  Value<U32> w_store_index = b.Mad(ty, kStride, tx);
  Value<U32> w_store = b.Name(b.Mad(w_store_index, static_cast<uint32_t>(kSize), w_base), "w_store");
  Value<U32> v_store_index = b.Mad(ty, kTileK, tx);
  Value<U32> v_store = b.Name(b.Mad(v_store_index, static_cast<uint32_t>(kSize), v_base), "v_store");
  Value<U32> w_read = b.Name(b.Mad(tx, static_cast<uint32_t>(kStride * kSize), w_base), "w_read");
  Value<U32> v_read = b.Name(b.Mad(ty, static_cast<uint32_t>(kTileK * kSize), v_base), "v_read");
  // This thread loads weight rows j0 + ty + bt*i (i < 32/bt) of each gate.
  Value<U32> w_row = b.Add(j0, ty);
  std::vector<Value<Pred>> row_ok;
  for (uint32_t i = 0; i < rows_per_thread; ++i) {
    Value<U32> row = b.Add(w_row, bt * i);
    row_ok.push_back(b.Lt(row, hidden));
  }
  Value<Pred> batch_ok = b.Lt(row_b, batch);
  Value<T> zero = b.template Const<T>(C{0});
  std::array<Var<T>, 4> acc;
  for (Var<T>& a : acc) a = b.template Mutable<T>(C{0}, "acc");

  // acc[q] += W[qH + j] . v[row_b] over k < columns, 32 columns per step.
  auto accumulate = [&](Value<U64> w, Value<U64> v, Value<U32> columns) {
    Value<U32> row_bytes = b.Mul(columns, static_cast<uint32_t>(kSize));
    Value<U64> w_col = b.template ElementAddr<T>(w, tx);
    Value<U64> w_row_offset = b.MulWide(w_row, row_bytes);
    Var<U64> w_ptr = b.template Mutable<U64>(b.Add(w_col, w_row_offset), "w_ptr");
    Value<U64> v_col = b.template ElementAddr<T>(v, tx);
    Value<U64> v_row_offset = b.MulWide(row_b, row_bytes);
    Var<U64> v_ptr = b.template Mutable<U64>(b.Add(v_col, v_row_offset), "v_ptr");
    Value<U64> gate_stride = b.MulWide(hidden, row_bytes);
    Value<U64> row_stride = b.MulWide(row_bytes, bt);
    b.template ForRange<U32>(0u, columns, kTileK, [&](Value<U32> k0) {
      Value<U32> k = b.Add(k0, tx);
      Value<Pred> k_ok = b.Lt(k, columns);
      Value<U64> row_addr = w_ptr;
      for (uint32_t i = 0; i < rows_per_thread; ++i) {
        if (i > 0) row_addr = b.Add(row_addr, row_stride);
        Value<Pred> ok = b.And(row_ok[i], k_ok);
        auto at = [&](uint32_t q) { return int64_t{kSize} * (q * kGateTile + bt * i * kStride); };
        b.IfElse(
            ok,
            [&] {
              Value<U64> addr = row_addr;
              for (uint32_t q = 0; q < 4; ++q) {
                if (q > 0) addr = b.Add(addr, gate_stride);
                Value<T> value = b.template Load<T>(kGlobal, addr, kReadOnly);
                b.Store(kShared, Address(w_store, at(q)), value);
              }
            },
            [&] {
              for (uint32_t q = 0; q < 4; ++q) b.Store(kShared, Address(w_store, at(q)), zero);
            });
      }
      Value<Pred> v_ok = b.And(batch_ok, k_ok);
      b.IfElse(
          v_ok,
          [&] {
            Value<T> value = b.template Load<T>(kGlobal, v_ptr, kReadOnly);
            b.Store(kShared, v_store, value);
          },
          [&] { b.Store(kShared, v_store, zero); });
      b.BarSync();
      for (uint32_t kk = 0; kk < kTileK; ++kk) {
        Value<T> vk = b.template Load<T>(kShared, Address(v_read, int64_t{kSize} * kk));
        for (uint32_t q = 0; q < 4; ++q) {
          Value<T> wk = b.template Load<T>(kShared, Address(w_read, int64_t{kSize} * (q * kGateTile + kk)));
          FmaInto(b, acc[q], wk, vk);
        }
      }
      b.BarSync();
      b.Assign(w_ptr, b.template Add<U64>(w_ptr, uint64_t{kTileK * kSize}));
      b.Assign(v_ptr, b.template Add<U64>(v_ptr, uint64_t{kTileK * kSize}));
    });
  };
  accumulate(w_x, x, input);
  accumulate(w_h, h_prev, hidden);

  Value<Pred> j_ok = b.Lt(j, hidden);
  Value<Pred> active = b.And(j_ok, batch_ok);
  b.If(active, [&] {
    Value<U64> bias_addr = b.template ElementAddr<T>(bias, j);
    Value<U64> gate_bytes = b.MulWide(hidden, static_cast<uint32_t>(kSize));
    std::array<Value<T>, 4> pre;
    for (uint32_t q = 0; q < 4; ++q) {
      if (q > 0) bias_addr = b.Add(bias_addr, gate_bytes);
      Value<T> bias_q = b.template Load<T>(kGlobal, bias_addr, kReadOnly);
      pre[q] = b.Add(static_cast<Value<T>>(acc[q]), bias_q);
    }
    Value<T> in_gate = Sigmoid<T>(b, pre[0]);
    Value<T> forget_gate = Sigmoid<T>(b, pre[1]);
    Value<T> cell_gate = TanhOf<T>(b, pre[2]);
    Value<T> out_gate = Sigmoid<T>(b, pre[3]);
    Value<U32> at = b.Mad(row_b, hidden, j);
    Value<T> c_old = b.template Load<T>(kGlobal, b.template ElementAddr<T>(c_prev, at), kReadOnly);
    Value<T> fresh = b.Mul(in_gate, cell_gate);
    Value<T> c = b.Fma(forget_gate, c_old, fresh);
    Value<T> tanh_c = TanhOf<T>(b, c);
    Value<T> h = b.Mul(out_gate, tanh_c);
    b.Store(kGlobal, b.template ElementAddr<T>(h_out, at), h);
    b.Store(kGlobal, b.template ElementAddr<T>(c_out, at), c);
  });
  b.Ret();
}

}  // namespace

absl::Status LstmCellSpec::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(StrCat("lstm.cell: type ", ir::TypeName(type), " is not supported (f32, f64)"));
  }
  if (batch_tile != 4 && batch_tile != 8 && batch_tile != 16 && batch_tile != 32) {
    return absl::InvalidArgumentError(StrCat("lstm.cell: batch_tile=", batch_tile, " must be 4, 8, 16 or 32"));
  }
  if (batch == 0) return absl::InvalidArgumentError("lstm.cell: batch must be positive");
  if (hidden == 0) return absl::InvalidArgumentError("lstm.cell: hidden must be positive");
  if (input == 0) return absl::InvalidArgumentError("lstm.cell: input must be positive");
  return absl::OkStatus();
}

std::string LstmCellSpec::KernelName() const { return StrCat("lstm_cell_", ir::TypeName(type), "_bt", batch_tile); }

absl::StatusOr<ir::Kernel> LstmCellSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  if (type == ir::ScalarType::kF64) {
    Body<F64>(b, batch_tile);
  } else {
    Body<F32>(b, batch_tile);
  }
  return b.Finish();
}

std::span<const ConfigField> LstmCellFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "element type: f32, f64"},
      {"batch_tile", "8", "batch rows per block (threadIdx.y): 4, 8, 16 or 32"},
      {"batch", "3", "test shape: batch rows"},
      {"hidden", "45", "test shape: hidden units"},
      {"input", "37", "test shape: input features"},
  };
  return kFields;
}

absl::StatusOr<LstmCellSpec> LstmCellFamily::SpecFrom(const Config& config) const {
  LstmCellSpec spec;
  absl::StatusOr<ir::ScalarType> type = config.GetType("type", kTypes);
  if (!type.ok()) return type.status();
  spec.type = *type;
  const std::pair<const char*, uint32_t*> fields[] = {
      {"batch_tile", &spec.batch_tile}, {"batch", &spec.batch}, {"hidden", &spec.hidden}, {"input", &spec.input}};
  for (const auto& [key, out] : fields) {
    absl::StatusOr<uint32_t> v = config.GetU32(key);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> LstmCellFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<LstmCellSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  const ir::ScalarType t = spec->type;
  const uint32_t batch = spec->batch, hidden = spec->hidden, input = spec->input;
  std::mt19937_64 rng(seed);
  TestProblem p;
  p.buffers.push_back(RandomBuffer("x", t, size_t{batch} * input, rng, -1, 1));
  p.buffers.push_back(RandomBuffer("h_prev", t, size_t{batch} * hidden, rng, -1, 1));
  p.buffers.push_back(RandomBuffer("c_prev", t, size_t{batch} * hidden, rng, -2, 2));
  p.buffers.push_back(RandomBuffer("w_x", t, size_t{4} * hidden * input, rng, -0.3, 0.3));
  p.buffers.push_back(RandomBuffer("w_h", t, size_t{4} * hidden * hidden, rng, -0.3, 0.3));
  p.buffers.push_back(RandomBuffer("bias", t, size_t{4} * hidden, rng, -0.5, 0.5));
  std::vector<std::vector<double>> in;
  for (const HostBuffer& h : p.buffers) in.push_back(AsDoubles(t, h.data));
  std::vector<double> h(size_t{batch} * hidden), c(size_t{batch} * hidden);
  LstmCellReference<double>(in[0], in[1], in[2], in[3], in[4], in[5], batch, hidden, input, h, c);
  // KERNELS.md: f64 1e-12; f32 1e-4 (ex2.approx).
  const double tolerance = t == ir::ScalarType::kF64 ? 1e-12 : 1e-4;
  for (auto [name, values] : {std::pair{"h_out", &h}, std::pair{"c_out", &c}}) {
    HostBuffer out = ZeroBuffer(name, t, values->size());
    out.is_output = true;
    out.tolerance = tolerance;
    out.expected = FromDoubles(t, *values);
    p.buffers.push_back(std::move(out));
  }
  p.args = {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5}, size_t{6}, size_t{7},
            ScalarU32(batch), ScalarU32(hidden), ScalarU32(input)};
  p.block = {kTileJ, spec->batch_tile, 1};
  p.grid = {(hidden + kTileJ - 1) / kTileJ, (batch + spec->batch_tile - 1) / spec->batch_tile, 1};
  p.shape = StrCat("batch=", batch, " hidden=", hidden, " input=", input);
  return p;
}

}  // namespace ptxforge::kernels
