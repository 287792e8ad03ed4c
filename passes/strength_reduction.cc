// Strength reduction of `base + i * C` in loops to stepped registers.
#include "passes/strength_reduction.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "passes/body_edit.h"
#include "passes/loops.h"
#include "passes/values.h"

namespace ptxforge::passes {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

int WidthOf(ir::ScalarType t) { return ir::IsInteger(t) || ir::IsBits(t) ? ir::TypeBits(t) : 0; }

uint64_t Mask(int width) { return width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

// `d = add.T r, IMM` or `d = add.T IMM, r` (integer, no .sat) of width `width`: IMM.
std::optional<uint64_t> AddOfImm(const ir::Instruction& inst, uint32_t r, int width) {
  if (inst.op != ir::Opcode::kAdd || inst.guarded() || inst.mods.sat || inst.srcs.size() != 2 ||
      !ir::IsInteger(inst.mods.type) || ir::TypeBits(inst.mods.type) != width) {
    return std::nullopt;
  }
  for (int k = 0; k < 2; ++k) {
    const ir::Operand& a = inst.srcs[k];
    const ir::Operand& c = inst.srcs[1 - k];
    if (a.is_reg() && a.id == r && c.is_imm()) return c.bits() & Mask(width);
  }
  return std::nullopt;
}

struct Step {
  uint32_t reg;    // the induction variable
  uint32_t index;  // the instruction that steps it (body index)
  uint64_t by;     // S
};

struct Pointer {
  uint32_t iv;
  uint64_t factor;  // C
  ir::Operand base;
  ir::ScalarType type;
  uint32_t reg;  // p; kNone while undecided or not worth it
};

struct Candidate {
  uint32_t index;  // x's definition
  uint32_t group;  // its pointer
  bool renamed;    // x's uses can read p (x's definition goes)
  uint32_t y;      // y = iv*C's definition when only x reads it (it goes with x); kNone otherwise
  uint32_t uses_end;  // when renamed: one past x's last use (all in x's block)
  uint32_t block_begin;  // x's block's first instruction
};

// A reduced x whose definition goes and whose uses read p: they are all in
// body[begin, end) (x's block up to its last use).
struct Renamed {
  uint32_t from, to;
  uint32_t index;  // x's definition
  uint32_t begin, end;
};

class Reducer {
 public:
  Reducer(ir::Kernel& kernel, Analyses& analyses)
      : kernel_(kernel), analyses_(analyses), n_(static_cast<uint32_t>(kernel.body.size())) {}

  size_t Run() {
    // The loops first: a pipeline run has them from licm (or the CFG to
    // find them in a read of each block's end).
    const LoopForest& forest = analyses_.loops();
    if (forest.loops.empty() || !HasCandidate()) return 0;
    values_ = &analyses_.values();
    const size_t nregs = kernel_.regs.size();
    stamp_.assign(nregs, kNone);
    steps_ok_.assign(nregs, false);
    // For each register whether all its uses are in one block, and the last
    // of them. The blocks are in body order (an instruction in none, after
    // a block's exit, counts as block kNone).
    use_block_.assign(nregs, kNone);
    last_use_.assign(nregs, 0);
    use_count_.assign(nregs, 0);
    const std::vector<ir::BasicBlock>& blocks = forest.cfg.blocks;
    uint32_t b = 0;
    for (uint32_t i = 0; i < n_; ++i) {
      while (b < blocks.size() && blocks[b].end <= i) ++b;
      const uint32_t block = b < blocks.size() && blocks[b].begin <= i ? b : kNone;
      ForEachUseId(kernel_.body[i], [&](uint32_t& r) {
        if (use_count_[r] < 2) ++use_count_[r];  // only whether it is 1 matters
        if (use_block_[r] == kNone) use_block_[r] = block;
        if (use_block_[r] != block) use_block_[r] = kNone - 1;  // several blocks
        last_use_[r] = i;
      });
    }
    deleted_.assign(n_, false);
    LoopReadAhead read_ahead(kernel_, forest);
    for (uint32_t l = 0; l < forest.loops.size(); ++l) {
      read_ahead.Before(l);
      if (forest.loops[l].entry_point != Loop::kNone) ReduceIn(forest, forest.loops[l], l);
    }
    // The scan's tables are done with: freed before the pointers' registers
    // are added to the kernel (in one step, to the size needed: growing the
    // table of registers one at a time doubled it) and the body is edited.
    for (std::vector<uint32_t>* table : {&stamp_, &use_block_, &last_use_}) std::vector<uint32_t>().swap(*table);
    std::vector<uint8_t>().swap(use_count_);
    std::vector<bool>().swap(steps_ok_);
    if (!pointer_types_.empty()) {
      kernel_.regs.reserve(kernel_.regs.size() + pointer_types_.size());
      for (ir::ScalarType t : pointer_types_) kernel_.AddReg(t, true, "addr");
    }
    if (reduced_ == 0) return 0;
    values_ = nullptr;
    Rebuild();
    return reduced_;
  }

 private:
  // Whether any instruction could be an address's `i * C` (mul.lo, shl or
  // mad.lo of a mutable integer register and an immediate): most kernels
  // have none, and then no loop needs finding.
  bool HasCandidate() const {
    for (const ir::Instruction& inst : kernel_.body) {
      const bool form = (inst.op == ir::Opcode::kMul && inst.mods.mode == ir::Mode::kLo) ||
                        inst.op == ir::Opcode::kShl || (inst.op == ir::Opcode::kMad && inst.mods.mode == ir::Mode::kLo);
      if (form && inst.srcs.size() >= 2 && inst.srcs[0].is_reg() && inst.srcs[1].is_imm() &&
          inst.srcs[0].id < kernel_.regs.size() && kernel_.regs[inst.srcs[0].id].is_mutable) {
        return true;
      }
    }
    return false;
  }

  // The edit that Rebuild applies: the pointers' starts and steps go into it
  // as they are made (one copy of each: a per-position list of them, moved
  // into the edit at the end, held every inserted instruction twice, and at
  // a million instructions of loops that was the codegen's peak heap).
  BodyEdit& Edit() {
    if (!edit_) edit_.emplace(kernel_.body);
    return *edit_;
  }

  void ReduceIn(const LoopForest& forest, const Loop& loop, uint32_t l) {
    // The registers the loop defines, and the steps of those that only step.
    steps_.clear();
    for (uint32_t b : loop.blocks) {
      const ir::BasicBlock& bb = forest.cfg.blocks[b];
      block_ = b;
      block_begin_ = bb.begin;
      for (uint32_t i = bb.begin; i < bb.end; ++i) {
        const ir::Instruction& inst = kernel_.body[i];
        for (ir::Reg d : inst.dsts) {
          if (stamp_[d.id] != l) {
            stamp_[d.id] = l;
            const ir::ScalarType type = kernel_.type_of(d);
            steps_ok_[d.id] = kernel_.regs[d.id].is_mutable && ir::IsInteger(type) &&
                              (ir::TypeBits(type) == 32 || ir::TypeBits(type) == 64);
          }
          std::optional<uint64_t> by = StepOf(inst, i, d.id);
          if (by && inst.dsts.size() == 1) {
            steps_.push_back({d.id, i, *by});
          } else {
            steps_ok_[d.id] = false;
          }
        }
      }
    }
    pointers_.clear();
    candidates_.clear();
    for (uint32_t b : loop.blocks) {
      const ir::BasicBlock& bb = forest.cfg.blocks[b];
      block_ = b;
      block_begin_ = bb.begin;
      for (uint32_t i = bb.begin; i < bb.end; ++i) {
        if (!deleted_[i]) Collect(l, i);
      }
    }
    Apply(loop);
  }

  // S when body[i] steps r by a constant: `r = add r, S`, or `r = mov t`
  // right after `t = add r, S`.
  std::optional<uint64_t> StepOf(const ir::Instruction& inst, uint32_t i, uint32_t r) const {
    const int width = WidthOf(kernel_.regs[r].type);
    if (width == 0) return std::nullopt;
    if (inst.op == ir::Opcode::kAdd) return AddOfImm(inst, r, width);
    if (inst.op != ir::Opcode::kMov || inst.guarded() || inst.srcs.size() != 1 || !inst.srcs[0].is_reg() ||
        i == block_begin_) {  // i - 1 in i's block
      return std::nullopt;
    }
    const ir::Instruction& prev = kernel_.body[i - 1];
    if (prev.dsts.size() != 1 || prev.dsts[0].id != inst.srcs[0].id || !values_->IsValue(prev.dsts[0])) return std::nullopt;
    return AddOfImm(prev, r, width);
  }

  // The loop being scanned that defines register r (kNone: none of those
  // scanned since, or a pointer this pass made).
  uint32_t Stamp(uint32_t r) const { return r < stamp_.size() ? stamp_[r] : kNone; }

  bool Invariant(const ir::Operand& op, uint32_t l) const {
    return op.is_imm() || (op.is_reg() && Stamp(op.id) != l);
  }

  // Whether a step of iv lies in (from, to).
  bool SteppedBetween(uint32_t iv, uint32_t from, uint32_t to) const {
    for (const Step& s : steps_) {
      if (s.reg == iv && s.index > from && s.index < to) return true;
    }
    return false;
  }

  // If body[i] is an address b + iv*C, records it as a candidate of its pointer.
  void Collect(uint32_t l, uint32_t i) {
    const ir::Instruction& inst = kernel_.body[i];
    if (inst.guarded() || inst.dsts.size() != 1 || !values_->IsValue(inst.dsts[0])) return;
    const ir::ScalarType t = inst.mods.type;
    const int width = WidthOf(kernel_.type_of(inst.dsts[0]));
    if (!ir::IsInteger(t) || ir::TypeBits(t) != width) return;
    uint32_t iv = kNone, y_def = kNone;
    uint64_t factor = 0;
    ir::Operand base;
    if (inst.op == ir::Opcode::kMad && inst.mods.mode == ir::Mode::kLo && inst.srcs.size() == 3 &&
        inst.srcs[0].is_reg() && inst.srcs[1].is_imm() && Invariant(inst.srcs[2], l)) {
      iv = inst.srcs[0].id;
      factor = inst.srcs[1].bits();
      base = inst.srcs[2];
    } else if (inst.op == ir::Opcode::kAdd && !inst.mods.sat && inst.srcs.size() == 2) {
      for (int k = 0; k < 2 && iv == kNone; ++k) {
        const ir::Operand& y = inst.srcs[k];
        if (!y.is_reg() || !Invariant(inst.srcs[1 - k], l) || Stamp(y.id) != l || !values_->IsValue(y.reg())) continue;
        const uint32_t yi = values_->Def(y.reg());
        const ir::Instruction& mul = kernel_.body[yi];
        if (yi < block_begin_ || yi > i || mul.srcs.size() != 2 || !mul.srcs[0].is_reg() ||
            !mul.srcs[1].is_imm() || ir::TypeBits(mul.mods.type) != width || WidthOf(kernel_.type_of(y.reg())) != width) {
          continue;
        }
        if (mul.op == ir::Opcode::kMul && mul.mods.mode == ir::Mode::kLo && ir::IsInteger(mul.mods.type)) {
          factor = mul.srcs[1].bits();
        } else if (mul.op == ir::Opcode::kShl && mul.srcs[1].bits() < static_cast<uint64_t>(width)) {
          factor = uint64_t{1} << mul.srcs[1].bits();
        } else {
          continue;
        }
        if (SteppedBetween(mul.srcs[0].id, yi, i)) continue;  // y read iv before a step that x follows
        iv = mul.srcs[0].id;
        base = inst.srcs[1 - k];
        y_def = yi;
      }
    }
    if (iv == kNone || Stamp(iv) != l || !steps_ok_[iv] || WidthOf(kernel_.regs[iv].type) != width) return;
    factor &= Mask(width);
    if (base.is_imm()) base = ir::Operand::Imm(t, base.bits() & Mask(width));
    uint32_t group = kNone;
    for (uint32_t g = 0; g < pointers_.size() && group == kNone; ++g) {
      const Pointer& q = pointers_[g];
      if (q.iv == iv && q.factor == factor && q.type == t && q.base.kind == base.kind && q.base.id == base.id &&
          q.base.value == base.value) {
        group = g;
      }
    }
    if (group == kNone) {
      group = static_cast<uint32_t>(pointers_.size());
      pointers_.push_back({iv, factor, base, t, kNone});
    }
    // x's uses can read p when they all follow x in its block, no step of iv between.
    const uint32_t x = inst.dsts[0].id;
    const bool renamed = use_block_[x] == block_ && !SteppedBetween(iv, i, last_use_[x] + 1);
    candidates_.push_back(
        {i, group, renamed, y_def != kNone && use_count_[kernel_.body[y_def].dsts[0].id] == 1 ? y_def : kNone,
         last_use_[x] + 1, block_begin_});
  }

  // Reduces the candidates of each pointer that removes more instructions
  // from the loop than its steps add.
  void Apply(const Loop& loop) {
    std::vector<int> gain(pointers_.size(), 0);
    for (const Candidate& c : candidates_) gain[c.group] += (c.renamed ? 1 : 0) + (c.renamed && c.y != kNone ? 1 : 0);
    for (uint32_t g = 0; g < pointers_.size(); ++g) {
      int steps = 0;
      for (const Step& s : steps_) steps += s.reg == pointers_[g].iv;
      if (gain[g] > steps) pointers_[g].reg = MakePointer(loop, pointers_[g]);
    }
    for (const Candidate& c : candidates_) {
      const uint32_t p = pointers_[c.group].reg;
      if (p == kNone) continue;
      ir::Instruction& inst = kernel_.body[c.index];
      if (c.renamed) {
        renamed_.push_back({inst.dsts[0].id, p, c.index, c.block_begin, std::max(c.uses_end, c.index + 1)});
        deleted_[c.index] = true;
        Edit().Drop(c.index);  // while it is in the caches
        if (c.y != kNone) {
          // y is dead once x goes: dropped in the same edit, so that the
          // body keeps its size where a pointer's start and step replace x
          // and y, and the edit moves only the instructions between them
          // (left to dce, the body grew by two per loop here and every
          // instruction after the first loop moved, twice).
          deleted_[c.y] = true;
          Edit().Drop(c.y);
        }
      } else {
        MakeMove(kernel_, inst, ir::Operand(ir::Reg{p}));
        analyses_.NoteOpcode(ir::Opcode::kMov);
      }
      ++reduced_;
    }
  }

  uint32_t MakePointer(const Loop& loop, const Pointer& q) {
    // p joins the kernel's registers when the scan is over (Run). The
    // per-register tables are not grown for it: until Rebuild no body
    // instruction reads it (a reduced x becomes `mov x, p`, which Collect
    // does not take), and Stamp() answers for it all the same. Growing
    // five tables of a million registers by one doubled each of them, and
    // at a million instructions of loops that was the pass's peak heap.
    const uint32_t p = static_cast<uint32_t>(kernel_.regs.size() + pointer_types_.size());
    pointer_types_.push_back(q.type);
    ir::Instruction init;
    init.op = ir::Opcode::kMad;
    init.mods.type = q.type;
    init.mods.mode = ir::Mode::kLo;
    init.dsts = {ir::Reg{p}};
    init.srcs = {ir::Operand(ir::Reg{q.iv}), ir::Operand::Imm(q.type, q.factor), q.base};
    init.loc = kernel_.body[loop.entry_point].loc;
    Edit().InsertBefore(loop.entry_point, std::move(init));
    const uint64_t mask = Mask(ir::TypeBits(q.type));
    for (const Step& s : steps_) {
      if (s.reg != q.iv) continue;
      ir::Instruction step;
      step.op = ir::Opcode::kAdd;
      step.mods.type = q.type;
      step.dsts = {ir::Reg{p}};
      step.srcs = {ir::Operand(ir::Reg{p}), ir::Operand::Imm(q.type, (s.by * q.factor) & mask)};
      step.loc = kernel_.body[s.index].loc;
      Edit().InsertAfter(s.index, std::move(step));
    }
    return p;
  }

  // Renames, then drops the reduced instructions and puts in the pointers'
  // starts and steps, in place (BodyEdit). The starts go to the end of the
  // block falling into the loop's header and the steps next to the
  // induction variables' steps, and all are straight-line code: the
  // analyses follow the edit (the pointers are new mutable registers, the
  // reduced values' registers lose their definitions).
  void Rebuild() {
    BodyEdit& edit = Edit();
    {
      // Freed before the edit grows the body (the codegen's peak on small
      // kernels of loops). Only the ranges that hold a renamed register's
      // uses are read (at a million instructions, renaming over the whole
      // body read all of it from memory once more).
      Renaming renaming(kernel_.regs.size());
      for (const Renamed& r : renamed_) renaming.Set(ir::Reg{r.from}, ir::Reg{r.to});
      std::sort(renamed_.begin(), renamed_.end(), [](const Renamed& a, const Renamed& b) { return a.begin < b.begin; });
      uint32_t done = 0;  // renamed up to here
      for (const Renamed& r : renamed_) {
        for (uint32_t i = std::max(done, r.begin); i < r.end; ++i) {
          if (!deleted_[i]) renaming.Apply(kernel_.body[i]);
        }
        done = std::max(done, r.end);
      }
    }
    std::vector<bool>().swap(deleted_);
    std::vector<Renamed>().swap(renamed_);
    analyses_.ApplyEdit(edit, kernel_);
  }

  ir::Kernel& kernel_;
  Analyses& analyses_;
  const uint32_t n_;
  const Values* values_ = nullptr;
  std::vector<uint32_t> stamp_;     // by register: the loop being scanned that defines it
  std::vector<bool> steps_ok_;      // by register: every definition in that loop is a constant step
  std::vector<Step> steps_;         // of the loop being scanned
  std::vector<Pointer> pointers_;   // of the loop being scanned
  uint32_t block_ = kNone, block_begin_ = 0;  // the block being scanned, and its first instruction
  std::vector<uint32_t> use_block_, last_use_;  // by register
  std::vector<uint8_t> use_count_;              // by register: its reads, up to 2
  std::vector<Candidate> candidates_;  // of the loop being scanned
  std::optional<BodyEdit> edit_;    // made at the first insertion
  std::vector<ir::ScalarType> pointer_types_;  // of the registers MakePointer numbered, not yet in the kernel
  std::vector<bool> deleted_;
  std::vector<Renamed> renamed_;
  size_t reduced_ = 0;
};

}  // namespace

size_t ReduceAddressStrength(ir::Kernel& kernel) {
  Analyses analyses(kernel);
  return Reducer(kernel, analyses).Run();
}

size_t ReduceAddressStrength(ir::Kernel& kernel, Analyses& analyses) { return Reducer(kernel, analyses).Run(); }

}  // namespace ptxforge::passes
