// Decoding ir::Kernel into the emulator's Program: slots, layouts, handlers.
#include <map>

#include "ir/format.h"
#include "ir/strings.h"
#include "runtime/device.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime::emu {
namespace {

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

Space SpaceOf(ir::StateSpace s) {
  switch (s) {
    case ir::StateSpace::kGlobal: return Space::kGlobal;
    case ir::StateSpace::kShared: return Space::kShared;
    case ir::StateSpace::kLocal: return Space::kLocal;
    case ir::StateSpace::kParam: return Space::kParam;
    default: return Space::kGeneric;
  }
}

// What the emulator does not model, in a kernel ir::CheckWellFormed accepted:
// the instruction and why.
absl::Status CheckSupported(const ir::Kernel& k) {
  for (size_t i = 0; i < k.body.size(); ++i) {
    const ir::Instruction& inst = k.body[i];
    std::string_view why;
    if (inst.op == ir::Opcode::kRaw) {
      why = "raw PTX is opaque to it";
    } else if (inst.mods.space == ir::StateSpace::kConst) {
      why = "it does not model const memory (a kernel cannot declare const data to read)";
    } else if (inst.op == ir::Opcode::kCvta && inst.mods.space == ir::StateSpace::kParam) {
      why = "it does not model generic addresses of params (read params with ld.param)";
    }
    if (!why.empty()) {
      std::string loc = ir::FormatLoc(inst.loc);
      return absl::UnimplementedError(StrCat("kernel ", k.name, ": ", loc.empty() ? StrCat("instruction ", i) : loc,
                                             ": the emulator cannot run `", ir::InstructionText(k, inst), "`: ", why));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string Program::PtxText(uint32_t index) const {
  std::string out;
  if (index >= kernel.body.size()) return out;
  ir::AppendInstruction(out, kernel, kernel.body[index],
                        [this](std::string& o, ir::Reg r) { ir::AppendPtxRegName(o, numbering, r); });
  return out;
}

std::string Program::SourceLoc(uint32_t index) const {
  return index < kernel.body.size() ? ir::FormatLoc(kernel.body[index].loc) : std::string();
}

absl::StatusOr<Program> Decode(const ir::Kernel& kernel, bool check_init, bool approx_worst_error) {
  if (absl::Status s = CheckSupported(kernel); !s.ok()) return s;
  Program p;
  p.kernel = kernel;
  p.numbering = ir::RegisterNumbering::Compute(kernel);
  p.check_init = check_init;
  p.num_regs = static_cast<uint32_t>(kernel.regs.size());

  // Layouts: shared variables in order, the dynamic window last; local likewise.
  p.variable_offsets.assign(kernel.variables.size(), 0);
  uint64_t shared = 0, local = 0, extern_align = 1;
  int extern_index = -1;
  for (size_t i = 0; i < kernel.variables.size(); ++i) {
    const ir::Variable& v = kernel.variables[i];
    if (v.is_extern) {
      extern_index = static_cast<int>(i);
      extern_align = std::max<uint64_t>(extern_align, v.align);
      continue;
    }
    uint64_t& cursor = v.space == ir::StateSpace::kShared ? shared : local;
    cursor = AlignUp(cursor, v.align);
    p.variable_offsets[i] = cursor;
    cursor += v.size_bytes();
  }
  // Shared and local addresses live in 4 GiB windows (per block, per thread).
  for (auto [bytes, space] : {std::pair{shared, "shared"}, std::pair{local, "local"}}) {
    if (bytes > kWindowSize) {
      return absl::ResourceExhaustedError(StrCat("kernel ", kernel.name, ": its ", space, " variables take ", bytes,
                                                 " bytes, more than the emulator's ", kWindowSize, "-byte ", space,
                                                 " window"));
    }
  }
  p.static_shared_bytes = shared;
  p.dynamic_shared_offset = AlignUp(shared, extern_align);
  if (extern_index >= 0) p.variable_offsets[extern_index] = p.dynamic_shared_offset;
  // Each thread's local frame is 16-byte aligned (host atomics need natural alignment).
  p.local_bytes = AlignUp(local, 16);
  p.param_offsets = ParamOffsets(kernel.params, &p.param_bytes);

  // Constant slots, shared by value.
  std::map<uint64_t, uint32_t> constants;
  auto constant = [&](uint64_t bits) {
    auto [it, inserted] = constants.emplace(bits, 0);
    if (inserted) {
      it->second = p.num_regs + static_cast<uint32_t>(p.initial_slots.size());
      p.initial_slots.push_back(bits);
    }
    return it->second;
  };

  // Labels map to the index of the next decoded instruction.
  std::vector<uint32_t> label_pc(kernel.labels.size(), 0);
  {
    uint32_t pc = 0;
    for (const ir::Instruction& inst : kernel.body) {
      if (inst.op == ir::Opcode::kLabel) {
        label_pc[inst.srcs[0].id] = pc;
      } else if (!inst.info().has(ir::kPseudo)) {
        ++pc;
      }
    }
  }

  std::vector<size_t> operands_at;  // by pc: where its slots start in p.operand_slots
  for (uint32_t index = 0; index < kernel.body.size(); ++index) {
    const ir::Instruction& inst = kernel.body[index];
    if (inst.info().has(ir::kPseudo)) continue;  // labels and pragmas: nothing runs
    DInst d;
    d.index = index;
    d.mods = inst.mods;
    d.op_class = static_cast<uint8_t>(inst.info().op_class);
    d.vec = inst.mods.vec;
    d.space = SpaceOf(inst.mods.space);
    // The state space of each address from the row's signature (cp.async:
    // the first in shared, the second in global memory).
    {
      const ir::Signature& sig = inst.info().sig;
      int n = 0;
      for (int k = 0; k < sig.nsrc && !sig.any; ++k) {
        if (sig.srcs[k].rule != ir::TypeRule::kAddress) continue;
        (n++ == 0 ? d.space : d.space2) = SpaceOf(ir::AddressSpace(inst, sig.srcs[k]));
      }
    }
    if (inst.guarded()) {
      d.guard = inst.guard.id;
      d.guard_negated = inst.guard_negated;
    }
    // The slots go to p.operand_slots; `at` (fixed up below, once the pool
    // stops growing) remembers where.
    operands_at.push_back(p.operand_slots.size());
    d.ndst = static_cast<uint16_t>(inst.dsts.size());
    for (ir::Reg r : inst.dsts) p.operand_slots.push_back(r.id);
    int addresses = 0;
    for (const ir::Operand& op : inst.srcs) {
      uint32_t slot = kNoSlot;
      switch (op.kind) {
        case ir::OperandKind::kReg: slot = op.id; break;
        case ir::OperandKind::kImm: slot = constant(op.bits()); break;
        case ir::OperandKind::kSpecial: d.imm = op.id; continue;
        case ir::OperandKind::kSymbol: slot = constant(p.variable_offsets[op.id]); break;
        case ir::OperandKind::kLabel: d.imm = label_pc[op.id]; continue;
        case ir::OperandKind::kAddress: {
          // The first address to base/imm, a second one to base2/imm2.
          if (addresses == 2) return absl::InternalError("more than two addresses");
          uint32_t& base = addresses == 0 ? d.base : d.base2;
          int64_t& imm = addresses++ == 0 ? d.imm : d.imm2;
          switch (op.base) {
            case ir::AddressBase::kReg: base = op.id; imm = op.value; break;
            case ir::AddressBase::kSymbol: imm = static_cast<int64_t>(p.variable_offsets[op.id]) + op.value; break;
            case ir::AddressBase::kParam: imm = p.param_offsets[op.id]; break;
          }
          continue;
        }
        case ir::OperandKind::kNone: return absl::InternalError("empty operand");
      }
      p.operand_slots.push_back(slot);
      ++d.nsrc;
    }
    if ((inst.op == ir::Opcode::kAtom || inst.op == ir::Opcode::kRed) &&
        (inst.mods.space == ir::StateSpace::kGlobal || inst.mods.space == ir::StateSpace::kGeneric)) {
      p.has_global_atomics = true;
    }
    switch (inst.op) {  // the per-thread cp.async state is kept when any of these can run
      case ir::Opcode::kCpAsync:
      case ir::Opcode::kCpAsyncCommit:
      case ir::Opcode::kCpAsyncWait:
      case ir::Opcode::kCpAsyncWaitAll: p.has_cp_async = true; break;
      default: break;
    }
    switch (inst.op) {
      case ir::Opcode::kBarSync: d.collective = Collective::kBarrier; break;
      case ir::Opcode::kShfl: d.collective = Collective::kShfl; break;
      case ir::Opcode::kVote: d.collective = Collective::kVote; break;
      case ir::Opcode::kActiveMask: d.collective = Collective::kActiveMask; break;
      case ir::Opcode::kBarWarpSync: d.collective = Collective::kWarpSync; break;
      case ir::Opcode::kLdmatrix:
      case ir::Opcode::kStmatrix: d.collective = Collective::kMatrix; break;
      case ir::Opcode::kRedux: d.collective = Collective::kRedux; break;
      case ir::Opcode::kMatchAny:
      case ir::Opcode::kMatchAll: d.collective = Collective::kMatch; break;
      default: break;
    }
    if (inst.info().has(ir::kWarpMatrix)) d.collective = Collective::kMma;
    Handler h = approx_worst_error ? SelectApproxWorst(inst, d) : nullptr;
    if (h == nullptr) h = SelectArith(inst);
    if (h == nullptr) h = SelectConvert(inst);
    if (h == nullptr) h = SelectMemory(inst);
    if (h == nullptr) h = SelectControl(inst);
    if (h == nullptr) h = SelectMma(inst);
    if (h == nullptr) {
      return absl::UnimplementedError(StrCat("kernel ", kernel.name, ": the emulator cannot run ",
                                             ir::InstructionText(kernel, inst)));
    }
    d.fn = h;
    p.code.push_back(d);
  }
  // A final exit so that no thread runs past the end.
  DInst end;
  end.fn = SelectControl(ir::Instruction{});
  end.index = static_cast<uint32_t>(kernel.body.size());
  end.op_class = static_cast<uint8_t>(ir::OpClass::kControl);
  p.code.push_back(end);
  for (size_t pc = 0; pc < operands_at.size(); ++pc) {
    DInst& d = p.code[pc];
    d.dst = p.operand_slots.data() + operands_at[pc];
    d.src = d.dst + d.ndst;
  }
  p.num_slots = p.num_regs + static_cast<uint32_t>(p.initial_slots.size());
  return p;
}

}  // namespace ptxforge::runtime::emu
