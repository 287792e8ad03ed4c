// Verification: structure (references, operand shapes, labels, definitions)
// and per-instruction typing from the opcode table, then dataflow over the CFG.
#include "ir/verify.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/cfg.h"
#include "ir/enum_ranges.h"
#include "ir/format.h"
#include "ir/register_numbering.h"
#include "ir/strings.h"

namespace ptxforge::ir {
namespace {

// Sets of characters, a bit per byte value: a letter or '_' (what starts a
// PTX identifier), and a letter, a digit or '_' (what continues one).
using CharSet = std::array<uint64_t, 4>;
constexpr CharSet MakeCharSet(bool digits) {
  CharSet set{};
  for (int c = 0; c < 256; ++c) {
    const bool in = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (digits && c >= '0' && c <= '9');
    if (in) set[c / 64] |= uint64_t{1} << (c % 64);
  }
  return set;
}
constexpr CharSet kIdentifierStart = MakeCharSet(false);
constexpr CharSet kIdentifierChars = MakeCharSet(true);
inline bool InCharSet(const CharSet& set, char c) {
  const auto u = static_cast<unsigned char>(c);
  return (set[u / 64] >> (u % 64)) & 1;
}

// A hash of `s` (for telling names apart), and whether it is an identifier
// (1 to 200 characters; a letter or '_', then letters, digits or '_'), in
// one pass with no branch per character.
std::pair<uint64_t, bool> PlainIdentifierHash(std::string_view s) {
  if (s.size() - 1 >= 200) return {0, false};  // an empty s wraps to a huge size
  bool ok = InCharSet(kIdentifierStart, s[0]);
  uint64_t h = s.size();
  for (char c : s) {
    ok &= InCharSet(kIdentifierChars, c);
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  }
  return {h, ok};
}

// Sets of types, a bit per ScalarType: what a register may have (valid, not
// kNone, not instruction-only) and what a param may (the same, not pred).
constexpr uint32_t MakePlainTypes(bool param) {
  uint32_t set = 0;
  for (int t = 1; t < kNumScalarTypes; ++t) {
    const auto type = static_cast<ScalarType>(t);
    if (!IsInstructionOnlyType(type) && !(param && type == ScalarType::kPred)) set |= uint32_t{1} << t;
  }
  return set;
}
static_assert(kNumScalarTypes <= 32, "a type set is a 32-bit mask");
constexpr uint32_t kPlainRegTypes = MakePlainTypes(false);
constexpr uint32_t kPlainParamTypes = MakePlainTypes(true);
// Whether `t` is in `set`: false for any value outside ScalarType's range.
inline bool InTypeSet(uint32_t set, ScalarType t) {
  const auto v = static_cast<uint32_t>(t);
  return (v < 32) & ((set >> (v & 31)) & 1);
}

std::string TypeList(ir::TypeMask mask) {
  std::vector<std::string_view> names;
  for (int t = 1; t < ir::kNumScalarTypes; ++t) {
    if (ir::InMask(mask, static_cast<ScalarType>(t))) names.push_back(ir::TypeName(static_cast<ScalarType>(t)));
  }
  return StrJoin(names, ", ");
}

bool HasSlot(const OpInfo& info, ir::ModSlot slot) { return info.has_slot(slot); }

// How many operands each group of an instruction's signature stands for
// (GroupSizes), found once per instruction by the shape check and read by
// the operand checks after it.
struct Groups {
  std::array<uint8_t, std::tuple_size_v<decltype(ir::Signature::dsts)>> dsts{};
  std::array<uint8_t, std::tuple_size_v<decltype(ir::Signature::srcs)>> srcs{};
  bool dsts_fit = false;  // the destinations fit the signature (dsts is valid)
  bool srcs_fit = false;  // the sources do (srcs is valid; never for "*")
};

class Verifier {
 public:
  explicit Verifier(const ir::Kernel& k) : k_(k), limits_(k) {}

  absl::Status RunWellFormed() const {
    if (absl::Status s = CheckDeclarationEnums(); !s.ok()) return s;
    Groups groups;
    for (size_t i = 0; i < k_.body.size(); ++i) {
      if (absl::Status s = CheckStructure(i, groups); !s.ok()) return s;
    }
    return CheckLabels();
  }

  absl::Status Run() {
    if (!DeclarationsPlainAndFine()) {
      if (absl::Status s = CheckKernelDeclarations(); !s.ok()) return s;
    }
    if (k_.body.empty()) return KernelError("the body is empty (it must end with ret or exit)");
    bool uses_defined_above = false;
    if (absl::Status s = ScanBody(uses_defined_above); !s.ok()) return s;
    if (!uses_defined_above) {
      if (absl::Status s = CheckDefinedBeforeUse(); !s.ok()) return s;
    }
    const Instruction& last = k_.body.back();
    if (last.guarded() || !EndsBlock(last)) {
      return Error(k_.body.size() - 1, "the body falls off its end: the last instruction must be ret, exit or an "
                                       "unconditional bra");
    }
    return absl::OkStatus();
  }

 private:
  // One pass over the body checks each instruction and notes label
  // bindings, branch targets and definitions; their errors are reported
  // after it, in the order separate passes would report them. Its tables
  // are freed before CheckDefinedBeforeUse allocates its own.
  absl::Status ScanBody(bool& uses_defined_above) const {
    ScanTables tables(k_.labels.size(), k_.regs.size());
    LabelScan labels(tables);
    DefScan defs(tables);
    for (size_t i = 0; i < k_.body.size(); ++i) {
      if (absl::Status s = CheckInstruction(i); !s.ok()) return s;
      const Instruction& inst = k_.body[i];
      labels.Note(inst, i);
      defs.Note(k_, inst, i);
    }
    if (absl::Status s = LabelErrors(labels); !s.ok()) return s;
    if (defs.twice != SIZE_MAX) return DefinedTwice(defs.twice, defs.twice_reg, defs.def_at[defs.twice_reg]);
    uses_defined_above = defs.uses_defined_above;
    return absl::OkStatus();
  }

  // The error for instruction i defining %reg, which instruction first_def
  // defined first. Out of line, with the other error paths: its strings
  // would otherwise sit in the frame of Run, which every check is called
  // below.
  [[gnu::cold]] [[gnu::noinline]] absl::Status DefinedTwice(size_t i, uint32_t reg, uint32_t first_def) const {
    std::string first = ir::FormatLoc(k_.body[first_def].loc);
    return Error(i, StrCat("%", reg, " is defined twice", first.empty() ? "" : StrCat(" (first at ", first, ")"),
                           "; declare it mutable to assign it again"));
  }

  // Error paths are cold: the compiler moves the code building their messages
  // out of the checking functions (.text.unlikely), so a first verification
  // touches less code (see bench/cold_bench.cc).
  [[gnu::cold]] absl::Status KernelError(std::string_view msg) const {
    return absl::InvalidArgumentError(StrCat("kernel ", k_.name, ": ", msg));
  }

  [[gnu::cold]] absl::Status Error(size_t index, std::string_view msg) const {
    const Instruction& inst = k_.body[index];
    std::string where = ir::FormatLoc(inst.loc);
    if (where.empty()) where = StrCat("instruction ", index);
    std::string text;
    ir::AppendInstruction(text, k_, inst, ir::AppendVirtualRegName, ir::FormatStyle{.semicolon = false});
    if (text.size() > 120) text = text.substr(0, 117) + "...";
    return absl::InvalidArgumentError(StrCat("kernel ", k_.name, ": ", where, ": ", text, ": ", msg));
  }

  std::string RegDesc(ir::Reg r) const {
    return StrCat("%", r.id, " (", ir::TypeName(k_.type_of(r)), ")");
  }

  std::string OperandDesc(const Operand& op) const {
    switch (op.kind) {
      case OperandKind::kReg: return RegDesc(op.reg());
      case OperandKind::kImm: return StrCat("an immediate (", ir::TypeName(op.type), ")");
      case OperandKind::kSpecial: return StrCat(ir::SpecialRegName(static_cast<ir::SpecialReg>(op.id)));
      case OperandKind::kSymbol: return "a variable address";
      case OperandKind::kLabel: return "a label";
      case OperandKind::kAddress: return "an address";
      case OperandKind::kNone: return "empty";
    }
    return "?";
  }

  // The kernel name, then CheckDeclarationEnums and CheckDeclarations: the
  // first error, or OK. Run only when DeclarationsPlainAndFine cannot tell.
  [[gnu::cold]] [[gnu::noinline]] absl::Status CheckKernelDeclarations() const {
    if (!IsIdentifier(k_.name)) return KernelError(StrCat("kernel name '", k_.name, "' is not a PTX identifier"));
    if (absl::Status s = CheckDeclarationEnums(); !s.ok()) return s;
    return CheckDeclarations();
  }

  // Whether the kernel declares no variable and CheckKernelDeclarations has
  // nothing to report, found with one flag accumulated over the names,
  // params, registers and labels (a few branches, no call) instead of its
  // dozens of branches. Each term implies one of its checks passes:
  // identifiers by kIdentifierStart/kIdentifierChars (IsIdentifier), types
  // by kPlainRegTypes/kPlainParamTypes (valid, not instruction-only, and for
  // params neither pred nor none, for registers not none), hint ids at most
  // the names' count. Params have distinct names when their hashes are
  // distinct; equal hashes (a duplicate, or a collision) answer false. With
  // no variable there is no extern and no static shared memory. A target
  // after the last one known here answers false too: false only costs the
  // full checks.
  bool DeclarationsPlainAndFine() const {
    const ir::LaunchBounds& lb = k_.bounds;
    bool ok = k_.variables.empty() & (static_cast<int>(k_.target) <= static_cast<int>(Target::kSm120a)) &
              ((lb.maxntid[0] == 0) | (lb.reqntid[0] == 0)) & (lb.maxnreg <= 255);
    ok &= PlainIdentifierHash(k_.name).second;
    const size_t nparams = k_.params.size();
    if (nparams > kMaxPlainParams) return false;
    uint64_t hashes[kMaxPlainParams];
    for (size_t i = 0; i < nparams; ++i) {
      const ir::Param& p = k_.params[i];
      const auto [hash, identifier] = PlainIdentifierHash(p.name);
      ok &= identifier & InTypeSet(kPlainParamTypes, p.type);
      hashes[i] = hash;
      for (size_t j = 0; j < i; ++j) ok &= hashes[j] != hash;
    }
    const size_t names = k_.names.size();
    for (const ir::RegInfo& r : k_.regs) ok &= InTypeSet(kPlainRegTypes, r.type) & (r.hint_id <= names);
    for (const ir::LabelInfo& l : k_.labels) ok &= l.hint_id <= names;
    return ok;
  }
  static constexpr size_t kMaxPlainParams = 64;

  // The target and the types and spaces of declarations, before any table
  // lookup: out-of-range enums are refused with a message.
  absl::Status CheckDeclarationEnums() const {
    if (!IsValid(k_.target)) return KernelError(StrCat("the target: ", OutOfRange("Target", k_.target)));
    for (const Param& p : k_.params) {
      if (!IsValid(p.type)) return KernelError(StrCat("param '", p.name, "': ", OutOfRange("ScalarType", p.type)));
    }
    for (const Variable& v : k_.variables) {
      if (!IsValid(v.space)) return KernelError(StrCat("variable '", v.name, "': ", OutOfRange("StateSpace", v.space)));
      if (!IsValid(v.elem)) return KernelError(StrCat("variable '", v.name, "': ", OutOfRange("ScalarType", v.elem)));
    }
    for (size_t r = 0; r < k_.regs.size(); ++r) {
      if (!IsValid(k_.regs[r].type)) {
        return KernelError(StrCat("register %", r, ": ", OutOfRange("ScalarType", k_.regs[r].type)));
      }
      if (k_.regs[r].hint_id > k_.names.size()) {
        return KernelError(StrCat("register %", r, ": hint id ", k_.regs[r].hint_id, " is not in the kernel's ",
                                  k_.names.size(), " names (copied without Kernel::names?)"));
      }
    }
    for (size_t l = 0; l < k_.labels.size(); ++l) {
      if (k_.labels[l].hint_id > k_.names.size()) {
        return KernelError(StrCat("label ", l, ": hint id ", k_.labels[l].hint_id, " is not in the kernel's ",
                                  k_.names.size(), " names (copied without Kernel::names?)"));
      }
    }
    // tf32, e4m3, e5m2 and their pairs: instruction types, never a value's.
    auto only = [](ScalarType t) {
      return StrCat("has type ", ir::TypeName(t), ", which only an instruction can name (its data lives in ",
                    ir::TypeBits(t) == 32 ? "b32" : "b32 or b16", " registers)");
    };
    for (const Param& p : k_.params) {
      if (ir::IsInstructionOnlyType(p.type)) return KernelError(StrCat("param '", p.name, "' ", only(p.type)));
    }
    for (const Variable& v : k_.variables) {
      if (ir::IsInstructionOnlyType(v.elem)) return KernelError(StrCat("variable '", v.name, "' ", only(v.elem)));
    }
    for (size_t r = 0; r < k_.regs.size(); ++r) {
      if (ir::IsInstructionOnlyType(k_.regs[r].type)) return KernelError(StrCat("register %", r, " ", only(k_.regs[r].type)));
    }
    return absl::OkStatus();
  }

