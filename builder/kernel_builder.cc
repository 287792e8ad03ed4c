// KernelBuilder: records instructions, keeps the first error, verifies at Finish().
#include "builder/kernel_builder.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cassert>
#include <cctype>
#include <cstring>

#include "ir/canonical_order.h"
#include "ir/enum_ranges.h"
#include "ir/format.h"
#include "ir/strings.h"
#include "ir/verify.h"

namespace ptxforge {

using ir::Opcode;
using ir::Operand;
using ir::Reg;
using ir::ScalarType;

namespace {

// Appended to messages about references that are not of this kernel.
constexpr std::string_view kForeignHint =
    " (a value, label or variable from another builder, or default-constructed?)";

// The type ld/st/ld.param use for a value type (f16/bf16 move as b16), and
// the type mov/selp use (also u8 -> u16): tables by the type's byte (any
// value, so a type out of range maps to itself as the switches they
// replaced did) instead of a switch's branches.
using TypeMap = std::array<ScalarType, 256>;
constexpr TypeMap kMemTypes = [] {
  TypeMap map{};
  for (int t = 0; t < 256; ++t) map[t] = static_cast<ScalarType>(t);
  map[static_cast<int>(ScalarType::kF16)] = map[static_cast<int>(ScalarType::kBF16)] = ScalarType::kB16;
  map[static_cast<int>(ScalarType::kF16x2)] = map[static_cast<int>(ScalarType::kBF16x2)] = ScalarType::kB32;
  return map;
}();
constexpr TypeMap kMovTypes = [] {
  TypeMap map = kMemTypes;
  map[static_cast<int>(ScalarType::kU8)] = ScalarType::kU16;
  map[static_cast<int>(ScalarType::kS8)] = ScalarType::kS16;
  map[static_cast<int>(ScalarType::kB8)] = ScalarType::kB16;
  return map;
}();
static_assert(sizeof(ScalarType) == 1);

ScalarType MemType(ScalarType t) { return kMemTypes[static_cast<uint8_t>(t)]; }

// Rounding/mode defaults PTX requires where the caller gave none, by
// opcode: mul/mad.lo for integers, rn for fma, and for float div, sqrt and
// rcp without a mode.
enum DefaultRule : uint8_t { kNoDefault, kIntegerLo, kRn, kFloatRn };
constexpr std::array<uint8_t, ir::kNumOpcodes> kDefaultRules = [] {
  std::array<uint8_t, ir::kNumOpcodes> rules{};
  rules[static_cast<size_t>(Opcode::kMul)] = kIntegerLo;
  rules[static_cast<size_t>(Opcode::kMad)] = kIntegerLo;
  rules[static_cast<size_t>(Opcode::kFma)] = kRn;
  rules[static_cast<size_t>(Opcode::kDiv)] = kFloatRn;
  rules[static_cast<size_t>(Opcode::kSqrt)] = kFloatRn;
  rules[static_cast<size_t>(Opcode::kRcp)] = kFloatRn;
  return rules;
}();

// Fills the defaults (`op` and m's enums are in range): arithmetic, not a
// switch and branches on the modifiers.
void FillDefaults(Opcode op, ir::Modifiers& m) {
  const unsigned rule = kDefaultRules[static_cast<size_t>(op)];
  const bool no_mode = m.mode == ir::Mode::kNone;
  const bool lo = (rule == kIntegerLo) & ir::IsInteger(m.type) & no_mode;
  const bool rn = ((rule == kRn) | ((rule == kFloatRn) & ir::IsFloat(m.type) & no_mode)) &
                  (m.rounding == ir::Rounding::kNone);
  // lo and rn each hold only where the field is kNone (0): or-ing sets it
  // without a branch (gcc made the selects branches).
  m.mode = static_cast<ir::Mode>(static_cast<unsigned>(m.mode) | lo * static_cast<unsigned>(ir::Mode::kLo));
  m.rounding =
      static_cast<ir::Rounding>(static_cast<unsigned>(m.rounding) | rn * static_cast<unsigned>(ir::Rounding::kRn));
}

// Builder tags 1..254, handed out in turn: two builders made one after the
// other never share one. The count starts at 254 (the first tag is 1, as
// from 0): with a nonzero initializer it lives in the program's initialized
// data, which the loader has written, not in a page of zeroed data (.bss)
// that the first builder of a process would fault in (about 1.5 us).
uint32_t NextBuilderTag() {
  static std::atomic<uint32_t> counter{254};
  return 1 + counter.fetch_add(1, std::memory_order_relaxed) % 254;
}

// a == b, with the lengths and first letters compared before memcmp is
// called: declared names seldom share both.
bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || (a[0] == b[0] && std::memcmp(a.data(), b.data(), a.size()) == 0));
}

constexpr size_t kInitialCapacity = 32;

constexpr uint32_t kTagShift = 24;
constexpr uint32_t kIndexMask = (uint32_t{1} << kTagShift) - 1;

