// Canonical order: the same program recorded in different call orders gives identical IR and PTX.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>

#include "builder/kernel_builder.h"
#include "emit/ir_printer.h"
#include "emit/ptx_printer.h"
#include "ir/canonical_order.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::StateSpace;
using testing::Msg;

// Builds a kernel with `body` and returns its IR dump and PTX, joined.
std::string Build(const std::function<void(KernelBuilder&)>& body) {
  KernelBuilder b("k", ir::Target::kSm80);
  body(b);
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  absl::StatusOr<std::string> ptx = emit::PrintPtx(*k);
  REQUIRE(Msg(ptx) == "OK");
  return emit::PrintIr(*k) + *ptx;
}

// The IR Finish() gives (canonical order applied).
std::string FinishedIr(KernelBuilder& b) {
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  return emit::PrintIr(*k);
}

// The three ways a compiler may evaluate `b.Mad(b.CtaidX(), b.NtidX(), b.TidX())`.
Value<U32> GlobalIndex(KernelBuilder& b, int order) {
  Value<U32> c, n, t;
  switch (order) {
    case 0: c = b.CtaidX(); n = b.NtidX(); t = b.TidX(); break;
    case 1: t = b.TidX(); n = b.NtidX(); c = b.CtaidX(); break;
    default: n = b.NtidX(); t = b.TidX(); c = b.CtaidX(); break;
  }
  return b.Mad(c, n, t);
}

// out[i] = x[i] + y[i] with every independent call made in an order chosen by `order`.
void VectorAdd(KernelBuilder& b, int order) {
  Value<U64> x = b.CvtaToGlobal(b.Param<U64>("x"));
  Value<U64> y = b.CvtaToGlobal(b.Param<U64>("y"));
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> i = GlobalIndex(b, order);
  b.If(b.Lt(i, n), [&] {
    Value<F32> xv, yv;
    Value<U64> dst;
    if (order == 0) {
      xv = b.Load<F32>(StateSpace::kGlobal, b.ElementAddr<F32>(x, i));
      yv = b.Load<F32>(StateSpace::kGlobal, b.ElementAddr<F32>(y, i));
      dst = b.ElementAddr<F32>(out, i);
    } else {
      dst = b.ElementAddr<F32>(out, i);
      yv = b.Load<F32>(StateSpace::kGlobal, b.ElementAddr<F32>(y, i));
      xv = b.Load<F32>(StateSpace::kGlobal, b.ElementAddr<F32>(x, i));
    }
    b.Store(StateSpace::kGlobal, dst, b.Add(xv, yv));
  });
}

