// Tests of the verifier: every error path in ir/verify.cc, on IR built by hand.
#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "builder/kernel_builder.h"
#include "builder/memory.h"
#include "ir/cfg.h"
#include "ir/format.h"
#include "ir/register_numbering.h"
#include "ir/verify.h"
#include "passes/verifier.h"
#include "test/test_util.h"

namespace ptxforge {
namespace {

using ir::Opcode;
using ir::Operand;
using ir::ScalarType;
using ir::StateSpace;
using testing::HandKernel;
using testing::Imm;
using testing::Msg;
using T = ScalarType;

// The kernel every case starts from: one register per common type, a u64
// param `a`, a shared array `tile` and a label `done` (not bound).
struct Fixture {
  HandKernel h{"k"};
  ir::Reg u64 = h.Reg(T::kU64);    // %0
  ir::Reg u32 = h.Reg(T::kU32);    // %1
  ir::Reg f32 = h.Reg(T::kF32);    // %2
  ir::Reg pred = h.Reg(T::kPred);  // %3
  ir::Reg f64 = h.Reg(T::kF64);    // %4
  ir::Reg f16 = h.Reg(T::kF16);    // %5
  ir::Reg s32 = h.Reg(T::kS32);    // %6
  ir::Reg b32 = h.Reg(T::kB32);    // %7
  ir::Reg bf16 = h.Reg(T::kBF16);  // %8
  ir::Reg u16 = h.Reg(T::kU16);    // %9
  uint32_t param = h.Param("a", T::kU64);
  uint32_t tile = h.Variable(ir::Variable{"tile", StateSpace::kShared, T::kF32, 64, 4, false});
  ir::Label done = h.NewLabel("done");

  ir::Instruction& Add(Opcode op, ir::Modifiers m, std::initializer_list<ir::Reg> d,
                       std::initializer_list<Operand> s) {
    return h.Add(op, m, d, s);
  }
};

ir::Modifiers Ty(ScalarType t) { return ir::Modifiers{.type = t}; }

// Defines each register (a mov of 0; halves as their bits) so that a case
// expected to be OK is complete.
void Define(Fixture& f, std::initializer_list<ir::Reg> regs) {
  for (ir::Reg r : regs) {
    ScalarType t = f.h.kernel().type_of(r);
    if (ir::IsHalfFamily(t)) t = ir::BitsTypeOfSize(ir::TypeBits(t));
    f.h.MovImm(r, t, 0);
  }
}
ir::Modifiers Mem(ScalarType t, StateSpace space) { return ir::Modifiers{.type = t, .space = space}; }

struct Case {
  std::string expected;  // after "kernel k: "
  std::function<void(Fixture&)> build;
  bool add_ret = true;
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    Fixture f;
    c.build(f);
    if (c.add_ret) f.h.Ret();
    INFO("expected: " << c.expected);
    absl::Status s = passes::VerifyKernel(f.h.kernel());
    REQUIRE(Msg(s) == (c.expected == "OK" ? "OK" : "kernel k: " + c.expected));
    REQUIRE(s.code() == (c.expected == "OK" ? absl::StatusCode::kOk : absl::StatusCode::kInvalidArgument));
  }
}

TEST_CASE("a well-formed hand-built kernel verifies", "[verifier]") {
  Fixture f;
  f.Add(Opcode::kLd, Mem(T::kU64, StateSpace::kParam), {f.u64}, {Operand::AddrParam(f.param)});
  f.Add(Opcode::kCvta, ir::Modifiers{.type = T::kU64, .space = StateSpace::kGlobal, .cvta_to = true}, {f.u64},
        {f.u64}).dsts[0] = f.h.Reg(T::kU64);  // %10
  f.Add(Opcode::kMov, Ty(T::kU32), {f.u32}, {Operand::Special(ir::SpecialReg::kTidX)});
  f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kU32, .cmp = ir::CmpOp::kLt}, {f.pred}, {f.u32, Imm(T::kU32, 32)});
  f.Add(Opcode::kBra, {}, {}, {Operand::FromLabel(f.done)}).guard = f.pred;
  f.Add(Opcode::kLd, Mem(T::kF32, StateSpace::kShared), {f.f32}, {Operand::AddrSymbol(f.tile, 4)});
  f.Add(Opcode::kSt, Mem(T::kF32, StateSpace::kGlobal), {}, {Operand::AddrReg(ir::Reg{10}, 8), f.f32});
  f.h.Bind(f.done);
  f.h.Ret();
  REQUIRE(Msg(passes::VerifyKernel(f.h.kernel())) == "OK");
}

TEST_CASE("declaration errors", "[verifier]") {
  {
    HandKernel h("1k");
    h.Ret();
    REQUIRE(Msg(passes::VerifyKernel(h.kernel())) == "kernel 1k: kernel name '1k' is not a PTX identifier");
  }
  auto var = [](std::string name, StateSpace space, uint32_t count, uint32_t align, bool is_extern) {
    return ir::Variable{std::move(name), space, T::kF32, count, align, is_extern};
  };
  RunCases({
      {"param name 'a-b' is not a PTX identifier", [](Fixture& f) { f.h.Param("a-b", T::kU32); }},
      {"param 'p' has type pred", [](Fixture& f) { f.h.Param("p", T::kPred); }},
      {"param 'q' has type none", [](Fixture& f) { f.h.Param("q", T::kNone); }},
      {"param 'a' is declared twice", [](Fixture& f) { f.h.Param("a", T::kU32); }},
      {"variable name '2v' is not a PTX identifier",
       [&](Fixture& f) { f.h.Variable(var("2v", StateSpace::kShared, 1, 4, false)); }},
      {"variable 'g' must be in shared or local memory",
       [&](Fixture& f) { f.h.Variable(var("g", StateSpace::kGlobal, 1, 4, false)); }},
      {"variable 'l': only shared memory can be extern (dynamic)",
       [&](Fixture& f) { f.h.Variable(var("l", StateSpace::kLocal, 0, 4, true)); }},
      {"variable 'z' has 0 elements", [&](Fixture& f) { f.h.Variable(var("z", StateSpace::kLocal, 0, 4, false)); }},
      {"variable 'z': alignment 0 is not a power of two",
       [&](Fixture& f) { f.h.Variable(var("z", StateSpace::kLocal, 1, 0, false)); }},
      {"variable 'z': alignment 6 is not a power of two",
       [&](Fixture& f) { f.h.Variable(var("z", StateSpace::kShared, 1, 6, false)); }},
      {"variable 'tile' is declared twice",
       [&](Fixture& f) { f.h.Variable(var("tile", StateSpace::kLocal, 1, 4, false)); }},
      {"variable 'a' has the name of a param", [&](Fixture& f) { f.h.Variable(var("a", StateSpace::kLocal, 1, 4, false)); }},
      {"more than one dynamic (extern) shared variable",
       [&](Fixture& f) {
         f.h.Variable(var("d1", StateSpace::kShared, 0, 16, true));
         f.h.Variable(var("d2", StateSpace::kShared, 0, 16, true));
       }},
      {"register %10 has no type", [](Fixture& f) { f.h.Reg(T::kNone); }},
      {"the body is empty (it must end with ret or exit)", [](Fixture&) {}, /*add_ret=*/false},
      // Issue 11 item 2: static shared memory over 48 KiB (ptxas: "uses too
      // much shared data (0xc001 bytes, 0xc000 max)"); `tile` holds 256 bytes.
      {"OK", [&](Fixture& f) { f.h.Variable(var("big", StateSpace::kShared, (49152 - 256) / 4, 4, false)); }},
      {"static shared memory is 49156 bytes, over the 49152 bytes sm_80 allows; use dynamic shared memory "
       "(DynamicShared) for more",
       [&](Fixture& f) { f.h.Variable(var("big", StateSpace::kShared, (49152 - 256) / 4 + 1, 4, false)); }},
      {"static shared memory is 49160 bytes, over the 49152 bytes sm_80 allows; use dynamic shared memory "
       "(DynamicShared) for more",  // 12 bytes of alignment padding count: 256 + 4 + 12 + 48888
       [&](Fixture& f) {
         f.h.Variable(var("one", StateSpace::kShared, 1, 4, false));
         f.h.Variable(var("big", StateSpace::kShared, 48888 / 4, 16, false));
       }},
      {"static shared memory is 17179869436 bytes, over the 49152 bytes sm_80 allows; use dynamic shared memory "
       "(DynamicShared) for more",
       [&](Fixture& f) { f.h.Variable(var("huge", StateSpace::kShared, 0xFFFFFFFFu, 4, false)); }},
      {"OK",  // dynamic shared memory and local memory are not static shared memory
       [&](Fixture& f) {
         f.h.Variable(var("dyn", StateSpace::kShared, 0, 16, true));
         f.h.Variable(var("loc", StateSpace::kLocal, 1u << 20, 4, false));
       }},
      // Item 3: ptxas refuses .maxntid with .reqntid.
      {".maxntid and .reqntid are both set, which ptxas refuses; .reqntid alone also bounds the block size",
       [](Fixture& f) {
         f.h.kernel().bounds.maxntid = {128, 1, 1};
         f.h.kernel().bounds.reqntid = {128, 1, 1};
       }},
      // A register budget ptxas would ignore (KernelBuilder::SetMaxRegisters refuses it too).
      {".maxnreg 256 is over 255, which ptxas ignores", [](Fixture& f) { f.h.kernel().bounds.maxnreg = 256; }},
      {"OK", [](Fixture& f) { f.h.kernel().bounds.maxnreg = 255; }},
      // Item 5: out-of-range enums in declarations.
      {"the target: ir::Target value 99 is out of range",
       [](Fixture& f) { f.h.kernel().target = static_cast<ir::Target>(99); }},
      {"param 'p': ir::ScalarType value 77 is out of range",
       [](Fixture& f) { f.h.Param("p", static_cast<ScalarType>(77)); }},
      {"variable 'v': ir::StateSpace value 9 is out of range",
       [&](Fixture& f) { f.h.Variable(var("v", static_cast<StateSpace>(9), 1, 4, false)); }},
      {"variable 'v': ir::ScalarType value 99 is out of range",
       [&](Fixture& f) { f.h.Variable(ir::Variable{"v", StateSpace::kShared, static_cast<ScalarType>(99), 1, 4, false}); }},
      {"register %10: ir::ScalarType value 77 is out of range", [](Fixture& f) { f.h.Reg(static_cast<ScalarType>(77)); }},
  });
}

// Item 5: out-of-range enums in instructions stop the verifier before any
// table lookup (they used to index tables: UBSan, or a crash).
TEST_CASE("out-of-range enums in instructions", "[verifier]") {
  RunCases({
      {"instruction 0: ir::Rounding value 200 is out of range",
       [](Fixture& f) { f.Add(Opcode::kAdd, ir::Modifiers{.type = T::kF32, .rounding = static_cast<ir::Rounding>(200)}, {f.f32}, {f.f32, f.f32}); }},
      {"instruction 0: ir::CmpOp value 100 is out of range",
       [](Fixture& f) { f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kU32, .cmp = static_cast<ir::CmpOp>(100)}, {f.pred}, {f.u32, f.u32}); }},
      {"instruction 0: ir::ScalarType value 77 is out of range",
       [](Fixture& f) { f.Add(Opcode::kMov, Ty(static_cast<ScalarType>(77)), {f.u32}, {f.u32}); }},
      {"instruction 0: ir::ScalarType value 77 is out of range",
       [](Fixture& f) { f.Add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = static_cast<ScalarType>(77)}, {f.f32}, {f.u32}); }},
      {"instruction 0: ir::ScalarType value 90 is out of range",
       [](Fixture& f) { f.Add(Opcode::kMov, Ty(T::kU32), {f.u32}, {Imm(static_cast<ScalarType>(90), 1)}); }},
      {"instruction 0: ir::Mode value 60 is out of range",
       [](Fixture& f) { f.Add(Opcode::kDiv, ir::Modifiers{.type = T::kF32, .mode = static_cast<ir::Mode>(60)}, {f.f32}, {f.f32, f.f32}); }},
      {"instruction 0: ir::StateSpace value 9 is out of range",
       [](Fixture& f) { f.Add(Opcode::kLd, Mem(T::kU32, static_cast<StateSpace>(9)), {f.u32}, {Operand::AddrReg(f.u64, 0)}); }},
      {"instruction 0: ir::CacheOp value 30 is out of range",
       [](Fixture& f) { f.Add(Opcode::kLd, ir::Modifiers{.type = T::kU32, .space = StateSpace::kGlobal, .cache = static_cast<ir::CacheOp>(30)}, {f.u32}, {Operand::AddrReg(f.u64, 0)}); }},
      {"instruction 0: ir::AtomOp value 30 is out of range",
       [](Fixture& f) { f.Add(Opcode::kRed, ir::Modifiers{.type = T::kU32, .space = StateSpace::kGlobal, .atom = static_cast<ir::AtomOp>(30)}, {}, {Operand::AddrReg(f.u64, 0), f.u32}); }},
      {"instruction 0: ir::Scope value 30 is out of range",
       [](Fixture& f) { f.Add(Opcode::kMembar, ir::Modifiers{.scope = static_cast<ir::Scope>(30)}, {}, {}); }},
      {"instruction 0: ir::MemSem value 30 is out of range",
       [](Fixture& f) { f.Add(Opcode::kRed, ir::Modifiers{.type = T::kU32, .space = StateSpace::kGlobal, .atom = ir::AtomOp::kAdd, .sem = static_cast<ir::MemSem>(30)}, {}, {Operand::AddrReg(f.u64, 0), f.u32}); }},
      {"instruction 0: ir::ShflMode value 30 is out of range",
       [](Fixture& f) { f.Add(Opcode::kShfl, ir::Modifiers{.type = T::kB32, .shfl = static_cast<ir::ShflMode>(30)}, {f.b32}, {f.b32, f.u32, f.u32, f.u32}); }},
      {"instruction 0: ir::VoteMode value 30 is out of range",
       [](Fixture& f) { f.Add(Opcode::kVote, ir::Modifiers{.type = T::kPred, .vote = static_cast<ir::VoteMode>(30)}, {f.pred}, {f.pred, f.u32}); }},
      {"instruction 0: ir::BoolOp value 30 is out of range",
       [](Fixture& f) { f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kU32, .cmp = ir::CmpOp::kEq, .bool_op = static_cast<ir::BoolOp>(30)}, {f.pred}, {f.u32, f.u32, f.pred}); }},
  });
}

TEST_CASE("instruction structure errors", "[verifier]") {
  RunCases({
      {"instruction 0: ir::Opcode value 200 is out of range",
       [](Fixture& f) { f.Add(static_cast<Opcode>(200), {}, {}, {}); }},
      {"instruction 0: $L0_done:: a label cannot be guarded", [](Fixture& f) { f.h.Bind(f.done).guard = f.pred; }},
      {"instruction 0: @%99 bra $L0_done: the guard is not a register of this kernel",
       [](Fixture& f) { f.h.Bra(f.done).guard = ir::Reg{99}; }},
      {"instruction 0: @%1 bra $L0_done: the guard is %1 (u32), expected pred",
       [](Fixture& f) { f.h.Bra(f.done).guard = f.u32; }},
      {"instruction 0: mov.u32 %99, %1: operand 0 is not a register of this kernel",
       [](Fixture& f) { f.Add(Opcode::kMov, Ty(T::kU32), {ir::Reg{99}}, {f.u32}); }},
      {"instruction 0: add.u32 %1, %1, %98: operand 2 is not a register of this kernel",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kU32), {f.u32}, {f.u32, ir::Reg{98}}); }},
      {"instruction 0: ld.global.u32 %1, [%97]: operand 1 is not a register of this kernel",
       [](Fixture& f) {
         f.Add(Opcode::kLd, Mem(T::kU32, StateSpace::kGlobal), {f.u32}, {Operand::AddrReg(ir::Reg{97}, 0)});
       }},
      {"instruction 0: ir::SpecialReg value 200 is out of range",
       [](Fixture& f) {
         f.Add(Opcode::kMov, Ty(T::kU32), {f.u32}, {Operand::Special(static_cast<ir::SpecialReg>(200))});
       }},
      {"instruction 0: mov.u32 %1, <bad variable>: operand 1 names variable 7, which does not exist",
       [](Fixture& f) { f.Add(Opcode::kMov, Ty(T::kU32), {f.u32}, {Operand::Symbol(7)}); }},
      {"instruction 0: add.bf16 %8, %8, %8: add.bf16 requires sm_90 or newer; the kernel targets sm_80",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kBF16), {f.bf16}, {f.bf16, f.bf16}); }},
      {"instruction 0: setmaxnreg.inc.sync.aligned.u32 64;: raw PTX requires sm_90a; the kernel targets sm_80",
       [](Fixture& f) {
         f.h.kernel().raw_ptx.push_back({"setmaxnreg.inc.sync.aligned.u32 64;", {90, true, {80}}});
         f.Add(Opcode::kRaw, {}, {}, {}).raw_index = 0;
       }},
      {"instruction 0: <bad raw PTX>: raw PTX block does not exist",
       [](Fixture& f) { f.Add(Opcode::kRaw, {}, {}, {}).raw_index = 5; }},
      {"instruction 0: mov.u32 %1, 3;: raw PTX inputs must be registers",
       [](Fixture& f) {
         f.h.kernel().raw_ptx.push_back({"mov.u32 {0}, {1};", {}});
         f.Add(Opcode::kRaw, {}, {f.u32}, {Imm(T::kU32, 3)});
       }},
  });
}