// Append's reference checks (OwnRegs, then FindBadReference) in one walk
// with no branch per operand, for the usual case where both pass: xors
// every register id `inst` names (its destinations, its guard when it has
// one, the sources that read a register) with `tag_bits`, the builder's tag
// in the top byte, and returns whether every reference is then in range.
// An id of this builder becomes its register index, as OwnReg makes it:
// with at most kIndexMask + 1 registers (NewReg refuses more), id ^
// tag_bits is below the count exactly when the id's top byte is the tag
// and its index is below the count (the invalid id's top byte 0xFF is no
// tag). The other sources' ids are compared with the count of what their
// kind (an address: its base) names, as FindBadReference does; an empty
// operand, and a kind or base out of range, fit no limit. False: some
// check may fail; xoring again with the same bits undoes the walk, and the
// original checks then find and word the error (or find none where only a
// kind or base is out of range, which neither checks).
bool FlipAndCheckReferences(const ir::Kernel& k, uint32_t tag_bits, ir::Instruction& inst) {
  assert(k.regs.size() <= size_t{kIndexMask} + 1);
  const uint64_t nregs = k.regs.size();
  const ir::ReferenceLimits limits(k);
  const bool guarded = inst.guard.valid();
  bool ok = !guarded | ((inst.guard.id ^ tag_bits) < nregs);
  inst.guard.id ^= tag_bits & (0u - guarded);
  for (ir::Reg& d : inst.dsts) {
    d.id ^= tag_bits;
    ok &= d.id < nregs;
  }
  for (Operand& op : inst.srcs) {
    const unsigned code = ir::ReferenceLimits::Code(op);
    op.id ^= tag_bits & (0u - ((ir::ReferenceLimits::kReadsRegCodes >> code) & 1u));
    ok &= op.id < limits.limit(code);
  }
  ok &= !((inst.op == Opcode::kRaw) & (inst.raw_index >= k.raw_ptx.size()));
  return ok;
}

// A new register of `type` when NewReg's checks pass (a type in range that
// a register may have, fewer than kIndexMask + 1 registers so far), as
// NewReg makes it; else Reg{}, and NewReg words the error. The checks are
// one test.
Reg AddRegIfValid(ir::Kernel& k, uint32_t tag, ScalarType type, bool is_mutable, std::string_view hint) {
  // By the type's byte: a type in range that a register may have.
  static constexpr std::array<bool, 256> kRegisterTypes = [] {
    std::array<bool, 256> ok{};
    for (int t = 0; t < ir::kNumScalarTypes; ++t) ok[t] = !ir::IsInstructionOnlyType(static_cast<ScalarType>(t));
    return ok;
  }();
  // One compare for both (gcc made a branch of each test): a refused type
  // sets a bit far above kIndexMask.
  const uint64_t refused = uint64_t{!kRegisterTypes[static_cast<uint8_t>(type)]} << 32;
  if ((k.regs.size() | refused) > kIndexMask) [[unlikely]] return Reg{};
  // Kernel::AddReg, but without a call to intern the empty hint (id 0).
  k.regs.push_back(ir::RegInfo{type, is_mutable, hint.empty() ? 0 : k.InternName(hint)});
  return Reg{static_cast<uint32_t>(k.regs.size() - 1) | tag << kTagShift};
}

// Appends `inst` at `loc` to the body when its references pass
// (FlipAndCheckReferences); else leaves it as it was and returns false.
bool AppendIfReferencesFine(ir::Kernel& k, uint32_t tag_bits, ir::Instruction& inst, Loc loc) {
  if (!FlipAndCheckReferences(k, tag_bits, inst)) [[unlikely]] {
    FlipAndCheckReferences(k, tag_bits, inst);  // undone
    return false;
  }
  inst.loc = loc;
  k.body.push_back(std::move(inst));
  return true;
}

}  // namespace

KernelBuilder::KernelBuilder(std::string name, ir::Target target, Loc loc) : tag_(NextBuilderTag()) {
  // Room for a small kernel from the start (vector_add has 23 instructions
  // and 21 registers): the body and the register table then grow without
  // five reallocations of 1, 2, 4, 8 and 16 elements each.
  kernel_.body.reserve(kInitialCapacity);
  kernel_.regs.reserve(kInitialCapacity);
  kernel_.name = std::move(name);
  kernel_.target = target;
  if (!ir::IsIdentifier(kernel_.name)) [[unlikely]] {
    Fail(loc, StrCat("kernel name '", kernel_.name,
                           "' is not a PTX identifier (a letter or '_', then letters, digits or '_')"));
  }
  if (!ir::IsValid(target)) [[unlikely]] Fail(loc, StrCat("the target: ", ir::OutOfRange("Target", target)));
}

void KernelBuilder::Fail(Loc loc, std::string message) {
  if (!error_.ok()) return;
  error_ = absl::InvalidArgumentError(StrCat("kernel ", kernel_.name, ": ", ir::FormatLoc(loc), ": ", message));
}

absl::StatusOr<ir::Kernel> KernelBuilder::Finish() {
  if (finished_) return absl::FailedPreconditionError(StrCat("kernel ", kernel_.name, ": Finish() called twice"));
  finished_ = true;
  if (!ok()) return error_;
  bool ends = false;
  if (!kernel_.body.empty()) {
    const ir::Instruction& last = kernel_.body.back();
    ends = !last.guarded() && (last.info().has(ir::kTerminator) || last.op == Opcode::kBra);
  }
  if (!ends) {
    const Loc loc = kernel_.body.empty() ? Loc::current() : kernel_.body.back().loc.loc();
    ir::Instruction& ret = kernel_.body.emplace_back();
    ret.op = Opcode::kRet;
    ret.loc = loc;
  }
  kernel_.body.shrink_to_fit();  // the body's size is final: under 32 instructions of room left over
  absl::Status verified = ir::VerifyKernel(kernel_);
  if (!verified.ok()) return verified;
  ir::CanonicalizeOrder(kernel_);
  // Reordering independent instructions keeps a verified kernel valid (debug
  // builds check it); the mark spares the pipeline's verify pass the work.
  assert(ir::VerifyKernel(kernel_).ok());
  ir::MarkVerified(kernel_);
  ir::Kernel result = std::move(kernel_);
  kernel_.name = result.name;  // later errors still name the kernel
  return result;
}

// ---- declarations

namespace {
constexpr std::string_view kBothBounds =
    ".maxntid and .reqntid cannot both be set (ptxas refuses the pair); .reqntid alone also bounds the block size";
}  // namespace

