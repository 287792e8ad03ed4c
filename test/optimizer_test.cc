// Tests of the optimizer passes (IR in, IR out, exact text), the pipeline's
// options, and the emulator equivalence of every registry kernel with the
// optimizer on and off.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "builder/kernel_builder.h"
#include "emit/ir_printer.h"
#include "ir/cfg.h"
#include "ir/strings.h"
#include "kernels/problem_runner.h"
#include "kernels/registry.h"
#include "passes/const_fold.h"
#include "passes/copy_prop.h"
#include "passes/cse.h"
#include "passes/dead_branches.h"
#include "passes/dead_register_removal.h"
#include "passes/identities.h"
#include "passes/licm.h"
#include "passes/loop_rotation.h"
#include "passes/body_edit.h"
#include "passes/loops.h"
#include "passes/pass.h"
#include "passes/pow2_division.h"
#include "passes/reassociate.h"
#include "passes/register_count.h"
#include "passes/strength_reduction.h"
#include "passes/values.h"
#include "passes/verifier.h"
#include "runtime/emulator.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::StateSpace;
using testing::Finished;
using testing::Msg;

// The IR text; with PTXFORGE_DUMP_IR=1 also on stderr between @@@ markers, to
// review a pass's output after an intended change.
std::string DumpIr(const ir::Kernel& k) {
  std::string ir = emit::PrintIr(k);
  if (std::getenv("PTXFORGE_DUMP_IR")) std::fprintf(stderr, "@@@BEGIN %s\n%s@@@END\n", k.name.c_str(), ir.c_str());
  return ir;
}

// The pass's output must still verify.
void RequireVerifies(const ir::Kernel& k) { REQUIRE(Msg(ir::VerifyKernel(k)) == "OK"); }

// The pass finds nothing to do and leaves the IR as it was.
void RequireUnchanged(ir::Kernel& k, size_t (*pass)(ir::Kernel&)) {
  const std::string before = DumpIr(k);
  REQUIRE(pass(k) == 0);
  REQUIRE(DumpIr(k) == before);
}

// ---- constant folding and propagation

