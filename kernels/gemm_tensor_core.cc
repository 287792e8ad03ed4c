// gemm.tensor_core, written with the builder's mma fragments, ldmatrix and cp.async.
#include "kernels/gemm_tensor_core.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>

#include "builder/memory.h"
#include "builder/mma.h"
#include "ir/strings.h"
#include "kernels/accumulate.h"
#include "kernels/kernel_math.h"
#include "kernels/type_dispatch.h"

namespace ptxforge::kernels {
namespace {

constexpr ir::StateSpace kShared = ir::StateSpace::kShared;
constexpr MmaShape kShape = MmaShape::kM16N8K16;
constexpr uint32_t kMaxDim = uint32_t{1} << 31;

uint32_t Log2(uint32_t v) { return static_cast<uint32_t>(std::countr_zero(v)); }

// A shared tile with rows of `cols` 2-byte elements: R = cols / 8 pieces of 16 bytes a row, piece p of row r stored
// at piece p ^ f(r), f(r) = (r % 8) >> SwizzleShift(cols) (the shift is log2 of max(1, 8 / R)).
uint32_t SwizzleShift(uint32_t cols) { return cols >= 64 ? 0 : Log2(64 / cols); }

// One operand as the loads see it: a row-major [rows, ld] matrix in global memory (A [M, K]; row-major B [K, N];
// column-major B as [N, K]) whose tile of tile_rows x tile_cols is copied into each stage at `smem_offset`.
struct Operand {
  Ptr<U16, Global> base;
  Value<U32> rows, ld;  // the columns are bounded by ld
  uint32_t tile_rows, tile_cols, smem_offset;
  Value<Pred> vec;  // ld % 8 == 0 and a 16-byte aligned base: 16-byte cp.async
};

template <ScalarTag In, ScalarTag Out>
void Body(KernelBuilder& b, const GemmTensorCoreSpec& s) {
  using FragA = MmaFragA<kShape, In>;
  using FragB = MmaFragB<kShape, In>;
  using Reg = typename FragA::Reg;
  const uint32_t bm = s.block_m, bn = s.block_n, bk = s.block_k, nt = s.threads(), sb = s.stage_bytes();
  const uint32_t wtm = s.warp_m() / 16, wtn = s.warp_n() / 8;  // mma tiles per warp
  const bool b_row = s.b_layout == GemmBLayout::kRow;
  b.SetRequiredThreads(nt);

  auto pa = GlobalParam<U16>(b, "a"), pb = GlobalParam<U16>(b, "b");
  auto pc = GlobalParam<Out>(b, "c");
  std::optional<Ptr<Out, Global>> pbias;
  if (s.bias) pbias = GlobalParam<Out>(b, "bias");
  Value<U32> m = b.Param<U32>("m"), n = b.Param<U32>("n"), k = b.Param<U32>("k");
  std::optional<Value<F32>> alpha, beta;
  if (s.scale) {
    alpha = b.Param<F32>("alpha");
    beta = b.Param<F32>("beta");
  }
  Value<U32> smem = SharedArray<U16>(b, "smem", s.stages * sb / 2, 128).base();
  Value<U32> tid = b.TidX(), lane = b.And(tid, 31u), warp = b.Shr(tid, 5u);
  Value<U32> wm = b.Shr(warp, Log2(s.warps_n)), wn = b.And(warp, s.warps_n - 1);
  Value<U32> m0 = b.Mul(b.CtaidY(), bm), n0 = b.Mul(b.CtaidX(), bn);
  Value<U32> ktiles = b.Shr(b.Add(k, bk - 1), Log2(bk));

  // 16-byte copies when the rows start on 16-byte boundaries: ld % 8 == 0 and the base 16-byte aligned.
  auto vec_ok = [&](const Ptr<U16, Global>& p, Value<U32> ld) {
    Value<Pred> aligned = b.Eq(b.And(p.base(), uint64_t{15}), uint64_t{0});
    return b.SetpCombine(ir::CmpOp::kEq, ir::BoolOp::kAnd, b.And(ld, 7u), 0u, aligned);
  };
  const Operand op_a{pa, m, k, bm, bk, 0, vec_ok(pa, k)};
  const Operand op_b = b_row ? Operand{pb, k, n, bk, bn, 2 * bm * bk, vec_ok(pb, n)}
                             : Operand{pb, n, k, bn, bk, 2 * bm * bk, vec_ok(pb, k)};
  Value<U32> sixteen = b.Const<U32>(16u);

  // The tile of `o` at (row0, col0) into the stage at byte `stage` of smem.
  auto load_tile = [&](const Operand& o, Value<U32> row0, Value<U32> col0, Value<U32> stage) {
    const uint32_t cols = o.tile_cols, shift = SwizzleShift(cols), row_bytes = 2 * cols;
    Value<U32> tile = b.Add(b.Add(smem, stage), o.smem_offset);
    b.IfElse(
        o.vec,
        [&] {  // thread t copies piece t % R of rows t / R + i * (nt / R): one 16-byte cp.async each
          const uint32_t pieces = cols / 8, step = nt / pieces;
          Value<U32> pr = b.Shr(tid, Log2(pieces)), pp = b.And(tid, pieces - 1);
          Value<U32> swz = b.Xor(pp, b.Shr(b.And(pr, 7u), shift));
          Value<U32> dst = b.Add(tile, b.Mad(pr, row_bytes, b.Shl(swz, 4u)));
          Value<U32> col = b.Add(col0, b.Shl(pp, 3u)), row = b.Add(row0, pr);
          Value<Pred> col_ok = b.Lt(col, o.ld);
          // A piece past the edge reads nothing (src-size 0) but still names an address inside the matrix: row 0
          // for a row past M (N, K), column 0 for a column past the edge.
          Value<U64> col64 = b.Cvt<U64>(b.Select(col_ok, col, 0u));
          for (uint32_t i = 0; i < o.tile_rows / step; ++i) {
            Value<U32> r = i == 0 ? row : b.Add(row, i * step);
            Value<Pred> row_ok = b.Lt(r, o.rows);
            Value<Pred> in = b.And(row_ok, col_ok);
            Ptr<U16, Global> src = o.base.At(b.MadWide(b.Select(row_ok, r, 0u), o.ld, col64));
            b.CpAsync(Address(dst, int64_t{i} * step * row_bytes), src.address(), 16,
                      Src<U32>(b.Select(in, sixteen, 0u)), KernelBuilder::CpAsyncCache::kCg);
          }
        },
        [&] {  // element by element: thread t copies column t % cols of rows t / cols + i * (nt / cols)
          const uint32_t step = nt / cols;
          Value<U32> pr = b.Shr(tid, Log2(cols)), pcol = b.And(tid, cols - 1);
          Value<U32> col = b.Add(col0, pcol);
          Value<Pred> col_ok = b.Lt(col, o.ld);
          Value<U64> col64 = b.Cvt<U64>(col);
          Value<U32> piece = b.Shr(pcol, 3u), in_piece = b.Shl(b.And(pcol, 7u), 1u);
          for (uint32_t i = 0; i < o.tile_rows / step; ++i) {
            Value<U32> tr = b.Add(pr, i * step), r = b.Add(row0, tr);
            Var<U16> v = b.Mutable<U16>(uint16_t{0});
            b.If(b.SetpCombine(ir::CmpOp::kLt, ir::BoolOp::kAnd, r, o.rows, col_ok),
                 [&] { b.Assign(v, o.base.At(b.MadWide(r, o.ld, col64)).Load()); });
            Value<U32> swz = b.Xor(piece, b.Shr(b.And(tr, 7u), shift));
            Value<U32> at = b.Mad(tr, row_bytes, b.Add(tile, b.Mad(swz, 16u, in_piece)));
            b.Store(kShared, Address(at), Value<U16>(v));
          }
        });
  };
  // Slab `kt` (k from kt * bk) into the stage at `stage`.
  auto load_stage = [&](Value<U32> kt, Value<U32> stage) {
    Value<U32> k0 = b.Shl(kt, Log2(bk));
    load_tile(op_a, m0, k0, stage);
    if (b_row) {
      load_tile(op_b, k0, n0, stage);
    } else {
      load_tile(op_b, n0, k0, stage);
    }
  };

  // Each lane's ldmatrix row addresses (byte offsets in a stage). Lane l gives row l % 8 of matrix l / 8; its
  // swizzle is f(l % 8), since every tile row it names is l % 8 plus a multiple of 8.
  Value<U32> lr = b.And(lane, 7u), q0 = b.And(b.Shr(lane, 3u), 1u), q1 = b.Shr(lane, 4u);
  // A and column-major B ([rows][bk] tiles): matrix q is rows + 8 * (q & 1) (A) or 8 * (q >> 1) (B), piece
  // 2 * kk + the other bit. Row r of the warp's part, piece p: r * 2 bk + 16 * (p ^ f).
  auto k_major_offsets = [&](Value<U32> warp_row0, Value<U32> row_bit, Value<U32> piece_bit, uint32_t offset) {
    std::vector<Value<U32>> offs;
    Value<U32> row = b.Add(warp_row0, b.Mad(row_bit, 8u, lr));
    Value<U32> x = b.Xor(piece_bit, b.Shr(lr, SwizzleShift(bk)));
    Value<U32> row_off = b.Mad(row, 2 * bk, offset);
    for (uint32_t kk = 0; kk < bk / 16; ++kk) offs.push_back(b.Mad(b.Xor(x, 2 * kk), 16u, row_off));
    return offs;
  };
  std::vector<Value<U32>> a_offs = k_major_offsets(b.Mul(wm, s.warp_m()), q0, q1, 0);
  std::vector<Value<U32>> b_offs;
  if (b_row) {
    // Row-major B ([bk][bn] tile), ldmatrix.x4.trans per pair of n8 tiles j: matrix q is k rows 8 * (q & 1) + lane
    // row, piece warp_n0 / 8 + 2 j + (q >> 1).
    Value<U32> row_off = b.Mad(b.Mad(q0, 8u, lr), 2 * bn, 2 * bm * bk);
    Value<U32> piece0 = b.Add(b.Mul(wn, s.warp_n() / 8), q1), f = b.Shr(lr, SwizzleShift(bn));
    for (uint32_t j = 0; j < wtn / 2; ++j) b_offs.push_back(b.Mad(b.Xor(b.Add(piece0, 2 * j), f), 16u, row_off));
  } else {
    b_offs = k_major_offsets(b.Mul(wn, s.warp_n()), q1, q0, 2 * bm * bk);
  }

  std::vector<std::array<Var<F32>, 4>> acc(wtm * wtn);  // tile (mi, ni): acc[mi * wtn + ni]
  for (auto& tile : acc) {
    for (Var<F32>& x : tile) x = b.Mutable<F32>(0.0f, "acc");
  }
  auto as_reg = [&](Value<B32> v) { return Value<Reg>(v.reg); };
  auto compute = [&](Value<U32> stage) {
    Value<U32> base = b.Add(smem, stage);
    for (uint32_t kk = 0; kk < bk / 16; ++kk) {
      std::vector<FragA> fa(wtm);
      std::vector<FragB> fb(wtn);
      Value<U32> pa_kk = b.Add(base, a_offs[kk]);
      for (uint32_t mi = 0; mi < wtm; ++mi) {
        std::array<Value<B32>, 4> r = b.LdMatrix<4>(Address(pa_kk, int64_t{mi} * 16 * 2 * bk));
        for (int j = 0; j < 4; ++j) fa[mi].regs[j] = as_reg(r[j]);
      }
      for (uint32_t j = 0; j < wtn / 2; ++j) {
        std::array<Value<B32>, 4> r =
            b_row ? b.LdMatrix<4>(Address(b.Add(base, b_offs[j]), int64_t{kk} * 16 * 2 * bn), /*trans=*/true)
                  : b.LdMatrix<4>(Address(b.Add(base, b_offs[kk]), int64_t{j} * 16 * 2 * bk));
        fb[2 * j].regs = {as_reg(r[0]), as_reg(r[1])};
        fb[2 * j + 1].regs = {as_reg(r[2]), as_reg(r[3])};
      }
      for (uint32_t mi = 0; mi < wtm; ++mi) {
        for (uint32_t ni = 0; ni < wtn; ++ni) {
          MmaInto(b, acc[mi * wtn + ni], fa[mi], fb[ni]);
        }
      }
    }
  };

  // The pipeline: slabs 0 .. stages-2 in flight, then per slab kt: wait for it, barrier (every warp is done with
  // slab kt-1, whose buffer is refilled next), issue slab kt + stages - 1, multiply slab kt. One group per slab
  // (empty past the last), so `wait_group stages-2` always means "slab kt has landed".
  for (uint32_t st = 0; st + 1 < s.stages; ++st) {
    auto issue = [&] {
      Value<U32> kt = b.Const<U32>(st);  // one statement each: C++ leaves the order of arguments open
      load_stage(kt, b.Const<U32>(st * sb));
    };
    if (st == 0) {
      issue();  // slab 0 (all zero-fill when k = 0)
    } else {
      b.If(b.Gt(ktiles, st), issue);
    }
    b.CpAsyncCommitGroup();
  }
  Var<U32> rd = b.Mutable<U32>(0u, "rd"), wr = b.Mutable<U32>((s.stages - 1) * sb, "wr");
  auto next_stage = [&](Value<U32> x) {
    Value<U32> y = b.Add(x, sb);
    return b.Select(b.Lt(y, s.stages * sb), y, 0u);
  };
  b.ForRange<U32>(0u, ktiles, 1u, [&](Value<U32> kt) {
    b.CpAsyncWaitGroup(s.stages - 2);
    b.BarSync();
    Value<U32> kt_next = b.Add(kt, s.stages - 1);
    b.If(b.Lt(kt_next, ktiles), [&] { load_stage(kt_next, wr); });
    b.CpAsyncCommitGroup();
    compute(rd);
    b.Assign(rd, next_stage(rd));
    b.Assign(wr, next_stage(wr));
  });
  // Only empty groups are left in flight, except for k = 0, where slab 0's zero-fill copies were never waited
  // for: retire them before the epilogue so that no thread ends with a copy in flight.
  b.CpAsyncWaitAll();

  // The epilogue: accumulator element e of tile (mi, ni) is C's (row0 + 16 mi + 8 (e >> 1), col0 + 8 ni + (e & 1)).
  Value<U32> row0 = b.Mad(wm, s.warp_m(), b.Add(m0, b.Shr(lane, 2u)));
  Value<U32> col0 = b.Mad(wn, s.warp_n(), b.Add(n0, b.Shl(b.And(lane, 3u), 1u)));
  std::optional<Value<Pred>> read_c;
  // Unordered: a NaN beta reads C (and gives NaN, as beta * C does); only beta == 0 skips it.
  if (s.scale) read_c = b.Setp(ir::CmpOp::kNeu, *beta, 0.0f);
  for (uint32_t mi = 0; mi < wtm; ++mi) {
    for (uint32_t h = 0; h < 2; ++h) {
      Value<U32> row = b.Add(row0, 16 * mi + 8 * h);
      b.If(b.Lt(row, m), [&] {
        Ptr<Out, Global> crow = pc.At(b.MulWide(row, n));
        for (uint32_t ni = 0; ni < wtn; ++ni) {
          for (uint32_t e = 0; e < 2; ++e) {
            Value<U32> col = b.Add(col0, 8 * ni + e);
            b.If(b.Lt(col, n), [&] {
              Ptr<Out, Global> p = crow.At(col);
              Value<F32> a = acc[mi * wtn + ni][2 * h + e];
              Var<F32> v = b.Mutable<F32>(s.scale ? b.Mul(a, *alpha) : a);
              if (s.scale) b.If(*read_c, [&] { b.Assign(v, b.Fma(ConvertTo<F32>(b, p.Load()), *beta, v)); });
              if (s.bias) b.Assign(v, b.Add(v, ConvertTo<F32>(b, pbias->Load(col))));
              if constexpr (std::is_same_v<Out, F32>) {
                p.Store(v);
              } else {
                p.Store(b.Cvt<Out>(Value<F32>(v), {.rounding = ir::Rounding::kRn}));
              }
            });
          }
        }
      });
    }
  }
  b.Ret();
}

bool OneOf(uint32_t v, std::initializer_list<uint32_t> allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

}  // namespace

std::vector<double> GemmTensorCoreReference(std::span<const double> a, std::span<const double> b, bool b_col,
                                            std::span<const double> c, std::span<const double> bias, uint32_t m,
                                            uint32_t n, uint32_t k, double alpha, double beta) {
  std::vector<double> out(size_t{m} * n);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      double sum = 0;
      for (uint32_t l = 0; l < k; ++l) {
        sum += a[size_t{i} * k + l] * (b_col ? b[size_t{j} * k + l] : b[size_t{l} * n + j]);
      }
      double v = alpha * sum + (beta == 0 ? 0.0 : beta * c[size_t{i} * n + j]);
      out[size_t{i} * n + j] = bias.empty() ? v : v + bias[j];
    }
  }
  return out;
}

