// attention, written with the builder, and its double-precision reference.
#include "kernels/attention.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "builder/kernel_builder.h"
#include "ir/strings.h"
#include "ir/target.h"
#include "kernels/kernel_math.h"

namespace ptxforge::kernels {
namespace {

using ir::StateSpace;

constexpr std::array kTypes = {ir::ScalarType::kF32, ir::ScalarType::kF64, ir::ScalarType::kF16,
                               ir::ScalarType::kBF16};
constexpr uint32_t kMaxDimsPerThread = 16;

bool PowerOfTwoUpTo(uint32_t v, uint32_t max) { return v >= 1 && v <= max && std::has_single_bit(v); }
uint32_t Log2(uint32_t v) { return static_cast<uint32_t>(std::countr_zero(v)); }

// x from the lane (laneid ^ lane_mask) of the member mask.
Value<F32> ShflXor(KernelBuilder& b, Value<F32> x, uint32_t lane_mask, uint32_t members) {
  return b.Shfl<F32>(ir::ShflMode::kBfly, x, lane_mask, 31u, members);
}
Value<F64> ShflXor(KernelBuilder& b, Value<F64> x, uint32_t lane_mask, uint32_t members) {
  Value<U64> bits = b.Bitcast<U64>(x);
  Value<U32> lo = b.Cvt<U32>(bits);
  Value<U32> hi = b.Cvt<U32>(b.Shr(bits, 32u));
  Value<U32> lo_other = b.Shfl<U32>(ir::ShflMode::kBfly, lo, lane_mask, 31u, members);
  Value<U32> hi_other = b.Shfl<U32>(ir::ShflMode::kBfly, hi, lane_mask, 31u, members);
  Value<U64> wide_hi = b.Shl(b.Cvt<U64>(hi_other), 32u);
  return b.Bitcast<F64>(b.Or(wide_hi, b.Cvt<U64>(lo_other)));
}

// `count` consecutive accumulation-type values from shared memory at addr,
// in v4 (f32) or v2 (f64) loads where they fit.
template <ScalarTag A>
std::vector<Value<A>> LoadSharedRow(KernelBuilder& b, Value<U32> addr, int64_t offset, uint32_t count) {
  constexpr int64_t kSize = ir::TypeSize(A::kType);
  constexpr uint32_t kVec = kSize == 4 ? 4 : 2;
  std::vector<Value<A>> out;
  for (uint32_t i = 0; i < count;) {
    Address at(addr, offset + i * kSize);
    if (count - i >= kVec) {
      for (Value<A> v : b.LoadVec<A, kVec>(StateSpace::kShared, at)) out.push_back(v);
      i += kVec;
    } else {
      out.push_back(b.Load<A>(StateSpace::kShared, at));
      ++i;
    }
  }
  return out;
}

// S: the storage type; A: the accumulation type.
template <ScalarTag S, ScalarTag A>
void Body(KernelBuilder& b, const AttentionSpec& spec) {
  using CA = typename A::CType;
  constexpr int64_t kStore = ir::TypeSize(S::kType);
  constexpr int64_t kAcc = ir::TypeSize(A::kType);
  const uint32_t hd = spec.head_dim, blk = spec.block;
  const uint32_t group = spec.ThreadsPerRow();  // threads per query row
  const uint32_t dims = hd / group;             // dims each thread owns
  const uint32_t threads = spec.Threads();
  const uint32_t tile_bytes = blk * hd * kAcc;
  const uint32_t members = threads >= 32 ? 0xFFFFFFFFu : (1u << threads) - 1;
  b.SetRequiredThreads(threads);

  Value<U64> q_ptr = b.CvtaToGlobal(b.Param<U64>("q"));
  Value<U64> k_ptr = b.CvtaToGlobal(b.Param<U64>("k"));
  Value<U64> v_ptr = b.CvtaToGlobal(b.Param<U64>("v"));
  Value<U64> o_ptr = b.CvtaToGlobal(b.Param<U64>("o"));
  Value<U32> seq_len = b.Param<U32>("seq_len");
  Value<A> scale = b.Param<A>("scale");
  Symbol<A> tiles = b.DynamicShared<A>("kv_tiles");  // K tile, then V tile

  Value<U32> tid = b.Name(b.TidX(), "tid");
  Value<U32> row = b.Name(b.Shr(tid, Log2(group)), "row");
  Value<U32> part = b.Name(b.And(tid, group - 1), "part");
  Value<U32> q0 = b.Name(b.Shl(b.CtaidX(), Log2(blk)), "q0");
  Value<U32> bh = b.Name(b.CtaidY(), "bh");
  // Grouped-query attention: K/V head of query head (bh % heads) in batch bh / heads.
  Value<U32> kv_bh = bh;
  if (spec.kv_heads != spec.heads) {
    Value<U32> batch = b.Div(bh, spec.heads);
    Value<U32> kv_head = b.Div(b.Rem(bh, spec.heads), spec.heads / spec.kv_heads);
    kv_bh = b.Mad(batch, spec.kv_heads, kv_head);
  }
  kv_bh = b.Name(kv_bh, "kv_bh");
  Value<U32> q = b.Name(b.Add(q0, row), "q");
  Value<U32> head_elems = b.Name(b.Shl(seq_len, Log2(hd)), "head_elems");
  Value<U64> q_head = b.ElementAddr<S>(q_ptr, b.MulWide(bh, head_elems));
  Value<U64> k_head = b.ElementAddr<S>(k_ptr, b.MulWide(kv_bh, head_elems));
  Value<U64> v_head = b.ElementAddr<S>(v_ptr, b.MulWide(kv_bh, head_elems));

  // This thread's query dims, times scale * log2(e) (rows past the end read
  // the last row and store nothing).
  Value<A> q_scale = b.Mul(scale, static_cast<CA>(kLog2E));
  Value<U32> dim0 = b.Name(b.Mul(part, dims), "dim0");
  Value<U32> q_clamped = b.Min(q, b.Sub(seq_len, 1u));
  Value<U64> q_addr = b.ElementAddr<S>(q_head, b.Mad(q_clamped, hd, dim0));
  std::vector<Value<A>> qv;
  for (uint32_t i = 0; i < dims; ++i) {
    Value<S> x = b.Load<S>(StateSpace::kGlobal, Address(q_addr, i * kStore));
    qv.push_back(b.Name(b.Mul(ConvertTo<A>(b, x), q_scale), StrCat("q", i)));
  }

  // The online softmax state and the per-dim output accumulators.
  Var<A> m = b.Mutable<A>(std::numeric_limits<CA>::lowest(), "m");
  Var<A> l = b.Mutable<A>(0, "l");
  std::vector<Var<A>> acc;
  for (uint32_t i = 0; i < dims; ++i) acc.push_back(b.Mutable<A>(0, StrCat("acc", i)));

  // Causal: tiles up to the block's last row; inside a tile, keys up to the
  // warp's last row (warp-uniform, for the shuffles).
  Value<U32> kv_end = seq_len;
  Value<U32> q_last;
  if (spec.causal) {
    kv_end = b.Min(b.Add(q0, blk), seq_len);
    const uint32_t rows_per_warp = 32 / group;
    q_last = threads <= 32 ? b.Add(q0, blk - 1) : b.Add(q0, b.Or(row, rows_per_warp - 1));
    q_last = b.Name(q_last, "q_last");
  }
  Value<U32> num_tiles = b.Name(b.Shr(b.Add(kv_end, blk - 1), Log2(blk)), "num_tiles");
  Value<U32> tiles_addr = b.SymbolAddr(tiles);
  Value<U32> fill_addr = b.Name(b.Mad(tid, static_cast<uint32_t>(kAcc), tiles_addr), "fill_addr");
  Value<U32> my_dims = b.Name(b.Mad(dim0, static_cast<uint32_t>(kAcc), tiles_addr), "my_dims");
  Value<U32> last_elem = b.Sub(head_elems, 1u);

  b.ForRange<U32>(0u, num_tiles, 1u, [&](Value<U32> tile) {
    Value<U32> k0 = b.Name(b.Shl(tile, Log2(blk)), "k0");
    // The block copies K and V rows k0 .. k0 + blk - 1 (clamped to the last
    // row; keys past seq_len are never read) into shared memory.
    Value<U32> first = b.Add(b.Shl(k0, Log2(hd)), tid);
    for (uint32_t j = 0; j < dims; ++j) {
      Value<U32> elem = b.Min(b.Add(first, j * threads), last_elem);
      Value<A> kx = ConvertTo<A>(b, b.Load<S>(StateSpace::kGlobal, b.ElementAddr<S>(k_head, elem)));
      Value<A> vx = ConvertTo<A>(b, b.Load<S>(StateSpace::kGlobal, b.ElementAddr<S>(v_head, elem)));
      b.Store(StateSpace::kShared, Address(fill_addr, int64_t{j} * threads * kAcc), kx);
      b.Store(StateSpace::kShared, Address(fill_addr, int64_t{tile_bytes} + int64_t{j} * threads * kAcc), vx);
    }
    b.BarSync();
    Value<U32> key_end = b.Min(b.Sub(seq_len, k0), blk);
    if (spec.causal) key_end = b.Min(key_end, b.Add(b.Sub(q_last, k0), 1u));
    key_end = b.Name(key_end, "key_end");
    b.ForRange<U32>(0u, key_end, 1u, [&](Value<U32> kk) {
      Value<U32> k_addr = b.Mad(kk, hd * static_cast<uint32_t>(kAcc), my_dims);
      std::vector<Value<A>> kx = LoadSharedRow<A>(b, k_addr, 0, dims);
      Value<A> s = b.Mul(qv[0], kx[0]);
      for (uint32_t i = 1; i < dims; ++i) s = b.Fma(qv[i], kx[i], s);
      for (uint32_t lane_mask = group / 2; lane_mask >= 1; lane_mask /= 2) {
        s = b.Add(s, ShflXor(b, s, lane_mask, members));
      }
      s = b.Name(s, "s");
      Value<A> m_new;
      Value<Pred> masked;
      if (spec.causal) {
        masked = b.Gt(b.Add(k0, kk), q);
        m_new = b.Max(m, b.Select(masked, Value<A>(m), s));
      } else {
        m_new = b.Max(m, s);
      }
      Value<A> alpha = Exp2(b, b.Sub(m, m_new));
      Value<A> p = Exp2(b, b.Sub(s, m_new));
      if (spec.causal) p = b.Select(masked, b.Const<A>(0), p);
      b.Assign(l, b.Fma(l, alpha, p));
      std::vector<Value<A>> vx = LoadSharedRow<A>(b, k_addr, tile_bytes, dims);
      for (uint32_t i = 0; i < dims; ++i) b.Assign(acc[i], b.Fma(p, vx[i], b.Mul(acc[i], alpha)));
      b.Assign(m, m_new);
    });
    b.BarSync();
  });

  b.If(b.Lt(q, seq_len), [&] {
    Value<A> inv = b.Rcp(Value<A>(l), FloatOpts{.rounding = ir::Rounding::kRn});
    // O's head, computed here from a second read of %ctaid.y and from seq_len
    // (in 64 bits, so CSE does not merge it with q_head's bh * head_elems; the
    // two are equal while seq_len * head_dim fits in 32 bits, which the K/V
    // element indices need anyway): computed before the loops, it and
    // head_elems stayed live through them (ptxas: 76 registers instead of 64
    // on sm_90 for the default config).
    Value<U64> o_rows = b.MulWide(b.CtaidY(), seq_len);
    Value<U64> o_head = b.ElementAddr<S>(o_ptr, b.Shl(o_rows, Log2(hd)));
    Value<U64> o_addr = b.ElementAddr<S>(o_head, b.Mad(q, hd, dim0));
    for (uint32_t i = 0; i < dims; ++i) {
      b.Store(StateSpace::kGlobal, Address(o_addr, i * kStore), ConvertTo<S>(b, b.Mul(acc[i], inv)));
    }
  });
  b.Ret();
}

}  // namespace

uint32_t AttentionSpec::ThreadsPerRow() const { return head_dim / std::min(head_dim, kMaxDimsPerThread); }

uint32_t AttentionSpec::SharedBytes() const {
  const uint32_t acc_size = type == ir::ScalarType::kF64 ? 8 : 4;
  return 2 * block * head_dim * acc_size;
}

absl::Status AttentionSpec::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(
        StrCat("attention: type ", ir::TypeName(type), " is not supported (f32, f64, f16, bf16)"));
  }
  if (!PowerOfTwoUpTo(head_dim, 256)) {
    return absl::InvalidArgumentError(StrCat("attention: head_dim=", head_dim, " must be a power of two in 1..256"));
  }
  if (!PowerOfTwoUpTo(block, 256)) {
    return absl::InvalidArgumentError(StrCat("attention: block=", block, " must be a power of two in 1..256"));
  }
  if (heads == 0) return absl::InvalidArgumentError("attention: heads=0 must be positive");
  if (kv_heads == 0 || heads % kv_heads != 0) {
    return absl::InvalidArgumentError(
        StrCat("attention: kv_heads=", kv_heads, " must be a positive divisor of heads=", heads));
  }
  if (Threads() > 1024) {
    return absl::InvalidArgumentError(StrCat("attention: block=", block, " with head_dim=", head_dim, " needs ",
                                             Threads(), " threads per block (at most 1024)"));
  }
  return absl::OkStatus();
}