TEST_CASE("operand type and count errors", "[verifier]") {
  RunCases({
      {"instruction 0: add.f32 %2, %2, %0: operand 2 is %0 (u64), expected f32",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kF32), {f.f32}, {f.f32, f.u64}); }},
      {"instruction 0: add.f32 %4, %2, %2: operand 0 is %4 (f64), expected f32",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kF32), {f.f64}, {f.f32, f.f32}); }},
      {"instruction 0: add.f16 %5, %5, 0x3C00: operand 2 is an immediate; PTX has no f16 immediates (move it to a "
       "register with mov.b16 first)",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kF16), {f.f16}, {f.f16, Imm(T::kF16, 0x3C00)}); }},
      {"instruction 0: add.f32 %2, %2, 1: operand 2 is an immediate (u64), expected f32",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kF32), {f.f32}, {f.f32, Imm(T::kU64, 1)}); }},
      {"instruction 0: and.b32 %7, %7, 1: operand 2 is an immediate (pred), expected b32",
       [](Fixture& f) { f.Add(Opcode::kAnd, Ty(T::kB32), {f.b32}, {f.b32, Imm(T::kPred, 1)}); }},
      {"instruction 0: add.u32 %1, %1, 0: operand 2: immediate 0x100000000 does not fit u32",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kU32), {f.u32}, {f.u32, Imm(T::kU32, 0x100000000)}); }},
      {"instruction 0: add.u32 %1, %1, $L0_done: operand 2 is a label, expected a register or immediate of type u32",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kU32), {f.u32}, {f.u32, Operand::FromLabel(f.done)}); }},
      {"instruction 0: add.u32 %1, %1, tile: operand 2 is a variable address, expected a register or immediate of "
       "type u32",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kU32), {f.u32}, {f.u32, Operand::Symbol(f.tile)}); }},
      {"instruction 0: add.u32 %1, %1, [a]: operand 2 is an address, expected a register or immediate",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kU32), {f.u32}, {f.u32, Operand::AddrParam(f.param)}); }},
      {"instruction 0: add.u32 %1, %1, %tid.x: operand 2 is %tid.x, expected a register or immediate of type u32",
       [](Fixture& f) {
         f.Add(Opcode::kAdd, Ty(T::kU32), {f.u32}, {f.u32, Operand::Special(ir::SpecialReg::kTidX)});
       }},
      {"instruction 0: add.u32 %1, %1, <none>: operand 2 is empty",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kU32), {f.u32}, {f.u32, Operand()}); }},
      {"OK",  // cvt from an immediate (issue 11 item 19)
       [](Fixture& f) {
         f.Add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = T::kS32, .rounding = ir::Rounding::kRn},
               {f.f32}, {Imm(T::kS32, 5)});
       }},
      {"instruction 0: cvt.f32.f16 %2, 0x3C00: operand 1 is an immediate; PTX has no f16 immediates (move it to a "
       "register with mov.b16 first)",
       [](Fixture& f) {
         f.Add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = T::kF16}, {f.f32}, {Imm(T::kF16, 0x3C00)});
       }},
      {"instruction 0: cvt.u32.u8 %1, 44: operand 1: immediate 0x12C does not fit u8",
       [](Fixture& f) {
         f.Add(Opcode::kCvt, ir::Modifiers{.type = T::kU32, .type2 = T::kU8}, {f.u32}, {Imm(T::kU8, 300)});
       }},
      {"instruction 0: add.u32 %1, %1: add takes 1 destination(s) and 2 source(s), got 1 and 1",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kU32), {f.u32}, {f.u32}); }},
      {"instruction 0: neg.s32 %6, %6, %6: neg takes 1 destination(s) and 1 source(s), got 1 and 2",
       [](Fixture& f) { f.Add(Opcode::kNeg, Ty(T::kS32), {f.s32}, {f.s32, f.s32}); }},
      {"instruction 0: popc.b32 %2, %7: operand 0 is %2 (f32), expected u32",
       [](Fixture& f) { f.Add(Opcode::kPopc, Ty(T::kB32), {f.f32}, {f.b32}); }},
      {"instruction 0: shl.b32 %7, %7, %0: operand 2 is %0 (u64), expected u32",
       [](Fixture& f) { f.Add(Opcode::kShl, Ty(T::kB32), {f.b32}, {f.b32, f.u64}); }},
      {"instruction 0: bfe.u32 %1, %1, 0, %2: operand 3 is %2 (f32), expected u32",
       [](Fixture& f) { f.Add(Opcode::kBfe, Ty(T::kU32), {f.u32}, {f.u32, Imm(T::kU32, 0), f.f32}); }},
      {"instruction 0: bfi.b32 %7, %7, %7, 0, %0: operand 4 is %0 (u64), expected u32",
       [](Fixture& f) { f.Add(Opcode::kBfi, Ty(T::kB32), {f.b32}, {f.b32, f.b32, Imm(T::kU32, 0), f.u64}); }},
      {"instruction 0: selp.u32 %1, %1, %1, %1: operand 3 is %1 (u32), expected pred",
       [](Fixture& f) { f.Add(Opcode::kSelp, Ty(T::kU32), {f.u32}, {f.u32, f.u32, f.u32}); }},
      {"instruction 0: setp.eq.and.u32 %3, %1, %1, 1: operand 3 is an immediate (pred), expected a register of "
       "type pred",
       [](Fixture& f) {
         f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kU32, .cmp = ir::CmpOp::kEq, .bool_op = ir::BoolOp::kAnd},
               {f.pred}, {f.u32, f.u32, Imm(T::kPred, 1)});
       }},
      {"instruction 0: mad.wide.u32 %0, %1, %1, %1: operand 3 is %1 (u32), expected u64",
       [](Fixture& f) {
         f.Add(Opcode::kMad, ir::Modifiers{.type = T::kU32, .mode = ir::Mode::kWide}, {f.u64}, {f.u32, f.u32, f.u32});
       }},
      {"instruction 0: mul.wide.u32 %1, %1, %1: operand 0 is %1 (u32), expected u64",
       [](Fixture& f) {
         f.Add(Opcode::kMul, ir::Modifiers{.type = T::kU32, .mode = ir::Mode::kWide}, {f.u32}, {f.u32, f.u32});
       }},
      {"instruction 0: activemask.b32 %0: operand 0 is %0 (u64), expected b32",
       [](Fixture& f) { f.Add(Opcode::kActiveMask, Ty(T::kB32), {f.u64}, {}); }},
  });
}

TEST_CASE("address and state space errors", "[verifier]") {
  RunCases({
      {"instruction 0: ld.global.f32 %2, %0: operand 1 is %0 (u64), expected an address",
       [](Fixture& f) { f.Add(Opcode::kLd, Mem(T::kF32, StateSpace::kGlobal), {f.f32}, {f.u64}); }},
      {"instruction 0: ld.param.u32 %1, [%0]: ld.param must address a param by name",
       [](Fixture& f) { f.Add(Opcode::kLd, Mem(T::kU32, StateSpace::kParam), {f.u32}, {Operand::AddrReg(f.u64, 0)}); }},
      {"instruction 0: ld.global.f32 %2, [%2]: operand 1: the address register is %2 (f32), expected u64 (or u32 "
       "for shared and local)",
       [](Fixture& f) {
         f.Add(Opcode::kLd, Mem(T::kF32, StateSpace::kGlobal), {f.f32}, {Operand::AddrReg(f.f32, 0)});
       }},
      {"instruction 0: ld.global.f32 %2, [%1+4]: operand 1: the address register is %1 (u32), expected u64 (or u32 "
       "for shared and local)",
       [](Fixture& f) {
         f.Add(Opcode::kLd, Mem(T::kF32, StateSpace::kGlobal), {f.f32}, {Operand::AddrReg(f.u32, 4)});
       }},
      {"instruction 0: ld.shared.f32 %2, [<bad variable>+-4]: operand 1 names variable 9, which does not exist",
       [](Fixture& f) {
         f.Add(Opcode::kLd, Mem(T::kF32, StateSpace::kShared), {f.f32}, {Operand::AddrSymbol(9, -4)});
       }},
      {"instruction 0: ld.global.f32 %2, [tile]: operand 1 addresses shared variable 'tile' from global space",
       [](Fixture& f) {
         f.Add(Opcode::kLd, Mem(T::kF32, StateSpace::kGlobal), {f.f32}, {Operand::AddrSymbol(f.tile, 0)});
       }},
      {"instruction 0: st.f32 [tile], %2: operand 0 addresses shared variable 'tile' from generic space",
       [](Fixture& f) { f.Add(Opcode::kSt, Ty(T::kF32), {}, {Operand::AddrSymbol(f.tile, 0), f.f32}); }},
      {"instruction 0: ld.param.u32 %1, [<bad param>]: operand 1 names param 4, which does not exist",
       [](Fixture& f) { f.Add(Opcode::kLd, Mem(T::kU32, StateSpace::kParam), {f.u32}, {Operand::AddrParam(4)}); }},
      {"instruction 0: ld.global.u64 %0, [a]: a param can only be read with ld.param",
       [](Fixture& f) {
         f.Add(Opcode::kLd, Mem(T::kU64, StateSpace::kGlobal), {f.u64}, {Operand::AddrParam(f.param)});
       }},
      {"instruction 0: st.global.u32 [%0], [%0]: operand 1 is an address, expected a register or immediate (only "
       "the first source is an address)",
       [](Fixture& f) {
         f.Add(Opcode::kSt, Mem(T::kU32, StateSpace::kGlobal), {}, {Operand::AddrReg(f.u64, 0), Operand::AddrReg(f.u64, 0)});
       }},
      {"instruction 0: ld.param.u32 %1, [a]: ld.param reads 4 bytes at offset 0 of param 'a', which is u64 (8 bytes); "
       "read a param whole, with its own size",
       [](Fixture& f) { f.Add(Opcode::kLd, Mem(T::kU32, StateSpace::kParam), {f.u32}, {Operand::AddrParam(f.param)}); }},
      {"OK",
       [](Fixture& f) { f.Add(Opcode::kLd, Mem(T::kU64, StateSpace::kParam), {f.u64}, {Operand::AddrParam(f.param)}); }},
      {"instruction 0: st.param.u64 [a], %0: params are read-only",
       [](Fixture& f) { f.Add(Opcode::kSt, Mem(T::kU64, StateSpace::kParam), {}, {Operand::AddrParam(f.param), f.u64}); }},
      {"instruction 0: st.const.u32 [%0], %1: const memory is read-only",
       [](Fixture& f) { f.Add(Opcode::kSt, Mem(T::kU32, StateSpace::kConst), {}, {Operand::AddrReg(f.u64, 0), f.u32}); }},
      {"instruction 0: ld.global.v3.f32 %2, [%0]: vector width 3 is not 1, 2 or 4",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kF32, StateSpace::kGlobal);
         m.vec = 3;
         f.Add(Opcode::kLd, m, {f.f32}, {Operand::AddrReg(f.u64, 0)});
       }},
      {"instruction 0: ld.global.v2.f32 %2, [%0]: ld takes 2 destination(s) and 1 source(s), got 1 and 1",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kF32, StateSpace::kGlobal);
         m.vec = 2;
         f.Add(Opcode::kLd, m, {f.f32}, {Operand::AddrReg(f.u64, 0)});
       }},
      {"OK",  // st of immediates (issue 11 item 19)
       [](Fixture& f) {
         Define(f, {f.u64, f.f32});
         ir::Modifiers m = Mem(T::kF32, StateSpace::kGlobal);
         m.vec = 2;
         f.Add(Opcode::kSt, m, {}, {Operand::AddrReg(f.u64, 0), f.f32, Imm(T::kF32, 0x3F800000)});
       }},
      {"instruction 3: st.global.v2.b32 [%0], {%2, 0x5}: st.v2 mixes integer immediates with float values, which "
       "ptxas refuses (\"Vector with elements of different types\"): put the immediates in registers",
       [](Fixture& f) {  // the fuzzer's find: the verifier let it through, ptxas refused it
         Define(f, {f.u64, f.f32, f.b32});
         ir::Modifiers m = Mem(T::kB32, StateSpace::kGlobal);
         m.vec = 2;
         f.Add(Opcode::kSt, m, {}, {Operand::AddrReg(f.u64, 0), f.f32, Imm(T::kB32, 5)});
       }},
      {"OK",  // an f32 register with a b32 register, or with a float literal: ptxas takes both
       [](Fixture& f) {
         Define(f, {f.u64, f.f32, f.b32});
         ir::Modifiers m = Mem(T::kB32, StateSpace::kGlobal);
         m.vec = 4;
         f.Add(Opcode::kSt, m, {}, {Operand::AddrReg(f.u64, 0), f.f32, f.b32, Imm(T::kF32, 0x3F800000), f.f32});
       }},
      {"instruction 1: st.global.f32 [%0], 0x3F800000: operand 1 is an immediate (b32), expected an f32 immediate "
       "(PTX takes only a float literal for a float operand)",
       [](Fixture& f) {
         Define(f, {f.u64});
         f.Add(Opcode::kSt, Mem(T::kF32, StateSpace::kGlobal), {}, {Operand::AddrReg(f.u64, 0), Imm(T::kB32, 0x3F800000)});
       }},
      {"instruction 0: add.f64 %4, %4, 0x3FF0000000000000: operand 2 is an immediate (b64), expected an f64 immediate "
       "(PTX takes only a float literal for a float operand)",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kF64), {f.f64}, {f.f64, Imm(T::kB64, 0x3FF0000000000000)}); }},
      {"OK",  // a float literal where a bit type is expected is fine
       [](Fixture& f) {
         Define(f, {f.u64});
         f.Add(Opcode::kSt, Mem(T::kB32, StateSpace::kGlobal), {}, {Operand::AddrReg(f.u64, 0), Imm(T::kF32, 0x3F800000)});
       }},
      {"instruction 0: st.global.v2.f32 [%0], {%2, 1}: operand 2 is an immediate (u32), expected f32",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kF32, StateSpace::kGlobal);
         m.vec = 2;
         f.Add(Opcode::kSt, m, {}, {Operand::AddrReg(f.u64, 0), f.f32, Imm(T::kU32, 1)});
       }},
      {"instruction 0: ld.shared.nc.f32 %2, [tile]: .nc applies to ld.global only",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kF32, StateSpace::kShared);
         m.nc = true;
         f.Add(Opcode::kLd, m, {f.f32}, {Operand::AddrSymbol(f.tile, 0)});
       }},
      {"OK",  // ld.param.v2.u32 of a u64 param: the whole param in two parts (issue 11 item 19)
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kU32, StateSpace::kParam);
         m.vec = 2;
         f.Add(Opcode::kLd, m, {f.u32, f.h.Reg(T::kU32)}, {Operand::AddrParam(f.param)});
       }},
      {"instruction 0: ld.param.v4.u32 {%1, %1, %1, %1}, [a]: ld.param reads 16 bytes at offset 0 of param 'a', "
       "which is u64 (8 bytes); read a param whole, with its own size",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kU32, StateSpace::kParam);
         m.vec = 4;
         f.Add(Opcode::kLd, m, {f.u32, f.u32, f.u32, f.u32}, {Operand::AddrParam(f.param)});
       }},
      {"instruction 0: ld.global.nc.lu.f32 %2, [%0]: cache operator .lu does not apply to ld.global.nc",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kF32, StateSpace::kGlobal);
         m.cache = ir::CacheOp::kLu;
         m.nc = true;
         f.Add(Opcode::kLd, m, {f.f32}, {Operand::AddrReg(f.u64, 0)});
       }},
      {"instruction 0: ld.shared.v4.f64 {%4, %4, %4, %4}, [tile]: 256-bit ld.v4 of 64-bit values works on global (or "
       "generic) addresses only, not shared",
       [](Fixture& f) {
         f.h.kernel().target = ir::Target::kSm100;
         ir::Modifiers m = Mem(T::kF64, StateSpace::kShared);
         m.vec = 4;
         f.Add(Opcode::kLd, m, {f.f64, f.f64, f.f64, f.f64}, {Operand::AddrSymbol(f.tile, 0)});
       }},
      {"instruction 0: st.global.v4.u64 [%0], {%0, %0, %0, %0}: st.global.v4.u64 requires sm_100 or newer; the "
       "kernel targets sm_80",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kU64, StateSpace::kGlobal);
         m.vec = 4;
         f.Add(Opcode::kSt, m, {}, {Operand::AddrReg(f.u64, 0), f.u64, f.u64, f.u64, f.u64});
       }},
      {"instruction 0: ld.global.wb.f32 %2, [%0]: cache operator .wb does not apply to ld",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kF32, StateSpace::kGlobal);
         m.cache = ir::CacheOp::kWb;
         f.Add(Opcode::kLd, m, {f.f32}, {Operand::AddrReg(f.u64, 0)});
       }},
      {"instruction 0: st.global.ca.f32 [%0], %2: cache operator .ca does not apply to st",
       [](Fixture& f) {
         ir::Modifiers m = Mem(T::kF32, StateSpace::kGlobal);
         m.cache = ir::CacheOp::kCa;
         f.Add(Opcode::kSt, m, {}, {Operand::AddrReg(f.u64, 0), f.f32});
       }},
      {"instruction 0: cvta.u64 %0, %0: cvta needs a state space (global, shared, local, const or param)",
       [](Fixture& f) { f.Add(Opcode::kCvta, Ty(T::kU64), {f.u64}, {f.u64}); }},
      {"instruction 0: cvta.to.shared.u64 %0, tile: cvta.to converts a generic address register, not a variable",
       [](Fixture& f) {
         f.Add(Opcode::kCvta, ir::Modifiers{.type = T::kU64, .space = StateSpace::kShared, .cvta_to = true}, {f.u64},
               {Operand::Symbol(f.tile)});
       }},
      {"instruction 0: cvta.local.u64 %0, tile: variable 'tile' is not in local memory",
       [](Fixture& f) { f.Add(Opcode::kCvta, Mem(T::kU64, StateSpace::kLocal), {f.u64}, {Operand::Symbol(f.tile)}); }},
      {"instruction 0: cvta.global.u64 %0, 0: operand 1 is an immediate (u64), expected a register of type u64",
       [](Fixture& f) { f.Add(Opcode::kCvta, Mem(T::kU64, StateSpace::kGlobal), {f.u64}, {Imm(T::kU64, 0)}); }},
  });
}

