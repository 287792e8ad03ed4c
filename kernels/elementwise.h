// elementwise: y = act(op(a, b)) over n elements, 128-bit vector accesses.
#ifndef PTXFORGE_KERNELS_ELEMENTWISE_H_
#define PTXFORGE_KERNELS_ELEMENTWISE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

enum class ElementwiseOp { kCopy, kAdd, kSub, kMul };
enum class Activation { kNone, kRelu, kGelu, kGeluTanh, kSilu, kSigmoid };

// y[i] = act(op(a[i], b[i])) for i < n, computed in f32 (f16/bf16 storage).
// Params: a, b (not read for copy; may be 0), y (u64 pointers), n (u32).
// Grid-stride: any grid and block (at most `block` threads). When a, b and y
// are 16-byte aligned each thread moves 16 bytes per access (ld.v4) and the
// last n % (16 / size) elements go one at a time; otherwise every element
// goes one at a time. gelu is the erf form; gelu_tanh, silu and sigmoid use
// tanh.approx / ex2.approx / rcp.approx for f16 and bf16 storage (within
// their 1e-2 tolerance) and the accurate builder/math.h forms for f32.
struct ElementwiseSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // f16, bf16, f32
  ElementwiseOp op = ElementwiseOp::kAdd;
  Activation act = Activation::kGelu;
  uint32_t block = 256;  // .maxntid, 32..1024

  absl::Status Validate() const;
  std::string KernelName() const;  // "elementwise_add_gelu_f32"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// The reference in double: act(op(a, b)).
double ElementwiseReference(ElementwiseOp op, Activation act, double a, double b);

class ElementwiseFamily : public SpecFamily<ElementwiseSpec> {
 public:
  std::string_view name() const override { return "elementwise"; }
  std::string_view description() const override {
    return "y = act(op(a, b)): copy/add/sub/mul, relu/gelu/gelu_tanh/silu/sigmoid; 128-bit accesses";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<ElementwiseSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_ELEMENTWISE_H_
