// Tests of the passes: dead-register removal, register counting and the pipeline.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "builder/kernel_builder.h"
#include "emit/ir_printer.h"
#include "ir/cfg.h"
#include "ir/register_numbering.h"
#include "kernels/registry.h"
#include "passes/dead_register_removal.h"
#include "passes/loops.h"
#include "passes/pass.h"
#include "passes/register_count.h"
#include "passes/verifier.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::StateSpace;
using testing::Finished;
using testing::Msg;

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
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %1:u64 = ld.param.u64 [out]  // out\n"
          "  %2:u64 = cvta.to.global.u64 %1\n"
          "  %4:u32 = mov.u32 0  // kept mutable\n"
          "  %5:u32 = mov.u32 0  // i mutable\n"
          "$L0_loop:\n"
          "  %6:pred = setp.ge.u32 %5, %0\n"
          "  @%6 bra $L1_endloop\n"
          "  %8:u32 = add.u32 %4, 2\n"
          "  %4:u32 = mov.u32 %8  // kept mutable\n"
          "  %9:u32 = add.u32 %5, 1\n"
          "  %5:u32 = mov.u32 %9  // i mutable\n"
          "  bra $L0_loop\n"
          "$L1_endloop:\n"
          "  st.global.u32 [%2], %4\n"
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

// Without the optimizer (its passes have their own tests in optimizer_test),
// with register counting.
passes::PipelineOptions Counting() {
  passes::PipelineOptions o = passes::PipelineOptions::None();
  o.count_registers = true;
  return o;
}

// The pipeline of Counting(), recording the name of each pass `dump_after` selects.
passes::Pipeline Recording(std::string_view dump_after, std::vector<std::string>& seen) {
  passes::Pipeline p = passes::Pipeline::Standard(Counting());
  REQUIRE(Msg(p.DumpAfter(dump_after, [&seen](std::string_view pass, const ir::Kernel&) { seen.emplace_back(pass); })) ==
          "OK");
  return p;
}

// Register counting as it was before the sparse sets and per-class counters:
// dense sets per block and a copy of the live set at every instruction,
// counted by scanning it. CountRegisters must give exactly these numbers.
ir::KernelStats ReferenceCountRegisters(const ir::Kernel& kernel) {
  auto units = [](ir::RegClass c) {
    return c == ir::RegClass::kPred ? 0 : (c == ir::RegClass::kB64 || c == ir::RegClass::kF64) ? 2 : 1;
  };
  ir::KernelStats stats;
  stats.regs_per_class = ir::RegisterNumbering::Compute(kernel).count;
  for (const ir::Instruction& inst : kernel.body) stats.instructions += !inst.info().has(ir::kPseudo);  // labels and pragmas are not instructions
  const size_t nregs = kernel.regs.size();
  std::vector<ir::RegClass> cls(nregs);
  for (size_t r = 0; r < nregs; ++r) cls[r] = ir::RegClassOf(kernel.regs[r].type);
  ir::Cfg cfg = ir::Cfg::Build(kernel);
  const size_t nb = cfg.blocks.size();
  std::vector<ir::BitSet> use(nb, ir::BitSet(nregs)), def(nb, ir::BitSet(nregs)), live_in(nb, ir::BitSet(nregs)),
      live_out(nb, ir::BitSet(nregs));
  for (size_t b = 0; b < nb; ++b) {
    for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
      const ir::Instruction& inst = kernel.body[i];
      ir::ForEachUse(inst, [&](ir::Reg r) {
        if (r.id < nregs && !def[b].Test(r.id)) use[b].Set(r.id);
      });
      if (!inst.guarded()) {
        for (ir::Reg d : inst.dsts) def[b].Set(d.id);
      }
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t bi = nb; bi-- > 0;) {
      ir::BitSet out(nregs);
      for (uint32_t s : cfg.blocks[bi].succs) out.UnionWith(live_in[s]);
      ir::BitSet in = out;
      def[bi].ForEach([&](size_t r) { in.Reset(r); });
      in.UnionWith(use[bi]);
      live_out[bi] = std::move(out);
      if (!(in == live_in[bi])) {
        live_in[bi] = std::move(in);
        changed = true;
      }
    }
  }
  std::array<uint32_t, ir::kNumRegClasses> per_class{};
  auto measure = [&](const ir::BitSet& live) {
    std::array<uint32_t, ir::kNumRegClasses> counts{};
    live.ForEach([&](size_t r) { counts[static_cast<int>(cls[r])]++; });
    uint32_t u = 0;
    for (int c = 0; c < ir::kNumRegClasses; ++c) {
      per_class[c] = std::max(per_class[c], counts[c]);
      u += counts[c] * units(static_cast<ir::RegClass>(c));
    }
    stats.max_live = std::max(stats.max_live, u);
  };
  for (size_t b = 0; b < nb; ++b) {
    ir::BitSet live = live_out[b];
    for (uint32_t i = cfg.blocks[b].end; i-- > cfg.blocks[b].begin;) {
      const ir::Instruction& inst = kernel.body[i];
      ir::BitSet at = live;
      for (ir::Reg d : inst.dsts) at.Set(d.id);
      measure(at);
      if (!inst.guarded()) {
        for (ir::Reg d : inst.dsts) live.Reset(d.id);
      }
      ir::ForEachUse(inst, [&](ir::Reg r) {
        if (r.id < nregs) live.Set(r.id);
      });
    }
    measure(live);
  }
  stats.max_live_per_class = per_class;
  return stats;
}