TEST_CASE("modifier errors", "[verifier]") {
  auto add_u32 = [](ir::Modifiers m) {
    return [m](Fixture& f) { f.Add(Opcode::kAdd, m, {f.u32}, {f.u32, f.u32}); };
  };
  auto with = [](std::function<void(ir::Modifiers&)> edit) {
    ir::Modifiers m = Ty(T::kU32);
    edit(m);
    return m;
  };
  const std::string add = "instruction 0: add.u32 %1, %1, %1: ";
  RunCases({
      {add + ".relaxed does not apply to add", add_u32(with([](auto& m) { m.sem = ir::MemSem::kRelaxed; }))},
      {add + ".cta does not apply to add", add_u32(with([](auto& m) { m.scope = ir::Scope::kCta; }))},
      {add + ".global does not apply to add", add_u32(with([](auto& m) { m.space = StateSpace::kGlobal; }))},
      {add + ".to does not apply to add", add_u32(with([](auto& m) { m.cvta_to = true; }))},
      {add + ".nc does not apply to add", add_u32(with([](auto& m) { m.nc = true; }))},
      {add + ".cs does not apply to add", add_u32(with([](auto& m) { m.cache = ir::CacheOp::kCs; }))},
      {add + ".v2 does not apply to add", add_u32(with([](auto& m) { m.vec = 2; }))},
      {add + ".add does not apply to add", add_u32(with([](auto& m) { m.atom = ir::AtomOp::kAdd; }))},
      {add + ".bfly does not apply to add", add_u32(with([](auto& m) { m.shfl = ir::ShflMode::kBfly; }))},
      {add + ".ballot does not apply to add", add_u32(with([](auto& m) { m.vote = ir::VoteMode::kBallot; }))},
      {add + ".eq does not apply to add", add_u32(with([](auto& m) { m.cmp = ir::CmpOp::kEq; }))},
      {add + ".or does not apply to add", add_u32(with([](auto& m) { m.bool_op = ir::BoolOp::kOr; }))},
      {add + ".lo does not apply to add", add_u32(with([](auto& m) { m.mode = ir::Mode::kLo; }))},
      {add + ".approx does not apply to add", add_u32(with([](auto& m) { m.mode = ir::Mode::kApprox; }))},
      {add + ".noftz does not apply to add", add_u32(with([](auto& m) { m.noftz = true; }))},
      {add + ".uni does not apply to add", add_u32(with([](auto& m) { m.uni = true; }))},
      {add + "a second type does not apply to add", add_u32(with([](auto& m) { m.type2 = T::kS32; }))},
      {"instruction 0: and.b32 %7, %7, %7: .rn does not apply to and",
       [](Fixture& f) {
         f.Add(Opcode::kAnd, ir::Modifiers{.type = T::kB32, .rounding = ir::Rounding::kRn}, {f.b32}, {f.b32, f.b32});
       }},
      {"instruction 0: mov.f32 %2, %2: .ftz does not apply to mov",
       [](Fixture& f) {
         ir::Modifiers m = Ty(T::kF32);
         m.ftz = true;
         f.Add(Opcode::kMov, m, {f.f32}, {f.f32});
       }},
      {"instruction 0: and.b32 %7, %7, %7: .sat does not apply to and",
       [](Fixture& f) {
         ir::Modifiers m = Ty(T::kB32);
         m.sat = true;
         f.Add(Opcode::kAnd, m, {f.b32}, {f.b32, f.b32});
       }},
      {"instruction 0: bar.sync 0: a type does not apply to bar.sync",
       [](Fixture& f) { f.Add(Opcode::kBarSync, Ty(T::kU32), {}, {Imm(T::kU32, 0)}); }},
      {"instruction 0: add.b32 %7, %7, %7: add does not support type b32 (supported: u16, u32, u64, s16, s32, s64, "
       "f16, f16x2, bf16, bf16x2, f32, f64)",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kB32), {f.b32}, {f.b32, f.b32}); }},
      {"instruction 0: add %1, %1, %1: add needs a type",
       [](Fixture& f) { f.Add(Opcode::kAdd, {}, {f.u32}, {f.u32, f.u32}); }},
      {"instruction 0: add.rn.u32 %1, %1, %1: .rn applies to float types only",
       add_u32(with([](auto& m) { m.rounding = ir::Rounding::kRn; }))},
      {"instruction 0: add.rni.f32 %2, %2, %2: .rni (round to integer) applies to cvt only",
       [](Fixture& f) {
         f.Add(Opcode::kAdd, ir::Modifiers{.type = T::kF32, .rounding = ir::Rounding::kRni}, {f.f32}, {f.f32, f.f32});
       }},
      {"instruction 0: add.ftz.f64 %4, %4, %4: .ftz applies to f32 (and f16) only, not f64",
       [](Fixture& f) {
         ir::Modifiers m = Ty(T::kF64);
         m.ftz = true;
         f.Add(Opcode::kAdd, m, {f.f64}, {f.f64, f.f64});
       }},
      {"instruction 0: add.sat.u32 %1, %1, %1: .sat applies to f32 and f16 (and s32 add/sub) only, not u32",
       add_u32(with([](auto& m) { m.sat = true; }))},
      {"instruction 0: mul.sat.f64 %4, %4, %4: .sat applies to f32 and f16 (and s32 add/sub) only, not f64",
       [](Fixture& f) {
         ir::Modifiers m = Ty(T::kF64);
         m.sat = true;
         f.Add(Opcode::kMul, m, {f.f64}, {f.f64, f.f64});
       }},
      {"instruction 0: fma.rn.sat.bf16 %8, %8, %8, %8: .sat applies to f32 and f16 (and s32 add/sub) only, not bf16",
       [](Fixture& f) {
         ir::Modifiers m{.type = T::kBF16, .rounding = ir::Rounding::kRn};
         m.sat = true;
         f.Add(Opcode::kFma, m, {f.bf16}, {f.bf16, f.bf16, f.bf16});
       }},
      {"instruction 0: add.rz.f16 %5, %5, %5: .rz does not apply to f16 (only .rn)",
       [](Fixture& f) {
         f.Add(Opcode::kAdd, ir::Modifiers{.type = T::kF16, .rounding = ir::Rounding::kRz}, {f.f16}, {f.f16, f.f16});
       }},
      {"instruction 0: ex2.approx.ftz.f16 %5, %5: .ftz applies to ex2.f32 and ex2.bf16 only, not f16",
       [](Fixture& f) {
         ir::Modifiers m{.type = T::kF16, .mode = ir::Mode::kApprox};
         m.ftz = true;
         f.Add(Opcode::kEx2, m, {f.f16}, {f.f16});
       }},
      {"instruction 0: mul.u32 %1, %1, %1: integer mul needs .lo, .hi or .wide",
       [](Fixture& f) { f.Add(Opcode::kMul, Ty(T::kU32), {f.u32}, {f.u32, f.u32}); }},
      {"instruction 0: mad.approx.u32 %1, %1, %1, %1: integer mad needs .lo, .hi or .wide",
       [](Fixture& f) {
         f.Add(Opcode::kMad, ir::Modifiers{.type = T::kU32, .mode = ir::Mode::kApprox}, {f.u32}, {f.u32, f.u32, f.u32});
       }},
      {"instruction 0: mul.wide.u64 %0, %0, %0: mul.wide applies to 16- and 32-bit integers only",
       [](Fixture& f) {
         f.Add(Opcode::kMul, ir::Modifiers{.type = T::kU64, .mode = ir::Mode::kWide}, {f.u64}, {f.u64, f.u64});
       }},
      {"instruction 0: mul.wide.f32 %2, %2, %2: .wide applies to integer mul only",
       [](Fixture& f) {
         f.Add(Opcode::kMul, ir::Modifiers{.type = T::kF32, .mode = ir::Mode::kWide}, {f.f32}, {f.f32, f.f32});
       }},
      {"instruction 0: fma.f32 %2, %2, %2, %2: fma needs a rounding modifier (.rn, .rz, .rm or .rp)",
       [](Fixture& f) { f.Add(Opcode::kFma, Ty(T::kF32), {f.f32}, {f.f32, f.f32, f.f32}); }},
      {"instruction 0: div.lo.f32 %2, %2, %2: .lo does not apply to div",
       [](Fixture& f) {
         f.Add(Opcode::kDiv, ir::Modifiers{.type = T::kF32, .mode = ir::Mode::kLo}, {f.f32}, {f.f32, f.f32});
       }},
      {"instruction 0: div.f32 %2, %2, %2: div.f32 needs exactly one of a rounding modifier (.rn, .rz, .rm, .rp) or "
       ".approx/.full",
       [](Fixture& f) { f.Add(Opcode::kDiv, Ty(T::kF32), {f.f32}, {f.f32, f.f32}); }},
      {"instruction 0: div.full.rn.f32 %2, %2, %2: div.f32 needs exactly one of a rounding modifier (.rn, .rz, .rm, "
       ".rp) or .approx/.full",
       [](Fixture& f) {
         f.Add(Opcode::kDiv, ir::Modifiers{.type = T::kF32, .rounding = ir::Rounding::kRn, .mode = ir::Mode::kFull},
               {f.f32}, {f.f32, f.f32});
       }},
      {"instruction 0: sqrt.f32 %2, %2: sqrt.f32 needs exactly one of a rounding modifier (.rn, .rz, .rm, .rp) or "
       ".approx",
       [](Fixture& f) { f.Add(Opcode::kSqrt, Ty(T::kF32), {f.f32}, {f.f32}); }},
      {"instruction 0: div.approx.f64 %4, %4, %4: div.f64 needs a rounding modifier (only rcp.approx.ftz.f64 is "
       "approximate)",
       [](Fixture& f) {
         f.Add(Opcode::kDiv, ir::Modifiers{.type = T::kF64, .mode = ir::Mode::kApprox}, {f.f64}, {f.f64, f.f64});
       }},
      {"OK",
       [](Fixture& f) {
         ir::Modifiers m{.type = T::kF64, .mode = ir::Mode::kApprox};
         m.ftz = true;
         f.Add(Opcode::kMov, Ty(T::kF64), {f.f64}, {Imm(T::kF64, 0)});
         f.Add(Opcode::kRcp, m, {f.f64}, {f.f64});
         f.h.kernel().regs[f.f64.id].is_mutable = true;
       }},
      {"instruction 0: div.approx.u32 %1, %1, %1: .approx applies to float div only",
       [](Fixture& f) {
         f.Add(Opcode::kDiv, ir::Modifiers{.type = T::kU32, .mode = ir::Mode::kApprox}, {f.u32}, {f.u32, f.u32});
       }},
      {"instruction 0: rsqrt.f32 %2, %2: rsqrt needs .approx",
       [](Fixture& f) { f.Add(Opcode::kRsqrt, Ty(T::kF32), {f.f32}, {f.f32}); }},
      {"instruction 0: tanh.f32 %2, %2: tanh needs .approx",
       [](Fixture& f) { f.Add(Opcode::kTanh, Ty(T::kF32), {f.f32}, {f.f32}); }},
  });
}

TEST_CASE("cvt rounding rules", "[verifier]") {
  auto cvt = [](ScalarType to, ScalarType from, ir::Rounding r, bool ftz = false) {
    return [=](Fixture& f) {
      ir::Modifiers m{.type = to, .type2 = from, .rounding = r};
      m.ftz = ftz;
      ir::Reg d = f.h.Reg(to);
      ir::Reg s = f.h.Reg(from);
      f.h.MovImm(s, from == T::kF16 || from == T::kBF16 ? T::kB16 : from, 0);
      f.Add(Opcode::kCvt, m, {d}, {s});
    };
  };
  using ir::Rounding;
  RunCases({
      {"instruction 1: cvt.s32 %10, %11: cvt source type none is not supported (supported: u8, u16, u32, u64, s8, "
       "s16, s32, s64, f16, bf16, f32, f64)",
       [](Fixture& f) {
         ir::Reg d = f.h.Reg(T::kS32);
         ir::Reg s = f.h.Reg(T::kS32);
         f.h.MovImm(s, T::kS32, 0);
         f.Add(Opcode::kCvt, Ty(T::kS32), {d}, {s});
       }},
      {"instruction 1: cvt.s32.f32 %10, %11: cvt.s32.f32 (float to integer) needs an integer rounding modifier "
       "(.rni, .rzi, .rmi, .rpi)",
       cvt(T::kS32, T::kF32, Rounding::kNone)},
      {"instruction 1: cvt.rn.u8.f64 %10, %11: cvt.u8.f64 (float to integer) needs an integer rounding modifier "
       "(.rni, .rzi, .rmi, .rpi)",
       cvt(T::kU8, T::kF64, Rounding::kRn)},
      {"OK", cvt(T::kS32, T::kF32, Rounding::kRmi)},
      {"instruction 1: cvt.f32.s32 %10, %11: cvt.f32.s32 (integer to float) needs a rounding modifier (.rn, .rz, .rm, "
       ".rp)",
       cvt(T::kF32, T::kS32, Rounding::kNone)},
      {"instruction 1: cvt.rzi.f64.u64 %10, %11: cvt.f64.u64 (integer to float) needs a rounding modifier (.rn, .rz, "
       ".rm, .rp)",
       cvt(T::kF64, T::kU64, Rounding::kRzi)},
      {"instruction 1: cvt.f16.f32 %10, %11: cvt.f16.f32 (narrowing) needs a rounding modifier (.rn, .rz, .rm, .rp)",
       cvt(T::kF16, T::kF32, Rounding::kNone)},
      {"instruction 1: cvt.f32.f64 %10, %11: cvt.f32.f64 (narrowing) needs a rounding modifier (.rn, .rz, .rm, .rp)",
       cvt(T::kF32, T::kF64, Rounding::kNone)},
      {"OK", cvt(T::kF16, T::kF32, Rounding::kRz)},
      {"instruction 1: cvt.rn.f64.f32 %10, %11: cvt.f64.f32 (widening) takes no rounding modifier",
       cvt(T::kF64, T::kF32, Rounding::kRn)},
      {"OK", cvt(T::kF64, T::kF32, Rounding::kNone)},
      {"instruction 1: cvt.rn.f32.f32 %10, %11: cvt.f32.f32 takes only an integer rounding modifier (.rni, .rzi, "
       ".rmi, .rpi)",
       cvt(T::kF32, T::kF32, Rounding::kRn)},
      {"OK", cvt(T::kF32, T::kF32, Rounding::kRni)},
      {"instruction 1: cvt.rn.u32.s32 %10, %11: cvt.u32.s32 (integer to integer) takes no rounding modifier",
       cvt(T::kU32, T::kS32, Rounding::kRn)},
      {"instruction 1: cvt.sat.s32.u16 %10, %11: cvt.s32.u16 cannot overflow, so .sat does not apply",
       [&](Fixture& f) { cvt(T::kS32, T::kU16, Rounding::kNone)(f); f.h.kernel().body.back().mods.sat = true; }},
      {"OK", [&](Fixture& f) { cvt(T::kU32, T::kS32, Rounding::kNone)(f); f.h.kernel().body.back().mods.sat = true; }},
      {"instruction 1: cvt.rn.sat.bf16.f32 %10, %11: cvt.bf16.f32: .sat does not apply to cvt with bf16",
       [&](Fixture& f) { cvt(T::kBF16, T::kF32, Rounding::kRn)(f); f.h.kernel().body.back().mods.sat = true; }},
      {"instruction 1: cvt.rzi.s8.bf16 %10, %11: cvt.s8.bf16: PTX has no cvt between bf16 and 8-bit integers",
       [&](Fixture& f) {
         f.h.kernel().target = ir::Target::kSm90;
         cvt(T::kS8, T::kBF16, Rounding::kRzi)(f);
       }},
      {"instruction 1: cvt.rn.ftz.f64.s32 %10, %11: .ftz applies to cvt with an f32 operand only",
       cvt(T::kF64, T::kS32, Rounding::kRn, /*ftz=*/true)},
      {"OK", cvt(T::kF16, T::kF32, Rounding::kRn, /*ftz=*/true)},
      {"instruction 0: cvt.f32.f16 %2, %2: operand 1 is %2 (f32), expected f16",
       [](Fixture& f) { f.Add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = T::kF16}, {f.f32}, {f.f32}); }},
      {"instruction 0: cvt.f32.f16 %5, %5: operand 0 is %5 (f16), expected f32",
       [](Fixture& f) { f.Add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = T::kF16}, {f.f16}, {f.f16}); }},
      {"instruction 0: cvt.f32.f16 %2: cvt takes 1 destination(s) and 1 source(s), got 1 and 0",
       [](Fixture& f) { f.Add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = T::kF16}, {f.f32}, {}); }},
  });
}

