// Tests of KernelBuilder: the IR it records and every error it reports.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "builder/kernel_builder.h"
#include "emit/ir_printer.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::ScalarType;
using ir::StateSpace;
using testing::Msg;

// The prefix of a builder error made by a call on `line` of this file.
std::string At(int line, std::string_view kernel = "k") {
  return StrCat("kernel ", kernel, ": builder_test.cc:", line, ": ");
}

TEST_CASE("the builder records typed calls with PTX's required defaults", "[builder]") {
  KernelBuilder b("defaults", ir::Target::kSm80);
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<F32> x = b.Param<F32>("x");
  Value<U32> n = b.Param<U32>("n");
  Value<F16> h = b.Const<F16>(1.5f);
  Value<F16> h2 = b.Add<F16>(h, 2.0f);  // f16 immediates go through a register
  Value<F32> f = b.Fma(x, x, 1.0f);
  Value<F32> q = b.Div(f, x);
  Value<F32> qa = b.Div(q, x, FloatOpts{.mode = ir::Mode::kApprox});
  Value<U32> m = b.Mul(n, 3u);
  Value<U64> w = b.MulWide(m, n);
  Value<S32> s = b.Cvt<S32>(qa);
  Value<F32> back = b.Cvt<F32>(s);
  Value<F16> narrow = b.Cvt<F16>(back);
  Value<F64> wide = b.Cvt<F64>(b.Cvt<F32>(h2));
  Value<Pred> p = b.Cvt<Pred>(m);
  Value<U32> one = b.Cvt<U32>(p);
  Value<F32> same = b.Cvt<F32>(back);  // no instruction
  Value<U32> bits = b.Bitcast<U32>(same);
  Value<U32> sel = b.Select(p, bits, one);
  b.Store(StateSpace::kGlobal, out, b.Add(sel, b.ShflXor(sel, 1)));
  b.Store(StateSpace::kGlobal, Address(out, 8), w);
  b.Store(StateSpace::kGlobal, Address(out, 16), wide);
  b.Store(StateSpace::kGlobal, Address(out, 24), narrow);
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  REQUIRE(emit::PrintIr(*k) ==
          "kernel defaults target sm_80\n"
          "  param u64 out\n"
          "  param f32 x\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %1:u32 = mul.lo.u32 %0, 3\n"
          "  %2:u64 = mul.wide.u32 %1, %0\n"
          "  %3:f16 = mov.b16 0x3E00\n"
          "  %4:f16 = mov.b16 0x4000\n"
          "  %5:f16 = add.f16 %3, %4\n"
          "  %6:f32 = cvt.f32.f16 %5\n"
          "  %7:f64 = cvt.f64.f32 %6\n"
          "  %8:f32 = ld.param.f32 [x]  // x\n"
          "  %9:f32 = fma.rn.f32 %8, %8, 0f3F800000\n"
          "  %10:f32 = div.rn.f32 %9, %8\n"
          "  %11:f32 = div.approx.f32 %10, %8\n"
          "  %12:s32 = cvt.rzi.s32.f32 %11\n"
          "  %13:f32 = cvt.rn.f32.s32 %12\n"
          "  %14:f16 = cvt.rn.f16.f32 %13\n"
          "  %15:u32 = mov.b32 %13\n"
          "  %16:pred = setp.ne.u32 %1, 0\n"
          "  %17:u32 = selp.u32 1, 0, %16\n"
          "  %18:u32 = selp.u32 %15, %17, %16\n"
          "  %19:u32 = shfl.sync.bfly.b32 %18, 1, 31, 0xFFFFFFFF\n"
          "  %20:u32 = add.u32 %18, %19\n"
          "  %21:u64 = ld.param.u64 [out]  // out\n"
          "  %22:u64 = cvta.to.global.u64 %21\n"
          "  st.global.u32 [%22], %20\n"
          "  st.global.u64 [%22+8], %2\n"
          "  st.global.f64 [%22+16], %7\n"
          "  st.global.b16 [%22+24], %14\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("structured control flow, mutable registers and launch bounds", "[builder]") {
  KernelBuilder b("flow", ir::Target::kSm80);
  b.SetMaxThreads(128, 2);
  b.SetMinBlocksPerSM(3);
  b.SetMaxRegisters(40);
  Symbol<F32> tile = b.Shared<F32>("tile", 64, 16);
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  b.ForRange<U32>(0u, n, 2u, [&](Value<U32> i) { b.Assign(acc, b.Add<U32>(acc, i)); });
  b.IfElse(
      b.Gt(acc, 10u), [&] { b.Store(StateSpace::kShared, tile, b.Const<F32>(1.0f)); },
      [&] { b.BarSync(1, 64); });
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  REQUIRE(emit::PrintIr(*k) ==
          "kernel flow target sm_80\n"
          "  param u32 n\n"
          "  shared f32 tile[64] align 16\n"
          "  maxntid 128 2 1\n"
          "  minnctapersm 3\n"
          "  maxnreg 40\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %1:u32 = mov.u32 0  // acc mutable\n"
          "  %2:u32 = mov.u32 0  // i mutable\n"
          "$L0_loop:\n"
          "  %3:pred = setp.ge.u32 %2, %0\n"
          "  @%3 bra $L1_endloop\n"
          "  %4:u32 = add.u32 %1, %2\n"
          "  %1:u32 = mov.u32 %4  // acc mutable\n"
          "  %5:u32 = add.u32 %2, 2\n"
          "  %2:u32 = mov.u32 %5  // i mutable\n"
          "  bra $L0_loop\n"
          "$L1_endloop:\n"
          "  %6:pred = setp.gt.u32 %1, 10\n"
          "  @!%6 bra $L2_else\n"
          "  %7:f32 = mov.f32 0f3F800000\n"
          "  st.shared.f32 [tile], %7\n"
          "  bra $L3_endif\n"
          "$L2_else:\n"
          "  bar.sync 1, 64\n"
          "$L3_endif:\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("predicate constants and predicate logic", "[builder]") {
  KernelBuilder b("preds");
  Value<Pred> yes = b.Const<Pred>(true);
  Var<Pred> flag = b.Mutable<Pred>(false, "flag");
  Value<Pred> no = b.Not(yes);
  b.Assign(flag, b.Xor(b.And(yes, flag), no));
  b.If(flag, [&] { b.Exit(); });
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  REQUIRE(emit::PrintIr(*k) ==
          "kernel preds target sm_80\n"
          "{\n"
          "  %0:pred = mov.pred 1\n"
          "  %1:pred = mov.pred 0  // flag mutable\n"
          "  %2:pred = and.pred %0, %1\n"
          "  %3:pred = not.pred %0\n"
          "  %4:pred = xor.pred %2, %3\n"
          "  %1:pred = mov.pred %4  // flag mutable\n"
          "  @!%1 bra $L0_endif\n"
          "  exit\n"
          "$L0_endif:\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("Finish() adds ret only when the body can fall off its end", "[builder]") {
  {
    KernelBuilder b("ends_in_exit");
    b.Exit();
    absl::StatusOr<ir::Kernel> k = b.Finish();
    REQUIRE(Msg(k) == "OK");
    REQUIRE(k->body.size() == 1);
    REQUIRE(k->body[0].op == ir::Opcode::kExit);
  }
  {
    KernelBuilder b("empty");
    absl::StatusOr<ir::Kernel> k = b.Finish();
    REQUIRE(Msg(k) == "OK");
    REQUIRE(emit::PrintIr(*k) == "kernel empty target sm_80\n{\n  ret\n}\n");
  }
  {
    KernelBuilder b("spin");
    ir::Label top = b.NewLabel("top");
    b.Bind(top);
    b.Bra(top);
    absl::StatusOr<ir::Kernel> k = b.Finish();
    REQUIRE(Msg(k) == "OK");
    REQUIRE(emit::PrintIr(*k) == "kernel spin target sm_80\n{\n$L0_top:\n  bra $L0_top\n}\n");
  }
}

TEST_CASE("Finish() runs the verifier", "[builder]") {
  KernelBuilder b("late", ir::Target::kSm80);
  Value<BF16> x = b.Param<BF16>("x");
  const int line = __LINE__; b.Add(x, x);
  REQUIRE(Msg(b.status()) == "OK");  // the builder itself does not check targets
  REQUIRE(Msg(b.Finish()) == At(line, "late") +
                                 "add.bf16 %1, %0, %0: add.bf16 requires sm_90 or newer; the kernel targets sm_80");
}

TEST_CASE("a bad kernel name is reported", "[builder]") {
  const int line = __LINE__; KernelBuilder b("1bad");
  REQUIRE(Msg(b.Finish()) == At(line, "1bad") +
                                 "kernel name '1bad' is not a PTX identifier (a letter or '_', then letters, "
                                 "digits or '_')");
}

TEST_CASE("Finish() twice", "[builder]") {
  KernelBuilder b("k");
  REQUIRE(Msg(b.Finish()) == "OK");
  absl::StatusOr<ir::Kernel> again = b.Finish();
  REQUIRE(again.status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(Msg(again) == "kernel k: Finish() called twice");
}

TEST_CASE("using the builder after Finish() is an error that names the kernel", "[builder]") {
  KernelBuilder b("k");
  REQUIRE(Msg(b.Finish()) == "OK");
  const int line = __LINE__; b.Ret();
  REQUIRE(Msg(b.status()) == At(line) + "the builder was used after Finish()");
}

TEST_CASE("the first error sticks", "[builder]") {
  KernelBuilder b("k");
  const int line = __LINE__; b.SetMinBlocksPerSM(0);
  b.BarSync(99);
  b.Membar(ir::Scope::kNone);
  REQUIRE(Msg(b.status()) == At(line) + ".minnctapersm must be positive");
  REQUIRE(Msg(b.Finish()) == At(line) + ".minnctapersm must be positive");
}

// One builder error: `make` performs the failing call and returns its line.
struct ErrorCase {
  std::string expected;
  std::function<int(KernelBuilder&)> make;
};

TEST_CASE("every builder error, with its exact message", "[builder]") {
  const std::string foreign = " (a value, label or variable from another builder, or default-constructed?)";
  const std::string not_reg = " is a default-constructed value (it names no register)";
  const std::string other_builder =
      " is not a register of this builder (a value from another KernelBuilder, or an id made by hand)";
  const std::vector<ErrorCase> cases = {
      {"param name 'a b' is not a PTX identifier", [](KernelBuilder& b) { b.Param<U32>("a b"); return __LINE__; }},
      {"param 'p' cannot be a predicate; pass a u32 and compare it",
       [](KernelBuilder& b) { b.Param<Pred>("p"); return __LINE__; }},
      {"param 'x' is declared twice",
       [](KernelBuilder& b) { b.Param<U32>("x"); b.Param<U64>("x"); return __LINE__; }},
      {"param 't' has the name of a shared variable",
       [](KernelBuilder& b) { b.Shared<F32>("t", 4); b.Param<U64>("t"); return __LINE__; }},
      {"shared variable name '9t' is not a PTX identifier",
       [](KernelBuilder& b) { b.Shared<F32>("9t", 4); return __LINE__; }},
      {"shared variable 'p' cannot hold predicates", [](KernelBuilder& b) { b.Shared<Pred>("p", 4); return __LINE__; }},
      {"shared variable 't' has 0 elements", [](KernelBuilder& b) { b.Shared<F32>("t", 0); return __LINE__; }},
      {"local variable 't': alignment 12 is not a power of two",
       [](KernelBuilder& b) { b.Local<F32>("t", 4, 12); return __LINE__; }},
      {"shared variable 't' is declared twice",
       [](KernelBuilder& b) { b.Local<U32>("t", 4); b.Shared<F32>("t", 4); return __LINE__; }},
      {"dynamic shared memory is declared twice ('a' and 'b')",
       [](KernelBuilder& b) { b.DynamicShared<F32>("a"); b.DynamicShared<U8>("b"); return __LINE__; }},
      {"local variable 'n' has the name of a param",
       [](KernelBuilder& b) { b.Param<U32>("n"); b.Local<U32>("n", 2); return __LINE__; }},
      {".maxntid dimensions must be positive", [](KernelBuilder& b) { b.SetMaxThreads(0); return __LINE__; }},
      {".maxntid 32x32x2 exceeds 1024 threads", [](KernelBuilder& b) { b.SetMaxThreads(32, 32, 2); return __LINE__; }},
      {".reqntid dimensions must be positive", [](KernelBuilder& b) { b.SetRequiredThreads(1, 0); return __LINE__; }},
      {".reqntid 2048x1x1 exceeds 1024 threads", [](KernelBuilder& b) { b.SetRequiredThreads(2048); return __LINE__; }},
      {".minnctapersm must be positive", [](KernelBuilder& b) { b.SetMinBlocksPerSM(0); return __LINE__; }},
      {".maxnreg 0 is not between 1 and 255", [](KernelBuilder& b) { b.SetMaxRegisters(0); return __LINE__; }},
      {".maxnreg 256 is not between 1 and 255", [](KernelBuilder& b) { b.SetMaxRegisters(256); return __LINE__; }},
      {"an operand" + not_reg, [](KernelBuilder& b) { b.Add(Value<U32>(), 1u); return __LINE__; }},
      {"a destination" + other_builder,
       [](KernelBuilder& b) {
         ir::Instruction inst;
         inst.op = ir::Opcode::kActiveMask;
         inst.mods.type = ScalarType::kB32;
         inst.dsts.push_back(ir::Reg{99});
         b.EmitInstruction(inst); return __LINE__;
       }},
      {"an address base" + not_reg,
       [](KernelBuilder& b) { b.Load<F32>(StateSpace::kGlobal, Value<U64>()); return __LINE__; }},
      {"a guard predicate" + not_reg,
       [](KernelBuilder& b) { b.BraIf(Value<Pred>(), b.NewLabel()); return __LINE__; }},
      {"ld.shared.f32: operand 1 names variable 5, which does not exist" + foreign,
       [](KernelBuilder& b) { b.Load<F32>(StateSpace::kShared, Symbol<F32>{5}); return __LINE__; }},
      {"ld.param.u32: operand 1 names param 7, which does not exist" + foreign,
       [](KernelBuilder& b) {
         ir::Modifiers m{.type = ScalarType::kU32, .space = StateSpace::kParam};
         b.Emit(ir::Opcode::kLd, m, ScalarType::kU32, {ir::Operand::AddrParam(7)}); return __LINE__;
       }},
      {"mov.u32: operand 1 names variable 9, which does not exist" + foreign,
       [](KernelBuilder& b) { b.SymbolAddr(Symbol<F32>{9}); return __LINE__; }},
      {"bra: operand 0 names label 4294967295, which does not exist" + foreign,
       [](KernelBuilder& b) { b.Bra(ir::Label{}); return __LINE__; }},
      {"ir::SpecialReg value 200 is out of range",
       [](KernelBuilder& b) {
         auto bad = ir::Operand::Special(static_cast<ir::SpecialReg>(200));
         b.Emit(ir::Opcode::kMov, ir::Modifiers{.type = ScalarType::kU32}, ScalarType::kU32, {bad}); return __LINE__;
       }},
      {"neg.s32: operand 1 is empty" + foreign,
       [](KernelBuilder& b) {
         b.Emit(ir::Opcode::kNeg, ir::Modifiers{.type = ScalarType::kS32}, ScalarType::kS32, {ir::Operand()}); return __LINE__;
       }},
      {"%clock64 is 64-bit; read it with Special64()",
       [](KernelBuilder& b) { b.Special(ir::SpecialReg::kClock64); return __LINE__; }},
      {"%tid.x is 32-bit; read it with Special()",
       [](KernelBuilder& b) { b.Special64(ir::SpecialReg::kTidX); return __LINE__; }},
      {"cvt from pred to f16 is not supported; convert to f32 first",
       [](KernelBuilder& b) { Value<Pred> p = b.Const<Pred>(true); b.Cvt<F16>(p); return __LINE__; }},
      {"a predicate has no bits to reinterpret",
       [](KernelBuilder& b) { Value<Pred> p = b.Const<Pred>(true); b.Bitcast<Pred>(p); return __LINE__; }},
      {".nc applies to loads only",
       [](KernelBuilder& b) {
         Value<U64> a = b.Param<U64>("a");
         b.Store(StateSpace::kGlobal, a, a, MemOpts{.nc = true}); return __LINE__;
       }},
      {"Bind() of a label that is not of this kernel", [](KernelBuilder& b) { b.Bind(ir::Label{3}); return __LINE__; }},
      {"NoUnroll() must come right after Bind() of a loop header's label",
       [](KernelBuilder& b) { b.NoUnroll(); return __LINE__; }},
      {"NoUnroll() must come right after Bind() of a loop header's label",
       [](KernelBuilder& b) { b.Bind(b.NewLabel()); b.TidX(); b.NoUnroll(); return __LINE__; }},
      {"label 0 (done) is bound twice",
       [](KernelBuilder& b) { ir::Label l = b.NewLabel("done"); b.Bind(l); b.Bind(l); return __LINE__; }},
      {"label 1 is bound twice",
       [](KernelBuilder& b) { b.NewLabel(); ir::Label l = b.NewLabel(); b.Bind(l); b.Bind(l); return __LINE__; }},
      {"barrier 16 is out of range (0..15)", [](KernelBuilder& b) { b.BarSync(16); return __LINE__; }},
      {"barrier 20 is out of range (0..15)", [](KernelBuilder& b) { b.BarSync(20, 64); return __LINE__; }},
      {"bar.sync thread count 48 must be a positive multiple of 32",
       [](KernelBuilder& b) { b.BarSync(0, 48); return __LINE__; }},
      {"bar.sync thread count 0 must be a positive multiple of 32",
       [](KernelBuilder& b) { b.BarSync(0, 0); return __LINE__; }},
      {"membar needs a scope (cta, gpu or sys)", [](KernelBuilder& b) { b.Membar(ir::Scope::kNone); return __LINE__; }},
      {"raw PTX refers to {2} but declares only 2 registers (1 outputs, 1 inputs)",
       [](KernelBuilder& b) {
         Value<U32> in = b.Const<U32>(1u);
         Value<U32> out = b.Undefined<U32>();
         b.RawPtx("add.u32 {0}, {1}, {2};", {out}, {in}); return __LINE__;
       }},
      {"raw PTX declares register {1} but its text does not use it",
       [](KernelBuilder& b) {
         Value<U32> in = b.Const<U32>(1u);
         Value<U32> out = b.Undefined<U32>();
         b.RawPtx("mov.u32 {0}, 7;", {out}, {in}); return __LINE__;
       }},
      {"raw PTX names register '%f1' directly; pass it as an input or output and write {N}",
       [](KernelBuilder& b) {
         Value<F32> out = b.Undefined<F32>();
         b.RawPtx("mov.f32 {0}, %f1;", {out}, {}); return __LINE__;
       }},
      // Issue 11 item 3: ptxas refuses .maxntid together with .reqntid.
      {".maxntid and .reqntid cannot both be set (ptxas refuses the pair); .reqntid alone also bounds the block size",
       [](KernelBuilder& b) { b.SetMaxThreads(128); b.SetRequiredThreads(128); return __LINE__; }},
      {".maxntid and .reqntid cannot both be set (ptxas refuses the pair); .reqntid alone also bounds the block size",
       [](KernelBuilder& b) { b.SetRequiredThreads(64); b.SetMaxThreads(64); return __LINE__; }},
      // Item 6: an index too large for any integer type is an error, not std::out_of_range.
      {"raw PTX refers to {999999999999999999999999...} but declares only 1 registers (1 outputs, 0 inputs)",
       [](KernelBuilder& b) {
         Value<U32> out = b.Undefined<U32>();
         b.RawPtx("mov.u32 {0}, {99999999999999999999999999999999};", {out}, {}); return __LINE__;
       }},
      {"raw PTX refers to {99999999999999999999} but declares only 1 registers (1 outputs, 0 inputs)",
       [](KernelBuilder& b) {
         Value<U32> out = b.Undefined<U32>();
         b.RawPtx("mov.u32 {0}, {99999999999999999999};", {out}, {}); return __LINE__;
       }},
      {"raw PTX refers to {4294967296} but declares only 1 registers (1 outputs, 0 inputs)",
       [](KernelBuilder& b) {
         Value<U32> out = b.Undefined<U32>();
         b.RawPtx("mov.u32 {0}, {4294967296};", {out}, {}); return __LINE__;
       }},
      // Item 5: out-of-range enums on every public entry, before any table lookup.
      {"ir::Rounding value 200 is out of range",
       [](KernelBuilder& b) {
         Value<F32> x = b.Param<F32>("x");
         b.Add(x, x, FloatOpts{.rounding = static_cast<ir::Rounding>(200)}); return __LINE__;
       }},
      {"ir::CmpOp value 100 is out of range",
       [](KernelBuilder& b) {
         Value<U32> x = b.Param<U32>("x");
         b.Setp(static_cast<ir::CmpOp>(100), x, 1u); return __LINE__;
       }},
      {"ir::Mode value 50 is out of range",
       [](KernelBuilder& b) {
         Value<F32> x = b.Param<F32>("x");
         b.Div(x, x, FloatOpts{.mode = static_cast<ir::Mode>(50)}); return __LINE__;
       }},
      {"ir::SpecialReg value 120 is out of range",
       [](KernelBuilder& b) { b.Special(static_cast<ir::SpecialReg>(120)); return __LINE__; }},
      {"ir::SpecialReg value 121 is out of range",
       [](KernelBuilder& b) { b.Special64(static_cast<ir::SpecialReg>(121)); return __LINE__; }},
      {"ir::StateSpace value 9 is out of range",
       [](KernelBuilder& b) { b.Load<U32>(static_cast<StateSpace>(9), b.Param<U64>("p")); return __LINE__; }},
      {"ir::CacheOp value 40 is out of range",
       [](KernelBuilder& b) {
         const int line = __LINE__; b.Load<U32>(StateSpace::kGlobal, b.Param<U64>("p"), MemOpts{.cache = static_cast<ir::CacheOp>(40)});
         return line;
       }},
      {"ir::AtomOp value 77 is out of range",
       [](KernelBuilder& b) {
         b.Atom<U32>(static_cast<ir::AtomOp>(77), StateSpace::kGlobal, b.Param<U64>("p"), 1u); return __LINE__;
       }},
      {"ir::Scope value 9 is out of range",
       [](KernelBuilder& b) { b.Membar(static_cast<ir::Scope>(9)); return __LINE__; }},
      {"ir::MemSem value 9 is out of range",
       [](KernelBuilder& b) {
         const int line = __LINE__; b.Red<U32>(ir::AtomOp::kAdd, StateSpace::kGlobal, b.Param<U64>("p"), 1u,
                    AtomOpts{.sem = static_cast<ir::MemSem>(9)});
         return line;
       }},
      {"ir::ShflMode value 9 is out of range",
       [](KernelBuilder& b) {
         Value<U32> x = b.Param<U32>("x");
         b.Shfl(static_cast<ir::ShflMode>(9), x, 1u, 31u); return __LINE__;
       }},
      {"ir::Opcode value 200 is out of range",
       [](KernelBuilder& b) {
         const int line = __LINE__; b.Emit(static_cast<ir::Opcode>(200), ir::Modifiers{}, ScalarType::kU32, std::initializer_list<ir::Operand>{});
         return line;
       }},
      {"ir::ScalarType value 77 is out of range",
       [](KernelBuilder& b) {
         const int line = __LINE__; b.Emit(ir::Opcode::kAdd, ir::Modifiers{.type = static_cast<ScalarType>(77)}, ScalarType::kU32,
                std::initializer_list<ir::Operand>{});
         return line;
       }},
      {"the destination type: ir::ScalarType value 77 is out of range",
       [](KernelBuilder& b) {
         const int line = __LINE__; b.Emit(ir::Opcode::kActiveMask, ir::Modifiers{.type = ScalarType::kB32}, static_cast<ScalarType>(77),
                std::initializer_list<ir::Operand>{});
         return line;
       }},
      {"ir::ScalarType value 99 is out of range",
       [](KernelBuilder& b) {
         const int line = __LINE__; b.Emit(ir::Opcode::kMov, ir::Modifiers{.type = ScalarType::kU32}, ScalarType::kU32,
                {ir::Operand::Imm(static_cast<ScalarType>(99), 1)});
         return line;
       }},
      {"ir::Rounding value 200 is out of range",
       [](KernelBuilder& b) {
         ir::Instruction inst;
         inst.op = ir::Opcode::kRet;
         inst.mods.rounding = static_cast<ir::Rounding>(200);
         b.EmitInstruction(inst); return __LINE__;
       }},
      {"a register's type: ir::ScalarType value 77 is out of range",
       [](KernelBuilder& b) { b.NewReg(static_cast<ScalarType>(77)); return __LINE__; }},
  };
  for (const ErrorCase& c : cases) {
    KernelBuilder b("k");
    int line = c.make(b);
    INFO("expected: " << c.expected);
    REQUIRE(Msg(b.status()) == At(line) + c.expected);
    absl::StatusOr<ir::Kernel> k = b.Finish();
    REQUIRE(k.status().code() == absl::StatusCode::kInvalidArgument);
    REQUIRE(Msg(k) == At(line) + c.expected);
  }
}

TEST_CASE("an out-of-range target is an error from the constructor", "[builder]") {
  const int line = __LINE__; KernelBuilder b("k", static_cast<ir::Target>(99));
  b.Ret();
  REQUIRE(Msg(b.Finish()) == At(line) + "the target: ir::Target value 99 is out of range");
}

// Issue 11 item 4: a Value of one builder used in another must not read
// whichever register has the same number there.
TEST_CASE("a value from another builder is refused even when its id and type exist here", "[builder]") {
  KernelBuilder a("a");
  KernelBuilder b("k");
  Value<U32> x = a.Param<U32>("x");
  Value<U32> y = b.Param<U32>("y");  // the same register number and type in b
  REQUIRE(b.kernel().regs.size() == a.kernel().regs.size());
  const int line = __LINE__; b.Add(y, x);
  REQUIRE(Msg(b.Finish()) ==
          At(line) + "an operand is not a register of this builder (a value from another KernelBuilder, or an id made "
                     "by hand)");
  // As a destination (Assign), a guard, an address base and a raw PTX register too.
  KernelBuilder c("k");
  Var<U32> v = a.Mutable<U32>(0u);
  const int line2 = __LINE__; c.Assign(v, 1u);
  REQUIRE(Msg(c.status()) ==
          At(line2) + "a destination is not a register of this builder (a value from another KernelBuilder, or an id "
                      "made by hand)");
  KernelBuilder d("k");
  Value<U64> p = a.Param<U64>("p");
  d.Param<U64>("q");
  const int line3 = __LINE__; d.Load<U32>(StateSpace::kGlobal, p);
  REQUIRE(Msg(d.status()) ==
          At(line3) + "an address base is not a register of this builder (a value from another KernelBuilder, or an "
                      "id made by hand)");
  KernelBuilder e("k");
  Value<Pred> pa = a.Const<Pred>(true);
  const int line4 = __LINE__; e.BraIf(pa, e.NewLabel());
  REQUIRE(Msg(e.status()) ==
          At(line4) + "a guard predicate is not a register of this builder (a value from another KernelBuilder, or an "
                      "id made by hand)");
  REQUIRE(Msg(a.Finish()) == "OK");  // a itself is fine
}

// The builder tests an instruction's references in one walk that also
// turns its registers into indices, and where the walk cannot vouch for
// them it undoes itself and runs the full checks (kernel_builder.cc,
// FlipAndCheckReferences): what those accept is recorded as given (a kind
// or address base out of range is the verifier's to refuse), and an error
// in a later operand is worded with the earlier registers as they were.
TEST_CASE("what the builder's one-walk reference check cannot vouch for goes through the full checks", "[builder]") {
  KernelBuilder b("k");
  Value<U32> x = b.Param<U32>("x");   // register 0
  Value<U32> y = b.Undefined<U32>();  // register 1
  Value<U64> a = b.Param<U64>("a");   // register 2
  Value<Pred> p = b.Const<Pred>(true);  // register 3
  ir::Operand odd_kind(x.reg);
  odd_kind.kind = static_cast<ir::OperandKind>(9);
  ir::Operand odd_base = ir::Operand::AddrReg(a.reg, 8);
  odd_base.base = static_cast<ir::AddressBase>(5);
  ir::Instruction inst;
  inst.op = ir::Opcode::kMov;
  inst.mods.type = ScalarType::kU32;
  inst.guard = p.reg;
  inst.dsts.push_back(y.reg);
  inst.srcs = {ir::Operand(x.reg), odd_kind, ir::Operand::AddrReg(a.reg, 4), odd_base};
  b.EmitInstruction(inst);
  REQUIRE(Msg(b.status()) == "OK");
  const ir::Instruction& got = b.kernel().body.back();
  REQUIRE(got.guard.id == 3);  // this builder's registers as indices, each tag stripped once
  REQUIRE(got.dsts[0].id == 1);
  REQUIRE(got.srcs[0].id == 0);
  REQUIRE(got.srcs[2].id == 2);
  REQUIRE(got.srcs[1].id == x.reg.id);  // no register: ids kept as given
  REQUIRE(got.srcs[3].id == a.reg.id);

  // An empty operand after a register, with a guard and a destination: the
  // error is the empty operand's, not a register's.
  inst.srcs = {ir::Operand(x.reg), ir::Operand::AddrReg(a.reg, 4), ir::Operand()};
  const int line = __LINE__; b.EmitInstruction(inst);
  REQUIRE(Msg(b.status()) == At(line) + "mov.u32: operand 3 is empty (a value, label or variable from another builder, "
                                        "or default-constructed?)");
}

// FillDefaults as a table and selects: the same defaults as the rule it
// replaced, restated here, for every opcode, type, mode and rounding kind.
TEST_CASE("the builder fills PTX's required defaults for every opcode and type", "[builder]") {
  KernelBuilder b("k");
  size_t checked = 0;
  for (int o = 0; o < ir::kNumOpcodes; ++o) {
    for (int t = 0; t < ir::kNumScalarTypes; ++t) {
      for (ir::Mode mode : {ir::Mode::kNone, ir::Mode::kLo, ir::Mode::kApprox}) {
        for (ir::Rounding rounding : {ir::Rounding::kNone, ir::Rounding::kRz}) {
          const auto op = static_cast<ir::Opcode>(o);
          if (op == ir::Opcode::kRaw) continue;  // needs a raw PTX block
          const auto type = static_cast<ScalarType>(t);
          ir::Modifiers m{.type = type, .rounding = rounding, .mode = mode};
          ir::Modifiers want = m;
          const bool is_int = ir::IsInteger(type), is_float = ir::IsFloat(type);
          if ((op == ir::Opcode::kMul || op == ir::Opcode::kMad) && is_int && mode == ir::Mode::kNone) {
            want.mode = ir::Mode::kLo;
          }
          if (op == ir::Opcode::kFma && rounding == ir::Rounding::kNone) want.rounding = ir::Rounding::kRn;
          if ((op == ir::Opcode::kDiv || op == ir::Opcode::kSqrt || op == ir::Opcode::kRcp) && is_float &&
              mode == ir::Mode::kNone && rounding == ir::Rounding::kNone) {
            want.rounding = ir::Rounding::kRn;
          }
          b.Emit(op, m, ScalarType::kNone, std::initializer_list<ir::Operand>{});
          REQUIRE(Msg(b.status()) == "OK");
          const ir::Modifiers& got = b.kernel().body.back().mods;
          INFO(ir::OpcodeName(op) << " " << ir::TypeName(type) << " mode " << static_cast<int>(mode) << " rounding "
                                  << static_cast<int>(rounding));
          REQUIRE(got.mode == want.mode);
          REQUIRE(got.rounding == want.rounding);
          ++checked;
        }
      }
    }
  }
  REQUIRE(checked == size_t{ir::kNumOpcodes - 1} * ir::kNumScalarTypes * 6);
}

// The types ld/st/ld.param and mov use for each value type (the builder's
// MemType and MovType tables), restated: f16 and bf16 move as b16, their
// pairs as b32, and mov has no 8-bit form.
TEST_CASE("the builder loads, stores and moves each value type as PTX spells it", "[builder]") {
  KernelBuilder b("k");
  Value<U64> p = b.Param<U64>("p");
  std::string seen;
  auto check = [&]<ScalarTag T>(T, ScalarType mem, ScalarType mov) {
    const size_t before = b.kernel().body.size();
    Value<T> x = b.Load<T>(StateSpace::kGlobal, p);
    b.Store(StateSpace::kGlobal, p, x);
    Var<T> v = b.Mutable<T>(x);
    b.Assign(v, x);
    REQUIRE(Msg(b.status()) == "OK");
    const ir::InstructionList& body = b.kernel().body;
    REQUIRE(body.size() == before + 4);
    INFO(ir::TypeName(T::kType));
    CHECK(body[before].mods.type == mem);      // ld
    CHECK(body[before + 1].mods.type == mem);  // st
    CHECK(body[before + 2].mods.type == mov);  // mov
    CHECK(body[before + 3].mods.type == mov);
    seen += StrCat(ir::TypeName(T::kType), " ");
  };
  check(B8{}, ScalarType::kB8, ScalarType::kB16);
  check(U8{}, ScalarType::kU8, ScalarType::kU16);
  check(S8{}, ScalarType::kS8, ScalarType::kS16);
  check(B16{}, ScalarType::kB16, ScalarType::kB16);
  check(U16{}, ScalarType::kU16, ScalarType::kU16);
  check(S16{}, ScalarType::kS16, ScalarType::kS16);
  check(F16{}, ScalarType::kB16, ScalarType::kB16);
  check(BF16{}, ScalarType::kB16, ScalarType::kB16);
  check(B32{}, ScalarType::kB32, ScalarType::kB32);
  check(U32{}, ScalarType::kU32, ScalarType::kU32);
  check(S32{}, ScalarType::kS32, ScalarType::kS32);
  check(F16x2{}, ScalarType::kB32, ScalarType::kB32);
  check(BF16x2{}, ScalarType::kB32, ScalarType::kB32);
  check(F32{}, ScalarType::kF32, ScalarType::kF32);
  check(B64{}, ScalarType::kB64, ScalarType::kB64);
  check(U64{}, ScalarType::kU64, ScalarType::kU64);
  check(S64{}, ScalarType::kS64, ScalarType::kS64);
  check(F64{}, ScalarType::kF64, ScalarType::kF64);
  CHECK(seen == "b8 u8 s8 b16 u16 s16 f16 bf16 b32 u32 s32 f16x2 bf16x2 f32 b64 u64 s64 f64 ");
}

// NewReg's checks in one test (kernel_builder.cc, AddRegIfValid) accept
// exactly the types in range that are not instruction-only.
TEST_CASE("the builder makes registers of exactly the types a register may have", "[builder]") {
  for (int t = 0; t < 256; ++t) {
    const auto type = static_cast<ScalarType>(t);
    const bool may = t < ir::kNumScalarTypes && !ir::IsInstructionOnlyType(type);
    KernelBuilder b("k");
    INFO("type " << t);
    CHECK(b.NewReg(type).valid() == may);
    CHECK(b.status().ok() == may);
    CHECK(b.kernel().regs.size() == (may ? 1u : 0u));
  }
}

// The builder keeps a bit per label, 64 to a word (the first word inline).
TEST_CASE("the builder knows which of many labels are bound", "[builder]") {
  for (uint32_t twice : {0u, 63u, 64u, 127u, 128u, 199u}) {
    KernelBuilder b("k");
    std::vector<ir::Label> labels;
    for (int i = 0; i < 200; ++i) labels.push_back(b.NewLabel());
    for (uint32_t i = 0; i < 200; i += 2) b.Bind(labels[i]);  // the even ones first
    for (uint32_t i = 1; i < 200; i += 2) b.Bind(labels[i]);
    REQUIRE(Msg(b.status()) == "OK");
    const int line = __LINE__; b.Bind(labels[twice]);
    REQUIRE(Msg(b.status()) == At(line) + StrCat("label ", twice, " is bound twice"));
  }
}

TEST_CASE("raw PTX: literal braces and non-register % names are allowed", "[builder]") {
  KernelBuilder b("raw", ir::Target::kSm80);
  Value<U32> in = b.Param<U32>("n");
  Value<U32> out = b.Undefined<U32>("lane");
  b.RawPtx("{ .reg .u32 t; mov.u32 t, %laneid; add.u32 {0}, t, {1}; }", {out}, {in}, RawPtxOpts{.min_ptx = 71});
  b.Store(StateSpace::kGlobal, Address(b.Param<U64>("p")), out);
  absl::StatusOr<ir::Kernel> k = b.Finish();
  REQUIRE(Msg(k) == "OK");
  REQUIRE(emit::PrintIr(*k) ==
          "kernel raw target sm_80\n"
          "  param u32 n\n"
          "  param u64 p\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %1:u32 = raw \"{ .reg .u32 t; mov.u32 t, %laneid; add.u32 %1, t, %0; }\"  // lane\n"
          "  %2:u64 = ld.param.u64 [p]  // p\n"
          "  st.global.u32 [%2], %1\n"
          "  ret\n"
          "}\n");
  REQUIRE(ir::RequiredPtxVersion(k->target, {&*k}).ToString() == "7.1");
}

}  // namespace
}  // namespace ptxforge
