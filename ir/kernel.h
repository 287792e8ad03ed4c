// Kernels and modules: params, variables, the register table, the body.
#ifndef PTXFORGE_IR_KERNEL_H_
#define PTXFORGE_IR_KERNEL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <span>
#include <vector>

#include "ir/instruction.h"
#include "ir/instruction_list.h"
#include "ir/target.h"
#include "ir/types.h"

namespace ptxforge::ir {

// A kernel parameter (`.param .u64 a`).
struct Param {
  std::string name;
  ScalarType type = ScalarType::kU64;
};

// A shared or local array (`.shared .align 16 .b8 tile[1024];`). An extern
// shared variable is the dynamic shared memory window (`extern .shared ... []`).
struct Variable {
  std::string name;
  StateSpace space = StateSpace::kShared;
  ScalarType elem = ScalarType::kB8;  // element type (for the IR dump and the emulator)
  uint32_t count = 0;                 // elements; 0 for extern
  uint32_t align = 4;
  bool is_extern = false;
  uint64_t size_bytes() const { return uint64_t{count} * TypeSize(elem); }
};

// 8 bytes: the hint is an index into the kernel's name table (Kernel::names),
// read with Kernel::hint(reg). A std::string here made the register table 40
// bytes per register.
struct RegInfo {
  ScalarType type = ScalarType::kNone;
  bool is_mutable = false;  // may be defined more than once (loop-carried values)
  uint32_t hint_id = 0;     // a name for humans (IR dump), never printed in PTX: Kernel::names; 0: none
};

// A raw PTX block: the text with {N} placeholders and what it needs.
struct RawPtxBlock {
  std::string text;
  TargetRequirement requirement;
};

struct LabelInfo {
  uint32_t hint_id = 0;  // a name for humans (printed as $L3_hint): Kernel::names; 0: none
};

// `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg` (zero: not printed).
struct LaunchBounds {
  std::array<uint32_t, 3> maxntid = {0, 0, 0};
  std::array<uint32_t, 3> reqntid = {0, 0, 0};
  uint32_t minnctapersm = 0;
  uint32_t maxnreg = 0;  // registers per thread ptxas may use (1-255)
};

// What the register-counting pass found.
struct KernelStats {
  std::array<uint32_t, kNumRegClasses> regs_per_class{};      // declared per class
  std::array<uint32_t, kNumRegClasses> max_live_per_class{};  // per class, at one point
  uint32_t max_live = 0;       // all classes, counted in 32-bit units (b64/f64 count 2)
  uint32_t instructions = 0;   // real instructions (labels not counted)
};

// The hint texts of a kernel's registers and labels (Kernel::names): name
// i (0-based; hint id i + 1) is characters [end(i - 1), end(i)) of one
// string that holds them all back to back. A name costs its own bytes and
// one end offset, where a std::string each took 32 bytes (and a heap block
// of its own past 15 characters): vector_add's six names took a 512-byte
// block, room for 16 strings, on every codegen.
class NameTable {
 public:
  class Iterator {
   public:
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    Iterator(const NameTable* table, size_t i) : table_(table), i_(i) {}
    std::string_view operator*() const { return (*table_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const NameTable* table_ = nullptr;
    size_t i_ = 0;
  };

  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::string_view operator[](size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(text_.data() + begin, ends_[i] - begin);
  }
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size()); }
  // Room for `names` names before the offsets grow.
  void reserve(size_t names) { ends_.reserve(names); }
  size_t capacity() const { return ends_.capacity(); }
  void push_back(std::string_view name) {
    text_.append(name);
    ends_.push_back(text_.size());
  }
  // Replaces the text of name i, the ids of all names staying as they are.
  void Set(size_t i, std::string_view name);
  friend bool operator==(const NameTable& a, const NameTable& b) { return a.ends_ == b.ends_ && a.text_ == b.text_; }