uint32_t KernelBuilder::DeclareParam(std::string name, ScalarType type, Loc loc) {
  if (!ir::IsIdentifier(name)) [[unlikely]] {
    Fail(loc, StrCat("param name '", name, "' is not a PTX identifier"));
  } else if (type == ScalarType::kPred) [[unlikely]] {
    Fail(loc, StrCat("param '", name, "' cannot be a predicate; pass a u32 and compare it"));
  }
  for (const ir::Param& p : kernel_.params) {
    if (SameName(p.name, name)) [[unlikely]] Fail(loc, StrCat("param '", name, "' is declared twice"));
  }
  for (const ir::Variable& v : kernel_.variables) {
    if (SameName(v.name, name)) [[unlikely]] {
      Fail(loc, StrCat("param '", name, "' has the name of a ", ir::StateSpaceName(v.space), " variable"));
    }
  }
  // Room for 8 at the first: growing 1, 2, 4 was three allocations for a
  // four-param kernel.
  if (kernel_.params.capacity() == 0) kernel_.params.reserve(8);
  kernel_.params.push_back(ir::Param{std::move(name), type});  // braces: clang 14 has no aggregate ( )
  return static_cast<uint32_t>(kernel_.params.size() - 1);
}

Reg KernelBuilder::LoadParamReg(uint32_t index, ScalarType type, Loc loc) {
  // The param's name as the hint, without a copy of the string.
  Reg r = AddRegIfValid(kernel_, tag_, type, false, kernel_.params[index].name);
  if (!r.valid()) [[unlikely]] r = NewReg(type, kernel_.params[index].name, false);
  ir::Instruction inst;
  inst.op = Opcode::kLd;
  inst.mods.space = ir::StateSpace::kParam;
  inst.mods.type = MemType(type);
  inst.dsts.push_back(r);
  inst.srcs.push_back(Operand::AddrParam(index));
  Append(std::move(inst), loc);
  return r;
}

uint32_t KernelBuilder::DeclareVariable(std::string name, ir::StateSpace space, ScalarType elem, uint32_t count,
                                        uint32_t align, bool is_extern, Loc loc) {
  std::string_view space_name = ir::StateSpaceName(space);
  if (!ir::IsIdentifier(name)) Fail(loc, StrCat(space_name, " variable name '", name, "' is not a PTX identifier"));
  if (elem == ScalarType::kPred) Fail(loc, StrCat(space_name, " variable '", name, "' cannot hold predicates"));
  if (!is_extern && count == 0) Fail(loc, StrCat(space_name, " variable '", name, "' has 0 elements"));
  if (align == 0) align = static_cast<uint32_t>(std::max(ir::TypeSize(elem), 1));
  if ((align & (align - 1)) != 0) Fail(loc, StrCat(space_name, " variable '", name, "': alignment ", align, " is not a power of two"));
  for (const ir::Variable& v : kernel_.variables) {
    if (v.name == name) Fail(loc, StrCat(space_name, " variable '", name, "' is declared twice"));
    if (is_extern && v.is_extern) {
      Fail(loc, StrCat("dynamic shared memory is declared twice ('", v.name, "' and '", name, "')"));
    }
  }
  for (const ir::Param& p : kernel_.params) {
    if (p.name == name) Fail(loc, StrCat(space_name, " variable '", name, "' has the name of a param"));
  }
  kernel_.variables.push_back(ir::Variable{std::move(name), space, elem, count, align, is_extern});
  return static_cast<uint32_t>(kernel_.variables.size() - 1);
}

void KernelBuilder::SetMaxThreads(uint32_t x, uint32_t y, uint32_t z, Loc loc) {
  if (kernel_.bounds.reqntid[0] != 0) Fail(loc, std::string(kBothBounds));
  if (x == 0 || y == 0 || z == 0) Fail(loc, ".maxntid dimensions must be positive");
  if (uint64_t{x} * y * z > 1024) Fail(loc, StrCat(".maxntid ", x, "x", y, "x", z, " exceeds 1024 threads"));
  kernel_.bounds.maxntid = {x, y, z};
}

void KernelBuilder::SetRequiredThreads(uint32_t x, uint32_t y, uint32_t z, Loc loc) {
  if (kernel_.bounds.maxntid[0] != 0) Fail(loc, std::string(kBothBounds));
  if (x == 0 || y == 0 || z == 0) Fail(loc, ".reqntid dimensions must be positive");
  if (uint64_t{x} * y * z > 1024) Fail(loc, StrCat(".reqntid ", x, "x", y, "x", z, " exceeds 1024 threads"));
  kernel_.bounds.reqntid = {x, y, z};
}

void KernelBuilder::SetMinBlocksPerSM(uint32_t n, Loc loc) {
  if (n == 0) Fail(loc, ".minnctapersm must be positive");
  kernel_.bounds.minnctapersm = n;
}

void KernelBuilder::SetMaxRegisters(uint32_t n, Loc loc) {
  if (n == 0 || n > 255) Fail(loc, StrCat(".maxnreg ", n, " is not between 1 and 255"));
  kernel_.bounds.maxnreg = n;
}

// ---- registers

Reg KernelBuilder::NewReg(ScalarType type, std::string hint, bool is_mutable, Loc loc) {
  if (Reg r = AddRegIfValid(kernel_, tag_, type, is_mutable, hint); r.valid()) [[likely]] return r;
  if (!ir::IsValid(type)) {
    Fail(loc, StrCat("a register's type: ", ir::OutOfRange("ScalarType", type)));
    return Reg{};
  }
  if (ir::IsInstructionOnlyType(type)) {
    Fail(loc, StrCat("a register cannot have type ", ir::TypeName(type),
                     ": only an instruction can name it (its data lives in b32 or b16 registers)"));
    return Reg{};
  }
  if (kernel_.regs.size() > kIndexMask) {
    Fail(loc, StrCat("more than ", kIndexMask + 1, " registers"));
    return Reg{};
  }
  // Not reached while AddRegIfValid agrees with the checks above (builder_test
  // checks every type); if it did not, the register is made as before.
  return Reg{kernel_.AddReg(type, is_mutable, hint).id | tag_ << kTagShift};
}