// A warp sum and a loop with a mutable accumulator; shared subexpressions.
void LoopAndShuffle(KernelBuilder& b, int order) {
  Value<U64> x = b.CvtaToGlobal(b.Param<U64>("x"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> i = GlobalIndex(b, order);
  Var<F32> acc = b.Mutable<F32>(0.0f, "acc");
  b.ForRange<U32>(i, n, 32u, [&](Value<U32> j) {
    Value<U32> j2 = b.Mul(j, 2u);  // used twice below
    Value<F32> lo, hi;
    if (order == 0) {
      lo = b.Load<F32>(StateSpace::kGlobal, b.ElementAddr<F32>(x, j2));
      hi = b.Load<F32>(StateSpace::kGlobal, b.ElementAddr<F32>(x, b.Add(j2, 1u)));
    } else {
      hi = b.Load<F32>(StateSpace::kGlobal, b.ElementAddr<F32>(x, b.Add(j2, 1u)));
      lo = b.Load<F32>(StateSpace::kGlobal, b.ElementAddr<F32>(x, j2));
    }
    b.Assign(acc, b.Add(Value<F32>(acc), b.Mul(lo, hi)));
  });
  Value<F32> v = acc;
  for (uint32_t d = 16; d > 0; d /= 2) {
    Value<F32> other, mine;
    if (order == 0) {
      other = b.ShflDown(v, d);
      mine = b.Mul(v, 1.0f);
    } else {
      mine = b.Mul(v, 1.0f);
      other = b.ShflDown(v, d);
    }
    v = b.Add(mine, other);
  }
  b.If(b.Eq(b.LaneId(), 0u), [&] { b.Store(StateSpace::kGlobal, x, v); });
}

TEST_CASE("vector add gives the same IR and PTX whatever order the calls were made in", "[canonical]") {
  std::string first = Build([](KernelBuilder& b) { VectorAdd(b, 0); });
  CHECK(Build([](KernelBuilder& b) { VectorAdd(b, 1); }) == first);
  CHECK(Build([](KernelBuilder& b) { VectorAdd(b, 2); }) == first);
}

TEST_CASE("loops, mutable registers and shuffles give the same IR and PTX in any call order", "[canonical]") {
  std::string first = Build([](KernelBuilder& b) { LoopAndShuffle(b, 0); });
  CHECK(Build([](KernelBuilder& b) { LoopAndShuffle(b, 1); }) == first);
  CHECK(Build([](KernelBuilder& b) { LoopAndShuffle(b, 2); }) == first);
}

// Two values computed in one C++ expression (argument order unspecified) and
// read only after a store: they end their run unread, so their order comes
// from where they are first used, not from the order they were recorded in.
TEST_CASE("values read only after a store are ordered by their first use", "[canonical]") {
  auto body = [](KernelBuilder& b, bool swapped) {
    Value<U64> p = b.CvtaToGlobal(b.Param<U64>("p"));
    Value<U32> t = b.TidX();
    Value<U32> row, col;
    if (swapped) {
      col = b.Add(t, 2u);
      row = b.Mul(t, 3u);
    } else {
      row = b.Mul(t, 3u);
      col = b.Add(t, 2u);
    }
    b.Store(StateSpace::kGlobal, p, t);
    b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(p, row), col);
    b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(p, col), row);
  };
  std::string swapped = Build([&](KernelBuilder& b) { body(b, true); });
  CHECK(Build([&](KernelBuilder& b) { body(b, false); }) == swapped);
}

TEST_CASE("canonical order: operand trees in operand order, loads never cross stores", "[canonical]") {
  auto body = [](KernelBuilder& b, bool swapped) {
    Value<U64> p = b.CvtaToGlobal(b.Param<U64>("p"));
    Value<U32> a, c;
    if (swapped) {
      c = b.Load<U32>(StateSpace::kGlobal, p);
      a = b.Load<U32>(StateSpace::kGlobal, p, {.cache = ir::CacheOp::kCg});
    } else {
      a = b.Load<U32>(StateSpace::kGlobal, p, {.cache = ir::CacheOp::kCg});
      c = b.Load<U32>(StateSpace::kGlobal, p);
    }
    b.Store(StateSpace::kGlobal, p, b.Sub(a, c));
    Value<U32> after = b.Load<U32>(StateSpace::kGlobal, p);  // stays after the store
    b.Store(StateSpace::kGlobal, p, b.Add(after, b.TidX()));
  };
  std::string swapped = Build([&](KernelBuilder& b) { body(b, true); });
  CHECK(Build([&](KernelBuilder& b) { body(b, false); }) == swapped);
  KernelBuilder b("k", ir::Target::kSm80);
  body(b, true);
  CHECK(FinishedIr(b) ==
        "kernel k target sm_80\n"
        "  param u64 p\n"
        "{\n"
        "  %0:u64 = ld.param.u64 [p]  // p\n"
        "  %1:u64 = cvta.to.global.u64 %0\n"
        "  %2:u32 = ld.global.cg.u32 [%1]\n"
        "  %3:u32 = ld.global.u32 [%1]\n"
        "  %4:u32 = sub.u32 %2, %3\n"
        "  st.global.u32 [%1], %4\n"
        "  %5:u32 = ld.global.u32 [%1]\n"
        "  %6:u32 = mov.u32 %tid.x\n"
        "  %7:u32 = add.u32 %5, %6\n"
        "  st.global.u32 [%1], %7\n"
        "  ret\n"
        "}\n");
}

TEST_CASE("canonical order: a store's address is made after its values", "[canonical]") {
  KernelBuilder b("k", ir::Target::kSm80);
  Value<U64> p = b.CvtaToGlobal(b.Param<U64>("p"));
  Value<U32> t = b.TidX();
  b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(p, t), b.Mul(t, 3u));
  CHECK(FinishedIr(b) ==
        "kernel k target sm_80\n"
        "  param u64 p\n"
        "{\n"
        "  %0:u32 = mov.u32 %tid.x\n"
        "  %1:u32 = mul.lo.u32 %0, 3\n"
        "  %2:u64 = ld.param.u64 [p]  // p\n"
        "  %3:u64 = cvta.to.global.u64 %2\n"
        "  %4:u64 = mul.wide.u32 %0, 4\n"
        "  %5:u64 = add.u64 %3, %4\n"
        "  st.global.u32 [%5], %1\n"
        "  ret\n"
        "}\n");
}

