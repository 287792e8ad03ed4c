// The builder's authoring helpers (builder/memory.h, builder/collectives.h):
// the IR they record, and what they compute on the emulator.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "builder/collectives.h"
#include "builder/math.h"
#include "builder/memory.h"
#include "ir/format.h"
#include "emit/ir_printer.h"
#include "ir/strings.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using runtime::Buffer;
using runtime::MakeEmulator;
using testing::FinishOrDie;

// Runs `kernel` with one input buffer (`in`) and one output buffer of
// `out_count` elements; returns the output.
template <typename In, typename Out>
std::vector<Out> Run(const ir::Kernel& kernel, const std::vector<In>& in, size_t out_count,
                     runtime::LaunchConfig config) {
  auto emu = MakeEmulator();
  auto a = Buffer<In>::FromHost(*emu, in);
  REQUIRE(a.ok());
  auto o = Buffer<Out>::FromHost(*emu, std::vector<Out>(out_count, Out{}));
  REQUIRE(o.ok());
  auto loaded = emu->Load(kernel);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, config, {*a, *o});
  INFO(s.ToString());
  REQUIRE(s.ok());
  return *o->ToHost();
}

TEST_CASE("typed pointers infer type and state space, Store takes immediates, grid-stride loop", "[helpers]") {
  KernelBuilder b("saxpy", ir::Target::kSm80);
  auto x = GlobalParam<F32>(b, "x");
  auto y = GlobalParam<F32>(b, "y");
  Value<U32> n = b.Param<U32>("n");
  GridStrideLoop(b, n, [&](Value<U32> i) {
    Value<F32> xi = x.Load(i);  // one load per statement: argument order is unspecified
    y.Store(i, b.Fma(xi, 2.0f, y.Load(i)));
  });
  y.At(0u).Store(7.0f);                                          // a constant index folds into the address
  b.Store<F32>(ir::StateSpace::kGlobal, y.At(1u).address(), 8);  // Store of an immediate, with its type
  ir::Kernel k = FinishOrDie(b);
  CHECK(emit::PrintIr(k) ==
        "kernel saxpy target sm_80\n"
        "  param u64 x\n"
        "  param u64 y\n"
        "  param u32 n\n"
        "{\n"
        "  %0:u32 = ld.param.u32 [n]  // n\n"
        "  %1:u64 = ld.param.u64 [x]  // x\n"
        "  %2:u64 = cvta.to.global.u64 %1\n"
        "  %3:u64 = ld.param.u64 [y]  // y\n"
        "  %4:u64 = cvta.to.global.u64 %3\n"
        "  %5:u32 = mov.u32 %ntid.x\n"
        "  %6:u32 = mov.u32 %nctaid.x\n"
        "  %7:u32 = mul.lo.u32 %5, %6\n"
        "  %8:u32 = mov.u32 %ctaid.x\n"
        "  %9:u32 = mov.u32 %ntid.x\n"
        "  %10:u32 = mov.u32 %tid.x\n"
        "  %11:u32 = mad.lo.u32 %8, %9, %10\n"
        "  %12:u32 = mov.u32 %11  // i mutable\n"
        "$L0_loop:\n"
        "  %13:pred = setp.ge.u32 %12, %0\n"
        "  @%13 bra $L1_endloop\n"
        "  %14:u64 = mul.wide.u32 %12, 4\n"
        "  %15:u64 = add.u64 %2, %14\n"
        "  %16:f32 = ld.global.f32 [%15]\n"
        "  %17:u64 = mul.wide.u32 %12, 4\n"
        "  %18:u64 = add.u64 %4, %17\n"
        "  %19:f32 = ld.global.f32 [%18]\n"
        "  %20:f32 = fma.rn.f32 %16, 0f40000000, %19\n"
        "  %21:u64 = mul.wide.u32 %12, 4\n"
        "  %22:u64 = add.u64 %4, %21\n"
        "  st.global.f32 [%22], %20\n"
        "  %23:u32 = add.u32 %12, %7\n"
        "  %12:u32 = mov.u32 %23  // i mutable\n"
        "  bra $L0_loop\n"
        "$L1_endloop:\n"
        "  %24:f32 = mov.f32 0f40E00000\n"
        "  st.global.f32 [%4], %24\n"
        "  %25:f32 = mov.f32 0f41000000\n"
        "  st.global.f32 [%4+4], %25\n"
        "  ret\n"
        "}\n");
  std::vector<float> in(1000);
  std::iota(in.begin(), in.end(), 0.0f);
  auto emu = MakeEmulator();
  auto xb = Buffer<float>::FromHost(*emu, in);
  auto yb = Buffer<float>::FromHost(*emu, std::vector<float>(1000, 1.0f));
  auto loaded = emu->Load(k);
  REQUIRE(loaded.ok());
  REQUIRE(emu->Launch(**loaded, {.grid = {3}, .block = {64}}, {*xb, *yb, 1000u}).ok());
  std::vector<float> out = *yb->ToHost();
  CHECK(out[0] == 7.0f);
  CHECK(out[1] == 8.0f);
  for (int i = 2; i < 1000; ++i) REQUIRE(out[i] == 2.0f * i + 1.0f);
}

