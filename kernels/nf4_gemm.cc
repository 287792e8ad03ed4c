// nf4.gemm and nf4.gemm_transpose, written with the builder.
#include "kernels/nf4_gemm.h"

#include <bit>
#include <cstring>
#include <random>

#include "builder/kernel_builder.h"
#include "ir/strings.h"
#include "ir/target.h"
#include "kernels/accumulate.h"

namespace ptxforge::kernels {
namespace {

using ir::StateSpace;
constexpr StateSpace kGlobal = StateSpace::kGlobal;
constexpr StateSpace kShared = StateSpace::kShared;
constexpr MemOpts kReadOnly = {.nc = true};
constexpr uint32_t kThreads = 256;  // 16 x 16: thread (tx, ty) = (tid % 16, tid / 16)
constexpr uint32_t kSharedLimit = 48 * 1024;

// The codebook in shared memory, written by thread 0 (the caller syncs
// before the first read). Returns its 32-bit shared address.
Value<U32> SharedCodebook(KernelBuilder& b, Value<U32> tid) {
  Symbol<F32> codebook = b.Shared<F32>("codebook", 16);
  Value<U32> base = b.Name(b.SymbolAddr(codebook), "codebook");
  Value<Pred> first = b.Eq(tid, 0u);
  b.If(first, [&] {
    for (uint32_t i = 0; i < kNf4Codebook.size(); ++i) {
      b.StoreImm<F32>(kShared, Address(base, int64_t{4} * i), kNf4Codebook[i]);
    }
  });
  return base;
}

// scale * codebook[bits 4e..4e+3 of `word`], for e in 0..7, each stored at
// `dst` + byte_offset(e). With `scale_first` the product reads the scale
// first, so canonical order makes (loads) the scale before the codebook entry.
template <typename Offset>
void DecodeWord(KernelBuilder& b, Value<U32> word, Value<F32> scale, Value<U32> codebook, Value<U32> dst,
                Offset byte_offset, bool scale_first = false) {
  for (uint32_t e = 0; e < 8; ++e) {
    Value<U32> nibble = b.Bfe(word, 4 * e, 4u);
    Value<U32> entry = b.Mad(nibble, 4u, codebook);
    Value<F32> code = b.Load<F32>(kShared, entry);
    Value<F32> value = scale_first ? b.Mul(scale, code) : b.Mul(code, scale);
    b.Store(kShared, Address(dst, byte_offset(e)), value);
  }
}

// A block wholly outside the output has nothing to do (and would clamp its
// indices below zero): it returns before the first barrier, as a whole.
void ExitIfOutside(KernelBuilder& b, Value<U32> row0, Value<U32> rows, Value<U32> col0, Value<U32> cols) {
  Value<Pred> below = b.Ge(row0, rows);
  Value<Pred> right = b.Ge(col0, cols);
  Value<Pred> outside = b.Or(below, right);
  b.If(outside, [&] { b.Ret(); });
}

// Items (a tile's elements or words) handed to the 256 threads: thread t
// takes items t, t + 256, ...; `guard` when some threads have none.
struct Split {
  uint32_t per_thread;
  bool guard;
};
Split SplitItems(uint32_t items) { return {(items + kThreads - 1) / kThreads, items < kThreads}; }

template <typename F>
void MaybeGuarded(KernelBuilder& b, bool guard, Value<U32> tid, uint32_t limit, F&& body) {
  if (!guard) {
    body();
    return;
  }
  Value<Pred> active = b.Lt(tid, limit);
  b.If(active, body);
}

void BuildGemm(KernelBuilder& b, const Nf4GemmSpec& s) {
  const uint32_t tm = s.tile_m / 16, tn = s.tile_n / 16;
  const uint32_t sa = s.tile_m + 1, sb = s.tile_n + 1;  // padded shared row strides (floats)
  b.SetRequiredThreads(kThreads);
  Value<U64> a = b.CvtaToGlobal(b.Param<U64>("a"));
  Value<U64> data = b.CvtaToGlobal(b.Param<U64>("b_nf4"));
  Value<U64> scales = b.CvtaToGlobal(b.Param<U64>("b_scales"));
  Value<U64> c = b.CvtaToGlobal(b.Param<U64>("c"));
  Value<U32> m = b.Param<U32>("m");
  Value<U32> n = b.Param<U32>("n");
  Value<U32> k = b.Param<U32>("k");
  // a_tile[kk][mm] (A transposed) and b_tile[kk][nn], the decoded B.
  Symbol<F32> a_tile = b.Shared<F32>("a_tile", 64 * sa);
  Symbol<F32> b_tile = b.Shared<F32>("b_tile", 64 * sb);

  Value<U32> tid = b.Name(b.TidX(), "tid");
  Value<U32> ctaid_x = b.CtaidX();
  Value<U32> ctaid_y = b.CtaidY();
  Value<U32> n0 = b.Name(b.Mul(ctaid_x, s.tile_n), "n0");
  Value<U32> m0 = b.Name(b.Mul(ctaid_y, s.tile_m), "m0");
  ExitIfOutside(b, m0, m, n0, n);
  Value<U32> codebook = SharedCodebook(b, tid);
  Value<U32> tx = b.Name(b.And(tid, 15u), "tx");
  Value<U32> ty = b.Name(b.Shr(tid, 4u), "ty");
  Value<U32> m_last = b.Sub(m, 1u);
  Value<U32> n_last = b.Sub(n, 1u);
  Value<U32> blocks = b.Name(b.Shr(k, 6u), "blocks");
  Value<U32> a_row_bytes = b.Shl(k, 2u);
  Value<U32> a_base = b.SymbolAddr(a_tile);
  Value<U32> b_base = b.SymbolAddr(b_tile);

  // A: thread (tx, ty) loads the float4 at column 4*tx of rows ty + 16i
  // (clamped into A; rows past M feed outputs that are never stored).
  Value<U32> tx4 = b.Shl(tx, 2u);
  Value<U64> a_col = b.ElementAddr<F32>(a, tx4);
  std::vector<Var<U64>> a_ptr;
  for (uint32_t i = 0; i < tm; ++i) {
    Value<U32> r = b.Add(ty, m0);
    Value<U32> row = b.Add(r, 16 * i);
    Value<U32> clamped = b.Min(row, m_last);
    Value<U64> offset = b.MulWide(clamped, a_row_bytes);
    a_ptr.push_back(b.Mutable<U64>(b.Add(a_col, offset), "a_ptr"));
  }
  Value<U32> a_store_row = b.Mul(tx, 4 * sa);
  Value<U32> a_store_index = b.Add(a_store_row, ty);
  Value<U32> a_store = b.Name(b.Mad(a_store_index, 4u, a_base), "a_store");

  // B: item (column, part) = (t / 4, t % 4) of items t = tid + 256i: the
  // part-th 8 bytes (16 values) of the column's block; 4 threads read one
  // column's 32 contiguous bytes.
  const Split b_split = SplitItems(s.tile_n * 4);
  Value<U32> b_col = b.Shr(tid, 2u);
  Value<U32> b_part = b.And(tid, 3u);
  Value<U64> part_bytes = b.MulWide(b_part, 8u);
  Value<U64> data_part = b.Add(data, part_bytes);
  std::vector<Var<U64>> data_ptr, scale_ptr;
  for (uint32_t i = 0; i < b_split.per_thread; ++i) {
    Value<U32> col = b.Add(b_col, n0);
    Value<U32> global_col = b.Add(col, 64 * i);
    Value<U32> clamped = b.Min(global_col, n_last);
    Value<U32> block = b.Mul(clamped, blocks);
    Value<U64> block_bytes = b.MulWide(block, kNf4BlockBytes);
    data_ptr.push_back(b.Mutable<U64>(b.Add(data_part, block_bytes), "data_ptr"));
    scale_ptr.push_back(b.Mutable<U64>(b.ElementAddr<F32>(scales, block), "scale_ptr"));
  }
  Value<U32> b_store_row = b.Mul(b_part, 16 * sb);
  Value<U32> b_store_index = b.Add(b_store_row, b_col);
  Value<U32> b_store = b.Name(b.Mad(b_store_index, 4u, b_base), "b_store");

  Value<U32> a_read = b.Name(b.Mad(ty, 4u, a_base), "a_read");
  Value<U32> b_read = b.Name(b.Mad(tx, 4u, b_base), "b_read");
  std::vector<Var<F32>> acc;
  for (uint32_t i = 0; i < tm * tn; ++i) acc.push_back(b.Mutable<F32>(0.0f, "acc"));
  b.BarSync();  // the codebook

  b.ForRange<U32>(0u, blocks, 1u, [&](Value<U32>) {
    for (uint32_t i = 0; i < tm; ++i) {
      std::array<Value<F32>, 4> v = b.LoadVec<F32, 4>(kGlobal, a_ptr[i], kReadOnly);
      for (uint32_t q = 0; q < 4; ++q) b.Store(kShared, Address(a_store, int64_t{4} * (q * sa + 16 * i)), v[q]);
      b.Assign(a_ptr[i], b.Add<U64>(a_ptr[i], uint64_t{4 * 64}));
    }
    MaybeGuarded(b, b_split.guard, tid, s.tile_n * 4, [&] {
      for (uint32_t i = 0; i < b_split.per_thread; ++i) {
        std::array<Value<U32>, 2> words = b.LoadVec<U32, 2>(kGlobal, data_ptr[i], kReadOnly);
        Value<F32> scale = b.Load<F32>(kGlobal, scale_ptr[i], kReadOnly);
        for (uint32_t w = 0; w < 2; ++w) {
          // The scale is loaded before the first codebook entry, as in
          // nvcc's twin: with the tail below, sm_75 64x64 74 -> 73 and
          // 32x128 68 -> 66, sm_86/89 32x128 76 -> 74; no other of the 13
          // tile shapes on 8 targets changed.
          DecodeWord(
              b, words[w], scale, codebook, b_store,
              [&](uint32_t e) { return int64_t{4} * ((w * 8 + e) * sb + 64 * i); }, /*scale_first=*/true);
        }
        b.Assign(data_ptr[i], b.Add<U64>(data_ptr[i], uint64_t{kNf4BlockBytes}));
        b.Assign(scale_ptr[i], b.Add<U64>(scale_ptr[i], uint64_t{4}));
      }
    });
    b.BarSync();
    for (uint32_t kk = 0; kk < 64; ++kk) {
      std::vector<Value<F32>> av, bv;
      for (uint32_t i = 0; i < tm; ++i) av.push_back(b.Load<F32>(kShared, Address(a_read, int64_t{4} * (kk * sa + 16 * i))));
      for (uint32_t j = 0; j < tn; ++j) bv.push_back(b.Load<F32>(kShared, Address(b_read, int64_t{4} * (kk * sb + 16 * j))));
      for (uint32_t i = 0; i < tm; ++i) {
        for (uint32_t j = 0; j < tn; ++j) FmaInto(b, acc[i * tn + j], av[i], bv[j]);
      }
    }
    b.BarSync();
  });

  // C[m0 + ty + 16i][n0 + tx + 16j]: 16 threads store 64 contiguous bytes.
  // On sm_75 the thread's coordinates and n0 are read afresh here, not kept
  // through the K loop (as nf4.gemm_transpose does on every target): with
  // the scale loaded before the codebook entries, ptxas registers 75 -> 73
  // in the default 64x64 tiles (nvcc's twin 73), and none of the 13 tile
  // shapes gains one (16x32 55 -> 48, 16x128 87 -> 79, 128x16 97 -> 89).
  // m0 afresh too cost up to 6 (128x16 89 -> 95, 32x16 49 -> 53, 64x32
  // 65 -> 68; 16x16 won one). On sm_80 and later afresh costs 1-3 in 64x64
  // (sm_80 63 -> 64, sm_86/89 65 -> 68, sm_90/100 47 -> 48), so they are
  // kept there.
  if (ir::GetTargetInfo(b.target()).sm < 80) {
    Value<U32> c_tid = b.TidX();
    tx = b.And(c_tid, 15u);
    ty = b.Shr(c_tid, 4u);
    n0 = b.Mul(b.CtaidX(), s.tile_n);
  }
  Value<U32> col0 = b.Add(n0, tx);
  Value<U64> c_col = b.ElementAddr<F32>(c, col0);
  Value<U32> c_row_bytes = b.Shl(n, 2u);
  std::vector<Value<Pred>> col_ok;
  for (uint32_t j = 0; j < tn; ++j) {
    Value<U32> col = b.Add(col0, 16 * j);
    col_ok.push_back(b.Lt(col, n));
  }
  for (uint32_t i = 0; i < tm; ++i) {
    Value<U32> r = b.Add(ty, m0);
    Value<U32> row = b.Add(r, 16 * i);
    Value<Pred> row_ok = b.Lt(row, m);
    Value<U64> offset = b.MulWide(row, c_row_bytes);
    Value<U64> c_row = b.Add(c_col, offset);
    for (uint32_t j = 0; j < tn; ++j) {
      Value<Pred> ok = b.And(row_ok, col_ok[j]);
      b.If(ok, [&] { b.Store(kGlobal, Address(c_row, int64_t{64} * j), static_cast<Value<F32>>(acc[i * tn + j])); });
    }
  }
  b.Ret();
}

void BuildGemmTranspose(KernelBuilder& b, const Nf4GemmTransposeSpec& s) {
  const uint32_t tm = s.tile_m / 16, tk = 64 / 16, chunk = s.tile_n;
  const uint32_t sa = s.tile_m + 1, sb = 64 + 1;  // padded shared row strides (floats)
  b.SetRequiredThreads(kThreads);
  Value<U64> a = b.CvtaToGlobal(b.Param<U64>("a"));
  Value<U64> data = b.CvtaToGlobal(b.Param<U64>("b_nf4"));
  Value<U64> scales = b.CvtaToGlobal(b.Param<U64>("b_scales"));
  Value<U64> c = b.CvtaToGlobal(b.Param<U64>("c"));
  Value<U32> m = b.Param<U32>("m");
  Value<U32> n = b.Param<U32>("n");
  Value<U32> k = b.Param<U32>("k");
  // a_tile[nn][mm] (A transposed) and b_tile[nn][kk], B's decoded blocks.
  Symbol<F32> a_tile = b.Shared<F32>("a_tile", chunk * sa);
  Symbol<F32> b_tile = b.Shared<F32>("b_tile", chunk * sb);

  Value<U32> tid = b.Name(b.TidX(), "tid");
  Value<U32> kb = b.Name(b.CtaidX(), "kb");  // this block's NF4 block along K
  Value<U32> ctaid_y = b.CtaidY();
  Value<U32> k0 = b.Name(b.Shl(kb, 6u), "k0");
  Value<U32> m0 = b.Name(b.Mul(ctaid_y, s.tile_m), "m0");
  ExitIfOutside(b, m0, m, k0, k);
  Value<U32> codebook = SharedCodebook(b, tid);
  Value<U32> m_last = b.Sub(m, 1u);
  Value<U32> n_last = b.Sub(n, 1u);
  Value<U32> blocks = b.Name(b.Shr(k, 6u), "blocks");
  Value<U32> a_base = b.SymbolAddr(a_tile);
  Value<U32> b_base = b.SymbolAddr(b_tile);

  // A: items t = tid + 256i are (row t / chunk, column t % chunk): a warp
  // reads consecutive columns of a row. Rows are clamped into A.
  const Split a_split = SplitItems(s.tile_m * chunk);
  const uint32_t rows_per_pass = kThreads / chunk;
  Value<U32> a_nn = b.And(tid, chunk - 1);
  Value<U32> a_mm = b.Shr(tid, static_cast<uint32_t>(std::countr_zero(chunk)));
  Value<U64> a_col = b.ElementAddr<F32>(a, a_nn);
  Value<U32> a_row_bytes = b.Shl(n, 2u);
  std::vector<Var<U64>> a_ptr;
  for (uint32_t i = 0; i < a_split.per_thread; ++i) {
    Value<U32> r = b.Add(a_mm, m0);
    Value<U32> row = b.Add(r, rows_per_pass * i);
    Value<U32> clamped = b.Min(row, m_last);
    Value<U64> offset = b.MulWide(clamped, a_row_bytes);
    a_ptr.push_back(b.Mutable<U64>(b.Add(a_col, offset), "a_ptr"));
  }
  Value<F32> zero = b.Const<F32>(0.0f);

  // B: items t = tid + 256i are (column t / 8, word t % 8): 8 threads read
  // one column's 32 contiguous bytes of block kb.
  const Split b_split = SplitItems(chunk * 8);
  Value<U32> column_bytes = b.Mul(blocks, kNf4BlockBytes);
  Value<U32> column_scale_bytes = b.Shl(blocks, 2u);

  std::vector<Var<F32>> acc;
  for (uint32_t i = 0; i < tm * tk; ++i) acc.push_back(b.Mutable<F32>(0.0f, "acc"));
  b.BarSync();  // the codebook

  b.ForRange<U32>(0u, n, chunk, [&](Value<U32> n_base) {
    // The thread's shared addresses and its pointer into B's block are
    // computed where each is used, every step, from a fresh read of %tid.x
    // (and %ctaid.x), not held from before the loop: nvcc's PTX does the
    // same. Held, they were seven more registers live through the loop, and
    // ptxas budgeted 60-64 registers instead of 48 on sm_80-sm_120 (nvcc's
    // PTX: 48-64) and spent the room on shared loads in flight; sm_75 77 ->
    // 73. (A fresh read: CSE shares no read of a special register, so
    // nothing here is merged with the values before the loop, and LICM
    // hoists nothing that would add a register live through it.)
    auto a_store = [&] {
      Value<U32> t = b.TidX();
      Value<U32> row = b.Add(b.Mul(b.And(t, chunk - 1), sa), b.Shr(t, static_cast<uint32_t>(std::countr_zero(chunk))));
      return b.Name(b.Mad(row, 4u, a_base), "a_store");
    };
    // A's columns past N read as zero.
    Value<U32> a_n = b.Add(n_base, b.And(b.TidX(), chunk - 1));
    Value<Pred> a_in = b.Lt(a_n, n);
    MaybeGuarded(b, a_split.guard, tid, s.tile_m * chunk, [&] {
      auto at = [&](Value<U32> store, uint32_t i) { return Address(store, int64_t{4} * rows_per_pass * i); };
      b.IfElse(
          a_in,
          [&] {
            std::vector<Value<F32>> values;
            for (uint32_t i = 0; i < a_split.per_thread; ++i) values.push_back(b.Load<F32>(kGlobal, a_ptr[i], kReadOnly));
            Value<U32> store = a_store();
            for (uint32_t i = 0; i < a_split.per_thread; ++i) b.Store(kShared, at(store, i), values[i]);
          },
          [&] {
            Value<U32> store = a_store();
            for (uint32_t i = 0; i < a_split.per_thread; ++i) b.Store(kShared, at(store, i), zero);
          });
      for (uint32_t i = 0; i < a_split.per_thread; ++i) b.Assign(a_ptr[i], b.Add<U64>(a_ptr[i], uint64_t{4} * chunk));
    });
    // B's columns past N decode with scale 0 (their clamped bytes are valid).
    MaybeGuarded(b, b_split.guard, tid, chunk * 8, [&] {
      Value<U32> t = b.TidX();
      Value<U32> b_col = b.Shr(t, 3u);
      Value<U32> b_word = b.And(t, 7u);
      Value<U64> data_kb = b.Add(b.ElementAddr<U32>(data, b_word), b.MulWide(b.CtaidX(), kNf4BlockBytes));
      Value<U64> scale_kb = b.ElementAddr<F32>(scales, b.CtaidX());
      Value<U32> b_store = b.Name(b.Mad(b.Mad(b_word, 8u, b.Mul(b_col, sb)), 4u, b_base), "b_store");
      for (uint32_t i = 0; i < b_split.per_thread; ++i) {
        Value<U32> col = b.Add(n_base, b_col);
        Value<U32> global_col = b.Add(col, 32 * i);
        Value<Pred> in = b.Lt(global_col, n);
        Value<U32> clamped = b.Min(global_col, n_last);
        Value<U64> word_offset = b.MulWide(clamped, column_bytes);
        Value<U64> word_addr = b.Add(data_kb, word_offset);
        Value<U64> scale_offset = b.MulWide(clamped, column_scale_bytes);
        Value<U64> scale_addr = b.Add(scale_kb, scale_offset);
        Value<U32> word = b.Load<U32>(kGlobal, word_addr, kReadOnly);
        Value<F32> stored_scale = b.Load<F32>(kGlobal, scale_addr, kReadOnly);
        Value<F32> scale = b.Select(in, stored_scale, 0.0f);
        DecodeWord(b, word, scale, codebook, b_store, [&](uint32_t e) { return int64_t{4} * (32 * i * sb + e); });
      }
    });
    b.BarSync();
    Value<U32> t = b.TidX();
    Value<U32> a_read = b.Name(b.Mad(b.Shr(t, 4u), 4u, a_base), "a_read");
    Value<U32> b_read = b.Name(b.Mad(b.And(t, 15u), 4u, b_base), "b_read");
    for (uint32_t nn = 0; nn < chunk; ++nn) {
      std::vector<Value<F32>> av, bv;
      for (uint32_t i = 0; i < tm; ++i) av.push_back(b.Load<F32>(kShared, Address(a_read, int64_t{4} * (nn * sa + 16 * i))));
      for (uint32_t j = 0; j < tk; ++j) bv.push_back(b.Load<F32>(kShared, Address(b_read, int64_t{4} * (nn * sb + 16 * j))));
      for (uint32_t i = 0; i < tm; ++i) {
        for (uint32_t j = 0; j < tk; ++j) FmaInto(b, acc[i * tk + j], av[i], bv[j]);
      }
    }
    b.BarSync();
  });

  // C[m0 + ty + 16i][k0 + tx + 16j]; K is a multiple of 64, so every column exists.
  // The thread's and the block's coordinates are read afresh here, not kept
  // through the K loop, as the scales pointer is inside it (sm_75: ptxas
  // 74 -> 69 registers, nvcc's twin 70; the other targets unchanged).
  Value<U32> c_tid = b.TidX();
  Value<U32> tx = b.And(c_tid, 15u);
  Value<U32> ty = b.Shr(c_tid, 4u);
  Value<U32> col0 = b.Add(b.Shl(b.CtaidX(), 6u), tx);
  Value<U32> c_m0 = b.Mul(b.CtaidY(), s.tile_m);
  Value<U64> c_col = b.ElementAddr<F32>(c, col0);
  Value<U32> c_row_bytes = b.Shl(k, 2u);
  for (uint32_t i = 0; i < tm; ++i) {
    Value<U32> r = b.Add(ty, c_m0);
    Value<U32> row = b.Add(r, 16 * i);
    Value<Pred> row_ok = b.Lt(row, m);
    Value<U64> offset = b.MulWide(row, c_row_bytes);
    Value<U64> c_row = b.Add(c_col, offset);
    b.If(row_ok, [&] {
      for (uint32_t j = 0; j < tk; ++j) b.Store(kGlobal, Address(c_row, int64_t{64} * j), static_cast<Value<F32>>(acc[i * tk + j]));
    });
  }
  b.Ret();
}

// ---- validation shared by both families

absl::Status CheckTile(std::string_view family, std::string_view field, uint32_t value,
                       std::initializer_list<uint32_t> allowed, std::string_view allowed_text) {
  for (uint32_t a : allowed) {
    if (value == a) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(StrCat(family, ": ", field, "=", value, " must be ", allowed_text));
}

absl::Status CheckShape(std::string_view family, uint32_t m, uint32_t n, uint32_t k) {
  if (m == 0) return absl::InvalidArgumentError(StrCat(family, ": m must be positive"));
  if (n == 0) return absl::InvalidArgumentError(StrCat(family, ": n must be positive"));
  if (k == 0) return absl::InvalidArgumentError(StrCat(family, ": k must be positive"));
  if (k % kNf4BlockSize != 0) {
    return absl::InvalidArgumentError(StrCat(family, ": k=", k, " is not a multiple of the NF4 block size 64"));
  }
  return absl::OkStatus();
}

absl::Status CheckSharedBytes(std::string_view family, uint32_t tile_m, uint32_t tile_n, uint32_t bytes) {
  if (bytes <= kSharedLimit) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat(family, ": tile_m=", tile_m, " and tile_n=", tile_n, " need ", bytes,
                                           " bytes of shared memory (at most 49152)"));
}

absl::Status ReadShape(const Config& config, uint32_t* tile_m, uint32_t* tile_n, uint32_t* m, uint32_t* n,
                       uint32_t* k) {
  const std::pair<const char*, uint32_t*> fields[] = {
      {"tile_m", tile_m}, {"tile_n", tile_n}, {"m", m}, {"n", n}, {"k", k}};
  for (const auto& [key, out] : fields) {
    absl::StatusOr<uint32_t> v = config.GetU32(key);
    if (!v.ok()) return v.status();
    *out = *v;
  }
  return absl::OkStatus();
}

// ---- test problems

std::vector<float> RandomFloats(size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> out(count);
  for (float& x : out) x = dist(rng);
  return out;
}

HostBuffer FloatBuffer(std::string name, std::span<const float> values) {
  HostBuffer h;
  h.name = std::move(name);
  h.type = ir::ScalarType::kF32;
  h.data.resize(values.size() * sizeof(float));
  std::memcpy(h.data.data(), values.data(), h.data.size());
  return h;
}

// The buffers a, b_nf4, b_scales, c and the args of both GEMMs; `a` has
// `a_cols` columns and B is K x N.
absl::StatusOr<TestProblem> GemmProblem(bool transpose, uint32_t m, uint32_t n, uint32_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint32_t a_cols = transpose ? n : k;
  std::vector<float> a = RandomFloats(size_t{m} * a_cols, rng);
  std::vector<float> weights = RandomFloats(size_t{k} * n, rng);
  absl::StatusOr<Nf4Matrix> q = QuantizeNf4(weights, k, n);
  if (!q.ok()) return q.status();
  absl::StatusOr<std::vector<float>> dequantized = DequantizeNf4(*q);
  if (!dequantized.ok()) return dequantized.status();
  std::vector<double> expected =
      transpose ? NaiveGemmTransposeB(a, *dequantized, m, n, k) : NaiveGemm(a, *dequantized, m, n, k);
  TestProblem p;
  p.buffers.push_back(FloatBuffer("a", a));
  HostBuffer packed;
  packed.name = "b_nf4";
  packed.type = ir::ScalarType::kU8;
  packed.data = q->data;
  p.buffers.push_back(std::move(packed));
  p.buffers.push_back(FloatBuffer("b_scales", q->scales));
  HostBuffer out = ZeroBuffer("c", ir::ScalarType::kF32, expected.size());
  out.is_output = true;
  out.tolerance = 1e-3;
  out.expected = FromDoubles(ir::ScalarType::kF32, expected);
  p.buffers.push_back(std::move(out));
  p.args = {size_t{0}, size_t{1}, size_t{2}, size_t{3}, ScalarU32(m), ScalarU32(n), ScalarU32(k)};
  p.block = {kThreads, 1, 1};
  p.shape = StrCat("m=", m, " n=", n, " k=", k);
  return p;
}

}  // namespace

std::vector<double> NaiveGemm(std::span<const float> a, std::span<const float> b, uint32_t m, uint32_t n,
                              uint32_t k) {
  std::vector<double> c(size_t{m} * n, 0.0);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t kk = 0; kk < k; ++kk) {
      const double x = a[size_t{i} * k + kk];
      for (uint32_t j = 0; j < n; ++j) c[size_t{i} * n + j] += x * b[size_t{kk} * n + j];
    }
  }
  return c;
}