// Each half of a two-word load is read by one multiply only: placing that
// multiply frees a register, so both are made as soon as the load is, before
// the thread-index product the walk from the store would make next; the
// same IR whatever order the calls were made in.
TEST_CASE("canonical order: an instruction that frees registers is placed as soon as its operands are", "[canonical]") {
  auto body = [](KernelBuilder& b, bool swapped) {
    Value<U64> p = b.CvtaToGlobal(b.Param<U64>("p"));
    std::array<Value<U32>, 2> v = b.LoadVec<U32, 2>(StateSpace::kGlobal, Address(p));
    Value<U32> t = b.TidX();
    Value<U32> tt = b.Mul(t, t);  // read twice: nothing frees it
    Value<U32> a, c;
    if (swapped) {
      c = b.Mul(v[1], 5u);
      a = b.Mul(v[0], 3u);
    } else {
      a = b.Mul(v[0], 3u);
      c = b.Mul(v[1], 5u);
    }
    b.Store(StateSpace::kGlobal, p, b.Add(b.Xor(a, tt), b.Xor(c, tt)));
  };
  std::string swapped = Build([&](KernelBuilder& b) { body(b, true); });
  CHECK(Build([&](KernelBuilder& b) { body(b, false); }) == swapped);
  KernelBuilder b("k", ir::Target::kSm80);
  body(b, true);
  CHECK(FinishedIr(b) ==
        "kernel k target sm_80\n"
        "  param u64 p\n"
        "{\n"
        "  %0:u64 = ld.param.u64 [p]  // p\n"
        "  %1:u64 = cvta.to.global.u64 %0\n"
        "  %2:u32, %3:u32 = ld.global.v2.u32 [%1]\n"
        "  %4:u32 = mul.lo.u32 %2, 3\n"
        "  %5:u32 = mul.lo.u32 %3, 5\n"
        "  %6:u32 = mov.u32 %tid.x\n"
        "  %7:u32 = mul.lo.u32 %6, %6\n"
        "  %8:u32 = xor.b32 %4, %7\n"
        "  %9:u32 = xor.b32 %5, %7\n"
        "  %10:u32 = add.u32 %8, %9\n"
        "  st.global.u32 [%1], %10\n"
        "  ret\n"
        "}\n");
}

// The second load readies both sums (each the only reader of two loaded
// words): they are placed at once, the one reading the first-made words
// first whichever was recorded first, before the square and ex2 that the
// walk from the store reaches first; the square reads %6, which is read
// again at the end, so it frees nothing and waits for the walk.
TEST_CASE("canonical order: instructions readied together are placed in the order their operands were made", "[canonical]") {
  auto body = [](KernelBuilder& b, int order) {
    Value<U64> p = b.CvtaToGlobal(b.Param<U64>("p"));
    std::array<Value<F32>, 2> x, z;
    if (order == 0) {
      x = b.LoadVec<F32, 2>(StateSpace::kGlobal, Address(p));
      z = b.LoadVec<F32, 2>(StateSpace::kGlobal, Address(p, 8));
    } else {
      z = b.LoadVec<F32, 2>(StateSpace::kGlobal, Address(p, 8));
      x = b.LoadVec<F32, 2>(StateSpace::kGlobal, Address(p));
    }
    Value<F32> s0, s1;
    if (order == 2) {
      s1 = b.Add(x[1], z[1]);
      s0 = b.Add(x[0], z[0]);
    } else {
      s0 = b.Add(x[0], z[0]);
      s1 = b.Add(x[1], z[1]);
    }
    Value<F32> e = b.Ex2(b.Mul(s0, s0));
    b.Store(StateSpace::kGlobal, p, b.Mul(b.Add(e, s1), s0));
  };
  std::string first = Build([&](KernelBuilder& b) { body(b, 0); });
  CHECK(Build([&](KernelBuilder& b) { body(b, 1); }) == first);
  CHECK(Build([&](KernelBuilder& b) { body(b, 2); }) == first);
  KernelBuilder b("k", ir::Target::kSm80);
  body(b, 2);
  CHECK(FinishedIr(b) ==
        "kernel k target sm_80\n"
        "  param u64 p\n"
        "{\n"
        "  %0:u64 = ld.param.u64 [p]  // p\n"
        "  %1:u64 = cvta.to.global.u64 %0\n"
        "  %2:f32, %3:f32 = ld.global.v2.f32 [%1]\n"
        "  %4:f32, %5:f32 = ld.global.v2.f32 [%1+8]\n"
        "  %6:f32 = add.f32 %2, %4\n"
        "  %7:f32 = add.f32 %3, %5\n"
        "  %8:f32 = mul.f32 %6, %6\n"
        "  %9:f32 = ex2.approx.f32 %8\n"
        "  %10:f32 = add.f32 %9, %7\n"
        "  %11:f32 = mul.f32 %10, %6\n"
        "  st.global.f32 [%1], %11\n"
        "  ret\n"
        "}\n");
}