void KernelBuilder::SetHint(Reg r, std::string hint) {
  if ((r.id >> kTagShift) == tag_ && kernel_.valid_reg(Reg{r.id & kIndexMask})) {
    kernel_.SetHint(Reg{r.id & kIndexMask}, hint);
  }
}

ScalarType KernelBuilder::BitsOf(ScalarType t) {
  return t == ScalarType::kPred ? t : ir::BitsTypeOfSize(ir::TypeBits(t));
}

ScalarType KernelBuilder::MovType(ScalarType t) { return kMovTypes[static_cast<uint8_t>(t)]; }

ir::Modifiers KernelBuilder::Mods(ScalarType type, const FloatOpts& o) {
  ir::Modifiers m;
  m.type = type;
  m.rounding = o.rounding;
  m.mode = o.mode;
  m.ftz = o.ftz;
  m.sat = o.sat;
  return m;
}

Reg KernelBuilder::Mov(ScalarType type, const Operand& src, Loc loc) {
  Reg r = AddRegIfValid(kernel_, tag_, type, false, {});
  if (!r.valid()) [[unlikely]] r = NewReg(type, "", false);
  MovInto(r, type, src, loc);
  return r;
}

void KernelBuilder::MovInto(Reg dst, ScalarType type, const Operand& src, Loc loc) {
  ir::Instruction inst;
  inst.op = Opcode::kMov;
  inst.mods.type = MovType(type);
  inst.dsts.push_back(dst);
  Operand s = src;
  if (s.is_imm()) s.type = inst.mods.type;  // f16 bits move as a b16 immediate
  inst.srcs.push_back(s);
  Append(std::move(inst), loc);
}

Operand KernelBuilder::Materialize(const Operand& op, Loc loc) {
  if (op.is_imm() && ir::IsHalfFamily(op.type)) return Operand(Mov(op.type, op, loc));
  return op;
}

// ---- emitting

bool KernelBuilder::OwnReg(Reg& r, std::string_view what, Loc loc) {
  if (!r.valid()) {
    Fail(loc, StrCat(what, " is a default-constructed value (it names no register)"));
    return false;
  }
  if ((r.id >> kTagShift) != tag_ || !kernel_.valid_reg(Reg{r.id & kIndexMask})) {
    Fail(loc, StrCat(what, " is not a register of this builder (a value from another KernelBuilder, or an id made "
                           "by hand)"));
    return false;
  }
  r.id &= kIndexMask;
  return true;
}

bool KernelBuilder::OwnRegs(ir::Instruction& inst, Loc loc) {
  for (Reg& d : inst.dsts) {
    if (!OwnReg(d, "a destination", loc)) return false;
  }
  for (Operand& op : inst.srcs) {
    if (!op.reads_reg()) continue;
    Reg r = op.reg();
    if (!OwnReg(r, op.is_reg() ? "an operand" : "an address base", loc)) return false;
    op.id = r.id;
  }
  return !inst.guard.valid() || OwnReg(inst.guard, "a guard predicate", loc);
}

void KernelBuilder::Append(ir::Instruction&& inst, Loc loc) {
  if (finished_) [[unlikely]] {
    Fail(loc, "the builder was used after Finish()");
    return;
  }
  if (!ok()) [[unlikely]] return;
  if (!ir::EnumsValid(inst)) [[unlikely]] {
    Fail(loc, ir::InvalidEnum(inst));
    return;
  }
  // The usual case: the references pass OwnRegs and FindBadReference, tested
  // in one walk; else they find and word the error.
  if (AppendIfReferencesFine(kernel_, tag_ << kTagShift, inst, loc)) [[likely]] return;
  if (!OwnRegs(inst, loc)) return;
  if (std::optional<std::string> bad = ir::FindBadReference(kernel_, inst)) {
    std::string name;
    ir::AppendOpcode(name, inst);
    Fail(loc, StrCat(name, ": ", *bad, kForeignHint));
    return;
  }
  inst.loc = loc;
  kernel_.body.push_back(std::move(inst));
}

Reg KernelBuilder::EmitSpan(Opcode op, const ir::Modifiers& mods, ScalarType dst_type, std::span<const Operand> srcs,
                            Loc loc) {
  ir::Instruction inst;
  inst.op = op;
  inst.mods = mods;
  // One by one (absl's generic assign took more branches for a few), noting
  // whether Materialize has an f16/bf16 immediate to move.
  bool half_imm = false;
  for (const Operand& s : srcs) {
    inst.srcs.push_back(s);
    half_imm |= s.is_imm() & ir::IsHalfFamilyNoBranch(s.type);
  }
  // Everything below looks enums up in tables: refuse out-of-range ones first.
  if (!ir::EnumsValid(inst) || !ir::IsValid(dst_type)) [[unlikely]] {
    std::string bad = ir::InvalidEnum(inst);
    if (bad.empty()) bad = StrCat("the destination type: ", ir::OutOfRange("ScalarType", dst_type));
    Fail(loc, bad);
    return Reg{};
  }
  FillDefaults(op, inst.mods);
  if (half_imm) [[unlikely]] {
    for (Operand& s : inst.srcs) s = Materialize(s, loc);
  }
  Reg dst;
  if (dst_type != ScalarType::kNone) [[likely]] {
    dst = AddRegIfValid(kernel_, tag_, dst_type, false, {});
    if (!dst.valid()) [[unlikely]] dst = NewReg(dst_type, "", false, loc);
    inst.dsts.push_back(dst);
  }
  // Append, less its enum check, which passed above (FillDefaults and
  // Materialize store only values in range); Append itself when the
  // builder is finished or failed, or a reference is not fine.
  if (finished_ || !ok() || !AppendIfReferencesFine(kernel_, tag_ << kTagShift, inst, loc)) [[unlikely]] {
    Append(std::move(inst), loc);
  }
  return dst;
}