TEST_CASE("constfold: integer arithmetic, wrap-around, shifts past the width", "[constfold]") {
  KernelBuilder b("fold");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> big = b.Const<U32>(0xFFFFFFF0u);
  Value<U32> wrapped = b.Add(big, 0x20u);           // 0x10: wraps
  Value<U32> shifted = b.Shl(wrapped, 40u);          // 0: shift >= 32
  Value<S32> neg = b.Const<S32>(-8);
  Value<S32> sra = b.Shr(neg, 100u);                 // -1: shr.s fills with the sign
  Value<S32> quot = b.Div(neg, b.Const<S32>(0));     // -1: division by zero gives all ones
  Value<U64> wide = b.MulWide(big, 16u);             // 0xFFFFFFF00
  Value<U32> n = b.Param<U32>("n");
  Value<U32> sum = b.Add(n, b.Add(wrapped, shifted)); // the constant 0x10 propagates into the add
  b.Store(StateSpace::kGlobal, out, sum);
  b.Store(StateSpace::kGlobal, Address(out, 4), b.Add(sra, quot));
  b.Store(StateSpace::kGlobal, Address(out, 8), wide);
  ir::Kernel k = Finished(b);
  REQUIRE(passes::FoldConstants(k) > 0);
  RequireVerifies(k);
  passes::RemoveDeadRegisters(k);
  REQUIRE(DumpIr(k) ==
          "kernel fold target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %5:u64 = mov.u64 68719476480\n"
          "  %6:u32 = ld.param.u32 [n]  // n\n"
          "  %10:u32 = add.u32 %6, 16\n"
          "  %11:u64 = ld.param.u64 [out]  // out\n"
          "  %12:u64 = cvta.to.global.u64 %11\n"
          "  st.global.u32 [%12], %10\n"
          "  %13:s32 = mov.s32 -2\n"
          "  st.global.s32 [%12+4], %13\n"
          "  st.global.u64 [%12+8], %5\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("constfold: without a constant to start from it does nothing, the body summary says so", "[constfold]") {
  // No mov of an immediate into a register that is not mutable and no
  // instruction reading immediates only: the summary rules constant
  // folding out (it does not read the body).
  KernelBuilder b("nofold");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");  // a mutable register's mov: not a constant
  b.Assign(acc, b.Add<U32>(acc, b.Xor(n, 5u)));
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  ir::Kernel k = Finished(b);
  passes::BodySummary summary;
  passes::Values values(k, &summary);
  CHECK_FALSE(summary.mov_imm_to_fixed);
  CHECK_FALSE(summary.imm_sources);
  RequireUnchanged(k, passes::FoldConstants);

  // An add of two immediates (as a pass could leave it) is what the
  // summary notes and constant folding folds.
  ir::Kernel imm = k;
  auto it = std::find_if(imm.body.begin(), imm.body.end(), [](const ir::Instruction& i) { return i.op == ir::Opcode::kXor; });
  REQUIRE(it != imm.body.end());
  it->srcs[0] = ir::Operand::Imm(ir::ScalarType::kU32, 12);
  passes::BodySummary imm_summary;
  passes::Values imm_values(imm, &imm_summary);
  CHECK_FALSE(imm_summary.mov_imm_to_fixed);
  CHECK(imm_summary.imm_sources);
  REQUIRE(passes::FoldConstants(imm) == 2);  // 12 ^ 5, and the 9 it gives propagates into the add
  const std::string folded = DumpIr(imm);
  CHECK(folded.find("  %4:u32 = mov.u32 9\n  %5:u32 = add.u32 %3, 9\n") != std::string::npos);

  // A constant register (b.Const: a mov of an immediate) is noted too.
  KernelBuilder c("constreg");
  Value<U64> cout = c.CvtaToGlobal(c.Param<U64>("out"));
  c.Store(StateSpace::kGlobal, cout, c.Xor(c.Param<U32>("n"), c.Const<U32>(6u)));
  ir::Kernel ck = Finished(c);
  passes::BodySummary c_summary;
  passes::Values c_values(ck, &c_summary);
  CHECK(c_summary.mov_imm_to_fixed);
  CHECK_FALSE(c_summary.imm_sources);
  REQUIRE(passes::FoldConstants(ck) == 1);  // 6 propagates into the xor
  CHECK(DumpIr(ck).find("  %1:u32 = mov.u32 6\n  %2:u32 = xor.b32 %0, 0x6\n") != std::string::npos);
}

TEST_CASE("constfold: setp, selp, cvt and predicates", "[constfold]") {
  KernelBuilder b("fold_cmp");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<S32> minus = b.Const<S32>(-1);
  Value<Pred> lt = b.Lt(minus, 0);                       // true as s32
  Value<U32> pick = b.Select(lt, n, 7u);                 // selp on a known predicate: n
  Value<U16> narrow = b.Cvt<U16>(b.Const<U32>(0x12345u)); // truncates to 0x2345
  Value<S64> widened = b.Cvt<S64>(minus);                // sign-extends
  b.Store(StateSpace::kGlobal, out, pick);
  b.Store(StateSpace::kGlobal, Address(out, 4), narrow);
  b.Store(StateSpace::kGlobal, Address(out, 8), widened);
  ir::Kernel k = Finished(b);
  passes::FoldConstants(k);
  RequireVerifies(k);
  passes::RemoveDeadRegisters(k);
  REQUIRE(DumpIr(k) ==
          "kernel fold_cmp target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %1:u16 = mov.u16 9029\n"
          "  %3:s64 = mov.s64 -1\n"
          "  %4:u32 = ld.param.u32 [n]  // n\n"
          "  %6:u32 = mov.u32 %4\n"
          "  %7:u64 = ld.param.u64 [out]  // out\n"
          "  %8:u64 = cvta.to.global.u64 %7\n"
          "  st.global.u32 [%8], %6\n"
          "  st.global.u16 [%8+4], %1\n"
          "  st.global.s64 [%8+8], %3\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("constfold: floats only where bit-exact", "[constfold]") {
  KernelBuilder b("fold_float");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<F32> x = b.Param<F32>("x");
  Value<F32> three = b.Add(b.Const<F32>(1.0f), 2.0f);    // folded: 3
  Value<F32> nan = b.Const<F32>(std::numeric_limits<float>::quiet_NaN());
  Value<F32> keep_nan = b.Add(nan, 1.0f);                // not folded: NaN payloads differ
  Value<F32> keep_rz = b.Add(b.Const<F32>(1.0f), 2.0f, {.rounding = ir::Rounding::kRz});  // not folded: .rz
  Value<F32> keep_ftz = b.Mul(b.Const<F32>(1.0f), 2.0f, {.ftz = true});                  // not folded: .ftz
  b.Store(StateSpace::kGlobal, out, b.Add(x, three));
  b.Store(StateSpace::kGlobal, Address(out, 4), keep_nan);
  b.Store(StateSpace::kGlobal, Address(out, 8), keep_rz);
  b.Store(StateSpace::kGlobal, Address(out, 12), keep_ftz);
  ir::Kernel k = Finished(b);
  passes::FoldConstants(k);
  RequireVerifies(k);
  passes::RemoveDeadRegisters(k);
  REQUIRE(DumpIr(k) ==
          "kernel fold_float target sm_80\n"
          "  param u64 out\n"
          "  param f32 x\n"
          "{\n"
          "  %1:f32 = add.f32 0f7FC00000, 0f3F800000\n"
          "  %3:f32 = add.rz.f32 0f3F800000, 0f40000000\n"
          "  %5:f32 = mul.ftz.f32 0f3F800000, 0f40000000\n"
          "  %6:f32 = ld.param.f32 [x]  // x\n"
          "  %9:f32 = add.f32 %6, 0f40400000\n"
          "  %10:u64 = ld.param.u64 [out]  // out\n"
          "  %11:u64 = cvta.to.global.u64 %10\n"
          "  st.global.f32 [%11], %9\n"
          "  st.global.f32 [%11+4], %1\n"
          "  st.global.f32 [%11+8], %3\n"
          "  st.global.f32 [%11+12], %5\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("constfold: EvaluateConstant follows PTX on the edge cases", "[constfold]") {
  KernelBuilder b("eval");
  b.Param<S32>("a");
  ir::Kernel k = Finished(b);
  auto eval = [&](ir::Opcode op, ir::ScalarType t, std::vector<uint64_t> v, ir::Mode mode = ir::Mode::kNone) {
    ir::Instruction inst;
    inst.op = op;
    inst.mods.type = t;
    inst.mods.mode = mode;
    inst.dsts = {ir::Reg{0}};
    for (size_t i = 0; i < v.size(); ++i) inst.srcs.push_back(ir::Operand::Imm(t, v[i]));
    k.regs[0].type = t;
    return passes::EvaluateConstant(k, inst, v);
  };
  using ir::Opcode;
  using ir::ScalarType;
  const uint64_t kMin32 = 0x80000000u, kMinus1 = 0xFFFFFFFFu;
  CHECK(eval(Opcode::kDiv, ScalarType::kS32, {kMin32, kMinus1}) == kMin32);  // MIN / -1 wraps
  CHECK(eval(Opcode::kRem, ScalarType::kS32, {kMin32, kMinus1}) == 0u);
  CHECK(eval(Opcode::kRem, ScalarType::kU32, {7, 0}) == 7u);                 // remainder by zero: the dividend
  CHECK(eval(Opcode::kDiv, ScalarType::kU32, {7, 0}) == kMinus1);
  CHECK(eval(Opcode::kShr, ScalarType::kU32, {kMin32, 32}) == 0u);
  CHECK(eval(Opcode::kShr, ScalarType::kS32, {kMin32, 32}) == kMinus1);
  CHECK(eval(Opcode::kShl, ScalarType::kB64, {1, 63}) == uint64_t{1} << 63);
  CHECK(eval(Opcode::kMul, ScalarType::kS32, {kMinus1, kMinus1}, ir::Mode::kHi) == 0u);
  CHECK(eval(Opcode::kMul, ScalarType::kU32, {kMinus1, kMinus1}, ir::Mode::kHi) == 0xFFFFFFFEu);
  CHECK(eval(Opcode::kMul, ScalarType::kU16, {0xFFFF, 0xFFFF}, ir::Mode::kLo) == 1u);
  CHECK(eval(Opcode::kAbs, ScalarType::kS32, {kMin32}) == kMin32);
  CHECK(eval(Opcode::kNeg, ScalarType::kS16, {0x8000}) == 0x8000u);
  CHECK(eval(Opcode::kClz, ScalarType::kB32, {0}) == 32u);
  CHECK(eval(Opcode::kBrev, ScalarType::kB32, {1}) == kMin32);
  CHECK(eval(Opcode::kMin, ScalarType::kS32, {kMinus1, 1}) == kMinus1);
  CHECK(eval(Opcode::kMin, ScalarType::kU32, {kMinus1, 1}) == 1u);
  CHECK(eval(Opcode::kCnot, ScalarType::kB32, {0}) == 1u);
  CHECK(!eval(Opcode::kAdd, ScalarType::kF16, {0x3C00, 0x3C00}));  // halves are not folded
}

// ---- identities

TEST_CASE("identities: x+0, x*1, x*0, x&-1, x^x ... become movs", "[identities]") {
  KernelBuilder b("ident");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  Value<F32> f = b.Param<F32>("f");
  b.Store(StateSpace::kGlobal, out, b.Add(x, 0u));
  b.Store(StateSpace::kGlobal, Address(out, 4), b.Mul(x, 1u));
  b.Store(StateSpace::kGlobal, Address(out, 8), b.Mul(x, 0u));
  b.Store(StateSpace::kGlobal, Address(out, 12), b.Sub(x, x));
  b.Store(StateSpace::kGlobal, Address(out, 16), b.Shr(x, 0u));
  Value<B32> bits = b.Param<B32>("bits");
  b.Store(StateSpace::kGlobal, Address(out, 20), b.And(bits, 0xFFFFFFFFu));
  b.Store(StateSpace::kGlobal, Address(out, 24), b.Xor(bits, bits));
  b.Store(StateSpace::kGlobal, Address(out, 28), b.Add(f, 0.0f));  // floats stay: -0 + 0 is +0
  b.Store(StateSpace::kGlobal, Address(out, 32), b.Mul(f, 1.0f));  // NaN payloads
  ir::Kernel k = Finished(b);
  REQUIRE(passes::SimplifyIdentities(k) == 7);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel ident target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "  param f32 f\n"
          "  param b32 bits\n"
          "{\n"
          "  %0:f32 = ld.param.f32 [f]  // f\n"
          "  %1:u32 = ld.param.u32 [x]  // x\n"
          "  %2:u32 = mov.u32 %1\n"
          "  %3:u64 = ld.param.u64 [out]  // out\n"
          "  %4:u64 = cvta.to.global.u64 %3\n"
          "  st.global.u32 [%4], %2\n"
          "  %5:u32 = mov.u32 %1\n"
          "  st.global.u32 [%4+4], %5\n"
          "  %6:u32 = mov.u32 0\n"
          "  st.global.u32 [%4+8], %6\n"
          "  %7:u32 = mov.u32 0\n"
          "  st.global.u32 [%4+12], %7\n"
          "  %8:u32 = mov.u32 %1\n"
          "  st.global.u32 [%4+16], %8\n"
          "  %9:b32 = ld.param.b32 [bits]  // bits\n"
          "  %10:b32 = mov.b32 %9\n"
          "  st.global.b32 [%4+20], %10\n"
          "  %11:b32 = mov.b32 0x0\n"
          "  st.global.b32 [%4+24], %11\n"
          "  %12:f32 = add.f32 %0, 0f00000000\n"
          "  st.global.f32 [%4+28], %12\n"
          "  %13:f32 = mul.f32 %0, 0f3F800000\n"
          "  st.global.f32 [%4+32], %13\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("identities: a copy it made stands for the value it copies but a mutable register does not", "[identities]") {
  KernelBuilder b("copied");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  Value<U32> y = b.Mul(b.Div(x, 1u), 1u);  // two copies deep: y is x
  b.Store(StateSpace::kGlobal, out, b.Sub(x, y));
  Var<U32> m = b.Mutable<U32>(x, "m");
  b.Store(StateSpace::kGlobal, Address(out, 4), b.Sub(b.Mul(m, 1u), m));  // m*1 is a value, m is not: kept
  ir::Kernel k = Finished(b);
  REQUIRE(passes::SimplifyIdentities(k) == 4);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel copied target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %1:u32 = mov.u32 %0\n"
          "  %2:u32 = mov.u32 %1\n"
          "  %3:u32 = mov.u32 0\n"
          "  %4:u64 = ld.param.u64 [out]  // out\n"
          "  %5:u64 = cvta.to.global.u64 %4\n"
          "  st.global.u32 [%5], %3\n"
          "  %6:u32 = mov.u32 %0  // m mutable\n"
          "  %7:u32 = mov.u32 %6\n"
          "  %8:u32 = sub.u32 %7, %6\n"
          "  st.global.u32 [%5+4], %8\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("identities: a constant it made counts as that immediate and mad of zero is mul", "[identities]") {
  KernelBuilder b("made_zero");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  Value<U32> y = b.Param<U32>("y");
  Value<U32> zero = b.Sub(x, x);     // 0, made here
  Value<U32> also = b.Mul(zero, 1u);  // 0 * 1: a 0 too (named as the immediate)
  b.Store(StateSpace::kGlobal, out, b.Mul(zero, 3u));                   // 0
  b.Store(StateSpace::kGlobal, Address(out, 4), b.Add(also, y));        // y
  b.Store(StateSpace::kGlobal, Address(out, 8), b.Add(zero, 7u));       // 7, as an immediate
  b.Store(StateSpace::kGlobal, Address(out, 12), b.Mad(x, 5u, zero));   // mul.lo x, 5
  b.Store(StateSpace::kGlobal, Address(out, 16), b.Mad(x, y, 0u));      // mul.lo x, y
  b.Store(StateSpace::kGlobal, Address(out, 20), b.Shl(y, zero));       // y
  b.Store(StateSpace::kGlobal, Address(out, 24), b.Mad(x, y, x));       // kept
  b.Store(StateSpace::kGlobal, Address(out, 28), b.Mad(y, 0u, 9u));     // 9
  Value<U16> h = b.Cvt<U16>(y);
  b.Store(StateSpace::kGlobal, Address(out, 32), b.MadHi(h, h, b.Sub(h, h)));  // mul.hi.u16 h, h
  ir::Kernel k = Finished(b);
  REQUIRE(passes::SimplifyIdentities(k) == 11);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel made_zero target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "  param u32 y\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %1:u32 = mov.u32 0\n"
          "  %2:u32 = mov.u32 0\n"
          "  %3:u32 = ld.param.u32 [y]  // y\n"
          "  %4:u32 = mov.u32 0\n"
          "  %5:u64 = ld.param.u64 [out]  // out\n"
          "  %6:u64 = cvta.to.global.u64 %5\n"
          "  st.global.u32 [%6], %4\n"
          "  %7:u32 = mov.u32 %3\n"
          "  st.global.u32 [%6+4], %7\n"
          "  %8:u32 = mov.u32 7\n"
          "  st.global.u32 [%6+8], %8\n"
          "  %9:u32 = mul.lo.u32 %0, 5\n"
          "  st.global.u32 [%6+12], %9\n"
          "  %10:u32 = mul.lo.u32 %0, %3\n"
          "  st.global.u32 [%6+16], %10\n"
          "  %11:u32 = mov.u32 %3\n"
          "  st.global.u32 [%6+20], %11\n"
          "  %12:u32 = mad.lo.u32 %0, %3, %0\n"
          "  st.global.u32 [%6+24], %12\n"
          "  %13:u32 = mov.u32 9\n"
          "  st.global.u32 [%6+28], %13\n"
          "  %14:u16 = cvt.u16.u32 %3\n"
          "  %15:u16 = mov.u16 0\n"
          "  %16:u16 = mul.hi.u16 %14, %14\n"
          "  st.global.u16 [%6+32], %16\n"
          "  ret\n"
          "}\n");
}

// `out = x; bra end; e = first(x); d = second(e); out = d; end:` with e
// then made to read d instead of x (the first instruction whose opcode is
// first_op): values read above their definition, as only code the entry
// cannot reach may. The fuzz test found such shapes looping for ever.
template <typename F, typename G>
ir::Kernel UnreachableCycle(const char* name, ir::Opcode first_op, ir::Opcode second_op, F&& first, G&& second) {
  KernelBuilder b(name);
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  b.Store(StateSpace::kGlobal, out, x);
  ir::Label end = b.NewLabel("end");
  b.Bra(end);
  Value<U32> d = second(b, first(b, x));
  b.Store(StateSpace::kGlobal, out, d);
  b.Bind(end);
  ir::Kernel k = Finished(b);
  uint32_t d_id = 0;
  for (const ir::Instruction& inst : k.body) {
    if (inst.op == second_op) d_id = inst.dsts[0].id;
  }
  for (ir::Instruction& inst : k.body) {
    if (inst.op == first_op) {
      inst.srcs[0].id = d_id;
      break;
    }
  }
  return k;
}

TEST_CASE("identities: values read above their definition in unreachable code end", "[identities]") {
  // e = d * 1 and d = e & e: d would stand for itself.
  ir::Kernel k = UnreachableCycle(
      "unreachable_copies", ir::Opcode::kMul, ir::Opcode::kAnd,
      [](KernelBuilder& b, Value<U32> x) { return b.Mul(x, 1u); },
      [](KernelBuilder& b, Value<U32> e) { return b.And(e, e); });
  RequireVerifies(k);
  REQUIRE(passes::SimplifyIdentities(k) == 2);
  REQUIRE(DumpIr(k) ==
          "kernel unreachable_copies target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %1:u64 = ld.param.u64 [out]  // out\n"
          "  %2:u64 = cvta.to.global.u64 %1\n"
          "  st.global.u32 [%2], %0\n"
          "  bra $L0_end\n"
          "  %3:u32 = mov.u32 %4\n"
          "  %4:u32 = mov.u32 %3\n"
          "  st.global.u32 [%2], %4\n"
          "$L0_end:\n"
          "  ret\n"
          "}\n");
}

// ---- reassociation

TEST_CASE("reassoc: add and sub chains that cancel read their terms", "[reassoc]") {
  KernelBuilder b("sums");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  Value<U32> y = b.Param<U32>("y");
  Value<U32> x4 = b.Mul(x, 4u);  // not a sum: a term
  // conv2d.backward_data's shared index: ((x4 + y) - (x4 - 2)) - 2 through
  // signed bitcasts is y.
  Value<S32> d = b.Sub(b.Bitcast<S32>(b.Add(x4, y)), b.Sub(b.Bitcast<S32>(x4), 2));
  b.Store(StateSpace::kGlobal, out, b.Sub(b.Bitcast<U32>(d), 2u));                       // mov y
  b.Store(StateSpace::kGlobal, Address(out, 4), b.Add(b.Add(x, 0xFFFFFFFFu), 1u));       // mov x: it wraps
  Value<S32> s = b.Bitcast<S32>(y);
  b.Store(StateSpace::kGlobal, Address(out, 8), b.Add(b.Neg(b.Add(s, 2)), 5));          // sub 3, y (through the bitcast)
  b.Store(StateSpace::kGlobal, Address(out, 12), b.Add(b.Add(x, 5u), b.Sub(y, 5u)));    // add x, y
  b.Store(StateSpace::kGlobal, Address(out, 16), b.Sub(b.Add(x, 5u), b.Add(y, 5u)));    // sub x, y
  b.Store(StateSpace::kGlobal, Address(out, 20), b.Sub(b.Add(y, 5u), b.Add(x, 5u)));    // sub y, x
  b.Store(StateSpace::kGlobal, Address(out, 24), b.Sub(b.Add(x, y), b.Add(y, x)));      // mov 0
  b.Store(StateSpace::kGlobal, Address(out, 28), b.Add(b.Add(x, y), 1u));               // kept: two terms and 1
  b.Store(StateSpace::kGlobal, Address(out, 32), b.Add(b.Add(x, x), y));                // kept: 2x + y
  Value<U16> h = b.Cvt<U16>(y);
  b.Store(StateSpace::kGlobal, Address(out, 36), b.Sub(b.Add(h, uint16_t{7}), uint16_t{7}));  // mov h
  // t reads m, a mutable register, and is not followed: m changes between
  // t's definition and its use, and t - 1 is not m there.
  Var<U32> m = b.Mutable<U32>(x, "m");
  Value<U32> t = b.Add<U32>(m, 1u);
  b.Assign(m, b.Add<U32>(m, 2u));
  b.Store(StateSpace::kGlobal, Address(out, 40), b.Sub(t, 1u));  // kept
  // A mutable register the instruction reads itself is a term: m + x.
  b.Store(StateSpace::kGlobal, Address(out, 44), b.Add<U32>(m, b.Sub(b.Add(x, 3u), 3u)));
  // 64 bits wrap at 2^64: (w - 2^63) - 2^63 is w.
  Value<U64> w = b.CvtaToGlobal(b.Param<U64>("w"));
  b.Store(StateSpace::kGlobal, Address(out, 48), b.Sub(b.Sub(w, uint64_t{1} << 63), uint64_t{1} << 63));
  ir::Kernel k = Finished(b);
  REQUIRE(passes::Reassociate(k) == 15);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel sums target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "  param u32 y\n"
          "  param u64 w\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %1:u32 = mul.lo.u32 %0, 4\n"
          "  %2:u32 = ld.param.u32 [y]  // y\n"
          "  %3:u32 = add.u32 %1, %2\n"
          "  %4:s32 = mov.b32 %3\n"
          "  %5:s32 = mov.b32 %1\n"
          "  %6:s32 = add.s32 %1, -2\n"
          "  %7:s32 = add.s32 %2, 2\n"
          "  %8:u32 = mov.b32 %7\n"
          "  %9:u32 = mov.u32 %2\n"
          "  %10:u64 = ld.param.u64 [out]  // out\n"
          "  %11:u64 = cvta.to.global.u64 %10\n"
          "  st.global.u32 [%11], %9\n"
          "  %12:u32 = add.u32 %0, 4294967295\n"
          "  %13:u32 = mov.u32 %0\n"
          "  st.global.u32 [%11+4], %13\n"
          "  %14:s32 = mov.b32 %2\n"
          "  %15:s32 = add.s32 %2, 2\n"
          "  %16:s32 = sub.s32 -2, %2\n"
          "  %17:s32 = sub.s32 3, %2\n"
          "  st.global.s32 [%11+8], %17\n"
          "  %18:u32 = add.u32 %0, 5\n"
          "  %19:u32 = sub.u32 %2, 5\n"
          "  %20:u32 = add.u32 %0, %2\n"
          "  st.global.u32 [%11+12], %20\n"
          "  %21:u32 = add.u32 %0, 5\n"
          "  %22:u32 = add.u32 %2, 5\n"
          "  %23:u32 = sub.u32 %0, %2\n"
          "  st.global.u32 [%11+16], %23\n"
          "  %24:u32 = add.u32 %2, 5\n"
          "  %25:u32 = add.u32 %0, 5\n"
          "  %26:u32 = sub.u32 %2, %0\n"
          "  st.global.u32 [%11+20], %26\n"
          "  %27:u32 = add.u32 %0, %2\n"
          "  %28:u32 = add.u32 %2, %0\n"
          "  %29:u32 = mov.u32 0\n"
          "  st.global.u32 [%11+24], %29\n"
          "  %30:u32 = add.u32 %0, %2\n"
          "  %31:u32 = add.u32 %30, 1\n"
          "  st.global.u32 [%11+28], %31\n"
          "  %32:u32 = add.u32 %0, %0\n"
          "  %33:u32 = add.u32 %32, %2\n"
          "  st.global.u32 [%11+32], %33\n"
          "  %34:u16 = cvt.u16.u32 %2\n"
          "  %35:u16 = add.u16 %34, 7\n"
          "  %36:u16 = mov.u16 %34\n"
          "  st.global.u16 [%11+36], %36\n"
          "  %37:u32 = mov.u32 %0  // m mutable\n"
          "  %38:u32 = add.u32 %37, 1\n"
          "  %39:u32 = add.u32 %37, 2\n"
          "  %37:u32 = mov.u32 %39  // m mutable\n"
          "  %40:u32 = sub.u32 %38, 1\n"
          "  st.global.u32 [%11+40], %40\n"
          "  %41:u32 = add.u32 %0, 3\n"
          "  %42:u32 = mov.u32 %0\n"
          "  %43:u32 = add.u32 %37, %0\n"
          "  st.global.u32 [%11+44], %43\n"
          "  %44:u64 = ld.param.u64 [w]  // w\n"
          "  %45:u64 = cvta.to.global.u64 %44\n"
          "  %46:u64 = sub.u64 %45, 9223372036854775808\n"
          "  %47:u64 = mov.u64 %45\n"
          "  st.global.u64 [%11+48], %47\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("reassoc: values read above their definition in unreachable code end", "[reassoc]") {
  // e = d + 1 and d = e - 1: d's sum is d. Only definitions above the
  // instruction are followed, so this ends (as a copy of itself, which the
  // verifier accepts in code the entry cannot reach).
  ir::Kernel k = UnreachableCycle(
      "unreachable_sums", ir::Opcode::kAdd, ir::Opcode::kSub,
      [](KernelBuilder& b, Value<U32> x) { return b.Add(x, 1u); },
      [](KernelBuilder& b, Value<U32> e) { return b.Sub(e, 1u); });
  RequireVerifies(k);
  REQUIRE(passes::Reassociate(k) == 1);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel unreachable_sums target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %1:u64 = ld.param.u64 [out]  // out\n"
          "  %2:u64 = cvta.to.global.u64 %1\n"
          "  st.global.u32 [%2], %0\n"
          "  bra $L0_end\n"
          "  %3:u32 = add.u32 %4, 1\n"
          "  %4:u32 = mov.u32 %4\n"
          "  st.global.u32 [%2], %4\n"
          "$L0_end:\n"
          "  ret\n"
          "}\n");
}

// ---- copy propagation

TEST_CASE("copyprop: uses of a copy read the original, copies of mutable registers stay", "[copyprop]") {
  KernelBuilder b("copies");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  Value<U32> y = b.Add(x, 0u);  // identities make it `mov y, x`
  Var<U32> m = b.Mutable<U32>(x, "m");
  Value<U32> snapshot = b.Add<U32>(m, 0u);
  b.Assign(m, b.Add<U32>(m, 1u));
  b.Store(StateSpace::kGlobal, out, b.Mul(y, y));
  b.Store(StateSpace::kGlobal, Address(out, 4), snapshot);
  b.Store(StateSpace::kGlobal, Address(out, 8), m);
  ir::Kernel k = Finished(b);
  passes::SimplifyIdentities(k);
  REQUIRE(passes::PropagateCopies(k) == 1);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel copies target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %2:u64 = ld.param.u64 [out]  // out\n"
          "  %3:u64 = cvta.to.global.u64 %2\n"
          "  %4:u32 = mov.u32 %0  // m mutable\n"
          "  %5:u32 = mov.u32 %4\n"
          "  %6:u32 = add.u32 %4, 1\n"
          "  %4:u32 = mov.u32 %6  // m mutable\n"
          "  %7:u32 = mul.lo.u32 %0, %0\n"
          "  st.global.u32 [%3], %7\n"
          "  st.global.u32 [%3+4], %5\n"
          "  st.global.u32 [%3+8], %4\n"
          "  ret\n"
          "}\n");
}

