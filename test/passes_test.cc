// Tests of the passes: dead-register removal, register counting and the pipeline.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "builder/kernel_builder.h"
#include "emit/ir_printer.h"
#include "passes/dead_register_removal.h"
#include "passes/pass.h"
#include "passes/register_count.h"
#include "passes/verifier.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::StateSpace;
using testing::Msg;

ir::Kernel Finished(KernelBuilder& b) {
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  return *std::move(k);
}

// Straight-line code with dead values, a dead load and an unused param.
ir::Kernel StraightLine() {
  KernelBuilder b("straight");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> dead = b.Mul(n, 3u);
  b.Add(dead, 1u);  // only feeds nothing
  Value<U32> live = b.Add(n, 2u);
  b.Load<U32>(StateSpace::kGlobal, out);  // loads are removable too
  b.Param<U32>("unused");
  b.Store(StateSpace::kGlobal, out, live);
  return Finished(b);
}

// A loop whose loop-carried sum feeds nothing, next to one that is stored.
ir::Kernel Loop() {
  KernelBuilder b("loop");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> sum = b.Mutable<U32>(0u, "sum");
  Var<U32> kept = b.Mutable<U32>(0u, "kept");
  b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) {
    b.Assign(sum, b.Add<U32>(sum, i));
    b.Assign(kept, b.Add<U32>(kept, 2u));
  });
  b.Store(StateSpace::kGlobal, out, kept);
  return Finished(b);
}

TEST_CASE("dead-register removal on straight-line code", "[dce]") {
  ir::Kernel k = StraightLine();
  REQUIRE(passes::RemoveDeadRegisters(k) == 4);
  REQUIRE(emit::PrintIr(k) ==
          "kernel straight target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "  param u32 unused\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %3:u64 = ld.param.u64 [out]  // out\n"
          "  %4:u64 = cvta.to.global.u64 %3\n"
          "  %7:u32 = add.u32 %0, 2\n"
          "  st.global.u32 [%4], %7\n"
          "  ret\n"
          "}\n");
  REQUIRE(Msg(passes::VerifyKernel(k)) == "OK");
  REQUIRE(passes::RemoveDeadRegisters(k) == 0);  // a fixed point
}

TEST_CASE("dead-register removal on a loop", "[dce]") {
  ir::Kernel k = Loop();
  REQUIRE(passes::RemoveDeadRegisters(k) == 3);
  REQUIRE(emit::PrintIr(k) ==
          "kernel loop target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u64 = ld.param.u64 [out]  // out\n"
          "  %1:u64 = cvta.to.global.u64 %0\n"
          "  %2:u32 = ld.param.u32 [n]  // n\n"
          "  %4:u32 = mov.u32 0  // kept mutable\n"
          "  %5:u32 = mov.u32 0  // i mutable\n"
          "$L0_loop:\n"
          "  %6:pred = setp.ge.u32 %5, %2\n"
          "  @%6 bra $L1_endloop\n"
          "  %8:u32 = add.u32 %4, 2\n"
          "  %4:u32 = mov.u32 %8  // kept mutable\n"
          "  %9:u32 = add.u32 %5, 1\n"
          "  %5:u32 = mov.u32 %9  // i mutable\n"
          "  bra $L0_loop\n"
          "$L1_endloop:\n"
          "  st.global.u32 [%1], %4\n"
          "  ret\n"
          "}\n");
  REQUIRE(Msg(passes::VerifyKernel(k)) == "OK");
}