 private:
  std::string text_;
  std::vector<size_t> ends_;
};

struct Kernel {
  std::string name;
  Target target = Target::kSm80;
  std::vector<Param> params;
  std::vector<Variable> variables;
  std::vector<RegInfo> regs;
  std::vector<LabelInfo> labels;
  // Hints of registers and labels: names[id - 1] is the text of hint id
  // `id` (0 is the empty hint and has no entry). Use AddReg/AddLabel/SetHint
  // and hint(), which keep it.
  NameTable names;
  // The instructions, in chunks (ir/instruction_list.h): growing never
  // copies the body.
  InstructionList body;
  std::vector<RawPtxBlock> raw_ptx;  // bodies of kRaw instructions
  LaunchBounds bounds;
  std::optional<KernelStats> stats;
  // ir::Fingerprint(*this) when the kernel last passed the verifier, as
  // recorded by ir::MarkVerified (ir/verify.h); 0: never. Any change to what
  // the verifier reads changes the fingerprint, so a stale mark is ignored.
  uint64_t verified_fingerprint = 0;

  // Defined in kernel.cc, not inline: a kernel is moved and destroyed in
  // several places of every codegen (the builder's moved-from copy, the
  // StatusOr, the caller's), and each inline copy of these is its own set
  // of branches (a vector's destructor tests its pointer) that the first
  // codegen of a process runs cold. One copy is paid for once.
  Kernel();
  Kernel(const Kernel&);
  Kernel(Kernel&&) noexcept;
  Kernel& operator=(const Kernel&);
  Kernel& operator=(Kernel&&) noexcept;
  ~Kernel();

  const RegInfo& reg(Reg r) const { return regs[r.id]; }
  // Appends a register or label (the caller checks the limits on their number).
  Reg AddReg(ScalarType type, bool is_mutable = false, std::string_view hint = {}) {
    regs.push_back(RegInfo{type, is_mutable, InternName(hint)});
    return Reg{static_cast<uint32_t>(regs.size() - 1)};
  }
  Label AddLabel(std::string_view hint = {}) {
    labels.push_back(LabelInfo{InternName(hint)});
    return Label{static_cast<uint32_t>(labels.size() - 1)};
  }
  std::string_view hint(Reg r) const { return hint_text(regs[r.id].hint_id); }
  std::string_view hint(Label l) const { return hint_text(labels[l.id].hint_id); }
  void SetHint(Reg r, std::string_view hint) { regs[r.id].hint_id = InternName(hint); }
  // The text of hint id `id` ("" for 0).
  // An id past `names` (a register table copied without its names, which
  // the verifier refuses) reads as "" too, so that error messages about such
  // a kernel can still be printed.
  std::string_view hint_text(uint32_t id) const {
    return id == 0 || id > names.size() ? std::string_view() : names[id - 1];
  }
  // The id of `text` in `names`, appended when it is not among the last 16
  // entries ("" is 0): repeated hints ("acc", "addr") share one entry at a
  // bounded cost per register.
  uint32_t InternName(std::string_view text);
  ScalarType type_of(Reg r) const { return regs[r.id].type; }
  bool valid_reg(Reg r) const { return r.id < regs.size(); }
};

// A PTX module: one header, several kernels for one target.
struct Module {
  Target target = Target::kSm80;
  std::optional<PtxVersion> ptx_version;  // pinned by the caller; else the lowest allowed
  std::vector<Kernel> kernels;
};

// RequirementOf(inst), plus what a raw PTX block declared it needs.
TargetRequirement RequirementOf(const Kernel& kernel, const Instruction& inst);

// The lowest PTX ISA version the target and every instruction of the kernels
// accept.
PtxVersion RequiredPtxVersion(Target target, std::span<const Kernel* const> kernels);
// The same for a list such as `{&kernel}`.
PtxVersion RequiredPtxVersion(Target target, const std::vector<const Kernel*>& kernels);

}  // namespace ptxforge::ir

#endif  // PTXFORGE_IR_KERNEL_H_