Reg KernelBuilder::Emit(Opcode op, const ir::Modifiers& mods, ScalarType dst_type, std::initializer_list<Operand> srcs,
                        Loc loc) {
  return EmitSpan(op, mods, dst_type, std::span<const Operand>(srcs.begin(), srcs.size()), loc);
}

Reg KernelBuilder::Emit(Opcode op, const ir::Modifiers& mods, ScalarType dst_type, std::initializer_list<Reg> srcs,
                        Loc loc) {
  if (srcs.size() <= 4) {  // on the stack, without InlinedVector's generic construction
    Operand ops[4];
    std::copy(srcs.begin(), srcs.end(), ops);
    return EmitSpan(op, mods, dst_type, std::span<const Operand>(ops, srcs.size()), loc);
  }
  absl::InlinedVector<Operand, 4> ops(srcs.begin(), srcs.end());
  return EmitSpan(op, mods, dst_type, ops, loc);
}

void KernelBuilder::EmitInstruction(ir::Instruction inst, Loc loc) { Append(std::move(inst), loc); }

// ---- special registers

Value<U32> KernelBuilder::Special(ir::SpecialReg r, Loc loc) {
  if (!ir::IsValid(r)) [[unlikely]] {
    Fail(loc, ir::OutOfRange("SpecialReg", r));
    return Value<U32>();
  }
  if (ir::SpecialRegType(r) != ScalarType::kU32) [[unlikely]] {
    Fail(loc, StrCat(ir::SpecialRegName(r), " is 64-bit; read it with Special64()"));
  }
  return Value<U32>(Mov(ScalarType::kU32, Operand::Special(r), loc));
}

Value<U64> KernelBuilder::Special64(ir::SpecialReg r, Loc loc) {
  if (!ir::IsValid(r)) {
    Fail(loc, ir::OutOfRange("SpecialReg", r));
    return Value<U64>();
  }
  if (ir::SpecialRegType(r) != ScalarType::kU64) {
    Fail(loc, StrCat(ir::SpecialRegName(r), " is 32-bit; read it with Special()"));
  }
  return Value<U64>(Mov(ScalarType::kU64, Operand::Special(r), loc));
}

// One read per statement: the order of function arguments is unspecified,
// and the IR must not depend on the compiler that built ptxforge.
Value<U32> KernelBuilder::GlobalThreadIdX(Loc loc) {
  Value<U32> tid = TidX(loc);
  Value<U32> ntid = NtidX(loc);
  Value<U32> ctaid = CtaidX(loc);
  return Mad(ctaid, ntid, tid, loc);
}

Value<U32> KernelBuilder::GlobalThreadIdY(Loc loc) {
  Value<U32> tid = TidY(loc);
  Value<U32> ntid = NtidY(loc);
  Value<U32> ctaid = CtaidY(loc);
  return Mad(ctaid, ntid, tid, loc);
}

// ---- conversion and addresses

Reg KernelBuilder::CvtReg(ScalarType to, ScalarType from, Reg a, const CvtOpts& o, Loc loc) {
  if (from == ScalarType::kPred && to == ScalarType::kPred) return a;
  if (from == ScalarType::kPred) {
    // p ? 1 : 0 in the destination type.
    Operand one, zero;
    if (to == ScalarType::kF32) {
      one = Operand::Imm(to, ImmBits<F32>(1.0f));
      zero = Operand::Imm(to, 0);
    } else if (to == ScalarType::kF64) {
      one = Operand::Imm(to, ImmBits<F64>(1.0));
      zero = Operand::Imm(to, 0);
    } else if (ir::IsHalfFamily(to)) {
      Fail(loc, StrCat("cvt from pred to ", ir::TypeName(to), " is not supported; convert to f32 first"));
      return Reg{};
    } else {
      one = Operand::Imm(MovType(to), 1);
      zero = Operand::Imm(MovType(to), 0);
    }
    ir::Modifiers m;
    m.type = MovType(to);
    return Emit(Opcode::kSelp, m, to, {one, zero, Operand(a)}, loc);
  }
  if (to == ScalarType::kPred) {
    ir::Modifiers m;
    m.type = from;
    m.cmp = ir::CmpOp::kNe;
    return Emit(Opcode::kSetp, m, ScalarType::kPred, {Operand(a), Operand::Imm(from, 0)}, loc);
  }
  if (to == from && o.rounding == ir::Rounding::kNone && !o.ftz && !o.sat) return a;
  ir::Modifiers m;
  m.type = to;
  m.type2 = from;
  m.rounding = o.rounding;
  m.ftz = o.ftz;
  m.sat = o.sat;
  if (m.rounding == ir::Rounding::kNone) {
    if (ir::IsFloat(from) && ir::IsInteger(to)) {
      m.rounding = ir::Rounding::kRzi;
    } else if (ir::IsInteger(from) && ir::IsFloat(to)) {
      m.rounding = ir::Rounding::kRn;
    } else if (ir::IsFloat(from) && ir::IsFloat(to) && ir::TypeBits(to) < ir::TypeBits(from)) {
      m.rounding = ir::Rounding::kRn;
    }
  }
  return Emit(Opcode::kCvt, m, to, {a}, loc);
}