TEST_CASE("rules of individual opcodes", "[verifier]") {
  RunCases({
      {"instruction 0: mov.u32 %1, %clock64: %clock64 is u64; mov.u32 cannot read it",
       [](Fixture& f) { f.Add(Opcode::kMov, Ty(T::kU32), {f.u32}, {Operand::Special(ir::SpecialReg::kClock64)}); }},
      {"instruction 0: mov.u16 %9, tile: a variable's address is u32 or u64",
       [](Fixture& f) { f.Add(Opcode::kMov, Ty(T::kU16), {f.u16}, {Operand::Symbol(f.tile)}); }},
      {"instruction 0: bfe.u32 %1, %1, 256, 8: operand 2: the bit position 256 is out of range (0..255)",
       [](Fixture& f) { f.Add(Opcode::kBfe, Ty(T::kU32), {f.u32}, {f.u32, Imm(T::kU32, 256), Imm(T::kU32, 8)}); }},
      {"instruction 0: bfi.b32 %7, %7, %7, 0, 300: operand 4: the bit length 300 is out of range (0..255)",
       [](Fixture& f) { f.Add(Opcode::kBfi, Ty(T::kB32), {f.b32}, {f.b32, f.b32, Imm(T::kU32, 0), Imm(T::kU32, 300)}); }},
      {"instruction 0: setp.u32 %3, %1, %1: setp needs a comparison",
       [](Fixture& f) { f.Add(Opcode::kSetp, Ty(T::kU32), {f.pred}, {f.u32, f.u32}); }},
      {"instruction 0: setp.lo.s32 %3, %6, %6: comparison .lo does not apply to s32",
       [](Fixture& f) {
         f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kS32, .cmp = ir::CmpOp::kLo}, {f.pred}, {f.s32, f.s32});
       }},
      {"instruction 0: setp.eq.u32 %1, %1, %1: operand 0 is %1 (u32), expected pred",
       [](Fixture& f) {
         f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kU32, .cmp = ir::CmpOp::kEq}, {f.u32}, {f.u32, f.u32});
       }},
      {"instruction 0: red.global.cas.b32 [%0], %7: red has no .cas (use atom.cas)",
       [](Fixture& f) {
         f.Add(Opcode::kRed, ir::Modifiers{.type = T::kB32, .space = StateSpace::kGlobal, .atom = ir::AtomOp::kCas},
               {}, {Operand::AddrReg(f.u64, 0), f.b32});
       }},
      {"instruction 0: red.global.exch.b32 [%0], %7: red has no .exch (use atom.exch)",
       [](Fixture& f) {
         f.Add(Opcode::kRed, ir::Modifiers{.type = T::kB32, .space = StateSpace::kGlobal, .atom = ir::AtomOp::kExch},
               {}, {Operand::AddrReg(f.u64, 0), f.b32});
       }},
      {"instruction 0: red.acquire.global.add.u32 [%0], %1: red has no .acquire (only .relaxed and .release)",
       [](Fixture& f) {
         f.Add(Opcode::kRed,
               ir::Modifiers{.type = T::kU32, .space = StateSpace::kGlobal, .atom = ir::AtomOp::kAdd,
                             .sem = ir::MemSem::kAcquire},
               {}, {Operand::AddrReg(f.u64, 0), f.u32});
       }},
      {"instruction 0: atom.global.inc.u64 %0, [%0], %0: .inc does not apply to u64",
       [](Fixture& f) {
         f.Add(Opcode::kAtom, ir::Modifiers{.type = T::kU64, .space = StateSpace::kGlobal, .atom = ir::AtomOp::kInc},
               {f.u64}, {Operand::AddrReg(f.u64, 0), f.u64});
       }},
      {"instruction 0: atom.global.u32 %1, [%0], %1: atom needs an operation (.add, .min, .max, .inc, .dec, .and, "
       ".or, .xor, .exch, .cas)",
       [](Fixture& f) {
         f.Add(Opcode::kAtom, Mem(T::kU32, StateSpace::kGlobal), {f.u32}, {Operand::AddrReg(f.u64, 0), f.u32});
       }},
      {"instruction 0: red.global.u32 [%0], %1: red needs an operation (.add, .min, .max, .inc, .dec, .and, .or, "
       ".xor)",
       [](Fixture& f) { f.Add(Opcode::kRed, Mem(T::kU32, StateSpace::kGlobal), {}, {Operand::AddrReg(f.u64, 0), f.u32}); }},
      {"instruction 0: atom.local.add.u32 %1, [%0], %1: atom works on global, shared or generic addresses, not local",
       [](Fixture& f) {
         f.Add(Opcode::kAtom, ir::Modifiers{.type = T::kU32, .space = StateSpace::kLocal, .atom = ir::AtomOp::kAdd},
               {f.u32}, {Operand::AddrReg(f.u64, 0), f.u32});
       }},
      {"instruction 0: atom.global.add.f16 %5, [%0], %5: .noftz is required for (and only for) f16/bf16 add",
       [](Fixture& f) {
         f.Add(Opcode::kAtom, ir::Modifiers{.type = T::kF16, .space = StateSpace::kGlobal, .atom = ir::AtomOp::kAdd},
               {f.f16}, {Operand::AddrReg(f.u64, 0), f.f16});
       }},
      {"instruction 0: red.shared.add.noftz.f32 [tile], %2: .noftz is required for (and only for) f16/bf16 add",
       [](Fixture& f) {
         ir::Modifiers m{.type = T::kF32, .space = StateSpace::kShared, .atom = ir::AtomOp::kAdd};
         m.noftz = true;
         f.Add(Opcode::kRed, m, {}, {Operand::AddrSymbol(f.tile, 0), f.f32});
       }},
      {"instruction 0: atom.global.cas.b32 %7, [%0], %7: atom takes 1 destination(s) and 3 source(s), got 1 and 2",
       [](Fixture& f) {
         f.Add(Opcode::kAtom, ir::Modifiers{.type = T::kB32, .space = StateSpace::kGlobal, .atom = ir::AtomOp::kCas},
               {f.b32}, {Operand::AddrReg(f.u64, 0), f.b32});
       }},
      {"instruction 0: bra %1: bra needs a label of this kernel", [](Fixture& f) { f.Add(Opcode::kBra, {}, {}, {f.u32}); }},
      {"instruction 0: bra $L9: operand 0 names label 9, which does not exist",
       [](Fixture& f) { f.Add(Opcode::kBra, {}, {}, {Operand::FromLabel(ir::Label{9})}); }},
      {"instruction 0: bar.sync: bar.sync takes a barrier id and optionally a thread count",
       [](Fixture& f) { f.Add(Opcode::kBarSync, {}, {}, {}); }},
      {"instruction 0: bar.sync 16: barrier ids are 0..15",
       [](Fixture& f) { f.Add(Opcode::kBarSync, {}, {}, {Imm(T::kU32, 16)}); }},
      {"instruction 0: bar.sync 0, 48: the bar.sync thread count must be a positive multiple of 32",
       [](Fixture& f) { f.Add(Opcode::kBarSync, {}, {}, {Imm(T::kU32, 0), Imm(T::kU32, 48)}); }},
      {"instruction 0: bar.sync %2: operand 0 is %2 (f32), expected u32",
       [](Fixture& f) { f.Add(Opcode::kBarSync, {}, {}, {f.f32}); }},
      {"instruction 0: shfl.sync.bfly.b32 %7, %7, 1, 31: shfl.sync takes 1 or 2 destinations and 4 sources",
       [](Fixture& f) {
         f.Add(Opcode::kShfl, ir::Modifiers{.type = T::kB32, .shfl = ir::ShflMode::kBfly}, {f.b32},
               {f.b32, Imm(T::kU32, 1), Imm(T::kU32, 31)});
       }},
      {"instruction 0: shfl.sync.b32 %7, %7, 1, 31, -1: shfl.sync needs a mode (up, down, bfly, idx)",
       [](Fixture& f) {
         f.Add(Opcode::kShfl, Ty(T::kB32), {f.b32}, {f.b32, Imm(T::kU32, 1), Imm(T::kU32, 31), Imm(T::kS32, 0xFFFFFFFF)});
       }},
      {"instruction 0: shfl.sync.idx.b32 %7|%1, %7, 1, 31, %1: operand 1 is %1 (u32), expected pred",
       [](Fixture& f) {
         f.Add(Opcode::kShfl, ir::Modifiers{.type = T::kB32, .shfl = ir::ShflMode::kIdx}, {f.b32, f.u32},
               {f.b32, Imm(T::kU32, 1), Imm(T::kU32, 31), f.u32});
       }},
      {"instruction 0: vote.sync.pred %3, %3, -1: vote.sync needs a mode (all, any, uni, ballot)",
       [](Fixture& f) { f.Add(Opcode::kVote, Ty(T::kPred), {f.pred}, {f.pred, Imm(T::kS32, 0xFFFFFFFF)}); }},
      {"instruction 0: vote.sync.ballot.pred %3, %3, -1: vote.sync.ballot is .b32; all, any and uni are .pred",
       [](Fixture& f) {
         f.Add(Opcode::kVote, ir::Modifiers{.type = T::kPred, .vote = ir::VoteMode::kBallot}, {f.pred},
               {f.pred, Imm(T::kS32, 0xFFFFFFFF)});
       }},
      {"instruction 0: vote.sync.all.b32 %7, %3, -1: vote.sync.ballot is .b32; all, any and uni are .pred",
       [](Fixture& f) {
         f.Add(Opcode::kVote, ir::Modifiers{.type = T::kB32, .vote = ir::VoteMode::kAll}, {f.b32},
               {f.pred, Imm(T::kS32, 0xFFFFFFFF)});
       }},
      {"instruction 0: membar: membar needs a level (cta, gl, sys)",
       [](Fixture& f) { f.Add(Opcode::kMembar, {}, {}, {}); }},
      {"instruction 0: ret %1: ret takes 0 destination(s) and 0 source(s), got 0 and 1",
       [](Fixture& f) { f.Add(Opcode::kRet, {}, {}, {f.u32}); }},
      {"instruction 0: $L99:: operand 0 names label 99, which does not exist",
       [](Fixture& f) { f.h.Bind(ir::Label{99}); }},
      {"instruction 0: :: a label definition needs a label of this kernel",
       [](Fixture& f) { f.Add(Opcode::kLabel, {}, {}, {}); }},
  });
}

TEST_CASE("labels and definitions", "[verifier]") {
  RunCases({
      {"OK", [](Fixture& f) { f.h.Bind(f.done); f.Add(Opcode::kPragmaNoUnroll, {}, {}, {}); }},
      {"instruction 0: .pragma \"nounroll\": must come right after the label of a loop header (ptxas ignores it "
       "anywhere else)",
       [](Fixture& f) { f.Add(Opcode::kPragmaNoUnroll, {}, {}, {}); }},
      {"instruction 2: .pragma \"nounroll\": must come right after the label of a loop header (ptxas ignores it "
       "anywhere else)",
       [](Fixture& f) {
         f.h.Bind(f.done);
         f.h.MovImm(f.u32, T::kU32, 1);
         f.Add(Opcode::kPragmaNoUnroll, {}, {}, {});
       }},
      {"instruction 2: @%3 .pragma \"nounroll\": a pragma cannot be guarded",
       [](Fixture& f) {
         f.h.MovImm(f.pred, T::kPred, 1);
         f.h.Bind(f.done);
         f.Add(Opcode::kPragmaNoUnroll, {}, {}, {}).guard = f.pred;
       }},
      {"instruction 0: bra $L0_done: branch to a label that is never bound", [](Fixture& f) { f.h.Bra(f.done); }},
      {"instruction 1: $L0_done:: label is bound twice", [](Fixture& f) { f.h.Bind(f.done); f.h.Bind(f.done); }},
      {StrCat("verifier_test.cc:", __LINE__ + 4, ": $L0_done:: label is bound twice (first at verifier_test.cc:",
              __LINE__ + 2, ")"),
       [](Fixture& f) {
         f.h.Bind(f.done).loc = ir::SourceLoc::current();
         f.h.Bind(f.done).loc = ir::SourceLoc::current();
       }},
      {"instruction 1: mov.u32 %1, 2: %1 is defined twice; declare it mutable to assign it again",
       [](Fixture& f) {
         f.h.MovImm(f.u32, T::kU32, 1);
         f.h.MovImm(f.u32, T::kU32, 2);
       }},
      {StrCat("verifier_test.cc:", __LINE__ + 4, ": mov.u32 %1, 2: %1 is defined twice (first at verifier_test.cc:",
              __LINE__ + 2, "); declare it mutable to assign it again"),
       [](Fixture& f) {
         f.h.MovImm(f.u32, T::kU32, 1).loc = ir::SourceLoc::current();
         f.h.MovImm(f.u32, T::kU32, 2).loc = ir::SourceLoc::current();
       }},
      {"OK",
       [](Fixture& f) {
         f.h.kernel().regs[f.u32.id].is_mutable = true;
         f.h.MovImm(f.u32, T::kU32, 1);
         f.h.MovImm(f.u32, T::kU32, 2);
       }},
      {"instruction 0: add.u32 %6, %1, 1: %1 is used before it is defined (it is never defined)",
       [](Fixture& f) { f.Add(Opcode::kAdd, Ty(T::kU32), {f.s32}, {f.u32, Imm(T::kU32, 1)}); }},
      {"instruction 0: add.u32 %6, %1, 1: %1 is used before it is defined on some path",
       [](Fixture& f) {
         f.Add(Opcode::kAdd, Ty(T::kU32), {f.s32}, {f.u32, Imm(T::kU32, 1)});
         f.h.MovImm(f.u32, T::kU32, 1);
       }},
      {"instruction 0: @%3 bra $L0_done: %3 is used before it is defined (it is never defined)",
       [](Fixture& f) {
         f.h.Bra(f.done).guard = f.pred;
         f.h.Bind(f.done);
       }},
      {"instruction 0: ld.global.u32 %1, [%0]: %0 is used before it is defined (it is never defined)",
       [](Fixture& f) { f.Add(Opcode::kLd, Mem(T::kU32, StateSpace::kGlobal), {f.u32}, {Operand::AddrReg(f.u64, 0)}); }},
      // Defined on only one side of a branch.
      {"instruction 5: add.u32 %6, %1, 1: %1 is used before it is defined on some path",
       [](Fixture& f) {
         f.h.MovImm(f.b32, T::kB32, 5);
         f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kB32, .cmp = ir::CmpOp::kEq}, {f.pred}, {f.b32, Imm(T::kB32, 0)});
         f.h.Bra(f.done).guard = f.pred;
         f.h.MovImm(f.u32, T::kU32, 1);
         f.h.Bind(f.done);
         f.Add(Opcode::kAdd, Ty(T::kU32), {f.s32}, {f.u32, Imm(T::kU32, 1)});
       }},
      // Defined only by a guarded instruction.
      {"instruction 3: add.u32 %6, %1, 1: %1 is used before it is defined on some path",
       [](Fixture& f) {
         f.h.MovImm(f.b32, T::kB32, 5);
         f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kB32, .cmp = ir::CmpOp::kEq}, {f.pred}, {f.b32, Imm(T::kB32, 0)});
         f.h.MovImm(f.u32, T::kU32, 1).guard = f.pred;
         f.Add(Opcode::kAdd, Ty(T::kU32), {f.s32}, {f.u32, Imm(T::kU32, 1)});
       }},
      // Defined on both sides: fine.
      {"OK",
       [](Fixture& f) {
         ir::Label other = f.h.NewLabel("else");
         f.h.kernel().regs[f.u32.id].is_mutable = true;
         f.h.MovImm(f.b32, T::kB32, 5);
         f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kB32, .cmp = ir::CmpOp::kEq}, {f.pred}, {f.b32, Imm(T::kB32, 0)});
         f.h.Bra(other).guard = f.pred;
         f.h.MovImm(f.u32, T::kU32, 1);
         f.h.Bra(f.done);
         f.h.Bind(other);
         f.h.MovImm(f.u32, T::kU32, 2);
         f.h.Bind(f.done);
         f.Add(Opcode::kAdd, Ty(T::kU32), {f.s32}, {f.u32, Imm(T::kU32, 1)});
       }},
      {"instruction 0: mov.u32 %1, 5: the body falls off its end: the last instruction must be ret, exit or an "
       "unconditional bra",
       [](Fixture& f) { f.h.MovImm(f.u32, T::kU32, 5); }, /*add_ret=*/false},
      {"instruction 2: @%3 ret: the body falls off its end: the last instruction must be ret, exit or an "
       "unconditional bra",
       [](Fixture& f) {
         f.h.MovImm(f.b32, T::kB32, 5);
         f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kB32, .cmp = ir::CmpOp::kEq}, {f.pred}, {f.b32, Imm(T::kB32, 0)});
         f.h.Ret().guard = f.pred;
       },
       /*add_ret=*/false},
  });
}

TEST_CASE("a typed builder kernel: used before defined on one branch", "[verifier]") {
  KernelBuilder b("branchy");
  Value<U32> n = b.Param<U32>("n");
  Value<U32> v = b.Undefined<U32>("v");
  b.If(b.Gt(n, 4u), [&] { b.EmitInstruction([&] {
    ir::Instruction mov;
    mov.op = Opcode::kMov;
    mov.mods.type = T::kU32;
    mov.dsts.push_back(v.reg);
    mov.srcs.push_back(n.reg);
    return mov;
  }()); });
  const int line = __LINE__; Value<U32> w = b.Add(v, 1u);
  b.Store(StateSpace::kGlobal, Address(b.Param<U64>("out")), w);
  REQUIRE(Msg(b.Finish()) == StrCat("kernel branchy: verifier_test.cc:", line,
                                    ": add.u32 %3, %1, 1: %1 is used before it is defined on some path"));
}

// The must-defined analysis as it was before the dominator formulation: a
// register set per block, intersected over predecessors to a fixed point.
// Returns the first use of an undefined register in body order as
// (instruction, register, never defined), or nothing.
struct UseError {
  size_t inst;
  uint32_t reg;
  bool never;
};
std::optional<UseError> ReferenceUseBeforeDef(const ir::Kernel& k) {
  const size_t nregs = k.regs.size();
  std::vector<uint32_t> def_at(nregs, UINT32_MAX);
  for (size_t i = 0; i < k.body.size(); ++i) {
    for (ir::Reg d : k.body[i].dsts) {
      if (def_at[d.id] == UINT32_MAX) def_at[d.id] = static_cast<uint32_t>(i);
    }
  }
  ir::Cfg cfg = ir::Cfg::Build(k);
  const size_t nb = cfg.blocks.size();
  std::vector<ir::BitSet> gen(nb, ir::BitSet(nregs));
  for (size_t b = 0; b < nb; ++b) {
    for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
      if (k.body[i].guarded()) continue;
      for (ir::Reg d : k.body[i].dsts) gen[b].Set(d.id);
    }
  }
  std::vector<ir::BitSet> out(nb, ir::BitSet(nregs, true));
  const ir::BitSet empty(nregs);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = 0; b < nb; ++b) {
      ir::BitSet in = b == 0 ? empty : ir::BitSet(nregs, true);
      for (uint32_t p : cfg.preds(b)) in.IntersectWith(out[p]);
      in.UnionWith(gen[b]);
      if (!(in == out[b])) {
        out[b] = std::move(in);
        changed = true;
      }
    }
  }
  for (size_t b = 0; b < nb; ++b) {
    ir::BitSet defined = b == 0 ? empty : ir::BitSet(nregs, true);
    for (uint32_t p : cfg.preds(b)) defined.IntersectWith(out[p]);
    struct GuardedDef {
      uint32_t reg, guard;
      bool negated;
    };
    std::vector<GuardedDef> guarded_defs;
    for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
      const ir::Instruction& inst = k.body[i];
      std::optional<UseError> found;
      ir::ForEachUse(inst, [&](ir::Reg r) {
        if (found || defined.Test(r.id)) return;
        bool under_guard = false;
        if (inst.guarded() && inst.guard != r) {
          for (const GuardedDef& g : guarded_defs) {
            under_guard |= g.reg == r.id && g.guard == inst.guard.id && g.negated == inst.guard_negated;
          }
        }
        if (!under_guard) found = UseError{i, r.id, def_at[r.id] == UINT32_MAX};
      });
      if (found) return found;
      for (ir::Reg d : inst.dsts) {
        std::erase_if(guarded_defs, [&](const GuardedDef& g) { return g.guard == d.id; });
        if (inst.guarded()) {
          guarded_defs.push_back({d.id, inst.guard.id, inst.guard_negated});
        } else {
          defined.Set(d.id);
        }
      }
    }
  }
  return std::nullopt;
}

TEST_CASE("use before definition: the dominator formulation agrees with set dataflow on random CFGs", "[verifier]") {
  // Random bodies of movs, adds, setps, branches forward and backward
  // (guarded or not), labels, guarded definitions and early returns, over
  // mutable and once-defined registers. The verdict and message must be what
  // the per-block set dataflow gives.
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto next = [&](uint32_t n) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return static_cast<uint32_t>(seed % n);
  };
  int errors = 0, oks = 0;
  for (int round = 0; round < 4000; ++round) {
    HandKernel h("k");
    const uint32_t nvals = 2 + next(6), npreds = 1 + next(2), nlabels = next(5);
    std::vector<ir::Reg> vals, preds;
    std::vector<bool> defined_once(nvals + npreds, false);
    for (uint32_t v = 0; v < nvals; ++v) vals.push_back(h.Reg(T::kU32, /*is_mutable=*/next(3) != 0));
    for (uint32_t p = 0; p < npreds; ++p) preds.push_back(h.Reg(T::kPred, /*is_mutable=*/true));
    std::vector<ir::Label> labels;
    for (uint32_t l = 0; l < nlabels; ++l) labels.push_back(h.NewLabel());
    const uint32_t length = 4 + next(28);
    // Where each label is bound: a random position, once.
    std::vector<uint32_t> bind_at(nlabels);
    for (uint32_t& at : bind_at) at = next(length);
    auto maybe_guard = [&](ir::Instruction& inst) {
      if (next(4) == 0) {
        inst.guard = preds[next(npreds)];
        inst.guard_negated = next(2) != 0;
      }
    };
    auto def_ok = [&](ir::Reg r) { return h.kernel().regs[r.id].is_mutable || !defined_once[r.id]; };
    for (uint32_t pos = 0; pos < length; ++pos) {
      for (uint32_t l = 0; l < nlabels; ++l) {
        if (bind_at[l] == pos) h.Bind(labels[l]);
      }
      switch (next(7)) {
        case 0:
        case 1: {
          ir::Reg d = vals[next(nvals)];
          if (!def_ok(d)) break;
          defined_once[d.id] = true;
          maybe_guard(h.MovImm(d, T::kU32, pos));
          break;
        }
        case 2: {
          ir::Reg d = vals[next(nvals)];
          if (!def_ok(d)) break;
          defined_once[d.id] = true;
          maybe_guard(h.Add(Opcode::kAdd, Ty(T::kU32), {d}, {vals[next(nvals)], vals[next(nvals)]}));
          break;
        }
        case 3:
          maybe_guard(h.Add(Opcode::kSetp, ir::Modifiers{.type = T::kU32, .cmp = ir::CmpOp::kLt},
                            {preds[next(npreds)]}, {vals[next(nvals)], Imm(T::kU32, 7)}));
          break;
        case 4:
        case 5:
          if (nlabels > 0) maybe_guard(h.Bra(labels[next(nlabels)]));
          break;
        default:
          if (next(3) == 0) {
            ir::Instruction& ret = h.Ret();
            ret.guard = preds[next(npreds)];
          }
          break;
      }
    }
    h.Ret();
    const ir::Kernel& k = h.kernel();
    std::optional<UseError> expected = ReferenceUseBeforeDef(k);
    absl::Status s = passes::VerifyKernel(k);
    std::string body;
    for (const ir::Instruction& inst : k.body) body += ir::InstructionText(k, inst) + "\n";
    INFO("round " << round << ":\n" << body << "got: " << Msg(s));
    if (!expected) {
      REQUIRE(s.ok());
      ++oks;
    } else {
      ++errors;
      REQUIRE(!s.ok());
      const std::string want_head = StrCat("kernel k: instruction ", expected->inst, ": ");
      const std::string want_tail = StrCat(": %", expected->reg, " is used before it is defined",
                                           expected->never ? " (it is never defined)" : " on some path");
      const std::string msg(s.message());
      REQUIRE(msg.substr(0, want_head.size()) == want_head);
      REQUIRE(msg.size() >= want_tail.size());
      REQUIRE(msg.substr(msg.size() - want_tail.size()) == want_tail);
    }
  }
  // Both verdicts are well represented.
  REQUIRE(errors > 1000);
  REQUIRE(oks > 300);
}

