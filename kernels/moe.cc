// The four MoE kernels written with the builder, their references, the
// registry families and MoeLayer.
#include "kernels/moe.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "builder/kernel_builder.h"
#include "ir/strings.h"
#include "kernels/kernel_math.h"
#include "passes/pass.h"

namespace ptxforge::kernels {
namespace {

using ir::StateSpace;
constexpr StateSpace kGlobal = StateSpace::kGlobal;
constexpr StateSpace kShared = StateSpace::kShared;

constexpr std::array kTypes = {ir::ScalarType::kF16, ir::ScalarType::kF32, ir::ScalarType::kF64};
constexpr uint32_t kGatingBlock = 128;
constexpr uint32_t kPermuteBlock = 256;  // 8 warps
constexpr uint32_t kUnpermuteBlock = 256;
constexpr uint32_t kTile = 16;           // expert GEMM: 16 x 16 outputs, 16 wide along h
constexpr uint32_t kTilePitch = kTile + 1;

// Calls f.template operator()<S, A>() with the storage and accumulation tags of `type`.
template <typename F>
void DispatchStorage(ir::ScalarType type, F&& f) {
  switch (type) {
    case ir::ScalarType::kF16: f.template operator()<F16, F32>(); break;
    case ir::ScalarType::kF64: f.template operator()<F64, F64>(); break;
    default: f.template operator()<F32, F32>(); break;
  }
}

// ---- kernel bodies

// Loops stay rolled (`.pragma "nounroll"`, as the nvcc twins bench/cuda/moe_*.cu
// have `#pragma unroll 1`): ptxas unrolls loops of a constant trip count
// (experts, top_k, the hidden size) and hoists their loads. ptxas -v registers
// on sm_80/86/89/90/100/120: topk_gating 31 everywhere -> 24/26/26/26/26/26,
// expert_gemm 32/40/40/32/32/40 -> 30/36/36/30/30/36; permute (a loop of run-time
// trip count) is unchanged. Unpermute's loop is written by hand (see there).
constexpr KernelBuilder::LoopOptions kRolled{.unroll = false};

template <ScalarTag S, ScalarTag A>
void GatingBody(KernelBuilder& b, const MoeConfig& c) {
  using CA = typename A::CType;
  b.SetMaxThreads(kGatingBlock);
  Value<U64> logits = b.CvtaToGlobal(b.Param<U64>("logits"));
  Value<U64> indices = b.CvtaToGlobal(b.Param<U64>("expert_indices"));
  Value<U64> weights = b.CvtaToGlobal(b.Param<U64>("expert_weights"));
  Value<U32> tokens = b.Param<U32>("tokens");
  Value<U32> t = b.Name(b.GlobalThreadIdX(), "t");
  b.If(b.Lt(t, tokens), [&] {
    // The token's rows are kept as 64-bit element indices, not pointers: each access is
    // param + (row + e) << log2(size), as nvcc forms it for the twin. ptxas -v on
    // sm_80/86/89/90/100/120: 24/26/26/26/26/26 -> 21/20/20/20/20/20 (nvcc's: 21/20/20/20/20/20).
    Value<U64> row = b.MulWide(t, c.num_experts);
    Value<U64> pick_row = b.MulWide(t, c.top_k);
    auto logit = [&](Value<U32> e) {
      return ConvertTo<A>(b, b.Load<S>(kGlobal, b.ElementAddr<S>(logits, b.Add(row, b.Cvt<U64>(e)))));
    };
    auto index_at = [&](Value<U32> j) { return b.ElementAddr<U32>(indices, b.Add(pick_row, b.Cvt<U64>(j))); };
    auto weight_at = [&](Value<U32> j) { return b.ElementAddr<S>(weights, b.Add(pick_row, b.Cvt<U64>(j))); };
    Var<A> top = b.Mutable<A>(std::numeric_limits<CA>::lowest(), "top");
    b.ForRange<U32>(0u, c.num_experts, 1u, kRolled, [&](Value<U32> e) { b.Assign(top, b.Max(top, logit(e))); });
    // Pick j is the largest logit after pick j-1 in the order (value
    // descending, index ascending). Indices are kept plus one: 0 is "none".
    Var<A> prev = b.Mutable<A>(std::numeric_limits<CA>::infinity(), "prev");
    Var<U32> prev_index1 = b.Mutable<U32>(0u, "prev_index1");
    Var<A> sum = b.Mutable<A>(0, "sum");
    b.ForRange<U32>(0u, c.top_k, 1u, kRolled, [&](Value<U32> j) {
      Var<A> best = b.Mutable<A>(std::numeric_limits<CA>::lowest(), "best");
      Var<U32> best_index1 = b.Mutable<U32>(0u, "best_index1");
      b.ForRange<U32>(0u, c.num_experts, 1u, kRolled, [&](Value<U32> e) {
        Value<A> x = logit(e);
        Value<Pred> after_prev = b.Or(b.Lt(x, Value<A>(prev)), b.And(b.Eq(x, Value<A>(prev)), b.Ge(e, prev_index1)));
        Value<Pred> better = b.And(after_prev, b.Or(b.Gt(x, Value<A>(best)), b.Eq(best_index1, 0u)));
        b.Assign(best, b.Select(better, x, Value<A>(best)));
        b.Assign(best_index1, b.Select(better, b.Add(e, 1u), Value<U32>(best_index1)));
      });
      b.Store(kGlobal, index_at(j), b.Sub(best_index1, 1u));
      b.Assign(sum, b.Add(sum, Exp2(b, b.Mul(b.Sub(best, Value<A>(top)), static_cast<CA>(kLog2E)))));
      b.Assign(prev, best);
      b.Assign(prev_index1, best_index1);
    });
    // The weights: softmax over the picks (the softmax over all E cancels in
    // the renormalisation).
    b.ForRange<U32>(0u, c.top_k, 1u, kRolled, [&](Value<U32> j) {
      Value<U32> e = b.Min(b.Load<U32>(kGlobal, index_at(j)), c.num_experts - 1);
      Value<A> p = Exp2(b, b.Mul(b.Sub(logit(e), Value<A>(top)), static_cast<CA>(kLog2E)));
      b.Store(kGlobal, weight_at(j), ConvertTo<S>(b, b.Div(p, Value<A>(sum))));
    });
  });
  b.Ret();
}

void PermuteBody(KernelBuilder& b, const MoeConfig& c) {
  constexpr uint32_t kWarps = kPermuteBlock / 32;
  b.SetRequiredThreads(kPermuteBlock);
  Value<U64> indices = b.CvtaToGlobal(b.Param<U64>("expert_indices"));
  Value<U64> token_ids = b.CvtaToGlobal(b.Param<U64>("token_ids"));
  Value<U64> counts = b.CvtaToGlobal(b.Param<U64>("expert_counts"));
  Value<U64> slot_of = b.CvtaToGlobal(b.Param<U64>("slot_of"));
  Value<U32> tokens = b.Param<U32>("tokens");
  Value<U32> capacity = b.Param<U32>("capacity");
  Symbol<U32> warp_totals = b.Shared<U32>("warp_totals", kWarps);
  Value<U32> e = b.Name(b.CtaidX(), "e");
  Value<U32> tid = b.Name(b.TidX(), "tid");
  Value<U32> n = b.Name(b.Mul(tokens, c.top_k), "n");
  // The block's expert widened first, then multiplied in 64 bits (not
  // mul.wide): ptxas keeps it in a uniform register and forms bin_start once
  // before the loop (ptxas -v sm_75 26 -> 22, nvcc's twin 25; sm_80-89 24 ->
  // 22, sm_100 28 -> 26, sm_120 28 -> 25, sm_90 28 as before).
  Value<U64> e64 = b.Cvt<U64>(e);
  Value<U64> bin_start = b.Mul(e64, b.Cvt<U64>(capacity));  // token_ids index of the bin's first slot
  // Shaped for ptxas -v (sm_80/86/89/90/100/120: 28/29/29/28/29/30 -> 24/24/24/28/28/28 with the pow2div
  // pass; nvcc's twin: 24/24/24/28/29/28): the lane and its mask are computed from tid inside the loop
  // and the warp only where it is stored, so that nothing but tid lives through the loop for them;
  // "warp > w" is "tid > 32w + 31"; a bin entry's address is (e * capacity + slot) << 2 from a 64-bit
  // e * capacity, as nvcc forms it.
  Var<U32> base = b.Mutable<U32>(0u, "base");
  b.ForRange<U32>(0u, n, kPermuteBlock, kRolled, [&](Value<U32> chunk) {
    Value<U32> i = b.Name(b.Add(chunk, tid), "i");
    Value<U32> lane = b.Name(b.And(tid, 31u), "lane");
    Value<U32> expert = b.Load<U32>(kGlobal, b.ElementAddr<U32>(indices, b.Min(i, b.Sub(n, 1u))));
    Value<Pred> match = b.And(b.Lt(i, n), b.Eq(expert, e));
    Value<U32> ballot = b.VoteBallot(match);
    Value<U32> lanes_below = b.Sub(b.Shl(b.Const<U32>(1), lane), 1u);
    Value<U32> rank = b.Name(b.Popc(b.And(ballot, lanes_below)), "rank");
    b.If(b.Eq(lane, 0u), [&] {
      b.Store(kShared, b.ElementAddr(warp_totals, b.Shr(tid, 5u)), b.Popc(ballot));
    });
    b.BarSync();
    // Matches of the earlier warps of this chunk, and of the whole chunk.
    Value<U32> total = b.Const<U32>(0);
    Value<U32> before = b.Const<U32>(0);
    for (uint32_t w = 0; w < kWarps; ++w) {
      Value<U32> count = b.Load<U32>(kShared, Address(warp_totals, w * 4));
      total = b.Add(total, count);
      if (w + 1 < kWarps) before = b.Add(before, b.Select(b.Gt(tid, w * 32 + 31), count, 0u));
    }
    Value<U32> slot = b.Name(b.Add(b.Add(base, before), rank), "slot");
    b.If(match, [&] {
      Value<Pred> keep = b.Lt(slot, capacity);
      b.Store(kGlobal, b.ElementAddr<U32>(slot_of, i), b.Select(keep, slot, 0xFFFFFFFFu));
      b.If(keep, [&] {
        Value<U64> entry = b.Add(bin_start, b.Cvt<U64>(slot));
        b.Store(kGlobal, b.ElementAddr<U32>(token_ids, entry), b.Div(i, c.top_k));
      });
    });
    b.Assign(base, b.Add(base, total));
    b.BarSync();
  });
  b.If(b.Eq(tid, 0u), [&] { b.Store(kGlobal, b.ElementAddr<U32>(counts, e64), Value<U32>(base)); });
  b.Ret();
}

template <ScalarTag S, ScalarTag A>
void ExpertGemmBody(KernelBuilder& b, const MoeConfig& c) {
  constexpr int64_t kAcc = ir::TypeSize(A::kType);
  const uint32_t hd = c.hidden_dim, ed = c.expert_dim;
  b.SetRequiredThreads(kTile * kTile);
  Value<U64> input = b.CvtaToGlobal(b.Param<U64>("input"));
  Value<U64> w = b.CvtaToGlobal(b.Param<U64>("w"));
  Value<U64> token_ids = b.CvtaToGlobal(b.Param<U64>("token_ids"));
  Value<U64> counts = b.CvtaToGlobal(b.Param<U64>("expert_counts"));
  Value<U64> expert_out = b.CvtaToGlobal(b.Param<U64>("expert_out"));
  Value<U32> capacity = b.Param<U32>("capacity");
  Symbol<A> a_tile = b.Shared<A>("a_tile", kTile * kTilePitch);  // [row][h], padded
  Symbol<A> w_tile = b.Shared<A>("w_tile", kTile * kTilePitch);  // [d][h], padded
  Value<U32> tid = b.TidX();
  Value<U32> tx = b.Name(b.And(tid, kTile - 1), "tx");
  Value<U32> ty = b.Name(b.Shr(tid, 4u), "ty");
  Value<U32> e = b.Name(b.CtaidZ(), "e");
  Value<U32> s0 = b.Shl(b.CtaidY(), 4u);
  Value<U32> d0 = b.Shl(b.CtaidX(), 4u);
  Value<U32> rows = b.Name(b.Min(b.Load<U32>(kGlobal, b.ElementAddr<U32>(counts, e)), capacity), "rows");
  b.If(b.Ge(s0, rows), [&] { b.Ret(); });  // the whole block: no rows here
  Value<U32> bin_row = b.Mad(e, capacity, s0);  // token_ids index of row s0
  // Loader roles: this thread stages input[token of row s0+ty][h0+tx] and
  // W[e][d0+ty][h0+tx] (clamped addresses; zero outside).
  Value<U32> s = b.Name(b.Add(s0, ty), "s");
  Value<Pred> row_ok = b.Lt(s, rows);
  Value<U32> token =
      b.Load<U32>(kGlobal, b.ElementAddr<U32>(token_ids, b.Add(bin_row, b.Min(ty, b.Sub(b.Sub(rows, s0), 1u)))));
  Value<U64> a_row = b.ElementAddr<S>(input, b.MulWide(token, hd));
  Value<U32> wd = b.Add(d0, ty);
  Value<Pred> wd_ok = b.Lt(wd, ed);
  Value<U64> w_row = b.ElementAddr<S>(w, b.MulWide(b.Mad(e, ed, b.Min(wd, ed - 1)), hd));
  Value<U32> stage = b.Name(b.Mad(ty, kTilePitch, tx), "stage");  // element of both tiles
  Value<U32> a_stage = b.ElementAddr(a_tile, stage);
  Value<U32> w_stage = b.ElementAddr(w_tile, stage);
  Value<U32> a_read = b.ElementAddr(a_tile, b.Mul(ty, kTilePitch));  // row ty
  Value<U32> w_read = b.ElementAddr(w_tile, b.Mul(tx, kTilePitch));  // d row tx
  Var<A> acc = b.Mutable<A>(0, "acc");
  b.ForRange<U32>(0u, hd, kTile, kRolled, [&](Value<U32> h0) {
    Value<U32> h = b.Add(h0, tx);
    Value<U32> hc = b.Min(h, hd - 1);
    Value<Pred> h_ok = b.Lt(h, hd);
    Value<A> av = ConvertTo<A>(b, b.Load<S>(kGlobal, b.ElementAddr<S>(a_row, hc)));
    Value<A> wv = ConvertTo<A>(b, b.Load<S>(kGlobal, b.ElementAddr<S>(w_row, hc)));
    b.Store(kShared, a_stage, b.Select(b.And(h_ok, row_ok), av, b.Const<A>(0)));
    b.Store(kShared, w_stage, b.Select(b.And(h_ok, wd_ok), wv, b.Const<A>(0)));
    b.BarSync();
    for (uint32_t k = 0; k < kTile; ++k) {
      Value<A> x = b.Load<A>(kShared, Address(a_read, k * kAcc));
      Value<A> y = b.Load<A>(kShared, Address(w_read, k * kAcc));
      b.Assign(acc, b.Fma(x, y, acc));
    }
    b.BarSync();
  });
  Value<U32> d = b.Add(d0, tx);
  b.If(b.And(row_ok, b.Lt(d, ed)), [&] {
    Value<U64> out_row = b.ElementAddr<S>(expert_out, b.MulWide(b.Add(bin_row, ty), ed));
    b.Store(kGlobal, b.ElementAddr<S>(out_row, d), ConvertTo<S>(b, Value<A>(acc)));
  });
  b.Ret();
}

template <ScalarTag S, ScalarTag A>
void UnpermuteBody(KernelBuilder& b, const MoeConfig& c) {
  b.SetMaxThreads(kUnpermuteBlock);
  Value<U64> expert_out = b.CvtaToGlobal(b.Param<U64>("expert_out"));
  Value<U64> indices = b.CvtaToGlobal(b.Param<U64>("expert_indices"));
  Value<U64> weights = b.CvtaToGlobal(b.Param<U64>("expert_weights"));
  Value<U64> slot_of = b.CvtaToGlobal(b.Param<U64>("slot_of"));
  Value<U64> output = b.CvtaToGlobal(b.Param<U64>("output"));
  Value<U32> tokens = b.Param<U32>("tokens");
  Value<U32> capacity = b.Param<U32>("capacity");
  Value<U32> gid = b.Name(b.GlobalThreadIdX(), "gid");
  b.If(b.Lt(gid, b.Mul(tokens, c.expert_dim)), [&] {
    Value<U32> first = b.Mul(b.Div(gid, c.expert_dim), c.top_k);
    Var<A> acc = b.Mutable<A>(0, "acc");
    // The loop over the picks, in the shape of nvcc's for the twin (bench/cuda/moe_unpermute.cu), which
    // ptxas -v gives the fewest registers: rolled, tested at the bottom (top_k >= 1); the loaded pick's
    // entry j addressed through a shift (cvt + shl.b64) apart from slot_of's mul.wide, so the two do not
    // share one 64-bit offset across the branch; d = gid % expert_dim taken in the branch and the row
    // offset (e * capacity + slot) * expert_dim + d formed in 64 bits before scaling. With top_k = 2 the
    // back edge, taken only when k + 1 < 2, sets k to 1 (what LLVM does too). sm_80/86/89/90/100/120 at
    // the default configuration: 21/20/20/23/23/23 -> 16/16/16/16/18/18, the same as nvcc's.
    Var<U32> k = b.Mutable<U32>(0u, "k");
    ir::Label head = b.NewLabel("loop");
    b.Bind(head);
    b.NoUnroll();
    Value<U32> j = b.Add(first, Value<U32>(k));
    Value<U32> slot = b.Load<U32>(kGlobal, b.ElementAddr<U32>(slot_of, j));
    b.If(b.Ne(slot, 0xFFFFFFFFu), [&] {
      Value<U64> j64 = b.Cvt<U64>(j);
      Value<U32> e = b.Load<U32>(kGlobal, b.ElementAddr<U32>(indices, j64));
      Value<A> weight = ConvertTo<A>(b, b.Load<S>(kGlobal, b.ElementAddr<S>(weights, j64)));
      Value<U32> d = b.Rem(gid, c.expert_dim);
      Value<U64> element = b.Add(b.MulWide(b.Mad(e, capacity, slot), c.expert_dim), b.Cvt<U64>(d));
      Value<A> x = ConvertTo<A>(b, b.Load<S>(kGlobal, b.ElementAddr<S>(expert_out, element)));
      b.Assign(acc, b.Fma(weight, x, acc));
    });
    Value<U32> next = b.Add(Value<U32>(k), 1u);
    Value<Pred> more = b.Lt(next, c.top_k);
    if (c.top_k == 2) {
      b.Assign(k, 1u);
    } else {
      b.Assign(k, next);
    }
    b.BraIf(more, head);
    b.Store(kGlobal, b.ElementAddr<S>(output, gid), ConvertTo<S>(b, Value<A>(acc)));
  });
  b.Ret();
}

template <MoeStage kStage>
void StageBody(KernelBuilder& b, const MoeConfig& c) {
  if constexpr (kStage == MoeStage::kPermute) {
    PermuteBody(b, c);
  } else {
    DispatchStorage(c.type, [&]<ScalarTag S, ScalarTag A>() {
      if constexpr (kStage == MoeStage::kTopkGating) GatingBody<S, A>(b, c);
      if constexpr (kStage == MoeStage::kExpertGemm) ExpertGemmBody<S, A>(b, c);
      if constexpr (kStage == MoeStage::kUnpermute) UnpermuteBody<S, A>(b, c);
    });
  }
}

uint32_t CeilDiv(uint64_t a, uint32_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

}  // namespace

// ---- configuration

absl::Status MoeConfig::Validate() const {
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(StrCat("moe: type ", ir::TypeName(type), " is not supported (f16, f32, f64)"));
  }
  if (num_experts == 0 || num_experts > 1024) {
    return absl::InvalidArgumentError(StrCat("moe: num_experts=", num_experts, " must be in 1..1024"));
  }
  if (top_k == 0 || top_k > num_experts) {
    return absl::InvalidArgumentError(StrCat("moe: top_k=", top_k, " must be in 1..num_experts=", num_experts));
  }
  if (hidden_dim == 0 || hidden_dim > 65536) {
    return absl::InvalidArgumentError(StrCat("moe: hidden_dim=", hidden_dim, " must be in 1..65536"));
  }
  if (expert_dim == 0 || expert_dim > 65536) {
    return absl::InvalidArgumentError(StrCat("moe: expert_dim=", expert_dim, " must be in 1..65536"));
  }
  if (!(capacity_factor > 0) || !std::isfinite(capacity_factor)) {
    return absl::InvalidArgumentError(StrCat("moe: capacity_factor=", capacity_factor, " must be positive and finite"));
  }
  return absl::OkStatus();
}

uint32_t MoeConfig::Capacity(uint32_t tokens) const {
  const double slots = std::ceil(capacity_factor * tokens * top_k / num_experts);
  return static_cast<uint32_t>(std::clamp(slots, 1.0, double{std::numeric_limits<uint32_t>::max()}));
}

template <MoeStage kStage>
std::string MoeKernelSpec<kStage>::KernelName() const {
  const std::string_view t = ir::TypeName(type);
  switch (kStage) {
    case MoeStage::kTopkGating: return StrCat("moe_topk_gating_", t, "_e", num_experts, "_k", top_k);
    case MoeStage::kPermute: return StrCat("moe_permute_k", top_k);
    case MoeStage::kExpertGemm: return StrCat("moe_expert_gemm_", t, "_h", hidden_dim, "_d", expert_dim);
    case MoeStage::kUnpermute: return StrCat("moe_unpermute_", t, "_k", top_k, "_d", expert_dim);
  }
  return "";
}

template <MoeStage kStage>
absl::StatusOr<ir::Kernel> MoeKernelSpec<kStage>::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  StageBody<kStage>(b, *this);
  return b.Finish();
}

