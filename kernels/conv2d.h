// conv2d: 2-D convolution over NCHW tensors (im2col, direct, 1x1, backward
// data, backward filter), their shared spec and plain C++ references.
#ifndef PTXFORGE_KERNELS_CONV2D_H_
#define PTXFORGE_KERNELS_CONV2D_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

enum class Conv2dVariant {
  // input [N,C,H,W] -> col [N, C·kH·kW, outH·outW]; row (c·kH + ky)·kW + kx,
  // zero where the receptive field falls in padding.
  // Params: input, col, batch, in_h, in_w, out_h, out_w.
  kIm2col,
  // output[n,oc,oy,ox] = bias[oc] (when bias ≠ 0) + Σ input·weight over the
  // channels of oc's group and the kernel window; weight [OC, C/g, kH, kW].
  // Params: input, weight, output, bias (may be 0), batch, in_h, in_w, out_h, out_w.
  kDirect,
  // The direct result for kH = kW = 1, stride 1, pad 0, dilation 1;
  // weight [OC, C/g]. Params: input, weight, output, bias (may be 0), batch, spatial (H·W).
  kPointwise,
  // grad_input[n,c,y,x] = Σ grad_output[n,oc,oy,ox]·weight[oc,c',ky,kx] over
  // oc in c's group and (ky, kx) with y = oy·s − p + ky·d (same for x).
  // Params: grad_output, weight, grad_input, batch, in_h, in_w, out_h, out_w.
  kBackwardData,
  // grad_weight[oc,c',ky,kx] = Σ over n, oy, ox of
  // input[n, c, oy·s − p + ky·d, ox·s − p + kx·d]·grad_output[n,oc,oy,ox].
  // Every block reduces over the whole batch for its weights (no atomics).
  // Params: input, grad_output, grad_weight, batch, in_h, in_w, out_h, out_w.
  kBackwardFilter,
};

// "im2col", "direct", "pointwise", "backward_data", "backward_filter".
std::string_view Conv2dVariantName(Conv2dVariant variant);

// The sizes of one launch (out_h/out_w follow from the spec and in_h/in_w).
struct Conv2dShape {
  uint32_t batch = 1;
  uint32_t in_h = 1;
  uint32_t in_w = 1;
  uint32_t out_h = 1;
  uint32_t out_w = 1;
};

// One convolution kernel. Channels, kernel window, stride, padding, dilation
// and groups are fixed at build time (the window loops are unrolled); batch
// and the spatial sizes are launch params. Types: f16 (storage, f32
// accumulation), f32, f64.
struct Conv2dSpec {
  Conv2dVariant variant = Conv2dVariant::kDirect;
  ir::ScalarType type = ir::ScalarType::kF32;
  uint32_t in_channels = 3;
  uint32_t out_channels = 64;
  uint32_t kernel_h = 3;
  uint32_t kernel_w = 3;
  uint32_t stride_h = 1;
  uint32_t stride_w = 1;
  uint32_t pad_h = 0;
  uint32_t pad_w = 0;
  uint32_t dilation_h = 1;
  uint32_t dilation_w = 1;
  uint32_t groups = 1;

  absl::Status Validate() const;
  // "conv2d_direct_f32_ic3_oc64_k3x3", then "_dw<C>" when groups = C or
  // "_g<g>" when groups > 1, and "_s<h>x<w>", "_p<h>x<w>", "_d<h>x<w>" when
  // stride, padding or dilation differ from 1, 0, 1.
  std::string KernelName() const;
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;

  // The launch shape for an input of batch × in_h × in_w: out = (in + 2·pad −
  // dil·(k−1) − 1) / stride + 1 per axis; an error when a size is zero or
  // an output size would be ≤ 0.
  absl::StatusOr<Conv2dShape> Shape(uint32_t batch, uint32_t in_h, uint32_t in_w) const;
  // The grid and block to launch this kernel with for `shape`.
  std::array<uint32_t, 3> Grid(const Conv2dShape& shape) const;
  std::array<uint32_t, 3> Block() const;
};

// ---- references (plain C++, double precision; NCHW, weight [OC, C/g, kH, kW])

// col [N, C·kH·kW, outH·outW].
std::vector<double> Conv2dIm2colReference(const Conv2dSpec& spec, const Conv2dShape& shape,
                                          std::span<const double> input);
// output [N, OC, outH, outW]; `bias` empty for none (also the 1x1 variant).
std::vector<double> Conv2dForwardReference(const Conv2dSpec& spec, const Conv2dShape& shape,
                                           std::span<const double> input, std::span<const double> weight,
                                           std::span<const double> bias);
// grad_input [N, C, H, W].
std::vector<double> Conv2dBackwardDataReference(const Conv2dSpec& spec, const Conv2dShape& shape,
                                                std::span<const double> grad_output, std::span<const double> weight);
// grad_weight [OC, C/g, kH, kW].
std::vector<double> Conv2dBackwardFilterReference(const Conv2dSpec& spec, const Conv2dShape& shape,
                                                  std::span<const double> input,
                                                  std::span<const double> grad_output);

// The registry families conv2d.im2col, conv2d.direct, conv2d.pointwise,
// conv2d.backward_data and conv2d.backward_filter.
class Conv2dFamily : public SpecFamily<Conv2dSpec> {
 public:
  explicit Conv2dFamily(Conv2dVariant variant);
  std::string_view name() const override { return name_; }
  std::string_view description() const override;
  std::span<const ConfigField> fields() const override { return fields_; }
  absl::StatusOr<Conv2dSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;

 private:
  Conv2dVariant variant_;
  std::string name_;
  std::vector<ConfigField> fields_;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_CONV2D_H_