// An immediate without its type is not a Store overload (the deleted one
// says to write Store<F32>); with the type it is.
template <typename V>
concept StorableUntyped = requires(KernelBuilder& b, Address a, V v) { b.Store(ir::StateSpace::kGlobal, a, v); };
static_assert(!StorableUntyped<float>);
static_assert(!StorableUntyped<int>);
static_assert(StorableUntyped<Value<F32>>);
static_assert(requires(KernelBuilder& b, Address a) { b.Store<F32>(ir::StateSpace::kGlobal, a, 1.0f); });

// Runs body(b, in, out) in one block of `threads` threads.
template <typename In, typename Out, typename F>
std::vector<Out> RunBlock(uint32_t threads, const std::vector<In>& in, size_t out_count, F&& body,
                          runtime::Dim3 block = {}) {
  KernelBuilder b("k", ir::Target::kSm80);
  using TIn = std::conditional_t<std::is_same_v<In, float>, F32,
              std::conditional_t<std::is_same_v<In, double>, F64,
              std::conditional_t<std::is_same_v<In, int32_t>, S32,
              std::conditional_t<std::is_same_v<In, int64_t>, S64, std::conditional_t<std::is_same_v<In, uint64_t>, U64, U32>>>>>;
  using TOut = std::conditional_t<std::is_same_v<Out, float>, F32,
               std::conditional_t<std::is_same_v<Out, double>, F64,
               std::conditional_t<std::is_same_v<Out, int32_t>, S32,
               std::conditional_t<std::is_same_v<Out, int64_t>, S64, std::conditional_t<std::is_same_v<Out, uint64_t>, U64, U32>>>>>;
  auto x = GlobalParam<TIn>(b, "in");
  auto y = GlobalParam<TOut>(b, "out");
  body(b, x, y);
  ir::Kernel k = FinishOrDie(b);
  if (block.x == 1 && block.y == 1 && block.z == 1) block = {threads, 1, 1};
  return Run<In, Out>(k, in, out_count, {.grid = {1}, .block = block});
}

template <typename T, typename C>
std::vector<C> WarpReduceAll(ReduceOp op, const std::vector<C>& in) {
  return RunBlock<C, C>(64, in, 64, [&](KernelBuilder& b, auto x, auto y) {
    Value<U32> tid = b.TidX();
    y.Store(tid, WarpReduce(b, op, x.Load(tid)));
  });
}

template <typename C>
C Fold(ReduceOp op, const C* v, int n) {
  C acc = v[0];
  for (int i = 1; i < n; ++i) {
    switch (op) {
      case ReduceOp::kSum: acc = acc + v[i]; break;
      case ReduceOp::kMin: acc = std::min(acc, v[i]); break;
      case ReduceOp::kMax: acc = std::max(acc, v[i]); break;
      case ReduceOp::kAnd: if constexpr (std::is_integral_v<C>) acc &= v[i]; break;
      case ReduceOp::kOr: if constexpr (std::is_integral_v<C>) acc |= v[i]; break;
      case ReduceOp::kXor: if constexpr (std::is_integral_v<C>) acc ^= v[i]; break;
    }
  }
  return acc;
}