template struct MoeKernelSpec<MoeStage::kTopkGating>;
template struct MoeKernelSpec<MoeStage::kPermute>;
template struct MoeKernelSpec<MoeStage::kExpertGemm>;
template struct MoeKernelSpec<MoeStage::kUnpermute>;

runtime::LaunchConfig GatingLaunch(uint32_t tokens) {
  return {.grid = {CeilDiv(tokens, kGatingBlock)}, .block = {kGatingBlock}};
}
runtime::LaunchConfig PermuteLaunch(const MoeConfig& config) {
  return {.grid = {config.num_experts}, .block = {kPermuteBlock}};
}
runtime::LaunchConfig ExpertGemmLaunch(const MoeConfig& config, uint32_t capacity) {
  return {.grid = {CeilDiv(config.expert_dim, kTile), CeilDiv(capacity, kTile), config.num_experts},
          .block = {kTile * kTile}};
}
runtime::LaunchConfig UnpermuteLaunch(const MoeConfig& config, uint32_t tokens) {
  return {.grid = {CeilDiv(uint64_t{tokens} * config.expert_dim, kUnpermuteBlock)}, .block = {kUnpermuteBlock}};
}

// ---- references

MoeGating MoeGatingReference(std::span<const double> logits, const MoeConfig& config) {
  const size_t e_count = config.num_experts, k_count = config.top_k;
  const size_t tokens = logits.size() / e_count;
  MoeGating g;
  g.indices.resize(tokens * k_count);
  g.weights.resize(tokens * k_count);
  std::vector<uint32_t> order(e_count);
  for (size_t t = 0; t < tokens; ++t) {
    const double* row = logits.data() + t * e_count;
    double max = row[0];
    for (size_t e = 1; e < e_count; ++e) max = std::max(max, row[e]);
    std::vector<double> prob(e_count);
    double total = 0;
    for (size_t e = 0; e < e_count; ++e) total += prob[e] = std::exp(row[e] - max);
    for (size_t e = 0; e < e_count; ++e) {
      prob[e] /= total;
      order[e] = static_cast<uint32_t>(e);
    }
    // Largest first; ties to the lower index.
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return row[a] > row[b]; });
    double kept = 0;
    for (size_t k = 0; k < k_count; ++k) kept += prob[order[k]];
    for (size_t k = 0; k < k_count; ++k) {
      g.indices[t * k_count + k] = order[k];
      g.weights[t * k_count + k] = prob[order[k]] / kept;
    }
  }
  return g;
}

