// Dominator-based value numbering of pure instructions.
#include "passes/cse.h"

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/cfg.h"
#include "ir/semantics.h"
#include "passes/values.h"

namespace ptxforge::passes {
namespace {

using ir::Opcode;

static_assert(std::has_unique_object_representations_v<ir::Modifiers>,
              "the CSE key copies Modifiers' bytes: it must have no padding");

bool Commutative(const ir::Instruction& inst) {
  const ir::ScalarType t = inst.mods.type;
  if (!ir::IsInteger(t) && !ir::IsBits(t) && t != ir::ScalarType::kPred) return false;
  switch (inst.op) {
    case Opcode::kAdd:
    case Opcode::kMul:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kMin:
    case Opcode::kMax:
      return inst.srcs.size() == 2;
    default:
      return false;
  }
}

class Numbering {
 public:
  explicit Numbering(ir::Kernel& kernel)
      : kernel_(kernel), values_(kernel), renaming_(kernel.regs.size()), dead_(kernel.body.size(), false) {}

  size_t Run() {
    const ir::Cfg cfg = ir::Cfg::Build(kernel_);
    const uint32_t nb = static_cast<uint32_t>(cfg.blocks.size());
    if (nb == 0) return 0;
    const std::vector<uint32_t> idom = ir::ImmediateDominators(cfg);
    // Children of each block in the dominator tree, flattened (block order).
    std::vector<uint32_t> child_begin(nb + 1, 0), children;
    for (uint32_t b = 1; b < nb; ++b) {
      if (idom[b] != UINT32_MAX) ++child_begin[idom[b] + 1];
    }
    for (uint32_t b = 0; b < nb; ++b) child_begin[b + 1] += child_begin[b];
    children.resize(child_begin[nb]);
    {
      std::vector<uint32_t> fill(child_begin.begin(), child_begin.end() - 1);
      for (uint32_t b = 1; b < nb; ++b) {
        if (idom[b] != UINT32_MAX) children[fill[idom[b]]++] = b;
      }
    }
    // Iterative preorder walk; on leaving a block its table entries go.
    struct Frame {
      uint32_t block;
      uint32_t next_child;
      size_t undo_mark;
    };
    std::vector<Frame> stack;
    stack.push_back({0, child_begin[0], undo_.size()});
    VisitBlock(cfg.blocks[0]);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next_child < child_begin[f.block + 1]) {
        const uint32_t c = children[f.next_child++];
        stack.push_back({c, child_begin[c], undo_.size()});
        VisitBlock(cfg.blocks[c]);
        continue;
      }
      while (undo_.size() > f.undo_mark) {
        table_.erase(undo_.back());
        undo_.pop_back();
      }
      stack.pop_back();
    }
    if (removed_ == 0) return 0;
    for (ir::Instruction& inst : kernel_.body) renaming_.Apply(inst);  // blocks the walk did not reach too
    return RemoveMarked(kernel_, dead_);
  }

 private:
  void VisitBlock(const ir::BasicBlock& bb) {
    for (uint32_t i = bb.begin; i < bb.end; ++i) {
      ir::Instruction& inst = kernel_.body[i];
      renaming_.Apply(inst);
      if (!Mergeable(inst)) continue;
      std::string key = Key(inst);
      auto [it, inserted] = table_.try_emplace(std::move(key), inst.dsts[0].id);
      if (inserted) {
        undo_.push_back(it->first);
      } else {
        renaming_.Set(inst.dsts[0], ir::Reg{it->second});
        dead_[i] = true;
        ++removed_;
      }
    }
  }

  bool Mergeable(const ir::Instruction& inst) const {
    const ir::OpInfo& info = inst.info();
    if (!info.has(ir::kPure) || info.has(ir::kPseudo) || info.has(ir::kOpaque) || info.has(ir::kConvergent)) return false;
    if (info.has(ir::kReadsMemory) && !(inst.op == Opcode::kLd && inst.mods.space == ir::StateSpace::kParam)) return false;
    if (inst.guarded() || inst.dsts.size() != 1 || !values_.IsValue(inst.dsts[0])) return false;
    // An add or sub of two registers is one instruction that reuses nothing:
    // merging it only keeps its result live longer. ptxas merges it where
    // that pays (measured: merging them made ptxas spill on nf4.gemm_transpose
    // for sm_120 and cost registers on nf4.gemm; leaving them never did).
    if ((inst.op == Opcode::kAdd || inst.op == Opcode::kSub) && inst.srcs.size() == 2 && inst.srcs[0].is_reg() &&
        inst.srcs[1].is_reg()) {
      return false;
    }
    for (const ir::Operand& op : inst.srcs) {
      if (op.reads_reg() && !values_.IsValue(op.reg())) return false;
      if (op.kind == ir::OperandKind::kSpecial && ir::sem::SpecialRegIsVolatile(static_cast<ir::SpecialReg>(op.id))) {
        return false;
      }
    }
    return true;
  }

  static void AppendOperand(std::string& key, const ir::Operand& op) {
    key.push_back(static_cast<char>(op.kind));
    key.append(reinterpret_cast<const char*>(&op.id), sizeof op.id);
    if (op.is_reg()) return;  // a register is its id
    key.push_back(static_cast<char>(op.base));
    key.push_back(static_cast<char>(op.type));
    key.append(reinterpret_cast<const char*>(&op.value), sizeof op.value);
  }

  std::string Key(const ir::Instruction& inst) const {
    std::string key;
    key.reserve(2 + sizeof(ir::Modifiers) + 16 * inst.srcs.size());
    key.push_back(static_cast<char>(inst.op));
    key.push_back(static_cast<char>(kernel_.type_of(inst.dsts[0])));
    key.append(reinterpret_cast<const char*>(&inst.mods), sizeof inst.mods);
    std::string a, b;
    if (Commutative(inst)) {
      AppendOperand(a, inst.srcs[0]);
      AppendOperand(b, inst.srcs[1]);
      if (b < a) std::swap(a, b);
      key += a;
      key += b;
    } else {
      for (const ir::Operand& op : inst.srcs) AppendOperand(key, op);
    }
    return key;
  }

  ir::Kernel& kernel_;
  const Values values_;
  Renaming renaming_;
  std::vector<bool> dead_;
  absl::flat_hash_map<std::string, uint32_t> table_;
  std::vector<std::string> undo_;
  size_t removed_ = 0;
};

}  // namespace

size_t EliminateCommonSubexpressions(ir::Kernel& kernel) { return Numbering(kernel).Run(); }

}  // namespace ptxforge::passes