// ---- common subexpressions

TEST_CASE("cse: dominating expressions are reused, across blocks too", "[cse]") {
  KernelBuilder b("cse");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> tid = b.TidX();
  Value<U32> a = b.Mul(tid, 4u);
  b.Store(StateSpace::kGlobal, out, a);
  b.If(b.Lt(tid, n), [&] {
    Value<U32> again = b.Mul(tid, 4u);         // the same as a: a's block dominates this one
    Value<U32> tid2 = b.TidX();                // %tid.x again: read again (no register to keep live)
    b.Store(StateSpace::kGlobal, Address(out, 4), b.Mul(again, tid2));
    b.Store(StateSpace::kGlobal, Address(out, 8), b.Mul(tid2, again));  // commuted: the same mul
    b.Store(StateSpace::kGlobal, Address(out, 32), b.Add(again, tid2));
    b.Store(StateSpace::kGlobal, Address(out, 36), b.Add(again, tid2));  // register + register: left to ptxas
  });
  b.If(b.Lt(n, 5u), [&] {
    Value<U32> c = b.Mul(n, 3u);               // not available in the sibling block below
    b.Store(StateSpace::kGlobal, Address(out, 12), c);
  });
  b.Store(StateSpace::kGlobal, Address(out, 16), b.Mul(n, 3u));
  Value<U32> clock1 = b.Clock();
  Value<U32> clock2 = b.Clock();               // volatile: both reads stay
  b.Store(StateSpace::kGlobal, Address(out, 20), b.Sub(clock2, clock1));
  Value<U32> l1 = b.Load<U32>(StateSpace::kGlobal, out);
  b.Store(StateSpace::kGlobal, Address(out, 24), l1);
  Value<U32> l2 = b.Load<U32>(StateSpace::kGlobal, out);  // memory changed in between: both loads stay
  b.Store(StateSpace::kGlobal, Address(out, 28), l2);
  ir::Kernel k = Finished(b);
  REQUIRE(passes::EliminateCommonSubexpressions(k) == 2);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel cse target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %1:u32 = mov.u32 %tid.x\n"
          "  %2:u32 = mul.lo.u32 %1, 4\n"
          "  %3:u64 = ld.param.u64 [out]  // out\n"
          "  %4:u64 = cvta.to.global.u64 %3\n"
          "  st.global.u32 [%4], %2\n"
          "  %5:pred = setp.lt.u32 %1, %0\n"
          "  @!%5 bra $L0_endif\n"
          "  %7:u32 = mov.u32 %tid.x\n"
          "  %8:u32 = mul.lo.u32 %2, %7\n"
          "  st.global.u32 [%4+4], %8\n"
          "  st.global.u32 [%4+8], %8\n"
          "  %10:u32 = add.u32 %2, %7\n"
          "  st.global.u32 [%4+32], %10\n"
          "  %11:u32 = add.u32 %2, %7\n"
          "  st.global.u32 [%4+36], %11\n"
          "$L0_endif:\n"
          "  %12:pred = setp.lt.u32 %0, 5\n"
          "  @!%12 bra $L1_endif\n"
          "  %13:u32 = mul.lo.u32 %0, 3\n"
          "  st.global.u32 [%4+12], %13\n"
          "$L1_endif:\n"
          "  %14:u32 = mul.lo.u32 %0, 3\n"
          "  st.global.u32 [%4+16], %14\n"
          "  %15:u32 = mov.u32 %clock\n"
          "  %16:u32 = mov.u32 %clock\n"
          "  %17:u32 = sub.u32 %16, %15\n"
          "  st.global.u32 [%4+20], %17\n"
          "  %18:u32 = ld.global.u32 [%4]\n"
          "  st.global.u32 [%4+24], %18\n"
          "  %19:u32 = ld.global.u32 [%4]\n"
          "  st.global.u32 [%4+28], %19\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("cse: code the entry cannot reach reads the value that stays", "[cse]") {
  // The dominator-tree walk never visits the block after the bra: its read
  // of the removed value is renamed all the same.
  KernelBuilder b("cse_unreached");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  b.Store(StateSpace::kGlobal, out, b.Mul(x, 4u));
  Value<U32> again = b.Mul(x, 4u);
  b.Store(StateSpace::kGlobal, Address(out, 4), again);
  ir::Label end = b.NewLabel("end");
  b.Bra(end);
  b.Store(StateSpace::kGlobal, Address(out, 8), b.Add(again, 1u));
  b.Bind(end);
  ir::Kernel k = Finished(b);
  REQUIRE(passes::EliminateCommonSubexpressions(k) == 1);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel cse_unreached target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %1:u32 = mul.lo.u32 %0, 4\n"
          "  %2:u64 = ld.param.u64 [out]  // out\n"
          "  %3:u64 = cvta.to.global.u64 %2\n"
          "  st.global.u32 [%3], %1\n"
          "  st.global.u32 [%3+4], %1\n"
          "  bra $L0_end\n"
          "  %5:u32 = add.u32 %1, 1\n"
          "  st.global.u32 [%3+8], %5\n"
          "$L0_end:\n"
          "  ret\n"
          "}\n");
}

// Fills a stretch of the stack below the caller's frame with all one bits,
// where the frames of the next call will lie.
[[gnu::noinline]] void FillStackWithOnes() {
  volatile uint32_t junk[8192];
  for (size_t k = 0; k < std::size(junk); ++k) junk[k] = UINT32_MAX;
}

TEST_CASE("cse: a branch's expressions are not reused in the branches after it, whatever the stack held", "[cse]") {
  // The walk in block order marks the blocks on the dominator tree's last
  // path in an array on the stack: the others must be told apart from
  // what was there before (all one bits read as marked, and a marked block
  // does not undo its entries for the next sibling).
  KernelBuilder b("cse_siblings");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  for (uint32_t k = 0; k < 3; ++k) {
    b.If(b.Lt(n, k + 5), [&] { b.Store(StateSpace::kGlobal, Address(out, 4 * k), b.Mul(n, 3u)); });
  }
  ir::Kernel k = Finished(b);
  FillStackWithOnes();
  REQUIRE(passes::EliminateCommonSubexpressions(k) == 0);
  RequireVerifies(k);
}

TEST_CASE("cse: blocks whose order is not the dominator tree's preorder are walked in the tree's", "[cse]") {
  // Block 3 (L3) is dominated by block 1, which only it follows, and comes
  // after block 2 (L2), which block 1 does not dominate: the walk visits
  // 0, 1, 3, 2, and the two deletions come out of index order.
  KernelBuilder b("cse_tree");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  b.Store(StateSpace::kGlobal, out, b.Mul(n, 7u));
  ir::Label l2 = b.NewLabel("two");
  ir::Label l3 = b.NewLabel("three");
  b.BraIf(b.Lt(n, 5u), l2);
  b.Store(StateSpace::kGlobal, Address(out, 4), b.Mul(n, 5u));
  b.Bra(l3);
  b.Bind(l2);
  b.Store(StateSpace::kGlobal, Address(out, 8), b.Mul(n, 5u));  // block 1 does not dominate: stays
  b.Store(StateSpace::kGlobal, Address(out, 12), b.Mul(n, 7u));  // block 0's: merged
  b.Ret();
  b.Bind(l3);
  b.Store(StateSpace::kGlobal, Address(out, 16), b.Mul(n, 5u));  // block 1's: merged
  ir::Kernel k = Finished(b);
  REQUIRE(passes::EliminateCommonSubexpressions(k) == 2);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel cse_tree target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %1:u32 = mul.lo.u32 %0, 7\n"
          "  %2:u64 = ld.param.u64 [out]  // out\n"
          "  %3:u64 = cvta.to.global.u64 %2\n"
          "  st.global.u32 [%3], %1\n"
          "  %4:pred = setp.lt.u32 %0, 5\n"
          "  @%4 bra $L0_two\n"
          "  %5:u32 = mul.lo.u32 %0, 5\n"
          "  st.global.u32 [%3+4], %5\n"
          "  bra $L1_three\n"
          "$L0_two:\n"
          "  %6:u32 = mul.lo.u32 %0, 5\n"
          "  st.global.u32 [%3+8], %6\n"
          "  st.global.u32 [%3+12], %1\n"
          "  ret\n"
          "$L1_three:\n"
          "  st.global.u32 [%3+16], %5\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("cse: expressions reading a mutable register are reused in its block until it is assigned", "[cse]") {
  KernelBuilder b("csemut");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> i = b.Mutable<U32>(n, "i");
  Value<U64> w1 = b.MulWide(Value<U32>(i), 4u);
  Value<U64> w2 = b.MulWide(Value<U32>(i), 4u);  // nothing assigns i in between: merged with w1
  b.Store(StateSpace::kGlobal, b.Add(out, w1), n);
  b.Store(StateSpace::kGlobal, b.Add(out, w2), n);  // reads w1 now (an add of two registers stays)
  Value<U32> m1 = b.Mul(Value<U32>(i), n);
  b.Assign(i, b.Add(Value<U32>(i), 1u));
  Value<U32> m2 = b.Mul(Value<U32>(i), n);       // i was assigned since m1: stays
  Value<U32> m3 = b.Mul(n, Value<U32>(i));       // the same as m2, commuted: merged
  b.Store(StateSpace::kGlobal, Address(out, 8), b.Xor(m1, b.Xor(m2, m3)));
  b.If(b.Lt(n, 5u), [&] {
    Value<U32> m4 = b.Mul(Value<U32>(i), n);    // another block (one path into it may assign i): stays
    b.Store(StateSpace::kGlobal, Address(out, 12), m4);
  });
  ir::Kernel k = Finished(b);
  REQUIRE(passes::EliminateCommonSubexpressions(k) == 2);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel csemut target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u64 = ld.param.u64 [out]  // out\n"
          "  %1:u64 = cvta.to.global.u64 %0\n"
          "  %2:u32 = ld.param.u32 [n]  // n\n"
          "  %3:u32 = mov.u32 %2  // i mutable\n"
          "  %4:u64 = mul.wide.u32 %3, 4\n"
          "  %6:u64 = add.u64 %1, %4\n"
          "  st.global.u32 [%6], %2\n"
          "  %7:u64 = add.u64 %1, %4\n"
          "  st.global.u32 [%7], %2\n"
          "  %8:u32 = mul.lo.u32 %3, %2\n"
          "  %9:u32 = add.u32 %3, 1\n"
          "  %3:u32 = mov.u32 %9  // i mutable\n"
          "  %10:u32 = mul.lo.u32 %3, %2\n"
          "  %12:u32 = xor.b32 %10, %10\n"
          "  %13:u32 = xor.b32 %8, %12\n"
          "  st.global.u32 [%1+8], %13\n"
          "  %14:pred = setp.lt.u32 %2, 5\n"
          "  @!%14 bra $L0_endif\n"
          "  %15:u32 = mul.lo.u32 %3, %2\n"
          "  st.global.u32 [%1+12], %15\n"
          "$L0_endif:\n"
          "  ret\n"
          "}\n");
}

