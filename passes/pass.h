// The Pass interface and a pipeline that can dump the IR after any pass.
#ifndef PTXFORGE_PASSES_PASS_H_
#define PTXFORGE_PASSES_PASS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/kernel.h"

namespace ptxforge::passes {

class Analyses;  // passes/analyses.h

// The shared analyses a pass reads (Pass::reads()), as a set of these bits.
namespace analysis {
inline constexpr uint8_t kCfg = 1;         // Analyses::cfg()
inline constexpr uint8_t kDominators = 2;  // Analyses::idom()
inline constexpr uint8_t kLoops = 4;       // Analyses::loops()
inline constexpr uint8_t kValues = 8;      // Analyses::values()
inline constexpr uint8_t kAll = 15;
}  // namespace analysis

class Pass {
 public:
  virtual ~Pass() = default;
  // A short stable name ("verify", "dce", "regcount") used by --dump-after.
  virtual std::string_view name() const = 0;
  virtual absl::Status Run(ir::Kernel& kernel) = 0;
  // What Pipeline::Run calls: Run with the analyses the passes of one
  // pipeline run share (the CFG, dominators, loops, the value table). The
  // default calls Run(kernel) and then drops them all, since a pass that
  // does not know them may have changed anything; the standard passes
  // override it to use them and to say what they changed.
  virtual absl::Status RunWith(ir::Kernel& kernel, Analyses& analyses);
  // Which shared analyses RunWith reads (analysis::k* bits; the body
  // summary is always kept). Pipeline::Run drops those that no pass after
  // the current one reads, instead of following edits with them and
  // holding them (passes/analyses.h, SetReadLater). A wrong answer costs
  // time only: what is dropped is built again when asked for (references
  // taken before an ApplyEdit or RemoveMarked call are not used after it).
  // All by default.
  virtual uint8_t reads() const { return analysis::kAll; }
};

// Which optimisations Pipeline::Standard runs (each on by default),
// whether it counts registers and whether the verifier runs after every
// pass.
struct PipelineOptions {
  bool constfold = true;   // constant folding and propagation (passes/const_fold.h)
  bool pow2div = true;     // unsigned division and remainder by 2^k as shr/and (passes/pow2_division.h)
  bool identities = true;  // exact algebraic identities (passes/identities.h)
  bool reassoc = true;     // add/sub chains that cancel (passes/reassociate.h)
  bool copyprop = true;    // copy propagation (passes/copy_prop.h)
  bool cse = true;         // common subexpressions by value numbering (passes/cse.h)
  bool branches = true;    // constant guards and unreachable blocks (passes/dead_branches.h)
  bool licm = true;        // loop-invariant code motion (passes/licm.h)
  bool strength = true;    // strength reduction of address arithmetic in loops (passes/strength_reduction.h)
  bool rotate = true;      // innermost loops test at their end (passes/loop_rotation.h)
  // Runs register counting last (passes/register_count.h), which fills
  // kernel.stats: instructions, registers per class, maximum live. Off by
  // default: nothing on the way to PTX reads the numbers, and counting was
  // 4% of a process's first codegen (vector_add; README, "The optimizer").
  // ptx-dump --emit=stats turns it on.
  bool count_registers = false;
  // Runs ir::VerifyKernel after every pass; an error names the pass that
  // broke the kernel. Tests turn it on.
  bool verify_each = false;

  // Every optimisation off (count_registers and verify_each as by default).
  static PipelineOptions None();
  // The optimisations' names, in the order the pipeline runs them.
  static std::span<const std::string_view> OptimizationNames();
  // Parses ptx-dump's --passes value: "all" (the default), "none", or a
  // comma-separated list of optimisation names, each NAME or +NAME (on) or
  // -NAME (off). A list whose first item is -NAME starts from all of them;
  // otherwise from none. Errors name the bad item and list the names.
  static absl::StatusOr<PipelineOptions> Parse(std::string_view spec);
  // Turns one optimisation on or off; false if there is none of that name.
  bool Set(std::string_view name, bool on);
};

// Called after a pass with the kernel as that pass left it.
using DumpFn = std::function<void(std::string_view pass, const ir::Kernel& kernel)>;

class Pipeline {
 public:
  Pipeline() = default;
  Pipeline(Pipeline&&) = default;
  Pipeline& operator=(Pipeline&&) = default;

  // verify -> constfold -> pow2div -> identities -> reassoc -> copyprop -> cse -> branches -> licm
  // -> strength -> rotate -> dce, without the optimisations `options` turns off, then regcount
  // when options.count_registers: what ptx-dump and the kernel library run.
  static Pipeline Standard(const PipelineOptions& options = {});

  Pipeline& Add(std::unique_ptr<Pass> pass);
  // Calls `dump` after the pass named `pass_name` ("all": after every pass).
  // Fails when no pass has that name; the message lists the names.
  absl::Status DumpAfter(std::string_view pass_name, DumpFn dump);
  // Runs the verifier after every pass (PipelineOptions::verify_each).
  Pipeline& VerifyEach(bool on = true) {
    verify_each_ = on;
    return *this;
  }
  // Runs the passes in order; stops at the first error, which names the
  // pass. The passes share one Analyses (passes/analyses.h); with
  // VerifyEach, what it keeps is checked against a fresh computation after
  // every pass too.
  absl::Status Run(ir::Kernel& kernel) const;
  std::vector<std::string_view> PassNames() const;

 private:
  // The passes in order: Standard's are process-wide instances (they are
  // stateless), the others are owned_. Inline, so that building the
  // standard pipeline allocates nothing.
  static constexpr size_t kInlinePasses = 16;
  absl::InlinedVector<Pass*, kInlinePasses> passes_;
  std::vector<std::unique_ptr<Pass>> owned_;
  std::string dump_after_;
  DumpFn dump_;
  bool verify_each_ = false;
};

}  // namespace ptxforge::passes

#endif  // PTXFORGE_PASSES_PASS_H_
