// KernelBuilder: write a kernel in C++; get a verified ir::Kernel.
//
//   KernelBuilder b("scale", ir::Target::kSm80);
//   auto x = b.CvtaToGlobal(b.Param<U64>("x"));
//   auto n = b.Param<U32>("n");
//   auto i = b.GlobalThreadIdX();
//   b.If(b.Lt(i, n), [&] {
//     auto addr = b.ElementAddr<F32>(x, i);
//     b.Store(ir::StateSpace::kGlobal, addr, b.Mul(b.Load<F32>(ir::StateSpace::kGlobal, addr), 2.0f));
//   });
//   absl::StatusOr<ir::Kernel> kernel = b.Finish();
//
// Every call records where it was made; errors name that file and line. The
// first error is kept (later calls do nothing) and Finish() returns it;
// otherwise Finish() runs the verifier and returns its verdict. Values belong
// to the builder that made them: using one in another builder is an error.
// Enum arguments (including the generic Emit path's) out of their range are
// errors too.
#ifndef PTXFORGE_BUILDER_KERNEL_BUILDER_H_
#define PTXFORGE_BUILDER_KERNEL_BUILDER_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "builder/mma.h"
#include "builder/value.h"
#include "ir/kernel.h"
#include "ir/source_loc.h"

namespace ptxforge {

using Loc = ir::SourceLoc;

// Modifiers of float arithmetic. rounding: rn/rz/rm/rp (fma, div.f64, sqrt,
// rcp need one; the builder picks rn when none is given). mode: approx or
// full for div.f32, approx for sqrt/rcp.f32 (ex2, lg2, sin, cos, rsqrt and
// tanh are always approx).
struct FloatOpts {
  ir::Rounding rounding = ir::Rounding::kNone;
  ir::Mode mode = ir::Mode::kNone;
  bool ftz = false;
  bool sat = false;
};

// Modifiers of cvt. rounding: left kNone, the builder picks what C++ would
// do (rzi for float->int, rn for int->float and narrowing float->float).
struct CvtOpts {
  ir::Rounding rounding = ir::Rounding::kNone;
  bool ftz = false;
  bool sat = false;
};

struct MemOpts {
  ir::CacheOp cache = ir::CacheOp::kNone;
  bool nc = false;  // ld.global.nc: read-only data cache
};

struct AtomOpts {
  ir::Scope scope = ir::Scope::kNone;
  ir::MemSem sem = ir::MemSem::kNone;
};

// What a raw PTX block needs from the target (the printer cannot see inside it).
struct RawPtxOpts {
  int min_sm = 0;
  int min_ptx = 0;  // major*10+minor
};

class KernelBuilder {
 public:
  explicit KernelBuilder(std::string name, ir::Target target = ir::Target::kSm80, Loc loc = Loc::current());
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  // ---- the result
  // The first builder error, or the verifier's verdict on the finished kernel.
  // Appends `ret` when the body does not end in ret/exit/an unconditional bra.
  absl::StatusOr<ir::Kernel> Finish();
  // The first error so far (OK while none).
  const absl::Status& status() const { return error_; }
  // The kernel being built (read-only), e.g. to print it before Finish().
  const ir::Kernel& kernel() const { return kernel_; }
  ir::Target target() const { return kernel_.target; }
  // Records an error (the first one sticks) naming `loc`: for helpers built
  // on the builder (builder/math.h, builder/collectives.h ...).
  void ReportError(std::string message, Loc loc = Loc::current()) { Fail(loc, std::move(message)); }

  // ---- declarations
  // Declares a `.param` and loads it (`ld.param`) at the current point.
  template <ScalarTag T>
  Value<T> Param(std::string name, Loc loc = Loc::current()) {
    uint32_t index = DeclareParam(std::move(name), T::kType, loc);
    return Value<T>(LoadParamReg(index, T::kType, loc));
  }
  template <ScalarTag T>
  Symbol<T> Shared(std::string name, uint32_t count, uint32_t align = 0, Loc loc = Loc::current()) {
    return Symbol<T>{DeclareVariable(std::move(name), ir::StateSpace::kShared, T::kType, count, align, false, loc),
                     ir::StateSpace::kShared};
  }
  // The dynamic shared memory window (`extern .shared .align A .b8 name[]`);
  // its size is given at launch.
  template <ScalarTag T>
  Symbol<T> DynamicShared(std::string name, uint32_t align = 16, Loc loc = Loc::current()) {
    return Symbol<T>{DeclareVariable(std::move(name), ir::StateSpace::kShared, T::kType, 0, align, true, loc),
                     ir::StateSpace::kShared};
  }
  template <ScalarTag T>
  Symbol<T> Local(std::string name, uint32_t count, uint32_t align = 0, Loc loc = Loc::current()) {
    return Symbol<T>{DeclareVariable(std::move(name), ir::StateSpace::kLocal, T::kType, count, align, false, loc),
                     ir::StateSpace::kLocal};
  }
  void SetMaxThreads(uint32_t x, uint32_t y = 1, uint32_t z = 1, Loc loc = Loc::current());
  void SetRequiredThreads(uint32_t x, uint32_t y = 1, uint32_t z = 1, Loc loc = Loc::current());
  void SetMinBlocksPerSM(uint32_t n, Loc loc = Loc::current());
  // `.maxnreg n` (1-255): a register budget per thread for ptxas. It spills
  // rather than exceed n, and it may also use up to n where it would use
  // fewer without the directive (ptxas 13.0: conv2d.direct on sm_80 takes 32
  // registers alone, 48 with `.maxnreg 48`, 64 with 64), so a generous value
  // can cost occupancy. Below 24 ptxas raises it to 24 with a warning. For a
  // kernel whose values fit in fewer registers than ptxas takes by itself.
  void SetMaxRegisters(uint32_t n, Loc loc = Loc::current());

  // ---- registers and constants
  template <ScalarTag T>
  Value<T> Const(typename T::CType c, Loc loc = Loc::current()) {
    return Value<T>(Mov(T::kType, Src<T>(c).operand(), loc));
  }
  // A mutable register initialised to `init`; change it with Assign().
  template <ScalarTag T>
  Var<T> Mutable(SrcOf<T> init, std::string hint = "", Loc loc = Loc::current()) {
    Var<T> v(NewReg(T::kType, std::move(hint), /*is_mutable=*/true));
    Assign(v, init, loc);
    return v;
  }
  template <ScalarTag T>
  void Assign(Var<T> var, SrcOf<T> value, Loc loc = Loc::current()) {
    MovInto(var.reg, T::kType, value.operand(), loc);
  }
  // A register defined later (by raw PTX or a guarded move); define it exactly once.
  template <ScalarTag T>
  Value<T> Undefined(std::string hint = "") {
    return Value<T>(NewReg(T::kType, std::move(hint), false));
  }
  // Gives a register a name for the IR dump.
  template <typename T>
  Value<T> Name(Value<T> v, std::string hint) {
    SetHint(v.reg, std::move(hint));
    return v;
  }

