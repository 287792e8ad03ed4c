// Loop rotation of innermost loops that test at their top.
#include "passes/loop_rotation.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "ir/register_numbering.h"
#include "passes/body_edit.h"
#include "passes/const_fold.h"
#include "passes/loops.h"

namespace ptxforge::passes {
namespace {

// How far back from a loop's entry point a mov of an immediate is looked
// for (a preheader is a few instructions: the counter's start and what licm
// and strength reduction put there).
constexpr uint32_t kLookBack = 64;

// The largest loop rotated, in instructions (see loop_rotation.h).
constexpr uint32_t kMaxSize = 64;

class Rotator {
 public:
  Rotator(ir::Kernel& kernel, Analyses& analyses) : kernel_(kernel), analyses_(analyses) {}

  size_t Run() {
    const LoopForest& forest = analyses_.loops();
    if (forest.loops.empty()) return 0;
    const ir::Cfg& cfg = forest.cfg;
    // A loop holding another loop's header holds that loop.
    std::vector<bool> is_header(cfg.blocks.size(), false);
    for (const Loop& loop : forest.loops) is_header[loop.header] = true;
    size_t rotated = 0;
    for (const Loop& loop : forest.loops) {
      bool innermost = true;
      uint32_t size = 0;
      for (uint32_t b : loop.blocks) {
        innermost &= b == loop.header || !is_header[b];
        size += cfg.blocks[b].end - cfg.blocks[b].begin;
      }
      if (innermost && size <= kMaxSize && Rotate(cfg, loop)) ++rotated;
    }
    if (rotated == 0) return 0;
    analyses_.ApplyEdit(*edit_, kernel_);  // branches moved: the analyses are dropped
    return rotated;
  }

 private:
  bool Rotate(const ir::Cfg& cfg, const Loop& loop) {
    if (loop.entry_point == Loop::kNone) return false;
    const ir::BasicBlock& head = cfg.blocks[loop.header];
    const ir::InstructionList& body = kernel_.body;
    // The label, `.pragma "nounroll"` if the loop has it (it stays after the
    // label), the test and the branch.
    const uint32_t at = head.begin + 1 + (head.end - head.begin == 4 && body[head.begin + 1].op == ir::Opcode::kPragmaNoUnroll);
    if (head.begin != loop.entry_point || head.end != at + 2) return false;
    const ir::Instruction& test = body[at];
    const ir::Instruction& leave = body[at + 1];
    if (body[head.begin].op != ir::Opcode::kLabel || body[head.begin].srcs.empty()) return false;
    if (test.op != ir::Opcode::kSetp || test.guarded() || test.dsts.size() != 1) return false;
    const ir::Reg p = test.dsts[0];
    if (Reads(test, p)) return false;
    if (leave.op != ir::Opcode::kBra || leave.guard != p || leave.srcs.empty() || leave.srcs[0].kind != ir::OperandKind::kLabel) {
      return false;
    }
    // One latch: the header's predecessors are the block falling into it
    // and one block of the loop.
    std::span<const uint32_t> preds = cfg.preds(loop.header);
    if (preds.size() != 2) return false;
    const bool first_in = InLoop(loop, preds[0]);
    if (first_in == InLoop(loop, preds[1])) return false;
    const uint32_t latch = first_in ? preds[0] : preds[1];
    const ir::BasicBlock& back = cfg.blocks[latch];
    const uint32_t bra = back.end - 1;
    const ir::Instruction& jump = body[bra];
    const uint32_t head_label = body[head.begin].srcs[0].id;
    if (jump.op != ir::Opcode::kBra || jump.guarded() || jump.srcs.empty() || jump.srcs[0].id != head_label) return false;
    // The exit is laid out right after the latch: the inverted test falls into it.
    const uint32_t exit_label = leave.srcs[0].id;
    if (back.end >= body.size() || body[back.end].op != ir::Opcode::kLabel || body[back.end].srcs.empty() ||
        body[back.end].srcs[0].id != exit_label) {
      return false;
    }
    if (!edit_) edit_.emplace(body);
    const bool guard =
        !(EntersSurely(loop.entry_point, test, leave.guard_negated) && !LoopReads(cfg, loop, p) && OnlyExit(cfg, loop));
    if (guard) {
      edit_->InsertBefore(loop.entry_point, test);
      edit_->InsertBefore(loop.entry_point, leave);
    }
    edit_->Drop(at);
    edit_->Drop(at + 1);
    ir::Instruction again = jump;
    again.mods.uni = false;  // p need not be uniform
    again.guard = p;
    again.guard_negated = !leave.guard_negated;
    edit_->InsertBefore(bra, test);
    edit_->InsertBefore(bra, std::move(again));
    edit_->Drop(bra);
    kernel_.regs[p.id].is_mutable = true;
    return true;
  }