void RequireSameStats(const ir::KernelStats& got, const ir::KernelStats& want) {
  REQUIRE(got.regs_per_class == want.regs_per_class);
  REQUIRE(got.max_live_per_class == want.max_live_per_class);
  REQUIRE(got.max_live == want.max_live);
  REQUIRE(got.instructions == want.instructions);
}

// CountRegisters with its size-chosen live-in sets, and with each kind
// forced (small kernels pick dense rows, large ones with many blocks the
// sparse pool): all three must give the reference's numbers.
void RequireReferenceStats(const ir::Kernel& kernel) {
  const ir::KernelStats want = ReferenceCountRegisters(kernel);
  RequireSameStats(passes::CountRegisters(kernel), want);
  RequireSameStats(passes::CountRegisters(kernel, passes::LiveInSets::kDense), want);
  RequireSameStats(passes::CountRegisters(kernel, passes::LiveInSets::kSparse), want);
}

// Dead-register removal as it was before the backward sweep: a worklist from
// the instructions with effects. RemoveDeadRegisters must keep exactly these.
std::vector<bool> ReferenceLiveInstructions(const ir::Kernel& kernel) {
  const auto& body = kernel.body;
  std::vector<std::vector<uint32_t>> defs(kernel.regs.size());
  for (uint32_t i = 0; i < body.size(); ++i) {
    for (ir::Reg d : body[i].dsts) defs[d.id].push_back(i);
  }
  std::vector<bool> live(body.size(), false), reg_live(kernel.regs.size(), false);
  std::vector<uint32_t> work;
  for (uint32_t i = 0; i < body.size(); ++i) {
    if (!body[i].info().has(ir::kPure) || body[i].info().has(ir::kPseudo)) {
      live[i] = true;
      work.push_back(i);
    }
  }
  while (!work.empty()) {
    uint32_t i = work.back();
    work.pop_back();
    ir::ForEachUse(body[i], [&](ir::Reg r) {
      if (reg_live[r.id]) return;
      reg_live[r.id] = true;
      for (uint32_t j : defs[r.id]) {
        if (!live[j]) {
          live[j] = true;
          work.push_back(j);
        }
      }
    });
  }
  return live;
}

void RequireSameDce(ir::Kernel kernel) {
  std::vector<bool> live = ReferenceLiveInstructions(kernel);
  ir::Kernel expected = kernel;
  expected.body.clear();
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i]) expected.body.push_back(kernel.body[i]);
  }
  size_t removed = passes::RemoveDeadRegisters(kernel);
  REQUIRE(removed == live.size() - expected.body.size());
  REQUIRE(emit::PrintIr(kernel) == emit::PrintIr(expected));
}

TEST_CASE("dead-register removal keeps what the worklist reference keeps", "[dce]") {
  RequireSameDce(StraightLine());
  RequireSameDce(Loop());
  int kernels_checked = 0;
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    absl::StatusOr<kernels::Config> config = family->MakeConfig();
    REQUIRE(Msg(config) == "OK");
    absl::StatusOr<ir::Kernel> built = family->Build(*config, ir::Target::kSm80);
    REQUIRE(Msg(built) == "OK");
    INFO(family->name());
    RequireSameDce(*std::move(built));
    ++kernels_checked;
  }
  REQUIRE(kernels_checked >= 10);
}

