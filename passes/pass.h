// The Pass interface and a pipeline that can dump the IR after any pass.
#ifndef PTXFORGE_PASSES_PASS_H_
#define PTXFORGE_PASSES_PASS_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ir/kernel.h"

namespace ptxforge::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  // A short stable name ("verify", "dce", "regcount") used by --dump-after.
  virtual std::string_view name() const = 0;
  virtual absl::Status Run(ir::Kernel& kernel) = 0;
};

// Called after a pass with the kernel as that pass left it.
using DumpFn = std::function<void(std::string_view pass, const ir::Kernel& kernel)>;

class Pipeline {
 public:
  Pipeline() = default;
  Pipeline(Pipeline&&) = default;
  Pipeline& operator=(Pipeline&&) = default;

  // verify -> dce -> regcount: what ptx-dump and the runtime run.
  static Pipeline Standard();

  Pipeline& Add(std::unique_ptr<Pass> pass);
  // Calls `dump` after the pass named `pass_name` ("all": after every pass).
  // Fails when no pass has that name; the message lists the names.
  absl::Status DumpAfter(std::string_view pass_name, DumpFn dump);
  // Runs the passes in order; stops at the first error, which names the pass.
  absl::Status Run(ir::Kernel& kernel) const;
  std::vector<std::string_view> PassNames() const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
  std::string dump_after_;
  DumpFn dump_;
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_PASS_H_
