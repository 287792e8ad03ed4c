// Canonical order: the same program recorded in different call orders gives identical IR and PTX.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

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

// ---- random programs, each recorded with its calls made in three orders

// A u32 or f32 expression of a random program: drawn first, then recorded,
// so that one tree can be recorded with its operands made in any order.
// Every instruction it records is movable (pure, unguarded): a different
// call order only permutes instructions within a run.
struct Expr {
  enum Kind : uint8_t { kPool, kLoad, kTid, kAdd, kMul, kSubImm, kMad, kMin, kXor, kSelectLt, kCvt, kShfl, kFma };
  Kind kind = kPool;
  bool is_float = false;
  uint32_t n = 0;  // a pool index, an immediate or a lane mask
  std::vector<Expr> kids;
};

// Draws a program's trees and statements with one generator and records
// them, each call's operands made in an order from another: left to right
// (order 0), right to left (1) or drawn node by node (2).
class RandomProgram {
 public:
  RandomProgram(KernelBuilder& b, uint32_t seed, int order)
      : b_(b), draw_(seed), order_(order), shuffle_(seed ^ 0x5bd1e995u) {}

  void Record() {
    out_ = b_.CvtaToGlobal(b_.Param<U64>("out"));
    in_ = b_.CvtaToGlobal(b_.Param<U64>("in"));
    u32_ = {b_.Param<U32>("n")};
    f32_ = {b_.Param<F32>("s")};
    preds_ = {b_.Lt(u32_[0], 100u)};
    const uint32_t statements = 1 + R(20);
    for (uint32_t i = 0; i < statements; ++i) Statement(0);
    b_.Store(StateSpace::kGlobal, out_, u32_.back());
  }

 private:
  uint32_t R(uint32_t n) { return draw_() % n; }

  Expr Draw(bool is_float, int depth) {
    Expr e;
    e.is_float = is_float;
    const bool leaf = depth == 0 || R(3) == 0;
    if (is_float) {
      static constexpr Expr::Kind kLeaves[] = {Expr::kPool, Expr::kLoad};
      static constexpr Expr::Kind kNodes[] = {Expr::kAdd, Expr::kMul, Expr::kFma, Expr::kMin, Expr::kCvt};
      e.kind = leaf ? kLeaves[R(2)] : kNodes[R(5)];
    } else {
      static constexpr Expr::Kind kLeaves[] = {Expr::kPool, Expr::kLoad, Expr::kTid};
      static constexpr Expr::Kind kNodes[] = {Expr::kAdd,  Expr::kMul,      Expr::kSubImm, Expr::kMad,
                                              Expr::kMin,  Expr::kXor,      Expr::kSelectLt, Expr::kCvt,
                                              Expr::kShfl};
      e.kind = leaf ? kLeaves[R(3)] : kNodes[R(9)];
    }
    switch (e.kind) {
      case Expr::kPool: e.n = R(is_float ? f32_.size() : u32_.size()); break;
      case Expr::kLoad: e.kids.push_back(Draw(false, 0)); break;  // the index
      case Expr::kTid: break;
      case Expr::kSubImm: e.n = R(100); e.kids.push_back(Draw(is_float, depth - 1)); break;
      case Expr::kShfl: e.n = 1u << R(5); e.kids.push_back(Draw(is_float, depth - 1)); break;
      case Expr::kCvt: e.kids.push_back(Draw(!is_float, depth - 1)); break;
      case Expr::kMad:
      case Expr::kFma:
        for (int k = 0; k < 3; ++k) e.kids.push_back(Draw(is_float, depth - 1));
        break;
      case Expr::kSelectLt:
        for (int k = 0; k < 4; ++k) e.kids.push_back(Draw(is_float, depth - 1));
        break;
      default:
        for (int k = 0; k < 2; ++k) e.kids.push_back(Draw(is_float, depth - 1));
        break;
    }
    return e;
  }

  // Whether two calls are made in their order in the program.
  bool LeftFirst() { return order_ == 0 || (order_ == 2 && (shuffle_() & 1)); }

