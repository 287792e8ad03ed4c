// PTX printer.
#include "emit/ptx_printer.h"

#include <algorithm>
#include <map>

#include "ir/strings.h"
#include "ir/format.h"
#include "ir/register_numbering.h"

namespace ptxforge::emit {
namespace {

// The declaration type of a param or variable: f16/bf16 are declared as bits.
std::string_view DeclType(ir::ScalarType t) {
  switch (t) {
    case ir::ScalarType::kF16:
    case ir::ScalarType::kBF16: return "b16";
    case ir::ScalarType::kF16x2:
    case ir::ScalarType::kBF16x2: return "b32";
    default: return ir::TypeName(t);
  }
}

// A tab after each line break in out[start, end): the lines of a multi-line
// instruction (raw PTX) are indented like the first.
[[gnu::cold]] void IndentLines(std::string& out, size_t start) {
  const std::string text = out.substr(start);
  out.resize(start);
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out.push_back('\t');
  }
}

void PrintKernel(std::string& out, const ir::Kernel& k) {
  const ir::RegisterNumbering numbering = ir::RegisterNumbering::Compute(k);
  StrAppend(&out, "\t// .globl\t", k.name, "\n.visible .entry ", k.name, "(");
  for (size_t i = 0; i < k.params.size(); ++i) {
    StrAppend(&out, i ? ",\n" : "\n", "\t.param .", DeclType(k.params[i].type), " ", k.params[i].name);
  }
  out.append(k.params.empty() ? ")\n" : "\n)\n");
  const ir::LaunchBounds& lb = k.bounds;
  if (lb.maxntid[0]) StrAppend(&out, ".maxntid ", lb.maxntid[0], ", ", lb.maxntid[1], ", ", lb.maxntid[2], "\n");
  if (lb.reqntid[0]) StrAppend(&out, ".reqntid ", lb.reqntid[0], ", ", lb.reqntid[1], ", ", lb.reqntid[2], "\n");
  if (lb.minnctapersm) StrAppend(&out, ".minnctapersm ", lb.minnctapersm, "\n");
  if (lb.maxnreg) StrAppend(&out, ".maxnreg ", lb.maxnreg, "\n");
  out.append("{\n");
  for (int c = 0; c < ir::kNumRegClasses; ++c) {
    if (numbering.count[c] == 0) continue;
    // RegClassDeclType and RegClassPrefix, from tables (printer_test compares them).
    const ir::numbering_internal::Prefix& prefix = ir::numbering_internal::kPrefixes[c];
    StrAppend(&out, "\t.reg .", ir::TypeName(ir::numbering_internal::kDeclTypes[c]), " \t",
              std::string_view(prefix.text, prefix.size), "<", numbering.count[c], ">;\n");
  }
  for (const ir::Variable& v : k.variables) {
    if (v.is_extern) continue;
    StrAppend(&out, "\t.", ir::StateSpaceName(v.space), " .align ", v.align, " .", DeclType(v.elem), " ", v.name,
                    "[", v.count, "];\n");
  }
  out.push_back('\n');
  // Only raw PTX and the names the kernel gives (params, variables, label
  // hints) can put a line break in an instruction: the names are looked at
  // once here instead of each instruction's text.
  bool names_break = false;
  for (const ir::Param& p : k.params) names_break |= p.name.find('\n') != std::string::npos;
  for (const ir::Variable& v : k.variables) names_break |= v.name.find('\n') != std::string::npos;
  for (const ir::LabelInfo& l : k.labels) names_break |= k.hint_text(l.hint_id).find('\n') != std::string::npos;
  // Each instruction is formatted in place, at the end of `out`.
  for (const ir::Instruction& inst : k.body) {
    const bool label = inst.op == ir::Opcode::kLabel;
    if (!label) out.push_back('\t');
    const size_t start = out.size();
    ir::AppendPtxInstruction(out, k, inst, numbering);
    // Indent every line (raw PTX may span several); labels stay in column 0.
    if (!label && (names_break || inst.op == ir::Opcode::kRaw) && out.find('\n', start) != std::string::npos) {
      IndentLines(out, start);
    }
    out.push_back('\n');
  }
  out.append("}\n");
}

absl::StatusOr<std::string> PrintKernels(ir::Target target, std::optional<ir::PtxVersion> pinned,
                                         const std::vector<const ir::Kernel*>& kernels) {
  for (const ir::Kernel* k : kernels) {
    if (k->target != target) {
      return absl::InvalidArgumentError(StrCat("kernel ", k->name, " targets ", ir::TargetName(k->target),
                                                     " but the module targets ", ir::TargetName(target)));
    }
  }
  ir::PtxVersion needed = ir::RequiredPtxVersion(target, kernels);
  ir::PtxVersion version = needed;
  if (pinned) {
    version = *pinned;
    bool known = false;
    for (ir::PtxVersion v : ir::KnownPtxVersions()) known |= v == version;
    if (!known || version > ir::MaxPtxVersion()) {
      return absl::InvalidArgumentError(StrCat("PTX ISA ", version.ToString(), " is not a version ptxforge can print (newest: ",
                                                     ir::MaxPtxVersion().ToString(), ")"));
    }
    if (version < needed) {
      return absl::InvalidArgumentError(StrCat("PTX ISA ", version.ToString(), " was pinned, but ",
                                                     ir::TargetName(target), " and the instructions used need ",
                                                     needed.ToString()));
    }
  }
  // Reserved once, as a string that outgrows its reserve holds two copies
  // while it grows, but not much more than the text: at a million
  // instructions the PTX is the largest thing a codegen makes besides the
  // kernel. An instruction prints as 20-30 bytes besides its register
  // numbers ("\tadd.s32 \t%r12, %r10, %r11;\n"), usually three of them, a
  // label as "$L" and a number or a short name: measured 24-36 bytes per
  // instruction on scale_bench's kernels (1k to 1M instructions: 3 to 6
  // digits) and at most 35 on the registry's.
  // The declarations are bounded by what they name: the module's lines take
  // under 128 bytes, a kernel's under 64 besides its name (twice), a
  // param's under 24 besides its name, a variable's or an extern's under 96
  // besides its name, the launch bounds under 160 and the register
  // declarations under 32 each. The instructions get 8 bytes more each, up
  // to 4096 in all: the estimate above falls short by up to 23% on the
  // registry's kernels of a few hundred instructions (nf4.gemm by more). A
  // fixed 4096 bytes took heap pages that a small kernel's PTX (883 bytes
  // for vector_add) never fills, and a fresh process pays a page fault for
  // each page its first codegen touches.
  size_t instructions = 0, labels = 0, digits = 1, declarations = 128;
  for (const ir::Kernel* k : kernels) {
    instructions += k->body.size();
    labels += std::min(k->labels.size(), k->body.size());
    size_t d = 1;  // of the largest register number
    for (size_t r = k->regs.size(); r >= 10; r /= 10) ++d;
    digits = std::max(digits, d);
    declarations += 64 + 2 * k->name.size() + 160 + 32 * ir::kNumRegClasses;
    for (const ir::Param& p : k->params) declarations += 24 + p.name.size();
    for (const ir::Variable& v : k->variables) declarations += 2 * (96 + v.name.size());
  }
  std::string out;
  out.reserve(declarations + std::min<size_t>(4096, 8 * instructions) + (instructions - labels) * (20 + 3 * digits) +
              labels * 24);
  StrAppend(&out, "//\n// Generated by ptxforge\n//\n\n.version ", version.major(), ".", version.minor(), "\n.target ",
                  ir::TargetName(target), "\n.address_size 64\n");
  // Dynamic shared memory lives at module scope; kernels naming the same
  // window share one declaration (with the largest alignment).
  std::map<std::string, uint32_t> externs;
  std::vector<std::string> extern_order;
  for (const ir::Kernel* k : kernels) {
    for (const ir::Variable& v : k->variables) {
      if (!v.is_extern) continue;
      auto [it, inserted] = externs.emplace(v.name, v.align);
      if (inserted) extern_order.push_back(v.name);
      it->second = std::max(it->second, v.align);
    }
  }
  if (!extern_order.empty()) out.push_back('\n');
  for (const std::string& name : extern_order) {
    StrAppend(&out, ".extern .shared .align ", externs[name], " .b8 ", name, "[];\n");
  }
  for (const ir::Kernel* k : kernels) {
    out.push_back('\n');
    PrintKernel(out, *k);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> PrintPtx(const ir::Module& module) {
  std::vector<const ir::Kernel*> kernels;
  for (const ir::Kernel& k : module.kernels) kernels.push_back(&k);
  return PrintKernels(module.target, module.ptx_version, kernels);
}

absl::StatusOr<std::string> PrintPtx(const ir::Kernel& kernel, std::optional<ir::PtxVersion> pinned) {
  return PrintKernels(kernel.target, pinned, {&kernel});
}

}  // namespace ptxforge::emit
