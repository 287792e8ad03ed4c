// PTX printer.
#include "emit/ptx_printer.h"

#include <algorithm>
#include <array>
#include <map>
#include <span>
#include <utility>

#include "absl/utility/utility.h"

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

// The text goes through a buffer on the stack of this many bytes: a small
// module's text (vector_add's is 883 bytes: kernels of a few dozen
// instructions) reaches the result in one append, an allocation of
// exactly its size. Reserved from the estimate below instead, vector_add's
// text asked malloc for 1,453 bytes: heap a fresh process's first codegen
// touches (a page fault for each page it is the first to touch), and a
// request above glibc's per-thread caches (tcache: up to 1,032 bytes),
// served from its shared bins, where the first such request after other
// work sorts every block that work freed (3-10 us in vector_add's codegen
// after cold_bench's disturbance). A larger text reserves the estimate when
// the buffer first fills. 2 KiB keeps the printer's stack shallower than
// the builder's (KernelBuilder::Finish's canonical order and verifier), so
// that the codegen's deepest stack page is where it was.
constexpr size_t kPrintBuffer = size_t{2} << 10;

// "\t.reg .b32 \t%r<" by register class, padded so that it is stored whole:
// RegClassDeclType and RegClassPrefix.
struct RegDecl {
  char text[24] = {};
  uint8_t size = 0;
};
constexpr std::array<RegDecl, ir::kNumRegClasses> RegDecls() {
  std::array<RegDecl, ir::kNumRegClasses> decls{};
  for (int c = 0; c < ir::kNumRegClasses; ++c) {
    RegDecl& d = decls[c];
    const auto rc = static_cast<ir::RegClass>(c);
    for (std::string_view part : {std::string_view("\t.reg "), ir::RegClassDeclType(rc), std::string_view(" \t"),
                                  ir::RegClassPrefix(rc), std::string_view("<")}) {
      for (char ch : part) d.text[d.size++] = ch;
    }
  }
  return decls;
}
constexpr std::array<RegDecl, ir::kNumRegClasses> kRegDecls = RegDecls();

// The kernel's text goes through `line` (ir::LineBuffer): literal text
// stored whole, names and numbers appended, one append to the string per
// kPrintBuffer bytes.
void PrintKernel(ir::LineBuffer& line, const ir::Kernel& k) {
  const ir::RegisterNumbering numbering = ir::RegisterNumbering::Compute(k);
  line.literal("\t// .globl\t");
  line.append(k.name);
  line.literal("\n.visible .entry ");
  line.append(k.name);
  line.push_back('(');
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (i) line.push_back(',');
    line.literal("\n\t.param .");
    line.append(DeclType(k.params[i].type));
    line.push_back(' ');
    line.append(k.params[i].name);
  }
  if (!k.params.empty()) line.push_back('\n');
  line.literal(")\n");
  const ir::LaunchBounds& lb = k.bounds;
  auto three = [&](const std::array<uint32_t, 3>& v) {
    line.decimal(v[0]);
    line.literal(", ");
    line.decimal(v[1]);
    line.literal(", ");
    line.decimal(v[2]);
    line.push_back('\n');
  };
  if (lb.maxntid[0]) {
    line.literal(".maxntid ");
    three(lb.maxntid);
  }
  if (lb.reqntid[0]) {
    line.literal(".reqntid ");
    three(lb.reqntid);
  }
  if (lb.minnctapersm) {
    line.literal(".minnctapersm ");
    line.decimal(lb.minnctapersm);
    line.push_back('\n');
  }
  if (lb.maxnreg) {
    line.literal(".maxnreg ");
    line.decimal(lb.maxnreg);
    line.push_back('\n');
  }
  line.literal("{\n");
  for (int c = 0; c < ir::kNumRegClasses; ++c) {
    if (numbering.count[c] == 0) continue;
    line.put(kRegDecls[c].text, kRegDecls[c].size);
    line.decimal(numbering.count[c]);
    line.literal(">;\n");
  }
  for (const ir::Variable& v : k.variables) {
    if (v.is_extern) continue;
    line.literal("\t.");
    line.append(ir::StateSpaceName(v.space));
    line.literal(" .align ");
    line.decimal(v.align);
    line.literal(" .");
    line.append(DeclType(v.elem));
    line.push_back(' ');
    line.append(v.name);
    line.push_back('[');
    line.decimal(v.count);
    line.literal("];\n");
  }
  line.push_back('\n');
  // Only raw PTX and the names the kernel gives (params, variables, label
  // hints) can put a line break in an instruction: the names are looked at
  // once here instead of each instruction's text.
  bool names_break = false;
  for (const ir::Param& p : k.params) names_break |= p.name.find('\n') != std::string::npos;
  for (const ir::Variable& v : k.variables) names_break |= v.name.find('\n') != std::string::npos;
  for (const ir::LabelInfo& l : k.labels) names_break |= k.hint_text(l.hint_id).find('\n') != std::string::npos;
  for (const ir::Instruction& inst : k.body) {
    // Labels stay in column 0; other instructions are indented, every line
    // of them (raw PTX may span several), which is looked for in the string.
    if (inst.op == ir::Opcode::kLabel) {
      ir::AppendPtxInstruction(line, k, inst, numbering);
    } else if (!names_break && inst.op != ir::Opcode::kRaw) {
      line.push_back('\t');
      ir::AppendPtxInstruction(line, k, inst, numbering);
    } else {
      line.push_back('\t');
      std::string& out = line.str();
      const size_t start = out.size();
      ir::AppendPtxInstruction(line, k, inst, numbering);
      line.flush();
      if (out.find('\n', start) != std::string::npos) IndentLines(out, start);
    }
    line.push_back('\n');
  }
  line.literal("}\n");
}

