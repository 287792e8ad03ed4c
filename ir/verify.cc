// Verification: the kernel's declarations, one walk over the body that checks
// each instruction (ir/verify_instruction.cc) and notes label bindings and
// definitions, then dataflow over the CFG where that walk cannot show every
// use defined.
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
#include "ir/verify_internal.h"

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

}  // namespace

namespace verify_internal {

absl::Status KernelError(const Kernel& k, std::string_view msg) {
  return absl::InvalidArgumentError(StrCat("kernel ", k.name, ": ", msg));
}

absl::Status InstructionError(const Kernel& k, size_t index, std::string_view msg) {
  const Instruction& inst = k.body[index];
  std::string where = ir::FormatLoc(inst.loc);
  if (where.empty()) where = StrCat("instruction ", index);
  std::string text;
  ir::AppendInstruction(text, k, inst, ir::AppendVirtualRegName, ir::FormatStyle{.semicolon = false});
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  return absl::InvalidArgumentError(StrCat("kernel ", k.name, ": ", where, ": ", text, ": ", msg));
}

}  // namespace verify_internal

namespace {

using verify_internal::Groups;

class Verifier {
 public:
  explicit Verifier(const ir::Kernel& k) : k_(k), instructions_(k) {}

  absl::Status RunWellFormed() const {
    if (absl::Status s = CheckDeclarationEnums(); !s.ok()) return s;
    Groups groups;
    for (size_t i = 0; i < k_.body.size(); ++i) {
      if (absl::Status s = instructions_.CheckStructure(i, groups); !s.ok()) return s;
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
      if (absl::Status s = instructions_.Check(i); !s.ok()) return s;
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

  [[gnu::cold]] absl::Status KernelError(std::string_view msg) const { return verify_internal::KernelError(k_, msg); }

  [[gnu::cold]] absl::Status Error(size_t index, std::string_view msg) const {
    return verify_internal::InstructionError(k_, index, msg);
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
  const verify_internal::InstructionChecker instructions_;
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
