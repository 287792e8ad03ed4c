// FmaInto: acc = a * b + acc written straight into the accumulator register
// (one fma per step of a kernel's inner loop instead of an fma and a mov);
// MmaInto: the same for an mma's f32 accumulator fragment.
#ifndef PTXFORGE_KERNELS_ACCUMULATE_H_
#define PTXFORGE_KERNELS_ACCUMULATE_H_

#include <array>

#include "builder/kernel_builder.h"
#include "builder/mma.h"

namespace ptxforge::kernels {

template <ScalarTag T>
void FmaInto(KernelBuilder& b, Var<T> acc, Value<T> x, Value<T> y, Loc loc = Loc::current()) {
  ir::Instruction inst;
  inst.op = ir::Opcode::kFma;
  inst.mods.type = T::kType;
  inst.mods.rounding = ir::Rounding::kRn;
  inst.dsts = {acc.reg};
  inst.srcs = {ir::Operand::FromReg(x.reg), ir::Operand::FromReg(y.reg), ir::Operand::FromReg(acc.reg)};
  b.EmitInstruction(std::move(inst), loc);
}

// acc = A * B + acc on tensor cores: KernelBuilder::Mma's instruction (f32
// accumulation) with D and C the same four mutable registers (mma reads all
// its sources before it writes D).
template <MmaShape S, typename In>
void MmaInto(KernelBuilder& b, const std::array<Var<F32>, 4>& acc, const MmaFragA<S, In>& a, const MmaFragB<S, In>& bf,
             Loc loc = Loc::current()) {
  constexpr ir::Opcode op = MmaOpcode<S, In, In, F32>();
  static_assert(op != ir::Opcode::kRet, "no such mma form");
  const ir::OpInfo& info = ir::GetOpInfo(op);
  ir::Instruction inst;
  inst.op = op;
  inst.mods.type = inst.mods.type4 = F32::kType;
  inst.mods.type2 = inst.mods.type3 = In::kType;
  for (int v = 1; v <= ir::NumEnumValues(info, ir::ModSlot::kShape); ++v) {
    if (ir::EnumValueName(info, ir::ModSlot::kShape, v) == MmaShapeName(S)) inst.mods.shape = static_cast<uint8_t>(v);
  }
  inst.mods.layout = 1;  // row.col
  for (const Var<F32>& r : acc) inst.dsts.push_back(r.reg);
  for (const auto& r : a.regs) inst.srcs.push_back(r.reg);
  for (const auto& r : bf.regs) inst.srcs.push_back(r.reg);
  for (const Var<F32>& r : acc) inst.srcs.push_back(r.reg);
  b.EmitInstruction(std::move(inst), loc);
}

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_ACCUMULATE_H_
