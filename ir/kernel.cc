// Module-level facts derived from kernels.
#include "ir/kernel.h"

#include <algorithm>
#include <cstring>

namespace ptxforge::ir {

Kernel::Kernel() = default;
Kernel::Kernel(const Kernel&) = default;
Kernel::Kernel(Kernel&&) noexcept = default;
Kernel& Kernel::operator=(const Kernel&) = default;
Kernel& Kernel::operator=(Kernel&&) noexcept = default;
Kernel::~Kernel() = default;

uint32_t Kernel::InternName(std::string_view text) {
  if (text.empty()) return 0;
  const size_t n = names.size();
  const size_t stop = n > 16 ? n - 16 : 0;  // ids stop + 1 .. n: the last 16
  for (size_t i = n; i > stop; --i) {
    // Length and first letter in one test first: most hints differ in one
    // or the other, and then memcmp is not called. `text` is not empty; a
    // name's first byte is read through data(), which points into the
    // table's string even for an empty name (NameTable::Set or push_back
    // can store one), at worst at its terminating zero.
    const std::string_view name = names[i - 1];
    if ((name.size() == text.size()) & (*name.data() == text[0]) &&
        std::memcmp(name.data(), text.data(), text.size()) == 0) {
      return static_cast<uint32_t>(i);
    }
  }
  // Room for the first 16 at once: a kernel names a handful of registers
  // and labels ("a", "gid", "endif"; the registry's kernels 5 to 57), and
  // growing 1, 2, 4, 8 was four allocations per kernel.
  if (names.capacity() == 0) names.reserve(16);
  names.push_back(text);
  return static_cast<uint32_t>(names.size());
}

void NameTable::Set(size_t i, std::string_view name) {
  const size_t begin = i == 0 ? 0 : ends_[i - 1];
  const size_t old_size = ends_[i] - begin;
  text_.replace(begin, old_size, name);
  for (size_t j = i; j < ends_.size(); ++j) ends_[j] = ends_[j] - old_size + name.size();
}

TargetRequirement RequirementOf(const Kernel& kernel, const Instruction& inst) {
  if (inst.op == Opcode::kRaw && inst.raw_index < kernel.raw_ptx.size()) {
    return kernel.raw_ptx[inst.raw_index].requirement;
  }
  return RequirementOf(inst);
}

PtxVersion RequiredPtxVersion(Target target, std::span<const Kernel* const> kernels) {
  PtxVersion v = GetTargetInfo(target).min_ptx;
  for (const Kernel* k : kernels) {
    for (const Instruction& inst : k->body) v = std::max(v, RequirementOf(*k, inst).ptx);
  }
  // Round up to a version that exists (e.g. never print 6.6).
  for (PtxVersion known : KnownPtxVersions()) {
    if (known >= v) return known;
  }
  return MaxPtxVersion();
}

PtxVersion RequiredPtxVersion(Target target, const std::vector<const Kernel*>& kernels) {
  return RequiredPtxVersion(target, std::span<const Kernel* const>(kernels));
}

}  // namespace ptxforge::ir