TEST_CASE("register counting gives the dense reference's numbers on every registry kernel", "[regcount]") {
  int kernels_checked = 0;
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    for (ir::Target target : {ir::Target::kSm80, ir::Target::kSm90}) {
      absl::StatusOr<kernels::Config> config = family->MakeConfig();
      REQUIRE(Msg(config) == "OK");
      absl::StatusOr<ir::Kernel> built = family->Build(*config, target);
      if (!built.ok()) continue;  // a family that does not support this target
      ir::Kernel kernel = *std::move(built);
      INFO(family->name() << " on " << ir::TargetName(target));
      // Before and after dead-register removal, as the pipeline sees it.
      RequireReferenceStats(kernel);
      passes::RemoveDeadRegisters(kernel);
      RequireReferenceStats(kernel);
      ++kernels_checked;
    }
  }
  REQUIRE(kernels_checked >= 10);
}

TEST_CASE("register counting gives the dense reference's numbers on guarded and looping code", "[regcount]") {
  RequireReferenceStats(StraightLine());
  RequireReferenceStats(Loop());
  // Guarded definitions (they do not kill), a nested loop, and f64/b64/pred
  // registers live across the back edges.
  KernelBuilder b("nested");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<F64> acc = b.Mutable<F64>(0.0, "acc");
  Var<U64> ptr = b.Mutable<U64>(out, "ptr");
  b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) {
    Value<Pred> odd = b.Ne(b.And(i, 1u), 0u);
    b.ForRange<U32>(0u, i, 1u, [&](Value<U32> j) {
      b.If(odd, [&] { b.Assign(acc, b.Add<F64>(acc, 1.5)); });
      b.Assign(ptr, b.Add<U64>(ptr, b.Cvt<U64>(j)));
      b.Assign(ptr, b.Add<U64>(ptr, 8u));
    });
  });
  b.Store(StateSpace::kGlobal, Value<U64>(ptr), Value<F64>(acc));
  ir::Kernel k = Finished(b);
  RequireReferenceStats(k);
}

// Loop-free code with a block the entry cannot reach (after an exit inside
// an if) and a guarded definition (the if around one assignment).
ir::Kernel UnreachableAfterExit() {
  KernelBuilder b("unreachable");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  Var<F64> f = b.Mutable<F64>(0.0, "f");
  b.If(b.Ne(b.And(n, 1u), 0u), [&] { b.Assign(f, b.Add<F64>(f, 1.5)); });
  b.If(b.Eq(n, 7u), [&] {
    b.Exit();
    b.Assign(acc, b.Add<U32>(acc, 1u));
  });
  b.Assign(acc, b.Add<U32>(acc, 4u));
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  b.Store(StateSpace::kGlobal, Address(out, 8), Value<F64>(f));
  return Finished(b);
}

// A branch to an earlier block without a cycle: block 0 branches to block 2
// or falls into block 1, and block 2 branches back to block 1, which exits.
ir::Kernel BackwardWithoutLoop() {
  KernelBuilder b("zigzag");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  ir::Label one = b.NewLabel("one");
  ir::Label two = b.NewLabel("two");
  b.BraIf(b.Lt(n, 3u), two);
  b.Bind(one);
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  b.Exit();
  b.Bind(two);
  b.Assign(acc, b.Add<U32>(acc, n));
  b.Bra(one);
  return Finished(b);
}

// The label bound at the head of a loop's header block.
uint32_t HeaderLabel(const ir::Kernel& k, const passes::LoopForest& forest, const passes::Loop& loop) {
  return k.body[forest.cfg.blocks[loop.header].begin].srcs[0].id;
}

