// The IR text printer: a stable, readable dump of an ir::Kernel (golden
// tests, `ptx-dump --emit=ir`, `--dump-after`).
#ifndef PTXFORGE_EMIT_IR_PRINTER_H_
#define PTXFORGE_EMIT_IR_PRINTER_H_

#include <string>

#include "ir/kernel.h"

namespace ptxforge::emit {

// Format:
//   kernel NAME target sm_80
//     param u64 a
//     shared f32 tile[256] align 4
//     extern shared b8 smem[] align 16
//     maxntid 256 1 1
//   {
//     %0:u64 = ld.param.u64 [a]          // a
//     @!%5 bra $L0_endif
//   $L0_endif:
//     ret
//   }
// Registers keep their virtual ids; a trailing comment gives the register's
// name hint and "mutable". Instruction text uses the PTX printer's opcode and
// operand spelling.
std::string PrintIr(const ir::Kernel& kernel);

}  // namespace ptxforge::emit

#endif  // PTXFORGE_EMIT_IR_PRINTER_H_