MoePermutation MoePermuteReference(std::span<const uint32_t> indices, const MoeConfig& config, uint32_t capacity) {
  MoePermutation p;
  p.token_ids.assign(size_t{config.num_experts} * capacity, 0);
  p.counts.assign(config.num_experts, 0);
  p.slot_of.assign(indices.size(), 0xFFFFFFFFu);
  for (size_t i = 0; i < indices.size(); ++i) {
    const uint32_t e = indices[i];
    const uint32_t slot = p.counts[e]++;
    if (slot < capacity) {
      p.token_ids[size_t{e} * capacity + slot] = static_cast<uint32_t>(i / config.top_k);
      p.slot_of[i] = slot;
    }
  }
  return p;
}

std::vector<double> MoeExpertGemmReference(std::span<const double> input, std::span<const double> w,
                                           const MoePermutation& perm, const MoeConfig& config, uint32_t capacity) {
  const size_t hd = config.hidden_dim, ed = config.expert_dim;
  std::vector<double> out(size_t{config.num_experts} * capacity * ed, 0.0);
  for (size_t e = 0; e < config.num_experts; ++e) {
    const uint32_t rows = std::min(perm.counts[e], capacity);
    for (size_t s = 0; s < rows; ++s) {
      const double* x = input.data() + perm.token_ids[e * capacity + s] * hd;
      for (size_t d = 0; d < ed; ++d) {
        const double* wr = w.data() + (e * ed + d) * hd;
        double sum = 0;
        for (size_t h = 0; h < hd; ++h) sum += x[h] * wr[h];
        out[(e * capacity + s) * ed + d] = sum;
      }
    }
  }
  return out;
}