  static bool Reads(const ir::Instruction& inst, ir::Reg r) {
    bool reads = false;
    ir::ForEachUse(inst, [&](ir::Reg u) { reads |= u == r; });
    return reads;
  }

  static bool InLoop(const Loop& loop, uint32_t b) {
    for (uint32_t x : loop.blocks) {
      if (x == b) return true;
    }
    return false;
  }

  // Whether the setp `test` at the loop's top is known to keep the thread in
  // the loop the first time: its sources are immediates or registers that
  // the instructions right before `entry` (back to the first label or
  // branch) last set to an immediate.
  bool EntersSurely(uint32_t entry, const ir::Instruction& test, bool negated) const {
    absl::InlinedVector<uint64_t, 3> sources;
    for (const ir::Operand& op : test.srcs) {
      if (op.is_imm()) {
        sources.push_back(op.bits());
      } else if (op.is_reg()) {
        std::optional<uint64_t> v = ImmediateBefore(entry, op.reg());
        if (!v) return false;
        sources.push_back(*v);
      } else {
        return false;
      }
    }
    std::optional<uint64_t> p = EvaluateConstant(kernel_, test, sources);
    if (!p) return false;
    const bool leaves = ((*p & 1) != 0) != negated;
    return !leaves;
  }

  std::optional<uint64_t> ImmediateBefore(uint32_t entry, ir::Reg r) const {
    const ir::InstructionList& body = kernel_.body;
    for (uint32_t i = entry, steps = 0; i-- > 0 && steps < kLookBack; ++steps) {
      const ir::Instruction& inst = body[i];
      if (inst.op == ir::Opcode::kLabel || ir::EndsBlock(inst)) return std::nullopt;
      for (ir::Reg d : inst.dsts) {
        if (d != r) continue;
        if (inst.op != ir::Opcode::kMov || inst.guarded() || inst.srcs.size() != 1 || !inst.srcs[0].is_imm()) {
          return std::nullopt;
        }
        return inst.srcs[0].bits();
      }
    }
    return std::nullopt;
  }

  // Whether the header's branch is the loop's only way out. Without the
  // guard, p is first defined by the test at the end: a break out of the
  // body before it would reach $E (or elsewhere) with p undefined.
  static bool OnlyExit(const ir::Cfg& cfg, const Loop& loop) {
    for (uint32_t b : loop.blocks) {
      if (b == loop.header) continue;
      for (uint32_t s : cfg.blocks[b].succs) {
        if (!InLoop(loop, s)) return false;
      }
    }
    return true;
  }

  // Whether an instruction of the loop other than its test and branch reads p.
  bool LoopReads(const ir::Cfg& cfg, const Loop& loop, ir::Reg p) const {
    for (uint32_t b : loop.blocks) {
      if (b == loop.header) continue;
      for (uint32_t i = cfg.blocks[b].begin; i < cfg.blocks[b].end; ++i) {
        if (Reads(kernel_.body[i], p)) return true;
      }
    }
    return false;
  }

  ir::Kernel& kernel_;
  Analyses& analyses_;
  std::optional<BodyEdit> edit_;  // made at the first rotation
};

}  // namespace

size_t RotateLoops(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return Rotator(kernel, analyses).Run();
}

size_t RotateLoops(ir::Kernel& kernel, Analyses& analyses) { return Rotator(kernel, analyses).Run(); }

}  // namespace ptxforge::passes