// BodyEdit (passes/body_edit.h): the in-place edit licm and strength reduction
// apply, checked on bodies of numbered instructions.
TEST_CASE("BodyEdit drops and inserts in place, moving instructions both ways", "[loops]") {
  auto numbered = [](uint64_t k) {
    ir::Instruction inst;
    inst.op = ir::Opcode::kMov;
    inst.srcs = {ir::Operand::Imm(ir::ScalarType::kU32, k)};
    return inst;
  };
  auto order = [](const ir::InstructionList& body) {
    std::string s;
    for (const ir::Instruction& inst : body) s += StrCat(inst.srcs[0].bits(), " ");
    return s;
  };
  ir::InstructionList body;
  for (uint64_t k = 0; k < 8; ++k) body.push_back(numbered(k));
  passes::BodyEdit edit(body);
  // 6 and 7 move in front of 1 (as licm hoists), 3 goes, 100 and 101 come
  // after 4 but before what goes in front of 5, 200 at the end.
  edit.InsertBefore(5, numbered(102));
  edit.InsertAfter(4, numbered(100));
  edit.InsertBefore(1, std::move(body[6]));
  edit.Drop(6);
  edit.InsertBefore(1, std::move(body[7]));
  edit.Drop(7);
  edit.Drop(3);
  edit.InsertAfter(4, numbered(101));
  edit.InsertBefore(8, numbered(200));
  passes::EditMoves moves;
  edit.Apply(body, &moves);
  CHECK(order(body) == "0 6 7 1 2 4 100 101 102 5 200 ");
  // What it did, in old indices, and the new indices it gives.
  CHECK(moves.inserted == std::vector<uint32_t>{1, 1, 5, 5, 5, 8});
  CHECK(moves.dropped == std::vector<uint32_t>{3, 6, 7});
  CHECK(moves.straight);
  passes::EditCursor at(moves);
  std::string kept, inserted, dropped, before;
  for (uint32_t i = 0; i < 8; ++i) {
    dropped += at.Dropped(i) ? "x" : ".";
    if (!at.Dropped(i)) kept += StrCat(at.Kept(i), " ");
  }
  for (uint32_t k = 0; k < 6; ++k) inserted += StrCat(at.Inserted(k), " ");
  for (uint32_t p = 0; p <= 8; ++p) before += StrCat(at.Before(p), "+", at.InsertedAt(p), " ");
  CHECK(dropped == "...x..xx");
  CHECK(kept == "0 3 4 5 9 ");
  CHECK(inserted == "1 2 6 7 8 10 ");
  CHECK(before == "0+0 1+2 4+0 5+0 5+0 6+3 10+0 10+0 10+1 ");
  // Only growth at the front: everything moves towards the back.
  passes::BodyEdit grow(body);
  grow.InsertBefore(0, numbered(9));
  grow.InsertBefore(0, numbered(8));
  grow.Apply(body);
  CHECK(order(body) == "9 8 0 6 7 1 2 4 100 101 102 5 200 ");
  // Only drops: everything moves towards the front.
  passes::BodyEdit shrink(body);
  shrink.Drop(0);
  shrink.Drop(5);
  shrink.Drop(12);
  shrink.Apply(body);
  CHECK(order(body) == "8 0 6 7 2 4 100 101 102 5 ");
  passes::BodyEdit none(body);
  none.Apply(body, &moves);  // an empty edit changes nothing
  CHECK(order(body) == "8 0 6 7 2 4 100 101 102 5 ");
  CHECK((moves.inserted.empty() && moves.dropped.empty() && moves.straight));
}

// Instructions that own heap storage (five operands, three destinations)
// are dropped, inserted and moved both ways across the body's chunks by
// random edits, checked against a vector; the sanitizer build (.ci/run)
// finds a double free or a leak.
TEST_CASE("BodyEdit moves instructions that own heap storage across chunks", "[loops]") {
  auto numbered = [](uint32_t k) {
    ir::Instruction inst;
    inst.op = ir::Opcode::kMov;
    for (uint32_t j = 0; j < 5; ++j) inst.srcs.push_back(ir::Operand::Imm(ir::ScalarType::kU32, k * 10 + j));
    inst.dsts = {ir::Reg{k}, ir::Reg{k + 1}, ir::Reg{k + 2}};
    return inst;
  };
  auto holds = [](const ir::Instruction& inst, uint32_t k) {
    bool ok = inst.srcs.size() == 5 && inst.dsts.size() == 3 && inst.dsts[0].id == k && inst.dsts[2].id == k + 2;
    for (uint32_t j = 0; ok && j < 5; ++j) ok = inst.srcs[j].bits() == k * 10 + j;
    return ok;
  };
  ir::InstructionList body;
  std::vector<uint32_t> model;
  for (uint32_t k = 0; k < 700; ++k) {
    body.push_back(numbered(k));
    model.push_back(k);
  }
  uint32_t next = 1000, seed = 12345;
  auto random = [&](uint32_t n) {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % n;
  };
  for (int round = 0; round < 40; ++round) {
    INFO(round);
    const uint32_t n = static_cast<uint32_t>(body.size());
    passes::BodyEdit edit(body);
    std::vector<bool> drop(n, false);
    std::vector<std::vector<uint32_t>> before(n + 1);  // what goes in front of each index
    // Rounds of mostly insertions, mostly drops, and both.
    const uint32_t inserts = round % 3 == 1 ? random(8) : 1 + random(60);
    const uint32_t drops = round % 3 == 0 ? random(8) : 1 + random(60);
    for (uint32_t d = 0; d < drops && n > 0; ++d) {
      const uint32_t i = random(n);
      drop[i] = true;
      edit.Drop(i);
    }
    // Half of them after an instruction (in front of the next, before what
    // goes in front of it).
    std::vector<std::vector<uint32_t>> after(n + 1);
    for (uint32_t a = 0; a < inserts; ++a) {
      const uint32_t at = random(n + 1);
      if (at > 0 && random(2) == 0) {
        after[at].push_back(next);
        edit.InsertAfter(at - 1, numbered(next++));
      } else {
        before[at].push_back(next);
        edit.InsertBefore(at, numbered(next++));
      }
    }
    // Every sixth edit is left unapplied: its destructor frees what it holds
    // (the sanitizer build finds a leak or a double free).
    if (round % 6 == 2) continue;
    std::vector<std::pair<uint32_t, uint32_t>> told;  // (new index, number) from `placed`
    passes::EditMoves moves;
    edit.Apply(body, &moves, [&](uint32_t index, const ir::Instruction& inst) {
      told.emplace_back(index, static_cast<uint32_t>(inst.srcs[0].bits() / 10));
    });
    std::vector<uint32_t> expected;
    std::vector<std::pair<uint32_t, uint32_t>> placed;
    for (uint32_t i = 0; i <= n; ++i) {
      for (const auto* list : {&after[i], &before[i]}) {
        for (uint32_t k : *list) {
          placed.emplace_back(static_cast<uint32_t>(expected.size()), k);
          expected.push_back(k);
        }
      }
      if (i < n && !drop[i]) expected.push_back(model[i]);
    }
    model = expected;
    REQUIRE(body.size() == model.size());
    bool all = true;
    for (size_t i = 0; i < model.size(); ++i) all = all && holds(body[i], model[i]);
    REQUIRE(all);
    std::sort(told.begin(), told.end());
    CHECK(told == placed);  // each insertion told once, with its new index
    CHECK(moves.inserted.size() == placed.size());
  }
}

TEST_CASE("BodyEdit tells whether what it dropped and inserted is straight-line code", "[loops]") {
  auto make = [](ir::Opcode op) {
    ir::Instruction inst;
    inst.op = op;
    return inst;
  };
  ir::InstructionList body;
  for (ir::Opcode op : {ir::Opcode::kAdd, ir::Opcode::kLabel, ir::Opcode::kBra, ir::Opcode::kRet}) body.push_back(make(op));
  // Each drop or insertion alone: only the add and the mov are straight-line.
  for (int k = 0; k < 6; ++k) {
    INFO(k);
    ir::InstructionList copy = body;
    passes::BodyEdit edit(copy);
    if (k < 4) {
      edit.Drop(static_cast<uint32_t>(k));
    } else {
      edit.InsertBefore(1, make(k == 4 ? ir::Opcode::kMov : ir::Opcode::kExit));
    }
    passes::EditMoves moves;
    edit.Apply(copy, &moves);
    CHECK(moves.straight == (k == 0 || k == 4));
  }
}

TEST_CASE("IncreasingRank counts as a binary search does in whatever order it is asked", "[loops]") {
  std::vector<uint32_t> v;
  uint32_t x = 0, seed = 12345;
  auto next = [&] { return seed = seed * 1103515245u + 12345u; };
  for (int k = 0; k < 300; ++k) v.push_back(x += 1 + (next() >> 16) % 9);
  passes::IncreasingRank rank(v);
  std::vector<uint32_t> asks;
  for (uint32_t q = 0; q < x + 5; q += 3) asks.push_back(q);             // up
  for (uint32_t q = x + 5; q >= 7; q -= 7) asks.push_back(q);            // down
  for (int k = 0; k < 500; ++k) asks.push_back((next() >> 8) % (x + 10));  // anywhere
  for (uint32_t q : {0u, 1u, v[0], v[0] + 1, v.back(), v.back() + 1, UINT32_MAX}) asks.push_back(q);
  int wrong = 0;
  for (uint32_t q : asks) {
    const auto expected = static_cast<uint32_t>(std::lower_bound(v.begin(), v.end(), q) - v.begin());
    wrong += rank.Less(q) != expected;
  }
  CHECK(wrong == 0);
  std::vector<uint32_t> empty;
  passes::IncreasingRank none(empty);
  CHECK((none.Less(0) == 0 && none.Less(7) == 0));
}

// ---- loop-invariant code motion

// Runs k on the emulator in one block of `threads` threads with a u32
// output buffer of `count` elements as its first parameter, then `args`;
// returns the buffer.
std::vector<uint32_t> RunWithOutput(const ir::Kernel& k, size_t count, uint32_t threads,
                                    std::initializer_list<runtime::KernelArg> args) {
  auto emu = runtime::MakeEmulator({});
  auto o = runtime::Buffer<uint32_t>::Allocate(*emu, count);
  REQUIRE(o.ok());
  absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> loaded = emu->Load(k);
  REQUIRE(Msg(loaded.status()) == "OK");
  std::vector<runtime::KernelArg> all = {*o};
  all.insert(all.end(), args.begin(), args.end());
  REQUIRE(Msg(emu->Launch(**loaded, {.grid = {1}, .block = {threads}}, all)) == "OK");
  return *o->ToHost();
}


TEST_CASE("licm: invariants whose operands die move in front of the loop, out of nested loops too", "[licm]") {
  KernelBuilder b("licm");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> a = b.Param<U32>("a");
  Value<U32> c = b.Param<U32>("c");
  Value<U32> d = b.Param<U32>("d");
  b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) {
    b.ForRange<U32>(0u, n, 1u, [&](Value<U32> j) {
      Value<U32> ac = b.Mul(a, c);                 // a and c are read only here: leaves both loops
      Value<U32> q = b.Div(ac, b.Add(d, 0u));      // d too; division by zero is defined, so moving it is safe
      Value<U32> lane = b.Add(b.TidX(), q);        // the mov of %tid.x is copied along
      b.Store(StateSpace::kGlobal, out, b.Add(b.Add(lane, i), j));
      b.Store(StateSpace::kGlobal, Address(out, 4), b.TidX());
    });
  });
  ir::Kernel k = Finished(b);
  const ir::Kernel plain = k;
  REQUIRE(passes::HoistLoopInvariants(k) == 9);  // 5 leave the inner loop, 4 of them the outer one too
  RequireVerifies(k);
  passes::RemoveDeadRegisters(k);
  // Same results, with zero trips (the hoisted division by zero runs anyway) and with some.
  for (uint32_t n : {0u, 3u}) {
    for (uint32_t d : {0u, 2u}) {
      INFO(n << " " << d);
      CHECK(RunWithOutput(k, 2, 1, {n, 5u, 7u, d}) == RunWithOutput(plain, 2, 1, {n, 5u, 7u, d}));
    }
  }
  REQUIRE(DumpIr(k) ==
          "kernel licm target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "  param u32 a\n"
          "  param u32 c\n"
          "  param u32 d\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %1:u32 = ld.param.u32 [a]  // a\n"
          "  %2:u32 = ld.param.u32 [c]  // c\n"
          "  %3:u32 = ld.param.u32 [d]  // d\n"
          "  %4:u64 = ld.param.u64 [out]  // out\n"
          "  %5:u64 = cvta.to.global.u64 %4\n"
          "  %6:u32 = mov.u32 0  // i mutable\n"
          "  %11:u32 = mul.lo.u32 %1, %2\n"
          "  %12:u32 = add.u32 %3, 0\n"
          "  %13:u32 = div.u32 %11, %12\n"
          "  %21:u32 = mov.u32 %tid.x\n"
          "  %14:u32 = add.u32 %21, %13\n"
          "$L0_loop:\n"
          "  %7:pred = setp.ge.u32 %6, %0\n"
          "  @%7 bra $L1_endloop\n"
          "  %8:u32 = mov.u32 0  // i mutable\n"
          "  %15:u32 = add.u32 %14, %6\n"
          "$L2_loop:\n"
          "  %9:pred = setp.ge.u32 %8, %0\n"
          "  @%9 bra $L3_endloop\n"
          "  %16:u32 = add.u32 %15, %8\n"
          "  st.global.u32 [%5], %16\n"
          "  %17:u32 = mov.u32 %tid.x\n"
          "  st.global.u32 [%5+4], %17\n"
          "  %18:u32 = add.u32 %8, 1\n"
          "  %8:u32 = mov.u32 %18  // i mutable\n"
          "  bra $L2_loop\n"
          "$L3_endloop:\n"
          "  %19:u32 = add.u32 %6, 1\n"
          "  %6:u32 = mov.u32 %19  // i mutable\n"
          "  bra $L0_loop\n"
          "$L1_endloop:\n"
          "  ret\n"
          "}\n");
}

TEST_CASE("licm: what must stay in the loop", "[licm]") {
  KernelBuilder b("licm_stay");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> a = b.Param<U32>("a");
  Value<U32> e = b.Param<U32>("e");
  Value<Pred> p = b.Lt(a, 3u);
  b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) {
    Value<U32> v = b.Load<U32>(StateSpace::kGlobal, out);  // a load: a store in the loop may change it
    Value<U32> grows = b.Mul(n, 3u);                       // n stays live anyway: hoisting adds a register
    Value<U32> clock = b.Clock();                           // changes between reads
    Value<U32> lane = b.ShflDown(a, 1u);                    // warp-level: depends on the threads present
    Value<U32> varies = b.Add(i, 1u);                       // reads the loop counter
    Value<U32> guarded = b.Undefined<U32>("guarded");  // `@p add guarded, a, e`: predicated
    ir::Instruction add;
    add.op = ir::Opcode::kAdd;
    add.mods.type = ir::ScalarType::kU32;
    add.dsts = {guarded.reg};
    add.srcs = {ir::Operand(a.reg), ir::Operand(e.reg)};
    add.guard = p.reg;
    b.EmitInstruction(add);
    ir::Instruction store;
    store.op = ir::Opcode::kSt;
    store.mods.type = ir::ScalarType::kU32;
    store.mods.space = StateSpace::kGlobal;
    store.srcs = {ir::Operand::AddrReg(out.reg, 4), ir::Operand(guarded.reg)};
    store.guard = p.reg;
    b.EmitInstruction(store);
    b.Store(StateSpace::kGlobal, out, b.Add(b.Add(v, grows), b.Add(b.Add(clock, lane), varies)));
  });
  ir::Kernel k = Finished(b);
  RequireUnchanged(k, passes::HoistLoopInvariants);
}