TEST_CASE("canonical order: reads of %clock keep their order", "[canonical]") {
  KernelBuilder b("k", ir::Target::kSm80);
  Value<U64> p = b.CvtaToGlobal(b.Param<U64>("p"));
  Value<U32> start = b.Clock();
  Value<U32> end = b.Clock();
  b.Store(StateSpace::kGlobal, p, b.Sub(end, start));  // the second read first in operand order
  CHECK(FinishedIr(b) ==
        "kernel k target sm_80\n"
        "  param u64 p\n"
        "{\n"
        "  %0:u64 = ld.param.u64 [p]  // p\n"
        "  %1:u64 = cvta.to.global.u64 %0\n"
        "  %2:u32 = mov.u32 %clock\n"
        "  %3:u32 = mov.u32 %clock\n"
        "  %4:u32 = sub.u32 %3, %2\n"
        "  st.global.u32 [%1], %4\n"
        "  ret\n"
        "}\n");
}

// CanonicalizeOrder is public and may be given a kernel the verifier has not
// passed: an operand or guard naming a register the kernel lacks keeps its id
// (the verifier reports it), and the rest is ordered and numbered as usual.
TEST_CASE("canonical order keeps ids of registers the kernel lacks", "[canonical]") {
  KernelBuilder b("k", ir::Target::kSm80);
  Value<U64> p = b.CvtaToGlobal(b.Param<U64>("p"));
  Value<U32> x = b.Load<U32>(StateSpace::kGlobal, p);
  Value<U32> y = b.Load<U32>(StateSpace::kGlobal, b.ElementAddr<U32>(p, b.Param<U32>("i")));
  b.Add(x, 7u);  // read by nothing: a root in recorded order
  b.Store(StateSpace::kGlobal, p, b.Add(x, y));
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  // Out of canonical order (the unread add after the param load it does not
  // need), with %99 as the add's second operand and %98 guarding the store.
  std::swap(k->body[3], k->body[4]);
  REQUIRE(k->body[4].op == ir::Opcode::kAdd);
  k->body[4].srcs[1] = ir::Reg{99};
  REQUIRE(k->body[9].op == ir::Opcode::kSt);
  k->body[9].guard = ir::Reg{98};
  ir::CanonicalizeOrder(*k);
  CHECK(emit::PrintIr(*k) ==
        "kernel k target sm_80\n"
        "  param u64 p\n"
        "  param u32 i\n"
        "{\n"
        "  %0:u64 = ld.param.u64 [p]  // p\n"
        "  %1:u64 = cvta.to.global.u64 %0\n"
        "  %2:u32 = ld.global.u32 [%1]\n"
        "  %3:u32 = add.u32 %2, %99\n"
        "  %4:u32 = ld.param.u32 [i]  // i\n"
        "  %5:u64 = mul.wide.u32 %4, 4\n"
        "  %6:u64 = add.u64 %1, %5\n"
        "  %7:u32 = ld.global.u32 [%6]\n"
        "  %8:u32 = add.u32 %2, %7\n"
        "  @%98 st.global.u32 [%1], %8\n"
        "  ret\n"
        "}\n");
}

}  // namespace
}  // namespace ptxforge
