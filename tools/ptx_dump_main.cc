// ptx-dump's main(): forwards to RunPtxDump.
#include <iostream>
#include <string>
#include <vector>

#include "tools/ptx_dump.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ptxforge::tools::RunPtxDump(args, std::cout, std::cerr);
}