TEST_CASE("loops come innermost first nest by nest in body order", "[loops]") {
  // Two nests of two loops: each inner loop comes right before the loop
  // around it, and the first nest before the second (the loop passes then
  // finish a nest while it is in the caches).
  KernelBuilder b("nests");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  for (int nest = 0; nest < 2; ++nest) {
    b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) {
      b.ForRange<U32>(0u, n, 1u, [&](Value<U32> j) { b.Assign(acc, b.Add<U32>(acc, b.Mul<U32>(i, j))); });
    });
  }
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  const ir::Kernel k = Finished(b);
  const passes::LoopForest forest = passes::FindLoops(k);
  REQUIRE(forest.loops.size() == 4);
  std::vector<size_t> sizes;
  std::vector<uint32_t> headers;
  for (const passes::Loop& loop : forest.loops) {
    sizes.push_back(loop.blocks.size());
    headers.push_back(HeaderLabel(k, forest, loop));
  }
  // Labels are made loop, endloop per ForRange: outer 0, inner 2; outer 4, inner 6.
  CHECK(headers == std::vector<uint32_t>{2, 0, 6, 4});
  CHECK(sizes == std::vector<size_t>{2, 5, 2, 5});
}

TEST_CASE("a loop that ends in the block that ends the loop around it comes first", "[loops]") {
  // Block `inner` branches back to itself and falls into `outer`, which the
  // entry jumps to first: `outer` dominates `inner`, so that fall-through
  // is the outer loop's back edge. Both loops end in block `inner`; the
  // smaller, nested one comes first.
  KernelBuilder b("shared_latch");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  ir::Label inner = b.NewLabel("inner");
  ir::Label outer = b.NewLabel("outer");
  ir::Label done = b.NewLabel("done");
  b.Bra(outer);
  b.Bind(inner);
  b.Assign(acc, b.Add<U32>(acc, 1u));
  b.BraIf(b.Lt(acc, n), inner);
  b.Bind(outer);
  b.Assign(acc, b.Add<U32>(acc, 2u));
  b.BraIf(b.Ge(acc, b.Mul<U32>(n, 4u)), done);
  b.Bra(inner);
  b.Bind(done);
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  const ir::Kernel k = Finished(b);
  const passes::LoopForest forest = passes::FindLoops(k);
  REQUIRE(forest.loops.size() == 2);
  CHECK(HeaderLabel(k, forest, forest.loops[0]) == inner.id);
  CHECK(forest.loops[0].blocks.size() == 1);
  CHECK(HeaderLabel(k, forest, forest.loops[1]) == outer.id);
  CHECK(forest.loops[1].blocks.size() == 3);
  CHECK(forest.loops[0].blocks.back() == forest.loops[1].blocks.back());  // the same last block
}

TEST_CASE("a branch back without a cycle is not a loop and takes the general count", "[regcount][loops]") {
  const ir::Kernel k = BackwardWithoutLoop();
  const ir::Cfg cfg = ir::Cfg::Build(k);
  REQUIRE(cfg.blocks.size() == 3);
  REQUIRE(ir::HasBackwardEdge(cfg));
  REQUIRE(passes::FindLoops(k).loops.empty());
  REQUIRE(ir::ImmediateDominators(cfg) == std::vector<uint32_t>{0, 0, 0});
  RequireReferenceStats(k);
}

TEST_CASE("register counting without loops: unreachable code and guarded definitions and live-in lists over their budget", "[regcount]") {
  // Without a backward edge the count is one walk of the blocks, last to
  // first, keeping the live-in registers of each branch target in a list.
  const ir::Kernel unreachable = UnreachableAfterExit();
  const ir::Cfg cfg = ir::Cfg::Build(unreachable);
  REQUIRE_FALSE(ir::HasBackwardEdge(cfg));
  REQUIRE(ir::ReversePostOrder(cfg).size() < cfg.blocks.size());
  bool guarded = false;
  for (const ir::Instruction& inst : unreachable.body) guarded |= inst.guarded();
  REQUIRE(guarded);
  RequireReferenceStats(unreachable);

  // 400 values live across 100 if-statements: the lists would hold about
  // 40k registers, over the budget of 8 per instruction plus 8192, so the
  // count falls back to the dataflow (with the same numbers).
  KernelBuilder b("wide");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  std::vector<Value<U32>> values;
  for (uint32_t k = 0; k < 400; ++k) values.push_back(b.Add(n, k));
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  for (uint32_t k = 0; k < 100; ++k) {
    b.If(b.Lt(n, k), [&] { b.Assign(acc, b.Add<U32>(acc, k)); });
  }
  for (Value<U32> v : values) b.Assign(acc, b.Add<U32>(acc, v));
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  const ir::Kernel wide = Finished(b);
  REQUIRE_FALSE(ir::HasBackwardEdge(ir::Cfg::Build(wide)));
  const ir::KernelStats want = ReferenceCountRegisters(wide);
  CHECK(want.max_live > 400);
  RequireReferenceStats(wide);
}