  absl::Status CheckDeclarations() const {
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const ir::Param& p = k_.params[i];
      if (!IsIdentifier(p.name)) return KernelError(StrCat("param name '", p.name, "' is not a PTX identifier"));
      if (p.type == ScalarType::kPred || p.type == ScalarType::kNone) {
        return KernelError(StrCat("param '", p.name, "' has type ", ir::TypeName(p.type)));
      }
      for (size_t j = 0; j < i; ++j) {
        if (k_.params[j].name == p.name) return KernelError(StrCat("param '", p.name, "' is declared twice"));
      }
    }
    int externs = 0;
    for (size_t i = 0; i < k_.variables.size(); ++i) {
      const ir::Variable& v = k_.variables[i];
      if (!IsIdentifier(v.name)) return KernelError(StrCat("variable name '", v.name, "' is not a PTX identifier"));
      if (v.space != ir::StateSpace::kShared && v.space != ir::StateSpace::kLocal) {
        return KernelError(StrCat("variable '", v.name, "' must be in shared or local memory"));
      }
      if (v.is_extern && v.space != ir::StateSpace::kShared) {
        return KernelError(StrCat("variable '", v.name, "': only shared memory can be extern (dynamic)"));
      }
      if (!v.is_extern && v.count == 0) return KernelError(StrCat("variable '", v.name, "' has 0 elements"));
      if (v.align == 0 || (v.align & (v.align - 1)) != 0) {
        return KernelError(StrCat("variable '", v.name, "': alignment ", v.align, " is not a power of two"));
      }
      externs += v.is_extern;
      for (size_t j = 0; j < i; ++j) {
        if (k_.variables[j].name == v.name) return KernelError(StrCat("variable '", v.name, "' is declared twice"));
      }
      for (const ir::Param& p : k_.params) {
        if (p.name == v.name) return KernelError(StrCat("variable '", v.name, "' has the name of a param"));
      }
    }
    if (externs > 1) return KernelError("more than one dynamic (extern) shared variable");
    // Static shared arrays, laid out in order with their alignment.
    uint64_t shared = 0;
    for (const ir::Variable& v : k_.variables) {
      if (v.space != ir::StateSpace::kShared || v.is_extern) continue;
      shared = (shared + v.align - 1) / v.align * v.align + v.size_bytes();
    }
    if (shared > ir::MaxStaticSharedBytes(k_.target)) {
      return KernelError(StrCat("static shared memory is ", shared, " bytes, over the ",
                                ir::MaxStaticSharedBytes(k_.target), " bytes ", ir::TargetName(k_.target),
                                " allows; use dynamic shared memory (DynamicShared) for more"));
    }
    const ir::LaunchBounds& lb = k_.bounds;
    if (lb.maxntid[0] != 0 && lb.reqntid[0] != 0) {
      return KernelError(".maxntid and .reqntid are both set, which ptxas refuses; .reqntid alone also bounds "
                         "the block size");
    }
    if (lb.maxnreg > 255) {
      return KernelError(StrCat(".maxnreg ", lb.maxnreg, " is over 255, which ptxas ignores"));
    }
    for (size_t r = 0; r < k_.regs.size(); ++r) {
      if (k_.regs[r].type == ScalarType::kNone) return KernelError(StrCat("register %", r, " has no type"));
    }
    return absl::OkStatus();
  }

  // ---- operand checks; `n` is the operand's PTX position (destinations first).

  // A register whose type fits `expected`: the success path of ExpectReg,
  // inline. Only the checks after CheckStructure ask, which refused any
  // register that is not of this kernel (FindBadReference), and every type
  // they compare is valid (CheckDeclarationEnums, EnumsValid), as
  // TypesCompatibleBits needs.
  bool RegFits(ir::Reg r, ScalarType expected) const {
    assert(k_.valid_reg(r));
    const ScalarType t = k_.type_of(r);
    return expected == t || ir::TypesCompatibleBits(expected, t);
  }

  absl::Status ExpectReg(size_t i, size_t n, ir::Reg r, ScalarType expected) const {
    if (RegFits(r, expected)) return absl::OkStatus();
    return RegError(i, n, r, expected);
  }

  [[gnu::cold]] absl::Status RegError(size_t i, size_t n, ir::Reg r, ScalarType expected) const {
    if (!k_.valid_reg(r)) return Error(i, StrCat("operand ", n, " is not a register of this kernel"));
    if (!ir::TypesCompatible(expected, k_.type_of(r))) {
      return Error(i, StrCat("operand ", n, " is ", RegDesc(r), ", expected ", ir::TypeName(expected)));
    }
    return absl::OkStatus();
  }

  absl::Status ExpectDst(size_t i, size_t d, ScalarType expected) const { return ExpectReg(i, d, k_.body[i].dsts[d], expected); }

  // A register or an immediate of a type compatible with `expected`.
  absl::Status ExpectValue(size_t i, size_t s, ScalarType expected, bool allow_imm = true) const {
    const Operand& op = k_.body[i].srcs[s];
    if (op.is_reg() ? RegFits(op.reg(), expected) : allow_imm && op.is_imm() && ImmFits(op, expected)) {
      return absl::OkStatus();
    }
    return CheckValue(i, s, expected, allow_imm);
  }

  // An immediate CheckValue accepts where `expected` is wanted: none of the
  // half family, of a compatible type (a float operand: that float type),
  // its bits within its type.
  static bool ImmFits(const Operand& op, ScalarType expected) {
    const int bits = ir::TypeBits(op.type);
    return !ir::IsHalfFamily(expected) && op.type != ScalarType::kPred && ir::TypesCompatibleBits(expected, op.type) &&
           !(ir::IsFloat(expected) && op.type != expected) && !(bits < 64 && (op.bits() >> bits) != 0);
  }