absl::Status GemmTensorCoreSpec::Validate() const {
  auto error = [](auto&&... parts) { return absl::InvalidArgumentError(StrCat("gemm.tensor_core: ", parts...)); };
  if (type != ir::ScalarType::kF16 && type != ir::ScalarType::kBF16) {
    return error("type ", ir::TypeName(type), " is not supported (f16 or bf16 inputs)");
  }
  if (out_type != ir::ScalarType::kF32 && out_type != type) {
    return error("out_type ", ir::TypeName(out_type), " with type ", ir::TypeName(type), ": the output is f32 or ",
                 ir::TypeName(type));
  }
  for (auto [name, v] : {std::pair{"block_m", block_m}, std::pair{"block_n", block_n}}) {
    if (!OneOf(v, {32, 64, 128})) return error(name, "=", v, " must be 32, 64 or 128");
  }
  if (!OneOf(block_k, {16, 32, 64})) return error("block_k=", block_k, " must be 16, 32 or 64");
  if (!OneOf(warps_m, {1, 2, 4, 8}) || !OneOf(warps_n, {1, 2, 4, 8}) || !OneOf(warps_m * warps_n, {4, 8})) {
    return error("warps_m=", warps_m, " x warps_n=", warps_n, ": a block has 4 or 8 warps (powers of 2)");
  }
  if (block_m % (16 * warps_m) != 0) {
    return error("block_m=", block_m, " over warps_m=", warps_m, " is not a whole number of 16-row mma tiles per warp");
  }
  if (block_n % (16 * warps_n) != 0) {
    return error("block_n=", block_n, " over warps_n=", warps_n,
                 " is not a whole number of 16-column pairs of mma tiles per warp");
  }
  for (auto [name, rows, cols] : {std::tuple{"A", block_m, block_k}, std::tuple{"B", block_k, block_n}}) {
    if (rows * cols / 8 % threads() != 0) {
      return error("the ", rows, "x", cols, " ", name, " tile is ", rows * cols / 8, " 16-byte pieces, not a multiple of the ",
                   threads(), " threads");
    }
  }
  if (stages < 2 || stages > 8) return error("stages=", stages, " must be 2 to 8");
  if (uint64_t{stages} * stage_bytes() > ir::MaxStaticSharedBytes(ir::Target::kSm80)) {
    return error(stages, " stages of ", stage_bytes(), " bytes need ", stages * stage_bytes(),
                 " bytes of shared memory, more than the ", ir::MaxStaticSharedBytes(ir::Target::kSm80),
                 " a kernel may declare");
  }
  return absl::OkStatus();
}