std::string AttentionSpec::KernelName() const {
  return StrCat("attention_", ir::TypeName(type), "_d", head_dim, "_b", block, "_h", heads, "_kv", kv_heads,
                causal ? "_causal" : "");
}

absl::StatusOr<ir::Kernel> AttentionSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  if (type == ir::ScalarType::kBF16 && ir::GetTargetInfo(target).sm < 80) {
    return absl::InvalidArgumentError(StrCat("attention: bf16 needs sm_80 or newer (target ", ir::TargetName(target), ")"));
  }
  if (SharedBytes() > ir::MaxSharedBytesPerBlock(target)) {
    return absl::InvalidArgumentError(StrCat("attention: block=", block, " and head_dim=", head_dim, " (",
                                             ir::TypeName(type), ") need ", SharedBytes(),
                                             " bytes of shared memory per block; ", ir::TargetName(target),
                                             " allows at most ", ir::MaxSharedBytesPerBlock(target)));
  }
  KernelBuilder b(KernelName(), target);
  switch (type) {
    case ir::ScalarType::kF16: Body<F16, F32>(b, *this); break;
    case ir::ScalarType::kBF16: Body<BF16, F32>(b, *this); break;
    case ir::ScalarType::kF64: Body<F64, F64>(b, *this); break;
    default: Body<F32, F32>(b, *this); break;
  }
  return b.Finish();
}