  // ExpectValue but for its register fast path.
  absl::Status CheckValue(size_t i, size_t s, ScalarType expected, bool allow_imm) const {
    const Instruction& inst = k_.body[i];
    const Operand& op = inst.srcs[s];
    size_t n = inst.dsts.size() + s;
    if (op.is_reg()) return ExpectReg(i, n, op.reg(), expected);
    if (op.is_imm() && allow_imm) {
      if (ir::IsHalfFamily(expected)) {
        return Error(i, StrCat("operand ", n, " is an immediate; PTX has no ", ir::TypeName(expected),
                                     " immediates (move it to a register with mov.b", ir::TypeBits(expected), " first)"));
      }
      if (op.type == ScalarType::kPred || !ir::TypesCompatible(expected, op.type)) {
        return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected ", ir::TypeName(expected)));
      }
      // A float operand takes a float literal only (0f..., 0d...): ptxas refuses
      // the bits of a b32/b64 immediate there, though a b32 register is fine.
      if (ir::IsFloat(expected) && op.type != expected) {
        return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected an ", ir::TypeName(expected),
                               " immediate (PTX takes only a float literal for a float operand)"));
      }
      int bits = ir::TypeBits(op.type);
      if (bits < 64 && (op.bits() >> bits) != 0) {
        return Error(i, StrCat("operand ", n, ": immediate 0x", Hex{op.bits()}, " does not fit ",
                                     ir::TypeName(op.type)));
      }
      return absl::OkStatus();
    }
    return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected ",
                                 allow_imm ? "a register or immediate" : "a register", " of type ",
                                 ir::TypeName(expected)));
  }

  // bfe/bfi: immediate bit positions and lengths are 0..255 (ptxas rejects
  // larger ones; registers are masked to 8 bits at run time).
  absl::Status ExpectFieldBounds(size_t i, size_t first) const {
    const Instruction& inst = k_.body[i];
    for (size_t s = first; s < first + 2; ++s) {
      const Operand& op = inst.srcs[s];
      if (op.is_imm() && op.bits() > 255) {
        return Error(i, StrCat("operand ", inst.dsts.size() + s, ": the bit ", s == first ? "position" : "length", " ",
                               op.bits(), " is out of range (0..255)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ExpectCount(size_t i, size_t dsts, size_t srcs) const {
    const Instruction& inst = k_.body[i];
    if (inst.dsts.size() != dsts || inst.srcs.size() != srcs) {
      return Error(i, StrCat(inst.info().mnemonic, " takes ", dsts, " destination(s) and ", srcs,
                                   " source(s), got ", inst.dsts.size(), " and ", inst.srcs.size()));
    }
    return absl::OkStatus();
  }

  absl::Status CheckAddress(size_t i, size_t s, ir::StateSpace space) const {
    const Instruction& inst = k_.body[i];
    const Operand& op = inst.srcs[s];
    size_t n = inst.dsts.size() + s;
    if (!op.is_address()) return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected an address"));
    switch (op.base) {
      case ir::AddressBase::kReg: {
        if (!k_.valid_reg(op.reg())) return Error(i, StrCat("operand ", n, ": the address register is not of this kernel"));
        ScalarType t = k_.type_of(op.reg());
        bool ok64 = ir::TypesCompatibleBits(ScalarType::kU64, t);
        bool ok32 = ir::TypesCompatibleBits(ScalarType::kU32, t) &&
                    (space == ir::StateSpace::kShared || space == ir::StateSpace::kLocal);
        if (!ok64 && !ok32) {
          return Error(i, StrCat("operand ", n, ": the address register is ", RegDesc(op.reg()),
                                       ", expected u64 (or u32 for shared and local)"));
        }
        return absl::OkStatus();
      }
      case ir::AddressBase::kSymbol: {
        if (op.id >= k_.variables.size()) return Error(i, StrCat("operand ", n, " names variable ", op.id, ", which does not exist"));
        const ir::Variable& v = k_.variables[op.id];
        if (v.space != space) {
          return Error(i, StrCat("operand ", n, " addresses ", ir::StateSpaceName(v.space), " variable '", v.name,
                                       "' from ", space == ir::StateSpace::kGeneric ? "generic" : ir::StateSpaceName(space),
                                       " space"));
        }
        return absl::OkStatus();
      }
      case ir::AddressBase::kParam:  // checked by CheckShape
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  // mma's third and fourth types and the listed modifiers (prmt modes, mma
  // shapes and layouts): one of the row's values. Run before the operands
  // are counted when those depend on them (mma fragments).
  absl::Status CheckListedModifiers(size_t i) const {
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    const ir::Modifiers& m = inst.mods;
    // A row without these slots has nothing to check here: CheckModifiers
    // refused any value set in a slot the row does not print.
    constexpr uint32_t kListed = ir::SlotBit(ir::ModSlot::kType3) | ir::SlotBit(ir::ModSlot::kType4) |
                                 ir::SlotBit(ir::ModSlot::kVariant) | ir::SlotBit(ir::ModSlot::kShape) |
                                 ir::SlotBit(ir::ModSlot::kLayout);
    if ((info.slot_mask & kListed) == 0) return absl::OkStatus();
    for (int n : {2, 3}) {
      const ir::ModSlot slot = n == 2 ? ir::ModSlot::kType3 : ir::ModSlot::kType4;
      const ScalarType tn = n == 2 ? m.type3 : m.type4;
      if (HasSlot(info, slot) && !ir::InMask(ir::TypeSlotMask(info, n), tn)) {
        return Error(i, StrCat(info.mnemonic, " needs a ", n == 2 ? "third" : "fourth", " type (supported: ",
                               TypeList(ir::TypeSlotMask(info, n)), ")"));
      }
    }
    for (int e = 0; e < 3; ++e) {
      const ir::ModSlot slot = e == 0 ? ir::ModSlot::kVariant : e == 1 ? ir::ModSlot::kShape : ir::ModSlot::kLayout;
      const int v = ir::EnumValue(m, slot);
      const int count = info.enum_counts[e];
      if ((ir::EnumRequired(info, slot) && v == 0) || v > count) {
        std::vector<std::string_view> names;
        for (int k = 1; k <= count; ++k) names.push_back(ir::EnumValueName(info, slot, k));
        const std::string_view kind = ir::EnumKindName(slot);
        if (v == 0) return Error(i, StrCat(info.mnemonic, " needs a ", kind, " (", StrJoin(names, ", "), ")"));
        return Error(i, StrCat(kind, " ", v, " of ", info.mnemonic, " does not exist (", kind, "s: ",
                               StrJoin(names, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }

  // ---- modifiers

  // The first modifier `inst` sets in a slot its opcode does not print (in
  // ModSlot order), named in the message; OK if there is none. Only called
  // when ChangedModifierBytes and OpInfo::printed_bytes say there is one.
  [[gnu::cold]] absl::Status UnprintedModifier(size_t i) const {
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    const ir::Modifiers& m = inst.mods;
    struct Check {
      ir::ModSlot slot;
      bool set;
    };
    const Check checks[] = {
        {ir::ModSlot::kSem, m.sem != ir::MemSem::kNone},
        {ir::ModSlot::kScope, m.scope != ir::Scope::kNone && !HasSlot(info, ir::ModSlot::kLevel)},
        {ir::ModSlot::kSpace, m.space != ir::StateSpace::kGeneric},
        {ir::ModSlot::kTo, m.cvta_to},
        {ir::ModSlot::kNc, m.nc},
        {ir::ModSlot::kCache, m.cache != ir::CacheOp::kNone},
        {ir::ModSlot::kVec, m.vec != 1 && !HasSlot(info, ir::ModSlot::kNum)},  // ldmatrix's .x1 .. .x4 live there too
        {ir::ModSlot::kAtom, m.atom != ir::AtomOp::kNone},
        {ir::ModSlot::kShfl, m.shfl != ir::ShflMode::kNone},
        {ir::ModSlot::kVote, m.vote != ir::VoteMode::kNone},
        {ir::ModSlot::kCmp, m.cmp != ir::CmpOp::kNone},
        {ir::ModSlot::kBool, m.bool_op != ir::BoolOp::kNone},
        {ir::ModSlot::kMode, m.mode != ir::Mode::kNone},
        {ir::ModSlot::kRnd, m.rounding != ir::Rounding::kNone},
        {ir::ModSlot::kFtz, m.ftz},
        {ir::ModSlot::kSat, m.sat},
        {ir::ModSlot::kNoftz, m.noftz},
        {ir::ModSlot::kUni, m.uni},
        {ir::ModSlot::kType, m.type != ScalarType::kNone},
        {ir::ModSlot::kType2, m.type2 != ScalarType::kNone},
        {ir::ModSlot::kVariant, m.variant != 0},
        {ir::ModSlot::kType3, m.type3 != ScalarType::kNone},
        {ir::ModSlot::kType4, m.type4 != ScalarType::kNone},
        {ir::ModSlot::kShape, m.shape != 0},
        {ir::ModSlot::kLayout, m.layout != 0},
    };
    // The name printed after a '.', looked up only for the message.
    auto name_of = [&](ir::ModSlot slot) -> std::string_view {
      switch (slot) {
        case ir::ModSlot::kSem: return ir::MemSemName(m.sem);
        case ir::ModSlot::kScope: return ir::ScopeName(m.scope);
        case ir::ModSlot::kSpace: return ir::StateSpaceName(m.space);
        case ir::ModSlot::kTo: return "to";
        case ir::ModSlot::kNc: return "nc";
        case ir::ModSlot::kCache: return ir::CacheOpName(m.cache);
        case ir::ModSlot::kVec: return "v";
        case ir::ModSlot::kAtom: return ir::AtomOpName(m.atom);
        case ir::ModSlot::kShfl: return ir::ShflModeName(m.shfl);
        case ir::ModSlot::kVote: return ir::VoteModeName(m.vote);
        case ir::ModSlot::kCmp: return ir::CmpOpName(m.cmp);
        case ir::ModSlot::kBool: return ir::BoolOpName(m.bool_op);
        case ir::ModSlot::kMode: return ir::ModeName(m.mode);
        case ir::ModSlot::kRnd: return ir::RoundingName(m.rounding);
        case ir::ModSlot::kFtz: return "ftz";
        case ir::ModSlot::kSat: return "sat";
        case ir::ModSlot::kNoftz: return "noftz";
        case ir::ModSlot::kUni: return "uni";
        case ir::ModSlot::kVariant:
        case ir::ModSlot::kShape:
        case ir::ModSlot::kLayout: return ir::EnumValueName(info, slot, ir::EnumValue(m, slot));
        default: return "";
      }
    };
    for (const Check& c : checks) {
      if (!c.set || HasSlot(info, c.slot)) continue;
      std::string what = c.slot == ir::ModSlot::kType    ? std::string("a type")
                         : c.slot == ir::ModSlot::kType2 ? std::string("a second type")
                         : c.slot == ir::ModSlot::kType3 ? std::string("a third type")
                         : c.slot == ir::ModSlot::kType4 ? std::string("a fourth type")
                         : c.slot == ir::ModSlot::kVec   ? StrCat(".v", m.vec)
                         : name_of(c.slot).empty()
                             ? StrCat("a ", ir::EnumKindName(c.slot), " (", int{ir::EnumValue(m, c.slot)}, ")")
                             : StrCat(".", name_of(c.slot));
      return Error(i, StrCat(what, " does not apply to ", info.mnemonic));
    }
    return absl::OkStatus();
  }

  absl::Status CheckModifiers(size_t i) const {
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    const ir::Modifiers& m = inst.mods;
    // Each modifier that is set must be one the opcode prints: one test of
    // two masks; the message is built only when it fails.
    if ((ir::ChangedModifierBytes(m) & ~info.printed_bytes) != 0) {
      if (absl::Status s = UnprintedModifier(i); !s.ok()) return s;
    }
    if (inst.op == Opcode::kSetp && (m.type == ScalarType::kF16x2 || m.type == ScalarType::kBF16x2)) {
      return Error(i, StrCat("setp.", ir::TypeName(m.type), " compares each half and writes two predicates (p|q): "
                             "use opcode SetpPair (KernelBuilder::SetpPair); ptxas also takes a single predicate, "
                             "but the PTX ISA does not define that form, so ptxforge refuses it"));
    }
    const TypeMask type_mask = ir::TypeSlotMask(info, 0);
    if (type_mask != 0 && m.type != ScalarType::kNone && !ir::InMask(type_mask, m.type)) {
      return Error(i, StrCat(info.mnemonic, " does not support type ", ir::TypeName(m.type), " (supported: ",
                                   TypeList(type_mask), ")"));
    }
    if (type_mask != 0 && m.type == ScalarType::kNone) return Error(i, StrCat(info.mnemonic, " needs a type"));
    if (HasSlot(info, ir::ModSlot::kType2) && info.rule != OpRule::kCvt && info.rule != OpRule::kCvtPack &&
        !ir::InMask(ir::TypeSlotMask(info, 1), m.type2)) {
      return Error(i, StrCat(info.mnemonic, " needs a second type (supported: ", TypeList(ir::TypeSlotMask(info, 1)),
                             ")"));
    }
    if (absl::Status st = CheckListedModifiers(i); !st.ok()) return st;

    const ScalarType t = m.type;
    const bool is_float = ir::IsFloat(t);
    if (m.rounding != ir::Rounding::kNone && inst.op != Opcode::kCvt) {
      if (!is_float) return Error(i, StrCat(".", ir::RoundingName(m.rounding), " applies to float types only"));
      if (ir::IsIntegerRounding(m.rounding)) {
        return Error(i, StrCat(".", ir::RoundingName(m.rounding), " (round to integer) applies to cvt only"));
      }
      if (inst.op == Opcode::kFma && ir::IsBF16Family(t) && m.rounding != ir::Rounding::kRn) {
        return Error(i, StrCat("fma.", ir::RoundingName(m.rounding), ".", ir::TypeName(t),
                               ": the PTX ISA defines only .rn for bf16 fma; ptxas also accepts .rz, .rm and .rp, "
                               "but what they compute is undocumented, so ptxforge refuses them"));
      }
      if (ir::IsHalfFamily(t) && m.rounding != ir::Rounding::kRn) {
        return Error(i, StrCat(".", ir::RoundingName(m.rounding), " does not apply to ", ir::TypeName(t), " (only .rn)"));
      }
    }
    if (m.ftz && inst.op == Opcode::kRcp && t == ScalarType::kF64 && m.rounding != ir::Rounding::kNone) {
      return Error(i, StrCat("rcp.", ir::RoundingName(m.rounding), ".ftz.f64: the PTX ISA defines .ftz on f64 only for "
                             "rcp.approx.ftz.f64; ptxas also accepts it with a rounding modifier, but what it does "
                             "there is undocumented, so ptxforge refuses it (rcp.", ir::RoundingName(m.rounding),
                             ".f64 is exact)"));
    }
    if (inst.op == Opcode::kEx2 && ir::IsBF16Family(t) && !m.ftz) {
      return Error(i, StrCat("ex2.approx.", ir::TypeName(t), " needs .ftz (PTX defines ex2 on bf16 and bf16x2 only "
                             "with .ftz)"));
    }
    if (m.ftz && inst.op != Opcode::kCvt && t != ScalarType::kF32 && !ir::IsF16Family(t) &&
        !(t == ScalarType::kF64 && m.mode == ir::Mode::kApprox) && !(inst.op == Opcode::kEx2 && ir::IsBF16Family(t))) {
      return Error(i, StrCat(".ftz applies to f32 (and f16) only, not ", ir::TypeName(t)));
    }
    if (m.ftz && inst.op == Opcode::kEx2 && t != ScalarType::kF32 && !ir::IsBF16Family(t)) {
      return Error(i, StrCat(".ftz applies to ex2.f32 and ex2.bf16 only, not ", ir::TypeName(t)));
    }
    if (m.sat && inst.op != Opcode::kCvt) {
      bool sat_ok = (is_float && t != ScalarType::kF64 && !ir::IsBF16Family(t)) ||
                    ((inst.op == Opcode::kAdd || inst.op == Opcode::kSub) && t == ScalarType::kS32);
      if (!sat_ok) {
        return Error(i, StrCat(".sat applies to f32 and f16 (and s32 add/sub) only, not ", ir::TypeName(t)));
      }
    }
    switch (inst.op) {
      case Opcode::kMul:
      case Opcode::kMad:
        if (ir::IsInteger(t)) {
          if (m.mode != ir::Mode::kLo && m.mode != ir::Mode::kHi && m.mode != ir::Mode::kWide) {
            return Error(i, StrCat("integer ", info.mnemonic, " needs .lo, .hi or .wide"));
          }
          if (m.mode == ir::Mode::kWide && ir::TypeBits(t) == 64) {
            return Error(i, StrCat(info.mnemonic, ".wide applies to 16- and 32-bit integers only"));
          }
        } else if (m.mode != ir::Mode::kNone) {
          return Error(i, StrCat(".", ir::ModeName(m.mode), " applies to integer ", info.mnemonic, " only"));
        }
        break;
      case Opcode::kFma:
        if (m.rounding == ir::Rounding::kNone) return Error(i, "fma needs a rounding modifier (.rn, .rz, .rm or .rp)");
        break;
      case Opcode::kDiv:
      case Opcode::kSqrt:
      case Opcode::kRcp:
        if (is_float) {
          bool approx_like = m.mode == ir::Mode::kApprox || (inst.op == Opcode::kDiv && m.mode == ir::Mode::kFull);
          if (m.mode != ir::Mode::kNone && !approx_like) {
            return Error(i, StrCat(".", ir::ModeName(m.mode), " does not apply to ", info.mnemonic));
          }
          if (approx_like == (m.rounding != ir::Rounding::kNone)) {
            return Error(i, StrCat(info.mnemonic, ".", ir::TypeName(t),
                                         " needs exactly one of a rounding modifier (.rn, .rz, .rm, .rp) or ",
                                         inst.op == Opcode::kDiv ? ".approx/.full" : ".approx"));
          }
          if (t == ScalarType::kF64 && approx_like && !(inst.op == Opcode::kRcp && m.ftz)) {
            return Error(i, StrCat(info.mnemonic, ".f64 needs a rounding modifier (only rcp.approx.ftz.f64 is approximate)"));
          }
        } else if (m.mode != ir::Mode::kNone) {
          return Error(i, StrCat(".", ir::ModeName(m.mode), " applies to float ", info.mnemonic, " only"));
        }
        break;
      case Opcode::kRsqrt:
      case Opcode::kEx2:
      case Opcode::kLg2:
      case Opcode::kSin:
      case Opcode::kCos:
      case Opcode::kTanh:
        if (m.mode != ir::Mode::kApprox) return Error(i, StrCat(info.mnemonic, " needs .approx"));
        break;
      default:
        if (m.mode != ir::Mode::kNone && m.mode != ir::Mode::kApprox) {
          return Error(i, StrCat(".", ir::ModeName(m.mode), " does not apply to ", info.mnemonic));
        }
        if (m.mode == ir::Mode::kApprox) return Error(i, StrCat(".approx does not apply to ", info.mnemonic));
        break;
    }
    return absl::OkStatus();
  }

  absl::Status CheckCvt(size_t i) const {
    const Instruction& inst = k_.body[i];
    const ir::Modifiers& m = inst.mods;
    ScalarType to = m.type, from = m.type2;
    const OpInfo& info = inst.info();
    if (from == ScalarType::kNone || !ir::InMask(info.types, from)) {
      return Error(i, StrCat("cvt source type ", ir::TypeName(from), " is not supported (supported: ",
                                   TypeList(info.types), ")"));
    }
    if (ir::IsF16Family(to) && to != ScalarType::kF16) return Error(i, "cvt converts scalars only");
    bool ff = ir::IsFloat(from), ft = ir::IsFloat(to);
    std::string pair = StrCat(ir::TypeName(to), ".", ir::TypeName(from));
    if (ff && !ft) {
      if (!ir::IsIntegerRounding(m.rounding)) {
        return Error(i, StrCat("cvt.", pair, " (float to integer) needs an integer rounding modifier (.rni, .rzi, .rmi, .rpi)"));
      }
    } else if (!ff && ft) {
      if (!ir::IsFloatRounding(m.rounding)) {
        return Error(i, StrCat("cvt.", pair, " (integer to float) needs a rounding modifier (.rn, .rz, .rm, .rp)"));
      }
    } else if (ff && ft) {
      int bt = ir::TypeBits(to), bf = ir::TypeBits(from);
      if (bt < bf || (bt == bf && to != from)) {
        if (!ir::IsFloatRounding(m.rounding)) {
          return Error(i, StrCat("cvt.", pair, " (narrowing) needs a rounding modifier (.rn, .rz, .rm, .rp)"));
        }
      } else if (bt > bf) {
        if (m.rounding != ir::Rounding::kNone) {
          return Error(i, StrCat("cvt.", pair, " (widening) takes no rounding modifier",
                                 ir::IsBF16Family(from) && ir::IsFloatRounding(m.rounding)
                                     ? ": the PTX ISA makes rounding illegal where a conversion loses no precision; "
                                       "ptxas accepts it from bf16, where it changes nothing, but ptxforge refuses it "
                                       "as for every other widening cvt"
                                     : ""));
        }
      } else if (ir::IsFloatRounding(m.rounding)) {
        return Error(i, StrCat("cvt.", pair, " takes only an integer rounding modifier (.rni, .rzi, .rmi, .rpi)"));
      }
    } else if (m.rounding != ir::Rounding::kNone) {
      return Error(i, StrCat("cvt.", pair, " (integer to integer) takes no rounding modifier"));
    } else if (m.sat) {
      // ptxas refuses .sat where every source value fits the destination.
      int bt = ir::TypeBits(to), bf = ir::TypeBits(from);
      bool fits = (ir::IsSigned(to) == ir::IsSigned(from) && bt >= bf) || (ir::IsSigned(to) && bt > bf);
      if (fits) return Error(i, StrCat("cvt.", pair, " cannot overflow, so .sat does not apply"));
    }
    if (m.ftz && to != ScalarType::kF32 && from != ScalarType::kF32) return Error(i, ".ftz applies to cvt with an f32 operand only");
    const bool bf16 = ir::IsBF16Family(to) || ir::IsBF16Family(from);
    if (bf16 && m.sat) return Error(i, StrCat("cvt.", pair, ": .sat does not apply to cvt with bf16"));
    if (bf16 && (ir::TypeBits(to) == 8 || ir::TypeBits(from) == 8)) {
      return Error(i, StrCat("cvt.", pair, ": PTX has no cvt between bf16 and 8-bit integers"));
    }
    if (absl::Status s = ExpectCount(i, 1, 1); !s.ok()) return s;
    if (absl::Status s = ExpectDst(i, 0, to); !s.ok()) return s;
    return ExpectValue(i, 0, from);  // a register or an immediate (none of the half family)
  }

  // Each operand against the row's signature: its class (register, immediate)
  // and the type that follows from the instruction's types.
  // `groups`: CheckShape's, which found that the operands fit the signature.
  absl::Status CheckSignature(size_t i, const Groups& groups) const {
    const Instruction& inst = k_.body[i];
    const ir::Signature& sig = inst.info().sig;
    assert(groups.dsts_fit && groups.srcs_fit);
    for (size_t g = 0, d = 0; g < sig.ndst; ++g) {
      const ScalarType want = ir::OperandType(inst, sig.dsts[g]);
      for (uint8_t k = 0; k < groups.dsts[g]; ++k, ++d) {
        if (RegFits(inst.dsts[d], want)) continue;
        if (absl::Status s = ExpectDst(i, d, want); !s.ok()) return s;
      }
    }
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const ir::OperandSpec& spec = sig.srcs[g];
      const ScalarType want = ir::OperandType(inst, spec);
      // A register where the spec takes one, of a fitting type, and not
      // an mma fragment: nothing else to check.
      const bool plain_reg = spec.rule != ir::TypeRule::kAddress && spec.cls != ir::OperandClass::kImm &&
                             spec.fragment == ir::Fragment::kNone;
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        const Operand& op = inst.srcs[s];
        if (plain_reg && op.is_reg() && RegFits(op.reg(), want)) continue;
        // An immediate where the spec takes one, that fits (and is 0..255 if it must be).
        if (spec.rule != ir::TypeRule::kAddress && spec.cls != ir::OperandClass::kReg && op.is_imm() &&
            ImmFits(op, want) && !(spec.byte_imm && op.bits() > 255)) {
          continue;
        }
        const size_t n = inst.dsts.size() + s;
        if (spec.rule == ir::TypeRule::kAddress) {
          if (absl::Status st = CheckAddress(i, s, ir::AddressSpace(inst, spec)); !st.ok()) return st;
          continue;
        }
        if (spec.cls == ir::OperandClass::kImm && !op.is_imm()) {
          return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected an immediate of type ",
                                 ir::TypeName(want)));
        }
        if (absl::Status st = ExpectValue(i, s, want, spec.cls != ir::OperandClass::kReg); !st.ok()) return st;
        // ptxas refuses float registers where an mma fragment holds packed
        // elements in .b32 ("Arguments mismatch"), though b32 takes any 32-bit type elsewhere.
        if (spec.fragment != ir::Fragment::kNone && want == ScalarType::kB32 && op.is_reg() &&
            ir::IsFloat(k_.type_of(op.reg()))) {
          return Error(i, StrCat("operand ", n, " is ", OperandDesc(op), ", expected b32 (an mma fragment of ",
                                 ir::TypeName(ir::ElementType(inst, spec)), " takes no float registers)"));
        }
        if (spec.byte_imm && op.is_imm() && op.bits() > 255) {
          return Error(i, StrCat("operand ", n, ": immediate ", op.bits(), " is out of range (0..255)"));
        }
      }
    }
    return absl::OkStatus();
  }

  // References exist; the operand counts and kinds are the opcode's. Fills
  // `groups` for the operand checks.
  absl::Status CheckStructure(size_t i, Groups& groups) const {
    const Instruction& inst = k_.body[i];
    // Enums out of range (cast from integers) before any table lookup.
    if (!EnumsValid(inst)) {
      std::string where = FormatLoc(inst.loc);
      return KernelError(StrCat(where.empty() ? StrCat("instruction ", i) : where, ": ", InvalidEnum(inst)));
    }
    if (inst.guarded() && inst.op == Opcode::kLabel) return Error(i, "a label cannot be guarded");
    bool suspect = false;
    if (!ReferencesFine(inst, suspect)) {
      if (absl::Status s = BadReference(i); !s.ok()) return s;
    }
    return CheckShape(i, groups, suspect);
  }

  [[gnu::cold]] [[gnu::noinline]] absl::Status BadReference(size_t i) const {
    if (std::optional<std::string> bad = FindBadReference(k_, k_.body[i])) return Error(i, *bad);
    return absl::OkStatus();
  }

  // Whether FindBadReference finds nothing in `inst`, in one walk with no
  // branch per operand: the guard and destinations against the registers,
  // each source's id against the count of what its kind (an address: its
  // base) names, as FindBadReference checks them (an empty operand fits no
  // limit; an immediate any). False runs FindBadReference, which words the
  // error; it may find none where a kind or base is out of range, which it
  // does not check and which answers false here. Also sets `suspect` when a
  // source is an address or an immediate of an instruction-only type (what
  // CheckShape refuses where the signature has no address).
  bool ReferencesFine(const Instruction& inst, bool& suspect) const {
    const uint64_t nregs = k_.regs.size();
    bool ok = !(inst.guard.valid() & (inst.guard.id >= nregs));
    for (ir::Reg d : inst.dsts) ok &= d.id < nregs;
    for (const Operand& op : inst.srcs) {
      ok &= limits_.Fits(op);
      suspect |= op.is_address() | (op.is_imm() & ir::IsInstructionOnlyType(op.type));
    }
    ok &= !((inst.op == Opcode::kRaw) & (inst.raw_index >= k_.raw_ptx.size()));
    return ok;
  }

  // `suspect`: ReferencesFine's (a source is an address or an immediate of
  // an instruction-only type).
  absl::Status CheckShape(size_t i, Groups& groups, bool suspect) const {
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    const size_t nd = inst.dsts.size(), ns = inst.srcs.size();
    const ir::Signature& sig = info.sig;
    groups.dsts_fit = groups.srcs_fit = false;
    switch (info.rule) {
      case OpRule::kLoad:
      case OpRule::kStore: {
        const int vec = inst.mods.vec;
        if (vec != 1 && vec != 2 && vec != 4) return Error(i, StrCat("vector width ", vec, " is not 1, 2 or 4"));
        const bool load = info.rule == OpRule::kLoad;
        if (absl::Status s = load ? ExpectCount(i, vec, 1) : ExpectCount(i, 0, 1 + vec); !s.ok()) return s;
        break;
      }
      case OpRule::kAtom:
      case OpRule::kRed: {
        const bool atom = info.rule == OpRule::kAtom;
        if (absl::Status s = ExpectCount(i, atom ? 1 : 0, atom && inst.mods.atom == AtomOp::kCas ? 3 : 2); !s.ok()) return s;
        break;
      }
      case OpRule::kSetp:
        if (absl::Status s = ExpectCount(i, info.sig.ndst, inst.mods.bool_op != BoolOp::kNone ? 3 : 2); !s.ok()) return s;
        break;
      case OpRule::kShfl:
        if (nd == 0 || nd > 2 || ns != 4) return Error(i, "shfl.sync takes 1 or 2 destinations and 4 sources");
        break;
      case OpRule::kBarrier:
        if (info.sig.srcs[1].optional) {
          if (nd != 0 || ns == 0 || ns > 2) return Error(i, "bar.sync takes a barrier id and optionally a thread count");
        } else if (nd != 0 || ns != 2) {
          return Error(i, StrCat(info.mnemonic, " takes a barrier id and a thread count"));
        }
        break;
      case OpRule::kBranch:
        if (absl::Status s = ExpectCount(i, 0, 1); !s.ok()) return s;
        if (inst.srcs[0].kind != OperandKind::kLabel) return Error(i, "bra needs a label of this kernel");
        break;
      case OpRule::kLabelDef:
        if (nd != 0 || ns != 1 || inst.srcs[0].kind != OperandKind::kLabel) {
          return Error(i, "a label definition needs a label of this kernel");
        }
        break;
      case OpRule::kRawPtx:
        for (const Operand& op : inst.srcs) {
          if (!op.is_reg()) return Error(i, "raw PTX inputs must be registers");
        }
        break;
      case OpRule::kLoopPragma:
        if (inst.guarded()) return Error(i, "a pragma cannot be guarded");
        if (i == 0 || k_.body[i - 1].op != Opcode::kLabel) {
          return Error(i, "must come right after the label of a loop header (ptxas ignores it anywhere else)");
        }
        if (absl::Status s = ExpectCount(i, 0, 0); !s.ok()) return s;
        break;
      case OpRule::kMatrix: {
        const int num = inst.mods.vec;
        if (num != 1 && num != 2 && num != 4) {
          return Error(i, StrCat(info.mnemonic, " moves .x1, .x2 or .x4 matrices, not .x", num));
        }
        [[fallthrough]];
      }
      default: {
        // mma fragments: their sizes follow from the shape and the types, so those are checked first.
        if (!info.shapes.empty()) {
          if (absl::Status st = CheckModifiers(i); !st.ok()) return st;
        }
        if (info.fixed_operands) {  // GroupSizes, for a signature whose groups have fixed sizes
          for (int g = 0; g < sig.ndst; ++g) groups.dsts[g] = sig.dsts[g].group;
          for (int g = 0; g < sig.nsrc; ++g) groups.srcs[g] = sig.srcs[g].group;
          groups.dsts_fit = nd == info.fixed_dsts;
          groups.srcs_fit = groups.dsts_fit && ns == info.fixed_srcs;
        } else {
          groups.dsts_fit = GroupSizes(inst, std::span(sig.dsts.data(), sig.ndst), nd, groups.dsts.data());
          if (groups.dsts_fit) {
            groups.srcs_fit = GroupSizes(inst, std::span(sig.srcs.data(), sig.nsrc), ns, groups.srcs.data());
          }
        }
        if (!groups.dsts_fit || !groups.srcs_fit) {
          size_t want_d = 0, want_s = 0, optional_s = 0;
          for (int k = 0; k < sig.ndst; ++k) want_d += ir::GroupCount(inst, sig.dsts[k]);
          for (int k = 0; k < sig.nsrc; ++k) {
            (sig.srcs[k].optional ? optional_s : want_s) += ir::GroupCount(inst, sig.srcs[k]);
          }
          if (optional_s == 0) return ExpectCount(i, want_d, want_s);
          return Error(i, StrCat(info.mnemonic, " takes ", want_d, " destination(s) and ", want_s, " to ",
                                 want_s + optional_s, " source(s), got ", nd, " and ", ns));
        }
        break;
      }
    }
    // The sources the signature makes addresses (any number: cp.async has
    // two), and only those, are addresses. Nothing to check when the sources
    // do not fit the signature (raw PTX; the rules above checked the counts).
    // No address to check: only an address or an immediate of an
    // instruction-only type can be wrong (SourceKindError says which).
    if (!info.has_address && !sig.any && !suspect) return absl::OkStatus();
    if (!groups.srcs_fit) {
      if (sig.any || !GroupSizes(inst, std::span(sig.srcs.data(), sig.nsrc), ns, groups.srcs.data())) {
        return absl::OkStatus();
      }
      groups.srcs_fit = true;
    }
    // One flag over the sources for the rules SourceKindError words: each
    // is an address exactly where the signature has one, no immediate has
    // an instruction-only type, an address is by param exactly where it is
    // in the param space, and a param is read whole (at offset 0, its own
    // size) by ld. The message, in the order of those rules, only when it
    // is false.
    bool fine = true;
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const ir::OperandSpec& spec = sig.srcs[g];
      const bool address = spec.rule == ir::TypeRule::kAddress;
      const bool param_space = address & (ir::AddressSpace(inst, spec) == StateSpace::kParam);
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        const Operand& op = inst.srcs[s];
        const bool by_param = op.is_address() & (op.base == AddressBase::kParam);
        fine &= (address == op.is_address()) & !(op.is_imm() & ir::IsInstructionOnlyType(op.type)) &
                (by_param == param_space);
        if (by_param) {  // a param that exists (CheckStructure checked the references)
          fine &= (inst.op == Opcode::kLd) & (op.value == 0) &
                  (TypeSize(inst.mods.type) * inst.mods.vec == TypeSize(k_.params[op.id].type));
        }
      }
    }
    if (!fine) return SourceKindError(i, groups);
    return absl::OkStatus();
  }

  // The first source that breaks a rule of CheckShape's flag, in the order
  // of the rules (each address and immediate, then the params); OK if none.
  [[gnu::cold]] [[gnu::noinline]] absl::Status SourceKindError(size_t i, const Groups& groups) const {
    const Instruction& inst = k_.body[i];
    const ir::Signature& sig = inst.info().sig;
    const size_t nd = inst.dsts.size();
    size_t leading = 0, addresses = 0;  // leading addresses, all addresses
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const bool address = sig.srcs[g].rule == ir::TypeRule::kAddress;
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        addresses += address;
        if (address && leading == s) ++leading;
      }
    }
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const bool address = sig.srcs[g].rule == ir::TypeRule::kAddress;
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        const Operand& op = inst.srcs[s];
        if (op.is_imm() && ir::IsInstructionOnlyType(op.type)) {
          return Error(i, StrCat("operand ", nd + s, " is an immediate of type ", ir::TypeName(op.type),
                                 ", which only an instruction can name (its data lives in b32 or b16 values)"));
        }
        if (address && !op.is_address()) {
          return Error(i, StrCat("operand ", nd + s, " is ", OperandDesc(op), ", expected an address"));
        }
        if (!address && op.is_address()) {
          std::string only;
          if (addresses == 1 && leading == 1) only = " (only the first source is an address)";
          if (addresses > 1 && leading == addresses) only = StrCat(" (only the first ", addresses, " sources are addresses)");
          return Error(i, StrCat("operand ", nd + s, " is an address, expected a register or immediate", only));
        }
      }
    }
    // Params: read whole, by name, with ld.param.
    for (size_t g = 0, s = 0; g < sig.nsrc; ++g) {
      const ir::OperandSpec& spec = sig.srcs[g];
      if (spec.rule != ir::TypeRule::kAddress) {
        s += groups.srcs[g];
        continue;
      }
      for (uint8_t k = 0; k < groups.srcs[g]; ++k, ++s) {
        const Operand& a = inst.srcs[s];
        const StateSpace space = ir::AddressSpace(inst, spec);
        if (a.base != AddressBase::kParam) {
          if (space == StateSpace::kParam) return Error(i, "ld.param must address a param by name");
          continue;
        }
        if (space != StateSpace::kParam) return Error(i, "a param can only be read with ld.param");
        if (inst.op != Opcode::kLd) return Error(i, "params are read-only");
        const Param& param = k_.params[a.id];
        const int bytes = TypeSize(inst.mods.type) * inst.mods.vec;
        if (a.value != 0 || bytes != TypeSize(param.type)) {
          return Error(i, StrCat("ld.param reads ", bytes, " bytes at offset ", a.value, " of param '", param.name,
                                 "', which is ", TypeName(param.type), " (", TypeSize(param.type),
                                 " bytes); read a param whole, with its own size"));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckInstruction(size_t i) const {
    Groups groups;
    if (absl::Status s = CheckStructure(i, groups); !s.ok()) return s;
    const Instruction& inst = k_.body[i];
    const OpInfo& info = inst.info();
    if (inst.guarded() && k_.type_of(inst.guard) != ScalarType::kPred) {
      return Error(i, StrCat("the guard is ", RegDesc(inst.guard), ", expected pred"));
    }
    // Target.
    ir::TargetRequirement req = ir::RequirementOf(k_, inst);
    if (!ir::TargetSatisfies(k_.target, req)) {
      std::string name;
      ir::AppendOpcode(name, inst);
      if (inst.op == Opcode::kRaw) name = "raw PTX";
      return Error(i, StrCat(name, " requires ", ir::RequirementName(req), req.arch_specific ? "" : " or newer",
                                   "; the kernel targets ", ir::TargetName(k_.target)));
    }
    if (inst.op != Opcode::kRaw && inst.op != Opcode::kLabel) {
      if (absl::Status s = CheckModifiers(i); !s.ok()) return s;
    }
    const ScalarType t = inst.mods.type;
    switch (info.rule) {
      case OpRule::kMov: {
        if (absl::Status s = ExpectDst(i, 0, t); !s.ok()) return s;
        const Operand& src = inst.srcs[0];
        if (src.kind == OperandKind::kSpecial) {
          ScalarType st = ir::SpecialRegType(static_cast<ir::SpecialReg>(src.id));
          if (!ir::TypesCompatibleBits(t, st)) {
            return Error(i, StrCat(ir::SpecialRegName(static_cast<ir::SpecialReg>(src.id)), " is ",
                                         ir::TypeName(st), "; mov.", ir::TypeName(t), " cannot read it"));
          }
          return absl::OkStatus();
        }
        if (src.kind == OperandKind::kSymbol) {
          if (ir::TypeBits(t) != 32 && ir::TypeBits(t) != 64) return Error(i, "a variable's address is u32 or u64");
          return absl::OkStatus();
        }
        if (src.is_imm() && ir::IsHalfFamily(src.type)) return absl::OkStatus();  // bits of a half constant
        if (src.is_imm() && src.type == ScalarType::kPred && t == ScalarType::kPred) return absl::OkStatus();  // mov.pred %p, 1
        return ExpectValue(i, 0, t);
      }
      case OpRule::kGeneric: return CheckSignature(i, groups);
      case OpRule::kBitField:
        if (absl::Status s = CheckSignature(i, groups); !s.ok()) return s;
        return ExpectFieldBounds(i, inst.srcs.size() - 2);
      case OpRule::kSetp: {
        bool combine = inst.mods.bool_op != ir::BoolOp::kNone;
        if (inst.mods.cmp == ir::CmpOp::kNone) return Error(i, "setp needs a comparison");
        if (!ir::CmpAllowsType(inst.mods.cmp, t)) {
          return Error(i, StrCat("comparison .", ir::CmpOpName(inst.mods.cmp), " does not apply to ",
                                       ir::TypeName(t)));
        }
        for (size_t d = 0; d < inst.dsts.size(); ++d) {  // setp.f16x2 writes p|q
          if (absl::Status s = ExpectDst(i, d, ScalarType::kPred); !s.ok()) return s;
        }
        if (absl::Status s = ExpectValue(i, 0, t); !s.ok()) return s;
        if (absl::Status s = ExpectValue(i, 1, t); !s.ok()) return s;
        if (combine) return ExpectValue(i, 2, ScalarType::kPred, false);
        return absl::OkStatus();
      }
      case OpRule::kCvt: return CheckCvt(i);
      case OpRule::kCvta: {
        ir::StateSpace sp = inst.mods.space;
        if (sp != ir::StateSpace::kGlobal && sp != ir::StateSpace::kShared && sp != ir::StateSpace::kLocal &&
            sp != ir::StateSpace::kConst && sp != ir::StateSpace::kParam) {
          return Error(i, "cvta needs a state space (global, shared, local, const or param)");
        }
        if (absl::Status s = ExpectDst(i, 0, t); !s.ok()) return s;
        const Operand& src = inst.srcs[0];
        if (src.kind == OperandKind::kSymbol) {
          if (inst.mods.cvta_to) return Error(i, "cvta.to converts a generic address register, not a variable");
          if (k_.variables[src.id].space != sp) {
            return Error(i, StrCat("variable '", k_.variables[src.id].name, "' is not in ", ir::StateSpaceName(sp),
                                         " memory"));
          }
          return absl::OkStatus();
        }
        return ExpectValue(i, 0, t, false);
      }
      case OpRule::kLoad:
      case OpRule::kStore: {
        bool load = info.rule == OpRule::kLoad;
        int vec = inst.mods.vec;
        ir::StateSpace sp = inst.mods.space;
        if (!load && sp == ir::StateSpace::kParam) return Error(i, "params are read-only");
        if (!load && sp == ir::StateSpace::kConst) return Error(i, "const memory is read-only");
        if (inst.mods.nc && sp != ir::StateSpace::kGlobal) return Error(i, ".nc applies to ld.global only");
        ir::CacheOp c = inst.mods.cache;
        if (c != ir::CacheOp::kNone) {
          bool ok = load ? (c == ir::CacheOp::kCa || c == ir::CacheOp::kCg || c == ir::CacheOp::kCs ||
                            c == ir::CacheOp::kLu || c == ir::CacheOp::kCv)
                         : (c == ir::CacheOp::kWb || c == ir::CacheOp::kCg || c == ir::CacheOp::kCs ||
                            c == ir::CacheOp::kWt);
          if (!ok) return Error(i, StrCat("cache operator .", ir::CacheOpName(c), " does not apply to ", info.mnemonic));
          if (inst.mods.nc && c != ir::CacheOp::kCa && c != ir::CacheOp::kCg && c != ir::CacheOp::kCs) {
            return Error(i, StrCat("cache operator .", ir::CacheOpName(c), " does not apply to ld.global.nc"));
          }
        }
        if (vec == 4 && ir::TypeBits(t) == 64 && sp != ir::StateSpace::kGlobal && sp != ir::StateSpace::kGeneric) {
          return Error(i, StrCat("256-bit ", info.mnemonic, ".v4 of 64-bit values works on global (or generic) "
                                 "addresses only, not ", ir::StateSpaceName(sp)));
        }
        if (absl::Status s = CheckAddress(i, 0, sp); !s.ok()) return s;
        if (!load && vec > 1 && ir::IsBits(t)) {
          // ptxas refuses some bit-typed vectors that mix an integer immediate with
          // float values ("Vector with elements of different types"); which
          // mixes it takes depends on element order, so all are refused.
          bool int_imm = false, float_value = false;
          for (int v = 0; v < vec; ++v) {
            const Operand& op = inst.srcs[1 + v];
            if (op.is_imm()) {
              (ir::IsFloat(op.type) ? float_value : int_imm) = true;
            } else if (op.is_reg() && op.id < k_.regs.size()) {
              const ir::RegClass c = ir::RegClassOf(k_.regs[op.id].type);
              float_value |= c == ir::RegClass::kF32 || c == ir::RegClass::kF64;
            }
          }
          if (int_imm && float_value) {
            return Error(i, StrCat(info.mnemonic, ".v", vec, " mixes integer immediates with float values, which "
                                   "ptxas refuses (\"Vector with elements of different types\"): put the "
                                   "immediates in registers"));
          }
        }
        for (int v = 0; v < vec; ++v) {
          if (load) {
            if (absl::Status s = ExpectDst(i, v, t); !s.ok()) return s;
          } else if (absl::Status s = ExpectValue(i, 1 + v, t); !s.ok()) {
            return s;
          }
        }
        return absl::OkStatus();
      }
      case OpRule::kAtom:
      case OpRule::kRed: {
        bool atom = info.rule == OpRule::kAtom;
        ir::AtomOp op = inst.mods.atom;
        size_t srcs = op == ir::AtomOp::kCas ? 3 : 2;
        if (op == ir::AtomOp::kNone) {
          return Error(i, StrCat(info.mnemonic, " needs an operation (.add, .min, .max, .inc, .dec, .and, .or, .xor",
                                 atom ? ", .exch, .cas)" : ")"));
        }
        if (!atom && (op == ir::AtomOp::kCas || op == ir::AtomOp::kExch)) {
          return Error(i, StrCat("red has no .", ir::AtomOpName(op), " (use atom.", ir::AtomOpName(op), ")"));
        }
        if (!atom && (inst.mods.sem == ir::MemSem::kAcquire || inst.mods.sem == ir::MemSem::kAcqRel)) {
          return Error(i, StrCat("red has no .", ir::MemSemName(inst.mods.sem), " (only .relaxed and .release)"));
        }
        if (!ir::AtomOpAllowsType(op, t)) {
          return Error(i, StrCat(".", ir::AtomOpName(op), " does not apply to ", ir::TypeName(t)));
        }
        ir::StateSpace sp = inst.mods.space;
        if (sp != ir::StateSpace::kGlobal && sp != ir::StateSpace::kShared && sp != ir::StateSpace::kGeneric) {
          return Error(i, StrCat(info.mnemonic, " works on global, shared or generic addresses, not ",
                                       ir::StateSpaceName(sp)));
        }
        if (inst.mods.noftz != (op == ir::AtomOp::kAdd && ir::IsHalfFamily(t))) {
          return Error(i, ".noftz is required for (and only for) f16/bf16 add");
        }
        if (absl::Status s = CheckAddress(i, 0, sp); !s.ok()) return s;
        if (atom) {
          if (absl::Status s = ExpectDst(i, 0, t); !s.ok()) return s;
        }
        for (size_t s = 1; s < srcs; ++s) {
          if (absl::Status st = ExpectValue(i, s, t); !st.ok()) return st;
        }
        return absl::OkStatus();
      }
      case OpRule::kBranch:
      case OpRule::kLabelDef:
      case OpRule::kRawPtx:
      case OpRule::kLoopPragma:
        return absl::OkStatus();  // CheckShape checked all there is
      case OpRule::kBarrier:
        for (size_t s = 0; s < inst.srcs.size(); ++s) {
          if (absl::Status st = ExpectValue(i, s, ScalarType::kU32); !st.ok()) return st;
        }
        if (inst.srcs[0].is_imm() && inst.srcs[0].bits() > 15) return Error(i, "barrier ids are 0..15");
        if (inst.srcs.size() == 2 && inst.srcs[1].is_imm() && (inst.srcs[1].bits() == 0 || inst.srcs[1].bits() % 32 != 0)) {
          return Error(i, StrCat("the ", info.mnemonic, " thread count must be a positive multiple of 32"));
        }
        return absl::OkStatus();
      case OpRule::kShfl: {
        if (inst.mods.shfl == ir::ShflMode::kNone) return Error(i, "shfl.sync needs a mode (up, down, bfly, idx)");
        if (absl::Status s = ExpectDst(i, 0, t); !s.ok()) return s;
        if (inst.dsts.size() == 2) {
          if (absl::Status s = ExpectDst(i, 1, ScalarType::kPred); !s.ok()) return s;
        }
        if (absl::Status s = ExpectValue(i, 0, t); !s.ok()) return s;
        for (size_t s = 1; s < 4; ++s) {
          if (absl::Status st = ExpectValue(i, s, ScalarType::kU32); !st.ok()) return st;
        }
        return absl::OkStatus();
      }
      case OpRule::kVote: {
        ir::VoteMode v = inst.mods.vote;
        if (v == ir::VoteMode::kNone) return Error(i, "vote.sync needs a mode (all, any, uni, ballot)");
        if ((v == ir::VoteMode::kBallot) != (t == ScalarType::kB32)) {
          return Error(i, "vote.sync.ballot is .b32; all, any and uni are .pred");
        }
        return CheckSignature(i, groups);
      }
      case OpRule::kMembar:
        if (inst.mods.scope == ir::Scope::kNone) return Error(i, "membar needs a level (cta, gl, sys)");
        return absl::OkStatus();
      case OpRule::kFence:
        if (inst.mods.scope == ir::Scope::kNone) return Error(i, "fence needs a scope (cta, gpu, sys)");
        return absl::OkStatus();
      case OpRule::kCpAsync: {
        const ir::CacheOp c = inst.mods.cache;
        if (c == ir::CacheOp::kNone) return Error(i, "cp.async needs a cache operator (.ca or .cg)");
        if (c != ir::CacheOp::kCa && c != ir::CacheOp::kCg) {
          return Error(i, StrCat("cache operator .", ir::CacheOpName(c), " does not apply to cp.async (only .ca and .cg)"));
        }
        if (absl::Status s = CheckSignature(i, groups); !s.ok()) return s;
        const uint64_t cp_size = inst.srcs[2].bits();  // an immediate (the signature)
        if (cp_size != 4 && cp_size != 8 && cp_size != 16) {
          return Error(i, StrCat("cp-size ", cp_size, " is not 4, 8 or 16"));
        }
        if (c == ir::CacheOp::kCg && cp_size != 16) {
          return Error(i, StrCat("cp.async.cg copies 16 bytes, not ", cp_size, " (.ca copies 4, 8 or 16)"));
        }
        if (inst.srcs.size() == 4 && inst.srcs[3].is_imm() && inst.srcs[3].bits() > cp_size) {
          return Error(i, StrCat("src-size ", inst.srcs[3].bits(), " is larger than the cp-size ", cp_size));
        }
        return absl::OkStatus();
      }
      case OpRule::kCvtPack: {
        const std::string name = StrCat("cvt.", ir::TypeName(t));
        if (inst.mods.type2 != ScalarType::kF32) {
          return Error(i, StrCat(name, " packs two f32 values: the second type must be f32, not ",
                                 inst.mods.type2 == ScalarType::kNone ? "none" : ir::TypeName(inst.mods.type2)));
        }
        if (inst.mods.rounding != ir::Rounding::kRn) return Error(i, StrCat(name, ".f32 needs .rn"));
        return CheckSignature(i, groups);
      }
      case OpRule::kMatrix:
        if (inst.mods.space != ir::StateSpace::kShared) {
          return Error(i, StrCat(info.mnemonic, " works on shared memory only (.shared), not ",
                                 inst.mods.space == ir::StateSpace::kGeneric
                                     ? std::string_view("generic addresses")
                                     : ir::StateSpaceName(inst.mods.space)));
        }
        if (absl::Status s = CheckAddress(i, 0, ir::StateSpace::kShared); !s.ok()) return s;
        return CheckSignature(i, groups);
      case OpRule::kRedux: {
        const ir::AtomOp op = inst.mods.atom;
        const bool arith = op == ir::AtomOp::kAdd || op == ir::AtomOp::kMin || op == ir::AtomOp::kMax;
        const bool bits = op == ir::AtomOp::kAnd || op == ir::AtomOp::kOr || op == ir::AtomOp::kXor;
        if (!arith && !bits) {
          return Error(i, StrCat("redux.sync needs an operation (.add, .min, .max on u32/s32; .and, .or, .xor on b32)",
                                 op == ir::AtomOp::kNone ? "" : StrCat(", not .", ir::AtomOpName(op))));
        }
        if (arith && t == ScalarType::kB32) {
          return Error(i, StrCat("redux.sync.", ir::AtomOpName(op), " applies to u32 and s32, not b32"));
        }
        if (bits && t != ScalarType::kB32) {
          return Error(i, StrCat("redux.sync.", ir::AtomOpName(op), " applies to b32 only, not ", ir::TypeName(t)));
        }
        return CheckSignature(i, groups);
      }
    }
    return absl::OkStatus();
  }

  // Label bindings and branch targets, noted instruction by instruction of
  // a body whose structure was checked (labels and branches name a label).
  // The per-label and per-register tables of LabelScan and DefScan, every
  // entry UINT32_MAX at first, in one buffer: on the stack for kernels of up
  // to kInline entries (two per label and per register), else one
  // allocation (a vector each took an allocation, a fill and a free apiece).
  class ScanTables {
   public:
    // stamp() has an entry more (regs()): see DefScan::Note.
    ScanTables(size_t labels, size_t regs) : labels_(labels), regs_(regs) {
      const size_t n = 2 * labels + 2 * regs + 1;
      uint32_t* p = inline_;
      if (n > kInline) {
        heap_.reset(new uint32_t[n]);
        p = heap_.get();
      }
      std::memset(p, 0xFF, n * sizeof(uint32_t));  // UINT32_MAX in every entry
      data_ = p;
    }
    ScanTables(const ScanTables&) = delete;
    ScanTables& operator=(const ScanTables&) = delete;
    size_t labels() const { return labels_; }
    size_t regs() const { return regs_; }
    uint32_t* bound_at() const { return data_; }
    uint32_t* first_branch() const { return data_ + labels_; }
    uint32_t* def_at() const { return data_ + 2 * labels_; }
    uint32_t* stamp() const { return data_ + 2 * labels_ + regs_; }

   private:
    // 512 bytes: the frame of Run, which every check is called below, stays
    // small (a deeper stack is a page fault more on a fresh process's first
    // codegen, whose deepest point is this verifier's checks); kernels of up
    // to 63 labels and registers fit.
    static constexpr size_t kInline = 128;
    size_t labels_, regs_;
    uint32_t* data_;
    std::unique_ptr<uint32_t[]> heap_;
    uint32_t inline_[kInline];
  };

  struct LabelScan {
    explicit LabelScan(const ScanTables& t) : bound_at(t.bound_at()), first_branch(t.first_branch()), labels(t.labels()) {}
    void Note(const Instruction& inst, size_t i) {
      if (inst.op == Opcode::kLabel) {
        const uint32_t l = inst.srcs[0].id;
        if (bound_at[l] == UINT32_MAX) {
          bound_at[l] = static_cast<uint32_t>(i);
        } else if (twice == SIZE_MAX) {
          twice = i;
          twice_label = l;
        }
      } else if (inst.op == Opcode::kBra) {
        const uint32_t l = inst.srcs[0].id;
        if (first_branch[l] == UINT32_MAX) first_branch[l] = static_cast<uint32_t>(i);
      }
    }
    uint32_t* bound_at;      // by label: the first instruction binding it; UINT32_MAX: none
    uint32_t* first_branch;  // by label: the first bra to it; UINT32_MAX: none
    size_t labels;
    size_t twice = SIZE_MAX;             // the first instruction binding a label bound before it
    uint32_t twice_label = 0;
  };

  // Labels are bound exactly once, and every branch target is bound: the
  // first instruction in body order that breaks either, the first rule first.
  absl::Status LabelErrors(const LabelScan& scan) const {
    if (scan.twice != SIZE_MAX) return BoundTwice(scan.twice, scan.bound_at[scan.twice_label]);
    uint32_t unbound = UINT32_MAX;
    for (size_t l = 0; l < scan.labels; ++l) {
      if (scan.bound_at[l] == UINT32_MAX) unbound = std::min(unbound, scan.first_branch[l]);
    }
    if (unbound != UINT32_MAX) return Error(unbound, "branch to a label that is never bound");
    return absl::OkStatus();
  }

  // The error for instruction i binding a label that instruction
  // first_bound bound first (out of line, as DefinedTwice).
  [[gnu::cold]] [[gnu::noinline]] absl::Status BoundTwice(size_t i, uint32_t first_bound) const {
    std::string first = ir::FormatLoc(k_.body[first_bound].loc);
    return Error(i, StrCat("label is bound twice", first.empty() ? "" : StrCat(" (first at ", first, ")")));
  }

  absl::Status CheckLabels() const {
    ScanTables tables(k_.labels.size(), 0);
    LabelScan scan(tables);
    for (size_t i = 0; i < k_.body.size(); ++i) scan.Note(k_.body[i], i);
    return LabelErrors(scan);
  }

  // Where each register is first defined, the first instruction that
  // defines a register again though it is not mutable, and whether every
  // use has an unguarded definition of its register above it with no label
  // in between (uses_defined_above).
  //
  // When it does, every use is defined on every path, and
  // CheckDefinedBeforeUse has nothing to report: such a use is reached only
  // by falling through from its definition (blocks start at labels and
  // after branches and terminators, and a block that does not start at a
  // label is entered only from the block before it, or never, after ret or
  // an unconditional bra: unreachable, where everything counts as defined),
  // so the definition's block dominates the use's. Straight-line kernels,
  // and kernels whose code after each label reads only what is defined after
  // that label (a bounds check around the whole body, as in vector_add),
  // skip that analysis. A use after a label of a register defined before
  // that label (after an if's end, in a loop) sends the kernel through it
  // (which finds the errors and words their messages). A stamp per register
  // (the span of code between two labels of its last unguarded definition)
  // answers it in the same walk.
  struct DefScan {
    explicit DefScan(const ScanTables& t)
        : def_at(t.def_at()), stamp(t.stamp()), nregs(static_cast<uint32_t>(t.regs())) {}
    void Note(const ir::Kernel& k, const Instruction& inst, size_t i) {
      span += inst.op == Opcode::kLabel;
      if (uses_defined_above) {  // once false, it stays false: the rest of the walk is not needed
        // Every operand and the guard, without a branch on whether it reads
        // a register (a cold predictor missed those): one that does not
        // reads stamp[nregs], and its comparison does not count.
        bool fine = true;
        for (const Operand& op : inst.srcs) fine &= !op.reads_reg() | (stamp[std::min(op.id, nregs)] == span);
        fine &= !inst.guard.valid() | (stamp[std::min(inst.guard.id, nregs)] == span);
        uses_defined_above = fine;
      }
      const bool guarded = inst.guarded();
      for (ir::Reg d : inst.dsts) {
        if (def_at[d.id] == UINT32_MAX) {
          def_at[d.id] = static_cast<uint32_t>(i);
        } else if (!k.regs[d.id].is_mutable && twice == SIZE_MAX) {
          twice = i;
          twice_reg = d.id;
        }
        stamp[d.id] = guarded ? stamp[d.id] : span;
      }
    }
    uint32_t* def_at;  // by register: its first definition; UINT32_MAX: none
    uint32_t* stamp;   // by register: the span of its last unguarded definition; UINT32_MAX: none
    uint32_t nregs;    // the registers; stamp[nregs] is never written
    uint32_t span = 0;  // code between two labels, counted from 0
    bool uses_defined_above = true;
    size_t twice = SIZE_MAX;
    uint32_t twice_reg = 0;
  };

  // Must-defined analysis without a register set per block. A register is
  // defined at the top of block b when every path from the entry to b passes
  // an unguarded definition of it (b unreachable: vacuously). For a register
  // defined once that is exactly "its defining block strictly dominates b";
  // for a mutable register a dominating definition suffices, and otherwise a
  // backward search from b looks for a path to the entry that avoids every
  // block defining it. The blocks are visited in dominator-tree preorder with
  // a count per register of the blocks on the tree path that define it, so
  // the cost is linear in the body (plus those searches, which only registers
  // assigned on several paths with no dominating assignment need). The first
  // error in body order is reported, as a block-order walk would.
  //
  // Straight-line kernels, and kernels whose code after each label reads only
  // what is defined after that label (a bounds check around the whole body,
  // as in vector_add), need none of it: Run skips it when DefScan found
  // every use defined above it (DefScan::uses_defined_above).
  //
  // Out of line: inlined, its locals (the CFG, the dominator tree, the hash
  // tables) took 400 bytes of Run's frame, below which every check runs.
  [[gnu::noinline]] absl::Status CheckDefinedBeforeUse() const {
    const size_t nregs = k_.regs.size();
    const Cfg cfg = Cfg::Build(k_);
    const uint32_t nb = static_cast<uint32_t>(cfg.blocks.size());
    const std::vector<uint32_t> idom = ImmediateDominators(cfg);
    const DominatorTree tree = DominatorTree::FromIdom(idom);
    const std::vector<uint32_t>& child_begin = tree.child_begin;
    const std::vector<uint32_t>& children = tree.children;
    // Blocks holding an unguarded definition of each mutable register, made
    // on the first search (most kernels need none).
    absl::flat_hash_set<uint64_t> mutable_def_blocks;
    bool have_mutable_def_blocks = false;
    auto key = [](uint32_t reg, uint32_t block) { return (uint64_t{reg} << 32) | block; };
    auto find_mutable_def_blocks = [&] {
      have_mutable_def_blocks = true;
      for (uint32_t b = 0; b < nb; ++b) {
        for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
          const Instruction& inst = k_.body[i];
          if (inst.guarded()) continue;
          for (ir::Reg d : inst.dsts) {
            if (k_.regs[d.id].is_mutable) mutable_def_blocks.insert(key(d.id, b));
          }
        }
      }
    };
    // Whether mutable register r is defined at the top of reachable block b
    // although no block dominating b defines it: no path from the entry to b
    // avoids its definitions.
    absl::flat_hash_map<uint64_t, bool> defined_memo;
    std::vector<uint32_t> seen(nb, UINT32_MAX);
    uint32_t search = 0;
    std::vector<uint32_t> work;
    auto defined_on_all_paths = [&](uint32_t r, uint32_t b) {
      if (b == 0 || !k_.regs[r].is_mutable) return false;
      auto [it, inserted] = defined_memo.try_emplace(key(r, b), true);
      if (!inserted) return it->second;
      if (!have_mutable_def_blocks) find_mutable_def_blocks();
      ++search;
      work.assign(1, b);
      seen[b] = search;
      while (!work.empty()) {
        uint32_t x = work.back();
        work.pop_back();
        for (uint32_t p : cfg.preds(x)) {
          if (seen[p] == search || idom[p] == UINT32_MAX || mutable_def_blocks.contains(key(r, p))) continue;
          if (p == 0) return it->second = false;
          seen[p] = search;
          work.push_back(p);
        }
      }
      return true;
    };

    std::vector<uint32_t> on_path(nregs, 0);          // dominating (or earlier in-block) blocks defining it
    std::vector<uint32_t> entered(nregs, UINT32_MAX);  // the last block that counted it in on_path
    std::vector<uint32_t> counted;                      // what the blocks on the tree path counted
    size_t first_error = SIZE_MAX;
    absl::Status error;
    std::vector<bool> ever_defined;  // for messages: UsedBeforeDefined
    // Registers defined in the current block under a guard (`@%p mov %r, 1`):
    // a later use under the same guard is fine while %p is unchanged.
    struct GuardedDef {
      uint32_t reg, guard;
      bool negated;
    };
    std::vector<GuardedDef> guarded_defs;
    // Checks the uses of block b before the first error found so far, and
    // counts every unguarded definition of b (its dominator-tree descendants
    // may come earlier in the body).
    auto enter_block = [&](uint32_t b) {
      guarded_defs.clear();
      for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
        const Instruction& inst = k_.body[i];
        if (i < first_error) {
          auto defined_under_guard = [&](ir::Reg r) {
            if (!inst.guarded() || inst.guard == r) return false;
            for (const GuardedDef& g : guarded_defs) {
              if (g.reg == r.id && g.guard == inst.guard.id && g.negated == inst.guard_negated) return true;
            }
            return false;
          };
          absl::Status status;
          ir::ForEachUse(inst, [&](ir::Reg r) {
            if (status.ok() && on_path[r.id] == 0 && !defined_under_guard(r) && !defined_on_all_paths(r.id, b)) {
              status = UsedBeforeDefined(i, r, ever_defined);
            }
          });
          if (!status.ok()) {
            first_error = i;
            error = std::move(status);
          }
        }
        for (ir::Reg d : inst.dsts) {
          // Redefining a guard forgets what was defined under it.
          if (!guarded_defs.empty()) {
            std::erase_if(guarded_defs, [&](const GuardedDef& g) { return g.guard == d.id; });
          }
          if (inst.guarded()) {
            guarded_defs.push_back({d.id, inst.guard.id, inst.guard_negated});
          } else if (entered[d.id] != b) {
            entered[d.id] = b;
            ++on_path[d.id];
            counted.push_back(d.id);
          }
        }
      }
    };
    // Preorder over the dominator tree; unreachable blocks are not visited
    // (everything counts as defined there).
    struct Frame {
      uint32_t block, next_child, counted_mark;
    };
    std::vector<Frame> stack;
    auto push = [&](uint32_t b) {
      const uint32_t mark = static_cast<uint32_t>(counted.size());
      enter_block(b);
      stack.push_back({b, child_begin[b], mark});
    };
    if (nb > 0) push(0);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next_child < child_begin[top.block + 1]) {
        push(children[top.next_child++]);
      } else {
        for (size_t j = top.counted_mark; j < counted.size(); ++j) --on_path[counted[j]];
        counted.resize(top.counted_mark);
        stack.pop_back();
      }
    }
    if (first_error != SIZE_MAX) return error;
    return absl::OkStatus();
  }

  // The error for a use of `r` by instruction i where it is not defined on
  // every path. `ever_defined`, by register (whether any instruction defines
  // it), is filled on the first call.
  [[gnu::cold]] [[gnu::noinline]] absl::Status UsedBeforeDefined(size_t i, ir::Reg r,
                                                                  std::vector<bool>& ever_defined) const {
    if (ever_defined.empty()) {
      ever_defined.assign(k_.regs.size(), false);
      for (const Instruction& inst : k_.body) {
        for (ir::Reg d : inst.dsts) ever_defined[d.id] = true;
      }
    }
    return Error(i, StrCat("%", r.id, " is used before it is defined",
                           ever_defined[r.id] ? " on some path" : " (it is never defined)"));
  }

  const ir::Kernel& k_;
  const ReferenceLimits limits_;  // ReferencesFine's
};

}  // namespace

