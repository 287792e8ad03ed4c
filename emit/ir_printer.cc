// IR text printer.
#include "emit/ir_printer.h"

#include "ir/strings.h"
#include "ir/format.h"

namespace ptxforge::emit {

std::string PrintIr(const ir::Kernel& k) {
  std::string out;
  StrAppend(&out, "kernel ", k.name, " target ", ir::TargetName(k.target), "\n");
  for (const ir::Param& p : k.params) StrAppend(&out, "  param ", ir::TypeName(p.type), " ", p.name, "\n");
  for (const ir::Variable& v : k.variables) {
    StrAppend(&out, "  ", v.is_extern ? "extern " : "", ir::StateSpaceName(v.space), " ", ir::TypeName(v.elem), " ",
                    v.name, "[", v.is_extern ? std::string() : StrCat(v.count), "] align ", v.align, "\n");
  }
  const ir::LaunchBounds& lb = k.bounds;
  if (lb.maxntid[0]) StrAppend(&out, "  maxntid ", lb.maxntid[0], " ", lb.maxntid[1], " ", lb.maxntid[2], "\n");
  if (lb.reqntid[0]) StrAppend(&out, "  reqntid ", lb.reqntid[0], " ", lb.reqntid[1], " ", lb.reqntid[2], "\n");
  if (lb.minnctapersm) StrAppend(&out, "  minnctapersm ", lb.minnctapersm, "\n");
  if (lb.maxnreg) StrAppend(&out, "  maxnreg ", lb.maxnreg, "\n");
  out.append("{\n");
  for (const ir::Instruction& inst : k.body) {
    if (inst.op == ir::Opcode::kLabel) {
      ir::AppendInstruction(out, k, inst, ir::AppendVirtualRegName);
      out.push_back('\n');
      continue;
    }
    out.append("  ");
    for (size_t d = 0; d < inst.dsts.size(); ++d) {
      ir::Reg r = inst.dsts[d];
      StrAppend(&out, d ? ", " : "", "%", r.id, ":",
                      r.id < k.regs.size() ? ir::TypeName(k.regs[r.id].type) : std::string_view("?"));
    }
    if (!inst.dsts.empty()) out.append(" = ");
    if (inst.op == ir::Opcode::kRaw) {
      std::string text;
      ir::AppendInstruction(text, k, inst, ir::AppendVirtualRegName);
      // Keep the dump one line per instruction.
      for (char& c : text) c = c == '\n' ? ' ' : c;
      StrAppend(&out, "raw \"", text, "\"");
    } else {
      ir::AppendInstruction(out, k, inst, ir::AppendVirtualRegName, ir::FormatStyle{.dsts = false, .semicolon = false});
    }
    std::string note;
    for (ir::Reg r : inst.dsts) {
      if (r.id >= k.regs.size()) continue;
      const ir::RegInfo& info = k.regs[r.id];
      const std::string_view hint = k.hint(r);
      if (hint.empty() && !info.is_mutable) continue;
      StrAppend(&note, note.empty() ? "" : ", ", hint, info.is_mutable ? (hint.empty() ? "mutable" : " mutable") : "");
    }
    if (!note.empty()) StrAppend(&out, "  // ", note);
    out.push_back('\n');
  }
  out.append("}\n");
  return out;
}

}  // namespace ptxforge::emit