Reg KernelBuilder::BitcastReg(ScalarType to, ScalarType from, Reg a, Loc loc) {
  if (to == ScalarType::kPred || from == ScalarType::kPred) {
    Fail(loc, "a predicate has no bits to reinterpret");
    return Reg{};
  }
  ir::Modifiers m;
  m.type = ir::BitsTypeOfSize(std::max(ir::TypeBits(to), 16));
  return Emit(Opcode::kMov, m, to, {a}, loc);
}

Value<U64> KernelBuilder::CvtaToGlobal(Value<U64> generic, Loc loc) {
  ir::Modifiers m;
  m.type = ScalarType::kU64;
  m.space = ir::StateSpace::kGlobal;
  m.cvta_to = true;
  return Value<U64>(Emit(Opcode::kCvta, m, ScalarType::kU64, {generic.reg}, loc));
}

Reg KernelBuilder::CvtaSymbol(uint32_t variable, ir::StateSpace space, Loc loc) {
  ir::Modifiers m;
  m.type = ScalarType::kU64;
  m.space = space;
  return Emit(Opcode::kCvta, m, ScalarType::kU64, {Operand::Symbol(variable)}, loc);
}

Reg KernelBuilder::ElementAddrReg(Reg base, Reg index, bool index64, int elem_size, Loc loc) {
  ir::Modifiers m;
  Reg offset;
  if (index64 && std::has_single_bit(static_cast<unsigned>(elem_size))) {
    // A shift, not mul.lo.u64: ptxas keeps fewer registers for it.
    m.type = ScalarType::kB64;
    offset = Emit(Opcode::kShl, m, ScalarType::kU64,
                  {Operand(index), Operand::Imm(ScalarType::kU32, std::countr_zero(static_cast<unsigned>(elem_size)))}, loc);
  } else if (index64) {
    m.type = ScalarType::kU64;
    offset = Emit(Opcode::kMul, m, ScalarType::kU64, {Operand(index), Operand::Imm(ScalarType::kU64, elem_size)}, loc);
  } else {
    m.type = ScalarType::kU32;
    m.mode = ir::Mode::kWide;
    offset = Emit(Opcode::kMul, m, ScalarType::kU64, {Operand(index), Operand::Imm(ScalarType::kU32, elem_size)}, loc);
  }
  ir::Modifiers add;
  add.type = ScalarType::kU64;
  return Emit(Opcode::kAdd, add, ScalarType::kU64, {base, offset}, loc);
}

// ---- memory

void KernelBuilder::LoadRegs(ir::StateSpace space, ScalarType type, const Address& addr, const MemOpts& o,
                             std::span<const Reg> dsts, Loc loc) {
  ir::Instruction inst;
  inst.op = Opcode::kLd;
  inst.mods.space = space;
  inst.mods.type = MemType(type);
  inst.mods.vec = static_cast<uint8_t>(dsts.size());
  inst.mods.cache = o.cache;
  inst.mods.nc = o.nc;
  for (Reg r : dsts) inst.dsts.push_back(r);
  inst.srcs.push_back(addr.op);
  Append(std::move(inst), loc);
}

void KernelBuilder::StoreOps(ir::StateSpace space, ScalarType type, const Address& addr, const MemOpts& o,
                             std::span<const Operand> values, Loc loc) {
  ir::Instruction inst;
  inst.op = Opcode::kSt;
  inst.mods.space = space;
  inst.mods.type = MemType(type);
  inst.mods.vec = static_cast<uint8_t>(values.size());
  inst.mods.cache = o.cache;
  if (o.nc) [[unlikely]] Fail(loc, ".nc applies to loads only");
  inst.srcs.push_back(addr.op);
  for (const Operand& v : values) inst.srcs.push_back(v);
  Append(std::move(inst), loc);
}

namespace {
// The instruction type of an atomic on values of `type`.
ScalarType AtomType(ir::AtomOp op, ScalarType type) {
  switch (op) {
    case ir::AtomOp::kExch:
    case ir::AtomOp::kCas:
    case ir::AtomOp::kAnd:
    case ir::AtomOp::kOr:
    case ir::AtomOp::kXor: return ir::BitsTypeOfSize(ir::TypeBits(type));
    default: return type;
  }
}
}  // namespace

// atom (with_result) or red: the same modifiers, atom also defines the old value.
Reg KernelBuilder::AtomicOp(bool with_result, ir::AtomOp op, ir::StateSpace space, ScalarType type, const Address& addr,
                            const Operand& b, const Operand* c, const AtomOpts& o, Loc loc) {
  ir::Instruction inst;
  inst.op = with_result ? Opcode::kAtom : Opcode::kRed;
  inst.mods.space = space;
  inst.mods.atom = op;
  inst.mods.type = AtomType(op, type);
  inst.mods.scope = o.scope;
  inst.mods.sem = o.sem;
  inst.mods.noftz = op == ir::AtomOp::kAdd && ir::IsHalfFamily(type);
  Reg dst;
  if (with_result) {
    dst = NewReg(type, "", false);
    inst.dsts.push_back(dst);
  }
  inst.srcs.push_back(addr.op);
  inst.srcs.push_back(Materialize(b, loc));
  if (c != nullptr) inst.srcs.push_back(Materialize(*c, loc));
  Append(std::move(inst), loc);
  return dst;
}

// ---- control flow

ir::Label KernelBuilder::NewLabel(std::string hint) {
  if (kernel_.labels.size() % 64 == 0) label_bound_.push_back(0);
  return kernel_.AddLabel(hint);
}