bool IsIdentifier(std::string_view s) {
  // One flag over the characters: no branch per character and no call
  // (std::isalnum is a library call per character). The letters and digits
  // are ASCII's, as std::isalpha and std::isalnum had them in the "C"
  // locale, which ptxforge never changes (PTX identifiers are ASCII).
  return PlainIdentifierHash(s).second;
}

std::optional<std::string> FindBadReference(const Kernel& kernel, const Instruction& inst) {
  if (inst.guard.valid() && !kernel.valid_reg(inst.guard)) return "the guard is not a register of this kernel";
  for (size_t d = 0; d < inst.dsts.size(); ++d) {
    if (!kernel.valid_reg(inst.dsts[d])) return StrCat("operand ", d, " is not a register of this kernel");
  }
  for (size_t s = 0; s < inst.srcs.size(); ++s) {
    const Operand& op = inst.srcs[s];
    const size_t n = inst.dsts.size() + s;
    const bool addr = op.kind == OperandKind::kAddress;
    if (op.reads_reg() && !kernel.valid_reg(op.reg())) return StrCat("operand ", n, " is not a register of this kernel");
    if ((op.kind == OperandKind::kSymbol || (addr && op.base == AddressBase::kSymbol)) &&
        op.id >= kernel.variables.size()) {
      return StrCat("operand ", n, " names variable ", op.id, ", which does not exist");
    }
    if (addr && op.base == AddressBase::kParam && op.id >= kernel.params.size()) {
      return StrCat("operand ", n, " names param ", op.id, ", which does not exist");
    }
    if (op.kind == OperandKind::kLabel && op.id >= kernel.labels.size()) {
      return StrCat("operand ", n, " names label ", op.id, ", which does not exist");
    }
    if (op.kind == OperandKind::kSpecial && op.id >= static_cast<uint32_t>(kNumSpecialRegs)) {
      return "unknown special register";
    }
    if (op.kind == OperandKind::kNone) return StrCat("operand ", n, " is empty");
  }
  if (inst.op == Opcode::kRaw && inst.raw_index >= kernel.raw_ptx.size()) return "raw PTX block does not exist";
  return std::nullopt;
}