// The instructions WarpReduce emits: "redux.sync.add.u32" once, or "shfl x5" for the shuffle tree.
template <typename T>
std::string WarpReduceForm(ir::Target target, ReduceOp op, uint32_t width = 32) {
  KernelBuilder b("k", target);
  auto y = GlobalParam<U32>(b, "out");
  Value<T> v = b.Bitcast<T>(b.TidX());
  y.Store(b.TidX(), b.Bitcast<U32>(WarpReduce(b, op, v, width)));
  ir::Kernel k = FinishOrDie(b);
  std::string redux;
  int shfl = 0;
  for (const ir::Instruction& inst : k.body) {
    if (inst.op == ir::Opcode::kShfl) ++shfl;
    if (inst.op == ir::Opcode::kRedux) ir::AppendOpcode(redux, inst);
  }
  return shfl == 0 ? redux : StrCat(redux, "shfl x", shfl);
}

TEST_CASE("WarpReduce: one redux.sync for 32-bit integers over the whole warp on sm_80+", "[helpers]") {
  CHECK(WarpReduceForm<U32>(ir::Target::kSm80, ReduceOp::kSum) == "redux.sync.add.u32");
  CHECK(WarpReduceForm<S32>(ir::Target::kSm90, ReduceOp::kMin) == "redux.sync.min.s32");
  CHECK(WarpReduceForm<U32>(ir::Target::kSm120, ReduceOp::kMax) == "redux.sync.max.u32");
  CHECK(WarpReduceForm<S32>(ir::Target::kSm80, ReduceOp::kAnd) == "redux.sync.and.b32");
  CHECK(WarpReduceForm<U32>(ir::Target::kSm86, ReduceOp::kOr) == "redux.sync.or.b32");
  CHECK(WarpReduceForm<B32>(ir::Target::kSm80, ReduceOp::kXor) == "redux.sync.xor.b32");
  // Below sm_80, over part of the warp, and for other types: the shuffle tree.
  CHECK(WarpReduceForm<U32>(ir::Target::kSm75, ReduceOp::kSum) == "shfl x5");
  CHECK(WarpReduceForm<U32>(ir::Target::kSm80, ReduceOp::kSum, 16) == "shfl x4");
  CHECK(WarpReduceForm<F32>(ir::Target::kSm80, ReduceOp::kMax) == "shfl x5");
}

TEST_CASE("WarpReduce: every op and width of value, the result in every lane", "[helpers]") {
  std::vector<uint32_t> u(64);
  std::vector<int32_t> s(64);
  std::vector<float> f(64);
  std::vector<double> d(64);
  std::vector<int64_t> l(64);
  for (int i = 0; i < 64; ++i) {
    u[i] = 0x9E3779B9u * (i + 1);
    s[i] = (i * 37 % 61) - 30;
    f[i] = static_cast<float>((i * 13 % 17) - 8) * 0.25f;  // exact sums
    d[i] = (i * 7 % 23) - 11.5;
    l[i] = (int64_t{i} - 40) << 33;
  }
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kAnd, ReduceOp::kOr, ReduceOp::kXor}) {
    INFO("op " << static_cast<int>(op));
    std::vector<uint32_t> ru = WarpReduceAll<U32>(op, u);
    std::vector<int32_t> rs = WarpReduceAll<S32>(op, s);
    std::vector<int64_t> rl = WarpReduceAll<S64>(op, l);
    for (int i = 0; i < 64; ++i) {
      int w = i / 32 * 32;
      REQUIRE(ru[i] == Fold(op, &u[w], 32));
      REQUIRE(rs[i] == Fold(op, &s[w], 32));
      REQUIRE(rl[i] == Fold(op, &l[w], 32));
    }
    if (op == ReduceOp::kSum || op == ReduceOp::kMin || op == ReduceOp::kMax) {
      std::vector<float> rf = WarpReduceAll<F32>(op, f);
      std::vector<double> rd = WarpReduceAll<F64>(op, d);
      for (int i = 0; i < 64; ++i) {
        int w = i / 32 * 32;
        REQUIRE(rf[i] == Fold(op, &f[w], 32));
        REQUIRE(rd[i] == Fold(op, &d[w], 32));
      }
    }
  }
}