TEST_CASE("verified once: Finish() marks the kernel, any change to it drops the mark", "[verifier]") {
  KernelBuilder b("marked");
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> v = b.Add(b.TidX(), 3u);
  b.Store(StateSpace::kGlobal, out, v);
  absl::StatusOr<ir::Kernel> built = b.Finish();
  REQUIRE(Msg(built) == "OK");
  ir::Kernel k = *std::move(built);
  REQUIRE(ir::IsMarkedVerified(k));
  passes::VerifierPass pass;
  REQUIRE(Msg(pass.Run(k)) == "OK");
  // Stats are not part of what the verifier reads.
  k.stats = ir::KernelStats{};
  REQUIRE(ir::IsMarkedVerified(k));
  // A change the verifier would refuse: the mark no longer holds, the pass verifies and fails.
  ir::Kernel broken = k;
  REQUIRE(ir::IsMarkedVerified(broken));  // a copy keeps the mark
  for (ir::Instruction& inst : broken.body) {
    if (inst.op == Opcode::kAdd) inst.mods.type = T::kF64;
  }
  REQUIRE_FALSE(ir::IsMarkedVerified(broken));
  REQUIRE(Msg(pass.Run(broken)).find("add.f64") != std::string::npos);
  REQUIRE_FALSE(ir::IsMarkedVerified(broken));
  // A valid change: verified again, then marked.
  ir::Kernel renamed = k;
  renamed.name = "renamed";
  REQUIRE_FALSE(ir::IsMarkedVerified(renamed));
  REQUIRE(Msg(ir::VerifyKernelOnce(renamed)) == "OK");
  REQUIRE(ir::IsMarkedVerified(renamed));
  // Hand-built kernels start unmarked.
  HandKernel h("hand");
  h.Ret();
  REQUIRE_FALSE(ir::IsMarkedVerified(h.kernel()));
}

TEST_CASE("reference limits: each operand kind and address base is checked against what it names", "[verifier]") {
  HandKernel h("limits");
  h.Reg(T::kU32);
  h.Reg(T::kU32);  // 2 registers
  ir::Kernel& k = h.kernel();
  k.params.push_back(ir::Param{"p", T::kU64});  // 1 param, no variables, no labels
  const ir::ReferenceLimits limits(k);
  using ir::OperandKind;
  auto make = [](OperandKind kind, ir::AddressBase base, uint32_t id) {
    Operand op;
    op.kind = kind;
    op.base = base;
    op.id = id;
    return op;
  };
  struct Row {
    OperandKind kind;
    ir::AddressBase base;
    uint32_t first_bad_id;  // ids below it fit
  };
  const ir::AddressBase reg = ir::AddressBase::kReg;
  const std::vector<Row> rows = {
      {OperandKind::kNone, reg, 0},
      {OperandKind::kReg, reg, 2},
      {OperandKind::kSpecial, reg, static_cast<uint32_t>(ir::kNumSpecialRegs)},
      {OperandKind::kSymbol, reg, 0},
      {OperandKind::kLabel, reg, 0},
      {OperandKind::kAddress, ir::AddressBase::kReg, 2},
      {OperandKind::kAddress, ir::AddressBase::kSymbol, 0},
      {OperandKind::kAddress, ir::AddressBase::kParam, 1},
      // Out of range: no id fits (a kind just past kAddress must not read
      // as an address code).
      {static_cast<OperandKind>(7), reg, 0},
      {static_cast<OperandKind>(9), reg, 0},
      {static_cast<OperandKind>(255), reg, 0},
      {OperandKind::kAddress, static_cast<ir::AddressBase>(3), 0},
      {OperandKind::kAddress, static_cast<ir::AddressBase>(200), 0},
  };
  for (const Row& r : rows) {
    INFO(static_cast<int>(r.kind) << " " << static_cast<int>(r.base));
    if (r.first_bad_id > 0) CHECK(limits.Fits(make(r.kind, r.base, r.first_bad_id - 1)));
    CHECK_FALSE(limits.Fits(make(r.kind, r.base, r.first_bad_id)));
  }
  // An immediate's id is not a reference: any fits.
  CHECK(limits.Fits(make(OperandKind::kImm, reg, UINT32_MAX)));
  // The operands that read a register, by code.
  for (const Row& r : rows) {
    const Operand op = make(r.kind, r.base, 0);
    CHECK(((ir::ReferenceLimits::kReadsRegCodes >> ir::ReferenceLimits::Code(op)) & 1) == op.reads_reg());
  }
}

TEST_CASE("the verified mark covers every field the verifier reads", "[verifier]") {
  // A kernel with something in every field Fingerprint hashes (it need not
  // be valid: MarkVerified does not verify). Each change below must drop
  // the mark; each leaves the kernel's other fields as they were.
  ir::Kernel base;
  base.name = "fields";
  base.params.push_back(ir::Param{"p", T::kU64});
  base.variables.push_back(ir::Variable{"tile", StateSpace::kShared, T::kF32, 64, 16, false});
  const ir::Reg r0 = base.AddReg(T::kU32, false, "i");
  const ir::Reg r1 = base.AddReg(T::kU32, true);
  const ir::Reg r2 = base.AddReg(T::kU32);
  const ir::Reg pred = base.AddReg(T::kPred);
  base.AddLabel("top");
  ir::Instruction& inst = base.body.emplace_back();
  inst.op = Opcode::kAdd;
  inst.mods.type = T::kU32;
  inst.guard = pred;
  inst.raw_index = 0;
  inst.dsts = {r0, r1, r2};
  inst.srcs = {Operand(r1), Operand::Imm(T::kU32, 7), Operand::AddrReg(r2, 8)};
  base.raw_ptx.push_back(ir::RawPtxBlock{"mov.u32 {0}, 1;", {}});
  base.bounds.maxntid = {128, 1, 1};
  ir::MarkVerified(base);
  REQUIRE(ir::IsMarkedVerified(base));

  const std::vector<std::pair<std::string, std::function<void(ir::Kernel&)>>> changes = {
      {"name", [](ir::Kernel& k) { k.name = "fieldz"; }},
      {"target", [](ir::Kernel& k) { k.target = ir::Target::kSm90; }},
      {"param name", [](ir::Kernel& k) { k.params[0].name = "q"; }},
      {"param type", [](ir::Kernel& k) { k.params[0].type = T::kU32; }},
      {"variable count", [](ir::Kernel& k) { k.variables[0].count = 65; }},
      {"variable align", [](ir::Kernel& k) { k.variables[0].align = 8; }},
      {"variable extern", [](ir::Kernel& k) { k.variables[0].is_extern = true; }},
      {"register type", [](ir::Kernel& k) { k.regs[2].type = T::kS32; }},
      {"register mutable", [](ir::Kernel& k) { k.regs[0].is_mutable = true; }},
      {"register hint", [](ir::Kernel& k) { k.SetHint(ir::Reg{1}, "j"); }},
      {"label hint", [](ir::Kernel& k) { k.labels[0].hint_id = k.InternName("bottom"); }},
      {"hint text", [](ir::Kernel& k) { k.names.Set(0, "j"); }},
      {"opcode", [](ir::Kernel& k) { k.body[0].op = Opcode::kSub; }},
      {"modifier", [](ir::Kernel& k) { k.body[0].mods.type = T::kS32; }},
      {"guard", [](ir::Kernel& k) { k.body[0].guard = ir::Reg{2}; }},
      {"guard negated", [](ir::Kernel& k) { k.body[0].guard_negated = true; }},
      {"raw index", [](ir::Kernel& k) { k.body[0].raw_index = 1; }},
      {"first definition", [](ir::Kernel& k) { k.body[0].dsts[0] = ir::Reg{3}; }},
      {"second definition", [](ir::Kernel& k) { k.body[0].dsts[1] = ir::Reg{3}; }},
      {"third definition", [](ir::Kernel& k) { k.body[0].dsts[2] = ir::Reg{3}; }},
      {"one definition fewer", [](ir::Kernel& k) { k.body[0].dsts = {ir::Reg{0}, ir::Reg{1}}; }},
      {"source register", [](ir::Kernel& k) { k.body[0].srcs[0] = Operand(ir::Reg{0}); }},
      {"immediate bits", [](ir::Kernel& k) { k.body[0].srcs[1].value = 8; }},
      {"immediate type", [](ir::Kernel& k) { k.body[0].srcs[1].type = T::kS32; }},
      {"address offset", [](ir::Kernel& k) { k.body[0].srcs[2].value = 12; }},
      {"address base", [](ir::Kernel& k) { k.body[0].srcs[2].base = ir::AddressBase::kSymbol; }},
      {"one source fewer", [](ir::Kernel& k) { k.body[0].srcs.pop_back(); }},
      {"instructions swapped", [](ir::Kernel& k) {
         k.body.push_back(k.body[0]);
         k.body[1].op = Opcode::kSub;
         ir::MarkVerified(k);  // the two-instruction kernel is the marked one here
         std::swap(k.body[0], k.body[1]);
       }},
      {"raw text", [](ir::Kernel& k) { k.raw_ptx[0].text = "mov.u32 {0}, 2;"; }},
      {"raw requirement", [](ir::Kernel& k) { k.raw_ptx[0].requirement.sm = 90; }},
      {"maxntid", [](ir::Kernel& k) { k.bounds.maxntid[2] = 2; }},
      {"reqntid", [](ir::Kernel& k) { k.bounds.reqntid[1] = 1; }},
      {"minnctapersm", [](ir::Kernel& k) { k.bounds.minnctapersm = 2; }},
      {"maxnreg", [](ir::Kernel& k) { k.bounds.maxnreg = 64; }},
  };
  for (const auto& [what, change] : changes) {
    ir::Kernel k = base;
    REQUIRE(ir::IsMarkedVerified(k));
    change(k);
    INFO(what);
    REQUIRE_FALSE(ir::IsMarkedVerified(k));
  }
}

TEST_CASE("the verified mark covers every byte of a name of any length", "[verifier]") {
  // Names are hashed 16 bytes at a time and then a tail of 1-15 bytes in
  // overlapping loads; a change to any byte, at any length, drops the mark.
  for (size_t length = 1; length <= 40; ++length) {
    ir::Kernel base;
    base.name = std::string(length, 'k');
    for (size_t i = 0; i < length; ++i) base.name[i] = static_cast<char>('a' + i % 26);
    ir::MarkVerified(base);
    for (size_t i = 0; i < length; ++i) {
      ir::Kernel k = base;
      REQUIRE(ir::IsMarkedVerified(k));
      k.name[i] = '_';
      INFO("length " << length << ", byte " << i);
      REQUIRE_FALSE(ir::IsMarkedVerified(k));
    }
    ir::Kernel longer = base;
    longer.name += 'a';
    REQUIRE_FALSE(ir::IsMarkedVerified(longer));
  }
}

TEST_CASE("the target decides which instructions are allowed and the PTX version", "[verifier]") {
  auto kernel_with = [](ir::Target target, ScalarType to, ScalarType from) {
    HandKernel h("conv", target);
    ir::Reg s = h.Reg(from);
    ir::Reg d = h.Reg(to);
    h.MovImm(s, T::kB16, 0);
    ir::Modifiers m{.type = to, .type2 = from};
    if (ir::TypeBits(to) < 32) m.rounding = ir::Rounding::kRn;
    h.Add(Opcode::kCvt, m, {d}, {s});
    h.Ret();
    return h.kernel();
  };
  ir::Kernel up = kernel_with(ir::Target::kSm80, T::kF32, T::kBF16);
  REQUIRE(Msg(passes::VerifyKernel(up)) == "OK");
  REQUIRE(ir::RequiredPtxVersion(up.target, {&up}).ToString() == "7.1");
  ir::Kernel up75 = kernel_with(ir::Target::kSm75, T::kF32, T::kBF16);
  REQUIRE(Msg(passes::VerifyKernel(up75)) ==
          "kernel conv: instruction 1: cvt.f32.bf16 %1, %0: cvt.f32.bf16 requires sm_80 or newer; the kernel targets "
          "sm_75");
  ir::Kernel cross = kernel_with(ir::Target::kSm89, T::kBF16, T::kF16);
  REQUIRE(Msg(passes::VerifyKernel(cross)) ==
          "kernel conv: instruction 1: cvt.rn.bf16.f16 %1, %0: cvt.rn.bf16.f16 requires sm_90 or newer; the kernel "
          "targets sm_89");
  ir::Kernel cross90 = kernel_with(ir::Target::kSm90, T::kBF16, T::kF16);
  REQUIRE(Msg(passes::VerifyKernel(cross90)) == "OK");
}

TEST_CASE("module-level checks", "[verifier]") {
  auto trivial = [](std::string name, ir::Target target) {
    HandKernel h(std::move(name), target);
    h.Ret();
    return h.kernel();
  };
  ir::Module m;
  m.target = ir::Target::kSm80;
  m.kernels.push_back(trivial("a", ir::Target::kSm80));
  REQUIRE(Msg(passes::VerifyModule(m)) == "OK");
  m.kernels.push_back(trivial("b", ir::Target::kSm90));
  REQUIRE(Msg(passes::VerifyModule(m)) == "kernel b targets sm_90 but the module targets sm_80");
  m.kernels.back() = trivial("a", ir::Target::kSm80);
  REQUIRE(Msg(passes::VerifyModule(m)) == "the module has two kernels named a");
  m.kernels.back() = trivial("1c", ir::Target::kSm80);
  REQUIRE(Msg(passes::VerifyModule(m)) == "kernel 1c: kernel name '1c' is not a PTX identifier");

  // cvt.f32.bf16 needs PTX 7.1 on sm_80, whose minimum is 7.0.
  HandKernel h("widen", ir::Target::kSm80);
  ir::Reg s = h.Reg(T::kBF16);
  ir::Reg d = h.Reg(T::kF32);
  h.MovImm(s, T::kB16, 0x3F80);
  h.Add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = T::kBF16}, {d}, {s});
  h.Ret();
  m.kernels.back() = h.kernel();
  m.ptx_version = ir::PtxVersion{70};
  REQUIRE(Msg(passes::VerifyModule(m)) ==
          "PTX ISA 7.0 was pinned, but the module needs 7.1 (target sm_80 and its instructions)");
  m.ptx_version = ir::PtxVersion{71};
  REQUIRE(Msg(passes::VerifyModule(m)) == "OK");

  // cvt.rn.satfinite.f16x2.f32 needs PTX 8.1, which the form without .satfinite does not.
  HandKernel pack("pack", ir::Target::kSm80);
  ir::Reg x = pack.Reg(T::kF32);
  ir::Reg packed = pack.Reg(T::kB32);
  pack.MovImm(x, T::kF32, 0x3F800000);
  ir::Modifiers sat{.type = T::kF16x2, .type2 = T::kF32, .rounding = ir::Rounding::kRn};
  sat.variant = 2;  // satfinite
  pack.Add(Opcode::kCvtPack, sat, {packed}, {x, x});
  pack.Ret();
  m.kernels.back() = pack.kernel();
  m.ptx_version = ir::PtxVersion{80};
  REQUIRE(Msg(passes::VerifyModule(m)) ==
          "PTX ISA 8.0 was pinned, but the module needs 8.1 (target sm_80 and its instructions)");
  m.ptx_version = ir::PtxVersion{81};
  REQUIRE(Msg(passes::VerifyModule(m)) == "OK");
}

TEST_CASE("instructions checked by their signature alone: prmt, lop3, dp4a/dp2a, mov packing", "[verifier]") {
  auto variant = [](ScalarType t, uint8_t v, ScalarType t2 = ScalarType::kNone) {
    ir::Modifiers m{.type = t, .type2 = t2};
    m.variant = v;
    return m;
  };
  const Operand lut = Imm(T::kB32, 0xF8);
  // Accepted forms start by defining what they read (and may redefine it).
  auto ok = [](std::function<void(Fixture&)> body) {
    return [body](Fixture& f) {
      for (auto [r, t] : {std::pair{f.b32, T::kB32}, {f.u32, T::kU32}, {f.s32, T::kS32}, {f.f16, T::kB16},
                          {f.u16, T::kU16}}) {
        f.h.MovImm(r, t, 0);
        f.h.kernel().regs[r.id].is_mutable = true;
      }
      body(f);
    };
  };
  RunCases({
      {"OK", ok([&](Fixture& f) { f.Add(Opcode::kPrmt, variant(T::kB32, 1), {f.b32}, {f.b32, f.b32, f.b32}); })},
      {"OK", ok([&](Fixture& f) { f.Add(Opcode::kLop3, Ty(T::kB32), {f.b32}, {f.b32, f.b32, f.b32, lut}); })},
      {"OK", ok([&](Fixture& f) { f.Add(Opcode::kDp4a, ir::Modifiers{.type = T::kU32, .type2 = T::kS32}, {f.s32}, {f.u32, f.s32, f.s32}); })},
      {"OK", ok([&](Fixture& f) { f.Add(Opcode::kDp2a, variant(T::kU32, 2, T::kU32), {f.u32}, {f.u32, f.u32, f.u32}); })},
      {"OK", ok([&](Fixture& f) { f.Add(Opcode::kMovPack, Ty(T::kB32), {f.b32}, {f.f16, f.u16}); })},
      {"OK", ok([&](Fixture& f) { f.Add(Opcode::kMovUnpack, Ty(T::kB32), {f.f16, f.u16}, {f.b32}); })},
      {"instruction 0: prmt.b32 %7, %7, %7, %7: mode 9 of prmt does not exist (modes: f4e, b4e, rc8, ecl, ecr, rc16)",
       [&](Fixture& f) { f.Add(Opcode::kPrmt, variant(T::kB32, 9), {f.b32}, {f.b32, f.b32, f.b32}); }},
      {"instruction 0: lop3.b32 %7, %7, %7, %7, %7: operand 4 is %7 (b32), expected an immediate of type b32",
       [&](Fixture& f) { f.Add(Opcode::kLop3, Ty(T::kB32), {f.b32}, {f.b32, f.b32, f.b32, f.b32}); }},
      {"instruction 0: lop3.b32 %7, %7, %7, %7, 0x12C: operand 4: immediate 300 is out of range (0..255)",
       [&](Fixture& f) { f.Add(Opcode::kLop3, Ty(T::kB32), {f.b32}, {f.b32, f.b32, f.b32, Imm(T::kB32, 300)}); }},
      {"instruction 0: dp2a.u32.u32 %1, %1, %1, %1: dp2a needs a mode (lo, hi)",
       [&](Fixture& f) { f.Add(Opcode::kDp2a, variant(T::kU32, 0, T::kU32), {f.u32}, {f.u32, f.u32, f.u32}); }},
      {"instruction 0: dp4a.u32 %1, %1, %1, %1: dp4a needs a second type (supported: u32, s32)",
       [&](Fixture& f) { f.Add(Opcode::kDp4a, Ty(T::kU32), {f.u32}, {f.u32, f.u32, f.u32}); }},
      {"instruction 0: dp4a.u32.s32 %2, %1, %6, %1: operand 0 is %2 (f32), expected s32",
       [&](Fixture& f) { f.Add(Opcode::kDp4a, ir::Modifiers{.type = T::kU32, .type2 = T::kS32}, {f.f32}, {f.u32, f.s32, f.u32}); }},
      {"instruction 0: mov.b32 %7, {%5, 0x1}: operand 2 is an immediate (b16), expected a register of type b16",
       [&](Fixture& f) { f.Add(Opcode::kMovPack, Ty(T::kB32), {f.b32}, {f.f16, Imm(T::kB16, 1)}); }},
      {"instruction 0: mov.b32 %7, {%5, %1}: operand 2 is %1 (u32), expected b16",
       [&](Fixture& f) { f.Add(Opcode::kMovPack, Ty(T::kB32), {f.b32}, {f.f16, f.u32}); }},
      {"instruction 0: mov.b64 %7, %0: mov takes 2 destination(s) and 1 source(s), got 1 and 1",
       [&](Fixture& f) { f.Add(Opcode::kMovUnpack, Ty(T::kB64), {f.b32}, {f.u64}); }},
  });
}