  // ---- special registers
  Value<U32> Special(ir::SpecialReg r, Loc loc = Loc::current());
  Value<U64> Special64(ir::SpecialReg r, Loc loc = Loc::current());
  Value<U32> TidX(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kTidX, loc); }
  Value<U32> TidY(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kTidY, loc); }
  Value<U32> TidZ(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kTidZ, loc); }
  Value<U32> NtidX(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kNtidX, loc); }
  Value<U32> NtidY(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kNtidY, loc); }
  Value<U32> NtidZ(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kNtidZ, loc); }
  Value<U32> CtaidX(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kCtaidX, loc); }
  Value<U32> CtaidY(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kCtaidY, loc); }
  Value<U32> CtaidZ(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kCtaidZ, loc); }
  Value<U32> NctaidX(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kNctaidX, loc); }
  Value<U32> NctaidY(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kNctaidY, loc); }
  Value<U32> NctaidZ(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kNctaidZ, loc); }
  Value<U32> LaneId(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kLaneId, loc); }
  Value<U32> WarpId(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kWarpId, loc); }
  Value<U32> Clock(Loc loc = Loc::current()) { return Special(ir::SpecialReg::kClock, loc); }
  Value<U64> Clock64(Loc loc = Loc::current()) { return Special64(ir::SpecialReg::kClock64, loc); }
  // ctaid.x * ntid.x + tid.x (and the same for y).
  Value<U32> GlobalThreadIdX(Loc loc = Loc::current());
  Value<U32> GlobalThreadIdY(Loc loc = Loc::current());

  // ---- integer and float arithmetic
  template <ScalarTag T>
  Value<T> Add(Value<T> a, SrcOf<T> b, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Bin<T>(ir::Opcode::kAdd, a, b, o, loc);
  }
  template <ScalarTag T>
  Value<T> Sub(Value<T> a, SrcOf<T> b, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Bin<T>(ir::Opcode::kSub, a, b, o, loc);
  }
  // mul.lo for integers, mul for floats.
  template <ScalarTag T>
  Value<T> Mul(Value<T> a, SrcOf<T> b, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Bin<T>(ir::Opcode::kMul, a, b, o, loc);
  }
  template <ScalarTag T>
  Value<T> MulHi(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) {
    return Bin<T>(ir::Opcode::kMul, a, b, FloatOpts{.mode = ir::Mode::kHi}, loc);
  }
  template <ScalarTag T>
  Value<WidenT<T>> MulWide(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) {
    ir::Modifiers m = Mods(T::kType, FloatOpts{.mode = ir::Mode::kWide});
    return Value<WidenT<T>>(Emit(ir::Opcode::kMul, m, WidenT<T>::kType, {a.reg, b.operand()}, loc));
  }
  // a * b + c (mad.lo for integers).
  template <ScalarTag T>
  Value<T> Mad(Value<T> a, SrcOf<T> b, SrcOf<T> c, Loc loc = Loc::current()) {
    return Tern<T>(ir::Opcode::kMad, a, b, c, FloatOpts{.mode = ir::Mode::kLo}, loc);
  }
  template <ScalarTag T>
  Value<T> MadHi(Value<T> a, SrcOf<T> b, SrcOf<T> c, Loc loc = Loc::current()) {
    return Tern<T>(ir::Opcode::kMad, a, b, c, FloatOpts{.mode = ir::Mode::kHi}, loc);
  }
  template <ScalarTag T>
  Value<WidenT<T>> MadWide(Value<T> a, SrcOf<T> b, SrcOf<WidenT<T>> c, Loc loc = Loc::current()) {
    ir::Modifiers m = Mods(T::kType, FloatOpts{.mode = ir::Mode::kWide});
    return Value<WidenT<T>>(Emit(ir::Opcode::kMad, m, WidenT<T>::kType, {a.reg, b.operand(), c.operand()}, loc));
  }
  // Fused a * b + c for floats (rounding defaults to rn).
  template <ScalarTag T>
  Value<T> Fma(Value<T> a, SrcOf<T> b, SrcOf<T> c, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Tern<T>(ir::Opcode::kFma, a, b, c, o, loc);
  }
  // Integer division, or float division (f32 default: IEEE div.rn).
  template <ScalarTag T>
  Value<T> Div(Value<T> a, SrcOf<T> b, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Bin<T>(ir::Opcode::kDiv, a, b, o, loc);
  }
  template <ScalarTag T>
  Value<T> Rem(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) {
    return Bin<T>(ir::Opcode::kRem, a, b, {}, loc);
  }
  template <ScalarTag T>
  Value<T> Min(Value<T> a, SrcOf<T> b, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Bin<T>(ir::Opcode::kMin, a, b, o, loc);
  }
  template <ScalarTag T>
  Value<T> Max(Value<T> a, SrcOf<T> b, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Bin<T>(ir::Opcode::kMax, a, b, o, loc);
  }
  template <ScalarTag T>
  Value<T> Abs(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kAbs, a, o, loc);
  }
  template <ScalarTag T>
  Value<T> Neg(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kNeg, a, o, loc);
  }
  template <ScalarTag T>
  Value<T> Sqrt(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kSqrt, a, o, loc);
  }
  template <ScalarTag T>
  Value<T> Rsqrt(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kRsqrt, a, Approx(o), loc);
  }
  template <ScalarTag T>
  Value<T> Rcp(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kRcp, a, o, loc);
  }
  // 2^a, log2(a), sin(a), cos(a), tanh(a): approximate (PTX .approx).
  // ex2 on bf16/bf16x2 exists only with .ftz, which it then gets.
  template <ScalarTag T>
  Value<T> Ex2(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    if constexpr (T::kType == ir::ScalarType::kBF16 || T::kType == ir::ScalarType::kBF16x2) o.ftz = true;
    return Un<T>(ir::Opcode::kEx2, a, Approx(o), loc);
  }
  template <ScalarTag T>
  Value<T> Lg2(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kLg2, a, Approx(o), loc);
  }
  template <ScalarTag T>
  Value<T> Sin(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kSin, a, Approx(o), loc);
  }
  template <ScalarTag T>
  Value<T> Cos(Value<T> a, FloatOpts o = {}, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kCos, a, Approx(o), loc);
  }
  template <ScalarTag T>
  Value<T> Tanh(Value<T> a, Loc loc = Loc::current()) {
    return Un<T>(ir::Opcode::kTanh, a, FloatOpts{.mode = ir::Mode::kApprox}, loc);
  }

  // ---- bit operations (and/or/xor/not also on Pred)
  template <ScalarTag T>
  Value<T> And(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) {
    return Bits<T>(ir::Opcode::kAnd, a, b, loc);
  }
  template <ScalarTag T>
  Value<T> Or(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) {
    return Bits<T>(ir::Opcode::kOr, a, b, loc);
  }
  template <ScalarTag T>
  Value<T> Xor(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) {
    return Bits<T>(ir::Opcode::kXor, a, b, loc);
  }
  template <ScalarTag T>
  Value<T> Not(Value<T> a, Loc loc = Loc::current()) {
    return Value<T>(Emit(ir::Opcode::kNot, Mods(BitsOf(T::kType)), T::kType, {a.reg}, loc));
  }
  template <ScalarTag T>
  Value<T> Cnot(Value<T> a, Loc loc = Loc::current()) {
    return Value<T>(Emit(ir::Opcode::kCnot, Mods(BitsOf(T::kType)), T::kType, {a.reg}, loc));
  }
  template <ScalarTag T>
  Value<T> Shl(Value<T> a, Src<U32> amount, Loc loc = Loc::current()) {
    return Value<T>(Emit(ir::Opcode::kShl, Mods(BitsOf(T::kType)), T::kType, {a.reg, amount.operand()}, loc));
  }
  // Arithmetic shift for signed types, logical otherwise.
  template <ScalarTag T>
  Value<T> Shr(Value<T> a, Src<U32> amount, Loc loc = Loc::current()) {
    return Value<T>(Emit(ir::Opcode::kShr, Mods(T::kType), T::kType, {a.reg, amount.operand()}, loc));
  }
  template <ScalarTag T>
  Value<U32> Popc(Value<T> a, Loc loc = Loc::current()) {
    return Value<U32>(Emit(ir::Opcode::kPopc, Mods(BitsOf(T::kType)), ir::ScalarType::kU32, {a.reg}, loc));
  }
  template <ScalarTag T>
  Value<U32> Clz(Value<T> a, Loc loc = Loc::current()) {
    return Value<U32>(Emit(ir::Opcode::kClz, Mods(BitsOf(T::kType)), ir::ScalarType::kU32, {a.reg}, loc));
  }
  template <ScalarTag T>
  Value<T> Brev(Value<T> a, Loc loc = Loc::current()) {
    return Value<T>(Emit(ir::Opcode::kBrev, Mods(BitsOf(T::kType)), T::kType, {a.reg}, loc));
  }
  // Bit field extract: `len` bits of `a` from bit `pos` (sign-extended for S32/S64).
  template <ScalarTag T>
  Value<T> Bfe(Value<T> a, Src<U32> pos, Src<U32> len, Loc loc = Loc::current()) {
    return Value<T>(Emit(ir::Opcode::kBfe, Mods(T::kType), T::kType, {a.reg, pos.operand(), len.operand()}, loc));
  }
  // Bit field insert: `len` low bits of `a` into `b` at bit `pos`.
  template <ScalarTag T>
  Value<T> Bfi(Value<T> a, SrcOf<T> b, Src<U32> pos, Src<U32> len, Loc loc = Loc::current()) {
    return Value<T>(Emit(ir::Opcode::kBfi, Mods(BitsOf(T::kType)), T::kType,
                         {a.reg, b.operand(), pos.operand(), len.operand()}, loc));
  }

  // prmt.b32: four bytes picked from {b, a} (a holds bytes 0..3) by the
  // selector c; `mode` names one of the fixed patterns (PrmtMode::kF4e...).
  enum class PrmtMode : uint8_t { kGeneral, kF4e, kB4e, kRc8, kEcl, kEcr, kRc16 };  // the row's order
  Value<B32> Prmt(Value<B32> a, SrcOf<B32> b, SrcOf<B32> c, PrmtMode mode = PrmtMode::kGeneral,
                  Loc loc = Loc::current()) {
    ir::Modifiers m = Mods(ir::ScalarType::kB32);
    m.variant = static_cast<uint8_t>(mode);
    return Value<B32>(Emit(ir::Opcode::kPrmt, m, ir::ScalarType::kB32, {a.reg, b.operand(), c.operand()}, loc));
  }
  // lop3.b32: any function of three inputs, as the 8-bit table `lut` computed
  // from a = 0xF0, b = 0xCC, c = 0xAA (e.g. (a & b) | c is 0xEA).
  Value<B32> Lop3(Value<B32> a, SrcOf<B32> b, SrcOf<B32> c, uint8_t lut, Loc loc = Loc::current()) {
    return Value<B32>(Emit(ir::Opcode::kLop3, Mods(ir::ScalarType::kB32), ir::ScalarType::kB32,
                           {a.reg, b.operand(), c.operand(), ir::Operand::Imm(ir::ScalarType::kB32, lut)}, loc));
  }
  // dp4a: c + the dot product of the four bytes of a and b (each U32 or S32:
  // unsigned or signed bytes). dp2a: c + a's two 16-bit halves times b's
  // bytes 0,1 (`hi` false) or 2,3. The result is S32 if either input is.
  template <typename A, typename B>
  using DotT = std::conditional_t<std::is_same_v<A, S32> || std::is_same_v<B, S32>, S32, U32>;
  template <ScalarTag A, ScalarTag B>
    requires((std::is_same_v<A, U32> || std::is_same_v<A, S32>) && (std::is_same_v<B, U32> || std::is_same_v<B, S32>))
  Value<DotT<A, B>> Dp4a(Value<A> a, Value<B> b, SrcOf<DotT<A, B>> c, Loc loc = Loc::current()) {
    ir::Modifiers m{.type = A::kType, .type2 = B::kType};
    return Value<DotT<A, B>>(Emit(ir::Opcode::kDp4a, m, DotT<A, B>::kType, {a.reg, b.reg, c.operand()}, loc));
  }
  template <ScalarTag A, ScalarTag B>
    requires((std::is_same_v<A, U32> || std::is_same_v<A, S32>) && (std::is_same_v<B, U32> || std::is_same_v<B, S32>))
  Value<DotT<A, B>> Dp2a(bool hi, Value<A> a, Value<B> b, SrcOf<DotT<A, B>> c, Loc loc = Loc::current()) {
    ir::Modifiers m{.type = A::kType, .type2 = B::kType};
    m.variant = hi ? 2 : 1;  // {variant:!lo|hi}
    return Value<DotT<A, B>>(Emit(ir::Opcode::kDp2a, m, DotT<A, B>::kType, {a.reg, b.reg, c.operand()}, loc));
  }
  // mov.b32 %r, {lo, hi} (B16 halves) and mov.b64 %rd, {lo, hi} (B32
  // halves); Unpack is the reverse: {low half, high half}.
  template <ScalarTag Part>
    requires(std::is_same_v<Part, B16> || std::is_same_v<Part, B32>)
  auto Pack(Value<Part> lo, Value<Part> hi, Loc loc = Loc::current()) {
    using Whole = std::conditional_t<std::is_same_v<Part, B16>, B32, B64>;
    return Value<Whole>(Emit(ir::Opcode::kMovPack, Mods(Whole::kType), Whole::kType, {lo.reg, hi.reg}, loc));
  }
  template <ScalarTag Whole>
    requires(std::is_same_v<Whole, B32> || std::is_same_v<Whole, B64>)
  auto Unpack(Value<Whole> w, Loc loc = Loc::current()) {
    using Part = std::conditional_t<std::is_same_v<Whole, B32>, B16, B32>;
    ir::Instruction inst;
    inst.op = ir::Opcode::kMovUnpack;
    inst.mods = Mods(Whole::kType);
    std::array<Value<Part>, 2> parts = {Value<Part>(NewReg(Part::kType)), Value<Part>(NewReg(Part::kType))};
    inst.dsts = {parts[0].reg, parts[1].reg};
    inst.srcs = {w.reg};
    EmitInstruction(std::move(inst), loc);
    return parts;
  }

  // ---- warp matrix multiply-accumulate (fragment types: builder/mma.h)
  // mma.sync.aligned.<shape>.row.col: D = A * B + C over the whole warp (all
  // 32 lanes execute it together); returns D. The forms PTX has: f16 inputs
  // with F16 or F32 accumulators (m16n8k8 sm_75, m16n8k16 sm_80), BF16 and
  // TF32 inputs with F32 (sm_80; TF32 m16n8k8 only), S8/U8 inputs (mixed
  // signedness too) with S32 (m16n8k16, m16n8k32; sm_80), E4M3/E5M2 with F32
  // (m16n8k32, sm_89). Other combinations do not compile. `satfinite` (S8/U8
  // only) clamps the sums to the s32 range instead of wrapping.
  template <MmaShape S, typename In, typename InB, typename Acc>
    requires(MmaOpcode<S, In, InB, Acc>() != ir::Opcode::kRet)
  MmaFragC<S, Acc> Mma(const MmaFragA<S, In>& a, const MmaFragB<S, InB>& bf, const MmaFragC<S, Acc>& c,
                       bool satfinite = false, Loc loc = Loc::current()) {
    constexpr ir::Opcode op = MmaOpcode<S, In, InB, Acc>();
    const ir::OpInfo& info = ir::GetOpInfo(op);
    ir::Instruction inst;
    inst.op = op;
    inst.mods.type = Acc::kType;
    inst.mods.type2 = In::kType;
    inst.mods.type3 = InB::kType;
    inst.mods.type4 = Acc::kType;
    for (int v = 1; v <= ir::NumEnumValues(info, ir::ModSlot::kShape); ++v) {
      if (ir::EnumValueName(info, ir::ModSlot::kShape, v) == MmaShapeName(S)) inst.mods.shape = static_cast<uint8_t>(v);
    }
    inst.mods.layout = 1;  // row.col, the one layout of these shapes
    if (satfinite) inst.mods.variant = 1;
    using D = MmaFragC<S, Acc>;
    D d;
    for (auto& r : d.regs) {
      r = Value<typename D::Reg>(NewReg(D::Reg::kType));
      inst.dsts.push_back(r.reg);
    }
    for (const auto& r : a.regs) inst.srcs.push_back(r.reg);
    for (const auto& r : bf.regs) inst.srcs.push_back(r.reg);
    for (const auto& r : c.regs) inst.srcs.push_back(r.reg);
    EmitInstruction(std::move(inst), loc);
    return d;
  }
  // A fragment from its elements, numbered as Coord() numbers them (element
  // i is part i % kPerReg of register i / kPerReg): F16/BF16 elements are
  // packed in pairs (mov.b32 %r, {lo, hi}), F32/S32 ones are the registers.
  // (8-bit and tf32 elements come packed: load their B32 words directly.)
  template <typename Frag>
    requires(std::is_same_v<typename Frag::Elem, F16> || std::is_same_v<typename Frag::Elem, BF16> ||
             std::is_same_v<typename Frag::Elem, F32> || std::is_same_v<typename Frag::Elem, S32>)
  Frag MmaPack(const std::array<Value<typename Frag::Elem>, Frag::kRegs * Frag::kPerReg>& elems,
               Loc loc = Loc::current()) {
    Frag f;
    for (int r = 0; r < Frag::kRegs; ++r) {
      if constexpr (Frag::kPerReg == 1) {
        f.regs[r] = Value<typename Frag::Reg>(elems[r].reg);
      } else {
        f.regs[r] = Value<typename Frag::Reg>(Emit(ir::Opcode::kMovPack, Mods(ir::ScalarType::kB32), Frag::Reg::kType,
                                                   {elems[2 * r].reg, elems[2 * r + 1].reg}, loc));
      }
    }
    return f;
  }
  // The four elements of an accumulator fragment (C or D), numbered as
  // MmaFragC::Coord numbers them; F16 ones are unpacked from their pairs.
  template <MmaShape S, typename Acc>
  std::array<Value<Acc>, 4> MmaUnpack(const MmaFragC<S, Acc>& d, Loc loc = Loc::current()) {
    std::array<Value<Acc>, 4> out;
    for (int r = 0; r < MmaFragC<S, Acc>::kRegs; ++r) {
      if constexpr (MmaFragC<S, Acc>::kPerReg == 1) {
        out[r] = Value<Acc>(d.regs[r].reg);
      } else {
        ir::Instruction inst;
        inst.op = ir::Opcode::kMovUnpack;
        inst.mods = Mods(ir::ScalarType::kB32);
        out[2 * r] = Value<Acc>(NewReg(Acc::kType));
        out[2 * r + 1] = Value<Acc>(NewReg(Acc::kType));
        inst.dsts = {out[2 * r].reg, out[2 * r + 1].reg};
        inst.srcs = {d.regs[r].reg};
        EmitInstruction(std::move(inst), loc);
      }
    }
    return out;
  }
  // An accumulator fragment of zeros (each register set with one mov).
  template <MmaShape S, typename Acc>
  MmaFragC<S, Acc> MmaZero(Loc loc = Loc::current()) {
    using C = MmaFragC<S, Acc>;
    C c;
    const ir::ScalarType mov = MovType(C::Reg::kType);
    for (auto& r : c.regs) {
      r = Value<typename C::Reg>(NewReg(C::Reg::kType));
      MovInto(r.reg, mov, ir::Operand::Imm(mov, 0), loc);
    }
    return c;
  }
  // cvt.rn.satfinite.e4m3x2.f32 (F8 = E4M3) or .e5m2x2.f32 (E5M2): `hi` to
  // the high byte and `lo` to the low byte of a B16, rounded to nearest even,
  // clamped to the largest finite value (448, 57344); NaN gives 0x7f. sm_89.
  template <typename F8>
    requires(std::is_same_v<F8, E4M3> || std::is_same_v<F8, E5M2>)
  Value<B16> CvtPackF8(Value<F32> hi, SrcOf<F32> lo, Loc loc = Loc::current()) {
    ir::Modifiers m{.type = std::is_same_v<F8, E4M3> ? ir::ScalarType::kE4M3x2 : ir::ScalarType::kE5M2x2,
                    .type2 = ir::ScalarType::kF32};
    m.variant = 1;  // rn.satfinite
    return Value<B16>(Emit(ir::Opcode::kCvtPackF8, m, ir::ScalarType::kB16, {hi.reg, lo.operand()}, loc));
  }
  // cvt.rn.f16x2.e4m3x2 / .e5m2x2: the two fp8 values of a B16 to two halves
  // (the low byte to the low half); exact. sm_89.
  template <typename F8>
    requires(std::is_same_v<F8, E4M3> || std::is_same_v<F8, E5M2>)
  Value<F16x2> CvtUnpackF8(Value<B16> v, Loc loc = Loc::current()) {
    ir::Modifiers m{.type = ir::ScalarType::kF16x2,
                    .type2 = std::is_same_v<F8, E4M3> ? ir::ScalarType::kE4M3x2 : ir::ScalarType::kE5M2x2};
    m.variant = 1;  // rn
    return Value<F16x2>(Emit(ir::Opcode::kCvtUnpackF8, m, ir::ScalarType::kF16x2, {v.reg}, loc));
  }

  // ---- comparison and selection
  template <ScalarTag T>
  Value<Pred> Setp(ir::CmpOp cmp, Value<T> a, SrcOf<T> b, bool ftz = false, Loc loc = Loc::current()) {
    ir::Modifiers m = Mods(T::kType);
    m.cmp = cmp;
    m.ftz = ftz;
    return Value<Pred>(Emit(ir::Opcode::kSetp, m, ir::ScalarType::kPred, {a.reg, b.operand()}, loc));
  }
  // setp.cmp.bool: (a cmp b) bool_op c.
  template <ScalarTag T>
  Value<Pred> SetpCombine(ir::CmpOp cmp, ir::BoolOp bool_op, Value<T> a, SrcOf<T> b, Value<Pred> c,
                          Loc loc = Loc::current()) {
    ir::Modifiers m = Mods(T::kType);
    m.cmp = cmp;
    m.bool_op = bool_op;
    return Value<Pred>(Emit(ir::Opcode::kSetp, m, ir::ScalarType::kPred, {a.reg, b.operand(), c.reg}, loc));
  }
  // setp on packed halves (f16x2, bf16x2): {low halves' comparison, high halves'}.
  // With a bool_op, each is combined with c (bool_op kNone: no c).
  template <ScalarTag T>
    requires(T::kType == ir::ScalarType::kF16x2 || T::kType == ir::ScalarType::kBF16x2)
  std::array<Value<Pred>, 2> SetpPair(ir::CmpOp cmp, Value<T> a, Value<T> b, bool ftz = false,
                                      ir::BoolOp bool_op = ir::BoolOp::kNone, Value<Pred> c = {},
                                      Loc loc = Loc::current()) {
    ir::Instruction inst;
    inst.op = ir::Opcode::kSetpPair;
    inst.mods = Mods(T::kType);
    inst.mods.cmp = cmp;
    inst.mods.ftz = ftz;
    inst.mods.bool_op = bool_op;
    std::array<Value<Pred>, 2> p = {Value<Pred>(NewReg(ir::ScalarType::kPred)),
                                    Value<Pred>(NewReg(ir::ScalarType::kPred))};
    inst.dsts = {p[0].reg, p[1].reg};
    inst.srcs = {ir::Operand::FromReg(a.reg), ir::Operand::FromReg(b.reg)};
    if (bool_op != ir::BoolOp::kNone) inst.srcs.push_back(ir::Operand::FromReg(c.reg));
    EmitInstruction(std::move(inst), loc);
    return p;
  }
  template <ScalarTag T>
  Value<Pred> Eq(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) { return Setp(ir::CmpOp::kEq, a, b, false, loc); }
  template <ScalarTag T>
  Value<Pred> Ne(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) { return Setp(ir::CmpOp::kNe, a, b, false, loc); }
  template <ScalarTag T>
  Value<Pred> Lt(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) { return Setp(ir::CmpOp::kLt, a, b, false, loc); }
  template <ScalarTag T>
  Value<Pred> Le(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) { return Setp(ir::CmpOp::kLe, a, b, false, loc); }
  template <ScalarTag T>
  Value<Pred> Gt(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) { return Setp(ir::CmpOp::kGt, a, b, false, loc); }
  template <ScalarTag T>
  Value<Pred> Ge(Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) { return Setp(ir::CmpOp::kGe, a, b, false, loc); }
  // p ? a : b
  template <ScalarTag T>
  Value<T> Select(Value<Pred> p, Value<T> a, SrcOf<T> b, Loc loc = Loc::current()) {
    return Value<T>(Emit(ir::Opcode::kSelp, Mods(MovType(T::kType)), T::kType, {a.reg, b.operand(), p.reg}, loc));
  }

  // ---- conversion
  template <ScalarTag To, ScalarTag From>
  Value<To> Cvt(Value<From> a, CvtOpts o = {}, Loc loc = Loc::current()) {
    return Value<To>(CvtReg(To::kType, From::kType, a.reg, o, loc));
  }
  // Reinterprets the bits (mov.bN); the sizes must match.
  template <ScalarTag To, ScalarTag From>
    requires(ir::TypeBits(To::kType) == ir::TypeBits(From::kType))
  Value<To> Bitcast(Value<From> a, Loc loc = Loc::current()) {
    return Value<To>(BitcastReg(To::kType, From::kType, a.reg, loc));
  }
  // Options of CvtPack below.
  struct CvtPackOptions {
    bool relu = false;       // .relu: negative results become +0
    bool satfinite = false;  // .satfinite (PTX 8.1)
  };
  // cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 (sm_80): two f32 rounded to
  // nearest-even and packed, `hi` in the upper half and `lo` in the lower
  // (PTX's `cvt d, a, b` puts a in the upper half). `relu` (.relu) turns
  // negative results into +0.
  template <ScalarTag To>
    requires(std::is_same_v<To, F16x2> || std::is_same_v<To, BF16x2>)
  Value<To> CvtPack(Value<F32> hi, Value<F32> lo, bool relu = false, Loc loc = Loc::current()) {
    return CvtPack<To>(hi, lo, CvtPackOptions{.relu = relu}, loc);
  }
  // The same with options: .relu, and .satfinite (PTX 8.1), which turns
  // results beyond the largest finite value (infinities included) into that
  // value with the sign kept; NaN stays NaN.
  template <ScalarTag To>
    requires(std::is_same_v<To, F16x2> || std::is_same_v<To, BF16x2>)
  Value<To> CvtPack(Value<F32> hi, Value<F32> lo, CvtPackOptions options, Loc loc = Loc::current()) {
    ir::Modifiers m{.type = To::kType, .type2 = ir::ScalarType::kF32, .rounding = ir::Rounding::kRn};
    // {variant:relu|satfinite|relu.satfinite}
    m.variant = static_cast<uint8_t>((options.relu ? 1 : 0) + (options.satfinite ? 2 : 0));
    return Value<To>(Emit(ir::Opcode::kCvtPack, m, To::kType, {hi.reg, lo.reg}, loc));
  }
  // cvta.to.global.u64: a generic pointer (a kernel param) to a global address.
  Value<U64> CvtaToGlobal(Value<U64> generic, Loc loc = Loc::current());
  // Generic address of a shared/local variable (cvta.shared.u64).
  template <typename T>
  Value<U64> GenericAddr(Symbol<T> sym, Loc loc = Loc::current()) {
    return Value<U64>(CvtaSymbol(sym.index, sym.space, loc));
  }
  // The 32-bit address of a shared/local variable (mov.u32 %r, name).
  template <typename T>
  Value<U32> SymbolAddr(Symbol<T> sym, Loc loc = Loc::current()) {
    return Value<U32>(Emit(ir::Opcode::kMov, Mods(ir::ScalarType::kU32), ir::ScalarType::kU32,
                           {ir::Operand::Symbol(sym.index)}, loc));
  }

  // ---- addresses
  // base + index * sizeof(T) (mul.wide.u32 + add.u64).
  template <ScalarTag T>
  Value<U64> ElementAddr(Value<U64> base, Value<U32> index, Loc loc = Loc::current()) {
    return Value<U64>(ElementAddrReg(base.reg, index.reg, false, ir::TypeSize(T::kType), loc));
  }
  template <ScalarTag T>
  Value<U64> ElementAddr(Value<U64> base, Value<U64> index, Loc loc = Loc::current()) {
    return Value<U64>(ElementAddrReg(base.reg, index.reg, true, ir::TypeSize(T::kType), loc));
  }
  // The 32-bit address of sym[index] (shared/local).
  template <typename T>
  Value<U32> ElementAddr(Symbol<T> sym, Value<U32> index, Loc loc = Loc::current()) {
    Value<U32> base = SymbolAddr(sym, loc);
    return Mad(index, static_cast<uint32_t>(ir::TypeSize(T::kType)), base, loc);
  }

  // ---- memory
  // ld.<space>.<type> (f16/bf16 load as b16 into an f16/bf16 register).
  template <ScalarTag T>
  Value<T> Load(ir::StateSpace space, Address addr, MemOpts o = {}, Loc loc = Loc::current()) {
    ir::Reg r = NewReg(T::kType, "", false);
    LoadRegs(space, T::kType, addr, o, std::span<const ir::Reg>(&r, 1), loc);
    return Value<T>(r);
  }
  template <ScalarTag T, int N>
  std::array<Value<T>, N> LoadVec(ir::StateSpace space, Address addr, MemOpts o = {}, Loc loc = Loc::current()) {
    static_assert(N == 2 || N == 4, "ld vectors are v2 or v4");
    std::array<ir::Reg, N> regs;
    for (ir::Reg& r : regs) r = NewReg(T::kType, "", false);
    LoadRegs(space, T::kType, addr, o, regs, loc);
    std::array<Value<T>, N> out;
    for (int i = 0; i < N; ++i) out[i] = Value<T>(regs[i]);
    return out;
  }
  template <ScalarTag T>
  void Store(ir::StateSpace space, Address addr, Value<T> v, MemOpts o = {}, Loc loc = Loc::current()) {
    ir::Operand op = ir::Operand::FromReg(v.reg);
    StoreOps(space, T::kType, addr, o, std::span<const ir::Operand>(&op, 1), loc);
  }
  // Stores an immediate of type T (materialised in a register first):
  // b.Store<F32>(space, addr, 1.0f).
  template <ScalarTag T>
  void Store(ir::StateSpace space, Address addr, std::type_identity_t<typename T::CType> c, MemOpts o = {},
             Loc loc = Loc::current()) {
    Store(space, addr, Const<T>(c, loc), o, loc);
  }
  // An immediate without its type does not compile: write b.Store<F32>(space, addr, 1.0f).
  template <typename C>
    requires std::is_arithmetic_v<C>
  void Store(ir::StateSpace space, Address addr, C c, MemOpts o = {}, Loc loc = Loc::current()) = delete;
  // The same as Store<T>(space, addr, c).
  template <ScalarTag T>
  void StoreImm(ir::StateSpace space, Address addr, typename T::CType c, MemOpts o = {}, Loc loc = Loc::current()) {
    Store(space, addr, Const<T>(c, loc), o, loc);
  }
  template <ScalarTag T, size_t N>
  void StoreVec(ir::StateSpace space, Address addr, const std::array<Value<T>, N>& v, MemOpts o = {},
                Loc loc = Loc::current()) {
    static_assert(N == 2 || N == 4, "st vectors are v2 or v4");
    std::array<ir::Operand, N> ops;
    for (size_t i = 0; i < N; ++i) ops[i] = ir::Operand::FromReg(v[i].reg);
    StoreOps(space, T::kType, addr, o, ops, loc);
  }

  // ---- atomics (global or shared); they return the old value
  template <ScalarTag T>
  Value<T> Atom(ir::AtomOp op, ir::StateSpace space, Address addr, SrcOf<T> v, AtomOpts o = {},
                Loc loc = Loc::current()) {
    return Value<T>(AtomicOp(true, op, space, T::kType, addr, v.operand(), nullptr, o, loc));
  }
  template <ScalarTag T>
  Value<T> AtomicAdd(ir::StateSpace space, Address addr, Value<T> v, AtomOpts o = {}, Loc loc = Loc::current()) {
    return Atom<T>(ir::AtomOp::kAdd, space, addr, v, o, loc);
  }
  // Compare-and-swap: stores `value` if the old value equals `compare`.
  template <ScalarTag T>
  Value<T> AtomCas(ir::StateSpace space, Address addr, Value<T> compare, SrcOf<T> value, AtomOpts o = {},
                   Loc loc = Loc::current()) {
    ir::Operand c = ir::Operand::FromReg(compare.reg);
    return Value<T>(AtomicOp(true, ir::AtomOp::kCas, space, T::kType, addr, c, &value.operand(), o, loc));
  }
  // red: an atomic without a result.
  template <ScalarTag T>
  void Red(ir::AtomOp op, ir::StateSpace space, Address addr, SrcOf<T> v, AtomOpts o = {},
           Loc loc = Loc::current()) {
    AtomicOp(false, op, space, T::kType, addr, v.operand(), nullptr, o, loc);
  }

  // ---- control flow
  ir::Label NewLabel(std::string hint = "");
  void Bind(ir::Label label, Loc loc = Loc::current());
  void Bra(ir::Label target, Loc loc = Loc::current());
  void BraIf(Value<Pred> p, ir::Label target, Loc loc = Loc::current());
  void BraIfNot(Value<Pred> p, ir::Label target, Loc loc = Loc::current());
  void Ret(Loc loc = Loc::current());
  void Exit(Loc loc = Loc::current());

  // if (p) then();
  template <typename F>
  void If(Value<Pred> p, F&& then, Loc loc = Loc::current()) {
    ir::Label end = NewLabel("endif");
    BraIfNot(p, end, loc);
    then();
    Bind(end, loc);
  }
  // if (p) then(); else otherwise();
  template <typename F, typename G>
  void IfElse(Value<Pred> p, F&& then, G&& otherwise, Loc loc = Loc::current()) {
    ir::Label else_label = NewLabel("else");
    ir::Label end = NewLabel("endif");
    BraIfNot(p, else_label, loc);
    then();
    Bra(end, loc);
    Bind(else_label, loc);
    otherwise();
    Bind(end, loc);
  }
  // `.pragma "nounroll"` (nvcc's `#pragma unroll 1`): ptxas keeps the loop
  // whose header label was bound just before it rolled, which can save the
  // registers that unrolling a loop of constant trip count costs. Call it
  // right after Bind() of a hand-made loop's header; ForRange and While take
  // LoopOptions{.unroll = false}. Anywhere else it is refused ("NoUnroll()
  // must come right after Bind() of a loop header's label").
  void NoUnroll(Loc loc = Loc::current());
  // How a ForRange/While loop is lowered. unroll = false: NoUnroll() at its
  // header. The emulator runs both the same way.
  struct LoopOptions {
    bool unroll = true;
  };
  // for (i = start; i < end; i += step) body(i); step must be positive.
  template <ScalarTag T = U32, typename F>
  void ForRange(SrcOf<T> start, SrcOf<T> end, SrcOf<T> step, F&& body, Loc loc = Loc::current()) {
    ForRange<T>(start, end, step, LoopOptions{}, std::forward<F>(body), loc);
  }
  template <ScalarTag T = U32, typename F>
  void ForRange(SrcOf<T> start, SrcOf<T> end, SrcOf<T> step, LoopOptions options, F&& body,
                Loc loc = Loc::current()) {
    Var<T> i = Mutable<T>(start, "i", loc);
    ir::Label head = NewLabel("loop");
    ir::Label done = NewLabel("endloop");
    Bind(head, loc);
    if (!options.unroll) NoUnroll(loc);
    Value<Pred> finished = Setp<T>(ir::CmpOp::kGe, i, end, false, loc);
    BraIf(finished, done, loc);
    body(static_cast<Value<T>>(i));
    Assign(i, Add<T>(i, step, {}, loc), loc);
    Bra(head, loc);
    Bind(done, loc);
  }
  // while (cond()) body(); cond returns a Value<Pred>.
  template <typename C, typename F>
  void While(C&& cond, F&& body, Loc loc = Loc::current()) {
    While(LoopOptions{}, std::forward<C>(cond), std::forward<F>(body), loc);
  }
  template <typename C, typename F>
  void While(LoopOptions options, C&& cond, F&& body, Loc loc = Loc::current()) {
    ir::Label head = NewLabel("while");
    ir::Label done = NewLabel("endwhile");
    Bind(head, loc);
    if (!options.unroll) NoUnroll(loc);
    Value<Pred> p = cond();
    BraIfNot(p, done, loc);
    body();
    Bra(head, loc);
    Bind(done, loc);
  }

  // ---- synchronisation and warp operations
  // bar.sync id (all threads of the block), or bar.sync id, count.
  void BarSync(uint32_t barrier = 0, Loc loc = Loc::current());
  void BarSync(uint32_t barrier, uint32_t thread_count, Loc loc = Loc::current());
  // bar.warp.sync (CUDA's __syncwarp): the lanes of `member_mask` wait for
  // each other, and their memory accesses before it are ordered before their
  // accesses after it. Every lane of the mask must reach a bar.warp.sync with
  // the same mask, the calling lane included.
  void SyncWarp(uint32_t member_mask = 0xFFFFFFFFu, Loc loc = Loc::current());
  // membar.cta / membar.gl / membar.sys.
  void Membar(ir::Scope scope, Loc loc = Loc::current());
  // bar.arrive id, count: the calling warp counts toward barrier `barrier`
  // (1..15 for a named barrier) without waiting; the barrier completes when
  // `thread_count` threads arrived with bar.arrive or bar.sync id, count.
  // The producer half of a producer/consumer pair: producers write and
  // BarArrive, consumers BarSync(id, count) and read.
  void BarArrive(uint32_t barrier, uint32_t thread_count, Loc loc = Loc::current());
  // fence.acq_rel.<scope> (a lightweight fence) / fence.sc.<scope>
  // (sequentially consistent), sm_70. The emulator runs every thread's
  // memory accesses in program order, so a fence orders nothing further
  // there (see README, "The emulator").
  enum class FenceSem : uint8_t { kAcqRel = 1, kSc = 2 };  // the row's {variant:acq_rel|sc}
  void Fence(FenceSem sem, ir::Scope scope, Loc loc = Loc::current());

  // ---- asynchronous copies (sm_80, PTX 7.0)
  // cp.async.{ca,cg}.shared.global [dst], [src], cp_size{, src_size}:
  // copies cp_size bytes (4, 8 or 16; .cg only 16) from global `src` to
  // shared `dst`, both cp_size-aligned, without waiting. With src_size
  // (an immediate 0..cp_size or a U32 register) only src_size bytes are
  // read and the rest of the cp_size bytes are zero-filled (src_size 0
  // reads nothing: edge tiles). The copy belongs to the group the next
  // CpAsyncCommitGroup closes; the bytes are in shared memory only after a
  // CpAsyncWaitGroup/WaitAll retired that group (and, for other threads,
  // a barrier after it). Typed form: CpAsync(Ptr<T, Shared>, Ptr<T,
  // Global>, ...) in builder/memory.h.
  enum class CpAsyncCache : uint8_t { kCa, kCg };  // cache at all levels / at L2 only
  void CpAsync(Address shared_dst, Address global_src, uint32_t cp_size,
               std::optional<Src<U32>> src_size = std::nullopt, CpAsyncCache cache = CpAsyncCache::kCa,
               Loc loc = Loc::current());
  // cp.async.commit_group: the copies issued since the last commit form a group.
  void CpAsyncCommitGroup(Loc loc = Loc::current());
  // cp.async.wait_group n: waits until at most the n most recent groups are
  // pending (n = 0: all committed groups are complete).
  void CpAsyncWaitGroup(uint32_t n, Loc loc = Loc::current());
  // cp.async.wait_all: commits the pending copies and waits for all of them.
  void CpAsyncWaitAll(Loc loc = Loc::current());
  // shfl.sync.<mode>.b32 on a 32-bit value; `c` is the clamp/segment operand
  // (31 for a full warp with up/bfly/idx, 0x1f for down... see the PTX ISA).
  template <ScalarTag T>
    requires(ir::TypeBits(T::kType) == 32)
  Value<T> Shfl(ir::ShflMode mode, Value<T> a, Src<U32> b, Src<U32> c, uint32_t member_mask = 0xFFFFFFFFu,
                Loc loc = Loc::current()) {
    ir::Modifiers m = Mods(ir::ScalarType::kB32);
    m.shfl = mode;
    return Value<T>(Emit(ir::Opcode::kShfl, m, T::kType,
                         {a.reg, b.operand(), c.operand(), ir::Operand::Imm(ir::ScalarType::kB32, member_mask)},
                         loc));
  }
  // Common forms: value from lane (laneid ^ lane_mask), (laneid + delta), (laneid - delta), lane.
  template <ScalarTag T>
  Value<T> ShflXor(Value<T> a, uint32_t lane_mask, Loc loc = Loc::current()) {
    return Shfl<T>(ir::ShflMode::kBfly, a, lane_mask, 31u, 0xFFFFFFFFu, loc);
  }
  template <ScalarTag T>
  Value<T> ShflDown(Value<T> a, uint32_t delta, Loc loc = Loc::current()) {
    return Shfl<T>(ir::ShflMode::kDown, a, delta, 31u, 0xFFFFFFFFu, loc);
  }
  template <ScalarTag T>
  Value<T> ShflUp(Value<T> a, uint32_t delta, Loc loc = Loc::current()) {
    return Shfl<T>(ir::ShflMode::kUp, a, delta, 0u, 0xFFFFFFFFu, loc);
  }
  template <ScalarTag T>
  Value<T> ShflIdx(Value<T> a, Src<U32> lane, Loc loc = Loc::current()) {
    return Shfl<T>(ir::ShflMode::kIdx, a, lane, 31u, 0xFFFFFFFFu, loc);
  }
  Value<U32> VoteBallot(Value<Pred> p, uint32_t member_mask = 0xFFFFFFFFu, Loc loc = Loc::current());
  Value<Pred> VoteAll(Value<Pred> p, uint32_t member_mask = 0xFFFFFFFFu, Loc loc = Loc::current());
  Value<Pred> VoteAny(Value<Pred> p, uint32_t member_mask = 0xFFFFFFFFu, Loc loc = Loc::current());
  Value<U32> ActiveMask(Loc loc = Loc::current());
  // redux.sync: every lane of `member_mask` gets the reduction of the
  // members' values of `a` (CUDA's __reduce_*_sync; sm_80). kAdd, kMin and
  // kMax on U32 or S32 (min/max compare as the type says; add wraps); kAnd,
  // kOr and kXor on the bits (redux.sync.and.b32 ...). Every lane of the
  // mask must execute it with the same mask.
  template <ScalarTag T>
    requires(std::is_same_v<T, U32> || std::is_same_v<T, S32>)
  Value<T> Redux(ir::AtomOp op, Value<T> a, Src<U32> member_mask = 0xFFFFFFFFu, Loc loc = Loc::current()) {
    const bool bits = op == ir::AtomOp::kAnd || op == ir::AtomOp::kOr || op == ir::AtomOp::kXor;
    ir::Modifiers m = Mods(bits ? ir::ScalarType::kB32 : T::kType);
    m.atom = op;
    return Value<T>(Emit(ir::Opcode::kRedux, m, T::kType, {a.reg, member_mask.operand()}, loc));
  }
  // match.any.sync.b32/.b64: the mask of the members of `member_mask` whose
  // `a` equals this lane's (sm_70). MatchAll: match.all.sync with its
  // predicate: {the whole member mask if every member holds the same value,
  // else 0; whether they do}.
  template <ScalarTag T>
    requires(ir::TypeBits(T::kType) == 32 || ir::TypeBits(T::kType) == 64) && (!std::is_floating_point_v<typename T::CType>)
  Value<U32> MatchAny(Value<T> a, Src<U32> member_mask = 0xFFFFFFFFu, Loc loc = Loc::current()) {
    ir::Modifiers m = Mods(ir::TypeBits(T::kType) == 32 ? ir::ScalarType::kB32 : ir::ScalarType::kB64);
    return Value<U32>(Emit(ir::Opcode::kMatchAny, m, ir::ScalarType::kU32, {a.reg, member_mask.operand()}, loc));
  }
  template <ScalarTag T>
    requires(ir::TypeBits(T::kType) == 32 || ir::TypeBits(T::kType) == 64) && (!std::is_floating_point_v<typename T::CType>)
  std::pair<Value<U32>, Value<Pred>> MatchAll(Value<T> a, Src<U32> member_mask = 0xFFFFFFFFu,
                                              Loc loc = Loc::current()) {
    ir::Instruction inst;
    inst.op = ir::Opcode::kMatchAll;
    inst.mods = Mods(ir::TypeBits(T::kType) == 32 ? ir::ScalarType::kB32 : ir::ScalarType::kB64);
    std::pair<Value<U32>, Value<Pred>> out{Value<U32>(NewReg(ir::ScalarType::kU32)),
                                           Value<Pred>(NewReg(ir::ScalarType::kPred))};
    inst.dsts = {out.first.reg, out.second.reg};
    inst.srcs = {a.reg, member_mask.operand()};
    EmitInstruction(std::move(inst), loc);
    return out;
  }

  // ---- tensor-core fragments: warp-wide 8x8 matrix moves through shared memory
  // ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 (sm_75; N = 1, 2 or
  // 4): the warp loads N 8x8 matrices of 16-bit elements. Lane 8m + r gives,
  // in `addr`, the shared address of row r of matrix m (8 elements, 16 bytes,
  // 16-byte aligned; lanes 8N and up give none that is read). Lane l gets in
  // register m the elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of matrix m,
  // the first in the low half; with `trans`, those of its transpose. All 32
  // lanes of the warp execute it together.
  template <int N>
    requires(N == 1 || N == 2 || N == 4)
  std::array<Value<B32>, N> LdMatrix(Address addr, bool trans = false, Loc loc = Loc::current()) {
    ir::Instruction inst;
    inst.op = ir::Opcode::kLdmatrix;
    inst.mods = MatrixMods(N, trans);
    std::array<Value<B32>, N> out;
    for (Value<B32>& v : out) {
      v = Value<B32>(NewReg(ir::ScalarType::kB32));
      inst.dsts.push_back(v.reg);
    }
    inst.srcs = {addr.op};
    EmitInstruction(std::move(inst), loc);
    return out;
  }
  // stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 (sm_90): the reverse of
  // LdMatrix; lane 8m + r gives the address row r of matrix m is stored at.
  template <size_t N>
    requires(N == 1 || N == 2 || N == 4)
  void StMatrix(Address addr, const std::array<Value<B32>, N>& frags, bool trans = false, Loc loc = Loc::current()) {
    ir::Instruction inst;
    inst.op = ir::Opcode::kStmatrix;
    inst.mods = MatrixMods(static_cast<int>(N), trans);
    inst.srcs = {addr.op};
    for (const Value<B32>& v : frags) inst.srcs.push_back(v.reg);
    EmitInstruction(std::move(inst), loc);
  }

  // ---- raw PTX
  // Inserts PTX text. `{N}` stands for register N of outputs-then-inputs;
  // every register the text reads or writes must be listed (outputs are
  // defined by it, usually made with Undefined<T>()), and every listed one
  // must appear. Other braces are kept as they are.
  void RawPtx(std::string_view text, std::initializer_list<AnyValue> outputs, std::initializer_list<AnyValue> inputs,
              RawPtxOpts opts = {}, Loc loc = Loc::current());

  // ---- the generic path (no C++ types): for code generators
  // Emits `op` with modifiers `mods` and a fresh destination of `dst_type`
  // (kNone: no destination). The verifier checks everything at Finish().
  ir::Reg Emit(ir::Opcode op, const ir::Modifiers& mods, ir::ScalarType dst_type,
               std::initializer_list<ir::Operand> srcs, Loc loc = Loc::current());
  ir::Reg Emit(ir::Opcode op, const ir::Modifiers& mods, ir::ScalarType dst_type,
               std::initializer_list<ir::Reg> srcs, Loc loc = Loc::current());
  // Appends an instruction as it is (destinations must be registers of this builder).
  void EmitInstruction(ir::Instruction inst, Loc loc = Loc::current());
  ir::Reg NewReg(ir::ScalarType type, std::string hint = "", bool is_mutable = false, Loc loc = Loc::current());

 private:
  template <typename T>
  Value<T> Bin(ir::Opcode op, Value<T> a, const Src<T>& b, const FloatOpts& o, Loc loc) {
    return Value<T>(Emit(op, Mods(T::kType, o), T::kType, {ir::Operand::FromReg(a.reg), b.operand()}, loc));
  }
  template <typename T>
  Value<T> Tern(ir::Opcode op, Value<T> a, const Src<T>& b, const Src<T>& c, const FloatOpts& o, Loc loc) {
    return Value<T>(
        Emit(op, Mods(T::kType, o), T::kType, {ir::Operand::FromReg(a.reg), b.operand(), c.operand()}, loc));
  }
  template <typename T>
  Value<T> Un(ir::Opcode op, Value<T> a, const FloatOpts& o, Loc loc) {
    return Value<T>(Emit(op, Mods(T::kType, o), T::kType, {ir::Operand::FromReg(a.reg)}, loc));
  }
  template <typename T>
  Value<T> Bits(ir::Opcode op, Value<T> a, const Src<T>& b, Loc loc) {
    return Value<T>(Emit(op, Mods(BitsOf(T::kType)), T::kType, {ir::Operand::FromReg(a.reg), b.operand()}, loc));
  }
  static FloatOpts Approx(FloatOpts o) {
    o.mode = ir::Mode::kApprox;
    return o;
  }
  // Modifiers for an instruction of `type` with float options; fills the
  // defaults PTX requires (mul.lo for integers, rn for fma, ...).
  static ir::Modifiers Mods(ir::ScalarType type, const FloatOpts& o = {});
  // .xN{.trans}.shared.b16 of ldmatrix/stmatrix.
  static ir::Modifiers MatrixMods(int n, bool trans) {
    ir::Modifiers m{.type = ir::ScalarType::kB16, .space = ir::StateSpace::kShared};
    m.vec = static_cast<uint8_t>(n);  // {num}: .x1/.x2/.x4
    m.variant = trans ? 1 : 0;        // {variant:trans}
    return m;
  }
  // The bit type for logic ops (pred stays pred).
  static ir::ScalarType BitsOf(ir::ScalarType t);
  // The type mov/selp use for a value type (f16 -> b16, u8 -> u16).
  static ir::ScalarType MovType(ir::ScalarType t);

  uint32_t DeclareParam(std::string name, ir::ScalarType type, Loc loc);
  ir::Reg LoadParamReg(uint32_t index, ir::ScalarType type, Loc loc);
  uint32_t DeclareVariable(std::string name, ir::StateSpace space, ir::ScalarType elem, uint32_t count,
                           uint32_t align, bool is_extern, Loc loc);
  ir::Reg Mov(ir::ScalarType type, const ir::Operand& src, Loc loc);
  void MovInto(ir::Reg dst, ir::ScalarType type, const ir::Operand& src, Loc loc);
  void SetHint(ir::Reg r, std::string hint);
  ir::Reg CvtReg(ir::ScalarType to, ir::ScalarType from, ir::Reg a, const CvtOpts& o, Loc loc);
  ir::Reg BitcastReg(ir::ScalarType to, ir::ScalarType from, ir::Reg a, Loc loc);
  ir::Reg CvtaSymbol(uint32_t variable, ir::StateSpace space, Loc loc);
  ir::Reg ElementAddrReg(ir::Reg base, ir::Reg index, bool index64, int elem_size, Loc loc);
  void LoadRegs(ir::StateSpace space, ir::ScalarType type, const Address& addr, const MemOpts& o,
                std::span<const ir::Reg> dsts, Loc loc);
  void StoreOps(ir::StateSpace space, ir::ScalarType type, const Address& addr, const MemOpts& o,
                std::span<const ir::Operand> values, Loc loc);
  ir::Reg AtomicOp(bool with_result, ir::AtomOp op, ir::StateSpace space, ir::ScalarType type, const Address& addr,
                   const ir::Operand& b, const ir::Operand* c, const AtomOpts& o, Loc loc);
  void GuardedBra(Value<Pred> p, bool negated, ir::Label target, Loc loc);
  ir::Reg EmitSpan(ir::Opcode op, const ir::Modifiers& mods, ir::ScalarType dst_type,
                   std::span<const ir::Operand> srcs, Loc loc);
  // Checks `inst` and moves it into the body (a reference: no copy of the
  // instruction made to pass it).
  void Append(ir::Instruction&& inst, Loc loc);
  // f16/bf16 immediates cannot be operands in PTX: move them to a register.
  ir::Operand Materialize(const ir::Operand& op, Loc loc);
  // Checks that `r` was made by this builder and turns its id into the
  // kernel's register index; OwnRegs does so for every register `inst` names.
  bool OwnReg(ir::Reg& r, std::string_view what, Loc loc);
  bool OwnRegs(ir::Instruction& inst, Loc loc);
  void Fail(Loc loc, std::string message);
  bool ok() const { return error_.ok(); }

  // Registers this builder hands out carry its tag in the id's top 8 bits, so
  // that a Value of another builder is refused instead of naming whichever
  // register has the same number here; Append() strips it.
  uint32_t tag_;
  ir::Kernel kernel_;
  absl::Status error_;
  // Whether each label is bound: bit id % 64 of word id / 64, a word for
  // every 64 labels made; the first word without an allocation.
  absl::InlinedVector<uint64_t, 1> label_bound_;
  bool finished_ = false;
};

}  // namespace ptxforge

#endif  // PTXFORGE_BUILDER_KERNEL_BUILDER_H_
