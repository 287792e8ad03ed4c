// The opcode table, built once from opcodes.def.
#include "ir/opcode.h"

#include "ir/instruction.h"  // ModifierByte: which byte of Modifiers each slot prints

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ptxforge::ir {
namespace {

#define TY(x) MaskOf(ScalarType::x)
constexpr TypeMask TY_NONE = 0;
constexpr TypeMask TY_PRED = TY(kPred);
constexpr TypeMask TY_BITS = TY(kB16) | TY(kB32) | TY(kB64);
constexpr TypeMask TY_BITS8 = TY_BITS | TY(kB8);
constexpr TypeMask TY_UINT = TY(kU16) | TY(kU32) | TY(kU64);
constexpr TypeMask TY_SINT = TY(kS16) | TY(kS32) | TY(kS64);
constexpr TypeMask TY_INT = TY_UINT | TY_SINT;
constexpr TypeMask TY_INT8 = TY_INT | TY(kU8) | TY(kS8);
constexpr TypeMask TY_FLT = TY(kF32) | TY(kF64);
constexpr TypeMask TY_F16 = TY(kF16) | TY(kF16x2);
constexpr TypeMask TY_BF16 = TY(kBF16) | TY(kBF16x2);
constexpr TypeMask TY_HALF = TY(kF16) | TY(kBF16);

struct Slot {
  std::string_view name;
  ModSlot slot;
};
constexpr Slot kSlotNames[] = {
    {"sem", ModSlot::kSem},     {"scope", ModSlot::kScope}, {"space", ModSlot::kSpace},
    {"to", ModSlot::kTo},       {"nc", ModSlot::kNc},       {"cache", ModSlot::kCache},
    {"vec", ModSlot::kVec},     {"atom", ModSlot::kAtom},   {"shfl", ModSlot::kShfl},
    {"vote", ModSlot::kVote},   {"cmp", ModSlot::kCmp},     {"bool", ModSlot::kBool},
    {"mode", ModSlot::kMode},   {"rnd", ModSlot::kRnd},     {"ftz", ModSlot::kFtz},
    {"sat", ModSlot::kSat},     {"noftz", ModSlot::kNoftz}, {"uni", ModSlot::kUni},
    {"level", ModSlot::kLevel}, {"type", ModSlot::kType},   {"type2", ModSlot::kType2},
    {"variant", ModSlot::kVariant}, {"type3", ModSlot::kType3}, {"type4", ModSlot::kType4},
    {"shape", ModSlot::kShape},     {"layout", ModSlot::kLayout},
    {"num", ModSlot::kNum},
};

[[noreturn]] void BadTable(std::string_view what, std::string_view text) {
  std::fprintf(stderr, "ptxforge: bad opcode %.*s '%.*s'\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(text.size()), text.data());
  std::abort();
}

// The table is parsed at compile time (kOpInfos below is constinit), so a
// bad row is a compile error: BadTable is never reached in a constant
// expression, and calling it there fails the build.

// "u32" -> kU32 (fixed types in signatures).
constexpr ScalarType ParseTypeName(std::string_view name) {
  for (int t = 1; t < kNumScalarTypes; ++t) {
    if (TypeName(static_cast<ScalarType>(t)) == name) return static_cast<ScalarType>(t);
  }
  return ScalarType::kNone;
}

constexpr OperandSpec ParseSpec(std::string_view text, std::string_view whole) {
  OperandSpec spec;
  std::string_view t = text;
  if (!t.empty() && t[0] == '{') {
    size_t close = t.find('}');
    if (close == std::string_view::npos) BadTable("signature", whole);
    std::string_view n = t.substr(1, close - 1);
    if (n == "a" || n == "b" || n == "c") {
      spec.fragment = n == "a" ? Fragment::kA : n == "b" ? Fragment::kB : Fragment::kC;
      spec.group = 0;
    } else {
      int group = 0;
      for (char c : n) {
        if (c >= '0' && c <= '9') group = group * 10 + (c - '0');
      }
      spec.group = n == "v" || n == "x" ? 0 : static_cast<uint8_t>(group);
      spec.braces = n == "x";
    }
    t.remove_prefix(close + 1);
  }
  if (!t.empty() && t[0] == '%') { spec.cls = OperandClass::kReg; t.remove_prefix(1); }
  if (!t.empty() && t[0] == '#') { spec.cls = OperandClass::kImm; t.remove_prefix(1); }
  if (!t.empty() && t.back() == '?') { spec.optional = true; t.remove_suffix(1); }
  if (!t.empty() && t.back() == '~') { spec.byte_imm = true; t.remove_suffix(1); }
  if (t == "T") spec.rule = TypeRule::kType;
  else if (t == "T2") spec.rule = TypeRule::kType2;
  else if (t == "T3") spec.rule = TypeRule::kType3;
  else if (t == "T4") spec.rule = TypeRule::kType4;
  else if (t == "W") spec.rule = TypeRule::kWide;
  else if (t == "H") spec.rule = TypeRule::kHalf;
  else if (t == "A") spec.rule = TypeRule::kDpAcc;
  else if (t.starts_with('@')) {
    spec.rule = TypeRule::kAddress;
    // "@shared": an address in that space (the values of ir::StateSpace).
    constexpr std::string_view kSpaces[] = {"", "param", "global", "shared", "local", "const"};
    if (t.size() > 1) {
      spec.space = 0;
      for (uint8_t k = 1; k < std::size(kSpaces); ++k) {
        if (t.substr(1) == kSpaces[k]) spec.space = k;
      }
      if (spec.space == 0) BadTable("signature", whole);
    }
  }
  else if (t == "L") spec.rule = TypeRule::kLabel;
  else {
    spec.rule = TypeRule::kFixed;
    spec.fixed = ParseTypeName(t);
    if (spec.fixed == ScalarType::kNone) BadTable("signature", whole);
  }
  return spec;
}

// "T|pred?=T,u32,u32,u32" into the row's Signature.
constexpr void ParseSignature(OpInfo& info) {
  std::string_view text = info.signature_text;
  Signature& sig = info.sig;
  if (text == "*") {
    sig.any = true;
    return;
  }
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) BadTable("signature", text);
  auto parse_list = [&](std::string_view list, auto& out, uint8_t& n, bool dsts) {
    while (!list.empty()) {
      size_t cut = list.find_first_of(dsts ? ",|" : ",");
      std::string_view item = list.substr(0, cut);
      if (dsts && cut != std::string_view::npos && list[cut] == '|') sig.dst_sep = '|';
      if (n >= out.size()) BadTable("signature", text);
      out[n++] = ParseSpec(item, text);
      if (cut == std::string_view::npos) break;
      list.remove_prefix(cut + 1);
    }
  };
  parse_list(text.substr(0, eq), sig.dsts, sig.ndst, true);
  parse_list(text.substr(eq + 1), sig.srcs, sig.nsrc, false);
}

// Parses "{rnd}{ftz}{type}" into slots. The table is ours, so a bad format is
// a programming error caught by every test run.
constexpr void ParseFormat(OpInfo& info) {
  std::string_view f = info.format;
  info.num_slots = 0;
  while (!f.empty()) {
    if (f[0] != '{') {  // literal text up to the next slot
      size_t open = f.find('{');
      if (info.num_slots == static_cast<int>(info.slots.size())) break;
      info.slot_text[info.num_slots] = f.substr(0, open);
      info.slots[info.num_slots++] = ModSlot::kLiteral;
      f.remove_prefix(open == std::string_view::npos ? f.size() : open);
      continue;
    }
    size_t close = f.find('}');
    if (close == std::string_view::npos) break;
    std::string_view name = f.substr(1, close - 1);
    std::string_view list;
    bool required = false;
    if (size_t colon = name.find(':'); colon != std::string_view::npos) {
      list = name.substr(colon + 1);
      required = list.starts_with('!');
      if (required) list.remove_prefix(1);
      name = name.substr(0, colon);
    }
    if (!list.empty()) {
      if (name == "variant") {
        info.variants = list;
        info.variant_required = required;
      } else if (name == "shape") {
        info.shapes = list;
        info.shape_required = required;
      } else if (name == "layout") {
        info.layouts = list;
        info.layout_required = required;
      } else if (name == "type" || name == "type2" || name == "type3" || name == "type4") {
        // A list of allowed types: {type2:f16|bf16}.
        TypeMask mask = 0;
        for (std::string_view rest = list; !rest.empty();) {
          size_t bar = rest.find('|');
          ScalarType t = ParseTypeName(rest.substr(0, bar));
          if (t == ScalarType::kNone) BadTable("format", info.format);
          mask |= MaskOf(t);
          if (bar == std::string_view::npos) break;
          rest.remove_prefix(bar + 1);
        }
        info.type_lists[name == "type" ? 0 : name[4] - '1'] = mask;
      } else {
        BadTable("format", info.format);
      }
    }
    bool found = false;
    for (const Slot& s : kSlotNames) {
      if (s.name == name && info.num_slots < static_cast<int>(info.slots.size())) {
        info.slots[info.num_slots++] = s.slot;
        found = true;
      }
    }
    if (!found) BadTable("format", info.format);
    f.remove_prefix(close + 1);
  }
}

// The values a "a|b|c" list names (0 for an empty list).
constexpr uint8_t CountListValues(std::string_view list) {
  if (list.empty()) return 0;
  uint8_t n = 1;
  for (char c : list) n += c == '|';
  return n;
}

// OpInfo's derived facts, from the parsed format and signature.
constexpr void Derive(OpInfo& info) {
  info.slot_mask = 0;
  info.printed_bytes = 0;
  for (int i = 0; i < info.num_slots; ++i) {
    info.slot_mask |= SlotBit(info.slots[i]);
    if (const int byte = ModifierByte(info.slots[i]); byte >= 0) info.printed_bytes |= uint32_t{1} << byte;
  }
  info.enum_counts = {CountListValues(info.variants), CountListValues(info.shapes), CountListValues(info.layouts)};
  const Signature& sig = info.sig;
  auto fixed = [](const OperandSpec& spec) {
    return spec.group != 0 && spec.fragment == Fragment::kNone && !spec.optional;
  };
  info.fixed_operands = !sig.any;
  info.fixed_dsts = info.fixed_srcs = 0;
  info.has_address = false;
  for (int k = 0; k < sig.ndst; ++k) {
    info.fixed_operands &= fixed(sig.dsts[k]);
    info.fixed_dsts += sig.dsts[k].group;
  }
  for (int k = 0; k < sig.nsrc; ++k) {
    info.fixed_operands &= fixed(sig.srcs[k]);
    info.fixed_srcs += sig.srcs[k].group;
    info.has_address |= sig.srcs[k].rule == TypeRule::kAddress;
  }
}

constexpr TargetRequirement Req(int sm, int ptx) { return TableRequirement(sm, ptx); }

// The list of an enumerated slot, as the format gave it ("m16n8k8|m16n8k16@80").
std::string_view EnumList(const OpInfo& info, ModSlot slot) {
  switch (slot) {
    case ModSlot::kVariant: return info.variants;
    case ModSlot::kShape: return info.shapes;
    case ModSlot::kLayout: return info.layouts;
    default: return {};
  }
}

// Value `v` (1-based) of a list, with its "@SM" suffix; "" if out of range.
std::string_view ListEntry(std::string_view rest, int v) {
  for (int i = 1; !rest.empty(); ++i) {
    size_t bar = rest.find('|');
    if (i == v) return rest.substr(0, bar);
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  return "";
}

constexpr std::array<OpInfo, kNumOpcodes> MakeTable() {
    std::array<OpInfo, kNumOpcodes> ops{};
    int i = 0;
#define OP(id, mn, fmt, sig, rule, types, flags, cls, sm, ptx, f16sm, f16ptx, bf16sm, bf16ptx) \
  ops[i++] = OpInfo{mn,                                                                        \
                    fmt,                                                                       \
                    sig,                                                                       \
                    OpRule::rule,                                                              \
                    types,                                                                       \
                    static_cast<uint16_t>(flags),                                                \
                    OpClass::cls,                                                                \
                    Req(sm, ptx),                                                                \
                    Req(f16sm, f16ptx),                                                          \
                    Req(bf16sm, bf16ptx),                                                        \
                    {},                                                                          \
                    false,                                                                       \
                    {},                                                                          \
                    0,                                                                           \
                    {},                                                                          \
                    {}};
#include "ir/opcodes.def"
#undef OP
    for (OpInfo& info : ops) {
      ParseFormat(info);
      ParseSignature(info);
      Derive(info);
    }
    return ops;
}

constexpr std::string_view kOpcodeNames[] = {
#define OP(id, ...) std::string_view(#id).substr(1),
#include "ir/opcodes.def"
#undef OP
};

}  // namespace

namespace opcode_internal {
// Built at compile time: no work and no allocation on the first use.
constinit const std::array<OpInfo, kNumOpcodes> kOpInfos = MakeTable();
}  // namespace opcode_internal

std::string_view VariantName(const OpInfo& info, int v) { return EnumValueName(info, ModSlot::kVariant, v); }

int NumVariants(const OpInfo& info) { return NumEnumValues(info, ModSlot::kVariant); }

std::string_view EnumValueName(const OpInfo& info, ModSlot slot, int v) {
  std::string_view entry = ListEntry(EnumList(info, slot), v);
  return entry.substr(0, entry.find('@'));
}

int NumEnumValues(const OpInfo& info, ModSlot slot) {
  std::string_view list = EnumList(info, slot);
  if (list.empty()) return 0;
  return 1 + static_cast<int>(std::count(list.begin(), list.end(), '|'));
}

bool EnumRequired(const OpInfo& info, ModSlot slot) {
  switch (slot) {
    case ModSlot::kVariant: return info.variant_required;
    case ModSlot::kShape: return info.shape_required;
    case ModSlot::kLayout: return info.layout_required;
    default: return false;
  }
}

std::string_view EnumKindName(ModSlot slot) {
  switch (slot) {
    case ModSlot::kShape: return "shape";
    case ModSlot::kLayout: return "layout";
    default: return "mode";
  }
}

TargetRequirement EnumValueRequirement(const OpInfo& info, ModSlot slot, int v) {
  std::string_view entry = ListEntry(EnumList(info, slot), v);
  size_t at = entry.find('@');
  if (at == std::string_view::npos) return {};
  // "@80" or "@80/70": the SM, and the PTX ISA version when the SM's own minimum is not enough.
  std::string_view req = entry.substr(at + 1);
  size_t slash = req.find('/');
  int sm = std::atoi(std::string(req.substr(0, slash)).c_str());
  int ptx = slash == std::string_view::npos ? 0 : std::atoi(std::string(req.substr(slash + 1)).c_str());
  return TableRequirement(sm, ptx);
}

MatrixShape ParseMatrixShape(std::string_view name) {
  MatrixShape s;
  int* dims[3] = {&s.m, &s.n, &s.k};
  const char letters[3] = {'m', 'n', 'k'};
  size_t pos = 0;
  for (int d = 0; d < 3; ++d) {
    if (pos >= name.size() || name[pos] != letters[d]) return {};
    ++pos;
    int v = 0;
    size_t start = pos;
    while (pos < name.size() && name[pos] >= '0' && name[pos] <= '9') v = v * 10 + (name[pos++] - '0');
    if (pos == start) return {};
    *dims[d] = v;
  }
  return pos == name.size() ? s : MatrixShape{};
}

std::string_view OpcodeName(Opcode op) { return kOpcodeNames[static_cast<int>(op)]; }

std::string_view OpClassName(OpClass c) {
  switch (c) {
    case OpClass::kMove: return "move";
    case OpClass::kArith: return "arith";
    case OpClass::kSpecialFunc: return "special_func";
    case OpClass::kLogic: return "logic";
    case OpClass::kCompare: return "compare";
    case OpClass::kConvert: return "convert";
    case OpClass::kLoad: return "load";
    case OpClass::kStore: return "store";
    case OpClass::kAtomic: return "atomic";
    case OpClass::kControl: return "control";
    case OpClass::kSync: return "sync";
    case OpClass::kWarp: return "warp";
    case OpClass::kRaw: return "raw";
  }
  return "?";
}

}  // namespace ptxforge::ir
