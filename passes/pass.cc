// Pipeline: runs passes in order, dumping after the chosen one.
#include "passes/pass.h"

#include "ir/strings.h"
#include "passes/dead_register_removal.h"
#include "passes/register_count.h"
#include "passes/verifier.h"

namespace ptxforge::passes {

Pipeline Pipeline::Standard() {
  Pipeline p;
  p.Add(std::make_unique<VerifierPass>());
  p.Add(std::make_unique<DeadRegisterRemovalPass>());
  p.Add(std::make_unique<RegisterCountPass>());
  return p;
}

Pipeline& Pipeline::Add(std::unique_ptr<Pass> pass) {
  passes_.push_back(std::move(pass));
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

absl::Status Pipeline::Run(ir::Kernel& kernel) const {
  for (const auto& p : passes_) {
    absl::Status s = p->Run(kernel);
    if (!s.ok()) return s;
    if (dump_ && (dump_after_ == "all" || dump_after_ == p->name())) dump_(p->name(), kernel);
  }
  return absl::OkStatus();
}

}  // namespace ptxforge::passes
