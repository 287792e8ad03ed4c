// FmaInto: acc = a * b + acc written straight into the accumulator register
// (one fma per step of a kernel's inner loop instead of an fma and a mov).
#ifndef PTXFORGE_KERNELS_ACCUMULATE_H_
#define PTXFORGE_KERNELS_ACCUMULATE_H_

#include "builder/kernel_builder.h"

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

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_ACCUMULATE_H_