std::vector<double> AttentionReference(std::span<const double> q, std::span<const double> k,
                                       std::span<const double> v, const AttentionSpec& spec, uint32_t seq_len,
                                       double scale) {
  const size_t hd = spec.head_dim, head_size = size_t{seq_len} * hd;
  const size_t bh_count = head_size == 0 ? 0 : q.size() / head_size;
  const size_t group = spec.heads / spec.kv_heads;
  std::vector<double> o(q.size(), 0.0);
  std::vector<double> weight(seq_len);
  for (size_t bh = 0; bh < bh_count; ++bh) {
    const size_t kv_bh = bh / spec.heads * spec.kv_heads + bh % spec.heads / group;
    const double* qh = q.data() + bh * head_size;
    const double* kh = k.data() + kv_bh * head_size;
    const double* vh = v.data() + kv_bh * head_size;
    double* oh = o.data() + bh * head_size;
    for (size_t i = 0; i < seq_len; ++i) {
      const size_t keys = spec.causal ? i + 1 : seq_len;
      double max = -std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (size_t d = 0; d < hd; ++d) dot += qh[i * hd + d] * kh[j * hd + d];
        weight[j] = scale * dot;
        max = std::max(max, weight[j]);
      }
      double sum = 0;
      for (size_t j = 0; j < keys; ++j) sum += weight[j] = std::exp(weight[j] - max);
      for (size_t j = 0; j < keys; ++j) {
        for (size_t d = 0; d < hd; ++d) oh[i * hd + d] += weight[j] / sum * vh[j * hd + d];
      }
    }
  }
  return o;
}