TEST_CASE("WarpScan: inclusive prefix in each warp", "[helpers]") {
  std::vector<int32_t> in(64);
  for (int i = 0; i < 64; ++i) in[i] = (i * 11 % 7) - 3;
  std::vector<int32_t> sum = RunBlock<int32_t, int32_t>(64, in, 64, [&](KernelBuilder& b, auto x, auto y) {
    Value<U32> tid = b.TidX();
    y.Store(tid, WarpScan(b, ReduceOp::kSum, x.Load(tid), LaneIndex(b, tid)));
  });
  std::vector<int32_t> max = RunBlock<int32_t, int32_t>(64, in, 64, [&](KernelBuilder& b, auto x, auto y) {
    Value<U32> tid = b.TidX();
    y.Store(tid, WarpScan(b, ReduceOp::kMax, x.Load(tid), LaneIndex(b, tid)));
  });
  for (int i = 0; i < 64; ++i) {
    int w = i / 32 * 32;
    REQUIRE(sum[i] == Fold(ReduceOp::kSum, &in[w], i - w + 1));
    REQUIRE(max[i] == Fold(ReduceOp::kMax, &in[w], i - w + 1));
  }
}

TEST_CASE("BlockReduce and BlockBroadcast: every thread gets the result, also when called in a loop", "[helpers]") {
  for (uint32_t threads : {32u, 96u, 256u, 1024u}) {
    INFO("block " << threads);
    std::vector<int32_t> in(threads);
    for (uint32_t i = 0; i < threads; ++i) in[i] = static_cast<int32_t>(i * 2654435761u % 1000) - 500;
    // Three rounds: the sum of (in + round), then the max, then the min.
    std::vector<int32_t> out = RunBlock<int32_t, int32_t>(threads, in, 3 * threads, [&](KernelBuilder& b, auto x, auto y) {
      Value<U32> tid = b.TidX();
      Value<S32> v = x.Load(tid);
      b.ForRange<U32>(0u, 3u, 1u, [&](Value<U32> round) {
        Value<S32> shifted = b.Add(v, b.Cvt<S32>(round));
        Value<S32> sum = BlockReduce(b, ReduceOp::kSum, shifted, threads);
        Value<S32> max = BlockReduce(b, ReduceOp::kMax, shifted, threads);
        Value<S32> min = BlockReduce(b, ReduceOp::kMin, shifted, threads);
        Value<S32> r = b.Add(b.Add(sum, b.Mul(max, 3)), b.Mul(min, 7));
        y.Store(b.Mad(round, threads, tid), r);
      });
    });
    for (int round = 0; round < 3; ++round) {
      int64_t sum = 0, max = INT32_MIN, min = INT32_MAX;
      for (int32_t v : in) {
        sum += v + round;
        max = std::max<int64_t>(max, v + round);
        min = std::min<int64_t>(min, v + round);
      }
      for (uint32_t i = 0; i < threads; ++i) REQUIRE(out[round * threads + i] == sum + 3 * max + 7 * min);
    }
  }
  std::vector<float> in(128);
  for (int i = 0; i < 128; ++i) in[i] = i * 0.5f;
  std::vector<float> out = RunBlock<float, float>(128, in, 128, [&](KernelBuilder& b, auto x, auto y) {
    Value<U32> tid = b.TidX();
    y.Store(tid, BlockBroadcast(b, x.Load(tid), 77u));
  });
  for (float v : out) REQUIRE(v == 38.5f);
}

TEST_CASE("lane and warp indices come from %tid, also in 3-D blocks", "[helpers]") {
  std::vector<uint32_t> out = RunBlock<uint32_t, uint32_t>(0, {0}, 3 * 64, [&](KernelBuilder& b, auto, auto y) {
    Value<U32> t = LinearThreadIndex(b);
    Value<U32> lane = LaneIndex(b, t);
    Value<U32> warp = WarpIndex(b, t);
    y.Store(b.Mul(t, 3u), t);
    y.Store(b.Mad(t, 3u, 1u), lane);
    y.Store(b.Mad(t, 3u, 2u), warp);
  }, {8, 4, 2});
  std::vector<bool> seen(64, false);
  for (uint32_t i = 0; i < 64; ++i) {
    REQUIRE(out[3 * i] == i);
    REQUIRE(out[3 * i + 1] == i % 32);
    REQUIRE(out[3 * i + 2] == i / 32);
  }
}