std::string GemmTensorCoreSpec::KernelName() const {
  return StrCat("gemm_tc_", ir::TypeName(type), "_", ir::TypeName(out_type), "_",
                b_layout == GemmBLayout::kRow ? "row" : "col", "_", block_m, "x", block_n, "x", block_k, "_", warps_m,
                "x", warps_n, "_s", stages, scale ? "" : "_noscale", bias ? "_bias" : "");
}

absl::StatusOr<ir::Kernel> GemmTensorCoreSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  if (ir::GetTargetInfo(target).sm < 80) {
    return absl::InvalidArgumentError(StrCat("gemm.tensor_core: needs sm_80 or newer (cp.async, mma.sync m16n8k16), not ",
                                             ir::TargetName(target)));
  }
  KernelBuilder b(KernelName(), target);
  DispatchType(type, [&]<typename In>() {
    DispatchType(out_type, [&]<typename Out>() {
      if constexpr ((std::is_same_v<In, F16> || std::is_same_v<In, BF16>) &&
                    (std::is_same_v<Out, F32> || std::is_same_v<Out, In>)) {
        Body<In, Out>(b, *this);
      }
    });
  });
  return b.Finish();
}

std::span<const ConfigField> GemmTensorCoreFamily::fields() const {
  static const ConfigField kFields[] = {
      {"type", "f16", "input element type: f16, bf16"},
      {"out_type", "f32", "C's element type: f32, or the input type (f32 accumulation either way)"},
      {"b_layout", "row", "B's layout: row (B[k][n]) or col (B[n][k])"},
      {"block_m", "128", "block tile rows: 32, 64, 128"},
      {"block_n", "128", "block tile columns: 32, 64, 128"},
      {"block_k", "32", "K per pipeline stage: 16, 32, 64"},
      {"warps_m", "2", "warps along M (warps_m * warps_n: 4 or 8)"},
      {"warps_n", "4", "warps along N"},
      {"stages", "3", "cp.async pipeline stages: 2 to 8 (within 48 KiB of shared memory)"},
      {"scale", "true", "alpha and beta params (false: C = A*B, C not read)"},
      {"bias", "false", "add a bias[n] (out_type) to every row"},
      {"m", "200", "test shape: rows of A and C"},
      {"n", "136", "test shape: columns of B and C"},
      {"k", "72", "test shape: columns of A, rows of B"},
      {"alpha", "1.5", "test value of alpha"},
      {"beta", "-0.5", "test value of beta (0: C starts as NaN and must not be read)"},
  };
  return kFields;
}

