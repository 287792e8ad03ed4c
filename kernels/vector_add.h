// vector_add: c[i] = a[i] + b[i] for i < n, one element per thread.
#ifndef PTXFORGE_KERNELS_VECTOR_ADD_H_
#define PTXFORGE_KERNELS_VECTOR_ADD_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// Params: a, b, c (u64 pointers), n (u32). Launch: any grid covering n
// threads in x, blocks of at most `block` threads.
struct VectorAddSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // f16, f32, f64, s32, u32, s64, u64
  uint32_t block = 256;                        // .maxntid (1..1024)

  absl::Status Validate() const;
  std::string KernelName() const;  // "vector_add_f32"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// The reference: c[i] = a[i] + b[i] (V is double for floats, int64_t for
// integers; store the result in the element type to round or wrap it).
template <typename V>
std::vector<V> VectorAddReference(std::span<const V> a, std::span<const V> b) {
  std::vector<V> c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

class VectorAddFamily : public SpecFamily<VectorAddSpec> {
 public:
  std::string_view name() const override { return "vector_add"; }
  std::string_view description() const override { return "c[i] = a[i] + b[i] (one element per thread)"; }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<VectorAddSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_VECTOR_ADD_H_
