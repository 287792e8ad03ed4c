// The opcode table, built once from opcodes.def.
#include "ir/opcode.h"

#include <cstdio>
#include <cstdlib>

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
};

// Parses "{rnd}{ftz}{type}" into slots. The table is ours, so a bad format is
// a programming error caught by every test run.
void ParseFormat(OpInfo& info) {
  std::string_view f = info.format;
  info.num_slots = 0;
  while (!f.empty()) {
    size_t close = f.find('}');
    if (f[0] != '{' || close == std::string_view::npos) break;
    std::string_view name = f.substr(1, close - 1);
    bool found = false;
    for (const Slot& s : kSlotNames) {
      if (s.name == name && info.num_slots < static_cast<int>(info.slots.size())) {
        info.slots[info.num_slots++] = s.slot;
        found = true;
      }
    }
    if (!found) {
      std::fprintf(stderr, "ptxforge: bad opcode format '%.*s'\n", static_cast<int>(info.format.size()),
                   info.format.data());
      std::abort();
    }
    f.remove_prefix(close + 1);
  }
}

constexpr TargetRequirement Req(int sm, int ptx) { return TargetRequirement{sm, false, PtxVersion{ptx}}; }

struct Table {
  std::array<OpInfo, kNumOpcodes> ops;
  Table() {
    int i = 0;
#define OP(id, mn, fmt, nd, ns, rule, types, flags, cls, sm, ptx, f16sm, f16ptx, bf16sm, bf16ptx) \
  ops[i++] = OpInfo{mn,                                                                          \
                    fmt,                                                                         \
                    nd,                                                                          \
                    ns,                                                                          \
                    OpRule::rule,                                                                \
                    types,                                                                       \
                    static_cast<uint16_t>(flags),                                                \
                    OpClass::cls,                                                                \
                    Req(sm, ptx),                                                                \
                    Req(f16sm, f16ptx),                                                          \
                    Req(bf16sm, bf16ptx),                                                        \
                    {},                                                                          \
                    0};
#include "ir/opcodes.def"
#undef OP
    for (OpInfo& info : ops) ParseFormat(info);
  }
};

constexpr std::string_view kOpcodeNames[] = {
#define OP(id, ...) std::string_view(#id).substr(1),
#include "ir/opcodes.def"
#undef OP
};

}  // namespace

const OpInfo& GetOpInfo(Opcode op) {
  static const Table* table = new Table();
  return table->ops[static_cast<int>(op)];
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