TEST_CASE("ldmatrix/stmatrix, redux.sync, match.sync and packing cvt: whole messages", "[verifier]") {
  auto matrix = [](int n, bool trans, StateSpace space = StateSpace::kShared) {
    ir::Modifiers m{.type = T::kB16, .space = space};
    m.vec = static_cast<uint8_t>(n);
    m.variant = trans ? 1 : 0;
    return m;
  };
  auto redux = [](ir::AtomOp op, ScalarType t) { return ir::Modifiers{.type = t, .atom = op}; };
  auto pack = [](ScalarType t, ScalarType t2, ir::Rounding r = ir::Rounding::kRn, uint8_t variant = 0) {
    ir::Modifiers m{.type = t, .type2 = t2, .rounding = r};
    m.variant = variant;
    return m;
  };
  const Operand tile = Operand::AddrSymbol(0, 16);
  const Operand mask = Imm(T::kB32, 0xFFFF);
  RunCases({
      {"OK", [&](Fixture& f) {
         ir::Reg r[4] = {f.h.Reg(T::kB32), f.h.Reg(T::kB32), f.h.Reg(T::kB32), f.h.Reg(T::kB32)};
         f.Add(Opcode::kLdmatrix, matrix(4, true), {r[0], r[1], r[2], r[3]}, {tile});
         f.Add(Opcode::kMov, Ty(T::kU32), {f.u32}, {Operand::Symbol(f.tile)});
         f.Add(Opcode::kLdmatrix, matrix(1, false), {f.b32}, {Operand::AddrReg(f.u32, 0)});
       }},
      {"instruction 0: ldmatrix.sync.aligned.m8n8.x3.shared.b16 {%7, %7, %7}, [tile+16]: ldmatrix.sync.aligned.m8n8 "
       "moves .x1, .x2 or .x4 matrices, not .x3",
       [&](Fixture& f) { f.Add(Opcode::kLdmatrix, matrix(3, false), {f.b32, f.b32, f.b32}, {tile}); }},
      // A group that does not fit the signature prints flat.
      {"instruction 0: ldmatrix.sync.aligned.m8n8.x2.shared.b16 %7, [tile+16]: ldmatrix.sync.aligned.m8n8 takes 2 "
       "destination(s) and 1 source(s), got 1 and 1",
       [&](Fixture& f) { f.Add(Opcode::kLdmatrix, matrix(2, false), {f.b32}, {tile}); }},
      {"instruction 0: ldmatrix.sync.aligned.m8n8.x1.global.b16 {%7}, [%0]: ldmatrix.sync.aligned.m8n8 works on "
       "shared memory only (.shared), not global",
       [&](Fixture& f) { f.Add(Opcode::kLdmatrix, matrix(1, false, StateSpace::kGlobal), {f.b32}, {Operand::AddrReg(f.u64, 0)}); }},
      {"instruction 0: ldmatrix.sync.aligned.m8n8.x1.b16 {%7}, [%0]: ldmatrix.sync.aligned.m8n8 works on shared "
       "memory only (.shared), not generic addresses",
       [&](Fixture& f) { f.Add(Opcode::kLdmatrix, matrix(1, false, StateSpace::kGeneric), {f.b32}, {Operand::AddrReg(f.u64, 0)}); }},
      {"instruction 0: ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [tile+16]: operand 0 is %0 (u64), "
       "expected b32",
       [&](Fixture& f) { f.Add(Opcode::kLdmatrix, matrix(1, true), {f.u64}, {tile}); }},
      {"instruction 0: ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%7}, [%2]: operand 1: the address register is %2 "
       "(f32), expected u64 (or u32 for shared and local)",
       [&](Fixture& f) { f.Add(Opcode::kLdmatrix, matrix(1, false), {f.b32}, {Operand::AddrReg(f.f32, 0)}); }},
      {"instruction 0: ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%7}, %1: operand 1 is %1 (u32), expected an address",
       [&](Fixture& f) { f.Add(Opcode::kLdmatrix, matrix(1, false), {f.b32}, {f.u32}); }},
      {"instruction 0: ldmatrix.sync.aligned.m8n8.x1.shared.b32 {%7}, [tile+16]: ldmatrix.sync.aligned.m8n8 does not "
       "support type b32 (supported: b16)",
       [&](Fixture& f) {
         ir::Modifiers m = matrix(1, false);
         m.type = T::kB32;
         f.Add(Opcode::kLdmatrix, m, {f.b32}, {tile});
       }},
      {"instruction 1: stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [tile+16], {%7, %7}: "
       "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 requires sm_90 or newer; the kernel targets sm_80",
       [&](Fixture& f) {
         Define(f, {f.b32});
         f.Add(Opcode::kStmatrix, matrix(2, true), {}, {tile, f.b32, f.b32});
       }},
      {"OK", [&](Fixture& f) {
         f.h.kernel().target = ir::Target::kSm90;
         Define(f, {f.b32});
         f.Add(Opcode::kStmatrix, matrix(2, true), {}, {tile, f.b32, f.b32});
       }},
      {"OK", [&](Fixture& f) {
         Define(f, {f.u32, f.s32, f.b32, f.u64});
         f.Add(Opcode::kRedux, redux(ir::AtomOp::kAdd, T::kU32), {f.h.Reg(T::kU32)}, {f.u32, mask});
         f.Add(Opcode::kRedux, redux(ir::AtomOp::kMin, T::kS32), {f.h.Reg(T::kS32)}, {f.s32, f.u32});
         f.Add(Opcode::kRedux, redux(ir::AtomOp::kXor, T::kB32), {f.h.Reg(T::kB32)}, {f.u32, mask});
         f.Add(Opcode::kMatchAny, Ty(T::kB64), {f.h.Reg(T::kU32)}, {f.u64, mask});
         f.Add(Opcode::kMatchAll, Ty(T::kB32), {f.h.Reg(T::kB32), f.h.Reg(T::kPred)}, {f.b32, mask});
         f.Add(Opcode::kMatchAll, Ty(T::kB32), {f.h.Reg(T::kB32)}, {f.b32, f.u32});
       }},
      {"instruction 1: redux.sync.add.b32 %7, %7, 0xFFFF: redux.sync.add applies to u32 and s32, not b32",
       [&](Fixture& f) {
         Define(f, {f.b32});
         f.Add(Opcode::kRedux, redux(ir::AtomOp::kAdd, T::kB32), {f.b32}, {f.b32, mask});
       }},
      {"instruction 1: redux.sync.and.u32 %1, %1, 0xFFFF: redux.sync.and applies to b32 only, not u32",
       [&](Fixture& f) {
         Define(f, {f.u32});
         f.Add(Opcode::kRedux, redux(ir::AtomOp::kAnd, T::kU32), {f.u32}, {f.u32, mask});
       }},
      {"instruction 1: redux.sync.inc.u32 %1, %1, 0xFFFF: redux.sync needs an operation (.add, .min, .max on u32/s32; "
       ".and, .or, .xor on b32), not .inc",
       [&](Fixture& f) {
         Define(f, {f.u32});
         f.Add(Opcode::kRedux, redux(ir::AtomOp::kInc, T::kU32), {f.u32}, {f.u32, mask});
       }},
      {"instruction 1: redux.sync.u32 %1, %1, 0xFFFF: redux.sync needs an operation (.add, .min, .max on u32/s32; "
       ".and, .or, .xor on b32)",
       [&](Fixture& f) {
         Define(f, {f.u32});
         f.Add(Opcode::kRedux, redux(ir::AtomOp::kNone, T::kU32), {f.u32}, {f.u32, mask});
       }},
      {"instruction 0: redux.sync.add.u32 %1, 5, 0xFFFF: operand 1 is an immediate (u32), expected a register of "
       "type u32",
       [&](Fixture& f) { f.Add(Opcode::kRedux, redux(ir::AtomOp::kAdd, T::kU32), {f.u32}, {Imm(T::kU32, 5), mask}); }},
      {"instruction 1: redux.sync.max.s32 %6, %6, 0xFFFF: redux.sync.max.s32 requires sm_80 or newer; the "
       "kernel targets sm_75",
       [&](Fixture& f) {
         f.h.kernel().target = ir::Target::kSm75;
         Define(f, {f.s32});
         f.Add(Opcode::kRedux, redux(ir::AtomOp::kMax, T::kS32), {f.s32}, {f.s32, mask});
       }},
      {"instruction 1: match.any.sync.b64 %1, %7, 0xFFFF: operand 1 is %7 (b32), expected b64",
       [&](Fixture& f) {
         Define(f, {f.b32});
         f.Add(Opcode::kMatchAny, Ty(T::kB64), {f.u32}, {f.b32, mask});
       }},
      {"instruction 1: match.any.sync.b32 %1, %3, %1, 0xFFFF: match.any.sync takes 1 destination(s) and 2 source(s), "
       "got 2 and 2",
       [&](Fixture& f) {
         Define(f, {f.u32});
         f.Add(Opcode::kMatchAny, Ty(T::kB32), {f.u32, f.pred}, {f.u32, mask});
       }},
      {"instruction 1: match.all.sync.b32 %1|%7, %1, 0xFFFF: operand 1 is %7 (b32), expected pred",
       [&](Fixture& f) {
         Define(f, {f.u32});
         f.Add(Opcode::kMatchAll, Ty(T::kB32), {f.u32, f.b32}, {f.u32, mask});
       }},
      {"instruction 1: match.all.sync.f32 %1, %2, 0xFFFF: match.all.sync does not support type f32 (supported: b32, b64)",
       [&](Fixture& f) {
         Define(f, {f.f32});
         f.Add(Opcode::kMatchAll, Ty(T::kF32), {f.u32}, {f.f32, mask});
       }},
      {"OK", [&](Fixture& f) {
         Define(f, {f.f32});
         f.Add(Opcode::kCvtPack, pack(T::kF16x2, T::kF32), {f.b32}, {f.f32, f.f32});
         f.Add(Opcode::kCvtPack, pack(T::kBF16x2, T::kF32, ir::Rounding::kRn, 1), {f.h.Reg(T::kBF16x2)},
               {f.f32, Imm(T::kF32, 0x3F800000)});
       }},
      {"instruction 1: cvt.rz.f16x2.f32 %7, %2, %2: .rz does not apply to f16x2 (only .rn)",
       [&](Fixture& f) {
         Define(f, {f.f32});
         f.Add(Opcode::kCvtPack, pack(T::kF16x2, T::kF32, ir::Rounding::kRz), {f.b32}, {f.f32, f.f32});
       }},
      {"instruction 1: cvt.f16x2.f32 %7, %2, %2: cvt.f16x2.f32 needs .rn",
       [&](Fixture& f) {
         Define(f, {f.f32});
         f.Add(Opcode::kCvtPack, pack(T::kF16x2, T::kF32, ir::Rounding::kNone), {f.b32}, {f.f32, f.f32});
       }},
      {"instruction 1: cvt.rn.bf16x2.f64 %7, %4, %4: cvt.bf16x2 packs two f32 values: the second type must be f32, "
       "not f64",
       [&](Fixture& f) {
         Define(f, {f.f64});
         f.Add(Opcode::kCvtPack, pack(T::kBF16x2, T::kF64), {f.b32}, {f.f64, f.f64});
       }},
      {"instruction 1: cvt.rn.f16x2.f32 %7, %2: cvt takes 1 destination(s) and 2 source(s), got 1 and 1",
       [&](Fixture& f) {
         Define(f, {f.f32});
         f.Add(Opcode::kCvtPack, pack(T::kF16x2, T::kF32), {f.b32}, {f.f32});
       }},
      {"instruction 1: cvt.rn.f16x2.f32 %7, %2, %2: cvt.rn.f16x2.f32 requires sm_80 or newer; the kernel "
       "targets sm_75",
       [&](Fixture& f) {
         f.h.kernel().target = ir::Target::kSm75;
         Define(f, {f.f32});
         f.Add(Opcode::kCvtPack, pack(T::kF16x2, T::kF32), {f.b32}, {f.f32, f.f32});
       }},
  });
}

TEST_CASE("register groups print in braces as the signature groups them", "[verifier]") {
  Fixture f;
  ir::Modifiers m{.type = T::kB32};
  m.variant = 6;
  f.Add(Opcode::kPrmt, m, {f.b32}, {f.b32, f.b32, Imm(T::kB32, 1)});
  f.Add(Opcode::kMovPack, Ty(T::kB32), {f.b32}, {f.f16, f.u16});
  f.Add(Opcode::kMovUnpack, Ty(T::kB32), {f.f16, f.u16}, {f.b32});
  f.Add(Opcode::kLop3, Ty(T::kB32), {f.b32}, {f.b32, f.b32, f.b32, Imm(T::kB32, 0xF8)});
  f.Add(Opcode::kDp2a, ir::Modifiers{.type = T::kS32, .type2 = T::kU32, .variant = 1}, {f.s32}, {f.s32, f.u32, f.s32});
  const ir::Kernel& k = f.h.kernel();
  CHECK(ir::InstructionText(k, k.body[0]) == "prmt.b32.rc16 %7, %7, %7, 0x1;");
  CHECK(ir::InstructionText(k, k.body[1]) == "mov.b32 %7, {%5, %9};");
  CHECK(ir::InstructionText(k, k.body[2]) == "mov.b32 {%5, %9}, %7;");
  CHECK(ir::InstructionText(k, k.body[3]) == "lop3.b32 %7, %7, %7, %7, 0xF8;");
  CHECK(ir::InstructionText(k, k.body[4]) == "dp2a.lo.s32.u32 %6, %6, %1, %6;");
}

TEST_CASE("the structural check alone: references, shapes, labels, not types or definitions", "[verifier]") {
  Fixture f;
  // Types and definitions are not its business: an f32 add of a never
  // written u32 register is well-formed.
  f.Add(Opcode::kAdd, Ty(T::kF32), {f.f32}, {f.u32, f.u32});
  f.h.Ret();
  REQUIRE(Msg(ir::CheckWellFormed(f.h.kernel())) == "OK");
  REQUIRE(Msg(ir::VerifyKernel(f.h.kernel())) ==
          "kernel k: instruction 0: add.f32 %2, %1, %1: operand 1 is %1 (u32), expected f32");
  // Counts, references and bound labels are.
  Fixture g;
  g.Add(Opcode::kBra, {}, {}, {Operand::FromLabel(g.done)});
  REQUIRE(Msg(ir::CheckWellFormed(g.h.kernel())) ==
          "kernel k: instruction 0: bra $L0_done: branch to a label that is never bound");
  Fixture h;
  h.Add(Opcode::kNeg, Ty(T::kS32), {h.s32}, {h.s32, ir::Reg{77}});
  REQUIRE(Msg(ir::CheckWellFormed(h.h.kernel())) ==
          "kernel k: instruction 0: neg.s32 %6, %6, %77: operand 2 is not a register of this kernel");
  REQUIRE(*ir::FindBadReference(h.h.kernel(), h.h.kernel().body[0]) == "operand 2 is not a register of this kernel");
}

