// gemm.simt, written with the builder's helpers.
#include "kernels/gemm_simt.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "builder/memory.h"
#include "ir/strings.h"
#include "kernels/accumulate.h"

namespace ptxforge::kernels {
namespace {

constexpr uint32_t kSlab = 8;  // K per step
constexpr ir::StateSpace kShared = ir::StateSpace::kShared;

void Body(KernelBuilder& b, const GemmSimtSpec& s) {
  const uint32_t bm = s.block_m, bn = s.block_n, tm = s.thread_m, tn = s.thread_n, nt = s.threads();
  const uint32_t la = bm * kSlab / nt, sa = bm + 4;  // As rows padded by 4 floats: its stores hit 32 banks
  const uint32_t bs = 4 * kSlab * sa, buf_bytes = bs + 4 * kSlab * bn;  // a buffer: As [8][sa], then Bs [8][bn]
  const uint32_t gap_m = bm * 4 / tm, gap_n = bn * 4 / tn;               // between a thread's 4x4 pieces
  b.SetRequiredThreads(nt);
  auto a = GlobalParam<F32>(b, "a"), bg = GlobalParam<F32>(b, "b"), c = GlobalParam<F32>(b, "c");
  Value<U32> m = b.Param<U32>("m"), n = b.Param<U32>("n"), k = b.Param<U32>("k");
  Value<F32> alpha = b.Param<F32>("alpha"), beta = b.Param<F32>("beta");
  Value<U32> smem = SharedArray<F32>(b, "smem", buf_bytes / 2, 16).base(), tid = b.TidX();
  Value<U32> tx4 = b.Shl(b.And(tid, bn / tn - 1), 2u), ty4 = b.Shl(b.Shr(tid, std::countr_zero(bn / tn)), 2u);
  Value<U32> m0 = b.Mul(b.CtaidY(), bm), n0 = b.Mul(b.CtaidX(), bn);
  Value<U32> a_m = b.Add(m0, b.Shr(tid, 3u)), a_k = b.And(tid, kSlab - 1);
  Value<U32> b_k = b.Shr(tid, std::countr_zero(bn)), b_n = b.Add(n0, b.And(tid, bn - 1));

  // The slab at k0 into registers (0 outside the matrices): thread t takes the slab's elements t + e, e = 0, nt,
  // 2 * nt, ...: A's (m, k) = (t / 8 + e / 8, t % 8), B's (k, n) = (t / bn + e / bn, t % bn + e % bn).
  auto load = [&](const Ptr<F32, Global>& p, Value<U32> row, Value<U32> col, Value<U32> rows, Value<U32> cols) {
    Var<F32> v = b.Mutable<F32>(0.0f);
    b.If(InBounds2D(b, row, col, rows, cols), [&] { b.Assign(v, p.At(b.MulWide(row, cols)).Load(col)); });
    return Value<F32>(v);
  };
  auto fetch = [&](Src<U32> k0) {
    std::vector<Value<F32>> v;
    Value<U32> ak = b.Add(a_k, k0), bk = b.Add(b_k, k0);
    for (uint32_t e = 0; e < kSlab * bm; e += nt) v.push_back(load(a, b.Add(a_m, e / kSlab), ak, m, k));
    for (uint32_t e = 0; e < kSlab * bn; e += nt) {
      Value<U32> col = b.Add(b_n, e % bn);  // one statement each: C++ leaves the order of arguments open
      v.push_back(load(bg, b.Add(bk, e / bn), col, k, n));
    }
    return v;
  };
  // ... and from registers into the buffer at byte offset `buf`: As[k][m] (transposed), Bs[k][n] (at t + e).
  Value<U32> a_st = b.Mad(a_k, 4 * sa, b.Mad(b.Shr(tid, 3u), 4u, smem)), b_st = b.Mad(tid, 4u, b.Add(smem, bs));
  auto stash = [&](const std::vector<Value<F32>>& v, Src<U32> buf) {
    Ptr<F32, Shared> pa(b, b.Add(a_st, buf)), pb(b, b.Add(b_st, buf));
    for (uint32_t j = 0; j < v.size(); ++j) (j < la ? pa.At(j * nt / kSlab) : pb.At((j - la) * nt)).Store(v[j]);
  };
  // A thread's fragment of a shared row: 4 * pieces floats from p + 4 * offset, in pieces of 4 `gap` apart (v4).
  auto fragment = [&](Value<U32> p, uint32_t offset, uint32_t pieces, uint32_t gap) {
    std::vector<Value<F32>> f;
    for (uint32_t g = 0; g < pieces; ++g) {
      for (Value<F32> x : b.LoadVec<F32, 4>(kShared, Address(p, 4 * (offset + g * gap)))) f.push_back(x);
    }
    return f;
  };

  std::vector<Var<F32>> acc;
  for (uint32_t i = 0; i < tm * tn; ++i) acc.push_back(b.Mutable<F32>(0.0f, "acc"));
  Value<U32> a_rd = b.Mad(ty4, 4u, smem), b_rd = b.Mad(tx4, 4u, b.Add(smem, bs));
  Var<U32> buf = b.Mutable<U32>(0u, "buf");
  stash(fetch(0u), 0u);
  b.BarSync();
  b.ForRange<U32>(0u, k, kSlab, [&](Value<U32> k0) {
    std::vector<Value<F32>> next = fetch(b.Add(k0, kSlab));  // zeros past K
    Value<U32> pa = b.Add(a_rd, buf), pb = b.Add(b_rd, buf);
    for (uint32_t kk = 0; kk < kSlab; ++kk) {
      std::vector<Value<F32>> fa = fragment(pa, kk * sa, tm / 4, gap_m), fb = fragment(pb, kk * bn, tn / 4, gap_n);
      for (uint32_t i = 0; i < tm * tn; ++i) FmaInto(b, acc[i], fa[i / tn], fb[i % tn]);
    }
    Value<U32> other = b.Xor(buf, buf_bytes);
    stash(next, other);
    b.BarSync();
    b.Assign(buf, other);
  });

  // C = alpha * acc + beta * C; beta == 0 does not read C (unordered: a NaN
  // beta reads it and gives NaN, as beta * C does).
  Value<Pred> read_c = b.Setp(ir::CmpOp::kNeu, beta, 0.0f);
  Value<U32> row0 = b.Add(m0, ty4), col0 = b.Add(n0, tx4);
  for (uint32_t i = 0; i < tm * tn; ++i) {
    Value<U32> row = b.Add(row0, i / tn / 4 * gap_m + i / tn % 4), col = b.Add(col0, i % tn / 4 * gap_n + i % 4);
    b.If(InBounds2D(b, row, col, m, n), [&] {
      Ptr<F32, Global> p = c.At(b.MulWide(row, n)).At(col);
      Var<F32> v = b.Mutable<F32>(b.Mul(acc[i], alpha));
      b.If(read_c, [&] { b.Assign(v, b.Fma(p.Load(), beta, v)); });
      p.Store(v);
    });
  }
  b.Ret();
}

}  // namespace

std::vector<double> GemmSimtReference(std::span<const double> a, std::span<const double> b, std::span<const double> c,
                                      uint32_t m, uint32_t n, uint32_t k, double alpha, double beta) {
  std::vector<double> out(size_t{m} * n);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      double sum = 0;
      for (uint32_t l = 0; l < k; ++l) sum += a[size_t{i} * k + l] * b[size_t{l} * n + j];
      out[size_t{i} * n + j] = alpha * sum + (beta == 0 ? 0.0 : beta * c[size_t{i} * n + j]);
    }
  }
  return out;
}