std::vector<double> NaiveGemmTransposeB(std::span<const float> a, std::span<const float> b, uint32_t m, uint32_t n,
                                        uint32_t k) {
  std::vector<double> c(size_t{m} * k, 0.0);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t kk = 0; kk < k; ++kk) {
      double sum = 0;
      for (uint32_t j = 0; j < n; ++j) sum += double{a[size_t{i} * n + j]} * b[size_t{kk} * n + j];
      c[size_t{i} * k + kk] = sum;
    }
  }
  return c;
}

// ---- nf4.gemm

absl::Status Nf4GemmSpec::Validate() const {
  constexpr std::string_view kFamily = "nf4.gemm";
  for (auto [field, value] : {std::pair{"tile_m", tile_m}, std::pair{"tile_n", tile_n}}) {
    if (absl::Status s = CheckTile(kFamily, field, value, {16, 32, 64, 128}, "16, 32, 64 or 128"); !s.ok()) return s;
  }
  const uint32_t shared = 4 * (64 * (tile_m + 1) + 64 * (tile_n + 1) + 16);
  if (absl::Status s = CheckSharedBytes(kFamily, tile_m, tile_n, shared); !s.ok()) return s;
  return CheckShape(kFamily, m, n, k);
}

std::string Nf4GemmSpec::KernelName() const { return StrCat("nf4_gemm_f32_t", tile_m, "x", tile_n); }