TEST_CASE("raw PTX is never removed and keeps its inputs alive", "[dce]") {
  KernelBuilder b("raw");
  Value<U32> a = b.Param<U32>("a");
  Value<U32> in = b.Add(a, 1u);
  Value<U32> unused_out = b.Undefined<U32>("o");
  b.RawPtx("mov.u32 {0}, {1};", {unused_out}, {in});
  b.Add(a, 5u);
  ir::Kernel k = Finished(b);
  REQUIRE(passes::RemoveDeadRegisters(k) == 1);
  REQUIRE(emit::PrintIr(k) ==
          "kernel raw target sm_80\n"
          "  param u32 a\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [a]  // a\n"
          "  %1:u32 = add.u32 %0, 1\n"
          "  %2:u32 = raw \"mov.u32 %2, %1;\"  // o\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("guards, atomics and barriers keep what they read", "[dce]") {
  KernelBuilder b("effects");
  Value<U64> p = b.Param<U64>("p");
  Value<U32> v = b.Param<U32>("v");
  b.Atom<U32>(ir::AtomOp::kAdd, StateSpace::kGlobal, p, v);  // result unused, effect kept
  Value<U32> id = b.Add(v, 0u);
  b.BarSync(0);
  b.If(b.Eq(id, 3u), [&] { b.Exit(); });
  ir::Kernel k = Finished(b);
  REQUIRE(passes::RemoveDeadRegisters(k) == 0);
}

TEST_CASE("register counts and max-live on straight-line code", "[regcount]") {
  KernelBuilder b("count");
  Value<U64> p = b.CvtaToGlobal(b.Param<U64>("p"));
  Value<F32> x = b.Load<F32>(StateSpace::kGlobal, p);
  Value<F64> d = b.Cvt<F64>(x);
  Value<F64> d2 = b.Add(d, d);
  Value<F32> y = b.Cvt<F32>(d2);
  Value<Pred> big = b.Gt(y, 1.0f);
  Value<F32> z = b.Select(big, y, x);
  b.Store(StateSpace::kGlobal, p, z);
  ir::Kernel k = Finished(b);
  ir::KernelStats s = passes::CountRegisters(k);
  // pred b16 b32 b64 f32 f64
  REQUIRE(s.regs_per_class == std::array<uint32_t, 6>{1, 0, 0, 2, 3, 2});
  REQUIRE(s.instructions == 10);
  // Most pressure around add.f64: %1 (b64, 2 units) + x (f32) + d (f64, 2 units).
  REQUIRE(s.max_live == 5);
  REQUIRE(s.max_live_per_class == std::array<uint32_t, 6>{1, 0, 0, 1, 2, 1});
}

TEST_CASE("register counts and max-live across a loop's back edge", "[regcount]") {
  ir::Kernel k = Loop();
  ir::KernelStats before = passes::CountRegisters(k);
  REQUIRE(before.regs_per_class == std::array<uint32_t, 6>{1, 0, 7, 2, 0, 0});
  passes::RemoveDeadRegisters(k);
  ir::KernelStats s = passes::CountRegisters(k);
  REQUIRE(s.regs_per_class == std::array<uint32_t, 6>{1, 0, 5, 2, 0, 0});
  REQUIRE(s.instructions == 14);
  // In the loop: out (2 units), n, kept, i stay live around the back edge.
  REQUIRE(s.max_live == 5);
  REQUIRE(s.max_live_per_class == std::array<uint32_t, 6>{1, 0, 3, 1, 0, 0});
}

// The standard pipeline, recording the name of each pass `dump_after` selects.
passes::Pipeline Recording(std::string_view dump_after, std::vector<std::string>& seen) {
  passes::Pipeline p = passes::Pipeline::Standard();
  REQUIRE(Msg(p.DumpAfter(dump_after, [&seen](std::string_view pass, const ir::Kernel&) { seen.emplace_back(pass); })) ==
          "OK");
  return p;
}

TEST_CASE("the pipeline dumps after the chosen pass", "[pipeline]") {
  passes::Pipeline p = passes::Pipeline::Standard();
  REQUIRE(StrJoin(p.PassNames(), ",") == "verify,dce,regcount");
  REQUIRE(Msg(p.DumpAfter("fold", nullptr)) == "unknown pass 'fold'; passes: verify, dce, regcount, all");
  std::vector<std::string> seen;
  std::vector<size_t> sizes;
  REQUIRE(Msg(p.DumpAfter("dce", [&](std::string_view pass, const ir::Kernel& k) {
            seen.emplace_back(pass);
            sizes.push_back(k.body.size());
          })) == "OK");
  ir::Kernel k = StraightLine();
  const size_t before = k.body.size();
  REQUIRE(Msg(p.Run(k)) == "OK");
  REQUIRE(seen == std::vector<std::string>{"dce"});
  REQUIRE(sizes == std::vector<size_t>{before - 4});
  REQUIRE(k.stats.has_value());
  REQUIRE(k.stats->instructions == 6);

  seen.clear();
  passes::Pipeline all = Recording("all", seen);
  ir::Kernel again = Loop();
  REQUIRE(Msg(all.Run(again)) == "OK");
  REQUIRE(seen == std::vector<std::string>{"verify", "dce", "regcount"});
}

TEST_CASE("the pipeline stops at the first failing pass", "[pipeline]") {
  std::vector<std::string> seen;
  passes::Pipeline p = Recording("all", seen);
  testing::HandKernel h("broken");
  h.Reg(ir::ScalarType::kU32);
  h.MovImm(ir::Reg{0}, ir::ScalarType::kU32, 1);
  REQUIRE(Msg(p.Run(h.kernel())) ==
          "kernel broken: instruction 0: mov.u32 %0, 1: the body falls off its end: the last instruction must be ret, "
          "exit or an unconditional bra");
  REQUIRE(seen.empty());
  REQUIRE(h.kernel().body.size() == 1);
  REQUIRE_FALSE(h.kernel().stats.has_value());
}

}  // namespace
}  // namespace ptxforge