void KernelBuilder::Bind(ir::Label label, Loc loc) {
  if (label.id >= kernel_.labels.size()) [[unlikely]] {
    Fail(loc, "Bind() of a label that is not of this kernel");
    return;
  }
  uint64_t& bound = label_bound_[label.id / 64];
  const uint64_t bit = uint64_t{1} << (label.id % 64);
  if ((bound & bit) != 0) [[unlikely]] {
    const std::string_view hint = kernel_.hint(label);
    Fail(loc, StrCat("label ", label.id, hint.empty() ? "" : StrCat(" (", hint, ")"), " is bound twice"));
    return;
  }
  bound |= bit;
  ir::Instruction inst;
  inst.op = Opcode::kLabel;
  inst.srcs.push_back(Operand::FromLabel(label));
  Append(std::move(inst), loc);
}

void KernelBuilder::Bra(ir::Label target, Loc loc) {
  ir::Instruction inst;
  inst.op = Opcode::kBra;
  inst.srcs.push_back(Operand::FromLabel(target));
  Append(std::move(inst), loc);
}

void KernelBuilder::GuardedBra(Value<Pred> p, bool negated, ir::Label target, Loc loc) {
  // An invalid register as the guard would make the branch unconditional.
  // (A register of this builder passes OwnReg: id ^ tag bits is below the
  // count, as FlipAndCheckReferences tests it; OwnReg words the others.)
  const bool own = (p.reg.id ^ (tag_ << kTagShift)) < kernel_.regs.size();
  if (Reg guard = p.reg; !own && !OwnReg(guard, "a guard predicate", loc)) [[unlikely]] return;
  ir::Instruction inst;
  inst.op = Opcode::kBra;
  inst.srcs.push_back(Operand::FromLabel(target));
  inst.guard = p.reg;
  inst.guard_negated = negated;
  Append(std::move(inst), loc);
}

void KernelBuilder::BraIf(Value<Pred> p, ir::Label target, Loc loc) { GuardedBra(p, false, target, loc); }

void KernelBuilder::BraIfNot(Value<Pred> p, ir::Label target, Loc loc) { GuardedBra(p, true, target, loc); }

void KernelBuilder::Ret(Loc loc) {
  ir::Instruction inst;
  inst.op = Opcode::kRet;
  Append(std::move(inst), loc);
}

void KernelBuilder::Exit(Loc loc) {
  ir::Instruction inst;
  inst.op = Opcode::kExit;
  Append(std::move(inst), loc);
}

// ---- synchronisation and warp operations

void KernelBuilder::BarSync(uint32_t barrier, Loc loc) {
  if (barrier > 15) Fail(loc, StrCat("barrier ", barrier, " is out of range (0..15)"));
  Emit(Opcode::kBarSync, ir::Modifiers{}, ScalarType::kNone, {Operand::Imm(ScalarType::kU32, barrier)}, loc);
}

void KernelBuilder::BarSync(uint32_t barrier, uint32_t thread_count, Loc loc) {
  if (barrier > 15) Fail(loc, StrCat("barrier ", barrier, " is out of range (0..15)"));
  if (thread_count == 0 || thread_count % 32 != 0) {
    Fail(loc, StrCat("bar.sync thread count ", thread_count, " must be a positive multiple of 32"));
  }
  Emit(Opcode::kBarSync, ir::Modifiers{}, ScalarType::kNone,
       {Operand::Imm(ScalarType::kU32, barrier), Operand::Imm(ScalarType::kU32, thread_count)}, loc);
}

void KernelBuilder::Membar(ir::Scope scope, Loc loc) {
  if (scope == ir::Scope::kNone) Fail(loc, "membar needs a scope (cta, gpu or sys)");
  ir::Modifiers m;
  m.scope = scope;
  Emit(Opcode::kMembar, m, ScalarType::kNone, std::initializer_list<Operand>{}, loc);
}

void KernelBuilder::BarArrive(uint32_t barrier, uint32_t thread_count, Loc loc) {
  if (barrier > 15) Fail(loc, StrCat("barrier ", barrier, " is out of range (0..15)"));
  if (thread_count == 0 || thread_count % 32 != 0) {
    Fail(loc, StrCat("bar.arrive thread count ", thread_count, " must be a positive multiple of 32"));
  }
  Emit(Opcode::kBarArrive, ir::Modifiers{}, ScalarType::kNone,
       {Operand::Imm(ScalarType::kU32, barrier), Operand::Imm(ScalarType::kU32, thread_count)}, loc);
}

void KernelBuilder::Fence(FenceSem sem, ir::Scope scope, Loc loc) {
  if (scope == ir::Scope::kNone) Fail(loc, "fence needs a scope (cta, gpu or sys)");
  ir::Modifiers m;
  m.scope = scope;
  m.variant = static_cast<uint8_t>(sem);
  Emit(Opcode::kFence, m, ScalarType::kNone, std::initializer_list<Operand>{}, loc);
}

void KernelBuilder::CpAsync(Address shared_dst, Address global_src, uint32_t cp_size, std::optional<Src<U32>> src_size,
                            CpAsyncCache cache, Loc loc) {
  if (cp_size != 4 && cp_size != 8 && cp_size != 16) {
    Fail(loc, StrCat("cp.async cp-size ", cp_size, " is not 4, 8 or 16"));
  } else if (cache == CpAsyncCache::kCg && cp_size != 16) {
    Fail(loc, StrCat("cp.async.cg copies 16 bytes, not ", cp_size, " (.ca copies 4, 8 or 16)"));
  } else if (src_size && src_size->operand().is_imm() && src_size->operand().bits() > cp_size) {
    Fail(loc, StrCat("cp.async src-size ", src_size->operand().bits(), " is larger than the cp-size ", cp_size));
  }
  ir::Modifiers m;
  m.cache = cache == CpAsyncCache::kCg ? ir::CacheOp::kCg : ir::CacheOp::kCa;
  absl::InlinedVector<Operand, 4> srcs = {shared_dst.op, global_src.op, Operand::Imm(ScalarType::kU32, cp_size)};
  if (src_size) srcs.push_back(src_size->operand());
  EmitSpan(Opcode::kCpAsync, m, ScalarType::kNone, srcs, loc);
}