absl::StatusOr<ir::Kernel> Nf4GemmSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  BuildGemm(b, *this);
  return b.Finish();
}

std::span<const ConfigField> Nf4GemmFamily::fields() const {
  static const ConfigField kFields[] = {
      {"tile_m", "64", "rows of C per block: 16, 32, 64 or 128"},
      {"tile_n", "64", "columns of C per block: 16, 32, 64 or 128"},
      {"m", "37", "test shape: rows of A and C"},
      {"n", "45", "test shape: columns of B and C"},
      {"k", "128", "test shape: columns of A, rows of B (a multiple of 64)"},
  };
  return kFields;
}

absl::StatusOr<Nf4GemmSpec> Nf4GemmFamily::SpecFrom(const Config& config) const {
  Nf4GemmSpec spec;
  if (absl::Status s = ReadShape(config, &spec.tile_m, &spec.tile_n, &spec.m, &spec.n, &spec.k); !s.ok()) return s;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> Nf4GemmFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<Nf4GemmSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<TestProblem> p = GemmProblem(false, spec->m, spec->n, spec->k, seed);
  if (!p.ok()) return p;
  p->grid = {(spec->n + spec->tile_n - 1) / spec->tile_n, (spec->m + spec->tile_m - 1) / spec->tile_m, 1};
  return p;
}