absl::Status GemmSimtSpec::Validate() const {
  if (type != ir::ScalarType::kF32) {
    return absl::InvalidArgumentError(StrCat("gemm.simt: type ", ir::TypeName(type), " is not supported (f32 only)"));
  }
  for (auto [name, v] : {std::pair{"block_m", block_m}, std::pair{"block_n", block_n}}) {
    if (v != 32 && v != 64 && v != 128) {
      return absl::InvalidArgumentError(StrCat("gemm.simt: ", name, "=", v, " must be 32, 64 or 128"));
    }
  }
  for (auto [name, v] : {std::pair{"thread_m", thread_m}, std::pair{"thread_n", thread_n}}) {
    if (v != 4 && v != 8) return absl::InvalidArgumentError(StrCat("gemm.simt: ", name, "=", v, " must be 4 or 8"));
  }
  return absl::OkStatus();
}

std::string GemmSimtSpec::KernelName() const {
  return StrCat("gemm_simt_", ir::TypeName(type), "_", block_m, "x", block_n, "_", thread_m, "x", thread_n);
}

absl::StatusOr<ir::Kernel> GemmSimtSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  Body(b, *this);
  return b.Finish();
}

std::span<const ConfigField> GemmSimtFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "element type: f32 only"},
      {"block_m", "128", "block tile rows: 32, 64, 128"},
      {"block_n", "128", "block tile columns: 32, 64, 128"},
      {"thread_m", "8", "thread tile rows: 4, 8 (threads per block: block_m/thread_m * block_n/thread_n)"},
      {"thread_n", "8", "thread tile columns: 4, 8"},
      {"m", "130", "test shape: rows of A and C"},
      {"n", "67", "test shape: columns of B and C"},
      {"k", "19", "test shape: columns of A, rows of B"},
      {"alpha", "1.5", "test value of alpha"},
      {"beta", "-0.5", "test value of beta (0: C starts as NaN and must not be read)"},
  };
  return kFields;
}