TEST_CASE("licm: a loop entered from two places is left alone (no preheader is made)", "[licm]") {
  KernelBuilder b("licm_two_entries");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> a = b.Param<U32>("a");
  Value<U32> c = b.Param<U32>("c");
  Var<U32> i = b.Mutable<U32>(0u, "i");
  ir::Label head = b.NewLabel("head");
  b.If(b.Lt(n, 5u), [&] { b.Bra(head); });  // a second way into the loop
  b.Bind(head);
  b.Store(StateSpace::kGlobal, out, b.Add(b.Mul(a, c), i));  // invariant, but there is no one place before the loop
  b.Assign(i, b.Add(i, 1u));
  b.BraIf(b.Lt(i, n), head);
  ir::Kernel k = Finished(b);
  RequireUnchanged(k, passes::HoistLoopInvariants);
}

// ---- strength reduction

TEST_CASE("strength: base + i*size in the induction variable's width becomes a stepped register", "[strength]") {
  KernelBuilder b("strength");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U64> n = b.Param<U64>("n");
  auto tile = b.Shared<U32>("tile", 32 * 3);
  Value<U32> t = b.SymbolAddr(tile);
  b.ForRange<U64>(b.Cvt<U64>(b.TidX()), n, 32u, [&](Value<U64> i) {
    Value<U64> at = b.ElementAddr<U32>(out, i);      // shl.b64 + add.u64: exact modulo 2^64
    Value<U64> again = b.Add(out, b.Shl(i, 2u));     // the same address: the same register
    Value<U32> i32 = b.Cvt<U32>(i);
    b.Store(StateSpace::kGlobal, at, b.Add(b.Load<U32>(StateSpace::kGlobal, again), i32));
    Value<U64> y = b.Shl(i, 2u);                    // read by the address and by the value stored: stays
    b.Store(StateSpace::kGlobal, b.Add(out, y), b.Cvt<U32>(y));
    b.If(b.Lt(i32, 32u), [&] {
      b.Store(StateSpace::kShared, b.Add(t, b.Mul(i32, 12u)), i32);  // i32 is no induction variable: stays
    });
  });
  ir::Kernel k = Finished(b);
  ir::Kernel plain = k;
  REQUIRE(passes::ReduceAddressStrength(k) == 3);
  RequireVerifies(k);
  // The reduced addresses go, and the shifts only they read go with them:
  // nothing is left for dce.
  REQUIRE(DumpIr(k) ==
          "kernel strength target sm_80\n"
          "  param u64 out\n"
          "  param u64 n\n"
          "  shared u32 tile[96] align 4\n"
          "{\n"
          "  %0:u64 = ld.param.u64 [n]  // n\n"
          "  %1:u64 = ld.param.u64 [out]  // out\n"
          "  %2:u64 = cvta.to.global.u64 %1\n"
          "  %3:u32 = mov.u32 tile\n"
          "  %4:u32 = mov.u32 %tid.x\n"
          "  %5:u64 = cvt.u64.u32 %4\n"
          "  %6:u64 = mov.u64 %5  // i mutable\n"
          "  %22:u64 = mad.lo.u64 %6, 4, %2  // addr mutable\n"
          "$L0_loop:\n"
          "  %7:pred = setp.ge.u64 %6, %0\n"
          "  @%7 bra $L1_endloop\n"
          "  %10:u32 = ld.global.u32 [%22]\n"
          "  %11:u32 = cvt.u32.u64 %6\n"
          "  %12:u32 = add.u32 %10, %11\n"
          "  st.global.u32 [%22], %12\n"
          "  %15:u64 = shl.b64 %6, 2\n"
          "  %16:u32 = cvt.u32.u64 %15\n"
          "  st.global.u32 [%22], %16\n"
          "  %18:pred = setp.lt.u32 %11, 32\n"
          "  @!%18 bra $L2_endif\n"
          "  %19:u32 = mul.lo.u32 %11, 12\n"
          "  %20:u32 = add.u32 %3, %19\n"
          "  st.shared.u32 [%20], %11\n"
          "$L2_endif:\n"
          "  %21:u64 = add.u64 %6, 32\n"
          "  %6:u64 = mov.u64 %21  // i mutable\n"
          "  %22:u64 = add.u64 %22, 128  // addr mutable\n"
          "  bra $L0_loop\n"
          "$L1_endloop:\n"
          "  ret\n"
          "}\n");
  CHECK(passes::RemoveDeadRegisters(k) == 0);
  // Same results, including a count that is not a multiple of the step.
  passes::RemoveDeadRegisters(plain);
  for (uint64_t count : {0, 5, 100}) {
    INFO(count);
    CHECK(RunWithOutput(k, 100, 32, {count}) == RunWithOutput(plain, 100, 32, {count}));
  }
}

// The analyses a pipeline run shares (passes/analyses.h) follow licm's and
// strength reduction's edits: nothing is built again after them, and what
// is kept equals a fresh computation (Check).
TEST_CASE("licm and strength reduction keep the shared analyses true without building them again", "[licm]") {
  KernelBuilder b("follow");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> a = b.Param<U32>("a");
  Value<U64> m = b.Param<U64>("m");
  b.ForRange<U64>(0u, m, 1u, [&](Value<U64> i) {
    b.ForRange<U32>(0u, n, 1u, [&](Value<U32> j) {
      Value<U32> lane = b.Add(b.TidX(), b.Mul(a, 3u));  // leaves both loops, with a copy of the %tid.x mov
      b.Store(StateSpace::kGlobal, out, b.Add(lane, j));
    });
    b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(out, i), b.Cvt<U32>(i));  // out + i*4: a stepped pointer
  });
  ir::Kernel k = Finished(b);
  passes::Analyses analyses(k);
  analyses.loops();
  analyses.values();  // what licm has at hand in a pipeline run
  auto kept = [&] {
    return StrCat(int{analyses.has_cfg()}, int{analyses.has_dominators()}, int{analyses.has_loops()},
                  int{analyses.has_values()}, int{analyses.has_summary()}, " ", Msg(analyses.Check()));
  };
  REQUIRE(kept() == "11111 OK");
  REQUIRE(passes::HoistLoopInvariants(k, analyses) == 4);
  CHECK(kept() == "11111 OK");
  REQUIRE(passes::ReduceAddressStrength(k, analyses) == 1);
  CHECK(kept() == "11111 OK");
  passes::RemoveDeadRegisters(k, analyses);  // dce follows its deletions as before
  CHECK(kept() == "11011 OK");
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel follow target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "  param u32 a\n"
          "  param u64 m\n"
          "{\n"
          "  %0:u64 = ld.param.u64 [m]  // m\n"
          "  %1:u32 = ld.param.u32 [n]  // n\n"
          "  %2:u32 = ld.param.u32 [a]  // a\n"
          "  %3:u64 = ld.param.u64 [out]  // out\n"
          "  %4:u64 = cvta.to.global.u64 %3\n"
          "  %5:u64 = mov.u64 0  // i mutable\n"
          "  %10:u32 = mul.lo.u32 %2, 3\n"
          "  %19:u32 = mov.u32 %tid.x\n"
          "  %11:u32 = add.u32 %19, %10\n"
          "  %20:u64 = mad.lo.u64 %5, 4, %4  // addr mutable\n"
          "$L0_loop:\n"
          "  %6:pred = setp.ge.u64 %5, %0\n"
          "  @%6 bra $L1_endloop\n"
          "  %7:u32 = mov.u32 0  // i mutable\n"
          "$L2_loop:\n"
          "  %8:pred = setp.ge.u32 %7, %1\n"
          "  @%8 bra $L3_endloop\n"
          "  %12:u32 = add.u32 %11, %7\n"
          "  st.global.u32 [%4], %12\n"
          "  %13:u32 = add.u32 %7, 1\n"
          "  %7:u32 = mov.u32 %13  // i mutable\n"
          "  bra $L2_loop\n"
          "$L3_endloop:\n"
          "  %14:u32 = cvt.u32.u64 %5\n"
          "  st.global.u32 [%20], %14\n"
          "  %17:u64 = add.u64 %5, 1\n"
          "  %5:u64 = mov.u64 %17  // i mutable\n"
          "  %20:u64 = add.u64 %20, 4  // addr mutable\n"
          "  bra $L0_loop\n"
          "$L1_endloop:\n"
          "  ret\n"
          "}\n");
}

// A kernel whose blocks end in every way an edit meets: a guarded branch
// falling into a block without a label (B1), a block falling into a label
// (B1 into mid), a guarded branch falling into a label (B2 into skip), and
// a ret.
ir::Kernel EditShapes() {
  KernelBuilder b("shapes");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  ir::Label skip = b.NewLabel("skip");
  ir::Label mid = b.NewLabel("mid");
  b.BraIf(b.Lt(n, 5u), skip);
  b.Store(StateSpace::kGlobal, out, b.Add(n, 1u));
  b.Bind(mid);
  b.Store(StateSpace::kGlobal, Address(out, 4), n);
  b.BraIf(b.Lt(n, 9u), skip);
  b.Bind(skip);
  return Finished(b);
}

// `mov.u32 %new, 7` into a new register of k.
ir::Instruction MovSeven(ir::Kernel& k) {
  ir::Instruction inst;
  inst.op = ir::Opcode::kMov;
  inst.mods.type = ir::ScalarType::kU32;
  inst.dsts = {k.AddReg(ir::ScalarType::kU32)};
  inst.srcs = {ir::Operand::Imm(ir::ScalarType::kU32, 7)};
  return inst;
}

TEST_CASE("an edit keeps the shared analyses only while the blocks keep their shape", "[loops]") {
  const ir::Kernel shapes = EditShapes();
  REQUIRE(DumpIr(shapes) ==
          "kernel shapes target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u64 = ld.param.u64 [out]  // out\n"
          "  %1:u64 = cvta.to.global.u64 %0\n"
          "  %2:u32 = ld.param.u32 [n]  // n\n"
          "  %3:pred = setp.lt.u32 %2, 5\n"
          "  @%3 bra $L0_skip\n"
          "  %4:u32 = add.u32 %2, 1\n"
          "  st.global.u32 [%1], %4\n"
          "$L1_mid:\n"
          "  st.global.u32 [%1+4], %2\n"
          "  %5:pred = setp.lt.u32 %2, 9\n"
          "  @%5 bra $L0_skip\n"
          "$L0_skip:\n"
          "  ret\n"
          "}\n");
  // Each edit: where it puts a `mov %new, 7` (or kNone), what it drops, and
  // whether the CFG is still at hand after it (the value table with it).
  constexpr uint32_t kNone = UINT32_MAX;
  struct Case {
    const char* what;
    uint32_t insert_before;
    std::vector<uint32_t> drops;
    bool moves_add;  // the add of B1 goes in front of body[insert_before] instead of the mov
    bool kept;
  };
  const Case cases[] = {
      {"at the start of a block after a guarded branch", 5, {}, false, true},
      {"in front of a label the block before falls into", 7, {}, false, true},
      {"inside a block", 6, {}, false, true},
      {"an instruction moved to another block", 7, {5}, true, true},
      {"the first instruction of a block dropped", kNone, {5}, false, true},
      {"in front of a label after a guarded branch: a block of its own", 11, {}, false, false},
      {"after the last ret", 13, {}, false, false},
      {"every instruction of a block dropped", kNone, {5, 6}, false, false},
      {"a branch dropped", kNone, {4}, false, false},
      {"a label dropped", kNone, {7}, false, false},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    ir::Kernel k = shapes;
    passes::Analyses analyses(k);
    analyses.values();
    analyses.idom();
    passes::BodyEdit edit(k.body);
    if (c.insert_before != kNone) {
      ir::Instruction inst;
      if (c.moves_add) {
        inst = std::move(k.body[5]);
      } else {
        inst = MovSeven(k);
      }
      edit.InsertBefore(c.insert_before, std::move(inst));
    }
    for (uint32_t i : c.drops) edit.Drop(i);
    analyses.ApplyEdit(edit, k);
    CHECK(analyses.has_cfg() == c.kept);
    CHECK(analyses.has_dominators() == c.kept);
    CHECK(analyses.has_values() == c.kept);
    CHECK(Msg(analyses.Check()) == "OK");
  }
  // In front of a label at index 0: a block of its own.
  {
    ir::Kernel k = shapes;
    k.body.erase(k.body.begin(), k.body.begin() + 7);  // from $L1_mid on
    passes::Analyses analyses(k);
    analyses.values();
    passes::BodyEdit edit(k.body);
    edit.InsertBefore(0, MovSeven(k));
    analyses.ApplyEdit(edit, k);
    CHECK(!analyses.has_cfg());
    CHECK(Msg(analyses.Check()) == "OK");
  }
  // What no later pass reads is dropped first, not followed.
  ir::Kernel k = shapes;
  passes::Analyses analyses(k);
  analyses.values();
  analyses.idom();
  analyses.SetReadLater(passes::analysis::kCfg);
  passes::BodyEdit edit(k.body);
  edit.Drop(8);
  analyses.ApplyEdit(edit, k);
  CHECK((analyses.has_cfg() && !analyses.has_dominators() && !analyses.has_values()));
  CHECK(Msg(analyses.Check()) == "OK");
}

// A deletion (RemoveMarked: CSE's and dce's) is followed with drop-only
// remapping (Analyses::DropFromBlocks, Values::AfterRemoval): the blocks
// shift and the value table loses the dropped definitions, unless a block
// empties or a branch or label goes.
TEST_CASE("a deletion keeps the shared analyses only while no block empties", "[cse]") {
  const ir::Kernel shapes = EditShapes();  // the kernel of the test above
  struct Case {
    const char* what;
    std::vector<uint32_t> drops;
    bool cfg_kept;
  };
  const Case cases[] = {
      {"the first instructions of the entry block", {0, 1}, true},
      {"one instruction of each of two blocks", {5, 8}, true},
      {"the setp in front of a branch", {9}, true},
      {"every instruction of a block", {5, 6}, false},
      {"a branch", {4}, false},
      {"a label", {7}, false},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    ir::Kernel k = shapes;
    passes::Analyses analyses(k);
    analyses.values();
    analyses.idom();
    std::vector<bool> dead(k.body.size(), false);
    for (uint32_t i : c.drops) dead[i] = true;
    REQUIRE(passes::RemoveMarked(k, dead, &analyses) == c.drops.size());
    CHECK(analyses.has_cfg() == c.cfg_kept);
    CHECK(analyses.has_dominators() == c.cfg_kept);
    CHECK(analyses.has_values());  // each dropped definition was its register's one
    CHECK(Msg(analyses.Check()) == "OK");
  }
}

