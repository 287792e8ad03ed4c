// Instructions of the IR: registers, labels, operands, modifiers.
#ifndef PTXFORGE_IR_INSTRUCTION_H_
#define PTXFORGE_IR_INSTRUCTION_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "ir/opcode.h"
#include "ir/source_loc.h"
#include "ir/types.h"

namespace ptxforge::ir {

// A virtual register: an index into Kernel::regs.
struct Reg {
  static constexpr uint32_t kInvalidId = std::numeric_limits<uint32_t>::max();
  uint32_t id = kInvalidId;
  bool valid() const { return id != kInvalidId; }
  friend bool operator==(Reg, Reg) = default;
};

// A label: an index into Kernel::labels, bound by a kLabel pseudo-instruction.
struct Label {
  static constexpr uint32_t kInvalidId = std::numeric_limits<uint32_t>::max();
  uint32_t id = kInvalidId;
  bool valid() const { return id != kInvalidId; }
  friend bool operator==(Label, Label) = default;
};

enum class SpecialReg : uint8_t {
  kTidX, kTidY, kTidZ,
  kNtidX, kNtidY, kNtidZ,
  kCtaidX, kCtaidY, kCtaidZ,
  kNctaidX, kNctaidY, kNctaidZ,
  kLaneId, kWarpId, kNWarpId, kSmId, kNSmId,
  kLanemaskEq, kLanemaskLt, kLanemaskLe, kLanemaskGt, kLanemaskGe,
  kClock, kClock64, kGlobalTimer, kDynamicSmemSize,
};
inline constexpr int kNumSpecialRegs = static_cast<int>(SpecialReg::kDynamicSmemSize) + 1;
// "%tid.x", "%clock64"...
std::string_view SpecialRegName(SpecialReg r);
// u32 for most, u64 for %clock64 and %globaltimer.
ScalarType SpecialRegType(SpecialReg r);

enum class OperandKind : uint8_t {
  kNone,
  kReg,      // id = register
  kImm,      // value = bits, type = immediate type
  kSpecial,  // id = SpecialReg
  kSymbol,   // id = variable index (shared/local): the variable's address
  kLabel,    // id = label
  kAddress,  // [base + value]; base kind in `base`, id = register/variable/param
};

enum class AddressBase : uint8_t { kReg, kSymbol, kParam };

// One source operand. Small and trivially copyable; a Reg converts to one.
struct Operand {
  OperandKind kind = OperandKind::kNone;
  AddressBase base = AddressBase::kReg;
  ScalarType type = ScalarType::kNone;  // immediates: the immediate's type
  uint32_t id = 0;
  int64_t value = 0;  // immediate bits, or the address offset

  Operand() = default;
  Operand(Reg r) : kind(OperandKind::kReg), id(r.id) {}  // NOLINT: implicit by design

  static Operand FromReg(Reg r) { return Operand(r); }
  static Operand Imm(ScalarType t, uint64_t bits) { return Make(OperandKind::kImm, AddressBase::kReg, t, 0, static_cast<int64_t>(bits)); }
  static Operand Special(SpecialReg s) {
    return Make(OperandKind::kSpecial, AddressBase::kReg, ScalarType::kNone, static_cast<uint32_t>(s), 0);
  }
  static Operand Symbol(uint32_t variable) {
    return Make(OperandKind::kSymbol, AddressBase::kReg, ScalarType::kNone, variable, 0);
  }
  static Operand FromLabel(Label l) { return Make(OperandKind::kLabel, AddressBase::kReg, ScalarType::kNone, l.id, 0); }
  static Operand AddrReg(Reg base, int64_t offset) {
    return Make(OperandKind::kAddress, AddressBase::kReg, ScalarType::kNone, base.id, offset);
  }
  static Operand AddrSymbol(uint32_t variable, int64_t offset) {
    return Make(OperandKind::kAddress, AddressBase::kSymbol, ScalarType::kNone, variable, offset);
  }
  static Operand AddrParam(uint32_t param) {
    return Make(OperandKind::kAddress, AddressBase::kParam, ScalarType::kNone, param, 0);
  }
  static Operand Make(OperandKind kind, AddressBase base, ScalarType type, uint32_t id, int64_t value) {
    Operand o;
    o.kind = kind;
    o.base = base;
    o.type = type;
    o.id = id;
    o.value = value;
    return o;
  }

