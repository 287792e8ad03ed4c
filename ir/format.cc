// PTX-syntax rendering of instructions, driven by the opcode table's format column.
#include "ir/format.h"

#include <array>
#include <charconv>
#include <cstring>
#include <iterator>
#include <tuple>
#include <type_traits>

#include "ir/register_numbering.h"
#include "ir/strings.h"

namespace ptxforge::ir {

// Out of line, here, with the string's growth compiled into it (flatten):
// std::string's out-of-line members (append's _M_mutate, reserve's
// _M_create) are templates that every object using them instantiates, and
// the linker keeps the first copy in link order, which in a program linking
// the kernel library was one of a kernel's objects, next to its cold code. A
// fresh process's first print then ran code in a 64 KiB window that start-up
// had not mapped: one page fault more (bench/COLD_PATH.md, session 36).
[[gnu::flatten]] void LineBuffer::flush() {
  if (spill_reserve_ != 0) [[unlikely]] Spill();
  out_.append(begin_, static_cast<size_t>(p_ - begin_));
  p_ = begin_;
}

namespace {

void AppendDot(std::string& out, std::string_view s) {
  if (s.empty()) return;
  out.push_back('.');
  out.append(s);
}

std::string& Str(std::string& out) { return out; }
std::string& Str(LineBuffer& out) { return out.str(); }
void AppendDecimalTo(std::string& out, int64_t v) { AppendDecimal(out, v); }
void AppendDecimalTo(LineBuffer& out, int64_t v) { out.decimal(v); }

// ", " (or another separator and a space), or "|" alone.
void AppendSeparator(std::string& out, char sep) {
  out.push_back(sep);
  if (sep != '|') out.push_back(' ');
}
void AppendSeparator(LineBuffer& out, char sep) {
  char* p = out.reserve(2);
  p[0] = sep;
  p[1] = ' ';
  out.advance_to(p + 1 + (sep != '|'));
}

// Register names: through the caller's function, or PTX names read from a
// numbering (the PTX printer), which saves an indirect call per register.
struct NamesByFunction {
  RegNameFn fn;
  void operator()(std::string& out, Reg r) const { fn(out, r); }
};
struct PtxNames {
  const RegisterNumbering& numbering;
  void operator()(std::string& out, Reg r) const { AppendPtxRegName(out, numbering, r); }
  void operator()(LineBuffer& out, Reg r) const {
    // WritePtxRegName writes at most 14 bytes.
    static_assert(LineBuffer::kMaxPiece >= 16);
    char* p = out.reserve(16);
    out.advance_to(WritePtxRegName(p, numbering, r));
  }
};

// Operands as the signature groups them: a group of several registers in
// braces ("{%f1, %f2}"), others as they are, joined by `sep` (a comma and a
// space, or '|' alone). Without a fitting signature (malformed IR in a
// message), one flat list. `fixed` is OpInfo::fixed_dsts or fixed_srcs when
// the opcode's operands all have fixed sizes (each spec's group, nothing
// optional), else -1: when it is the number of specs, every group is one
// operand.
template <typename Out, typename T, typename AppendOne>
void AppendGrouped(Out& out, const Instruction& inst, std::span<const OperandSpec> specs, int fixed,
                   std::span<const T> items, char sep, AppendOne append_one) {
  // A signature lists at most 8 sources and 4 destinations (Signature).
  uint8_t sizes[std::tuple_size_v<decltype(Signature::srcs)>];
  static_assert(std::tuple_size_v<decltype(Signature::dsts)> <= std::size(sizes));
  // When every group is one operand (fixed sizes, as many as the specs) the
  // list prints flat whether it fits or not: no sizes to find.
  bool fits = false;
  if (fixed != static_cast<int>(specs.size())) {
    // GroupSizes' answer without the call when no group is a fragment or
    // optional: each spec's group, or the vector width for {v} and {x}.
    bool plain = true;
    size_t total = 0;
    for (size_t k = 0; k < specs.size(); ++k) {
      const OperandSpec& spec = specs[k];
      plain &= (spec.fragment == Fragment::kNone) & !spec.optional;
      sizes[k] = spec.group != 0 ? spec.group : inst.mods.vec;
      total += sizes[k];
    }
    fits = plain ? total == items.size() : GroupSizes(inst, specs, items.size(), sizes);
  }
  if (!fits) {
    append_one(items[0]);  // the caller prints no empty list
    for (size_t i = 1; i < items.size(); ++i) {
      AppendSeparator(out, sep);
      append_one(items[i]);
    }
    return;
  }
  size_t next = 0;
  bool first = true;
  for (size_t g = 0; g < specs.size(); ++g) {
    const uint8_t n = sizes[g];
    if (n == 0) continue;
    if (!first) AppendSeparator(out, sep);
    first = false;
    // An mma fragment, or an {x} group, is a vector even of one register ({%r4}: ptxas wants the braces).
    const bool braces = (n > 1) | (specs[g].fragment != Fragment::kNone) | specs[g].braces;
    if (braces) out.push_back('{');
    for (uint8_t k = 0; k < n; ++k) {
      if (k) AppendSeparator(out, ',');
      append_one(items[next++]);
    }
    if (braces) out.push_back('}');
  }
}

// What a modifier slot prints, by the value of the Modifiers byte it reads
// (ModifierByte): the name with its dot, "" when the value prints nothing.
// A table per slot instead of a switch on the slot and a call for its
// name: the switch's indirect jump mispredicted on most slots of a first
// codegen. Slots without a table (listed values, literal text) and values
// past a table's end take AppendSlot's switch, which says the same (ir_test
// compares the two for every slot and value).
struct Dotted {
  char text[8] = {};
  uint8_t size = 0;
};
constexpr Dotted Dot(std::string_view name, std::string_view dot = ".") {
  Dotted d;
  if (name.empty()) return d;
  for (char c : dot) d.text[d.size++] = c;
  for (char c : name) d.text[d.size++] = c;
  return d;
}
// A slot's texts from the names of its values (ir/instruction.h).
template <size_t N>
constexpr std::array<Dotted, N> Dots(const std::string_view (&names)[N]) {
  std::array<Dotted, N> t{};
  for (size_t i = 0; i < N; ++i) t[i] = Dot(names[i]);
  return t;
}
constexpr auto kSemText = Dots(names_internal::kMemSem);
constexpr auto kScopeText = Dots(names_internal::kScope);
constexpr auto kLevelText = [] {  // membar: the GPU is gl
  auto t = Dots(names_internal::kScope);
  t[static_cast<int>(Scope::kGpu)] = Dot("gl");
  return t;
}();
constexpr auto kSpaceText = Dots(names_internal::kStateSpace);
constexpr auto kCacheText = Dots(names_internal::kCacheOp);
constexpr auto kAtomText = Dots(names_internal::kAtomOp);
constexpr auto kShflText = Dots(names_internal::kShflMode);
constexpr auto kVoteText = Dots(names_internal::kVoteMode);
constexpr auto kCmpText = Dots(names_internal::kCmpOp);
constexpr auto kBoolText = Dots(names_internal::kBoolOp);
constexpr auto kModeText = Dots(names_internal::kMode);
constexpr auto kRndText = Dots(names_internal::kRounding);
constexpr Dotted kToText[] = {{}, Dot("to")};
constexpr Dotted kNcText[] = {{}, Dot("nc")};
constexpr Dotted kVecText[] = {{}, {}, Dot("v2"), Dot("v3"), Dot("v4")};
constexpr Dotted kFtzText[] = {{}, Dot("ftz")};
constexpr Dotted kSatText[] = {{}, Dot("sat")};
constexpr Dotted kNoftzText[] = {{}, Dot("noftz")};
constexpr Dotted kUniText[] = {{}, Dot("uni")};
constexpr Dotted kNumText[] = {Dot("0", ".x"), Dot("1", ".x"), Dot("2", ".x"), Dot("3", ".x"), Dot("4", ".x")};
// Type names by ScalarType; kNone prints nothing.
constexpr std::array<Dotted, kNumScalarTypes> TypeTexts() {
  std::array<Dotted, kNumScalarTypes> t{};
  for (int i = 1; i < kNumScalarTypes; ++i) t[i] = Dot(TypeName(static_cast<ScalarType>(i)));
  return t;
}
constexpr std::array<Dotted, kNumScalarTypes> kTypeText = TypeTexts();
static_assert(ScalarType::kNone == ScalarType{0});

// The mnemonics, padded to 16 bytes so that one is copied whole (size 0:
// longer, appended as it is). From the table OpInfo::mnemonic comes from.
struct Mnemonic {
  char text[16] = {};
  uint8_t size = 0;
};
constexpr Mnemonic Pad(std::string_view m) {
  Mnemonic p;
  if (m.size() > sizeof(p.text)) return p;
  for (char c : m) p.text[p.size++] = c;
  return p;
}
constexpr Mnemonic kMnemonics[] = {
#define OP(id, mnemonic, ...) Pad(mnemonic),
#include "ir/opcodes.def"
#undef OP
};
static_assert(std::size(kMnemonics) == kNumOpcodes);

struct SlotTable {
  uint8_t byte = 0;   // ModifierByte
  uint8_t count = 0;  // entries of `text`; 0: always AppendSlot
  const Dotted* text = nullptr;
};
template <size_t N>
constexpr SlotTable Table(ModSlot slot, const Dotted (&text)[N]) {
  return {static_cast<uint8_t>(ModifierByte(slot)), static_cast<uint8_t>(N), text};
}
template <size_t N>
constexpr SlotTable Table(ModSlot slot, const std::array<Dotted, N>& text) {
  return {static_cast<uint8_t>(ModifierByte(slot)), static_cast<uint8_t>(N), text.data()};
}
constexpr int kNumModSlots = static_cast<int>(ModSlot::kNum) + 1;
constexpr std::array<SlotTable, kNumModSlots> SlotTables() {
  std::array<SlotTable, kNumModSlots> t{};
  auto set = [&](ModSlot slot, SlotTable table) { t[static_cast<int>(slot)] = table; };
  set(ModSlot::kSem, Table(ModSlot::kSem, kSemText));
  set(ModSlot::kScope, Table(ModSlot::kScope, kScopeText));
  set(ModSlot::kSpace, Table(ModSlot::kSpace, kSpaceText));
  set(ModSlot::kTo, Table(ModSlot::kTo, kToText));
  set(ModSlot::kNc, Table(ModSlot::kNc, kNcText));
  set(ModSlot::kCache, Table(ModSlot::kCache, kCacheText));
  set(ModSlot::kVec, Table(ModSlot::kVec, kVecText));
  set(ModSlot::kAtom, Table(ModSlot::kAtom, kAtomText));
  set(ModSlot::kShfl, Table(ModSlot::kShfl, kShflText));
  set(ModSlot::kVote, Table(ModSlot::kVote, kVoteText));
  set(ModSlot::kCmp, Table(ModSlot::kCmp, kCmpText));
  set(ModSlot::kBool, Table(ModSlot::kBool, kBoolText));
  set(ModSlot::kMode, Table(ModSlot::kMode, kModeText));
  set(ModSlot::kRnd, Table(ModSlot::kRnd, kRndText));
  set(ModSlot::kFtz, Table(ModSlot::kFtz, kFtzText));
  set(ModSlot::kSat, Table(ModSlot::kSat, kSatText));
  set(ModSlot::kNoftz, Table(ModSlot::kNoftz, kNoftzText));
  set(ModSlot::kUni, Table(ModSlot::kUni, kUniText));
  set(ModSlot::kLevel, Table(ModSlot::kLevel, kLevelText));
  set(ModSlot::kType, Table(ModSlot::kType, kTypeText));
  set(ModSlot::kType2, Table(ModSlot::kType2, kTypeText));
  set(ModSlot::kType3, Table(ModSlot::kType3, kTypeText));
  set(ModSlot::kType4, Table(ModSlot::kType4, kTypeText));
  set(ModSlot::kNum, Table(ModSlot::kNum, kNumText));
  return t;
}
constexpr std::array<SlotTable, kNumModSlots> kSlotTables = SlotTables();

}  // namespace

void AppendVirtualRegName(std::string& out, Reg r) {
  out.push_back('%');
  AppendDecimal(out, r.id);
}

namespace {

template <typename Out>
void AppendLabelNameTo(Out& out, const Kernel& kernel, Label label) {
  out.append("$L");
  AppendDecimalTo(out, label.id);
  if (label.id < kernel.labels.size() && !kernel.hint(label).empty()) {
    out.push_back('_');
    out.append(kernel.hint(label));
  }
}

// The most bytes WriteImmediate writes: "-9223372036854775808" (20), "0d"
// and 16 digits (18).
constexpr size_t kImmediateBytes = 20;

// v in hex at p, zero-padded to `width` (at most 16) digits.
char* WritePaddedHex(char* p, uint64_t v, int width) {
  char digits[16];
  const int n = static_cast<int>(WriteHexDigits(digits, v) - digits);
  for (int i = n; i < width; ++i) *p++ = '0';
  std::memcpy(p, digits, static_cast<size_t>(n));
  return p + n;
}

// The immediate's PTX spelling at p (kImmediateBytes of room); returns its end.
char* WriteImmediate(char* p, ScalarType type, uint64_t bits) {
  int width = TypeBits(type);
  uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  bits &= mask;
  switch (type) {
    case ScalarType::kF32:
      p[0] = '0';
      p[1] = 'f';
      return WritePaddedHex(p + 2, bits, 8);
    case ScalarType::kF64:
      p[0] = '0';
      p[1] = 'd';
      return WritePaddedHex(p + 2, bits, 16);
    case ScalarType::kPred: *p = bits ? '1' : '0'; return p + 1;
    default: break;
  }
  if (KindOf(type) == TypeKind::kSigned) {
    int64_t v = width >= 64 ? static_cast<int64_t>(bits)
                            : static_cast<int64_t>(bits << (64 - width)) >> (64 - width);
    return std::to_chars(p, p + kImmediateBytes, v).ptr;
  }
  if (KindOf(type) == TypeKind::kUnsigned) return std::to_chars(p, p + kImmediateBytes, bits).ptr;
  // Bit types and the half family (stored as bits).
  p[0] = '0';
  p[1] = 'x';
  return WritePaddedHex(p + 2, bits, 0);
}

void AppendImmediateTo(LineBuffer& out, ScalarType type, uint64_t bits) {
  static_assert(LineBuffer::kMaxPiece >= kImmediateBytes);
  out.advance_to(WriteImmediate(out.reserve(kImmediateBytes), type, bits));
}
void AppendImmediateTo(std::string& out, ScalarType type, uint64_t bits) { AppendImmediate(out, type, bits); }

}  // namespace

void AppendLabelName(std::string& out, const Kernel& kernel, Label label) { AppendLabelNameTo(out, kernel, label); }

void AppendImmediate(std::string& out, ScalarType type, uint64_t bits) {
  char text[kImmediateBytes];
  out.append(text, WriteImmediate(text, type, bits));
}

void AppendSlot(std::string& out, const Instruction& inst, int i) {
  const OpInfo& info = inst.info();
  const Modifiers& m = inst.mods;
  switch (info.slots[i]) {
    case ModSlot::kSem: AppendDot(out, MemSemName(m.sem)); break;
    case ModSlot::kScope: AppendDot(out, ScopeName(m.scope)); break;
    case ModSlot::kSpace: AppendDot(out, StateSpaceName(m.space)); break;
    case ModSlot::kTo: if (m.cvta_to) out.append(".to"); break;
    case ModSlot::kNc: if (m.nc) out.append(".nc"); break;
    case ModSlot::kCache: AppendDot(out, CacheOpName(m.cache)); break;
    case ModSlot::kVec: if (m.vec > 1) StrAppend(&out, ".v", m.vec); break;
    case ModSlot::kAtom: AppendDot(out, AtomOpName(m.atom)); break;
    case ModSlot::kShfl: AppendDot(out, ShflModeName(m.shfl)); break;
    case ModSlot::kVote: AppendDot(out, VoteModeName(m.vote)); break;
    case ModSlot::kCmp: AppendDot(out, CmpOpName(m.cmp)); break;
    case ModSlot::kBool: AppendDot(out, BoolOpName(m.bool_op)); break;
    case ModSlot::kMode: AppendDot(out, ModeName(m.mode)); break;
    case ModSlot::kRnd: AppendDot(out, RoundingName(m.rounding)); break;
    case ModSlot::kFtz: if (m.ftz) out.append(".ftz"); break;
    case ModSlot::kSat: if (m.sat) out.append(".sat"); break;
    case ModSlot::kNoftz: if (m.noftz) out.append(".noftz"); break;
    case ModSlot::kUni: if (m.uni) out.append(".uni"); break;
    case ModSlot::kLevel:
      // membar levels: cta, gl (the GPU), sys.
      AppendDot(out, m.scope == Scope::kGpu ? std::string_view("gl") : ScopeName(m.scope));
      break;
    case ModSlot::kType: if (m.type != ScalarType::kNone) AppendDot(out, TypeName(m.type)); break;
    case ModSlot::kType2: if (m.type2 != ScalarType::kNone) AppendDot(out, TypeName(m.type2)); break;
    case ModSlot::kType3: if (m.type3 != ScalarType::kNone) AppendDot(out, TypeName(m.type3)); break;
    case ModSlot::kType4: if (m.type4 != ScalarType::kNone) AppendDot(out, TypeName(m.type4)); break;
    case ModSlot::kVariant:
    case ModSlot::kShape:
    case ModSlot::kLayout: AppendDot(out, EnumValueName(info, info.slots[i], EnumValue(m, info.slots[i]))); break;
    case ModSlot::kLiteral: out.append(info.slot_text[i]); break;
    case ModSlot::kNum: StrAppend(&out, ".x", m.vec); break;
  }
}

namespace {

template <typename Out>
void AppendOpcodeTo(Out& out, const Instruction& inst) {
  const OpInfo& info = inst.info();
  if constexpr (std::is_same_v<Out, LineBuffer>) {
    const Mnemonic& m = kMnemonics[static_cast<int>(inst.op)];
    if (m.size != 0) [[likely]] {
      out.put(m.text, m.size);
    } else {
      out.append(info.mnemonic);
    }
  } else {
    out.append(info.mnemonic);
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(&inst.mods);
  for (int i = 0; i < info.num_slots; ++i) {
    const SlotTable& table = kSlotTables[static_cast<int>(info.slots[i])];
    const uint8_t v = bytes[table.byte];
    if (v < table.count) {
      if constexpr (std::is_same_v<Out, LineBuffer>) {
        out.put(table.text[v].text, table.text[v].size);
      } else {
        out.append(table.text[v].text, table.text[v].size);
      }
    } else {
      AppendSlot(Str(out), inst, i);
    }
  }
}

}  // namespace

void AppendOpcode(std::string& out, const Instruction& inst) { AppendOpcodeTo(out, inst); }
void AppendOpcode(LineBuffer& out, const Instruction& inst) { AppendOpcodeTo(out, inst); }

namespace {

template <typename Out, typename RegName>
void AppendOperandWith(Out& out, const Kernel& kernel, const Operand& op, RegName reg_name) {
  // Registers and addresses, the most common operands, before the switch
  // (an indirect jump).
  if (op.kind == OperandKind::kReg) {
    reg_name(out, op.reg());
    return;
  }
  if (op.kind == OperandKind::kAddress) {
    out.push_back('[');
    if (op.base == AddressBase::kReg) {
      reg_name(out, op.reg());
    } else if (op.base == AddressBase::kSymbol) {
      out.append(op.id < kernel.variables.size() ? std::string_view(kernel.variables[op.id].name) : "<bad variable>");
    } else if (op.base == AddressBase::kParam) {
      out.append(op.id < kernel.params.size() ? std::string_view(kernel.params[op.id].name) : "<bad param>");
    }
    // ptxas reads `[%rd2+-8]`, not `[%rd2-8]`.
    if (op.value != 0) {
      out.push_back('+');
      AppendDecimalTo(out, op.value);
    }
    out.push_back(']');
    return;
  }
  switch (op.kind) {
    case OperandKind::kReg:
    case OperandKind::kAddress: return;  // above
    case OperandKind::kImm: AppendImmediateTo(out, op.type, op.bits()); return;
    case OperandKind::kSpecial:
      out.append(op.id < static_cast<uint32_t>(kNumSpecialRegs) ? SpecialRegName(static_cast<SpecialReg>(op.id))
                                                                 : "<bad special register>");
      return;
    case OperandKind::kSymbol:
      out.append(op.id < kernel.variables.size() ? std::string_view(kernel.variables[op.id].name) : "<bad variable>");
      return;
    case OperandKind::kLabel: AppendLabelNameTo(out, kernel, Label{op.id}); return;
    case OperandKind::kNone: out.append("<none>"); return;
  }
}

template <typename Out, typename RegName>
void AppendInstructionWith(Out& out, const Kernel& kernel, const Instruction& inst, RegName reg_name,
                           FormatStyle style) {
  const OpInfo& info = inst.info();
  if (inst.op == Opcode::kLabel) {
    if (!inst.srcs.empty()) AppendLabelNameTo(out, kernel, Label{inst.srcs[0].id});
    out.push_back(':');
    return;
  }
  if (inst.guarded()) {
    if constexpr (std::is_same_v<Out, LineBuffer>) {
      out.put("@!", 1 + inst.guard_negated);
    } else {
      out.append(inst.guard_negated ? "@!" : "@");
    }
    reg_name(out, inst.guard);
    out.push_back(' ');
  }
  if (inst.op == Opcode::kRaw) {
    std::string_view text = inst.raw_index < kernel.raw_ptx.size() ? std::string_view(kernel.raw_ptx[inst.raw_index].text)
                                                                  : std::string_view("<bad raw PTX>");
    const size_t nd = inst.dsts.size();
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (c == '{') {
        size_t j = i + 1;
        size_t index = 0;
        while (j < text.size() && text[j] >= '0' && text[j] <= '9') {
          if (index < (size_t{1} << 32)) index = index * 10 + (text[j] - '0');  // never wraps to a small index
          ++j;
        }
        if (j > i + 1 && j < text.size() && text[j] == '}' && index < nd + inst.srcs.size()) {
          if (index < nd) {
            reg_name(out, inst.dsts[index]);
          } else {
            AppendOperandWith(out, kernel, inst.srcs[index - nd], reg_name);
          }
          i = j;
          continue;
        }
      }
      out.push_back(c);
    }
    return;
  }
  AppendOpcodeTo(out, inst);
  // The operands follow a space, the sources ", " after the destinations.
  bool first = true;
  const Signature& sig = info.sig;
  if (!inst.dsts.empty() && style.dsts) {
    out.push_back(' ');
    first = false;
    AppendGrouped(out, inst, std::span(sig.dsts.data(), sig.ndst), info.fixed_operands ? info.fixed_dsts : -1,
                  std::span<const Reg>(inst.dsts.data(), inst.dsts.size()), sig.dst_sep == '|' ? '|' : ',',
                  [&](Reg r) { reg_name(out, r); });
  }
  if (!inst.srcs.empty()) {
    if (first) {
      out.push_back(' ');
    } else {
      AppendSeparator(out, ',');
    }
    AppendGrouped(out, inst, std::span(sig.srcs.data(), sig.nsrc), info.fixed_operands ? info.fixed_srcs : -1,
                  std::span<const Operand>(inst.srcs.data(), inst.srcs.size()), ',',
                  [&](const Operand& op) { AppendOperandWith(out, kernel, op, reg_name); });
  }
  if (style.semicolon) out.push_back(';');
}

}  // namespace

void AppendOperand(std::string& out, const Kernel& kernel, const Operand& op, RegNameFn reg_name) {
  AppendOperandWith(out, kernel, op, NamesByFunction{reg_name});
}

void AppendInstruction(std::string& out, const Kernel& kernel, const Instruction& inst, RegNameFn reg_name,
                       FormatStyle style) {
  AppendInstructionWith(out, kernel, inst, NamesByFunction{reg_name}, style);
}

void AppendPtxInstruction(LineBuffer& line, const Kernel& kernel, const Instruction& inst,
                          const RegisterNumbering& numbering) {
  AppendInstructionWith(line, kernel, inst, PtxNames{numbering}, FormatStyle{});
}

std::string FormatLoc(const SourceLoc& loc) {
  std::string_view file = loc.file_name();
  size_t slash = file.find_last_of('/');
  if (slash != std::string_view::npos) file.remove_prefix(slash + 1);
  if (file.empty()) return "";
  return StrCat(file, ":", loc.line());
}

std::string InstructionText(const Kernel& kernel, const Instruction& inst) {
  std::string out;
  AppendInstruction(out, kernel, inst, AppendVirtualRegName);
  return out;
}

}  // namespace ptxforge::ir