// Issue 11 item 19: forms ptxas accepts at each target's minimum PTX version.
// Each is accepted (and emulated: emulator_ops_test, emulator_test) or
// refused with a message that says why ptxforge refuses it.
TEST_CASE("over-strict forms: accepted where PTX defines them, refused with the reason where it does not",
          "[verifier]") {
  const auto atom = [](ir::AtomOp op, T type, StateSpace space = StateSpace::kGlobal, bool noftz = false) {
    ir::Modifiers m{.type = type, .space = space, .atom = op};
    m.noftz = noftz;
    return m;
  };
  const auto sm90 = [](Fixture& f) { f.h.kernel().target = ir::Target::kSm90; };
  RunCases({
      // atom.cas.b16: cas only; the other 16-bit operations do not exist.
      {"OK",
       [&](Fixture& f) {
         Define(f, {f.u64, f.u16});
         f.Add(Opcode::kAtom, atom(ir::AtomOp::kCas, T::kB16), {f.h.Reg(T::kU16)},
               {Operand::AddrReg(f.u64, 0), f.u16, f.u16});
         f.Add(Opcode::kAtom, atom(ir::AtomOp::kCas, T::kB16, StateSpace::kShared), {f.h.Reg(T::kB16)},
               {Operand::AddrSymbol(f.tile, 0), Imm(T::kB16, 1), Imm(T::kB16, 2)});
       }},
      {"instruction 0: atom.global.exch.b16 %9, [%0], %9: .exch does not apply to b16",
       [&](Fixture& f) { f.Add(Opcode::kAtom, atom(ir::AtomOp::kExch, T::kB16), {f.u16}, {Operand::AddrReg(f.u64, 0), f.u16}); }},
      {"instruction 0: red.global.add.b16 [%0], %9: red does not support type b16 (supported: b32, b64, u32, u64, s32, "
       "s64, f16, f16x2, bf16, bf16x2, f32, f64)",
       [&](Fixture& f) { f.Add(Opcode::kRed, atom(ir::AtomOp::kAdd, T::kB16), {}, {Operand::AddrReg(f.u64, 0), f.u16}); }},
      // atom/red .add.noftz on packed halves.
      {"OK",
       [&](Fixture& f) {
         ir::Reg x2 = f.h.Reg(T::kF16x2);
         Define(f, {f.u64, f.b32, x2});
         f.Add(Opcode::kAtom, atom(ir::AtomOp::kAdd, T::kF16x2, StateSpace::kGlobal, true), {f.h.Reg(T::kF16x2)},
               {Operand::AddrReg(f.u64, 0), x2});
         f.Add(Opcode::kRed, atom(ir::AtomOp::kAdd, T::kF16x2, StateSpace::kShared, true), {},
               {Operand::AddrSymbol(f.tile, 0), f.b32});
       }},
      {"instruction 0: atom.global.add.f16x2 %7, [%0], %7: .noftz is required for (and only for) f16/bf16 add",
       [&](Fixture& f) { f.Add(Opcode::kAtom, atom(ir::AtomOp::kAdd, T::kF16x2), {f.b32}, {Operand::AddrReg(f.u64, 0), f.b32}); }},
      {"instruction 0: atom.global.min.f16x2 %7, [%0], %7: .min does not apply to f16x2",
       [&](Fixture& f) { f.Add(Opcode::kAtom, atom(ir::AtomOp::kMin, T::kF16x2), {f.b32}, {Operand::AddrReg(f.u64, 0), f.b32}); }},
      {"instruction 0: red.global.add.noftz.bf16x2 [%0], %7: red.global.add.noftz.bf16x2 requires sm_90 or newer; the "
       "kernel targets sm_80",
       [&](Fixture& f) {
         f.Add(Opcode::kRed, atom(ir::AtomOp::kAdd, T::kBF16x2, StateSpace::kGlobal, true), {}, {Operand::AddrReg(f.u64, 0), f.b32});
       }},
      {"OK",
       [&](Fixture& f) {
         sm90(f);
         Define(f, {f.u64, f.b32});
         f.Add(Opcode::kRed, atom(ir::AtomOp::kAdd, T::kBF16x2, StateSpace::kGlobal, true), {}, {Operand::AddrReg(f.u64, 0), f.b32});
       }},
      // setp on packed halves writes p|q (opcode SetpPair).
      {"OK",
       [&](Fixture& f) {
         Define(f, {f.b32, f.pred});
         f.Add(Opcode::kSetpPair, ir::Modifiers{.type = T::kF16x2, .cmp = ir::CmpOp::kLtu},
               {f.h.Reg(T::kPred), f.h.Reg(T::kPred)}, {f.b32, f.b32});
         sm90(f);
         f.Add(Opcode::kSetpPair, ir::Modifiers{.type = T::kBF16x2, .cmp = ir::CmpOp::kGe, .bool_op = ir::BoolOp::kAnd},
               {f.h.Reg(T::kPred), f.h.Reg(T::kPred)}, {f.b32, f.b32, f.pred});
       }},
      {"instruction 0: setp.eq.f16x2 %3, %7, %7: setp.f16x2 compares each half and writes two predicates (p|q): use "
       "opcode SetpPair (KernelBuilder::SetpPair); ptxas also takes a single predicate, but the PTX ISA does not "
       "define that form, so ptxforge refuses it",
       [&](Fixture& f) { f.Add(Opcode::kSetp, ir::Modifiers{.type = T::kF16x2, .cmp = ir::CmpOp::kEq}, {f.pred}, {f.b32, f.b32}); }},
      {"instruction 0: setp.eq.f16x2 %3|%1, %7, %7: operand 1 is %1 (u32), expected pred",
       [&](Fixture& f) {
         f.Add(Opcode::kSetpPair, ir::Modifiers{.type = T::kF16x2, .cmp = ir::CmpOp::kEq}, {f.pred, f.u32}, {f.b32, f.b32});
       }},
      {"instruction 0: setp.eq.f16x2 %3|%10, %7, 0x3C003C00: operand 3 is an immediate; PTX has no f16x2 immediates "
       "(move it to a register with mov.b32 first)",
       [&](Fixture& f) {
         f.Add(Opcode::kSetpPair, ir::Modifiers{.type = T::kF16x2, .cmp = ir::CmpOp::kEq}, {f.pred, f.h.Reg(T::kPred)},
               {f.b32, Imm(T::kF16x2, 0x3C003C00)});
       }},
      {"instruction 0: setp.eq.ftz.bf16x2 %3|%10, %7, %7: .ftz applies to f32 (and f16) only, not bf16x2",
       [&](Fixture& f) {
         sm90(f);
         ir::Modifiers m{.type = T::kBF16x2, .cmp = ir::CmpOp::kEq};
         m.ftz = true;
         f.Add(Opcode::kSetpPair, m, {f.pred, f.h.Reg(T::kPred)}, {f.b32, f.b32});
       }},
      {"instruction 0: setp.eq.u32 %3|%10, %1, %1: setp does not support type u32 (supported: f16x2, bf16x2)",
       [&](Fixture& f) {
         f.Add(Opcode::kSetpPair, ir::Modifiers{.type = T::kU32, .cmp = ir::CmpOp::kEq}, {f.pred, f.h.Reg(T::kPred)},
               {f.u32, f.u32});
       }},
      // ex2 and tanh on bf16 (sm_90); ex2 only with .ftz.
      {"OK",
       [&](Fixture& f) {
         sm90(f);
         Define(f, {f.bf16, f.b32});
         ir::Modifiers m{.type = T::kBF16, .mode = ir::Mode::kApprox};
         m.ftz = true;
         f.Add(Opcode::kEx2, m, {f.h.Reg(T::kBF16)}, {f.bf16});
         f.Add(Opcode::kTanh, ir::Modifiers{.type = T::kBF16x2, .mode = ir::Mode::kApprox}, {f.h.Reg(T::kB32)}, {f.b32});
       }},
      {"instruction 0: ex2.approx.bf16 %8, %8: ex2.approx.bf16 needs .ftz (PTX defines ex2 on bf16 and bf16x2 only "
       "with .ftz)",
       [&](Fixture& f) {
         sm90(f);
         f.Add(Opcode::kEx2, ir::Modifiers{.type = T::kBF16, .mode = ir::Mode::kApprox}, {f.bf16}, {f.bf16});
       }},
      {"instruction 0: tanh.approx.bf16 %8, %8: tanh.approx.bf16 requires sm_90 or newer; the kernel targets sm_80",
       [&](Fixture& f) { f.Add(Opcode::kTanh, ir::Modifiers{.type = T::kBF16, .mode = ir::Mode::kApprox}, {f.bf16}, {f.bf16}); }},
      // Refused on purpose: ptxas takes them, the PTX ISA does not define them.
      {"instruction 0: rcp.rn.ftz.f64 %4, %4: rcp.rn.ftz.f64: the PTX ISA defines .ftz on f64 only for "
       "rcp.approx.ftz.f64; ptxas also accepts it with a rounding modifier, but what it does there is undocumented, "
       "so ptxforge refuses it (rcp.rn.f64 is exact)",
       [&](Fixture& f) {
         ir::Modifiers m{.type = T::kF64, .rounding = ir::Rounding::kRn};
         m.ftz = true;
         f.Add(Opcode::kRcp, m, {f.f64}, {f.f64});
       }},
      {"instruction 0: fma.rz.bf16 %8, %8, %8, %8: fma.rz.bf16: the PTX ISA defines only .rn for bf16 fma; ptxas "
       "also accepts .rz, .rm and .rp, but what they compute is undocumented, so ptxforge refuses them",
       [&](Fixture& f) {
         f.Add(Opcode::kFma, ir::Modifiers{.type = T::kBF16, .rounding = ir::Rounding::kRz}, {f.bf16}, {f.bf16, f.bf16, f.bf16});
       }},
      {"instruction 0: fma.rp.bf16x2 %7, %7, %7, %7: fma.rp.bf16x2: the PTX ISA defines only .rn for bf16 fma; ptxas "
       "also accepts .rz, .rm and .rp, but what they compute is undocumented, so ptxforge refuses them",
       [&](Fixture& f) {
         f.Add(Opcode::kFma, ir::Modifiers{.type = T::kBF16x2, .rounding = ir::Rounding::kRp}, {f.b32}, {f.b32, f.b32, f.b32});
       }},
      {"instruction 0: cvt.rn.f32.bf16 %2, %8: cvt.f32.bf16 (widening) takes no rounding modifier: the PTX ISA makes "
       "rounding illegal where a conversion loses no precision; ptxas accepts it from bf16, where it changes nothing, "
       "but ptxforge refuses it as for every other widening cvt",
       [&](Fixture& f) {
         f.Add(Opcode::kCvt, ir::Modifiers{.type = T::kF32, .type2 = T::kBF16, .rounding = ir::Rounding::kRn}, {f.f32}, {f.bf16});
       }},
  });
}

TEST_CASE("IsIdentifier takes ASCII letters, digits and '_', a letter or '_' first", "[verifier]") {
  // IsIdentifier tests each byte against a table, not std::isalnum.
  for (int c = 0; c < 256; ++c) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    const std::string one(1, static_cast<char>(c));
    INFO("byte " << c);
    CHECK(ir::IsIdentifier(one) == letter);
    CHECK(ir::IsIdentifier("a" + one + "b") == (letter || digit));
    CHECK(ir::IsIdentifier(std::string(150, 'x') + one) == (letter || digit));
  }
}

TEST_CASE("declaration errors of kernels without variables are those the full checks report", "[verifier]") {
  // A kernel without variables has its declarations screened in a few
  // branches (Verifier::DeclarationsPlainAndFine); a kernel with one takes
  // the full checks. Each error below, made in a kernel without variables,
  // must read as it does once a harmless local variable sends the same
  // kernel through the full checks.
  auto make = [](size_t params) {
    HandKernel h("k");
    for (size_t p = 0; p < params; ++p) h.Param(StrCat(p % 2 ? "param_" : "p", p), T::kU32);
    ir::Reg r = h.Reg(T::kU32, false, "r");
    h.NewLabel("l");
    h.MovImm(r, T::kU32, 1);
    h.Ret();
    return h;
  };
  struct Mutation {
    std::string what;
    std::function<void(ir::Kernel&)> apply;
  };
  const std::vector<Mutation> mutations = {
      {"none", [](ir::Kernel&) {}},
      {"kernel name", [](ir::Kernel& k) { k.name = "1k"; }},
      {"long kernel name", [](ir::Kernel& k) { k.name = std::string(201, 'k'); }},
      {"param name", [](ir::Kernel& k) { k.params[1].name = "a-b"; }},
      {"empty param name", [](ir::Kernel& k) { k.params[0].name = ""; }},
      {"param name with a byte over 127", [](ir::Kernel& k) { k.params[0].name = "a\xe9"; }},
      {"pred param", [](ir::Kernel& k) { k.params[1].type = T::kPred; }},
      {"typeless param", [](ir::Kernel& k) { k.params[1].type = T::kNone; }},
      {"instruction-only param", [](ir::Kernel& k) { k.params[1].type = T::kTF32; }},
      {"param type out of range", [](ir::Kernel& k) { k.params[1].type = static_cast<T>(200); }},
      {"param type 32", [](ir::Kernel& k) { k.params[1].type = static_cast<T>(32); }},
      {"duplicate param", [](ir::Kernel& k) { k.params[2].name = k.params[0].name; }},
      {"duplicate last param", [](ir::Kernel& k) { k.params.back().name = k.params[1].name; }},
      {"typeless register", [](ir::Kernel& k) { k.regs[0].type = T::kNone; }},
      {"instruction-only register", [](ir::Kernel& k) { k.regs[0].type = T::kE4M3; }},
      {"register type out of range", [](ir::Kernel& k) { k.regs[0].type = static_cast<T>(77); }},
      {"register hint id", [](ir::Kernel& k) { k.regs[0].hint_id = static_cast<uint32_t>(k.names.size() + 1); }},
      {"label hint id", [](ir::Kernel& k) { k.labels[0].hint_id = static_cast<uint32_t>(k.names.size() + 1); }},
      {"target out of range", [](ir::Kernel& k) { k.target = static_cast<ir::Target>(50); }},
      {"maxntid and reqntid", [](ir::Kernel& k) { k.bounds.maxntid = {256, 1, 1}; k.bounds.reqntid = {128, 1, 1}; }},
      {"maxnreg", [](ir::Kernel& k) { k.bounds.maxnreg = 256; }},
  };
  for (size_t params : {3, 64, 65, 70}) {
    for (const Mutation& m : mutations) {
      HandKernel plain = make(params);
      m.apply(plain.kernel());
      HandKernel full = make(params);
      m.apply(full.kernel());
      full.Variable(ir::Variable{"zz_pad", StateSpace::kLocal, T::kU32, 1, 4, false});
      INFO(m.what << ", " << params << " params");
      const std::string got = Msg(ir::VerifyKernel(plain.kernel()));
      REQUIRE(got == Msg(ir::VerifyKernel(full.kernel())));
      REQUIRE((got == "OK") == (m.what == "none"));
    }
  }
}

TEST_CASE("one IsIdentifier for builder and verifier", "[verifier]") {
  CHECK(ir::IsIdentifier("_a1"));
  CHECK(ir::IsIdentifier(std::string(200, 'x')));
  CHECK_FALSE(ir::IsIdentifier(std::string(201, 'x')));
  CHECK_FALSE(ir::IsIdentifier(""));
  CHECK_FALSE(ir::IsIdentifier("1a"));
  CHECK_FALSE(ir::IsIdentifier("a-b"));
  ir::Kernel k;
  k.name = std::string(201, 'k');
  REQUIRE(Msg(ir::VerifyKernel(k)) == StrCat("kernel ", k.name, ": kernel name '", k.name, "' is not a PTX identifier"));
}


// ---- issue 9: mma and the fp8 conversions, instruction-only types, listed modifiers

// An mma kernel: `a`, `b`, `c` registers (defined by movs), one mma into
// fresh `d` registers, ret. `edit` changes the instruction before it is checked.
struct MmaKernel {
  HandKernel h;
  explicit MmaKernel(ir::Target target) : h("k", target) {}
  // Registers of `type`, each defined by a mov of 0.
  std::vector<ir::Reg> Regs(ScalarType type, int n) {
    std::vector<ir::Reg> out;
    for (int i = 0; i < n; ++i) {
      out.push_back(h.Reg(type));
      h.MovImm(out.back(), ir::IsHalfFamily(type) ? ir::BitsTypeOfSize(ir::TypeBits(type)) : type, 0);
    }
    return out;
  }
};

ir::Modifiers MmaMods(T d, T a, T b, T c, uint8_t shape) {
  ir::Modifiers m{.type = d, .type2 = a};
  m.type3 = b;
  m.type4 = c;
  m.shape = shape;
  m.layout = 1;
  return m;
}

// Verifies one mma (or any instruction) over register groups and returns the message.
std::string CheckMma(ir::Target target, Opcode op, ir::Modifiers m, std::vector<std::pair<T, int>> dsts,
                     std::vector<std::pair<T, int>> srcs) {
  MmaKernel k(target);
  ir::Instruction inst;
  inst.op = op;
  inst.mods = m;
  for (auto [t, n] : srcs) {
    for (ir::Reg r : k.Regs(t, n)) inst.srcs.push_back(r);
  }
  for (auto [t, n] : dsts) {
    for (int i = 0; i < n; ++i) inst.dsts.push_back(k.h.Reg(t));
  }
  k.h.kernel().body.push_back(inst);
  k.h.Ret();
  return Msg(passes::VerifyKernel(k.h.kernel()));
}

TEST_CASE("mma: register groups, types, shapes and targets", "[verifier][mma]") {
  const auto f16k16 = MmaMods(T::kF32, T::kF16, T::kF16, T::kF32, 2);
  const std::vector<std::pair<T, int>> d4{{T::kF32, 4}}, ab_k16{{T::kB32, 4}, {T::kB32, 2}, {T::kF32, 4}};
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, f16k16, d4, ab_k16) == "OK");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, f16k16, d4, {{T::kF16x2, 4}, {T::kF16x2, 2}, {T::kF32, 4}}) == "OK");
  CHECK(CheckMma(ir::Target::kSm75, Opcode::kMmaF16F32, MmaMods(T::kF32, T::kF16, T::kF16, T::kF32, 1), d4,
                 {{T::kB32, 2}, {T::kB32, 1}, {T::kF32, 4}}) == "OK");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16, MmaMods(T::kF16, T::kF16, T::kF16, T::kF16, 2), {{T::kF16x2, 2}},
                 {{T::kB32, 4}, {T::kB32, 2}, {T::kB32, 2}}) == "OK");
  CHECK(CheckMma(ir::Target::kSm75, Opcode::kMmaF16F32, f16k16, d4, ab_k16) ==
        "kernel k: instruction 10: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%10, %11, %12, %13}, {%0, %1, %2, "
        "%3}, {%4, %5}, {%6, %7, %8, %9}: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 requires sm_80 or newer; "
        "the kernel targets sm_75");
  CHECK(CheckMma(ir::Target::kSm86, Opcode::kMmaF8, MmaMods(T::kF32, T::kE4M3, T::kE5M2, T::kF32, 1), d4, ab_k16) ==
        "kernel k: instruction 10: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%10, %11, %12, %13}, {%0, %1, %2, "
        "%3}, {%4, %5}, {%6, %7, %8, %9}: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 requires sm_89 or newer; "
        "the kernel targets sm_86");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, MmaMods(T::kF32, T::kF16, T::kF16, T::kF32, 0), d4, ab_k16) ==
        "kernel k: instruction 10: mma.sync.aligned.row.col.f32.f16.f16.f32 %10, %11, %12, %13, %0, %1, %2, %3, %4, %5, "
        "%6, %7, %8, %9: mma.sync.aligned needs a shape (m16n8k8, m16n8k16)");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, MmaMods(T::kF32, T::kF16, T::kF16, T::kF32, 3), d4, ab_k16) ==
        "kernel k: instruction 10: mma.sync.aligned.row.col.f32.f16.f16.f32 %10, %11, %12, %13, %0, %1, %2, %3, %4, %5, "
        "%6, %7, %8, %9: shape 3 of mma.sync.aligned does not exist (shapes: m16n8k8, m16n8k16)");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, MmaMods(T::kF32, T::kF16, T::kBF16, T::kF32, 2), d4, ab_k16) ==
        "kernel k: instruction 10: mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32 {%10, %11, %12, %13}, {%0, %1, %2, "
        "%3}, {%4, %5}, {%6, %7, %8, %9}: mma.sync.aligned needs a third type (supported: f16)");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, MmaMods(T::kF32, T::kF16, T::kF16, T::kF16, 2), d4, ab_k16) ==
        "kernel k: instruction 10: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%10, %11, %12, %13}, %0, %1, %2, %3, "
        "%4, %5, %6, %7, %8, %9: mma.sync.aligned needs a fourth type (supported: f32)");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, f16k16, d4, {{T::kB32, 3}, {T::kB32, 2}, {T::kF32, 4}}) ==
        "kernel k: instruction 9: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%9, %10, %11, %12}, %0, %1, %2, %3, "
        "%4, %5, %6, %7, %8: mma.sync.aligned takes 4 destination(s) and 10 source(s), got 4 and 9");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, f16k16, d4, {{T::kF32, 4}, {T::kB32, 2}, {T::kF32, 4}}) ==
        "kernel k: instruction 10: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%10, %11, %12, %13}, {%0, %1, %2, "
        "%3}, {%4, %5}, {%6, %7, %8, %9}: operand 4 is %0 (f32), expected f16x2");
  // D in b32 registers: PTX's bit-type rule, which ptxas applies to mma's D too.
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, f16k16, {{T::kB32, 4}}, ab_k16) == "OK");
  auto no_layout = f16k16;
  no_layout.layout = 0;
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, no_layout, d4, ab_k16) ==
        "kernel k: instruction 10: mma.sync.aligned.m16n8k16.f32.f16.f16.f32 {%10, %11, %12, %13}, {%0, %1, %2, %3}, {%4, "
        "%5}, {%6, %7, %8, %9}: mma.sync.aligned needs a layout (row.col)");
  auto sat = f16k16;
  sat.variant = 1;
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaF16F32, sat, d4, ab_k16) ==
        "kernel k: instruction 10: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%10, %11, %12, %13}, {%0, %1, %2, "
        "%3}, {%4, %5}, {%6, %7, %8, %9}: a mode (1) does not apply to mma.sync.aligned");
  auto int_sat = MmaMods(T::kS32, T::kS8, T::kU8, T::kS32, 2);
  int_sat.variant = 1;
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaI8, int_sat, {{T::kS32, 4}}, {{T::kB32, 4}, {T::kB32, 2}, {T::kS32, 4}}) ==
        "OK");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaTF32, MmaMods(T::kF32, T::kTF32, T::kTF32, T::kF32, 1), d4,
                 {{T::kB32, 4}, {T::kB32, 2}, {T::kF32, 4}}) == "OK");
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaTF32, MmaMods(T::kF32, T::kTF32, T::kTF32, T::kF32, 1), d4,
                 {{T::kF32, 4}, {T::kF32, 2}, {T::kF32, 4}}) ==
        "kernel k: instruction 10: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%10, %11, %12, %13}, {%0, %1, %2, "
        "%3}, {%4, %5}, {%6, %7, %8, %9}: operand 4 is %0 (f32), expected b32 (an mma fragment of tf32 takes no float "
        "registers)");
  // m16n8k4 tf32: two A registers, one B.
  CHECK(CheckMma(ir::Target::kSm80, Opcode::kMmaTF32, MmaMods(T::kF32, T::kTF32, T::kTF32, T::kF32, 2), d4,
                 {{T::kB32, 2}, {T::kB32, 1}, {T::kF32, 4}}) == "OK");
  CHECK(CheckMma(ir::Target::kSm75, Opcode::kMmaTF32, MmaMods(T::kF32, T::kTF32, T::kTF32, T::kF32, 2), d4,
                 {{T::kB32, 2}, {T::kB32, 1}, {T::kF32, 4}}) ==
        "kernel k: instruction 7: mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%7, %8, %9, %10}, {%0, %1}, {%2}, "
        "{%3, %4, %5, %6}: mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 requires sm_80 or newer; the kernel "
        "targets sm_75");
  // m16n8k16 e4m3/e5m2: sm_89 like k32, but PTX 8.7.
  const auto f8k16 = MmaMods(T::kF32, T::kE4M3, T::kE5M2, T::kF32, 2);
  CHECK(CheckMma(ir::Target::kSm89, Opcode::kMmaF8, f8k16, d4, {{T::kB32, 2}, {T::kB32, 1}, {T::kF32, 4}}) == "OK");
  ir::Instruction k16;
  k16.op = Opcode::kMmaF8;
  k16.mods = f8k16;
  CHECK(ir::RequirementOf(k16).sm == 89);
  CHECK(ir::RequirementOf(k16).ptx.value == 87);
  k16.mods.shape = 1;  // m16n8k32
  CHECK(ir::RequirementOf(k16).ptx.value == 84);
}