// Immediate dominators from the definition: Dom(entry) = {entry}, Dom(b) =
// {b} and the intersection of the reachable predecessors' sets, iterated to
// a fixed point; b's immediate dominator is its closest strict dominator
// (the one with the most dominators of its own). UINT32_MAX where the entry
// does not reach.
std::vector<uint32_t> ReferenceIdom(const ir::Cfg& cfg) {
  const size_t nb = cfg.blocks.size();
  std::vector<bool> reachable(nb, false);
  for (uint32_t b : ir::ReversePostOrder(cfg)) reachable[b] = true;
  std::vector<ir::BitSet> dom(nb, ir::BitSet(nb, true));
  if (nb > 0) {
    dom[0] = ir::BitSet(nb);
    dom[0].Set(0);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 1; b < nb; ++b) {
      if (!reachable[b]) continue;
      ir::BitSet d(nb, true);
      for (uint32_t p : cfg.preds(b)) {
        if (reachable[p]) d.IntersectWith(dom[p]);
      }
      d.Set(b);
      if (!(d == dom[b])) {
        dom[b] = d;
        changed = true;
      }
    }
  }
  std::vector<uint32_t> idom(nb, UINT32_MAX);
  if (nb > 0) idom[0] = 0;
  for (size_t b = 1; b < nb; ++b) {
    if (!reachable[b]) continue;
    size_t best = 0;
    uint32_t closest = UINT32_MAX;
    dom[b].ForEach([&](size_t d) {
      if (d == b) return;
      size_t depth = 0;
      dom[d].ForEach([&](size_t) { ++depth; });
      if (closest == UINT32_MAX || depth > best) best = depth, closest = static_cast<uint32_t>(d);
    });
    idom[b] = closest;
  }
  return idom;
}

// The graph as text: one line per block, "b[begin,end) -> succs <- preds".
std::string CfgText(const ir::Cfg& cfg) {
  std::string text;
  for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
    const ir::BasicBlock& bb = cfg.blocks[b];
    text += "b" + std::to_string(b) + "[" + std::to_string(bb.begin) + "," + std::to_string(bb.end) + ") ->";
    for (uint32_t s : bb.succs) text += " " + std::to_string(s);
    text += " <-";
    for (uint32_t p : cfg.preds(b)) text += " " + std::to_string(p);
    text += "\n";
  }
  return text;
}

TEST_CASE("the control-flow graph: blocks, successors in the block, predecessors in one list", "[cfg]") {
  const ir::Cfg straight = ir::Cfg::Build(StraightLine());
  CHECK(CfgText(straight) == "b0[0,10) -> <-\n");
  CHECK(straight.pred_list.empty());
  CHECK_FALSE(ir::HasBackwardEdge(straight));
  // The loop: the test at its head branches out (and falls into the body),
  // the body's end branches back to the head.
  const ir::Kernel loop = Loop();
  INFO(emit::PrintIr(loop));
  const ir::Cfg cfg = ir::Cfg::Build(loop);
  CHECK(CfgText(cfg) == "b0[0,6) -> 1 <-\n"
                        "b1[6,9) -> 3 2 <- 0 2\n"
                        "b2[9,16) -> 1 <- 1\n"
                        "b3[16,19) -> <- 1\n");
  CHECK(cfg.pred_list == std::vector<uint32_t>{0, 2, 1, 1});
  CHECK(ir::HasBackwardEdge(cfg));
  // A guarded branch to the block right after it (one successor, not the
  // same one twice) and a block branching to itself (its own predecessor).
  KernelBuilder b("edges");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> i = b.Mutable<U32>(0u, "i");
  ir::Label next = b.NewLabel("next");
  ir::Label self = b.NewLabel("self");
  b.BraIf(b.Lt(n, 3u), next);
  b.Bind(next);
  b.Bind(self);
  b.Assign(i, b.Add<U32>(i, 1u));
  b.BraIf(b.Lt(Value<U32>(i), n), self);
  b.Store(StateSpace::kGlobal, out, Value<U32>(i));
  const ir::Kernel edges = Finished(b);
  INFO(emit::PrintIr(edges));
  const ir::Cfg ecfg = ir::Cfg::Build(edges);
  CHECK(CfgText(ecfg) == "b0[0,6) -> 1 <-\n"
                         "b1[6,7) -> 2 <- 0\n"
                         "b2[7,12) -> 2 3 <- 1 2\n"
                         "b3[12,14) -> <- 2\n");
  CHECK(ir::HasBackwardEdge(ecfg));
}