TEST_CASE("the dominator tree lists each block's children in block order", "[cse]") {
  // 0 -> {1, 3}, 1 -> {2}, 3 -> {5, 6}; block 4 is unreachable.
  const std::vector<uint32_t> idom = {0, 0, 1, 0, UINT32_MAX, 3, 3};
  const ir::DominatorTree t = ir::DominatorTree::FromIdom(idom);
  CHECK(t.child_begin == std::vector<uint32_t>{0, 2, 3, 3, 5, 5, 5, 5});
  CHECK(t.children == std::vector<uint32_t>{1, 3, 2, 5, 6});
  const ir::DominatorTree one = ir::DominatorTree::FromIdom({0});
  CHECK(one.child_begin == std::vector<uint32_t>{0, 0});
  CHECK(one.children.empty());
}

TEST_CASE("strength: what is not reduced", "[strength]") {
  KernelBuilder b("strength_not");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  auto tile = b.Shared<U32>("tile", 256);
  Value<U32> t = b.SymbolAddr(tile);
  // A 32-bit index widened (mul.wide.u32 + add.u64): a 64-bit pointer would
  // part from out + zext(i)*4 once i wraps past 2^32.
  b.ForRange<U32>(b.TidX(), n, 32u, [&](Value<U32> i) { b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(out, i), i); });
  // mad.lo: one instruction either way, so a pointer stepped by one add gains nothing.
  b.ForRange<U32>(b.TidX(), 64u, 32u, [&](Value<U32> i) { b.Store(StateSpace::kShared, b.Mad(i, 4u, t), i); });
  // i*4 is read elsewhere too: the pointer would save only the add, and cost a step.
  b.ForRange<U32>(b.TidX(), 64u, 32u, [&](Value<U32> i) {
    Value<U32> y = b.Shl(i, 2u);
    b.Store(StateSpace::kShared, b.Add(t, y), y);
  });
  // The address is used after i's step (in the next block): it would need a copy.
  Var<U32> j = b.Mutable<U32>(b.TidX(), "j");
  b.While([&] { return b.Lt(j, 64u); }, [&] {
    Value<U32> addr = b.Add(t, b.Shl(j, 2u));
    b.Assign(j, b.Add(j, 32u));
    b.Store(StateSpace::kShared, addr, j);
  });
  // A step that is not a constant: no induction variable.
  b.ForRange<U32>(b.TidX(), 64u, b.NtidX(), [&](Value<U32> i) { b.Store(StateSpace::kShared, b.Add(t, b.Shl(i, 2u)), i); });
  ir::Kernel k = Finished(b);
  RequireUnchanged(k, passes::ReduceAddressStrength);
}

// ---- loop rotation

TEST_CASE("rotate: innermost loops test at their end with a guard in front unless they surely run", "[rotate]") {
  KernelBuilder b("rotate");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> tid = b.TidX();
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  // The start is the thread's: the guard stays.
  b.ForRange<U32>(tid, n, 32u, [&](Value<U32> i) { b.Assign(acc, b.Add(Value<U32>(acc), i)); });
  // 0 < 10: the loop surely runs, no guard.
  b.ForRange<U32>(0u, 10u, 3u, [&](Value<U32> i) { b.Assign(acc, b.Xor(Value<U32>(acc), i)); });
  // 5 >= 5: the loop never runs; the guard stays and leaves.
  b.ForRange<U32>(5u, 5u, 1u, [&](Value<U32> i) { b.Assign(acc, b.Add(Value<U32>(acc), i)); });
  // While branches on the test's negation (@!p): the test at the end branches on p.
  Var<U32> j = b.Mutable<U32>(tid, "j");
  b.While([&] { return b.Lt(Value<U32>(j), n); }, [&] { b.Assign(j, b.Add(Value<U32>(j), 7u)); });
  b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(out, tid), b.Add(Value<U32>(acc), Value<U32>(j)));
  ir::Kernel k = Finished(b);
  ir::Kernel plain = k;
  REQUIRE(passes::RotateLoops(k) == 4);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel rotate target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u32 = mov.u32 %tid.x\n"
          "  %1:u32 = ld.param.u32 [n]  // n\n"
          "  %2:u64 = ld.param.u64 [out]  // out\n"
          "  %3:u64 = cvta.to.global.u64 %2\n"
          "  %4:u32 = mov.u32 0  // acc mutable\n"
          "  %5:u32 = mov.u32 %0  // i mutable\n"
          "  %6:pred = setp.ge.u32 %5, %1  // mutable\n"
          "  @%6 bra $L1_endloop\n"
          "$L0_loop:\n"
          "  %7:u32 = add.u32 %4, %5\n"
          "  %4:u32 = mov.u32 %7  // acc mutable\n"
          "  %8:u32 = add.u32 %5, 32\n"
          "  %5:u32 = mov.u32 %8  // i mutable\n"
          "  %6:pred = setp.ge.u32 %5, %1  // mutable\n"
          "  @!%6 bra $L0_loop\n"
          "$L1_endloop:\n"
          "  %9:u32 = mov.u32 0  // i mutable\n"
          "$L2_loop:\n"
          "  %11:u32 = xor.b32 %4, %9\n"
          "  %4:u32 = mov.u32 %11  // acc mutable\n"
          "  %12:u32 = add.u32 %9, 3\n"
          "  %9:u32 = mov.u32 %12  // i mutable\n"
          "  %10:pred = setp.ge.u32 %9, 10  // mutable\n"
          "  @!%10 bra $L2_loop\n"
          "$L3_endloop:\n"
          "  %13:u32 = mov.u32 5  // i mutable\n"
          "  %14:pred = setp.ge.u32 %13, 5  // mutable\n"
          "  @%14 bra $L5_endloop\n"
          "$L4_loop:\n"
          "  %15:u32 = add.u32 %4, %13\n"
          "  %4:u32 = mov.u32 %15  // acc mutable\n"
          "  %16:u32 = add.u32 %13, 1\n"
          "  %13:u32 = mov.u32 %16  // i mutable\n"
          "  %14:pred = setp.ge.u32 %13, 5  // mutable\n"
          "  @!%14 bra $L4_loop\n"
          "$L5_endloop:\n"
          "  %17:u32 = mov.u32 %0  // j mutable\n"
          "  %18:pred = setp.lt.u32 %17, %1  // mutable\n"
          "  @!%18 bra $L7_endwhile\n"
          "$L6_while:\n"
          "  %19:u32 = add.u32 %17, 7\n"
          "  %17:u32 = mov.u32 %19  // j mutable\n"
          "  %18:pred = setp.lt.u32 %17, %1  // mutable\n"
          "  @%18 bra $L6_while\n"
          "$L7_endwhile:\n"
          "  %20:u32 = add.u32 %4, %17\n"
          "  %21:u64 = mul.wide.u32 %0, 4\n"
          "  %22:u64 = add.u64 %3, %21\n"
          "  st.global.u32 [%22], %20\n"
          "  ret\n"
          "}\n");
  // Same results for trip counts of 0, 1 and several (the equivalence test
  // below counts the instructions the registry kernels run).
  for (uint32_t count : {0u, 1u, 5u, 40u, 100u}) {
    INFO(count);
    CHECK(RunWithOutput(k, 32, 32, {count}) == RunWithOutput(plain, 32, 32, {count}));
  }
}

TEST_CASE("rotate: a loop whose body reads its test keeps the guard", "[rotate]") {
  KernelBuilder b("rotate_reads");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Var<U32> j = b.Mutable<U32>(0u, "j");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  Value<Pred> go;
  // 0 < 4 is known, but the body reads the test's predicate: without the
  // guard it would have no value in the first iteration.
  b.While([&] { return go = b.Lt(Value<U32>(j), 4u); },
          [&] {
            b.Assign(acc, b.Add(Value<U32>(acc), b.Select(go, Value<U32>(j), 100u)));
            b.Assign(j, b.Add(Value<U32>(j), 1u));
          });
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  ir::Kernel k = Finished(b);
  ir::Kernel plain = k;
  REQUIRE(passes::RotateLoops(k) == 1);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel rotate_reads target sm_80\n"
          "  param u64 out\n"
          "{\n"
          "  %0:u64 = ld.param.u64 [out]  // out\n"
          "  %1:u64 = cvta.to.global.u64 %0\n"
          "  %2:u32 = mov.u32 0  // j mutable\n"
          "  %3:u32 = mov.u32 0  // acc mutable\n"
          "  %4:pred = setp.lt.u32 %2, 4  // mutable\n"
          "  @!%4 bra $L1_endwhile\n"
          "$L0_while:\n"
          "  %5:u32 = selp.u32 %2, 100, %4\n"
          "  %6:u32 = add.u32 %3, %5\n"
          "  %3:u32 = mov.u32 %6  // acc mutable\n"
          "  %7:u32 = add.u32 %2, 1\n"
          "  %2:u32 = mov.u32 %7  // j mutable\n"
          "  %4:pred = setp.lt.u32 %2, 4  // mutable\n"
          "  @%4 bra $L0_while\n"
          "$L1_endwhile:\n"
          "  st.global.u32 [%1], %3\n"
          "  ret\n"
          "}\n");
  CHECK(RunWithOutput(k, 1, 1, {}) == std::vector<uint32_t>{6});
  CHECK(RunWithOutput(plain, 1, 1, {}) == std::vector<uint32_t>{6});
}

TEST_CASE("rotate: a loop that can be left from its body keeps the guard", "[rotate]") {
  KernelBuilder b("rotate_break");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> tid = b.TidX();
  Var<U32> j = b.Mutable<U32>(0u, "j");
  // 0 < 4 is known, but a thread leaves from the body when j reaches its
  // index, before any test at the end, and reads the test's predicate after
  // the loop: without the guard it would have no value there.
  ir::Label head = b.NewLabel("head");
  ir::Label done = b.NewLabel("done");
  b.Bind(head);
  Value<Pred> go = b.Lt(Value<U32>(j), 4u);
  b.BraIfNot(go, done);
  b.BraIf(b.Eq(Value<U32>(j), tid), done);
  b.Assign(j, b.Add(Value<U32>(j), 1u));
  b.Bra(head);
  b.Bind(done);
  b.Store(StateSpace::kGlobal, b.ElementAddr<U32>(out, tid), b.Select(go, Value<U32>(j), 100u));
  ir::Kernel k = Finished(b);
  ir::Kernel plain = k;
  REQUIRE(passes::RotateLoops(k) == 1);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel rotate_break target sm_80\n"
          "  param u64 out\n"
          "{\n"
          "  %0:u32 = mov.u32 %tid.x\n"
          "  %1:u64 = ld.param.u64 [out]  // out\n"
          "  %2:u64 = cvta.to.global.u64 %1\n"
          "  %3:u32 = mov.u32 0  // j mutable\n"
          "  %4:pred = setp.lt.u32 %3, 4  // mutable\n"
          "  @!%4 bra $L1_done\n"
          "$L0_head:\n"
          "  %5:pred = setp.eq.u32 %3, %0\n"
          "  @%5 bra $L1_done\n"
          "  %6:u32 = add.u32 %3, 1\n"
          "  %3:u32 = mov.u32 %6  // j mutable\n"
          "  %4:pred = setp.lt.u32 %3, 4  // mutable\n"
          "  @%4 bra $L0_head\n"
          "$L1_done:\n"
          "  %7:u32 = selp.u32 %3, 100, %4\n"
          "  %8:u64 = mul.wide.u32 %0, 4\n"
          "  %9:u64 = add.u64 %2, %8\n"
          "  st.global.u32 [%9], %7\n"
          "  ret\n"
          "}\n");
  CHECK(RunWithOutput(k, 8, 8, {}) == std::vector<uint32_t>{0, 1, 2, 3, 100, 100, 100, 100});
  CHECK(RunWithOutput(plain, 8, 8, {}) == std::vector<uint32_t>{0, 1, 2, 3, 100, 100, 100, 100});
}

TEST_CASE("rotate: what is not rotated", "[rotate]") {
  KernelBuilder b("rotate_not");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  // A header that computes more than its test.
  Var<U32> j = b.Mutable<U32>(0u, "j");
  b.While([&] { return b.Lt(b.Add(Value<U32>(j), 1u), n); }, [&] { b.Assign(j, b.Add(Value<U32>(j), 1u)); });
  // A loop of more than 64 instructions.
  b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) {
    for (int k = 0; k < 31; ++k) b.Assign(acc, b.Add(Value<U32>(acc), i));
  });
  // Two edges back into the header: a `continue` before the end.
  ir::Label head = b.NewLabel("head");
  ir::Label done = b.NewLabel("done");
  Var<U32> t = b.Mutable<U32>(0u, "t");
  b.Bind(head);
  b.BraIf(b.Ge(Value<U32>(t), n), done);
  b.Assign(t, b.Add(Value<U32>(t), 1u));
  b.BraIf(b.Lt(Value<U32>(t), 3u), head);
  b.Assign(acc, b.Add(Value<U32>(acc), Value<U32>(t)));
  b.Bra(head);
  b.Bind(done);
  // The exit is not right after the latch.
  ir::Label top = b.NewLabel("top");
  ir::Label out_of = b.NewLabel("out_of");
  ir::Label latch = b.NewLabel("latch");
  Var<U32> u = b.Mutable<U32>(0u, "u");
  b.Bra(latch);
  b.Bind(out_of);
  b.Store(StateSpace::kGlobal, out, b.Add(Value<U32>(acc), b.Add(Value<U32>(j), Value<U32>(u))));
  b.Ret();
  b.Bind(latch);
  b.Bind(top);
  b.BraIf(b.Ge(Value<U32>(u), n), out_of);
  b.Assign(u, b.Add(Value<U32>(u), 2u));
  b.Bra(top);
  ir::Kernel k = Finished(b);
  RequireUnchanged(k, passes::RotateLoops);
}