  // Records each of `kids`, in the call order, into u or f (by position).
  void Operands(const std::vector<Expr>& kids, std::vector<Value<U32>>& u, std::vector<Value<F32>>& f) {
    u.assign(kids.size(), Value<U32>());
    f.assign(kids.size(), Value<F32>());
    std::vector<size_t> at(kids.size());
    for (size_t k = 0; k < at.size(); ++k) at[k] = order_ == 1 ? at.size() - 1 - k : k;
    if (order_ == 2) std::shuffle(at.begin(), at.end(), shuffle_);
    for (size_t k : at) {
      if (kids[k].is_float) {
        f[k] = F(kids[k]);
      } else {
        u[k] = U(kids[k]);
      }
    }
  }

  Value<U32> U(const Expr& e) {
    std::vector<Value<U32>> u;
    std::vector<Value<F32>> f;
    Operands(e.kids, u, f);
    switch (e.kind) {
      case Expr::kPool: return u32_[e.n];
      case Expr::kLoad: return b_.Load<U32>(StateSpace::kGlobal, b_.ElementAddr<U32>(in_, u[0]));
      case Expr::kTid: return b_.TidX();
      case Expr::kAdd: return b_.Add(u[0], u[1]);
      case Expr::kMul: return b_.Mul(u[0], u[1]);
      case Expr::kSubImm: return b_.Sub(u[0], e.n);
      case Expr::kMad: return b_.Mad(u[0], u[1], u[2]);
      case Expr::kMin: return b_.Min(u[0], u[1]);
      case Expr::kXor: return b_.Xor(u[0], u[1]);
      case Expr::kSelectLt: return b_.Select(b_.Lt(u[0], u[1]), u[2], u[3]);
      case Expr::kCvt: return b_.Cvt<U32>(f[0], CvtOpts{.rounding = ir::Rounding::kRzi});
      case Expr::kShfl: return b_.ShflXor(u[0], e.n);
      default: FAIL("no u32 expression of kind " << int{e.kind}); return Value<U32>();
    }
  }

  Value<F32> F(const Expr& e) {
    std::vector<Value<U32>> u;
    std::vector<Value<F32>> f;
    Operands(e.kids, u, f);
    switch (e.kind) {
      case Expr::kPool: return f32_[e.n];
      case Expr::kLoad: return b_.Load<F32>(StateSpace::kGlobal, b_.ElementAddr<F32>(in_, u[0]));
      case Expr::kAdd: return b_.Add(f[0], f[1]);
      case Expr::kMul: return b_.Mul(f[0], f[1]);
      case Expr::kFma: return b_.Fma(f[0], f[1], f[2], FloatOpts{.rounding = ir::Rounding::kRn});
      case Expr::kMin: return b_.Min(f[0], f[1]);
      case Expr::kCvt: return b_.Cvt<F32>(u[0], CvtOpts{.rounding = ir::Rounding::kRn});
      default: FAIL("no f32 expression of kind " << int{e.kind}); return Value<F32>();
    }
  }