// ---- nf4.gemm_transpose

absl::Status Nf4GemmTransposeSpec::Validate() const {
  constexpr std::string_view kFamily = "nf4.gemm_transpose";
  if (absl::Status s = CheckTile(kFamily, "tile_m", tile_m, {16, 32, 64, 128}, "16, 32, 64 or 128"); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckTile(kFamily, "tile_n", tile_n, {16, 32, 64}, "16, 32 or 64"); !s.ok()) return s;
  const uint32_t shared = 4 * (tile_n * (tile_m + 1) + tile_n * 65 + 16);
  if (absl::Status s = CheckSharedBytes(kFamily, tile_m, tile_n, shared); !s.ok()) return s;
  // Each thread keeps a pointer per A element it stages; more than 8 spill.
  if (tile_m * tile_n > 8 * kThreads) {
    return absl::InvalidArgumentError(StrCat(kFamily, ": tile_m=", tile_m, " and tile_n=", tile_n, " give each thread ",
                                             tile_m * tile_n / kThreads, " elements of A per step (at most 8)"));
  }
  return CheckShape(kFamily, m, n, k);
}

std::string Nf4GemmTransposeSpec::KernelName() const {
  return StrCat("nf4_gemm_transpose_f32_t", tile_m, "x", tile_n);
}