std::vector<double> MoeUnpermuteReference(std::span<const double> expert_out, const MoeGating& gating,
                                          std::span<const uint32_t> slot_of, const MoeConfig& config,
                                          uint32_t capacity) {
  const size_t ed = config.expert_dim, k_count = config.top_k;
  const size_t tokens = slot_of.size() / k_count;
  std::vector<double> out(tokens * ed, 0.0);
  for (size_t t = 0; t < tokens; ++t) {
    for (size_t k = 0; k < k_count; ++k) {
      const size_t j = t * k_count + k;
      if (slot_of[j] == 0xFFFFFFFFu) continue;
      const double* row = expert_out.data() + (size_t{gating.indices[j]} * capacity + slot_of[j]) * ed;
      for (size_t d = 0; d < ed; ++d) out[t * ed + d] += gating.weights[j] * row[d];
    }
  }
  return out;
}

std::vector<double> MoeLayerReference(std::span<const double> input, std::span<const double> logits,
                                      std::span<const double> w, const MoeConfig& config) {
  const uint32_t tokens = static_cast<uint32_t>(logits.size() / config.num_experts);
  const uint32_t capacity = config.Capacity(tokens);
  MoeGating gating = MoeGatingReference(logits, config);
  MoePermutation perm = MoePermuteReference(gating.indices, config, capacity);
  std::vector<double> expert_out = MoeExpertGemmReference(input, w, perm, config, capacity);
  return MoeUnpermuteReference(expert_out, gating, perm.slot_of, config, capacity);
}