  // One statement; the calls that are not movable (stores, branches,
  // assignments to mutable registers, %clock) are made in program order.
  void Statement(int depth) {
    switch (R(depth < 2 ? 10 : 8)) {
      case 0:
      case 1: u32_.push_back(U(Draw(false, 1 + R(3)))); break;
      case 2: f32_.push_back(F(Draw(true, 1 + R(3)))); break;
      case 3: {  // out[index] = value, the two trees made in the call order
        std::vector<Value<U32>> u;
        std::vector<Value<F32>> f;
        Operands({Draw(false, 1), Draw(R(2) == 0, 2)}, u, f);
        if (u[1].reg.valid()) {
          b_.Store(StateSpace::kGlobal, b_.ElementAddr<U32>(out_, u[0]), u[1]);
        } else {
          b_.Store(StateSpace::kGlobal, b_.ElementAddr<F32>(out_, u[0]), f[1]);
        }
        break;
      }
      case 4: {
        std::vector<Value<U32>> u;
        std::vector<Value<F32>> f;
        Operands({Draw(false, 1 + R(2)), Draw(false, 1 + R(2))}, u, f);
        if (R(2) == 0) {
          preds_.push_back(b_.Lt(u[0], u[1]));
        } else {  // both read only after a store: the order they are made in follows that read
          b_.Store(StateSpace::kGlobal, out_, u32_[R(u32_.size())]);
          u32_.push_back(b_.Xor(u[1], u[0]));
        }
        break;
      }
      case 5: {  // what a later read of %clock measures stays between the two
        Value<U32> start = b_.Clock();
        Value<U32> end = b_.Clock();
        u32_.push_back(b_.Sub(end, start));
        break;
      }
      case 6: u32_.push_back(b_.Add(U(Draw(false, 2)), 1u)); break;
      case 7: {  // two vector loads and their words' sums, each pair made in the call order
        std::array<Value<U32>, 2> x, z;
        const int64_t at = 8 * R(4);
        auto load = [&](std::array<Value<U32>, 2>& v, int64_t offset) {
          v = b_.LoadVec<U32, 2>(StateSpace::kGlobal, Address(in_, offset));
        };
        if (LeftFirst()) {
          load(x, at);
          load(z, at + 32);
        } else {
          load(z, at + 32);
          load(x, at);
        }
        std::array<Value<U32>, 2> sum;
        for (size_t k : LeftFirst() ? std::array<size_t, 2>{0, 1} : std::array<size_t, 2>{1, 0}) {
          sum[k] = b_.Add(x[k], z[k]);
        }
        u32_.push_back(sum[0]);
        u32_.push_back(sum[1]);
        break;
      }
      case 8: {
        const Value<Pred> p = preds_[R(preds_.size())];
        const uint32_t inner = 1 + R(4);
        Scoped([&] { b_.If(p, [&] { for (uint32_t i = 0; i < inner; ++i) Statement(depth + 1); }); });
        break;
      }
      default: {
        Var<U32> acc = b_.Mutable<U32>(U(Draw(false, 1)), "acc");
        const Value<U32> bound = U(Draw(false, 1));
        const uint32_t inner = 1 + R(3);
        Scoped([&] {
          b_.ForRange<U32>(0u, bound, 1u, [&](Value<U32> i) {
            u32_.push_back(i);
            for (uint32_t k = 0; k < inner; ++k) Statement(depth + 1);
            b_.Assign(acc, b_.Add(Value<U32>(acc), U(Draw(false, 1))));
          });
        });
        u32_.push_back(acc);
        break;
      }
    }
  }

  // Runs `body`; the values it added to the pools are out of scope after.
  void Scoped(const std::function<void()>& body) {
    const size_t u = u32_.size(), f = f32_.size(), p = preds_.size();
    body();
    u32_.resize(u);
    f32_.resize(f);
    preds_.resize(p);
  }

  KernelBuilder& b_;
  std::mt19937 draw_;
  const int order_;
  std::mt19937 shuffle_;
  Value<U64> out_, in_;
  std::vector<Value<U32>> u32_;
  std::vector<Value<F32>> f32_;
  std::vector<Value<Pred>> preds_;
};

// The guarantee itself, on programs no test wrote by hand: loads, shuffles,
// selects and conversions in trees up to four deep, vector loads whose
// words are summed pairwise (one placement readies several instructions),
// trees read only after a store, stores, %clock, ifs and loops with mutable
// accumulators nested two deep. A change to the canonical order that
// keeps its output should also keep every program's IR and PTX as they
// were (bench/COLD_PATH.md, session 35, compared 30,000).
TEST_CASE("random programs give the same IR and PTX whatever order their calls were made in", "[canonical]") {
  for (uint32_t seed = 0; seed < 1000; ++seed) {
    INFO("program " << seed);
    const std::string first = Build([&](KernelBuilder& b) { RandomProgram(b, seed, 0).Record(); });
    CHECK(Build([&](KernelBuilder& b) { RandomProgram(b, seed, 1).Record(); }) == first);
    CHECK(Build([&](KernelBuilder& b) { RandomProgram(b, seed, 2).Record(); }) == first);
  }
}

}  // namespace
}  // namespace ptxforge