TEST_CASE("immediate dominators match the definition, with and without loops", "[dominators]") {
  // Graphs without a backward edge take a sweep in block order, the others
  // Cooper-Harvey-Kennedy over reverse post order: both must give the
  // definition's answer.
  int forward = 0, backward = 0;
  auto check = [&](const ir::Kernel& kernel) {
    const ir::Cfg cfg = ir::Cfg::Build(kernel);
    bool has_backward = false;
    for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
      for (uint32_t s : cfg.blocks[b].succs) has_backward |= s <= b;
    }
    ++(has_backward ? backward : forward);
    // The flag kept in the graph, and each block's predecessors: the
    // blocks that list it as a successor, in increasing order.
    REQUIRE(ir::HasBackwardEdge(cfg) == has_backward);
    for (uint32_t b = 0; b < cfg.blocks.size(); ++b) {
      // Two successors are two different blocks (a branch to the next block is one edge).
      REQUIRE((cfg.blocks[b].succs.size() < 2 || cfg.blocks[b].succs[0] != cfg.blocks[b].succs[1]));
      std::vector<uint32_t> preds;
      for (uint32_t p = 0; p < cfg.blocks.size(); ++p) {
        for (uint32_t s : cfg.blocks[p].succs) {
          if (s == b) preds.push_back(p);
        }
      }
      const std::span<const uint32_t> kept = cfg.preds(b);
      REQUIRE(std::vector<uint32_t>(kept.begin(), kept.end()) == preds);
    }
    REQUIRE(ir::ImmediateDominators(cfg) == ReferenceIdom(cfg));
  };
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    absl::StatusOr<kernels::Config> config = family->MakeConfig();
    REQUIRE(Msg(config) == "OK");
    absl::StatusOr<ir::Kernel> built = family->Build(*config, ir::Target::kSm80);
    if (!built.ok()) continue;
    INFO(family->name());
    check(*built);
  }
  check(StraightLine());
  check(Loop());
  // Nested and consecutive ifs, and an exit inside an if.
  KernelBuilder b("ifs");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  b.If(b.Lt(n, 10u), [&] {
    b.Assign(acc, b.Add<U32>(acc, 1u));
    b.If(b.Lt(n, 5u), [&] { b.Assign(acc, b.Add<U32>(acc, 2u)); });
    b.Assign(acc, b.Add<U32>(acc, 3u));
  });
  b.If(b.Eq(n, 7u), [&] { b.Exit(); });
  b.Assign(acc, b.Add<U32>(acc, 4u));
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  check(Finished(b));
  check(UnreachableAfterExit());
  check(BackwardWithoutLoop());
  CHECK(forward >= 3);
  CHECK(backward >= 3);
}

TEST_CASE("the pipeline counts registers only when asked to", "[pipeline][regcount]") {
  // By default nothing fills kernel.stats: no pass on the way to PTX reads it.
  ir::Kernel plain = StraightLine();
  REQUIRE(Msg(passes::Pipeline::Standard().Run(plain)) == "OK");
  REQUIRE_FALSE(plain.stats.has_value());
  passes::PipelineOptions counting;
  counting.count_registers = true;
  ir::Kernel counted = StraightLine();
  REQUIRE(Msg(passes::Pipeline::Standard(counting).Run(counted)) == "OK");
  REQUIRE(counted.stats.has_value());
  // The same numbers as counting the uncounted kernel afterwards, which the
  // pipeline left otherwise the same.
  REQUIRE(emit::PrintIr(counted) == emit::PrintIr(plain));
  const ir::KernelStats after = passes::CountRegisters(plain);
  CHECK(counted.stats->instructions == after.instructions);
  CHECK(counted.stats->regs_per_class == after.regs_per_class);
  CHECK(counted.stats->max_live == after.max_live);
  CHECK(counted.stats->max_live_per_class == after.max_live_per_class);
  CHECK(counted.stats->instructions == 6);
}

TEST_CASE("the pipeline dumps after the chosen pass", "[pipeline]") {
  passes::Pipeline p = passes::Pipeline::Standard(Counting());
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
