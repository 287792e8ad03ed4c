// The kernel library's registry: named kernel families with default
// configurations (what `ptx-dump --list` prints).
#ifndef PTXFORGE_KERNELS_REGISTRY_H_
#define PTXFORGE_KERNELS_REGISTRY_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/config.h"
#include "kernels/problem.h"

namespace ptxforge::kernels {

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;
  // The registry name ("vector_add").
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual std::span<const ConfigField> fields() const = 0;
  // The targets the family builds for (Build refuses the others with a
  // message naming the minimum). Every target unless the family says so.
  virtual ir::TargetRequirement requirement() const { return {}; }
  // Builds (and verifies) the kernel for a configuration. A bad configuration
  // is an error naming the field.
  virtual absl::StatusOr<ir::Kernel> Build(const Config& config, ir::Target target) const = 0;
  // Checks the configuration's kernel fields without building (what
  // ptx-dump reports as a usage error). OK unless the family says otherwise.
  virtual absl::Status ValidateConfig(const Config& config) const { return absl::OkStatus(); }
  // Generated inputs of the configuration's test shape (its shape fields,
  // small by default), the launch, and the reference outputs computed by the
  // family's plain C++ reference. The same seed gives the same problem.
  virtual absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const = 0;

  // The family's defaults with `overrides` applied.
  absl::StatusOr<Config> MakeConfig(std::span<const std::pair<std::string, std::string>> overrides = {}) const {
    return Config::Make(name(), fields(), overrides);
  }
};

// A family whose kernels come from a spec struct with Validate() and
// Build(target): Build(config) is SpecFrom(config), then Spec::Build.
template <typename Spec>
class SpecFamily : public KernelFamily {
 public:
  absl::StatusOr<ir::Kernel> Build(const Config& config, ir::Target target) const final {
    absl::StatusOr<Spec> spec = SpecFrom(config);
    if (!spec.ok()) return spec.status();
    return spec->Build(target);
  }
  absl::Status ValidateConfig(const Config& config) const final { return SpecFrom(config).status(); }
  // The (validated) spec a configuration describes.
  virtual absl::StatusOr<Spec> SpecFrom(const Config& config) const = 0;
};

// Every family, sorted by name.
std::span<const KernelFamily* const> AllFamilies();
// nullptr when there is none.
const KernelFamily* FindFamily(std::string_view name);
// Up to three registry names close to `name` (edit distance), for "did you mean".
std::vector<std::string_view> CloseFamilyNames(std::string_view name);

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_REGISTRY_H_