TEST_CASE("fp8 packing conversions: forms and targets", "[verifier][mma]") {
  ir::Modifiers pack{.type = T::kE4M3x2, .type2 = T::kF32};
  pack.variant = 1;
  CHECK(CheckMma(ir::Target::kSm89, Opcode::kCvtPackF8, pack, {{T::kB16, 1}}, {{T::kF32, 2}}) == "OK");
  CHECK(CheckMma(ir::Target::kSm86, Opcode::kCvtPackF8, pack, {{T::kB16, 1}}, {{T::kF32, 2}}) ==
        "kernel k: instruction 2: cvt.rn.satfinite.e4m3x2.f32 %2, %0, %1: cvt.rn.satfinite.e4m3x2.f32 requires sm_89 or "
        "newer; the kernel targets sm_86");
  ir::Modifiers no_rn = pack;
  no_rn.variant = 0;
  CHECK(CheckMma(ir::Target::kSm89, Opcode::kCvtPackF8, no_rn, {{T::kB16, 1}}, {{T::kF32, 2}}) ==
        "kernel k: instruction 2: cvt.e4m3x2.f32 %2, %0, %1: cvt needs a mode (rn.satfinite)");
  CHECK(CheckMma(ir::Target::kSm89, Opcode::kCvtPackF8, pack, {{T::kB32, 1}}, {{T::kF32, 2}}) ==
        "kernel k: instruction 2: cvt.rn.satfinite.e4m3x2.f32 %2, %0, %1: operand 0 is %2 (b32), expected b16");
  ir::Modifiers unpack{.type = T::kF16x2, .type2 = T::kE5M2x2};
  unpack.variant = 1;
  CHECK(CheckMma(ir::Target::kSm89, Opcode::kCvtUnpackF8, unpack, {{T::kF16x2, 1}}, {{T::kB16, 1}}) == "OK");
  ir::Modifiers wrong = unpack;
  wrong.type2 = T::kF32;
  CHECK(CheckMma(ir::Target::kSm89, Opcode::kCvtUnpackF8, wrong, {{T::kF16x2, 1}}, {{T::kB16, 1}}) ==
        "kernel k: instruction 1: cvt.rn.f16x2.f32 %1, %0: cvt needs a second type (supported: e4m3x2, e5m2x2)");
}

TEST_CASE("instruction-only types: no register, immediate, param or variable has them", "[verifier][mma]") {
  {
    HandKernel h("k");
    h.Reg(T::kTF32);
    h.Ret();
    CHECK(Msg(passes::VerifyKernel(h.kernel())) ==
          "kernel k: register %0 has type tf32, which only an instruction can name (its data lives in b32 registers)");
  }
  {
    HandKernel h("k");
    h.Param("p", T::kE4M3);
    h.Ret();
    CHECK(Msg(passes::VerifyKernel(h.kernel())) ==
          "kernel k: param 'p' has type e4m3, which only an instruction can name (its data lives in b32 or b16 registers)");
  }
  {
    HandKernel h("k");
    h.Variable(ir::Variable{"v", StateSpace::kShared, T::kE5M2x2, 4, 2, false});
    h.Ret();
    CHECK(Msg(passes::VerifyKernel(h.kernel())) ==
          "kernel k: variable 'v' has type e5m2x2, which only an instruction can name (its data lives in b32 or b16 "
          "registers)");
  }
  {
    HandKernel h("k", ir::Target::kSm89);
    ir::Reg d = h.Reg(T::kB16);
    ir::Modifiers m{.type = T::kE4M3x2, .type2 = T::kF32};
    m.variant = 1;
    h.Add(Opcode::kCvtPackF8, m, {d}, {Imm(T::kE4M3, 0x38), Imm(T::kF32, 0)});
    h.Ret();
    CHECK(Msg(passes::VerifyKernel(h.kernel())) ==
          "kernel k: instruction 0: cvt.rn.satfinite.e4m3x2.f32 %0, 0x38, 0f00000000: operand 1 is an immediate of type e4m3, "
          "which only an instruction can name (its data lives in b32 or b16 values)");
  }
  KernelBuilder b("k", ir::Target::kSm89);
  const int line = __LINE__ + 1;
  b.NewReg(T::kE4M3);
  CHECK(Msg(b.Finish()) == StrCat("kernel k: verifier_test.cc:", line,
                                  ": a register cannot have type e4m3: only an instruction can name it (its data "
                                  "lives in b32 or b16 registers)"));
}

TEST_CASE("the table's requirement columns can name an arch-specific target", "[verifier][mma]") {
  constexpr ir::TargetRequirement r = ir::TableRequirement(SM_A(90), 80);
  STATIC_REQUIRE(r.sm == 90);
  STATIC_REQUIRE(r.arch_specific);
  STATIC_REQUIRE(r.ptx.value == 80);
  CHECK(ir::RequirementName(r) == "sm_90a");
  CHECK(ir::TargetSatisfies(ir::Target::kSm90a, r));
  CHECK_FALSE(ir::TargetSatisfies(ir::Target::kSm90, r));
  CHECK_FALSE(ir::TargetSatisfies(ir::Target::kSm100a, r));
  CHECK(ir::RequirementName(ir::TableRequirement(89, 84)) == "sm_89");
}

TEST_CASE("cp.async: two addresses, cp-size and src-size, groups, bar.arrive and fence", "[verifier]") {
  auto ca = [](ir::CacheOp c = ir::CacheOp::kCa) {
    ir::Modifiers m;
    m.cache = c;
    return m;
  };
  auto fence = [](uint8_t sem, ir::Scope scope) {
    ir::Modifiers m;
    m.variant = sem;
    m.scope = scope;
    return m;
  };
  const Operand tile = Operand::AddrSymbol(0, 0);  // Fixture::tile, shared
  const Operand tile4 = Operand::AddrSymbol(0, 4);
  // Accepted forms define what they read first.
  auto ok = [](std::function<void(Fixture&)> body) {
    return [body](Fixture& f) {
      Define(f, {f.u64, f.u32});
      body(f);
    };
  };
  RunCases({
      {"OK", ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrReg(f.u64, 8), Imm(T::kU32, 4)}); })},
      {"OK", ok([&](Fixture& f) {
         f.Add(Opcode::kCpAsync, ca(ir::CacheOp::kCg), {}, {Operand::AddrReg(f.u32, 16), Operand::AddrReg(f.u64, 0),
                                                            Imm(T::kU32, 16), f.u32});
         f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrReg(f.u64, 0), Imm(T::kU32, 8), Imm(T::kU32, 0)});
         f.Add(Opcode::kCpAsyncCommit, {}, {}, {});
         f.Add(Opcode::kCpAsyncWait, {}, {}, {Imm(T::kU32, 1)});
         f.Add(Opcode::kCpAsyncWaitAll, {}, {}, {});
         f.Add(Opcode::kBarArrive, {}, {}, {Imm(T::kU32, 1), Imm(T::kU32, 64)});
         f.Add(Opcode::kFence, fence(1, ir::Scope::kCta), {}, {});
         f.Add(Opcode::kFence, fence(2, ir::Scope::kSys), {}, {});
       })},
      {"instruction 2: cp.async.ca.shared.global [tile], [%0], 2: cp-size 2 is not 4, 8 or 16",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrReg(f.u64, 0), Imm(T::kU32, 2)}); })},
      {"instruction 2: cp.async.cg.shared.global [tile], [%0], 8: cp.async.cg copies 16 bytes, not 8 (.ca copies 4, 8 "
       "or 16)",
       ok([&](Fixture& f) {
         f.Add(Opcode::kCpAsync, ca(ir::CacheOp::kCg), {}, {tile, Operand::AddrReg(f.u64, 0), Imm(T::kU32, 8)});
       })},
      {"instruction 2: cp.async.ca.shared.global [tile], [%0], 4, 8: src-size 8 is larger than the cp-size 4",
       ok([&](Fixture& f) {
         f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrReg(f.u64, 0), Imm(T::kU32, 4), Imm(T::kU32, 8)});
       })},
      {"instruction 2: cp.async.ca.shared.global [tile], [%0], %1: operand 2 is %1 (u32), expected an immediate of "
       "type u32",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrReg(f.u64, 0), f.u32}); })},
      {"instruction 2: cp.async.ca.shared.global [tile], [%0], 4, %2: operand 3 is %2 (f32), expected u32",
       ok([&](Fixture& f) {
         f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrReg(f.u64, 0), Imm(T::kU32, 4), f.f32});
       })},
      {"instruction 2: cp.async.shared.global [tile], [%0], 4: cp.async needs a cache operator (.ca or .cg)",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, {}, {}, {tile, Operand::AddrReg(f.u64, 0), Imm(T::kU32, 4)}); })},
      {"instruction 2: cp.async.cs.shared.global [tile], [%0], 4: cache operator .cs does not apply to cp.async (only "
       ".ca and .cg)",
       ok([&](Fixture& f) {
         f.Add(Opcode::kCpAsync, ca(ir::CacheOp::kCs), {}, {tile, Operand::AddrReg(f.u64, 0), Imm(T::kU32, 4)});
       })},
      // Both addresses checked, each against its own state space.
      {"instruction 2: cp.async.ca.shared.global [tile+4], [tile], 4: operand 1 addresses shared variable 'tile' "
       "from global space",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {tile4, tile, Imm(T::kU32, 4)}); })},
      {"instruction 2: cp.async.ca.shared.global [%0], [%1], 4: operand 1: the address register is %1 (u32), "
       "expected u64 (or u32 for shared and local)",
       ok([&](Fixture& f) {
         f.Add(Opcode::kCpAsync, ca(), {}, {Operand::AddrReg(f.u64, 0), Operand::AddrReg(f.u32, 0), Imm(T::kU32, 4)});
       })},
      {"instruction 2: cp.async.ca.shared.global [tile], %0, 4: operand 1 is %0 (u64), expected an address",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {tile, f.u64, Imm(T::kU32, 4)}); })},
      {"instruction 2: cp.async.ca.shared.global [tile], [%0], [tile]: operand 2 is an address, expected a register or "
       "immediate (only the first 2 sources are addresses)",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrReg(f.u64, 0), tile}); })},
      {"instruction 2: cp.async.ca.shared.global [tile], [a], 4: a param can only be read with ld.param",
       ok([&](Fixture& f) {
         f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrParam(f.param), Imm(T::kU32, 4)});
       })},
      // The kind of every source is checked before any param rule (CheckShape
      // tests all of them in one flag; SourceKindError words the first).
      {"instruction 2: cp.async.ca.shared.global [a], %0, 4: operand 1 is %0 (u64), expected an address",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {Operand::AddrParam(f.param), f.u64, Imm(T::kU32, 4)}); })},
      {"instruction 2: cp.async.ca.shared.global [tile], [a], [tile]: operand 2 is an address, expected a register or "
       "immediate (only the first 2 sources are addresses)",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {tile, Operand::AddrParam(f.param), tile}); })},
      {"instruction 2: cp.async.ca.shared.global [tile]: cp.async takes 0 destination(s) and 3 to 4 source(s), got 0 and 1",
       ok([&](Fixture& f) { f.Add(Opcode::kCpAsync, ca(), {}, {tile}); })},
      {"instruction 0: cp.async.wait_group %1: operand 0 is %1 (u32), expected an immediate of type u32",
       [&](Fixture& f) { f.Add(Opcode::kCpAsyncWait, {}, {}, {f.u32}); }},
      {"instruction 0: bar.arrive 1: bar.arrive takes a barrier id and a thread count",
       [&](Fixture& f) { f.Add(Opcode::kBarArrive, {}, {}, {Imm(T::kU32, 1)}); }},
      {"instruction 0: bar.arrive 1, 48: the bar.arrive thread count must be a positive multiple of 32",
       [&](Fixture& f) { f.Add(Opcode::kBarArrive, {}, {}, {Imm(T::kU32, 1), Imm(T::kU32, 48)}); }},
      {"instruction 0: fence.cta: fence needs a mode (acq_rel, sc)",
       [&](Fixture& f) { f.Add(Opcode::kFence, fence(0, ir::Scope::kCta), {}, {}); }},
      {"instruction 0: fence.sc: fence needs a scope (cta, gpu, sys)",
       [&](Fixture& f) { f.Add(Opcode::kFence, fence(2, ir::Scope::kNone), {}, {}); }},
  });
  // Below sm_80 each cp.async form is refused, naming the minimum.
  for (Opcode op : {Opcode::kCpAsync, Opcode::kCpAsyncCommit, Opcode::kCpAsyncWait, Opcode::kCpAsyncWaitAll}) {
    HandKernel h("k", ir::Target::kSm75);
    ir::Reg g = h.Reg(T::kU64);
    h.MovImm(g, T::kU64, 0);
    std::string text;
    switch (op) {
      case Opcode::kCpAsync:
        h.Add(op, ca(), {}, {Operand::AddrReg(g, 0), Operand::AddrReg(g, 0), Imm(T::kU32, 16)});
        text = "cp.async.ca.shared.global [%0], [%0], 16: cp.async.ca.shared.global";
        break;
      case Opcode::kCpAsyncWait:
        h.Add(op, {}, {}, {Imm(T::kU32, 0)});
        text = "cp.async.wait_group 0: cp.async.wait_group";
        break;
      default:
        h.Add(op, {}, {}, {});
        text = StrCat(ir::Mnemonic(op), ": ", ir::Mnemonic(op));
    }
    h.Ret();
    INFO(ir::Mnemonic(op));
    CHECK(Msg(passes::VerifyKernel(h.kernel())) ==
          StrCat("kernel k: instruction 1: ", text, " requires sm_80 or newer; the kernel targets sm_75"));
  }
}

TEST_CASE("cp.async from the builder: typed pointers, validated sizes", "[verifier]") {
  int line = 0;
  auto build = [&](uint32_t cp_size, std::optional<Src<U32>> src_size, KernelBuilder::CpAsyncCache cache,
                   ir::Target target = ir::Target::kSm80) {
    KernelBuilder b("copy", target);
    Ptr<F32, Global> src = GlobalParam<F32>(b, "src");
    Ptr<F32, Shared> tile = SharedArray<F32>(b, "tile", 64, 16);
    CpAsync(tile.At(4u), src.At(b.TidX()), cp_size, {.src_size = src_size, .cache = cache}); line = __LINE__;
    b.CpAsyncCommitGroup();
    b.CpAsyncWaitGroup(0);
    b.BarSync();
    b.Ret();
    return Msg(b.Finish());
  };
  using C = KernelBuilder::CpAsyncCache;
  CHECK(build(16, std::nullopt, C::kCg) == "OK");
  CHECK(build(8, 4u, C::kCa) == "OK");
  auto at = [&](std::string msg) { return StrCat("kernel copy: verifier_test.cc:", line, ": ", msg); };
  CHECK(build(2, std::nullopt, C::kCa) == at("cp.async cp-size 2 is not a whole number of f32 elements (4 bytes each)"));
  CHECK(build(12, std::nullopt, C::kCa) == at("cp.async cp-size 12 is not 4, 8 or 16"));
  CHECK(build(8, std::nullopt, C::kCg) == at("cp.async.cg copies 16 bytes, not 8 (.ca copies 4, 8 or 16)"));
  CHECK(build(4, 5u, C::kCa) == at("cp.async src-size 5 is larger than the cp-size 4"));
  CHECK(build(16, std::nullopt, C::kCa, ir::Target::kSm75) ==
        at("cp.async.ca.shared.global [%2+16], [%5], 16: cp.async.ca.shared.global requires sm_80 or newer; the "
           "kernel targets sm_75"));
}

}  // namespace
}  // namespace ptxforge
