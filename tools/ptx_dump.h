// ptx-dump: print a registry kernel's PTX, IR or statistics.
#ifndef PTXFORGE_TOOLS_PTX_DUMP_H_
#define PTXFORGE_TOOLS_PTX_DUMP_H_

#include <ostream>
#include <span>
#include <string>

namespace ptxforge::tools {

// Runs ptx-dump with `args` (without the program name). Returns the exit
// code: 0 success, 1 build/validation error, 2 usage error.
int RunPtxDump(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace ptxforge::tools

#endif  // PTXFORGE_TOOLS_PTX_DUMP_H_