namespace {

// A 64-bit hash in two lanes: each word is mixed into its lane with a
// multiply and an xor-shift (the finaliser of MurmurHash3's 64-bit mix,
// applied per word). Word() feeds lane a, Pair() one word to each lane: the
// two multiply chains run side by side, so a kernel's words hash in about
// half the time of one chain (a codegen fingerprints its kernel twice, in
// Finish() and in the pipeline's verify pass). For fixed words each lane's
// step is a bijection of its state, so changing any one word always
// changes the lane it went to and the value.
class Hasher {
 public:
  void Word(uint64_t w) { a_ = Mix(a_, w); }
  void Pair(uint64_t wa, uint64_t wb) {
    a_ = Mix(a_, wa);
    b_ = Mix(b_, wb);
  }
  void Bytes(std::string_view s) {
    Word(s.size());
    const char* p = s.data();
    size_t i = 0;
    for (; i + 16 <= s.size(); i += 16) Pair(Load<uint64_t>(p + i), Load<uint64_t>(p + i + 8));
    // The last 1-15 bytes as two words that together cover each of them,
    // read with fixed-size loads (overlapping when fewer than 16) rather
    // than a memcpy of the remainder: that was a call into libc's memcpy,
    // which branches on the size, for each name of the kernel. With the
    // size hashed first, the two words still determine the bytes.
    const size_t t = s.size() - i;
    p += i;
    if (t >= 8) {
      Pair(Load<uint64_t>(p), Load<uint64_t>(p + t - 8));
    } else if (t >= 4) {
      Pair(Load<uint32_t>(p), Load<uint32_t>(p + t - 4));
    } else if (t > 0) {
      Pair(static_cast<uint8_t>(p[0]) | static_cast<uint64_t>(static_cast<uint8_t>(p[t / 2])) << 8,
           static_cast<uint8_t>(p[t - 1]));
    }
  }
  void Requirement(const TargetRequirement& r) {
    Pair(static_cast<uint64_t>(static_cast<uint32_t>(r.sm)) | uint64_t{r.arch_specific} << 32,
         static_cast<uint64_t>(static_cast<uint32_t>(r.ptx.value)));
  }
  uint64_t value() const {
    uint64_t h = (a_ ^ (b_ * 0xC2B2AE3D27D4EB4Full)) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h == 0 ? 1 : h;
  }