TEST_CASE("rotate: of nested loops only the innermost, in a pipeline after strength reduction", "[rotate]") {
  KernelBuilder b("rotate_nest");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) {
    b.ForRange<U32>(i, n, 1u, [&](Value<U32> k) {
      b.Assign(acc, b.Add(b.Add(Value<U32>(acc), k), b.Load<U32>(StateSpace::kGlobal, b.ElementAddr<U32>(out, k))));
    });
  });
  b.Store(StateSpace::kGlobal, out, Value<U32>(acc));
  ir::Kernel k = Finished(b);
  ir::Kernel plain = k;
  passes::PipelineOptions options;
  options.verify_each = true;
  REQUIRE(Msg(passes::Pipeline::Standard(options).Run(k)) == "OK");
  REQUIRE(DumpIr(k) ==
          "kernel rotate_nest target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %1:u64 = ld.param.u64 [out]  // out\n"
          "  %2:u64 = cvta.to.global.u64 %1\n"
          "  %3:u32 = mov.u32 0  // acc mutable\n"
          "  %4:u32 = mov.u32 0  // i mutable\n"
          "$L0_loop:\n"
          "  %5:pred = setp.ge.u32 %4, %0\n"
          "  @%5 bra $L1_endloop\n"
          "  %6:u32 = mov.u32 %4  // i mutable\n"
          "  %7:pred = setp.ge.u32 %6, %0  // mutable\n"
          "  @%7 bra $L3_endloop\n"
          "$L2_loop:\n"
          "  %8:u32 = add.u32 %3, %6\n"
          "  %9:u64 = mul.wide.u32 %6, 4\n"
          "  %10:u64 = add.u64 %2, %9\n"
          "  %11:u32 = ld.global.u32 [%10]\n"
          "  %12:u32 = add.u32 %8, %11\n"
          "  %3:u32 = mov.u32 %12  // acc mutable\n"
          "  %13:u32 = add.u32 %6, 1\n"
          "  %6:u32 = mov.u32 %13  // i mutable\n"
          "  %7:pred = setp.ge.u32 %6, %0  // mutable\n"
          "  @!%7 bra $L2_loop\n"
          "$L3_endloop:\n"
          "  %14:u32 = add.u32 %4, 1\n"
          "  %4:u32 = mov.u32 %14  // i mutable\n"
          "  bra $L0_loop\n"
          "$L1_endloop:\n"
          "  st.global.u32 [%2], %3\n"
          "  ret\n"
          "}\n");
  for (uint32_t count : {0u, 1u, 7u}) {
    INFO(count);
    const std::vector<uint32_t> got = RunWithOutput(k, 8, 1, {count});
    // The buffer starts zeroed: the sum over i <= k < count of k, k(k + 1) over k < count.
    CHECK(got[0] == (count == 0 ? 0 : (count - 1) * count * (count + 1) / 3));
    CHECK(got == RunWithOutput(plain, 8, 1, {count}));
  }
}

// ---- division by a power of two

TEST_CASE("pow2div: u16 division and the largest powers of two of each width", "[pow2div]") {
  KernelBuilder b("pow2div_wide");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  Value<U64> y = b.Param<U64>("y");
  Value<U16> h = b.Cvt<U16>(x);
  b.Store(StateSpace::kGlobal, out, b.Div(h, uint16_t{0x8000}));                  // shr.u16 h, 15
  b.Store(StateSpace::kGlobal, Address(out, 2), b.Rem(h, uint16_t{0x8000}));      // and.b16 h, 32767
  b.Store(StateSpace::kGlobal, Address(out, 4), b.Div(x, 0x80000000u));           // shr.u32 x, 31
  b.Store(StateSpace::kGlobal, Address(out, 8), b.Div(y, uint64_t{1} << 63));     // shr.u64 y, 63
  b.Store(StateSpace::kGlobal, Address(out, 16), b.Rem(y, uint64_t{1} << 63));    // and.b64 y, 2^63 - 1
  ir::Kernel k = Finished(b);
  ir::Kernel plain = k;
  REQUIRE(passes::ReducePow2Division(k) == 5);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel pow2div_wide target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "  param u64 y\n"
          "{\n"
          "  %0:u64 = ld.param.u64 [y]  // y\n"
          "  %1:u32 = ld.param.u32 [x]  // x\n"
          "  %2:u16 = cvt.u16.u32 %1\n"
          "  %3:u16 = shr.u16 %2, 15\n"
          "  %4:u64 = ld.param.u64 [out]  // out\n"
          "  %5:u64 = cvta.to.global.u64 %4\n"
          "  st.global.u16 [%5], %3\n"
          "  %6:u16 = and.b16 %2, 32767\n"
          "  st.global.u16 [%5+2], %6\n"
          "  %7:u32 = shr.u32 %1, 31\n"
          "  st.global.u32 [%5+4], %7\n"
          "  %8:u64 = shr.u64 %0, 63\n"
          "  st.global.u64 [%5+8], %8\n"
          "  %9:u64 = and.b64 %0, 9223372036854775807\n"
          "  st.global.u64 [%5+16], %9\n"
          "  ret\n"
          "}\n");
  for (uint64_t yv : {uint64_t{0}, uint64_t{1}, (uint64_t{1} << 63) - 1, uint64_t{1} << 63, ~uint64_t{0}}) {
    for (uint32_t xv : {0u, 1u, 0x7FFFu, 0x8000u, 0xFFFFu, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
      CHECK(RunWithOutput(k, 6, 1, {xv, yv}) == RunWithOutput(plain, 6, 1, {xv, yv}));
    }
  }
}

TEST_CASE("pow2div: unsigned x/2^k and x%2^k become shr and and, nothing else changes", "[pow2div]") {
  KernelBuilder b("pow2div");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  Value<U64> y = b.Param<U64>("y");
  Value<U32> n = b.Param<U32>("n");
  Value<U16> h = b.Cvt<U16>(x);
  const std::vector<Value<U32>> results = {
      b.Div(x, 32u),                       // shr.u32 x, 5
      b.Rem(x, 32u),                       // and.b32 x, 31
      b.Cvt<U32>(b.Div(y, uint64_t{8})),   // shr.u64 y, 3
      b.Cvt<U32>(b.Rem(y, uint64_t{4096})),  // and.b64 y, 4095
      b.Div(x, 1u),                        // shr.u32 x, 0 (identities makes it a mov)
      b.Rem(x, 1u),                        // and.b32 x, 0
      b.Cvt<U32>(b.Rem(h, uint16_t{4})),   // and.b16 h, 3
      b.Div(x, 6u),                        // not a power of two: stays
      b.Cvt<U32>(b.Div(b.Cvt<S32>(x), int32_t{4})),  // signed (rounds towards zero): stays
      b.Div(x, n),                         // a register: stays
      b.Rem(x, 0u),                        // x % 0 is x (ir/semantics.h): stays
  };
  for (size_t i = 0; i < results.size(); ++i) b.Store(StateSpace::kGlobal, Address(out, 4 * i), results[i]);
  ir::Kernel k = Finished(b);
  ir::Kernel plain = k;
  REQUIRE(passes::ReducePow2Division(k) == 7);
  RequireVerifies(k);
  REQUIRE(DumpIr(k) ==
          "kernel pow2div target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "  param u64 y\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %1:u32 = and.b32 %0, 31\n"
          "  %2:u64 = ld.param.u64 [y]  // y\n"
          "  %3:u64 = shr.u64 %2, 3\n"
          "  %4:u32 = cvt.u32.u64 %3\n"
          "  %5:u64 = and.b64 %2, 4095\n"
          "  %6:u32 = cvt.u32.u64 %5\n"
          "  %7:u32 = shr.u32 %0, 0\n"
          "  %8:u32 = and.b32 %0, 0\n"
          "  %9:u16 = cvt.u16.u32 %0\n"
          "  %10:u16 = and.b16 %9, 3\n"
          "  %11:u32 = cvt.u32.u16 %10\n"
          "  %12:u32 = div.u32 %0, 6\n"
          "  %13:s32 = cvt.s32.u32 %0\n"
          "  %14:s32 = div.s32 %13, 4\n"
          "  %15:u32 = cvt.u32.s32 %14\n"
          "  %16:u32 = ld.param.u32 [n]  // n\n"
          "  %17:u32 = div.u32 %0, %16\n"
          "  %18:u32 = rem.u32 %0, 0\n"
          "  %19:u32 = shr.u32 %0, 5\n"
          "  %20:u64 = ld.param.u64 [out]  // out\n"
          "  %21:u64 = cvta.to.global.u64 %20\n"
          "  st.global.u32 [%21], %19\n"
          "  st.global.u32 [%21+4], %1\n"
          "  st.global.u32 [%21+8], %4\n"
          "  st.global.u32 [%21+12], %6\n"
          "  st.global.u32 [%21+16], %7\n"
          "  st.global.u32 [%21+20], %8\n"
          "  st.global.u32 [%21+24], %11\n"
          "  st.global.u32 [%21+28], %12\n"
          "  st.global.u32 [%21+32], %15\n"
          "  st.global.u32 [%21+36], %17\n"
          "  st.global.u32 [%21+40], %18\n"
          "  ret\n"
          "}\n");
  for (uint32_t v : {0u, 1u, 31u, 32u, 1000003u, 0x80000000u, 0xFFFFFFFFu}) {
    INFO(v);
    const uint64_t w = uint64_t{v} * 0x100000001u + 5;
    CHECK(RunWithOutput(k, results.size(), 1, {v, w, 7u}) == RunWithOutput(plain, results.size(), 1, {v, w, 7u}));
  }
  CHECK(RunWithOutput(k, results.size(), 1, {1000003u, uint64_t{0x123456789}, 7u}) ==
        std::vector<uint32_t>{31250, 3, 0x2468ACF1, 0x789, 1000003, 0, 3, 166667, 250000, 142857, 1000003});
  RequireUnchanged(k, passes::ReducePow2Division);
}

// ---- dead branches

TEST_CASE("branches: constant conditions resolved, unreachable blocks removed", "[branches]") {
  KernelBuilder b("branches");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> four = b.Const<U32>(4u);
  b.IfElse(b.Lt(four, 3u), [&] { b.Store<U32>(StateSpace::kGlobal, out, 1u); },   // never
           [&] { b.Store<U32>(StateSpace::kGlobal, out, 2u); });                   // always
  b.If(b.Eq(four, 4u), [&] { b.Store(StateSpace::kGlobal, Address(out, 4), n); });  // always
  b.If(b.Lt(n, 4u), [&] { b.Store(StateSpace::kGlobal, Address(out, 8), n); });     // unknown: stays
  ir::Kernel k = Finished(b);
  passes::FoldConstants(k);
  REQUIRE(passes::RemoveDeadBranches(k) > 0);
  RequireVerifies(k);
  passes::RemoveDeadRegisters(k);
  REQUIRE(DumpIr(k) ==
          "kernel branches target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u64 = ld.param.u64 [out]  // out\n"
          "  %1:u64 = cvta.to.global.u64 %0\n"
          "  %2:u32 = ld.param.u32 [n]  // n\n"
          "$L0_else:\n"
          "  %6:u32 = mov.u32 2\n"
          "  st.global.u32 [%1], %6\n"
          "$L1_endif:\n"
          "  st.global.u32 [%1+4], %2\n"
          "$L2_endif:\n"
          "  %8:pred = setp.lt.u32 %2, 4\n"
          "  @!%8 bra $L3_endif\n"
          "  st.global.u32 [%1+8], %2\n"
          "$L3_endif:\n"
          "  ret\n"
          "}\n");
}

// ---- the pipeline

TEST_CASE("the pipeline runs the optimisations the options leave on", "[pipeline]") {
  REQUIRE(StrJoin(passes::Pipeline::Standard().PassNames(), ",") ==
          "verify,constfold,pow2div,identities,reassoc,copyprop,cse,branches,licm,strength,rotate,dce");
  REQUIRE(StrJoin(passes::Pipeline::Standard(passes::PipelineOptions::None()).PassNames(), ",") == "verify,dce");
  passes::PipelineOptions o;
  o.cse = false;
  o.constfold = false;
  o.strength = false;
  REQUIRE(StrJoin(passes::Pipeline::Standard(o).PassNames(), ",") == "verify,pow2div,identities,reassoc,copyprop,branches,licm,rotate,dce");
  o.count_registers = true;
  REQUIRE(StrJoin(passes::Pipeline::Standard(o).PassNames(), ",") ==
          "verify,pow2div,identities,reassoc,copyprop,branches,licm,rotate,dce,regcount");
  passes::PipelineOptions none = passes::PipelineOptions::None();
  none.count_registers = true;
  REQUIRE(StrJoin(passes::Pipeline::Standard(none).PassNames(), ",") == "verify,dce,regcount");
}

std::string Parsed(std::string_view spec) {
  absl::StatusOr<passes::PipelineOptions> o = passes::PipelineOptions::Parse(spec);
  if (!o.ok()) return std::string(o.status().message());
  return StrJoin(passes::Pipeline::Standard(*o).PassNames(), ",");
}

TEST_CASE("PipelineOptions::Parse reads --passes values", "[pipeline]") {
  CHECK(Parsed("all") == "verify,constfold,pow2div,identities,reassoc,copyprop,cse,branches,licm,strength,rotate,dce");
  CHECK(Parsed("none") == "verify,dce");
  CHECK(Parsed("cse,constfold") == "verify,constfold,cse,dce");
  CHECK(Parsed("-cse,-constfold") == "verify,pow2div,identities,reassoc,copyprop,branches,licm,strength,rotate,dce");
  CHECK(Parsed("licm,strength") == "verify,licm,strength,dce");
  CHECK(Parsed("-licm") == "verify,constfold,pow2div,identities,reassoc,copyprop,cse,branches,strength,rotate,dce");
  CHECK(Parsed("-cse,+cse") == "verify,constfold,pow2div,identities,reassoc,copyprop,cse,branches,licm,strength,rotate,dce");
  CHECK(Parsed("+copyprop") == "verify,copyprop,dce");
  CHECK(Parsed("-rotate") == "verify,constfold,pow2div,identities,reassoc,copyprop,cse,branches,licm,strength,dce");
  const std::string names = "(constfold, pow2div, identities, reassoc, copyprop, cse, branches, licm, strength, rotate; or all, none)";
  CHECK(Parsed("fold") == "unknown optimisation 'fold' " + names);
  CHECK(Parsed("-dce") == "unknown optimisation 'dce' " + names);
  CHECK(Parsed("cse,,constfold") == "empty optimisation name in 'cse,,constfold' " + names);
  CHECK(Parsed("-") == "empty optimisation name in '-' " + names);
  CHECK(Parsed("") == "empty list of optimisations " + names);
  CHECK(Parsed("a\nb") == "unknown optimisation 'a\\nb' " + names);
}

// A pass that breaks the kernel: verify_each names it.
class BreakingPass : public passes::Pass {
 public:
  std::string_view name() const override { return "breaker"; }
  absl::Status Run(ir::Kernel& kernel) override {
    for (const ir::Instruction& inst : kernel.body) {
      if (inst.op == ir::Opcode::kSt) {  // a copy of the store, first: it reads registers not yet defined
        ir::Instruction copy = inst;
        kernel.body.insert(kernel.body.begin(), copy);
        break;
      }
    }
    return absl::OkStatus();
  }
};