absl::StatusOr<GemmSimtSpec> GemmSimtFamily::SpecFrom(const Config& config) const {
  static constexpr std::array kTypes = {ir::ScalarType::kF32};
  GemmSimtSpec spec;
  absl::StatusOr<ir::ScalarType> type = config.GetType("type", kTypes);
  if (!type.ok()) return type.status();
  spec.type = *type;
  for (auto [key, field] : {std::pair{"block_m", &spec.block_m}, std::pair{"block_n", &spec.block_n},
                            std::pair{"thread_m", &spec.thread_m}, std::pair{"thread_n", &spec.thread_n}}) {
    absl::StatusOr<uint32_t> v = config.GetU32(key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> GemmSimtFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<GemmSimtSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<GemmTestShape> dims = GetGemmTestShape("gemm.simt", config);
  if (!dims.ok()) return dims.status();
  const uint32_t m = dims->m, n = dims->n, k = dims->k;
  const float alpha = static_cast<float>(dims->alpha), beta = static_cast<float>(dims->beta);
  const std::string shape = StrCat("m=", m, " n=", n, " k=", k, " alpha=", alpha, " beta=", beta);
  // Each element: its f32 data and a double copy; C also its expected f32 and the reference's double.
  if (absl::Status s = CheckProblemSize("gemm.simt", shape,
                                        {{uint64_t{m} * k, 12}, {uint64_t{k} * n, 12}, {uint64_t{m} * n, 24}});
      !s.ok()) {
    return s;
  }
  absl::StatusOr<uint32_t> grid_y = GridYFor("gemm.simt", "m", m, spec->block_m);
  if (!grid_y.ok()) return grid_y.status();
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = ir::ScalarType::kF32;
  TestProblem p;
  p.buffers.push_back(RandomBuffer("a", t, size_t{m} * k, rng, -1, 1));
  p.buffers.push_back(RandomBuffer("b", t, size_t{k} * n, rng, -1, 1));
  // beta == 0: C starts as NaN, which the kernel must overwrite without reading.
  HostBuffer c = RandomBuffer("c", t, size_t{m} * n, rng, -1, 1);
  if (beta == 0) c.data = FromDoubles(t, std::vector<double>(c.count(), std::numeric_limits<double>::quiet_NaN()));
  c.is_output = true;
  // |a|, |b|, |c| <= 1: the k fma roundings, alpha's, beta's and the expected value's rounding to f32 are each at most
  // 2^-24 of |alpha| * k + |beta|, which bounds every |alpha * sum(a * b) + beta * c| (the magnitude).
  c.magnitude = std::abs(alpha) * k + std::abs(beta);
  c.tolerance = (k + 3) * std::ldexp(1.0, -24);
  c.expected = FromDoubles(t, GemmSimtReference(AsDoubles(t, p.buffers[0].data), AsDoubles(t, p.buffers[1].data),
                                                AsDoubles(t, c.data), m, n, k, alpha, beta));
  p.buffers.push_back(std::move(c));
  p.args = {size_t{0}, size_t{1}, size_t{2}, ScalarU32(m), ScalarU32(n), ScalarU32(k),
            Scalar(t, std::bit_cast<uint32_t>(alpha)), Scalar(t, std::bit_cast<uint32_t>(beta))};
  p.block = {spec->threads(), 1, 1};
  p.grid = {static_cast<uint32_t>((uint64_t{n} + spec->block_n - 1) / spec->block_n), *grid_y, 1};
  p.shape = shape;
  return p;
}

}  // namespace ptxforge::kernels