 private:
  template <typename T>
  static uint64_t Load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  static uint64_t Mix(uint64_t h, uint64_t w) {
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
  }
  uint64_t a_ = 0x243F6A8885A308D3ull;
  uint64_t b_ = 0x13198A2E03707344ull;
};

static_assert(std::is_trivially_copyable_v<Modifiers> && std::has_unique_object_representations_v<Modifiers> &&
                  sizeof(Modifiers) <= 32,
              "Fingerprint reads Modifiers as four words");

}  // namespace

uint64_t Fingerprint(const Kernel& kernel) {
  Hasher h;
  h.Bytes(kernel.name);
  h.Pair(static_cast<uint64_t>(kernel.target), kernel.params.size());
  for (const Param& p : kernel.params) {
    h.Bytes(p.name);
    h.Word(static_cast<uint64_t>(p.type));
  }
  h.Word(kernel.variables.size());
  for (const Variable& v : kernel.variables) {
    h.Bytes(v.name);
    h.Pair(static_cast<uint64_t>(v.space) | static_cast<uint64_t>(v.elem) << 8 | uint64_t{v.is_extern} << 16 |
               uint64_t{v.count} << 32,
           v.align);
  }
  // Registers and labels by their hints' ids, then the names those ids
  // index: one word per register, with no branch on whether it has a hint.
  h.Word(kernel.regs.size());
  for (const RegInfo& r : kernel.regs) {
    h.Word(static_cast<uint64_t>(r.type) | uint64_t{r.is_mutable} << 8 | uint64_t{r.hint_id} << 32);
  }
  h.Word(kernel.labels.size());
  for (const LabelInfo& l : kernel.labels) h.Word(l.hint_id);
  h.Word(kernel.names.size());
  for (std::string_view name : kernel.names) h.Bytes(name);
  h.Word(kernel.body.size());
  for (const Instruction& inst : kernel.body) {
    uint64_t mods[4] = {0, 0, 0, 0};
    std::memcpy(mods, &inst.mods, sizeof(Modifiers));
    h.Pair(static_cast<uint64_t>(inst.op) | uint64_t{inst.guard_negated} << 8 | uint64_t{inst.dsts.size()} << 16 |
               uint64_t{inst.srcs.size()} << 24 | uint64_t{inst.guard.id} << 32,
           mods[0]);
    h.Pair(mods[1], mods[2]);
    // mma's fields are the fourth word: zero for every other instruction.
    // The first definition shares a word with raw_index, the others follow
    // (the count is in the first word).
    const size_t ndsts = inst.dsts.size();
    h.Pair(mods[3], uint64_t{inst.raw_index} | (ndsts != 0 ? uint64_t{inst.dsts[0].id} << 32 : 0));
    for (size_t i = 1; i < ndsts; ++i) h.Word(inst.dsts[i].id);
    for (const Operand& o : inst.srcs) {
      h.Pair(static_cast<uint64_t>(o.kind) | static_cast<uint64_t>(o.base) << 8 | static_cast<uint64_t>(o.type) << 16 |
                 uint64_t{o.id} << 32,
             static_cast<uint64_t>(o.value));
    }
  }
  h.Word(kernel.raw_ptx.size());
  for (const RawPtxBlock& r : kernel.raw_ptx) {
    h.Bytes(r.text);
    h.Requirement(r.requirement);
  }
  h.Pair(uint64_t{kernel.bounds.maxntid[0]} | uint64_t{kernel.bounds.maxntid[1]} << 32,
         uint64_t{kernel.bounds.maxntid[2]} | uint64_t{kernel.bounds.reqntid[0]} << 32);
  h.Pair(uint64_t{kernel.bounds.reqntid[1]} | uint64_t{kernel.bounds.reqntid[2]} << 32,
         uint64_t{kernel.bounds.minnctapersm} | uint64_t{kernel.bounds.maxnreg} << 32);
  return h.value();
}

