// The PTX printer: ir::Module / ir::Kernel to PTX text.
#ifndef PTXFORGE_EMIT_PTX_PRINTER_H_
#define PTXFORGE_EMIT_PTX_PRINTER_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace ptxforge::emit {

// Prints a module: one header (`.version`, `.target`, `.address_size 64`),
// dynamic shared memory at module scope, then each kernel. The version is the
// module's pinned one, else the lowest the target and instructions allow.
// Registers are renumbered densely per class and declared as
// `.reg .b32 %r<N>;`; floats print as 0f/0d hex. The same IR always prints
// the same bytes. The kernels are expected to be verified; the printer
// only fails on module-level problems (mixed targets, a pinned version
// that is too low or unknown).
absl::StatusOr<std::string> PrintPtx(const ir::Module& module);
// One kernel as a module of its own.
absl::StatusOr<std::string> PrintPtx(const ir::Kernel& kernel,
                                     std::optional<ir::PtxVersion> pinned = std::nullopt);

}  // namespace ptxforge::emit

#endif  // PTXFORGE_EMIT_PTX_PRINTER_H_