  bool is_reg() const { return kind == OperandKind::kReg; }
  bool is_imm() const { return kind == OperandKind::kImm; }
  bool is_address() const { return kind == OperandKind::kAddress; }
  Reg reg() const { return Reg{id}; }
  uint64_t bits() const { return static_cast<uint64_t>(value); }
  // The register this operand reads, if any (a register or a register-based address).
  // Computed without a branch (& and |, not && and ||): every walk over
  // operands asks it, and as two or three branches on the operand's kind a
  // cold branch predictor missed them (first codegen in a process).
  bool reads_reg() const {
    return (kind == OperandKind::kReg) | ((kind == OperandKind::kAddress) & (base == AddressBase::kReg));
  }
  // An index into a table by register with one spare entry at `spare` (the
  // register count): the register this operand reads, or `spare` when it
  // reads none or names one past the table. Without a branch (a mask, where
  // g++ made the choice a branch), for walks that mark what operands read.
  uint32_t ReadRegIndex(uint32_t spare) const {
    const uint32_t reads = reads_reg();
    return spare + ((std::min(id, spare) - spare) & (0 - reads));
  }
};

enum class Rounding : uint8_t { kNone, kRn, kRz, kRm, kRp, kRni, kRzi, kRmi, kRpi };
// Integer multiply width, or float precision mode.
enum class Mode : uint8_t { kNone, kLo, kHi, kWide, kApprox, kFull };
enum class CmpOp : uint8_t {
  kNone, kEq, kNe, kLt, kLe, kGt, kGe, kLo, kLs, kHi, kHs,
  kEqu, kNeu, kLtu, kLeu, kGtu, kGeu, kNum, kNan,
};
enum class BoolOp : uint8_t { kNone, kAnd, kOr, kXor };
enum class StateSpace : uint8_t { kGeneric, kParam, kGlobal, kShared, kLocal, kConst };
enum class CacheOp : uint8_t { kNone, kCa, kCg, kCs, kLu, kCv, kWb, kWt };
enum class AtomOp : uint8_t { kNone, kAdd, kMin, kMax, kExch, kCas, kInc, kDec, kAnd, kOr, kXor };
enum class Scope : uint8_t { kNone, kCta, kGpu, kSys };
enum class MemSem : uint8_t { kNone, kRelaxed, kAcquire, kRelease, kAcqRel };
enum class ShflMode : uint8_t { kNone, kUp, kDown, kBfly, kIdx };
enum class VoteMode : uint8_t { kNone, kAll, kAny, kUni, kBallot };

// The modifiers' names by value ("" for kNone; StateSpaceName: "" for
// generic). The tables are the printer's too: its slot texts are made from
// them (ir/format.cc).
namespace names_internal {
inline constexpr std::string_view kRounding[] = {"", "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"};
inline constexpr std::string_view kMode[] = {"", "lo", "hi", "wide", "approx", "full"};
inline constexpr std::string_view kCmpOp[] = {"",    "eq",  "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls", "hi",
                                              "hs",  "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
inline constexpr std::string_view kBoolOp[] = {"", "and", "or", "xor"};
inline constexpr std::string_view kStateSpace[] = {"", "param", "global", "shared", "local", "const"};
inline constexpr std::string_view kCacheOp[] = {"", "ca", "cg", "cs", "lu", "cv", "wb", "wt"};
inline constexpr std::string_view kAtomOp[] = {"",    "add", "min", "max", "exch", "cas",
                                              "inc", "dec", "and", "or",  "xor"};
inline constexpr std::string_view kScope[] = {"", "cta", "gpu", "sys"};
inline constexpr std::string_view kMemSem[] = {"", "relaxed", "acquire", "release", "acq_rel"};
inline constexpr std::string_view kShflMode[] = {"", "up", "down", "bfly", "idx"};
inline constexpr std::string_view kVoteMode[] = {"", "all", "any", "uni", "ballot"};
}  // namespace names_internal
constexpr std::string_view RoundingName(Rounding v) { return names_internal::kRounding[static_cast<int>(v)]; }
constexpr std::string_view ModeName(Mode v) { return names_internal::kMode[static_cast<int>(v)]; }
constexpr std::string_view CmpOpName(CmpOp v) { return names_internal::kCmpOp[static_cast<int>(v)]; }
constexpr std::string_view BoolOpName(BoolOp v) { return names_internal::kBoolOp[static_cast<int>(v)]; }
constexpr std::string_view StateSpaceName(StateSpace v) { return names_internal::kStateSpace[static_cast<int>(v)]; }
constexpr std::string_view CacheOpName(CacheOp v) { return names_internal::kCacheOp[static_cast<int>(v)]; }
constexpr std::string_view AtomOpName(AtomOp v) { return names_internal::kAtomOp[static_cast<int>(v)]; }
constexpr std::string_view ScopeName(Scope v) { return names_internal::kScope[static_cast<int>(v)]; }
constexpr std::string_view MemSemName(MemSem v) { return names_internal::kMemSem[static_cast<int>(v)]; }
constexpr std::string_view ShflModeName(ShflMode v) { return names_internal::kShflMode[static_cast<int>(v)]; }
constexpr std::string_view VoteModeName(VoteMode v) { return names_internal::kVoteMode[static_cast<int>(v)]; }

inline bool IsIntegerRounding(Rounding r) { return r >= Rounding::kRni; }
inline bool IsFloatRounding(Rounding r) { return r != Rounding::kNone && r < Rounding::kRni; }

// Everything that follows the mnemonic. Which fields an opcode prints, and in
// what order, is the opcode table's `format` column.
struct Modifiers {
  ScalarType type = ScalarType::kNone;   // the instruction type (cvt: destination)
  ScalarType type2 = ScalarType::kNone;  // cvt: source type; mma: A's type
  Rounding rounding = Rounding::kNone;
  Mode mode = Mode::kNone;
  CmpOp cmp = CmpOp::kNone;
  BoolOp bool_op = BoolOp::kNone;
  StateSpace space = StateSpace::kGeneric;
  CacheOp cache = CacheOp::kNone;
  AtomOp atom = AtomOp::kNone;
  Scope scope = Scope::kNone;
  MemSem sem = MemSem::kNone;
  ShflMode shfl = ShflMode::kNone;
  VoteMode vote = VoteMode::kNone;
  uint8_t vec = 1;       // 1, 2 or 4 (ld/st)
  uint8_t variant = 0;   // {variant:...}: 1-based index into the row's list (prmt modes); 0: none
  bool ftz = false;
  bool sat = false;
  bool nc = false;       // ld.global.nc
  bool uni = false;      // bra.uni
  bool noftz = false;    // atom.add.noftz.f16
  bool cvta_to = false;  // cvta.to.<space>
  // mma's further types and its shape and layout (last, so that the other
  // fields keep their place and older fingerprints stay as they were).
  ScalarType type3 = ScalarType::kNone;  // mma: B's type
  ScalarType type4 = ScalarType::kNone;  // mma: C's type (type is D's)
  uint8_t shape = 0;     // {shape:...}: 1-based index into the row's list (mma m16n8k16); 0: none
  uint8_t layout = 0;    // {layout:...}: 1-based index into the row's list (mma row.col); 0: none
};

// The byte of Modifiers that holds what a format slot prints (kLevel: the
// scope; kNum: vec), or -1 for literal text.
constexpr int ModifierByte(ModSlot slot) {
  switch (slot) {
    case ModSlot::kSem: return offsetof(Modifiers, sem);
    case ModSlot::kScope: return offsetof(Modifiers, scope);
    case ModSlot::kSpace: return offsetof(Modifiers, space);
    case ModSlot::kTo: return offsetof(Modifiers, cvta_to);
    case ModSlot::kNc: return offsetof(Modifiers, nc);
    case ModSlot::kCache: return offsetof(Modifiers, cache);
    case ModSlot::kVec: return offsetof(Modifiers, vec);
    case ModSlot::kAtom: return offsetof(Modifiers, atom);
    case ModSlot::kShfl: return offsetof(Modifiers, shfl);
    case ModSlot::kVote: return offsetof(Modifiers, vote);
    case ModSlot::kCmp: return offsetof(Modifiers, cmp);
    case ModSlot::kBool: return offsetof(Modifiers, bool_op);
    case ModSlot::kMode: return offsetof(Modifiers, mode);
    case ModSlot::kRnd: return offsetof(Modifiers, rounding);
    case ModSlot::kFtz: return offsetof(Modifiers, ftz);
    case ModSlot::kSat: return offsetof(Modifiers, sat);
    case ModSlot::kNoftz: return offsetof(Modifiers, noftz);
    case ModSlot::kUni: return offsetof(Modifiers, uni);
    case ModSlot::kLevel: return offsetof(Modifiers, scope);
    case ModSlot::kType: return offsetof(Modifiers, type);
    case ModSlot::kType2: return offsetof(Modifiers, type2);
    case ModSlot::kVariant: return offsetof(Modifiers, variant);
    case ModSlot::kType3: return offsetof(Modifiers, type3);
    case ModSlot::kType4: return offsetof(Modifiers, type4);
    case ModSlot::kShape: return offsetof(Modifiers, shape);
    case ModSlot::kLayout: return offsetof(Modifiers, layout);
    case ModSlot::kNum: return offsetof(Modifiers, vec);
    case ModSlot::kLiteral: return -1;
  }
  return -1;
}
static_assert(sizeof(Modifiers) <= 32 && std::is_trivially_copyable_v<Modifiers> &&
                  std::endian::native == std::endian::little,
              "ChangedModifierBytes reads Modifiers as four little-endian words");

// Bit b is set when byte b of `m` differs from Modifiers{} (all zero but
// vec, which is 1): which modifiers are set, in a few word operations. The
// verifier compares it with OpInfo::printed_bytes.
inline uint32_t ChangedModifierBytes(const Modifiers& m) {
  uint64_t w[4] = {0, 0, 0, 0};
  std::memcpy(w, &m, sizeof(Modifiers));
  constexpr int kVec = offsetof(Modifiers, vec);
  w[kVec / 8] ^= uint64_t{1} << (8 * (kVec % 8));  // little-endian: byte k of a word is bits 8k..8k+7
  uint32_t changed = 0;
  for (int k = 0; k < 4; ++k) {
    constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
    const uint64_t high = (((w[k] & kLow7) + kLow7) | w[k]) & ~kLow7;  // bit 8j+7: byte j is not zero
    changed |= static_cast<uint32_t>(((high >> 7) * 0x0102040810204080ull) >> 56) << (8 * k);
  }
  return changed;
}

// Does `cmp` apply to operands of type `t`? (lo/ls/hi/hs: unsigned and bit
// types; lt/le/gt/ge: signed, unsigned and float; eq/ne: all; the unordered
// forms, num and nan: float only.)
bool CmpAllowsType(CmpOp cmp, ScalarType t);
// Does atom/red `op` exist for type `t`? (add: u32 s32 u64 f32 f64 f16 bf16
// f16x2 bf16x2; min/max: u32 s32 u64 s64; cas: b16 b32 b64; exch: b32 b64;
// inc/dec: u32; and/or/xor: b32 b64.) The opcode table's type masks say which
// types atom and red take at all.
bool AtomOpAllowsType(AtomOp op, ScalarType t);

// A list of trivially copyable T: up to N inline, more on the heap. One
// template for an instruction's operands and its definitions (the operands
// were an absl::InlinedVector, whose operator[] also checks the index in
// Debian's hardened build). The heap block comes from ::operator new, not
// new[]: libstdc++'s new[] calls operator new through a lazily bound PLT
// slot, a dynamic-linker lookup on its first call in a process. data()
// branches on where the elements are: picking the pointer with masks
// instead took 7% fewer conditional branches from vector_add's first
// codegen but made VerifyKernel 4-7% slower on large kernels (it recomputed
// the mask at every index; scale_bench BM_Verify). The inline case is
// marked likely, so that it is the branch's fall-through: laid out the
// other way, each inlined copy was a forward branch taken every time, which
// a cold predictor gets wrong (vector_add's first codegen: callgrind's
// cold-predictor mispredictions 3,412 -> 3,149, time 0.92-0.93 of before,
// bench/cold_footprint.py and bench/cold_ab.py).
template <typename T, uint32_t N>
class InlineList {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  static_assert(N * sizeof(T) >= sizeof(T*), "the heap pointer shares the inline elements' bytes");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  InlineList() = default;
  InlineList(std::initializer_list<T> v) { assign(v.begin(), v.end()); }
  InlineList(const InlineList& o) { assign(o.begin(), o.end()); }
  InlineList(InlineList&& o) noexcept : size_(o.size_), capacity_(o.capacity_) {
    // The heap pointer or the inline elements: either way these bytes.
    std::memcpy(static_cast<void*>(inline_), static_cast<const void*>(o.inline_), sizeof inline_);
    o.size_ = 0;
    o.capacity_ = N;
  }
  InlineList& operator=(const InlineList& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  InlineList& operator=(InlineList&& o) noexcept {
    if (this != &o) {
      this->~InlineList();
      new (this) InlineList(std::move(o));
    }
    return *this;
  }
  InlineList& operator=(std::initializer_list<T> v) {
    assign(v.begin(), v.end());
    return *this;
  }
  ~InlineList() {
    if (on_heap()) ::operator delete(heap_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T* data() { return const_cast<T*>(std::as_const(*this).data()); }
  const T* data() const {
    if (on_heap()) [[unlikely]]
      return heap_;
    return inline_;
  }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void push_back(const T& v) {
    if (size_ == capacity_) {
      const T copy = v;  // v may be an element of this list
      Reserve(2 * capacity_);
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  template <typename It>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    size_ = 0;
    Reserve(n);
    T* d = data();
    for (; first != last; ++first) d[size_++] = *first;
  }
  friend bool operator==(const InlineList& a, const InlineList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  // Whether the elements are on the heap (more than N were held).
  bool on_heap() const { return capacity_ > N; }

 private:
  void Reserve(size_t n) {
    if (n <= capacity_) return;
    T* heap = static_cast<T*>(::operator new(n * sizeof(T)));
    std::uninitialized_copy(begin(), end(), heap);
    if (on_heap()) ::operator delete(heap_);
    heap_ = heap;
    capacity_ = static_cast<uint32_t>(n);
  }

  union {
    T inline_[N] = {};
    T* heap_;
  };
  uint32_t size_ = 0;
  uint32_t capacity_ = N;
};

// The registers an instruction defines: up to two inline (most define one;
// setp with |, mov of a pair, two), more on the heap (ld.v4, mma's
// fragments). 16 bytes where absl::InlinedVector<Reg, 1> took 24: the
// Instruction shrinks by 8 (README "Design notes").
using RegList = InlineList<Reg, 2>;
// An instruction's operands: three inline (56 bytes, as absl::InlinedVector
// took), more on the heap (mma's fragments, vector stores).
using OperandList = InlineList<Operand, 3>;

// One instruction. `dsts` are the registers it defines; `srcs` its operands
// in PTX order (for stores the address comes first).
// The byte-sized fields come first so that they share one 8-byte-aligned
// head; then the 4-byte ones, the location (8 bytes: CompactLoc), dsts (16:
// RegList) and srcs (56: three operands inline). sizeof(Instruction) is 120
// bytes (136 before the location and dsts were made compact); ir_test checks
// it, and README "Design notes" gives what each byte costs at scale.
struct Instruction {
  Opcode op = Opcode::kRet;
  bool guard_negated = false;  // `@!%p`
  Modifiers mods;
  Reg guard;                   // predicate guard (`@%p bra`); invalid when unguarded
  uint32_t raw_index = 0;      // kRaw: index into Kernel::raw_ptx
  CompactLoc loc;              // where the builder call was made
  RegList dsts;
  OperandList srcs;

  const OpInfo& info() const { return GetOpInfo(op); }
  bool guarded() const { return guard.valid(); }
};

// Whether `inst` holds storage of its own on the heap: more definitions or
// operands than its lists keep inline. One that does not has a destructor
// that does nothing (passes/body_edit.cc builds over such instructions
// without destroying them).
inline bool OwnsHeapStorage(const Instruction& inst) {
  return inst.dsts.on_heap() || inst.srcs.capacity() > decltype(Instruction::srcs)().capacity();
}

// Whether `inst` ends a basic block: a branch, or an instruction that ends
// the thread (the table's kBranch and kTerminator flags; guarded or not).
inline bool EndsBlock(const Instruction& inst) {
  const OpInfo& info = inst.info();
  return info.has(kBranch) || info.has(kTerminator);
}

// The value of an enumerated modifier slot (kVariant, kShape, kLayout): the
// 1-based index into the row's list, 0 when unset.
uint8_t EnumValue(const Modifiers& m, ModSlot slot);

// The type of an operand with `spec` in `inst` (kNone for addresses and
// labels, or a rule the instruction's types do not give). For a fragment
// group ({a} {b} {c}) it is the register type that holds the elements:
// FragmentRegType of the element type.
ScalarType OperandType(const Instruction& inst, const OperandSpec& spec);
// The type `spec`'s rule names, before fragment packing (f16 for an f16
// fragment held in f16x2 registers); OperandType otherwise.
ScalarType ElementType(const Instruction& inst, const OperandSpec& spec);
// The registers `spec` stands for in `inst`: its group size, the vector
// width for {v}, and for a fragment ({a} {b} {c}) the shape's matrix
// elements per lane packed in 32-bit registers (0 when the shape or the
// type is missing).
int GroupCount(const Instruction& inst, const OperandSpec& spec);
// The register type that holds fragment elements of type `t`: f16 and bf16
// in pairs (f16x2, bf16x2), 8-bit types and tf32 in b32, 32-bit types as
// they are.
ScalarType FragmentRegType(ScalarType t);
// The state space of an address operand with `spec` in `inst`: the spec's
// fixed space ("@shared") or the instruction's {space} modifier ("@").
inline StateSpace AddressSpace(const Instruction& inst, const OperandSpec& spec) {
  return spec.space != 0 ? static_cast<StateSpace>(spec.space) : inst.mods.space;
}
// How many operands each spec of a signature list stands for in `inst`
// (groups count their registers, a missing optional one 0), or false when
// `count` operands do not fit the list.
bool GroupSizes(const Instruction& inst, std::span<const OperandSpec> specs, size_t count,
                absl::InlinedVector<uint8_t, 8>& sizes);
// The same into sizes[0, specs.size()), with no container (the verifier
// asks for every instruction).
bool GroupSizes(const Instruction& inst, std::span<const OperandSpec> specs, size_t count, uint8_t* sizes);

// The lowest target and PTX ISA version that accept this instruction, from
// the opcode table's base, f16 and bf16 columns (and cvt's pairs of types).
TargetRequirement RequirementOf(const Instruction& inst);
// The minimum PTX ISA version for a special register (e.g. %dynamic_smem_size).
PtxVersion SpecialRegMinPtx(SpecialReg r);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_INSTRUCTION_H_