// Prints into `out` (empty).
absl::Status PrintKernels(ir::Target target, std::optional<ir::PtxVersion> pinned,
                          std::span<const ir::Kernel* const> kernels, std::string& out) {
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
  // What the result reserves when the text first outgrows the buffer: once,
  // as a string that outgrows its reserve holds two copies while it grows,
  // but not much more than the text: at a million
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
  // registry's kernels of a few hundred instructions (nf4.gemm by more).
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
  const size_t estimate = declarations + std::min<size_t>(4096, 8 * instructions) +
                          (instructions - labels) * (20 + 3 * digits) + labels * 24;
  char buffer[kPrintBuffer];
  {
    ir::LineBuffer line(out, buffer, estimate);
    line.literal("//\n// Generated by ptxforge\n//\n\n.version ");
    line.decimal(version.major());
    line.push_back('.');
    line.decimal(version.minor());
    line.literal("\n.target ");
    line.append(ir::TargetName(target));
    line.literal("\n.address_size 64\n");
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
    if (!extern_order.empty()) line.push_back('\n');
    for (const std::string& name : extern_order) {
      line.literal(".extern .shared .align ");
      line.decimal(externs[name]);
      line.literal(" .b8 ");
      line.append(name);
      line.literal("[];\n");
    }
    for (const ir::Kernel* k : kernels) {
      line.push_back('\n');
      PrintKernel(line, *k);
    }
  }  // the line buffer's last flush
  return absl::OkStatus();
}

// The text is printed into the result's own string, which is returned as it
// is: returning a string as a StatusOr moves it, and std::string's move
// constructor was not inlined there; its copy, like _M_mutate's (see
// LineBuffer::flush), was the one the linker kept from a kernel's object.
absl::StatusOr<std::string> Print(ir::Target target, std::optional<ir::PtxVersion> pinned,
                                  std::span<const ir::Kernel* const> kernels) {
  absl::StatusOr<std::string> result(absl::in_place);
  if (absl::Status status = PrintKernels(target, pinned, kernels, *result); !status.ok()) result = std::move(status);
  return result;
}

}  // namespace

absl::StatusOr<std::string> PrintPtx(const ir::Module& module) {
  std::vector<const ir::Kernel*> kernels;
  for (const ir::Kernel& k : module.kernels) kernels.push_back(&k);
  return Print(module.target, module.ptx_version, kernels);
}

absl::StatusOr<std::string> PrintPtx(const ir::Kernel& kernel, std::optional<ir::PtxVersion> pinned) {
  const ir::Kernel* const one[] = {&kernel};  // no list on the heap
  return Print(kernel.target, pinned, one);
}

}  // namespace ptxforge::emit