TEST_CASE("verify_each runs the verifier after every pass and names the pass", "[pipeline]") {
  KernelBuilder b("broken");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  const int store_line = __LINE__ + 1;
  b.Store(StateSpace::kGlobal, out, b.Param<U32>("n"));
  ir::Kernel k = Finished(b);
  passes::Pipeline p;
  p.Add(std::make_unique<BreakingPass>());
  ir::Kernel copy = k;
  REQUIRE(Msg(p.Run(copy)) == "OK");  // without verify_each, nothing notices
  p.VerifyEach();
  REQUIRE(Msg(p.Run(k)) == StrCat("after pass breaker: kernel broken: optimizer_test.cc:", store_line,
                                  ": st.global.u32 [%2], %0: %2 is used before it is defined on some path"));
}

// A pass that deletes the kernel's first add. With `shared`, it claims to
// keep the shared analyses true (RunWith without telling them); without,
// it is a pass written against Run alone, after which the pipeline drops them.
class SneakyPass : public passes::Pass {
 public:
  explicit SneakyPass(bool shared) : shared_(shared) {}
  std::string_view name() const override { return "sneaky"; }
  absl::Status Run(ir::Kernel& kernel) override {
    for (size_t i = 0; i < kernel.body.size(); ++i) {
      if (kernel.body[i].op == ir::Opcode::kAdd) {
        kernel.body.erase(kernel.body.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    return absl::OkStatus();
  }
  absl::Status RunWith(ir::Kernel& kernel, passes::Analyses& analyses) override {
    return shared_ ? Run(kernel) : passes::Pass::RunWith(kernel, analyses);
  }

 private:
  bool shared_;
};

// Runs `first` (which builds shared analyses), `middle` and register
// counting with verify_each on a copy of k; the pipeline's message.
std::string RunWithVerifyEach(const ir::Kernel& k, std::unique_ptr<passes::Pass> first,
                              std::unique_ptr<passes::Pass> middle) {
  passes::Pipeline p;
  p.Add(std::move(first));
  p.Add(std::move(middle));
  p.Add(std::make_unique<passes::RegisterCountPass>());
  p.VerifyEach();
  ir::Kernel copy = k;
  return Msg(p.Run(copy));
}

TEST_CASE("verify_each names a pass that leaves the shared analyses stale", "[pipeline]") {
  KernelBuilder b("stale");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> dead = b.Add(n, 1u);  // never read: deleting it keeps the kernel valid
  (void)dead;
  b.Store(StateSpace::kGlobal, out, n);
  ir::Kernel k = Finished(b);
  for (bool shared : {false, true}) {
    INFO("shared " << shared);
    // CSE builds the CFG and the value table.
    REQUIRE(RunWithVerifyEach(k, std::make_unique<passes::CsePass>(), std::make_unique<SneakyPass>(shared)) ==
            (shared ? "after pass sneaky: the shared control-flow graph is stale (the pass did not invalidate it)" : "OK"));
  }
}

// A pass that changes nothing, reads what it is told it reads, and writes
// down which shared analyses it found at hand.
class ProbePass : public passes::Pass {
 public:
  ProbePass(std::string name, uint8_t reads, std::string* seen) : name_(std::move(name)), reads_(reads), seen_(seen) {}
  std::string_view name() const override { return name_; }
  absl::Status Run(ir::Kernel&) override { return absl::OkStatus(); }
  absl::Status RunWith(ir::Kernel&, passes::Analyses& analyses) override {
    *seen_ += StrCat(name_, ":", analyses.has_cfg() ? " cfg" : "", analyses.has_dominators() ? " dominators" : "",
                     analyses.has_loops() ? " loops" : "", analyses.has_values() ? " values" : "", "\n");
    return absl::OkStatus();
  }
  uint8_t reads() const override { return reads_; }

 private:
  std::string name_;
  uint8_t reads_;
  std::string* seen_;
};

TEST_CASE("the pipeline drops the shared analyses that no later pass reads", "[pipeline]") {
  KernelBuilder b("trim");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) { b.Store(StateSpace::kGlobal, out, b.Add(i, n)); });
  ir::Kernel k = Finished(b);
  std::string seen;
  passes::Pipeline p;
  p.Add(std::make_unique<passes::LicmPass>());  // builds the CFG, the dominators, the loops and the values
  p.Add(std::make_unique<ProbePass>("all", passes::analysis::kAll, &seen));
  p.Add(std::make_unique<ProbePass>("values", passes::analysis::kValues, &seen));
  p.Add(std::make_unique<ProbePass>("cfg", passes::analysis::kCfg, &seen));
  p.Add(std::make_unique<ProbePass>("none", 0, &seen));
  p.VerifyEach();
  REQUIRE(Msg(p.Run(k)) == "OK");
  CHECK(seen ==
        "all: cfg dominators loops values\n"  // the next passes read the values and the CFG
        "values: cfg values\n"
        "cfg: cfg\n"
        "none:\n");
}

TEST_CASE("a pipeline of more passes than the standard one tells each what the later ones read", "[pipeline]") {
  KernelBuilder b("trim_long");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  b.ForRange<U32>(0u, n, 1u, [&](Value<U32> i) { b.Store(StateSpace::kGlobal, out, b.Add(i, n)); });
  ir::Kernel k = Finished(b);
  std::string seen, expected;
  passes::Pipeline p;
  p.Add(std::make_unique<passes::LicmPass>());  // builds the CFG, the dominators, the loops and the values
  for (int i = 0; i < 20; ++i) {
    p.Add(std::make_unique<ProbePass>(StrCat("none", i), 0, &seen));
    expected += StrCat("none", i, ": cfg values\n");  // what the last two read
  }
  p.Add(std::make_unique<ProbePass>("values", passes::analysis::kValues, &seen));
  p.Add(std::make_unique<ProbePass>("cfg", passes::analysis::kCfg, &seen));
  REQUIRE(p.PassNames().size() == 23);
  REQUIRE(Msg(p.Run(k)) == "OK");
  CHECK(seen == expected + "values: cfg values\ncfg: cfg\n");
}

TEST_CASE("standard pipelines share their passes and run passes added after them", "[pipeline]") {
  KernelBuilder b("shared");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  b.Store(StateSpace::kGlobal, out, b.Add(n, 0u));
  ir::Kernel k = Finished(b);
  passes::PipelineOptions counting;
  counting.count_registers = true;
  passes::PipelineOptions no_cse = counting;
  no_cse.cse = false;
  passes::Pipeline first = passes::Pipeline::Standard(counting);
  passes::Pipeline second = passes::Pipeline::Standard(no_cse);
  std::string seen;
  second.Add(std::make_unique<ProbePass>("probe", 0, &seen));
  passes::Pipeline moved = std::move(second);  // the added pass moves with it
  const std::vector<std::string_view> names = moved.PassNames();
  REQUIRE(names.size() == first.PassNames().size());  // one optimisation fewer, one pass more
  CHECK(names.front() == "verify");
  CHECK(names.back() == "probe");
  ir::Kernel a = k, c = k;
  REQUIRE(Msg(first.Run(a)) == "OK");
  REQUIRE(Msg(moved.Run(c)) == "OK");
  CHECK(seen == "probe:\n");
  CHECK(emit::PrintIr(a) == emit::PrintIr(c));  // nothing here for CSE to do
  REQUIRE((a.stats && c.stats));
  CHECK(a.stats->instructions == c.stats->instructions);
}

// A pass that turns the kernel's first add into a sub in place, keeping the
// analyses otherwise true; with `notes` it tells the body summary.
class AddToSubPass : public passes::Pass {
 public:
  explicit AddToSubPass(bool notes) : notes_(notes) {}
  std::string_view name() const override { return "addtosub"; }
  absl::Status Run(ir::Kernel& kernel) override {
    for (ir::Instruction& inst : kernel.body) {
      if (inst.op == ir::Opcode::kAdd) {
        inst.op = ir::Opcode::kSub;
        break;
      }
    }
    return absl::OkStatus();
  }
  absl::Status RunWith(ir::Kernel& kernel, passes::Analyses& analyses) override {
    absl::Status s = Run(kernel);
    if (notes_) analyses.NoteOpcode(ir::Opcode::kSub);
    return s;
  }

 private:
  bool notes_;
};

TEST_CASE("verify_each names a pass that makes an opcode the shared body summary does not hold", "[pipeline]") {
  KernelBuilder b("summary");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  b.Store(StateSpace::kGlobal, out, b.Add(n, 1u));
  ir::Kernel k = Finished(b);
  for (bool notes : {false, true}) {
    INFO("notes " << notes);
    // Constant folding builds the value table and the summary.
    REQUIRE(RunWithVerifyEach(k, std::make_unique<passes::ConstantFoldingPass>(), std::make_unique<AddToSubPass>(notes)) ==
            (notes ? "OK" : "after pass addtosub: the shared body summary is stale (an instruction was rewritten without NoteOpcode or NoteMade)"));
  }
}

// The summary lets a pass skip a body without its opcodes, and a pass that
// makes one notes it: pow2div after constant folding turned a division by a
// register holding 8 into one by the immediate 8 still finds it.
TEST_CASE("pow2div rewrites a division whose divisor constant folding made an immediate", "[pipeline]") {
  KernelBuilder b("divfold");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> n = b.Param<U32>("n");
  Value<U32> eight = b.Const<U32>(8u);
  b.Store(StateSpace::kGlobal, out, b.Div(n, eight));
  ir::Kernel k = Finished(b);
  passes::PipelineOptions o = passes::PipelineOptions::None();
  o.constfold = o.pow2div = true;
  o.verify_each = true;
  REQUIRE(Msg(passes::Pipeline::Standard(o).Run(k)) == "OK");
  REQUIRE(DumpIr(k) ==
          "kernel divfold target sm_80\n"
          "  param u64 out\n"
          "  param u32 n\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [n]  // n\n"
          "  %2:u32 = shr.u32 %0, 3\n"
          "  %3:u64 = ld.param.u64 [out]  // out\n"
          "  %4:u64 = cvta.to.global.u64 %3\n"
          "  st.global.u32 [%4], %2\n"
          "  ret\n"
          "}\n");
}

// The kernel `out[0] = value(x)` after a pipeline with `on` (and copyprop,
// and verify_each) on.
template <typename F>
std::string AfterCopyprop(const char* name, bool passes::PipelineOptions::*on, F&& value) {
  KernelBuilder b(name);
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> x = b.Param<U32>("x");
  b.Store(StateSpace::kGlobal, out, value(b, x));
  ir::Kernel k = Finished(b);
  passes::PipelineOptions o = passes::PipelineOptions::None();
  o.*on = o.copyprop = true;
  o.verify_each = true;
  std::string status = Msg(passes::Pipeline::Standard(o).Run(k));
  return status == "OK" ? DumpIr(k) : status;
}

TEST_CASE("the shared summary follows the opcodes a pass makes: copyprop removes the mov identities or reassoc made", "[pipeline]") {
  // Each kernel has no mov until identities turns y = x * 1 into one, or
  // reassoc (x + 7) - 7; copy propagation skips kernels whose summary has
  // no copy, so it removes the mov only if the pass noted it.
  REQUIRE(AfterCopyprop("summary_mov", &passes::PipelineOptions::identities,
                        [](KernelBuilder& b, Value<U32> x) { return b.Add(b.Mul(x, 1u), 5u); }) ==
          "kernel summary_mov target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %2:u32 = add.u32 %0, 5\n"
          "  %3:u64 = ld.param.u64 [out]  // out\n"
          "  %4:u64 = cvta.to.global.u64 %3\n"
          "  st.global.u32 [%4], %2\n"
          "  ret\n"
          "}\n");
  REQUIRE(AfterCopyprop("summary_reassoc", &passes::PipelineOptions::reassoc,
                        [](KernelBuilder& b, Value<U32> x) { return b.Sub(b.Add(x, 7u), 7u); }) ==
          "kernel summary_reassoc target sm_80\n"
          "  param u64 out\n"
          "  param u32 x\n"
          "{\n"
          "  %0:u32 = ld.param.u32 [x]  // x\n"
          "  %3:u64 = ld.param.u64 [out]  // out\n"
          "  %4:u64 = cvta.to.global.u64 %3\n"
          "  st.global.u32 [%4], %0\n"
          "  ret\n"
          "}\n");
}

// ---- equivalence: every registry kernel gives the same bits with and without the optimizer

TEST_CASE("every registry kernel gives bit-identical emulator results with the optimizer on and off", "[equivalence]") {
  auto emu = runtime::MakeEmulator({});
  for (const kernels::KernelFamily* family : kernels::AllFamilies()) {
    INFO(family->name());
    absl::StatusOr<kernels::Config> config = family->MakeConfig();
    REQUIRE(config.ok());
    absl::StatusOr<kernels::TestProblem> problem = family->MakeProblem(*config, 7);
    REQUIRE(problem.ok());
    std::vector<std::vector<uint8_t>> outputs[2];
    uint64_t executed[2] = {0, 0};  // thread-instructions of the test problem's launch
    for (int optimized = 0; optimized < 2; ++optimized) {
      absl::StatusOr<ir::Kernel> kernel = family->Build(*config, ir::Target::kSm80);
      REQUIRE(kernel.ok());
      passes::PipelineOptions options = optimized ? passes::PipelineOptions{} : passes::PipelineOptions::None();
      options.verify_each = true;
      REQUIRE(Msg(passes::Pipeline::Standard(options).Run(*kernel)) == "OK");
      absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(*emu, *kernel, *problem);
      REQUIRE(Msg(result.status()) == "OK");
      executed[optimized] = emu->last_counters().instructions;
      INFO(result->Report());
      CHECK(result->ok());
      for (const kernels::OutputResult& o : result->outputs) outputs[optimized].push_back(o.data);
    }
    // Fewer instructions run (not always fewer in the body: a rotated loop
    // has its test twice, and runs one branch less per iteration), and
    // without rotation the body is no larger.
    CHECK(executed[1] < executed[0]);
    {
      absl::StatusOr<ir::Kernel> plain = family->Build(*config, ir::Target::kSm80);
      absl::StatusOr<ir::Kernel> unrotated = family->Build(*config, ir::Target::kSm80);
      REQUIRE((plain.ok() && unrotated.ok()));
      passes::PipelineOptions options;
      options.rotate = false;
      REQUIRE(Msg(passes::Pipeline::Standard(passes::PipelineOptions::None()).Run(*plain)) == "OK");
      REQUIRE(Msg(passes::Pipeline::Standard(options).Run(*unrotated)) == "OK");
      CHECK(unrotated->body.size() <= plain->body.size());
    }
    REQUIRE(outputs[0].size() == outputs[1].size());
    for (size_t i = 0; i < outputs[0].size(); ++i) CHECK(outputs[0][i] == outputs[1][i]);
  }
}

}  // namespace
}  // namespace ptxforge