void KernelBuilder::CpAsyncCommitGroup(Loc loc) {
  Emit(Opcode::kCpAsyncCommit, ir::Modifiers{}, ScalarType::kNone, std::initializer_list<Operand>{}, loc);
}

void KernelBuilder::CpAsyncWaitGroup(uint32_t n, Loc loc) {
  Emit(Opcode::kCpAsyncWait, ir::Modifiers{}, ScalarType::kNone, {Operand::Imm(ScalarType::kU32, n)}, loc);
}

void KernelBuilder::NoUnroll(Loc loc) {
  if (kernel_.body.empty() || kernel_.body.back().op != Opcode::kLabel) {
    Fail(loc, "NoUnroll() must come right after Bind() of a loop header's label");
    return;
  }
  Emit(Opcode::kPragmaNoUnroll, ir::Modifiers{}, ScalarType::kNone, std::initializer_list<Operand>{}, loc);
}

void KernelBuilder::CpAsyncWaitAll(Loc loc) {
  Emit(Opcode::kCpAsyncWaitAll, ir::Modifiers{}, ScalarType::kNone, std::initializer_list<Operand>{}, loc);
}

void KernelBuilder::SyncWarp(uint32_t member_mask, Loc loc) {
  if (member_mask == 0) Fail(loc, "bar.warp.sync needs a non-empty member mask");
  Emit(Opcode::kBarWarpSync, ir::Modifiers{}, ScalarType::kNone, {Operand::Imm(ScalarType::kU32, member_mask)}, loc);
}

Value<U32> KernelBuilder::VoteBallot(Value<Pred> p, uint32_t member_mask, Loc loc) {
  ir::Modifiers m;
  m.vote = ir::VoteMode::kBallot;
  m.type = ScalarType::kB32;
  return Value<U32>(Emit(Opcode::kVote, m, ScalarType::kU32, {Operand(p.reg), Operand::Imm(ScalarType::kB32, member_mask)}, loc));
}

Value<Pred> KernelBuilder::VoteAll(Value<Pred> p, uint32_t member_mask, Loc loc) {
  ir::Modifiers m;
  m.vote = ir::VoteMode::kAll;
  m.type = ScalarType::kPred;
  return Value<Pred>(Emit(Opcode::kVote, m, ScalarType::kPred, {Operand(p.reg), Operand::Imm(ScalarType::kB32, member_mask)}, loc));
}

Value<Pred> KernelBuilder::VoteAny(Value<Pred> p, uint32_t member_mask, Loc loc) {
  ir::Modifiers m;
  m.vote = ir::VoteMode::kAny;
  m.type = ScalarType::kPred;
  return Value<Pred>(Emit(Opcode::kVote, m, ScalarType::kPred, {Operand(p.reg), Operand::Imm(ScalarType::kB32, member_mask)}, loc));
}

Value<U32> KernelBuilder::ActiveMask(Loc loc) {
  ir::Modifiers m;
  m.type = ScalarType::kB32;
  return Value<U32>(Emit(Opcode::kActiveMask, m, ScalarType::kU32, std::initializer_list<Operand>{}, loc));
}

// ---- raw PTX

void KernelBuilder::RawPtx(std::string_view text, std::initializer_list<AnyValue> outputs,
                           std::initializer_list<AnyValue> inputs, RawPtxOpts opts, Loc loc) {
  const size_t n = outputs.size() + inputs.size();
  std::vector<bool> used(n, false);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    size_t j = i + 1;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i + 1 || j >= text.size() || text[j] != '}') continue;  // a literal brace
    // At most 9 digits are read as a number: more name no declared register.
    std::string_view digits = text.substr(i + 1, j - i - 1);
    size_t index = SIZE_MAX;
    if (digits.size() <= 9) {
      index = 0;
      for (char c : digits) index = index * 10 + static_cast<size_t>(c - '0');
    }
    if (index >= n) {
      std::string shown = digits.size() > 24 ? StrCat(digits.substr(0, 24), "...") : std::string(digits);
      Fail(loc, StrCat("raw PTX refers to {", shown, "} but declares only ", n, " registers (",
                             outputs.size(), " outputs, ", inputs.size(), " inputs)"));
      return;
    }
    used[index] = true;
    i = j;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!used[i]) {
      Fail(loc, StrCat("raw PTX declares register {", i, "} but its text does not use it"));
      return;
    }
  }
  // Registers must be named through placeholders: a literal %r3 would refer to
  // whatever the printer numbered 3.
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '%') continue;
    size_t j = i + 1;
    while (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) ++j;
    std::string_view prefix = text.substr(i + 1, j - i - 1);
    bool is_reg_prefix = prefix == "r" || prefix == "rd" || prefix == "rs" || prefix == "f" || prefix == "fd" || prefix == "p";
    if (is_reg_prefix && j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      Fail(loc, StrCat("raw PTX names register '", text.substr(i, j - i + 1),
                             "' directly; pass it as an input or output and write {N}"));
      return;
    }
  }
  ir::Instruction inst;
  inst.op = Opcode::kRaw;
  for (const AnyValue& v : outputs) inst.dsts.push_back(v.reg);
  for (const AnyValue& v : inputs) inst.srcs.push_back(Operand(v.reg));
  inst.raw_index = static_cast<uint32_t>(kernel_.raw_ptx.size());
  kernel_.raw_ptx.push_back(
      ir::RawPtxBlock{std::string(text), ir::TargetRequirement{opts.min_sm, false, ir::PtxVersion{opts.min_ptx}}});
  Append(std::move(inst), loc);
}

}  // namespace ptxforge
