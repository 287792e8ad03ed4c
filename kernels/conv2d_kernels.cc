// conv2d kernels written with the builder: tiling, launch shapes and the five kernel bodies.
#include <algorithm>
#include <array>
#include <bit>
#include <type_traits>
#include <vector>

#include "builder/kernel_builder.h"
#include "ir/strings.h"
#include "kernels/conv2d.h"
#include "kernels/conv2d_tiling.h"
#include "kernels/kernel_math.h"
#include "kernels/type_dispatch.h"

namespace ptxforge::kernels {
namespace {

using ir::StateSpace;
constexpr StateSpace kGlobal = StateSpace::kGlobal;
constexpr StateSpace kShared = StateSpace::kShared;
constexpr MemOpts kReadOnly{.nc = true};

uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// The largest divisor of n that is at most `limit` (at least 1).
uint32_t LargestDivisorAtMost(uint32_t n, uint32_t limit) {
  for (uint32_t d = std::min(n, std::max(limit, 1u)); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

uint32_t AccumulatorSize(ir::ScalarType t) { return t == ir::ScalarType::kF64 ? 8 : 4; }

// Products per staged tap chunk: enough unrolled work per barrier, bounded code size.
constexpr uint32_t kTapsPerStage = 36;
// Accumulators per thread of the backward filter (the block reduces each one).
constexpr uint32_t kFilterAccumulators = 32;

// The accumulation type of a storage type: f32 for f16.
template <ScalarTag T>
using AccT = std::conditional_t<std::is_same_v<T, F16>, F32, T>;

// ---- small builder helpers shared by the bodies

// A global element of T, widened to A (read-only path).
template <ScalarTag T, ScalarTag A>
Value<A> LoadAs(KernelBuilder& b, Address addr) {
  Value<T> v = b.Load<T>(kGlobal, addr, kReadOnly);
  if constexpr (std::is_same_v<T, A>) {
    return v;
  } else {
    return b.Cvt<A>(v);
  }
}

// Stores an accumulator into a global element of T (rounded to nearest).
template <ScalarTag T, ScalarTag A>
void StoreAs(KernelBuilder& b, Address addr, Value<A> v) {
  if constexpr (std::is_same_v<T, A>) {
    b.Store(kGlobal, addr, v);
  } else {
    b.Store(kGlobal, addr, b.Cvt<T>(v));
  }
}

// base + index·count elements of T, the product in 64 bits (a plane's start).
template <ScalarTag T>
Value<U64> PlaneAddr(KernelBuilder& b, Value<U64> base, Value<U32> index, Value<U32> count) {
  return b.ElementAddr<T>(base, b.MulWide(index, count));
}

Value<S32> AsSigned(KernelBuilder& b, Value<U32> v) { return b.Bitcast<S32>(v); }
Value<U32> AsUnsigned(KernelBuilder& b, Value<S32> v) { return b.Bitcast<U32>(v); }

// How many elements of A one shared load may fetch (v4/v2/scalar) when
// reading `count` consecutive accumulators from a 16-byte aligned row.
template <ScalarTag A>
uint32_t VectorWidth(uint32_t count) {
  for (uint32_t v : {4u, 2u}) {
    if (count % v == 0 && v * ir::TypeSize(A::kType) <= 16) return v;
  }
  return 1;
}

// acc[i..i+count) += x * tile[offset + i] (shared, vector loads where aligned).
template <ScalarTag A>
void FmaRow(KernelBuilder& b, std::vector<Var<A>>& acc, Value<A> x, Symbol<A> tile, uint32_t offset_elems) {
  const uint32_t n = static_cast<uint32_t>(acc.size());
  const uint32_t width = VectorWidth<A>(n);
  const int64_t size = ir::TypeSize(A::kType);
  for (uint32_t i = 0; i < n; i += width) {
    Address addr(tile, (offset_elems + i) * size);
    if (width == 4) {
      std::array<Value<A>, 4> w = b.LoadVec<A, 4>(kShared, addr);
      for (uint32_t j = 0; j < 4; ++j) b.Assign(acc[i + j], b.Fma(x, w[j], acc[i + j]));
    } else if (width == 2) {
      std::array<Value<A>, 2> w = b.LoadVec<A, 2>(kShared, addr);
      for (uint32_t j = 0; j < 2; ++j) b.Assign(acc[i + j], b.Fma(x, w[j], acc[i + j]));
    } else {
      Value<A> w = b.Load<A>(kShared, addr);
      b.Assign(acc[i], b.Fma(x, w, acc[i]));
    }
  }
}

// The shared address of tile[index], from the tile's address hoisted out of the loop.
template <ScalarTag A>
Value<U32> SharedElement(KernelBuilder& b, Value<U32> tile_base, Value<U32> index) {
  return b.Mad(index, static_cast<uint32_t>(ir::TypeSize(A::kType)), tile_base);
}

template <ScalarTag A>
std::vector<Var<A>> Accumulators(KernelBuilder& b, uint32_t count) {
  std::vector<Var<A>> acc;
  for (uint32_t i = 0; i < count; ++i) acc.push_back(b.Mutable<A>(typename A::CType{0}, StrCat("acc", i)));
  return acc;
}

// tile[ch][r][c] = src[ch·plane + (y0 + r)·w + x0 + c] widened to A, zero
// outside [0, h) × [0, w). Every thread of the block takes part (tid of threads).
// magic_divide: the index splits into (ch, r, c) by mul.hi with magic
// constants (DivByConstant, exact for every index the loop produces) instead
// of div.u32, which ptxas expands around a reciprocal it computes before the
// loop and keeps live through it.
struct HaloLoad {
  Value<U64> src;  // global address of channel 0's plane
  Value<U32> plane;
  Value<S32> y0, x0;
  Value<U32> h, w;
  uint32_t channels, rows, cols;
};
template <ScalarTag T, ScalarTag A>
void LoadHalo(KernelBuilder& b, Symbol<A> tile, const HaloLoad& l, Value<U32> tid, uint32_t threads,
              bool magic_divide = false) {
  const uint32_t per_channel = l.rows * l.cols;
  const uint32_t count = l.channels * per_channel;
  // i < count in the body, and rem < per_channel.
  auto div = [&](Value<U32> n, uint32_t d, uint32_t max_n) {
    return magic_divide ? DivByConstant(b, n, d, max_n) : b.Div(n, d);
  };
  Value<U32> tile_base = b.SymbolAddr(tile);
  b.ForRange<U32>(tid, count, threads, [&](Value<U32> i) {
    Value<U32> rem = i;
    Value<U32> ch;
    if (l.channels > 1) {
      ch = div(i, per_channel, count - 1);
      rem = b.Sub(i, b.Mul(ch, per_channel));
    }
    Value<U32> r = div(rem, l.cols, per_channel - 1);
    Value<U32> c = b.Sub(rem, b.Mul(r, l.cols));
    Value<U32> y = AsUnsigned(b, b.Add(l.y0, AsSigned(b, r)));
    Value<U32> x = AsUnsigned(b, b.Add(l.x0, AsSigned(b, c)));
    Value<Pred> inside = b.And(b.Lt(y, l.h), b.Lt(x, l.w));  // negative coordinates wrap to large
    Var<A> v = b.Mutable<A>(typename A::CType{0}, "v");
    b.If(inside, [&] {
      Value<U32> index = b.Mad(y, l.w, x);
      if (l.channels > 1) index = b.Mad(ch, l.plane, index);
      b.Assign(v, LoadAs<T, A>(b, b.ElementAddr<T>(l.src, index)));
    });
    b.Store<A>(kShared, SharedElement<A>(b, tile_base, i), v);
  });
}

// The sum of v over the 32 lanes of the warp, in every lane (butterfly).
template <ScalarTag A>
Value<A> WarpSum(KernelBuilder& b, Value<A> v) {
  for (uint32_t mask = 16; mask >= 1; mask /= 2) {
    Value<A> other;
    if constexpr (ir::TypeBits(A::kType) == 32) {
      other = b.ShflXor(v, mask);
    } else {  // f64: shuffle the two halves
      Value<U64> bits = b.Bitcast<U64>(v);
      Value<U32> lo = b.Cvt<U32>(bits);
      Value<U32> hi = b.Cvt<U32>(b.Shr(bits, 32u));
      Value<U32> lo2 = b.ShflXor(lo, mask);
      Value<U32> hi2 = b.ShflXor(hi, mask);
      Value<U64> joined = b.Or(b.Shl(b.Cvt<U64>(hi2), 32u), b.Cvt<U64>(lo2));
      other = b.Bitcast<A>(joined);
    }
    v = b.Add(v, other);
  }
  return v;
}

// The geometry every body reads from the spec.
struct Geo {
  uint32_t c, oc, kh, kw, sh, sw, ph, pw, dh, dw, g, cpg, ocpg, taps;
  explicit Geo(const Conv2dSpec& s)
      : c(s.in_channels), oc(s.out_channels), kh(s.kernel_h), kw(s.kernel_w), sh(s.stride_h), sw(s.stride_w),
        ph(s.pad_h), pw(s.pad_w), dh(s.dilation_h), dw(s.dilation_w), g(s.groups), cpg(c / g), ocpg(oc / g),
        taps(kh * kw) {}
};

// The pixel tile of block ctaid.x (tiles_x = ceil(width / tile_w) tiles per row)
// and the thread's pixel in it.
struct PixelTile {
  Value<U32> y0, x0;  // tile origin
  Value<U32> ty, tx;  // thread offset
  Value<U32> y, x;    // thread pixel
};
PixelTile TileOf(KernelBuilder& b, const Conv2dTiling& t, Value<U32> tid, Value<U32> width) {
  PixelTile p;
  p.tx = b.Name(b.Rem(tid, t.tile_w), "tx");
  p.ty = b.Name(b.Div(tid, t.tile_w), "ty");
  Value<U32> tiles_x = b.Div(b.Add(width, t.tile_w - 1), t.tile_w);
  Value<U32> block = b.CtaidX();
  Value<U32> tile_y = b.Div(block, tiles_x);
  Value<U32> tile_x = b.Sub(block, b.Mul(tile_y, tiles_x));
  p.y0 = b.Mul(tile_y, t.tile_h);
  p.x0 = b.Mul(tile_x, t.tile_w);
  p.y = b.Name(b.Add(p.y0, p.ty), "py");
  p.x = b.Name(b.Add(p.x0, p.tx), "px");
  return p;
}

// A block's slice of channels: `per_block` channels starting at channel
// `first` of group `group` (ctaid.y: group-major, blocks_per_group per group).
struct ChannelSlice {
  Value<U32> group;
  Value<U32> first;  // within the group
};
ChannelSlice SliceOf(KernelBuilder& b, Value<U32> block, uint32_t channels_per_group, uint32_t per_block) {
  const uint32_t blocks_per_group = CeilDiv(channels_per_group, per_block);
  ChannelSlice s;
  s.group = b.Name(b.Div(block, blocks_per_group), "group");
  s.first = b.Name(b.Mul(b.Sub(block, b.Mul(s.group, blocks_per_group)), per_block), "first");
  return s;
}

// ---- im2col: one thread per (n, c, output pixel), all kH·kW rows

template <ScalarTag T>
void Im2colBody(KernelBuilder& b, const Geo& g, const Conv2dTiling& t) {
  const int64_t size = ir::TypeSize(T::kType);
  b.SetRequiredThreads(t.threads);
  Value<U64> input = b.CvtaToGlobal(b.Param<U64>("input"));
  Value<U64> col = b.CvtaToGlobal(b.Param<U64>("col"));
  b.Param<U32>("batch");
  Value<U32> in_h = b.Param<U32>("in_h");
  Value<U32> in_w = b.Param<U32>("in_w");
  Value<U32> out_h = b.Param<U32>("out_h");
  Value<U32> out_w = b.Param<U32>("out_w");
  Value<U32> pixels = b.Name(b.Mul(out_h, out_w), "pixels");
  Value<U32> p = b.Name(b.GlobalThreadIdX(), "p");
  b.If(b.Lt(p, pixels), [&] {
    Value<U32> ch = b.CtaidY();
    Value<U32> n = b.CtaidZ();
    Value<U32> oy = b.Div(p, out_w);
    Value<U32> ox = b.Sub(p, b.Mul(oy, out_w));
    Value<S32> iy0 = b.Sub(AsSigned(b, b.Mul(oy, g.sh)), static_cast<int32_t>(g.ph));
    Value<S32> ix0 = b.Sub(AsSigned(b, b.Mul(ox, g.sw)), static_cast<int32_t>(g.pw));
    Value<U32> plane_index = b.Mad(n, g.c, ch);
    Value<U64> plane = PlaneAddr<T>(b, input, plane_index, b.Mul(in_h, in_w));
    // The thread's window corner (may lie in the padding; read only where inside).
    Value<S64> corner_bytes = b.MulWide(b.Mad(iy0, AsSigned(b, in_w), ix0), static_cast<int32_t>(size));
    Value<U64> row = b.Add(plane, b.Bitcast<U64>(corner_bytes));
    Value<U64> row_step = b.MulWide(in_w, static_cast<uint32_t>(g.dh * size));
    Value<U64> out = b.ElementAddr<T>(col, b.Add(b.MulWide(b.Mul(plane_index, g.taps), pixels), b.Cvt<U64>(p)));
    // Widened, then shifted: the step is the same for every thread, and
    // ptxas keeps a 64-bit one made so in uniform registers, where a
    // mul.wide.u32 by the size became an IMAD.WIDE per output holding
    // `pixels` in a vector register (ptxas registers sm_75 40 -> 38,
    // sm_86-89 36 -> 34, sm_120 34 -> 30). Not for row_step: there the
    // same change cost 4 registers on sm_86-89.
    const auto size_shift = static_cast<uint32_t>(std::countr_zero(static_cast<uint64_t>(size)));
    Value<U64> out_step = b.Shl(b.Cvt<U64>(pixels), size_shift);
    std::vector<Value<Pred>> col_inside;
    for (uint32_t kx = 0; kx < g.kw; ++kx) {
      col_inside.push_back(b.Lt(AsUnsigned(b, b.Add(ix0, static_cast<int32_t>(kx * g.dw))), in_w));
    }
    for (uint32_t ky = 0; ky < g.kh; ++ky) {
      if (ky > 0) row = b.Add(row, row_step);
      Value<Pred> row_inside = b.Lt(AsUnsigned(b, b.Add(iy0, static_cast<int32_t>(ky * g.dh))), in_h);
      for (uint32_t kx = 0; kx < g.kw; ++kx) {
        Var<T> v = b.Mutable<T>(typename T::CType{0}, "v");
        b.If(b.And(row_inside, col_inside[kx]),
             [&] { b.Assign(v, b.Load<T>(kGlobal, Address(row, kx * g.dw * size), kReadOnly)); });
        b.Store<T>(kGlobal, out, v);
        if (ky + 1 < g.kh || kx + 1 < g.kw) out = b.Add(out, out_step);
      }
    }
  });
  b.Ret();
}

// ---- direct: a tile_h × tile_w output tile × per_thread output channels per
// block; input halo tiles and weight tiles of `chunk` input channels in shared memory

template <ScalarTag T>
void DirectBody(KernelBuilder& b, const Geo& g, const Conv2dTiling& t) {
  using A = AccT<T>;
  const uint32_t size_a = ir::TypeSize(A::kType);
  const uint32_t oct = t.per_thread, icb = t.chunk;
  const uint32_t hh = static_cast<uint32_t>(t.halo_h), hw = static_cast<uint32_t>(t.halo_w);
  b.SetRequiredThreads(t.threads);
  Value<U64> input = b.CvtaToGlobal(b.Param<U64>("input"));
  Value<U64> weight = b.CvtaToGlobal(b.Param<U64>("weight"));
  Value<U64> output = b.CvtaToGlobal(b.Param<U64>("output"));
  Value<U64> bias_param = b.Param<U64>("bias");
  b.Param<U32>("batch");
  Value<U32> in_h = b.Param<U32>("in_h");
  Value<U32> in_w = b.Param<U32>("in_w");
  Value<U32> out_h = b.Param<U32>("out_h");
  Value<U32> out_w = b.Param<U32>("out_w");
  Symbol<A> in_tile = b.Shared<A>("in_tile", icb * hh * hw, 16);
  Symbol<A> w_tile = b.Shared<A>("w_tile", icb * g.taps * oct, 16);

  Value<U32> tid = b.Name(b.TidX(), "tid");
  PixelTile px = TileOf(b, t, tid, out_w);
  ChannelSlice oc_slice = SliceOf(b, b.CtaidY(), g.ocpg, oct);
  Value<U32> n = b.Name(b.CtaidZ(), "n");
  Value<U32> oc0 = b.Name(b.Mad(oc_slice.group, g.ocpg, oc_slice.first), "oc0");
  std::vector<Value<Pred>> oc_valid;  // the last slice of a group may be partial
  for (uint32_t o = 0; o < oct; ++o) {
    oc_valid.push_back(g.ocpg % oct == 0 ? Value<Pred>() : b.Lt(oc_slice.first, g.ocpg - o));
  }
  auto if_oc = [&](uint32_t o, auto&& f) {
    if (g.ocpg % oct == 0) {
      f();
    } else {
      b.If(oc_valid[o], f);
    }
  };

  std::vector<Var<A>> acc = Accumulators<A>(b, oct);
  Value<Pred> has_bias = b.Ne(bias_param, uint64_t{0});
  b.If(has_bias, [&] {
    Value<U64> bias = b.ElementAddr<T>(b.CvtaToGlobal(bias_param), oc0);
    for (uint32_t o = 0; o < oct; ++o) {
      if_oc(o, [&] { b.Assign(acc[o], LoadAs<T, A>(b, Address(bias, o * ir::TypeSize(T::kType)))); });
    }
  });

  Value<U32> plane_in = b.Name(b.Mul(in_h, in_w), "plane_in");
  Value<U32> c_group = b.Mul(oc_slice.group, g.cpg);
  Value<U64> in_group = PlaneAddr<T>(b, input, b.Mad(n, g.c, c_group), plane_in);
  Value<S32> iy0 = b.Sub(AsSigned(b, b.Mul(px.y0, g.sh)), static_cast<int32_t>(g.ph));
  Value<S32> ix0 = b.Sub(AsSigned(b, b.Mul(px.x0, g.sw)), static_cast<int32_t>(g.pw));
  // The thread's window corner in the halo tile; the window's taps are constant offsets from it.
  Value<U32> corner = b.Mad(b.Mad(px.ty, g.sh * hw, b.Mul(px.tx, g.sw)), size_a, b.SymbolAddr(in_tile));
  Value<U32> w_first = b.Mul(oc0, g.cpg * g.taps);  // weight[oc0, 0, 0, 0]
  const uint32_t w_count = oct * icb * g.taps;
  Value<U32> w_base = b.SymbolAddr(w_tile);

  b.ForRange<U32>(0u, g.cpg, icb, [&](Value<U32> ic0) {
    LoadHalo<T, A>(b, in_tile,
                   {PlaneAddr<T>(b, in_group, ic0, plane_in), plane_in, iy0, ix0, in_h, in_w, icb, hh, hw}, tid,
                   t.threads);
    // w_tile[(icc·taps + tap)·oct + o] = weight[oc0 + o, ic0 + icc, tap]
    Value<U32> w_chunk = b.Mad(ic0, g.taps, w_first);
    b.ForRange<U32>(tid, w_count, t.threads, [&](Value<U32> i) {
      Value<U32> o = b.Div(i, icb * g.taps);
      Value<U32> r = b.Sub(i, b.Mul(o, icb * g.taps));
      Var<A> v = b.Mutable<A>(typename A::CType{0}, "w");
      auto load = [&] { b.Assign(v, LoadAs<T, A>(b, b.ElementAddr<T>(weight, b.Add(b.Mad(o, g.cpg * g.taps, w_chunk), r)))); };
      if (g.ocpg % oct == 0) {
        load();
      } else {
        b.If(b.Lt(b.Add(oc_slice.first, o), g.ocpg), load);
      }
      b.Store<A>(kShared, SharedElement<A>(b, w_base, b.Mad(r, oct, o)), v);
    });
    b.BarSync();
    for (uint32_t icc = 0; icc < icb; ++icc) {
      for (uint32_t ky = 0; ky < g.kh; ++ky) {
        for (uint32_t kx = 0; kx < g.kw; ++kx) {
          const uint32_t at = (icc * hh + ky * g.dh) * hw + kx * g.dw;
          Value<A> x = b.Load<A>(kShared, Address(corner, at * size_a));
          FmaRow(b, acc, x, w_tile, ((icc * g.taps) + ky * g.kw + kx) * oct);
        }
      }
    }
    b.BarSync();
  });

  b.If(b.And(b.Lt(px.y, out_h), b.Lt(px.x, out_w)), [&] {
    Value<U32> plane_out = b.Mul(out_h, out_w);
    Value<U64> out = PlaneAddr<T>(b, output, b.Mad(n, g.oc, oc0), plane_out);
    out = b.ElementAddr<T>(out, b.Mad(px.y, out_w, px.x));
    // Widened, then shifted, as im2col's out_step (sm_75 64 -> 59,
    // sm_86-89 and sm_120 40 -> 39 registers).
    const auto size_shift = static_cast<uint32_t>(std::countr_zero(static_cast<uint32_t>(ir::TypeSize(T::kType))));
    Value<U64> step = b.Shl(b.Cvt<U64>(plane_out), size_shift);
    for (uint32_t o = 0; o < oct; ++o) {
      if (o > 0) out = b.Add(out, step);
      if_oc(o, [&] { StoreAs<T, A>(b, out, acc[o]); });
    }
  });
  b.Ret();
}

// ---- pointwise (1x1): one pixel per thread (coalesced along H·W) × per_thread
// output channels; the block's weights [cpg][per_thread] in shared memory

template <ScalarTag T>
void PointwiseBody(KernelBuilder& b, const Geo& g, const Conv2dTiling& t) {
  using A = AccT<T>;
  const int64_t size = ir::TypeSize(T::kType);
  const uint32_t size_a = ir::TypeSize(A::kType);
  const uint32_t oct = t.per_thread;
  b.SetRequiredThreads(t.threads);
  Value<U64> input = b.CvtaToGlobal(b.Param<U64>("input"));
  Value<U64> weight = b.CvtaToGlobal(b.Param<U64>("weight"));
  Value<U64> output = b.CvtaToGlobal(b.Param<U64>("output"));
  Value<U64> bias_param = b.Param<U64>("bias");
  b.Param<U32>("batch");
  Value<U32> spatial = b.Param<U32>("spatial");
  Symbol<A> w_tile = b.Shared<A>("w_tile", g.cpg * oct, 16);

  Value<U32> tid = b.Name(b.TidX(), "tid");
  ChannelSlice oc_slice = SliceOf(b, b.CtaidY(), g.ocpg, oct);
  Value<U32> n = b.Name(b.CtaidZ(), "n");
  Value<U32> oc0 = b.Name(b.Mad(oc_slice.group, g.ocpg, oc_slice.first), "oc0");
  auto if_oc = [&](uint32_t o, auto&& f) {
    if (g.ocpg % oct == 0) {
      f();
    } else {
      b.If(b.Lt(oc_slice.first, g.ocpg - o), f);
    }
  };
  // w_tile[ci·oct + o] = weight[oc0 + o, ci]
  Value<U32> w_first = b.Mul(oc0, g.cpg);
  Value<U32> w_base = b.SymbolAddr(w_tile);
  b.ForRange<U32>(tid, g.cpg * oct, t.threads, [&](Value<U32> i) {
    Value<U32> o = b.Div(i, g.cpg);
    Value<U32> ci = b.Sub(i, b.Mul(o, g.cpg));
    Var<A> v = b.Mutable<A>(typename A::CType{0}, "w");
    auto load = [&] { b.Assign(v, LoadAs<T, A>(b, b.ElementAddr<T>(weight, b.Add(w_first, i)))); };
    if (g.ocpg % oct == 0) {
      load();
    } else {
      b.If(b.Lt(b.Add(oc_slice.first, o), g.ocpg), load);
    }
    b.Store<A>(kShared, SharedElement<A>(b, w_base, b.Mad(ci, oct, o)), v);
  });
  b.BarSync();

  Value<U32> p = b.Name(b.Mad(b.CtaidX(), t.threads, tid), "p");
  b.If(b.Lt(p, spatial), [&] {
    std::vector<Var<A>> acc = Accumulators<A>(b, oct);
    b.If(b.Ne(bias_param, uint64_t{0}), [&] {
      Value<U64> bias = b.ElementAddr<T>(b.CvtaToGlobal(bias_param), oc0);
      for (uint32_t o = 0; o < oct; ++o) {
        if_oc(o, [&] { b.Assign(acc[o], LoadAs<T, A>(b, Address(bias, o * size))); });
      }
    });
    Value<U32> c_first = b.Mad(n, g.c, b.Mul(oc_slice.group, g.cpg));
    Value<U64> step = b.MulWide(spatial, static_cast<uint32_t>(size));
    // f32, the type of the twin bench/cuda/conv2d_pointwise.cu, takes nvcc's shape: the first channel's
    // pixel as input + (c_first * spatial + p) << log2(size), one 64-bit index (with the pointer form,
    // plane + p * size, the p * size stays live for the output), and a rolled channel loop (below). The
    // other types keep the pointer form and an unrollable loop: with nvcc's shape f16 takes 46 registers
    // instead of 40 on sm_80, and f64 spills 12 bytes on sm_75-89.
    constexpr bool kNvccShape = std::is_same_v<T, F32>;
    Var<U64> in = b.Mutable<U64>(
        kNvccShape ? b.ElementAddr<T>(input, b.Add(b.MulWide(c_first, spatial), b.Cvt<U64>(p)))
                   : b.ElementAddr<T>(PlaneAddr<T>(b, input, c_first, spatial), p),
        "in");
    // `unroll` channels per iteration: their loads first, then the products. For f32 the loop stays rolled
    // (`.pragma "nounroll"`, as the twin bench/cuda/conv2d_pointwise.cu has `#pragma unroll 1`) and is
    // counted by the weight row itself (no channel counter); on sm_100 and later each channel's load comes
    // just before its products, and below sm_100 the output address is one 64-bit index like `in`.
    // ptxas 13.0 -v on sm_75/80/86/87/89/90/90a/100/100a/120/120a, nvcc's twin 64/43/43/43/43/43/43/44/44/41/41:
    //   loads first, a channel counter, output plane + p     64/44/44/44/44/43/43/42/42/42/42
    //   loads first, row-counted, output as an index         64/43/43/43/43/42/42/42/42/42/42
    //   each load before its products, row-counted, plane+p  64/44/44/44/44/44/44/40/40/41/41
    // (each load late with the output index: 42 on sm_120; rolling the weight copy loop as well costs 4 on
    // sm_90; an unroll of 2: 44 everywhere but sm_75.)
    const bool late_loads = kNvccShape && ir::GetTargetInfo(b.target()).sm >= 100;
    const uint32_t unroll = LargestDivisorAtMost(g.cpg, 4);
    auto channels = [&](Value<U32> w_row) {
      std::vector<Value<A>> x(unroll);
      auto load = [&](uint32_t u) {
        x[u] = LoadAs<T, A>(b, in);
        b.Assign(in, b.Add<U64>(in, step));
      };
      for (uint32_t u = 0; u < unroll && !late_loads; ++u) load(u);
      for (uint32_t u = 0; u < unroll; ++u) {
        if (late_loads) load(u);
        const uint32_t width = VectorWidth<A>(oct);
        for (uint32_t o = 0; o < oct; o += width) {
          Address addr(w_row, (u * oct + o) * size_a);
          if (width == 4) {
            std::array<Value<A>, 4> w = b.LoadVec<A, 4>(kShared, addr);
            for (uint32_t j = 0; j < 4; ++j) b.Assign(acc[o + j], b.Fma(x[u], w[j], acc[o + j]));
          } else if (width == 2) {
            std::array<Value<A>, 2> w = b.LoadVec<A, 2>(kShared, addr);
            for (uint32_t j = 0; j < 2; ++j) b.Assign(acc[o + j], b.Fma(x[u], w[j], acc[o + j]));
          } else {
            b.Assign(acc[o], b.Fma(x[u], b.Load<A>(kShared, addr), acc[o]));
          }
        }
      }
    };
    const uint32_t row_bytes = unroll * oct * size_a;
    if constexpr (kNvccShape) {
      Value<U32> rows = b.SymbolAddr(w_tile);
      b.ForRange<U32>(rows, b.Add(rows, g.cpg * oct * size_a), row_bytes, KernelBuilder::LoopOptions{.unroll = false},
                      channels);
    } else {
      Var<U32> w_row = b.Mutable<U32>(b.SymbolAddr(w_tile), "w_row");
      b.ForRange<U32>(0u, g.cpg, unroll, [&](Value<U32>) {
        channels(w_row);
        b.Assign(w_row, b.Add<U32>(w_row, row_bytes));
      });
    }
    Value<U32> out_plane = b.Mad(n, g.oc, oc0);
    Value<U64> out = kNvccShape && !late_loads
                         ? b.ElementAddr<T>(output, b.Add(b.MulWide(out_plane, spatial), b.Cvt<U64>(p)))
                         : b.ElementAddr<T>(PlaneAddr<T>(b, output, out_plane, spatial), p);
    for (uint32_t o = 0; o < oct; ++o) {
      if (o > 0) out = b.Add(out, step);
      if_oc(o, [&] { StoreAs<T, A>(b, out, acc[o]); });
    }
  });
  b.Ret();
}

// ---- backward data: a tile of input pixels × per_thread input channels per
// block; grad_output halo tiles and weight tiles of `chunk` output channels in
// shared memory. Input row y takes tap ky when (y + p − ky·d) is a multiple of
// s: with r = (y + p) mod s that is r = (ky·d) mod s, and the grad_output row
// is (y + p) / s − ⌊ky·d / s⌋ — a constant offset per tap.

template <ScalarTag T>
void BackwardDataBody(KernelBuilder& b, const Geo& g, const Conv2dTiling& t) {
  using A = AccT<T>;
  const uint32_t size_a = ir::TypeSize(A::kType);
  const uint32_t ict = t.per_thread, ocb = t.chunk;
  const uint32_t gh = static_cast<uint32_t>(t.halo_h), gw = static_cast<uint32_t>(t.halo_w);
  b.SetRequiredThreads(t.threads);
  Value<U64> grad_output = b.CvtaToGlobal(b.Param<U64>("grad_output"));
  Value<U64> weight = b.CvtaToGlobal(b.Param<U64>("weight"));
  Value<U64> grad_input = b.CvtaToGlobal(b.Param<U64>("grad_input"));
  b.Param<U32>("batch");
  Value<U32> in_h = b.Param<U32>("in_h");
  Value<U32> in_w = b.Param<U32>("in_w");
  Value<U32> out_h = b.Param<U32>("out_h");
  Value<U32> out_w = b.Param<U32>("out_w");
  Symbol<A> go_tile = b.Shared<A>("go_tile", ocb * gh * gw, 16);
  Symbol<A> w_tile = b.Shared<A>("w_tile", ocb * g.taps * ict, 16);

  Value<U32> tid = b.Name(b.TidX(), "tid");
  PixelTile px = TileOf(b, t, tid, in_w);
  ChannelSlice c_slice = SliceOf(b, b.CtaidY(), g.cpg, ict);
  Value<U32> n = b.Name(b.CtaidZ(), "n");
  auto if_c = [&](uint32_t j, auto&& f) {
    if (g.cpg % ict == 0) {
      f();
    } else {
      b.If(b.Lt(c_slice.first, g.cpg - j), f);
    }
  };

  // One axis: the tile's first grad_output row/column (floor division made
  // non-negative by a bias of `lift` strides), and the thread's row in the
  // tile relative to that, less the largest tap offset (so tap offsets are ≥ 0).
  struct Axis {
    Value<S32> first;
    Value<U32> row;
    Value<U32> phase;  // (pixel + pad) mod stride
    std::vector<uint32_t> offset;  // per tap: largest offset − ⌊k·d / s⌋
  };
  auto axis = [&](Value<U32> origin, Value<U32> pixel, uint32_t k, uint32_t s, uint32_t p, uint32_t d) {
    Axis a;
    const uint32_t reach = (k - 1) * d;
    const uint32_t lift = CeilDiv(reach, s);
    a.first = b.Sub(AsSigned(b, b.Div(b.Add(origin, p + lift * s - reach), s)), static_cast<int32_t>(lift));
    Value<U32> shifted = b.Add(pixel, p);
    Value<U32> q = b.Div(shifted, s);
    if (s > 1) a.phase = b.Sub(shifted, b.Mul(q, s));
    a.row = b.Sub(AsUnsigned(b, b.Sub(AsSigned(b, q), a.first)), reach / s);
    for (uint32_t i = 0; i < k; ++i) a.offset.push_back(reach / s - i * d / s);
    return a;
  };
  Axis ay = axis(px.y0, px.y, g.kh, g.sh, g.ph, g.dh);
  Axis ax = axis(px.x0, px.x, g.kw, g.sw, g.pw, g.dw);
  std::vector<Value<Pred>> take_y, take_x;
  for (uint32_t ky = 0; ky < g.kh && g.sh > 1; ++ky) take_y.push_back(b.Eq(ay.phase, ky * g.dh % g.sh));
  for (uint32_t kx = 0; kx < g.kw && g.sw > 1; ++kx) take_x.push_back(b.Eq(ax.phase, kx * g.dw % g.sw));
  Value<U32> corner = b.Mad(b.Mad(ay.row, gw, ax.row), size_a, b.SymbolAddr(go_tile));

  std::vector<Var<A>> acc = Accumulators<A>(b, ict);
  Value<U32> plane_out = b.Name(b.Mul(out_h, out_w), "plane_out");
  Value<U32> oc_group = b.Mul(c_slice.group, g.ocpg);
  Value<U64> go_group = PlaneAddr<T>(b, grad_output, b.Mad(n, g.oc, oc_group), plane_out);
  // weight[oc, c_first, 0, 0] of the group's first output channel
  Value<U32> w_first = b.Mad(oc_group, g.cpg * g.taps, b.Mul(c_slice.first, g.taps));
  const uint32_t w_count = ocb * ict * g.taps;
  Value<U32> w_base = b.SymbolAddr(w_tile);

  b.ForRange<U32>(0u, g.ocpg, ocb, [&](Value<U32> oc0) {
    LoadHalo<T, A>(b, go_tile,
                   {PlaneAddr<T>(b, go_group, oc0, plane_out), plane_out, ay.first, ax.first, out_h, out_w, ocb, gh,
                    gw},
                   tid, t.threads);
    // w_tile[(ocl·taps + tap)·ict + j] = weight[oc_group + oc0 + ocl, c_first + j, tap]
    Value<U32> w_chunk = b.Mad(oc0, g.cpg * g.taps, w_first);
    b.ForRange<U32>(tid, w_count, t.threads, [&](Value<U32> i) {
      Value<U32> ocl = b.Div(i, ict * g.taps);
      Value<U32> r = b.Sub(i, b.Mul(ocl, ict * g.taps));
      Value<U32> j = b.Div(r, g.taps);
      Value<U32> tap = b.Sub(r, b.Mul(j, g.taps));
      Var<A> v = b.Mutable<A>(typename A::CType{0}, "w");
      auto load = [&] {
        b.Assign(v, LoadAs<T, A>(b, b.ElementAddr<T>(weight, b.Add(b.Mad(ocl, g.cpg * g.taps, w_chunk), r))));
      };
      if (g.cpg % ict == 0) {
        load();
      } else {
        b.If(b.Lt(b.Add(c_slice.first, j), g.cpg), load);
      }
      b.Store<A>(kShared, SharedElement<A>(b, w_base, b.Mad(b.Mad(ocl, g.taps, tap), ict, j)), v);
    });
    b.BarSync();
    // Where a tap's ict weights make no 16-byte vector (ict 3 by default) but
    // the tile does, the whole weight tile is read first as 16-byte vectors, as
    // nvcc's twin reads it, and each product takes its element. ptxas then
    // accumulates into the vectors' registers as they die; with FmaRow's
    // per-tap loads (the same LDS.128s after ptxas merges them) its peak was a
    // register higher and its allocation spread further (sm_90: 29 live, R29
    // used; 28 live, R27 with the whole tile): sm_86-89 39 -> 38, sm_90/90a
    // 32 -> 30, sm_100/100a 32 -> 30, sm_120/120a 40 -> 38. Not with a
    // stride: its taps are conditional, and vectors read before the branches
    // all live through them (stride 2, 7 channels: 30 -> 200 registers).
    const bool whole_tile = size_a == 4 && VectorWidth<A>(ict) < 4 && w_count % 4 == 0 && g.sh == 1 && g.sw == 1;
    std::vector<std::array<Value<A>, 4>> w_vec;
    for (uint32_t v = 0; whole_tile && v < w_count / 4; ++v) {
      w_vec.push_back(b.LoadVec<A, 4>(kShared, Address(w_tile, v * 16)));
    }
    for (uint32_t ocl = 0; ocl < ocb; ++ocl) {
      for (uint32_t ky = 0; ky < g.kh; ++ky) {
        auto row = [&] {
          for (uint32_t kx = 0; kx < g.kw; ++kx) {
            auto tap = [&] {
              const uint32_t at = (ocl * gh + ay.offset[ky]) * gw + ax.offset[kx];
              Value<A> x = b.Load<A>(kShared, Address(corner, at * size_a));
              const uint32_t w_at = (ocl * g.taps + ky * g.kw + kx) * ict;
              if (whole_tile) {
                for (uint32_t j = 0; j < ict; ++j) b.Assign(acc[j], b.Fma(x, w_vec[(w_at + j) / 4][(w_at + j) % 4], acc[j]));
              } else {
                FmaRow(b, acc, x, w_tile, w_at);
              }
            };
            if (g.sw > 1) {
              b.If(take_x[kx], tap);
            } else {
              tap();
            }
          }
        };
        if (g.sh > 1) {
          b.If(take_y[ky], row);
        } else {
          row();
        }
      }
    }
    b.BarSync();
  });

  // The thread's pixel again, from fresh %tid.x and %ctaid.x reads (CSE
  // shares neither): px.y and px.x from the start lived through the loop
  // beside the halo origins (sm_75 53 -> 52, sm_80 31 -> 30 registers).
  PixelTile out_px = TileOf(b, t, b.TidX(), in_w);
  b.If(b.And(b.Lt(out_px.y, in_h), b.Lt(out_px.x, in_w)), [&] {
    Value<U32> plane_in = b.Mul(in_h, in_w);
    Value<U32> c0 = b.Mad(c_slice.group, g.cpg, c_slice.first);
    Value<U64> out = PlaneAddr<T>(b, grad_input, b.Mad(n, g.c, c0), plane_in);
    out = b.ElementAddr<T>(out, b.Mad(out_px.y, in_w, out_px.x));
    Value<U64> step = b.MulWide(plane_in, static_cast<uint32_t>(ir::TypeSize(T::kType)));
    for (uint32_t j = 0; j < ict; ++j) {
      if (j > 0) out = b.Add(out, step);
      if_c(j, [&] { StoreAs<T, A>(b, out, acc[j]); });
    }
  });
  b.Ret();
}

// ---- backward filter: block (oc, per_thread input channels, `rows` kernel
// rows) walks the whole batch tile by tile (input halo tiles in shared memory,
// one output pixel per thread), then reduces its accumulators across the
// block (warp shuffles, then shared memory). No atomics.

template <ScalarTag T>
void BackwardFilterBody(KernelBuilder& b, const Geo& g, const Conv2dTiling& t) {
  using A = AccT<T>;
  const uint32_t size_a = ir::TypeSize(A::kType);
  const uint32_t ict = t.per_thread, rows = t.rows;
  const uint32_t hh = static_cast<uint32_t>(t.halo_h), hw = static_cast<uint32_t>(t.halo_w);
  const uint32_t sums = ict * rows * g.kw;
  // The halo index splits by mul.hi with magic constants from sm_80 on: ptxas
  // 13.0 keeps div.u32's reciprocal live through the loop (f16/f32: 47-48 ->
  // 40 registers on sm_80-sm_120, f64 unchanged), but on sm_75 the magic
  // multiply costs one (62 -> 63). conv2d.direct and .backward_data keep
  // div.u32: the same change leaves their registers as they are.
  const bool magic_halo = ir::GetTargetInfo(b.target()).sm >= 80;
  b.SetRequiredThreads(t.threads);
  if constexpr (std::is_same_v<A, F64>) {
    // f64 accumulators need about 74 registers; left to itself ptxas 13.0
    // squeezes them into 64 with 32-56 bytes of spills on sm_75/90/100/120
    // to fit a fourth block of 256 threads. Asking for 768 resident threads
    // per SM (3 such blocks, a cap of 85 registers) keeps them all: 76-78
    // registers, 0 spill bytes on every target.
    b.SetMinBlocksPerSM(std::max(1u, 768 / t.threads));
  }
  Value<U64> input = b.CvtaToGlobal(b.Param<U64>("input"));
  Value<U64> grad_output = b.CvtaToGlobal(b.Param<U64>("grad_output"));
  Value<U64> grad_weight = b.CvtaToGlobal(b.Param<U64>("grad_weight"));
  Value<U32> batch = b.Param<U32>("batch");
  Value<U32> in_h = b.Param<U32>("in_h");
  Value<U32> in_w = b.Param<U32>("in_w");
  Value<U32> out_h = b.Param<U32>("out_h");
  Value<U32> out_w = b.Param<U32>("out_w");
  Symbol<A> in_tile = b.Shared<A>("in_tile", ict * hh * hw, 16);
  const uint32_t warps = t.threads / 32;
  Symbol<A> partial = b.Shared<A>("partial", warps * sums, 16);

  // The thread's and the block's coordinates, and what is made of them and
  // of the parameters alone. With `fresh` (sm_75, f16/f32) each use inside
  // the tile loop and in the reduction makes them again from fresh %tid.x /
  // %ctaid reads and parameters (CSE shares no special-register read; LICM
  // hoists nothing that adds a live register), as nvcc's twin does, instead
  // of keeping them live through the loop: ptxas registers 62 -> 60 (nvcc's
  // twin 60; f16 the same), and 4-7 fewer in 12 of 13 other f16/f32 shapes
  // measured, the 7x7 one unchanged (61). The shared corner stays made
  // before the loop: made afresh after the barrier too, it cost one in the
  // 7x7 shape (61 -> 62) and two in a 1x1 one (48 -> 50), and won one in a
  // 5x1 one. f64 (76 -> 78) and sm_80 on (their PTX unchanged) keep them all.
  const bool fresh = !magic_halo && size_a == 4;
  struct Coords {
    Value<U32> tid, tx, ty, oc, c_first, ky0;
  };
  auto coords = [&] {
    Coords c;
    c.tid = b.Name(b.TidX(), "tid");
    c.tx = b.Name(b.Rem(c.tid, t.tile_w), "tx");
    c.ty = b.Name(b.Div(c.tid, t.tile_w), "ty");
    c.oc = b.Name(b.CtaidX(), "oc");
    c.c_first = b.Name(b.Mul(b.CtaidY(), ict), "c_first");  // within the group
    c.ky0 = b.Name(b.Mul(b.CtaidZ(), rows), "ky0");
    return c;
  };
  auto c0_of = [&](const Coords& c) { return b.Mad(b.Div(c.oc, g.ocpg), g.cpg, c.c_first); };
  auto ky_shift_of = [&](const Coords& c) {
    return b.Sub(AsSigned(b, b.Mul(c.ky0, g.dh)), static_cast<int32_t>(g.ph));
  };
  const Coords held = coords();
  Value<U32> corner = b.Mad(b.Mad(held.ty, g.sh * hw, b.Mul(held.tx, g.sw)), size_a, b.SymbolAddr(in_tile));
  Value<U32> c0_held, plane_in_held, plane_out_held;
  Value<S32> ky_shift_held;
  if (!fresh) {
    c0_held = c0_of(held);
    plane_in_held = b.Name(b.Mul(in_h, in_w), "plane_in");
    plane_out_held = b.Name(b.Mul(out_h, out_w), "plane_out");
    ky_shift_held = ky_shift_of(held);
  }
  Value<U32> tiles_x = b.Div(b.Add(out_w, t.tile_w - 1), t.tile_w);
  Value<U32> tiles = b.Name(b.Mul(b.Div(b.Add(out_h, t.tile_h - 1), t.tile_h), tiles_x), "tiles");
  std::vector<Var<A>> acc = Accumulators<A>(b, sums);

  b.ForRange<U32>(0u, b.Mul(batch, tiles), 1u, [&](Value<U32> step) {
    const Coords now = fresh ? coords() : held;
    const Value<U32> tid = now.tid, tx = now.tx, ty = now.ty, oc = now.oc;
    Value<U32> c0 = fresh ? c0_of(now) : c0_held;
    Value<U32> plane_in = fresh ? b.Mul(in_h, in_w) : plane_in_held;
    Value<U32> plane_out = fresh ? b.Mul(out_h, out_w) : plane_out_held;
    Value<S32> ky_shift = fresh ? ky_shift_of(now) : ky_shift_held;
    Value<U32> n = b.Div(step, tiles);
    Value<U32> tile = b.Sub(step, b.Mul(n, tiles));
    Value<U32> tile_y = b.Div(tile, tiles_x);
    Value<U32> oy0 = b.Mul(tile_y, t.tile_h);
    Value<U32> ox0 = b.Mul(b.Sub(tile, b.Mul(tile_y, tiles_x)), t.tile_w);
    Value<U32> oy = b.Add(oy0, ty);
    Value<U32> ox = b.Add(ox0, tx);
    Var<A> go = b.Mutable<A>(typename A::CType{0}, "go");
    b.If(b.And(b.Lt(oy, out_h), b.Lt(ox, out_w)), [&] {
      Value<U64> plane = PlaneAddr<T>(b, grad_output, b.Mad(n, g.oc, oc), plane_out);
      b.Assign(go, LoadAs<T, A>(b, b.ElementAddr<T>(plane, b.Mad(oy, out_w, ox))));
    });
    Value<S32> iy0 = b.Add(AsSigned(b, b.Mul(oy0, g.sh)), ky_shift);
    Value<S32> ix0 = b.Sub(AsSigned(b, b.Mul(ox0, g.sw)), static_cast<int32_t>(g.pw));
    LoadHalo<T, A>(b, in_tile,
                   {PlaneAddr<T>(b, input, b.Mad(n, g.c, c0), plane_in), plane_in, iy0, ix0, in_h, in_w, ict, hh, hw},
                   tid, t.threads, magic_halo);
    b.BarSync();
    for (uint32_t j = 0; j < ict; ++j) {
      for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t kx = 0; kx < g.kw; ++kx) {
          const uint32_t at = (j * hh + r * g.dh) * hw + kx * g.dw;
          Var<A>& a = acc[(j * rows + r) * g.kw + kx];
          b.Assign(a, b.Fma(b.Load<A>(kShared, Address(corner, at * size_a)), go, a));
        }
      }
    }
    b.BarSync();
  });

  // Block reduction: each warp's sums to partial[warp][m], then thread m adds the warps.
  const Coords after = fresh ? coords() : held;
  const Value<U32> tid = after.tid, oc = after.oc, c_first = after.c_first, ky0 = after.ky0;
  Value<U32> lane = b.Rem(tid, 32u);
  Value<U32> warp_row = b.Mad(b.Div(tid, 32u), sums * size_a, b.SymbolAddr(partial));
  std::vector<Value<A>> warp_sums;
  for (uint32_t m = 0; m < sums; ++m) warp_sums.push_back(WarpSum<A>(b, acc[m]));
  b.If(b.Eq(lane, 0u), [&] {
    for (uint32_t m = 0; m < sums; ++m) b.Store<A>(kShared, Address(warp_row, m * size_a), warp_sums[m]);
  });
  b.BarSync();
  b.If(b.Lt(tid, sums), [&] {
    Value<U32> mine = b.ElementAddr(partial, tid);
    Value<A> total = b.Load<A>(kShared, mine);
    for (uint32_t w = 1; w < warps; ++w) total = b.Add(total, b.Load<A>(kShared, Address(mine, w * sums * size_a)));
    // m = (j·rows + r)·kw + kx  ->  grad_weight[oc, c_first + j, ky0 + r, kx]
    Value<U32> j = b.Div(tid, rows * g.kw);
    Value<U32> rest = b.Sub(tid, b.Mul(j, rows * g.kw));
    Value<U32> filter = b.Mad(oc, g.cpg, b.Add(c_first, j));
    Value<U32> index = b.Add(b.Mad(filter, g.taps, b.Mul(ky0, g.kw)), rest);
    StoreAs<T, A>(b, b.ElementAddr<T>(grad_weight, index), total);
  });
  b.Ret();
}

}  // namespace

// ---- tiling and launch shapes

Conv2dTiling TilingFor(const Conv2dSpec& spec) {
  Conv2dTiling t;
  const uint64_t size_a = AccumulatorSize(spec.type);
  const uint32_t cpg = spec.in_channels / spec.groups, ocpg = spec.out_channels / spec.groups;
  const uint32_t taps = spec.kernel_h * spec.kernel_w;
  auto halo = [](uint64_t tile, uint64_t stride, uint64_t k, uint64_t dil) { return (tile - 1) * stride + (k - 1) * dil + 1; };
  switch (spec.variant) {
    case Conv2dVariant::kIm2col:
      t.threads = 128;
      break;
    case Conv2dVariant::kDirect:
      t.per_thread = std::min(ocpg, 8u);
      t.chunk = LargestDivisorAtMost(cpg, kTapsPerStage / taps);
      // Fewer channels per stage, then fewer tile rows, while the tiles do not fit.
      for (;;) {
        t.halo_h = halo(t.tile_h, spec.stride_h, spec.kernel_h, spec.dilation_h);
        t.halo_w = halo(t.tile_w, spec.stride_w, spec.kernel_w, spec.dilation_w);
        t.shared_bytes = (t.chunk * t.halo_h * t.halo_w + uint64_t{t.chunk} * taps * t.per_thread) * size_a;
        if (t.shared_bytes <= kConv2dMaxSharedBytes) break;
        if (t.chunk > 1) {
          t.chunk = LargestDivisorAtMost(cpg, t.chunk - 1);
        } else if (t.tile_h > 1) {
          t.tile_h /= 2;
          t.threads = t.tile_w * t.tile_h;
        } else {
          break;
        }
      }
      break;
    case Conv2dVariant::kPointwise:
      t.threads = 128;
      t.per_thread = std::min(ocpg, 16u);
      while (t.per_thread > 1 && uint64_t{cpg} * t.per_thread * size_a > kConv2dMaxSharedBytes) t.per_thread /= 2;
      t.shared_bytes = uint64_t{cpg} * t.per_thread * size_a;
      break;
    case Conv2dVariant::kBackwardData:
      t.per_thread = std::min(cpg, 8u);
      t.chunk = LargestDivisorAtMost(ocpg, kTapsPerStage / taps);
      // grad_output rows that reach tile_h input rows: ((tile_h − 1) + (k − 1)·d) / s + 2.
      t.halo_h = ((t.tile_h - 1) + uint64_t{spec.kernel_h - 1} * spec.dilation_h) / spec.stride_h + 2;
      t.halo_w = ((t.tile_w - 1) + uint64_t{spec.kernel_w - 1} * spec.dilation_w) / spec.stride_w + 2;
      t.shared_bytes = (t.chunk * t.halo_h * t.halo_w + uint64_t{t.chunk} * taps * t.per_thread) * size_a;
      break;
    case Conv2dVariant::kBackwardFilter:
      t.threads = 256;
      t.tile_h = 8;
      t.rows = LargestDivisorAtMost(spec.kernel_h, kFilterAccumulators / spec.kernel_w);
      t.per_thread = LargestDivisorAtMost(cpg, kFilterAccumulators / (t.rows * spec.kernel_w));
      for (;;) {
        t.halo_h = halo(t.tile_h, spec.stride_h, t.rows, spec.dilation_h);
        t.halo_w = halo(t.tile_w, spec.stride_w, spec.kernel_w, spec.dilation_w);
        t.shared_bytes = (t.per_thread * t.halo_h * t.halo_w +
                          uint64_t{t.threads / 32} * t.per_thread * t.rows * spec.kernel_w) * size_a;
        if (t.shared_bytes <= kConv2dMaxSharedBytes) break;
        if (t.per_thread > 1) {
          t.per_thread = LargestDivisorAtMost(cpg, t.per_thread - 1);
        } else if (t.tile_h > 1) {
          t.tile_h /= 2;
          t.threads = t.tile_w * t.tile_h;
        } else {
          break;
        }
      }
      break;
  }
  return t;
}

std::array<uint32_t, 3> Conv2dSpec::Block() const { return {TilingFor(*this).threads, 1, 1}; }

std::array<uint32_t, 3> Conv2dSpec::Grid(const Conv2dShape& shape) const {
  const Conv2dTiling t = TilingFor(*this);
  const uint32_t cpg = in_channels / groups, ocpg = out_channels / groups;
  switch (variant) {
    case Conv2dVariant::kIm2col:
      return {CeilDiv(shape.out_h * shape.out_w, t.threads), in_channels, shape.batch};
    case Conv2dVariant::kDirect:
      return {CeilDiv(shape.out_h, t.tile_h) * CeilDiv(shape.out_w, t.tile_w), groups * CeilDiv(ocpg, t.per_thread),
              shape.batch};
    case Conv2dVariant::kPointwise:
      return {CeilDiv(shape.in_h * shape.in_w, t.threads), groups * CeilDiv(ocpg, t.per_thread), shape.batch};
    case Conv2dVariant::kBackwardData:
      return {CeilDiv(shape.in_h, t.tile_h) * CeilDiv(shape.in_w, t.tile_w), groups * CeilDiv(cpg, t.per_thread),
              shape.batch};
    case Conv2dVariant::kBackwardFilter:
      return {out_channels, cpg / t.per_thread, kernel_h / t.rows};
  }
  return {1, 1, 1};
}

absl::StatusOr<ir::Kernel> Conv2dSpec::Build(ir::Target target) const {
  if (absl::Status s = Validate(); !s.ok()) return s;
  KernelBuilder b(KernelName(), target);
  const Geo g(*this);
  const Conv2dTiling t = TilingFor(*this);
  DispatchType(type, [&]<ScalarTag T>() {
    if constexpr (std::is_same_v<T, F16> || std::is_same_v<T, F32> || std::is_same_v<T, F64>) {
      switch (variant) {
        case Conv2dVariant::kIm2col: Im2colBody<T>(b, g, t); break;
        case Conv2dVariant::kDirect: DirectBody<T>(b, g, t); break;
        case Conv2dVariant::kPointwise: PointwiseBody<T>(b, g, t); break;
        case Conv2dVariant::kBackwardData: BackwardDataBody<T>(b, g, t); break;
        case Conv2dVariant::kBackwardFilter: BackwardFilterBody<T>(b, g, t); break;
      }
    }
  });
  return b.Finish();
}

}  // namespace ptxforge::kernels