absl::StatusOr<ir::Kernel> Nf4GemmTransposeSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  BuildGemmTranspose(b, *this);
  return b.Finish();
}

std::span<const ConfigField> Nf4GemmTransposeFamily::fields() const {
  static const ConfigField kFields[] = {
      {"tile_m", "64", "rows of C per block: 16, 32, 64 or 128"},
      {"tile_n", "32", "reduction step over N (columns of A): 16, 32 or 64"},
      {"m", "37", "test shape: rows of A and C"},
      {"n", "45", "test shape: columns of A and of B"},
      {"k", "128", "test shape: rows of B, columns of C (a multiple of 64)"},
  };
  return kFields;
}

absl::StatusOr<Nf4GemmTransposeSpec> Nf4GemmTransposeFamily::SpecFrom(const Config& config) const {
  Nf4GemmTransposeSpec spec;
  if (absl::Status s = ReadShape(config, &spec.tile_m, &spec.tile_n, &spec.m, &spec.n, &spec.k); !s.ok()) return s;
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> Nf4GemmTransposeFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<Nf4GemmTransposeSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<TestProblem> p = GemmProblem(true, spec->m, spec->n, spec->k, seed);
  if (!p.ok()) return p;
  p->grid = {spec->k / kNf4BlockSize, (spec->m + spec->tile_m - 1) / spec->tile_m, 1};
  return p;
}

}  // namespace ptxforge::kernels
