// Pipeline: runs passes in order, dumping after the chosen one.
#include "passes/pass.h"

#include <array>
#include <iterator>

#include "absl/container/inlined_vector.h"
#include "ir/strings.h"
#include "passes/analyses.h"
#include "passes/const_fold.h"
#include "passes/copy_prop.h"
#include "passes/cse.h"
#include "passes/dead_branches.h"
#include "passes/dead_register_removal.h"
#include "passes/identities.h"
#include "passes/licm.h"
#include "passes/loop_rotation.h"
#include "passes/pow2_division.h"
#include "passes/reassociate.h"
#include "passes/register_count.h"
#include "passes/strength_reduction.h"
#include "passes/verifier.h"

namespace ptxforge::passes {

namespace {

// The standard passes, one instance each for the process: they keep no state
// (Run reads and writes only the kernel and the analyses it is given), so
// pipelines on any thread share them, and building the standard pipeline
// allocates nothing (it was 13 allocations and frees, and as many destructor
// calls, on the first codegen of a process). Constant-initialized; the union
// keeps them alive for static destructors that still run pipelines.
struct StandardPasses {
  VerifierPass verify;
  ConstantFoldingPass constfold;
  Pow2DivisionPass pow2div;
  IdentitiesPass identities;
  ReassociatePass reassoc;
  CopyPropagationPass copyprop;
  CsePass cse;
  DeadBranchPass branches;
  LicmPass licm;
  StrengthReductionPass strength;
  LoopRotationPass rotate;
  DeadRegisterRemovalPass dce;
  RegisterCountPass regcount;
};
union StandardInstances {
  StandardPasses p;
  constexpr StandardInstances() : p() {}
  ~StandardInstances() {}
};
constinit StandardInstances g_standard;

// The optimisations in pipeline order: the name `--passes=` knows each by
// (its pass's name()), the option that turns it on, and its instance. A
// loop over this table is one short stretch of code with two branches,
// where an `if` per optimisation was ten (a first codegen pays for each
// branch it takes the first time).
struct Optimization {
  std::string_view name;
  bool PipelineOptions::*on;
  Pass* pass;
};
constexpr Optimization kInOrder[] = {
    {"constfold", &PipelineOptions::constfold, &g_standard.p.constfold},
    {"pow2div", &PipelineOptions::pow2div, &g_standard.p.pow2div},
    {"identities", &PipelineOptions::identities, &g_standard.p.identities},
    {"reassoc", &PipelineOptions::reassoc, &g_standard.p.reassoc},
    {"copyprop", &PipelineOptions::copyprop, &g_standard.p.copyprop},
    {"cse", &PipelineOptions::cse, &g_standard.p.cse},
    {"branches", &PipelineOptions::branches, &g_standard.p.branches},
    {"licm", &PipelineOptions::licm, &g_standard.p.licm},
    {"strength", &PipelineOptions::strength, &g_standard.p.strength},
    {"rotate", &PipelineOptions::rotate, &g_standard.p.rotate},
};
constexpr auto kOptimizations = [] {
  std::array<std::string_view, std::size(kInOrder)> names;
  for (size_t i = 0; i < names.size(); ++i) names[i] = kInOrder[i].name;
  return names;
}();

}  // namespace

PipelineOptions PipelineOptions::None() {
  PipelineOptions o;
  for (const Optimization& opt : kInOrder) o.*opt.on = false;
  return o;
}

std::span<const std::string_view> PipelineOptions::OptimizationNames() { return kOptimizations; }

bool PipelineOptions::Set(std::string_view name, bool on) {
  for (const Optimization& o : kInOrder) {
    if (o.name == name) {
      this->*o.on = on;
      return true;
    }
  }
  return false;
}

absl::StatusOr<PipelineOptions> PipelineOptions::Parse(std::string_view spec) {
  const std::string known = StrCat(StrJoin(kOptimizations, ", "), "; or all, none");
  if (spec == "all") return PipelineOptions{};
  if (spec == "none") return None();
  if (spec.empty()) return absl::InvalidArgumentError(StrCat("empty list of optimisations (", known, ")"));
  PipelineOptions o = spec.front() == '-' ? PipelineOptions{} : None();
  for (size_t start = 0; start <= spec.size();) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    std::string_view item = spec.substr(start, comma - start);
    start = comma + 1;
    bool on = true;
    std::string_view name = item;
    if (!name.empty() && (name.front() == '-' || name.front() == '+')) {
      on = name.front() == '+';
      name.remove_prefix(1);
    }
    if (name.empty()) {
      return absl::InvalidArgumentError(StrCat("empty optimisation name in '", ForMessage(spec), "' (", known, ")"));
    }
    if (!o.Set(name, on)) {
      return absl::InvalidArgumentError(StrCat("unknown optimisation '", ForMessage(name), "' (", known, ")"));
    }
  }
  return o;
}