TEST_CASE("2-D views: a padded shared tile transposes, InBounds guards the edges", "[helpers]") {
  // in [rows=5, cols=7] -> out [7, 5] in one 8x8 block through a tile padded by 1.
  constexpr uint32_t kRows = 5, kCols = 7;
  std::vector<float> in(kRows * kCols);
  std::iota(in.begin(), in.end(), 1.0f);
  KernelBuilder b("t", ir::Target::kSm80);
  auto src = GlobalView(GlobalParam<F32>(b, "in"), kRows, b.Const<U32>(kCols));
  auto dst_ptr = GlobalParam<F32>(b, "out");
  auto dst = GlobalView<F32>(dst_ptr, kCols, kRows, kRows);
  auto tile = SharedTile<F32>(b, "tile", 8, 8, 1);
  Value<U32> tx = b.TidX();
  Value<U32> ty = b.TidY();
  b.If(src.InBounds(ty, tx), [&] { tile.Store(ty, tx, src.Load(ty, tx)); });
  b.BarSync();
  b.If(dst.InBounds(ty, tx), [&] { dst.Store(ty, tx, tile.Load(tx, ty)); });
  ir::Kernel k = FinishOrDie(b);
  CHECK(k.variables[0].count == 72);
  std::vector<float> out = Run<float, float>(k, in, kRows * kCols, {.grid = {1}, .block = {8, 8, 1}});
  for (uint32_t r = 0; r < kRows; ++r) {
    for (uint32_t c = 0; c < kCols; ++c) REQUIRE(out[c * kRows + r] == in[r * kCols + c]);
  }
}

TEST_CASE("helper misuse is a builder error naming the call", "[helpers]") {
  {
    KernelBuilder b("k");
    BlockReduce(b, ReduceOp::kSum, b.Const<F32>(1.0f), 100); const int line = __LINE__;
    CHECK(testing::Msg(b.Finish().status()) ==
          StrCat("kernel k: helpers_test.cc:", line,
                 ": BlockReduce needs a block of a multiple of 32 threads up to 1024, got 100"));
  }
  {
    KernelBuilder b("k");
    WarpReduce(b, ReduceOp::kMax, b.Const<U32>(1), 3); const int line = __LINE__;
    CHECK(testing::Msg(b.Finish().status()) ==
          StrCat("kernel k: helpers_test.cc:", line, ": WarpReduce width 3 is not a power of two in 1..32"));
  }
  {
    KernelBuilder b("k");
    WarpReduce(b, ReduceOp::kXor, b.Const<F32>(1.0f)); const int line = __LINE__;
    CHECK(testing::Msg(b.Finish().status()) ==
          StrCat("kernel k: helpers_test.cc:", line, ": and/or/xor reductions take integer values, not f32"));
  }
}

TEST_CASE("the README example builds and computes gelu(a * x + y)", "[helpers]") {
  KernelBuilder b("saxpy_gelu", ir::Target::kSm80);
  auto x = GlobalParam<F32>(b, "x");
  auto y = GlobalParam<F32>(b, "y");
  Value<F32> a = b.Param<F32>("a");
  Value<U32> n = b.Param<U32>("n");
  GridStrideLoop(b, n, [&](Value<U32> i) {
    Value<F32> xi = x.Load(i);
    y.Store(i, Gelu(b, b.Fma(a, xi, y.Load(i))));
  });
  ir::Kernel k = FinishOrDie(b);
  auto emu = MakeEmulator({.approx_worst_error = true});
  std::vector<float> xs = {-3.0f, -1.0f, 0.0f, 0.5f, 2.0f}, ys = {1.0f, 0.5f, 0.0f, -0.25f, 1.0f};
  auto xb = Buffer<float>::FromHost(*emu, xs);
  auto yb = Buffer<float>::FromHost(*emu, ys);
  auto loaded = emu->Load(k);
  REQUIRE(loaded.ok());
  REQUIRE(emu->Launch(**loaded, {.grid = {1}, .block = {32}}, {*xb, *yb, 1.5f, 5u}).ok());
  std::vector<float> out = *yb->ToHost();
  for (size_t i = 0; i < xs.size(); ++i) {
    double v = 1.5 * xs[i] + ys[i];
    REQUIRE(std::fabs(out[i] - 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))) <= 4e-7);
  }
}

}  // namespace
}  // namespace ptxforge