// ---- the layer

namespace {

absl::Status CheckBytes(std::string_view name, const runtime::BufferView<uint8_t>& view, std::string_view shape,
                        uint64_t elements, ir::ScalarType type) {
  const uint64_t expected = elements * ir::TypeSize(type);
  if (view.bytes() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("MoeLayer: ", name, " holds ", view.bytes(), " bytes; ", shape, " = ",
                                           elements, " ", ir::TypeName(type), " elements need ", expected));
}

template <MoeStage kStage>
absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> LoadStage(runtime::Device& device, const MoeConfig& config,
                                                                 ir::Target target) {
  MoeKernelSpec<kStage> spec;
  static_cast<MoeConfig&>(spec) = config;
  absl::StatusOr<ir::Kernel> kernel = spec.Build(target);
  if (!kernel.ok()) return kernel.status();
  if (absl::Status s = passes::Pipeline::Standard().Run(*kernel); !s.ok()) return s;
  return device.Load(*kernel);
}

}  // namespace

absl::StatusOr<runtime::Buffer<uint8_t>> MoeLayer(runtime::Device& device, const MoeConfig& config,
                                                  uint32_t tokens, const MoeLayerInputs& inputs, ir::Target target) {
  using runtime::Buffer;
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  if (tokens == 0) return absl::InvalidArgumentError("MoeLayer: tokens=0 must be positive");
  const ir::ScalarType t = config.type;
  const uint64_t tk = uint64_t{tokens} * config.top_k;
  if (absl::Status s = CheckBytes("input", inputs.input, StrCat("tokens=", tokens, " x hidden_dim=", config.hidden_dim),
                                  uint64_t{tokens} * config.hidden_dim, t);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckBytes("logits", inputs.logits,
                                  StrCat("tokens=", tokens, " x num_experts=", config.num_experts),
                                  uint64_t{tokens} * config.num_experts, t);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckBytes("w", inputs.w,
                                  StrCat("num_experts=", config.num_experts, " x expert_dim=", config.expert_dim,
                                         " x hidden_dim=", config.hidden_dim),
                                  uint64_t{config.num_experts} * config.expert_dim * config.hidden_dim, t);
      !s.ok()) {
    return s;
  }
  const uint32_t capacity = config.Capacity(tokens);
  const size_t size = ir::TypeSize(t);

  absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> gating = LoadStage<MoeStage::kTopkGating>(device, config, target);
  if (!gating.ok()) return gating.status();
  absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> permute = LoadStage<MoeStage::kPermute>(device, config, target);
  if (!permute.ok()) return permute.status();
  absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> gemm = LoadStage<MoeStage::kExpertGemm>(device, config, target);
  if (!gemm.ok()) return gemm.status();
  absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> unpermute = LoadStage<MoeStage::kUnpermute>(device, config, target);
  if (!unpermute.ok()) return unpermute.status();

  absl::StatusOr<Buffer<uint32_t>> indices = Buffer<uint32_t>::Allocate(device, tk);
  if (!indices.ok()) return indices.status();
  absl::StatusOr<Buffer<uint8_t>> weights = Buffer<uint8_t>::Allocate(device, tk * size);
  if (!weights.ok()) return weights.status();
  absl::StatusOr<Buffer<uint32_t>> token_ids = Buffer<uint32_t>::Allocate(device, size_t{config.num_experts} * capacity);
  if (!token_ids.ok()) return token_ids.status();
  absl::StatusOr<Buffer<uint32_t>> counts = Buffer<uint32_t>::Allocate(device, config.num_experts);
  if (!counts.ok()) return counts.status();
  absl::StatusOr<Buffer<uint32_t>> slot_of = Buffer<uint32_t>::Allocate(device, tk);
  if (!slot_of.ok()) return slot_of.status();
  absl::StatusOr<Buffer<uint8_t>> expert_out =
      Buffer<uint8_t>::Allocate(device, size_t{config.num_experts} * capacity * config.expert_dim * size);
  if (!expert_out.ok()) return expert_out.status();
  absl::StatusOr<Buffer<uint8_t>> output = Buffer<uint8_t>::Allocate(device, size_t{tokens} * config.expert_dim * size);
  if (!output.ok()) return output.status();

  if (absl::Status s = device.Launch(**gating, GatingLaunch(tokens), {inputs.logits, *indices, *weights, tokens});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = device.Launch(**permute, PermuteLaunch(config),
                                     {*indices, *token_ids, *counts, *slot_of, tokens, capacity});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = device.Launch(**gemm, ExpertGemmLaunch(config, capacity),
                                     {inputs.input, inputs.w, *token_ids, *counts, *expert_out, capacity});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = device.Launch(**unpermute, UnpermuteLaunch(config, tokens),
                                     {*expert_out, *indices, *weights, *slot_of, *output, tokens, capacity});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = device.Synchronize(); !s.ok()) return s;
  return std::move(*output);
}