Pipeline Pipeline::Standard(const PipelineOptions& options) {
  StandardPasses& s = g_standard.p;
  Pipeline p;
  static_assert(std::size(kOptimizations) + 3 <= kInlinePasses, "the standard passes fit passes_'s inline room");
  p.passes_.push_back(&s.verify);
  for (const Optimization& o : kInOrder) {
    if (options.*o.on) p.passes_.push_back(o.pass);
  }
  p.passes_.push_back(&s.dce);
  if (options.count_registers) p.passes_.push_back(&s.regcount);
  p.VerifyEach(options.verify_each);
  return p;
}

Pipeline& Pipeline::Add(std::unique_ptr<Pass> pass) {
  passes_.push_back(pass.get());
  owned_.push_back(std::move(pass));
  return *this;
}

std::vector<std::string_view> Pipeline::PassNames() const {
  std::vector<std::string_view> names;
  for (const auto& p : passes_) names.push_back(p->name());
  return names;
}

absl::Status Pipeline::DumpAfter(std::string_view pass_name, DumpFn dump) {
  bool known = pass_name == "all";
  for (const auto& p : passes_) known = known || p->name() == pass_name;
  if (!known) {
    return absl::InvalidArgumentError(StrCat("unknown pass '", ForMessage(pass_name), "'; passes: ",
                                                   StrJoin(PassNames(), ", "), ", all"));
  }
  dump_after_ = std::string(pass_name);
  dump_ = std::move(dump);
  return absl::OkStatus();
}

absl::Status Pass::RunWith(ir::Kernel& kernel, Analyses& analyses) {
  absl::Status s = Run(kernel);
  analyses.Invalidate();
  return s;
}

absl::Status Pipeline::Run(ir::Kernel& kernel) const {
  Analyses analyses(kernel);
  // What the passes from each one on read: each pass runs with the
  // analyses told what the passes after it read. A plain array for the
  // standard pipeline (an inlined vector's every access tests where its
  // elements are: a branch each on a first codegen), and the passes read
  // through one pointer for the same reason.
  Pass* const* passes = passes_.data();
  const size_t np = passes_.size();
  uint8_t small[kInlinePasses + 1];
  std::vector<uint8_t> large;
  uint8_t* read_from = small;
  if (np > kInlinePasses) {
    large.resize(np + 1);
    read_from = large.data();
  }
  read_from[np] = 0;
  for (size_t i = np; i-- > 0;) read_from[i] = read_from[i + 1] | passes[i]->reads();
  for (size_t i = 0; i < np; ++i) {
    Pass* p = passes[i];
    analyses.SetReadLater(read_from[i + 1]);
    absl::Status s = p->RunWith(kernel, analyses);
    if (!s.ok()) return s;
    analyses.Trim();
    if (verify_each_) {
      if (absl::Status v = ir::VerifyKernel(kernel); !v.ok()) {
        return absl::Status(v.code(), StrCat("after pass ", p->name(), ": ", v.message()));
      }
      if (absl::Status v = analyses.Check(); !v.ok()) {
        return absl::Status(v.code(), StrCat("after pass ", p->name(), ": ", v.message()));
      }
    }
    if (dump_ && (dump_after_ == "all" || dump_after_ == p->name())) dump_(p->name(), kernel);
  }
  return absl::OkStatus();
}

}  // namespace ptxforge::passes