void MarkVerified(Kernel& kernel) { kernel.verified_fingerprint = Fingerprint(kernel); }

bool IsMarkedVerified(const Kernel& kernel) {
  return kernel.verified_fingerprint != 0 && kernel.verified_fingerprint == Fingerprint(kernel);
}

absl::Status VerifyKernelOnce(Kernel& kernel) {
  if (IsMarkedVerified(kernel)) return absl::OkStatus();
  absl::Status s = VerifyKernel(kernel);
  if (s.ok()) MarkVerified(kernel);
  return s;
}

absl::Status CheckWellFormed(const Kernel& kernel) { return Verifier(kernel).RunWellFormed(); }

absl::Status VerifyKernel(const ir::Kernel& kernel) { return Verifier(kernel).Run(); }

absl::Status VerifyModule(const ir::Module& module) {
  std::vector<const ir::Kernel*> kernels;
  for (size_t i = 0; i < module.kernels.size(); ++i) {
    const ir::Kernel& k = module.kernels[i];
    if (k.target != module.target) {
      return absl::InvalidArgumentError(StrCat("kernel ", k.name, " targets ", ir::TargetName(k.target),
                                                     " but the module targets ", ir::TargetName(module.target)));
    }
    for (size_t j = 0; j < i; ++j) {
      if (module.kernels[j].name == k.name) {
        return absl::InvalidArgumentError(StrCat("the module has two kernels named ", k.name));
      }
    }
    if (absl::Status s = VerifyKernel(k); !s.ok()) return s;
    kernels.push_back(&k);
  }
  if (module.ptx_version) {
    ir::PtxVersion needed = ir::RequiredPtxVersion(module.target, kernels);
    if (*module.ptx_version < needed) {
      return absl::InvalidArgumentError(StrCat("PTX ISA ", module.ptx_version->ToString(),
                                                     " was pinned, but the module needs ", needed.ToString(),
                                                     " (target ", ir::TargetName(module.target), " and its instructions)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ptxforge::ir