// ---- registry families

namespace {

const ConfigField kMoeFields[] = {
    {"type", "f32", "element type: f16 (f32 accumulation), f32, f64"},
    {"num_experts", "8", "experts E, 1..1024"},
    {"top_k", "2", "experts per token, 1..num_experts"},
    {"hidden_dim", "64", "input features H"},
    {"expert_dim", "32", "output features D"},
    {"capacity_factor", "1.25", "slots per expert = ceil(capacity_factor * tokens * top_k / E); > 0"},
    {"tokens", "37", "test shape: tokens T"},
    {"logit_levels", "0", "test shape: 0 for uniform logits, N for integer logits 0..N-1 (ties)"},
};

struct MoeShape {
  MoeConfig config;
  uint32_t tokens = 0;
  uint32_t capacity = 0;
  uint32_t logit_levels = 0;
};

absl::StatusOr<MoeConfig> MoeConfigFrom(const Config& config) {
  MoeConfig c;
  absl::StatusOr<ir::ScalarType> type = config.GetType("type", kTypes);
  if (!type.ok()) return type.status();
  c.type = *type;
  for (auto [key, field] : {std::pair{"num_experts", &c.num_experts}, std::pair{"top_k", &c.top_k},
                            std::pair{"hidden_dim", &c.hidden_dim}, std::pair{"expert_dim", &c.expert_dim}}) {
    absl::StatusOr<uint32_t> v = config.GetU32(key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  absl::StatusOr<double> cf = config.GetDouble("capacity_factor");
  if (!cf.ok()) return cf.status();
  c.capacity_factor = *cf;
  if (absl::Status s = c.Validate(); !s.ok()) return s;
  return c;
}

absl::StatusOr<MoeShape> MoeShapeFrom(const Config& config) {
  MoeShape shape;
  absl::StatusOr<MoeConfig> c = MoeConfigFrom(config);
  if (!c.ok()) return c.status();
  shape.config = *c;
  absl::StatusOr<uint32_t> tokens = config.GetU32("tokens");
  if (!tokens.ok()) return tokens.status();
  if (*tokens == 0) return absl::InvalidArgumentError("moe: tokens=0 must be positive");
  absl::StatusOr<uint32_t> levels = config.GetU32("logit_levels");
  if (!levels.ok()) return levels.status();
  shape.tokens = *tokens;
  shape.capacity = shape.config.Capacity(*tokens);
  shape.logit_levels = *levels;
  return shape;
}

// Logits as doubles exactly representable in the type: uniform in [-4, 4),
// or integers 0..levels-1 so that tokens tie.
HostBuffer Logits(const MoeShape& shape, std::mt19937_64& rng) {
  const size_t count = size_t{shape.tokens} * shape.config.num_experts;
  if (shape.logit_levels == 0) return RandomBuffer("logits", shape.config.type, count, rng, -4, 4);
  std::vector<double> v(count);
  std::uniform_int_distribution<uint32_t> level(0, shape.logit_levels - 1);
  for (double& x : v) x = level(rng);
  HostBuffer b = ZeroBuffer("logits", shape.config.type, count);
  b.data = FromDoubles(shape.config.type, v);
  return b;
}

HostBuffer U32Buffer(std::string name, std::span<const uint32_t> values) {
  HostBuffer b = ZeroBuffer(std::move(name), ir::ScalarType::kU32, values.size());
  std::vector<int64_t> ints(values.begin(), values.end());
  b.data = FromInts(ir::ScalarType::kU32, ints);
  return b;
}

HostBuffer Output(HostBuffer b, std::vector<uint8_t> expected, double tolerance, double magnitude = 1) {
  b.is_output = true;
  b.expected = std::move(expected);
  b.tolerance = tolerance;
  b.magnitude = magnitude;
  return b;
}

// The tolerance of values computed with ex2.approx (f32) or stored in f16.
double GatingTolerance(ir::ScalarType t) { return t == ir::ScalarType::kF32 ? 1e-4 : DefaultTolerance(t); }

std::vector<double> Abs(std::vector<double> v) {
  for (double& x : v) x = std::fabs(x);
  return v;
}

double MaxOf(std::span<const double> v) {
  double m = 1;
  for (double x : v) m = std::max(m, x);
  return m;
}

}  // namespace

template <MoeStage kStage>
std::string_view MoeFamily<kStage>::name() const {
  switch (kStage) {
    case MoeStage::kTopkGating: return "moe.topk_gating";
    case MoeStage::kPermute: return "moe.permute";
    case MoeStage::kExpertGemm: return "moe.expert_gemm";
    case MoeStage::kUnpermute: return "moe.unpermute";
  }
  return "";
}

template <MoeStage kStage>
std::string_view MoeFamily<kStage>::description() const {
  switch (kStage) {
    case MoeStage::kTopkGating: return "MoE top-k gating: top_k logits per token (ties to the lower index), renormalised softmax weights";
    case MoeStage::kPermute: return "MoE permute: deterministic per-expert slots (ballot prefix sums), capacity drops counted";
    case MoeStage::kExpertGemm: return "MoE expert GEMM: gathered token rows times each expert's weights, 16x16 shared-memory tiles";
    case MoeStage::kUnpermute: return "MoE unpermute: weighted sum of each token's expert outputs through slot_of";
  }
  return "";
}

template <MoeStage kStage>
std::span<const ConfigField> MoeFamily<kStage>::fields() const {
  return kMoeFields;
}

template <MoeStage kStage>
absl::StatusOr<MoeKernelSpec<kStage>> MoeFamily<kStage>::SpecFrom(const Config& config) const {
  absl::StatusOr<MoeConfig> c = MoeConfigFrom(config);
  if (!c.ok()) return c.status();
  MoeKernelSpec<kStage> spec;
  static_cast<MoeConfig&>(spec) = *c;
  return spec;
}

template <MoeStage kStage>
absl::StatusOr<TestProblem> MoeFamily<kStage>::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<MoeShape> shape = MoeShapeFrom(config);
  if (!shape.ok()) return shape.status();
  const MoeConfig& c = shape->config;
  const ir::ScalarType t = c.type;
  const uint32_t tokens = shape->tokens, capacity = shape->capacity;
  const size_t tk = size_t{tokens} * c.top_k;
  std::mt19937_64 rng(seed);
  HostBuffer logits = Logits(*shape, rng);
  MoeGating gating = MoeGatingReference(AsDoubles(t, logits.data), c);
  MoePermutation perm = MoePermuteReference(gating.indices, c, capacity);
  TestProblem p;
  p.shape = StrCat("tokens=", tokens, " capacity=", capacity);
  if constexpr (kStage == MoeStage::kTopkGating) {
    p.buffers.push_back(std::move(logits));
    p.buffers.push_back(Output(ZeroBuffer("expert_indices", ir::ScalarType::kU32, tk),
                               U32Buffer("", gating.indices).data, 0));
    p.buffers.push_back(Output(ZeroBuffer("expert_weights", t, tk), FromDoubles(t, gating.weights), GatingTolerance(t)));
    p.args = {size_t{0}, size_t{1}, size_t{2}, ScalarU32(tokens)};
    runtime::LaunchConfig launch = GatingLaunch(tokens);
    p.grid = {launch.grid.x, 1, 1};
    p.block = {launch.block.x, 1, 1};
  } else if constexpr (kStage == MoeStage::kPermute) {
    p.buffers.push_back(U32Buffer("expert_indices", gating.indices));
    p.buffers.push_back(Output(ZeroBuffer("token_ids", ir::ScalarType::kU32, size_t{c.num_experts} * capacity),
                               U32Buffer("", perm.token_ids).data, 0));
    p.buffers.push_back(Output(ZeroBuffer("expert_counts", ir::ScalarType::kU32, c.num_experts),
                               U32Buffer("", perm.counts).data, 0));
    p.buffers.push_back(Output(ZeroBuffer("slot_of", ir::ScalarType::kU32, tk), U32Buffer("", perm.slot_of).data, 0));
    p.args = {size_t{0}, size_t{1}, size_t{2}, size_t{3}, ScalarU32(tokens), ScalarU32(capacity)};
    runtime::LaunchConfig launch = PermuteLaunch(c);
    p.grid = {launch.grid.x, 1, 1};
    p.block = {launch.block.x, 1, 1};
  } else if constexpr (kStage == MoeStage::kExpertGemm) {
    HostBuffer input = RandomBuffer("input", t, size_t{tokens} * c.hidden_dim, rng, -1, 1);
    HostBuffer w = RandomBuffer("w", t, size_t{c.num_experts} * c.expert_dim * c.hidden_dim, rng, -1, 1);
    std::vector<double> x = AsDoubles(t, input.data), wd = AsDoubles(t, w.data);
    std::vector<double> expected = MoeExpertGemmReference(x, wd, perm, c, capacity);
    const double magnitude = MaxOf(MoeExpertGemmReference(Abs(x), Abs(wd), perm, c, capacity));
    p.buffers.push_back(std::move(input));
    p.buffers.push_back(std::move(w));
    p.buffers.push_back(U32Buffer("token_ids", perm.token_ids));
    p.buffers.push_back(U32Buffer("expert_counts", perm.counts));
    p.buffers.push_back(Output(ZeroBuffer("expert_out", t, size_t{c.num_experts} * capacity * c.expert_dim),
                               FromDoubles(t, expected), DefaultTolerance(t), magnitude));
    p.args = {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4}, ScalarU32(capacity)};
    runtime::LaunchConfig launch = ExpertGemmLaunch(c, capacity);
    p.grid = {launch.grid.x, launch.grid.y, launch.grid.z};
    p.block = {launch.block.x, 1, 1};
  } else {
    HostBuffer expert_out = RandomBuffer("expert_out", t, size_t{c.num_experts} * capacity * c.expert_dim, rng, -1, 1);
    HostBuffer weights = ZeroBuffer("expert_weights", t, tk);
    weights.data = FromDoubles(t, gating.weights);
    gating.weights = AsDoubles(t, weights.data);  // the kernel reads them rounded to the type
    std::vector<double> expected = MoeUnpermuteReference(AsDoubles(t, expert_out.data), gating, perm.slot_of, c, capacity);
    p.buffers.push_back(std::move(expert_out));
    p.buffers.push_back(U32Buffer("expert_indices", gating.indices));
    p.buffers.push_back(std::move(weights));
    p.buffers.push_back(U32Buffer("slot_of", perm.slot_of));
    p.buffers.push_back(Output(ZeroBuffer("output", t, size_t{tokens} * c.expert_dim), FromDoubles(t, expected),
                               DefaultTolerance(t)));
    p.args = {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4}, ScalarU32(tokens), ScalarU32(capacity)};
    runtime::LaunchConfig launch = UnpermuteLaunch(c, tokens);
    p.grid = {launch.grid.x, 1, 1};
    p.block = {launch.block.x, 1, 1};
  }
  return p;
}

template class MoeFamily<MoeStage::kTopkGating>;
template class MoeFamily<MoeStage::kPermute>;
template class MoeFamily<MoeStage::kExpertGemm>;
template class MoeFamily<MoeStage::kUnpermute>;

}  // namespace ptxforge::kernels