absl::StatusOr<GemmTensorCoreSpec> GemmTensorCoreFamily::SpecFrom(const Config& config) const {
  static constexpr std::array kTypes = {ir::ScalarType::kF16, ir::ScalarType::kBF16};
  static constexpr std::array kOutTypes = {ir::ScalarType::kF32, ir::ScalarType::kF16, ir::ScalarType::kBF16};
  GemmTensorCoreSpec spec;
  absl::StatusOr<ir::ScalarType> type = config.GetType("type", kTypes);
  if (!type.ok()) return type.status();
  spec.type = *type;
  absl::StatusOr<ir::ScalarType> out_type = config.GetType("out_type", kOutTypes);
  if (!out_type.ok()) return out_type.status();
  spec.out_type = *out_type;
  absl::StatusOr<std::string> layout = config.GetString("b_layout");
  if (!layout.ok()) return layout.status();
  if (*layout != "row" && *layout != "col") {
    return absl::InvalidArgumentError(StrCat("gemm.tensor_core: b_layout=", *layout, " must be row or col"));
  }
  spec.b_layout = *layout == "row" ? GemmBLayout::kRow : GemmBLayout::kCol;
  for (auto [key, field] : {std::pair{"block_m", &spec.block_m}, std::pair{"block_n", &spec.block_n},
                            std::pair{"block_k", &spec.block_k}, std::pair{"warps_m", &spec.warps_m},
                            std::pair{"warps_n", &spec.warps_n}, std::pair{"stages", &spec.stages}}) {
    absl::StatusOr<uint32_t> v = config.GetU32(key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  for (auto [key, field] : {std::pair{"scale", &spec.scale}, std::pair{"bias", &spec.bias}}) {
    absl::StatusOr<bool> v = config.GetBool(key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> GemmTensorCoreFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<GemmTensorCoreSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<GemmTestShape> dims = GetGemmTestShape("gemm.tensor_core", config);
  if (!dims.ok()) return dims.status();
  const uint32_t m = dims->m, n = dims->n, k = dims->k;
  for (auto [name, v] : {std::pair{"m", m}, std::pair{"n", n}, std::pair{"k", k}}) {
    if (v >= kMaxDim) {
      return absl::InvalidArgumentError(StrCat("gemm.tensor_core: ", name, "=", v,
                                               " must be below 2^31 (the kernel's row and column indices are u32)"));
    }
  }
  // Without alpha/beta params the problem is C = A * B (+ bias).
  const float alpha = spec->scale ? static_cast<float>(dims->alpha) : 1.0f;
  const float beta = spec->scale ? static_cast<float>(dims->beta) : 0.0f;
  const std::string shape = StrCat("m=", m, " n=", n, " k=", k, spec->scale ? StrCat(" alpha=", alpha, " beta=", beta) : "",
                                   spec->bias ? " bias" : "");
  // Each element: its data (at most 4 bytes) and a double copy; C also its expected value and the reference's double.
  if (absl::Status s = CheckProblemSize("gemm.tensor_core", shape,
                                        {{uint64_t{m} * k, 10}, {uint64_t{k} * n, 10}, {uint64_t{m} * n, 24}});
      !s.ok()) {
    return s;
  }
  absl::StatusOr<uint32_t> grid_y = GridYFor("gemm.tensor_core", "m", m, spec->block_m);
  if (!grid_y.ok()) return grid_y.status();
  std::mt19937_64 rng(seed);
  const ir::ScalarType t = spec->type, ot = spec->out_type;
  const bool b_col = spec->b_layout == GemmBLayout::kCol;
  TestProblem p;
  p.buffers.push_back(RandomBuffer("a", t, size_t{m} * k, rng, -1, 1));
  p.buffers.push_back(RandomBuffer("b", t, size_t{k} * n, rng, -1, 1));
  // C is not read when beta == 0 (or without alpha/beta): it starts as NaN, which the kernel must overwrite.
  HostBuffer c = RandomBuffer("c", ot, size_t{m} * n, rng, -1, 1);
  if (beta == 0) c.data = FromDoubles(ot, std::vector<double>(c.count(), std::numeric_limits<double>::quiet_NaN()));
  c.is_output = true;
  std::vector<double> bias;
  if (spec->bias) {
    HostBuffer bb = RandomBuffer("bias", ot, n, rng, -1, 1);
    bias = AsDoubles(ot, bb.data);
    p.buffers.push_back(std::move(bb));
  }
  // The issue's tolerance for f16/bf16 inputs: 1e-2 of max(|expected|, 1). The inputs' products are exact; the f32
  // sum is rounded once per m16n8k16 step, ceil(k / 16) roundings of at most 2^-24 of a partial sum (|sum| <= k),
  // under 0.004 in all for k <= 1024; alpha, beta, bias and an f16 (2^-11) or bf16 (2^-8) C add one rounding each.
  // A lost or doubled product (|a * b| about 0.25 on average) stands out against 1e-2 of the typical |C| ~ sqrt(k) / 3.
  c.tolerance = 1e-2;
  c.magnitude = 1;
  c.expected = FromDoubles(ot, GemmTensorCoreReference(AsDoubles(t, p.buffers[0].data), AsDoubles(t, p.buffers[1].data),
                                                       b_col, AsDoubles(ot, c.data), bias, m, n, k, alpha, beta));
  p.buffers.insert(p.buffers.begin() + 2, std::move(c));
  p.args = {size_t{0}, size_t{1}, size_t{2}};
  if (spec->bias) p.args.push_back(size_t{3});
  for (uint32_t v : {m, n, k}) p.args.push_back(ScalarU32(v));
  if (spec->scale) {
    p.args.push_back(Scalar(ir::ScalarType::kF32, std::bit_cast<uint32_t>(alpha)));
    p.args.push_back(Scalar(ir::ScalarType::kF32, std::bit_cast<uint32_t>(beta)));
  }
  p.block = {spec->threads(), 1, 1};
  p.grid = {static_cast<uint32_t>((uint64_t{n} + spec->block_n - 1) / spec->block_n), *grid_y, 1};
  p.shape = shape;
  return p;
}

}  // namespace ptxforge::kernels
