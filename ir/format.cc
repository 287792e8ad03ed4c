// PTX-syntax rendering of instructions, driven by the opcode table's format column.
#include "ir/format.h"

#include "ir/strings.h"

namespace ptxforge::ir {
namespace {

void AppendDot(std::string& out, std::string_view s) {
  if (s.empty()) return;
  out.push_back('.');
  out.append(s);
}

// Operands as the signature groups them: a group of several registers in
// braces ("{%f1, %f2}"), others as they are, joined by `sep`. Without a
// fitting signature (malformed IR in a message), one flat list.
template <typename T, typename AppendOne>
void AppendGrouped(std::string& out, const Instruction& inst, std::span<const OperandSpec> specs, const T& items,
                   std::string_view sep, AppendOne append_one) {
  absl::InlinedVector<uint8_t, 8> sizes;
  const bool fits = GroupSizes(inst, specs, items.size(), sizes);
  if (!fits) sizes.assign(items.size(), 1);
  size_t next = 0;
  bool first = true;
  for (size_t g = 0; g < sizes.size(); ++g) {
    const uint8_t n = sizes[g];
    if (n == 0) continue;
    if (!first) out.append(sep);
    first = false;
    // An mma fragment, or an {x} group, is a vector even of one register ({%r4}: ptxas wants the braces).
    const bool braces = n > 1 || (fits && (specs[g].fragment != Fragment::kNone || specs[g].braces));
    if (braces) out.push_back('{');
    for (uint8_t k = 0; k < n; ++k) {
      if (k) out.append(", ");
      append_one(items[next++]);
    }
    if (braces) out.push_back('}');
  }
}

}  // namespace

void AppendVirtualRegName(std::string& out, Reg r) {
  out.push_back('%');
  AppendDecimal(out, r.id);
}

void AppendLabelName(std::string& out, const Kernel& kernel, Label label) {
  out.append("$L");
  AppendDecimal(out, label.id);
  if (label.id < kernel.labels.size() && !kernel.hint(label).empty()) {
    out.push_back('_');
    out.append(kernel.hint(label));
  }
}

void AppendImmediate(std::string& out, ScalarType type, uint64_t bits) {
  int width = TypeBits(type);
  uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  bits &= mask;
  switch (type) {
    case ScalarType::kF32:
      out.append("0f");
      AppendHex(out, Hex{bits, 8});
      return;
    case ScalarType::kF64:
      out.append("0d");
      AppendHex(out, Hex{bits, 16});
      return;
    case ScalarType::kPred: out.push_back(bits ? '1' : '0'); return;
    default: break;
  }
  if (KindOf(type) == TypeKind::kSigned) {
    int64_t v = width >= 64 ? static_cast<int64_t>(bits)
                            : static_cast<int64_t>(bits << (64 - width)) >> (64 - width);
    AppendDecimal(out, v);
  } else if (KindOf(type) == TypeKind::kUnsigned) {
    AppendDecimal(out, bits);
  } else {
    // Bit types and the half family (stored as bits).
    out.append("0x");
    AppendHex(out, Hex{bits});
  }
}

void AppendOpcode(std::string& out, const Instruction& inst) {
  const OpInfo& info = inst.info();
  out.append(info.mnemonic);
  const Modifiers& m = inst.mods;
  for (int i = 0; i < info.num_slots; ++i) {
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
}

void AppendOperand(std::string& out, const Kernel& kernel, const Operand& op, RegNameFn reg_name) {
  switch (op.kind) {
    case OperandKind::kReg: reg_name(out, op.reg()); return;
    case OperandKind::kImm: AppendImmediate(out, op.type, op.bits()); return;
    case OperandKind::kSpecial:
      out.append(op.id < static_cast<uint32_t>(kNumSpecialRegs) ? SpecialRegName(static_cast<SpecialReg>(op.id))
                                                                 : "<bad special register>");
      return;
    case OperandKind::kSymbol:
      out.append(op.id < kernel.variables.size() ? std::string_view(kernel.variables[op.id].name) : "<bad variable>");
      return;
    case OperandKind::kLabel: AppendLabelName(out, kernel, Label{op.id}); return;
    case OperandKind::kAddress:
      out.push_back('[');
      switch (op.base) {
        case AddressBase::kReg: reg_name(out, op.reg()); break;
        case AddressBase::kSymbol:
          out.append(op.id < kernel.variables.size() ? std::string_view(kernel.variables[op.id].name) : "<bad variable>");
          break;
        case AddressBase::kParam:
          out.append(op.id < kernel.params.size() ? std::string_view(kernel.params[op.id].name) : "<bad param>");
          break;
      }
      // ptxas reads `[%rd2+-8]`, not `[%rd2-8]`.
      if (op.value != 0) {
        out.push_back('+');
        AppendDecimal(out, op.value);
      }
      out.push_back(']');
      return;
    case OperandKind::kNone: out.append("<none>"); return;
  }
}

void AppendInstruction(std::string& out, const Kernel& kernel, const Instruction& inst, RegNameFn reg_name,
                       FormatStyle style) {
  const OpInfo& info = inst.info();
  if (inst.op == Opcode::kLabel) {
    if (!inst.srcs.empty()) AppendLabelName(out, kernel, Label{inst.srcs[0].id});
    out.push_back(':');
    return;
  }
  if (inst.guarded()) {
    out.append(inst.guard_negated ? "@!" : "@");
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
            AppendOperand(out, kernel, inst.srcs[index - nd], reg_name);
          }
          i = j;
          continue;
        }
      }
      out.push_back(c);
    }
    return;
  }
  AppendOpcode(out, inst);
  bool first = true;
  auto sep = [&] {
    out.append(first ? " " : ", ");
    first = false;
  };
  const Signature& sig = info.sig;
  if (!inst.dsts.empty() && style.dsts) {
    sep();
    AppendGrouped(out, inst, std::span(sig.dsts.data(), sig.ndst), inst.dsts, sig.dst_sep == '|' ? "|" : ", ",
                  [&](Reg r) { reg_name(out, r); });
  }
  if (!inst.srcs.empty()) {
    sep();
    AppendGrouped(out, inst, std::span(sig.srcs.data(), sig.nsrc), inst.srcs, ", ",
                  [&](const Operand& op) { AppendOperand(out, kernel, op, reg_name); });
  }
  if (style.semicolon) out.push_back(';');
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