std::span<const ConfigField> AttentionFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f32", "element type: f32, f64, f16, bf16 (f16/bf16 accumulate in f32)"},
      {"head_dim", "64", "dims per head, a power of two in 1..256"},
      {"block", "64", "query rows per block and keys per K/V tile, a power of two in 1..256"},
      {"causal", "false", "mask keys after the query (and skip fully masked tiles)"},
      {"heads", "4", "query heads"},
      {"kv_heads", "2", "K/V heads (divides heads; grouped-query attention)"},
      {"batch", "1", "test shape: batch size"},
      {"seq_len", "65", "test shape: sequence length"},
      {"scale", "0.125", "test shape: the softmax scale (1/sqrt(head_dim) is usual)"},
  };
  return kFields;
}

absl::StatusOr<AttentionSpec> AttentionFamily::SpecFrom(const Config& config) const {
  AttentionSpec spec;
  absl::StatusOr<ir::ScalarType> type = config.GetType("type", kTypes);
  if (!type.ok()) return type.status();
  spec.type = *type;
  for (auto [key, field] : {std::pair{"head_dim", &spec.head_dim}, std::pair{"block", &spec.block},
                            std::pair{"heads", &spec.heads}, std::pair{"kv_heads", &spec.kv_heads}}) {
    absl::StatusOr<uint32_t> v = config.GetU32(key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  absl::StatusOr<bool> causal = config.GetBool("causal");
  if (!causal.ok()) return causal.status();
  spec.causal = *causal;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> AttentionFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<AttentionSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<uint32_t> batch = config.GetU32("batch");
  if (!batch.ok()) return batch.status();
  absl::StatusOr<uint32_t> seq_len = config.GetU32("seq_len");
  if (!seq_len.ok()) return seq_len.status();
  absl::StatusOr<double> scale = config.GetDouble("scale");
  if (!scale.ok()) return scale.status();
  if (*batch == 0) return absl::InvalidArgumentError("attention: batch must be positive");
  if (*seq_len == 0) return absl::InvalidArgumentError("attention: seq_len must be positive");
  if (!std::isfinite(*scale)) return absl::InvalidArgumentError(StrCat("attention: scale=", *scale, " must be finite"));
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = spec->type;
  const size_t q_count = size_t{*batch} * spec->heads * *seq_len * spec->head_dim;
  const size_t kv_count = size_t{*batch} * spec->kv_heads * *seq_len * spec->head_dim;
  TestProblem p;
  p.buffers.push_back(RandomBuffer("q", t, q_count, rng, -1, 1));
  p.buffers.push_back(RandomBuffer("k", t, kv_count, rng, -1, 1));
  p.buffers.push_back(RandomBuffer("v", t, kv_count, rng, -1, 1));
  HostBuffer o = ZeroBuffer("o", t, q_count);
  o.is_output = true;
  // ex2.approx (f32) or f16/bf16 storage; f64 computes 2^x to full precision.
  o.tolerance = t == ir::ScalarType::kF32 ? 1e-4 : DefaultTolerance(t);
  // The scale as the kernel sees it (an f32 param rounds it).
  const double used_scale = t == ir::ScalarType::kF64 ? *scale : static_cast<double>(static_cast<float>(*scale));
  o.expected = FromDoubles(t, AttentionReference(AsDoubles(t, p.buffers[0].data), AsDoubles(t, p.buffers[1].data),
                                                 AsDoubles(t, p.buffers[2].data), *spec, *seq_len, used_scale));
  p.buffers.push_back(std::move(o));
  const HostScalar scale_arg = t == ir::ScalarType::kF64
                                   ? Scalar(ir::ScalarType::kF64, std::bit_cast<uint64_t>(*scale))
                                   : Scalar(ir::ScalarType::kF32, std::bit_cast<uint32_t>(static_cast<float>(*scale)));
  p.args = {size_t{0}, size_t{1}, size_t{2}, size_t{3}, ScalarU32(*seq_len), scale_arg};
  p.grid = spec->Grid(*seq_len, *batch);
  p.block = {spec->Threads(), 1, 1};
  p.dynamic_shared_bytes = spec->SharedBytes();
  p.shape = StrCat("batch=", *batch, " seq_len=", *seq_len, " scale=", *scale);
  return p;
}

}  // namespace ptxforge::kernels
