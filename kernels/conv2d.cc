// conv2d: the spec's validation and naming, the C++ references and the registry families.
#include "kernels/conv2d.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "ir/strings.h"
#include "kernels/conv2d_tiling.h"

namespace ptxforge::kernels {
namespace {

constexpr std::array kTypes = {ir::ScalarType::kF16, ir::ScalarType::kF32, ir::ScalarType::kF64};
constexpr uint32_t kMaxWindow = 32;
constexpr uint32_t kMaxGridYZ = 65535;

std::string Family(Conv2dVariant v) { return StrCat("conv2d.", Conv2dVariantName(v)); }

// out = (in + 2·pad − dil·(k−1) − 1) / stride + 1, or -1 when that is ≤ 0.
int64_t OutSize(uint32_t in, uint32_t pad, uint32_t dil, uint32_t k, uint32_t stride) {
  int64_t num = int64_t{in} + 2 * int64_t{pad} - int64_t{dil} * (int64_t{k} - 1) - 1;
  if (num < 0) return -1;
  return num / stride + 1;
}

// The geometry as plain integers for the references.
struct Geometry {
  int64_t c, oc, kh, kw, sh, sw, ph, pw, dh, dw, g, cpg, ocpg, n, h, w, oh, ow;
  explicit Geometry(const Conv2dSpec& s, const Conv2dShape& x)
      : c(s.in_channels), oc(s.out_channels), kh(s.kernel_h), kw(s.kernel_w), sh(s.stride_h), sw(s.stride_w),
        ph(s.pad_h), pw(s.pad_w), dh(s.dilation_h), dw(s.dilation_w), g(s.groups), cpg(c / g), ocpg(oc / g),
        n(x.batch), h(x.in_h), w(x.in_w), oh(x.out_h), ow(x.out_w) {}
  size_t In(int64_t b, int64_t ch, int64_t y, int64_t x) const { return static_cast<size_t>(((b * c + ch) * h + y) * w + x); }
  size_t Out(int64_t b, int64_t o, int64_t y, int64_t x) const {
    return static_cast<size_t>(((b * oc + o) * oh + y) * ow + x);
  }
  size_t Weight(int64_t o, int64_t ci, int64_t ky, int64_t kx) const {
    return static_cast<size_t>(((o * cpg + ci) * kh + ky) * kw + kx);
  }
  // Calls f(out index, in index, weight index) for every product of the convolution.
  template <typename F>
  void ForEachProduct(F&& f) const {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox)
            for (int64_t ci = 0; ci < cpg; ++ci)
              for (int64_t ky = 0; ky < kh; ++ky)
                for (int64_t kx = 0; kx < kw; ++kx) {
                  int64_t y = oy * sh - ph + ky * dh, x = ox * sw - pw + kx * dw;
                  if (y < 0 || y >= h || x < 0 || x >= w) continue;
                  f(Out(b, o, oy, ox), In(b, (o / ocpg) * cpg + ci, y, x), Weight(o, ci, ky, kx));
                }
  }
};

}  // namespace

std::string_view Conv2dVariantName(Conv2dVariant variant) {
  switch (variant) {
    case Conv2dVariant::kIm2col: return "im2col";
    case Conv2dVariant::kDirect: return "direct";
    case Conv2dVariant::kPointwise: return "pointwise";
    case Conv2dVariant::kBackwardData: return "backward_data";
    case Conv2dVariant::kBackwardFilter: return "backward_filter";
  }
  return "?";
}

absl::Status Conv2dSpec::Validate() const {
  const std::string family = Family(variant);
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    return absl::InvalidArgumentError(
        StrCat(family, ": type ", ir::TypeName(type), " is not supported (f16, f32, f64)"));
  }
  const std::pair<const char*, uint32_t> positive[] = {
      {"in_channels", in_channels}, {"out_channels", out_channels}, {"kernel_h", kernel_h},
      {"kernel_w", kernel_w},       {"stride_h", stride_h},         {"stride_w", stride_w},
      {"dilation_h", dilation_h},   {"dilation_w", dilation_w},     {"groups", groups}};
  for (const auto& [field, value] : positive) {
    if (value == 0) return absl::InvalidArgumentError(StrCat(family, ": ", field, "=0 must be positive"));
  }
  if (in_channels % groups != 0) {
    return absl::InvalidArgumentError(
        StrCat(family, ": in_channels=", in_channels, " is not divisible by groups=", groups));
  }
  if (out_channels % groups != 0) {
    return absl::InvalidArgumentError(
        StrCat(family, ": out_channels=", out_channels, " is not divisible by groups=", groups));
  }
  if (variant == Conv2dVariant::kPointwise &&
      (kernel_h != 1 || kernel_w != 1 || stride_h != 1 || stride_w != 1 || pad_h != 0 || pad_w != 0 ||
       dilation_h != 1 || dilation_w != 1)) {
    return absl::InvalidArgumentError(
        StrCat(family, ": kernel ", kernel_h, "x", kernel_w, ", stride ", stride_h, "x", stride_w, ", pad ", pad_h,
               "x", pad_w, ", dilation ", dilation_h, "x", dilation_w,
               " is not a 1x1 convolution (kernel 1x1, stride 1x1, pad 0x0, dilation 1x1); use conv2d.direct"));
  }
  if (kernel_h > kMaxWindow || kernel_w > kMaxWindow) {
    return absl::InvalidArgumentError(StrCat(family, ": kernel ", kernel_h, "x", kernel_w, " is larger than ",
                                             kMaxWindow, "x", kMaxWindow,
                                             " (the window is unrolled at build time)"));
  }
  const Conv2dTiling tiling = TilingFor(*this);
  if (tiling.shared_bytes > kConv2dMaxSharedBytes) {
    return absl::InvalidArgumentError(StrCat(family, ": the shared-memory tiles need ", tiling.shared_bytes,
                                             " bytes, more than ", kConv2dMaxSharedBytes,
                                             " (use a smaller stride, dilation or kernel)"));
  }
  return absl::OkStatus();
}

std::string Conv2dSpec::KernelName() const {
  std::string name = StrCat("conv2d_", Conv2dVariantName(variant), "_", ir::TypeName(type), "_ic", in_channels,
                            "_oc", out_channels, "_k", kernel_h, "x", kernel_w);
  if (groups > 1 && groups == in_channels) {
    StrAppend(&name, "_dw", in_channels);
  } else if (groups > 1) {
    StrAppend(&name, "_g", groups);
  }
  if (stride_h != 1 || stride_w != 1) StrAppend(&name, "_s", stride_h, "x", stride_w);
  if (pad_h != 0 || pad_w != 0) StrAppend(&name, "_p", pad_h, "x", pad_w);
  if (dilation_h != 1 || dilation_w != 1) StrAppend(&name, "_d", dilation_h, "x", dilation_w);
  return name;
}

absl::StatusOr<Conv2dShape> Conv2dSpec::Shape(uint32_t batch, uint32_t in_h, uint32_t in_w) const {
  const std::string family = Family(variant);
  const std::pair<const char*, uint32_t> positive[] = {{"batch", batch}, {"in_h", in_h}, {"in_w", in_w}};
  for (const auto& [field, value] : positive) {
    if (value == 0) return absl::InvalidArgumentError(StrCat(family, ": ", field, "=0 must be positive"));
  }
  if (batch > kMaxGridYZ) {
    return absl::InvalidArgumentError(
        StrCat(family, ": batch=", batch, " is more than ", kMaxGridYZ, " (one grid.z block row per image)"));
  }
  const int64_t out_h = OutSize(in_h, pad_h, dilation_h, kernel_h, stride_h);
  const int64_t out_w = OutSize(in_w, pad_w, dilation_w, kernel_w, stride_w);
  if (out_h <= 0) {
    return absl::InvalidArgumentError(StrCat(family, ": output height is 0: in_h=", in_h, " + 2*pad_h=", 2 * pad_h,
                                             " is less than the dilated kernel height ",
                                             int64_t{dilation_h} * (kernel_h - 1) + 1));
  }
  if (out_w <= 0) {
    return absl::InvalidArgumentError(StrCat(family, ": output width is 0: in_w=", in_w, " + 2*pad_w=", 2 * pad_w,
                                             " is less than the dilated kernel width ",
                                             int64_t{dilation_w} * (kernel_w - 1) + 1));
  }
  if (out_h > UINT32_MAX || out_w > UINT32_MAX) {
    return absl::InvalidArgumentError(StrCat(family, ": output ", out_h, "x", out_w, " does not fit in u32"));
  }
  return Conv2dShape{batch, in_h, in_w, static_cast<uint32_t>(out_h), static_cast<uint32_t>(out_w)};
}

// ---- references

std::vector<double> Conv2dIm2colReference(const Conv2dSpec& spec, const Conv2dShape& shape,
                                          std::span<const double> input) {
  const Geometry g(spec, shape);
  const int64_t rows = g.c * g.kh * g.kw, cols = g.oh * g.ow;
  std::vector<double> col(static_cast<size_t>(g.n * rows * cols), 0.0);
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t ch = 0; ch < g.c; ++ch)
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx)
          for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox) {
              int64_t y = oy * g.sh - g.ph + ky * g.dh, x = ox * g.sw - g.pw + kx * g.dw;
              if (y < 0 || y >= g.h || x < 0 || x >= g.w) continue;
              int64_t row = (ch * g.kh + ky) * g.kw + kx;
              col[static_cast<size_t>((b * rows + row) * cols + oy * g.ow + ox)] = input[g.In(b, ch, y, x)];
            }
  return col;
}

std::vector<double> Conv2dForwardReference(const Conv2dSpec& spec, const Conv2dShape& shape,
                                           std::span<const double> input, std::span<const double> weight,
                                           std::span<const double> bias) {
  const Geometry g(spec, shape);
  std::vector<double> out(static_cast<size_t>(g.n * g.oc * g.oh * g.ow), 0.0);
  if (!bias.empty()) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = bias[(i / static_cast<size_t>(g.oh * g.ow)) % g.oc];
  }
  g.ForEachProduct([&](size_t o, size_t i, size_t w) { out[o] += input[i] * weight[w]; });
  return out;
}

std::vector<double> Conv2dBackwardDataReference(const Conv2dSpec& spec, const Conv2dShape& shape,
                                                std::span<const double> grad_output, std::span<const double> weight) {
  const Geometry g(spec, shape);
  std::vector<double> grad_input(static_cast<size_t>(g.n * g.c * g.h * g.w), 0.0);
  g.ForEachProduct([&](size_t o, size_t i, size_t w) { grad_input[i] += grad_output[o] * weight[w]; });
  return grad_input;
}

std::vector<double> Conv2dBackwardFilterReference(const Conv2dSpec& spec, const Conv2dShape& shape,
                                                  std::span<const double> input,
                                                  std::span<const double> grad_output) {
  const Geometry g(spec, shape);
  std::vector<double> grad_weight(static_cast<size_t>(g.oc * g.cpg * g.kh * g.kw), 0.0);
  g.ForEachProduct([&](size_t o, size_t i, size_t w) { grad_weight[w] += input[i] * grad_output[o]; });
  return grad_weight;
}

// ---- the registry families

Conv2dFamily::Conv2dFamily(Conv2dVariant variant) : variant_(variant), name_(Family(variant)) {
  const bool pointwise = variant == Conv2dVariant::kPointwise;
  const std::string k = pointwise ? "1" : "3";
  fields_ = {
      {"type", "f32", "element type: f16 (f32 accumulation), f32, f64"},
      {"in_channels", pointwise ? "16" : "3", "input channels C"},
      {"out_channels", pointwise ? "32" : "64", "output channels OC"},
      {"kernel_h", k, "kernel height (at most 32)"},
      {"kernel_w", k, "kernel width (at most 32)"},
      {"stride_h", "1", "vertical stride"},
      {"stride_w", "1", "horizontal stride"},
      {"pad_h", "0", "zero padding above and below"},
      {"pad_w", "0", "zero padding left and right"},
      {"dilation_h", "1", "vertical dilation"},
      {"dilation_w", "1", "horizontal dilation"},
      {"groups", "1", "groups g (C and OC divisible by g; g = C is depthwise)"},
      {"batch", "2", "test shape: images N"},
      {"in_h", "7", "test shape: input height"},
      {"in_w", "9", "test shape: input width"},
  };
  if (variant == Conv2dVariant::kDirect || pointwise) {
    fields_.push_back({"bias", "true", "test problem: pass a bias (false: a null bias pointer)"});
  }
}

std::string_view Conv2dFamily::description() const {
  switch (variant_) {
    case Conv2dVariant::kIm2col: return "conv2d im2col: NCHW input -> [N, C*kH*kW, outH*outW] columns";
    case Conv2dVariant::kDirect: return "conv2d forward: shared input halo and weight tiles, unrolled window";
    case Conv2dVariant::kPointwise: return "conv2d 1x1 forward: shared weight tile, coalesced pixels";
    case Conv2dVariant::kBackwardData: return "conv2d grad_input: shared grad_output halo and weight tiles";
    case Conv2dVariant::kBackwardFilter: return "conv2d grad_weight: shared input tiles, block reduction over the batch";
  }
  return "";
}

absl::StatusOr<Conv2dSpec> Conv2dFamily::SpecFrom(const Config& config) const {
  Conv2dSpec spec;
  spec.variant = variant_;
  absl::StatusOr<ir::ScalarType> type = config.GetType("type", kTypes);
  if (!type.ok()) return type.status();
  spec.type = *type;
  const std::pair<const char*, uint32_t*> fields[] = {
      {"in_channels", &spec.in_channels}, {"out_channels", &spec.out_channels}, {"kernel_h", &spec.kernel_h},
      {"kernel_w", &spec.kernel_w},       {"stride_h", &spec.stride_h},         {"stride_w", &spec.stride_w},
      {"pad_h", &spec.pad_h},             {"pad_w", &spec.pad_w},               {"dilation_h", &spec.dilation_h},
      {"dilation_w", &spec.dilation_w},   {"groups", &spec.groups}};
  for (const auto& [key, field] : fields) {
    absl::StatusOr<uint32_t> v = config.GetU32(key);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  if (absl::Status s = spec.Validate(); !s.ok()) return s;
  return spec;
}

absl::StatusOr<TestProblem> Conv2dFamily::MakeProblem(const Config& config, uint64_t seed) const {
  absl::StatusOr<Conv2dSpec> spec = SpecFrom(config);
  if (!spec.ok()) return spec.status();
  std::array<uint32_t, 3> dims;
  const char* keys[] = {"batch", "in_h", "in_w"};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<uint32_t> v = config.GetU32(keys[i]);
    if (!v.ok()) return v.status();
    dims[i] = *v;
  }
  absl::StatusOr<Conv2dShape> shape = spec->Shape(dims[0], dims[1], dims[2]);
  if (!shape.ok()) return shape.status();
  bool with_bias = false;
  if (variant_ == Conv2dVariant::kDirect || variant_ == Conv2dVariant::kPointwise) {
    absl::StatusOr<bool> b = config.GetBool("bias");
    if (!b.ok()) return b.status();
    with_bias = *b;
  }
  const Conv2dShape& x = *shape;
  const Conv2dSpec& s = *spec;
  const ir::ScalarType t = s.type;
  const size_t in_count = size_t{x.batch} * s.in_channels * x.in_h * x.in_w;
  const size_t out_count = size_t{x.batch} * s.out_channels * x.out_h * x.out_w;
  const size_t weight_count = size_t{s.out_channels} * (s.in_channels / s.groups) * s.kernel_h * s.kernel_w;
  std::mt19937_64 rng(seed);
  TestProblem p;
  // Outputs start as random values: an element the kernel does not write is a mismatch.
  auto output = [&](std::string name, size_t count) {
    HostBuffer b = RandomBuffer(std::move(name), t, count, rng, -1, 1);
    b.is_output = true;
    b.tolerance = DefaultTolerance(t);
    return b;
  };
  // The reference in double from the stored (rounded) inputs; rounding error
  // grows with the sum of |terms|, so that is the magnitude an error is judged against.
  auto expect = [&](HostBuffer& out, auto&& reference, std::span<const double> a, std::span<const double> b,
                    std::span<const double> bias) {
    out.expected = FromDoubles(t, reference(a, b, bias));
    std::vector<double> abs_a(a.size()), abs_b(b.size()), abs_bias(bias.size());
    std::transform(a.begin(), a.end(), abs_a.begin(), [](double v) { return std::fabs(v); });
    std::transform(b.begin(), b.end(), abs_b.begin(), [](double v) { return std::fabs(v); });
    std::transform(bias.begin(), bias.end(), abs_bias.begin(), [](double v) { return std::fabs(v); });
    for (double m : reference(abs_a, abs_b, abs_bias)) out.magnitude = std::max(out.magnitude, m);
  };
  auto values = [&](size_t i) { return AsDoubles(t, p.buffers[i].data); };
  switch (variant_) {
    case Conv2dVariant::kIm2col: {
      p.buffers.push_back(RandomBuffer("input", t, in_count, rng, -1, 1));
      HostBuffer col = output("col", size_t{x.batch} * s.in_channels * s.kernel_h * s.kernel_w * x.out_h * x.out_w);
      col.tolerance = 0;  // a copy: bit-exact
      col.expected = FromDoubles(t, Conv2dIm2colReference(s, x, values(0)));
      p.buffers.push_back(std::move(col));
      p.args = {size_t{0}, size_t{1}};
      p.shape = StrCat("batch=", x.batch, " in=", x.in_h, "x", x.in_w, " out=", x.out_h, "x", x.out_w);
      break;
    }
    case Conv2dVariant::kDirect:
    case Conv2dVariant::kPointwise: {
      p.buffers.push_back(RandomBuffer("input", t, in_count, rng, -1, 1));
      p.buffers.push_back(RandomBuffer("weight", t, weight_count, rng, -1, 1));
      p.buffers.push_back(output("output", out_count));
      std::vector<double> bias;
      if (with_bias) {
        p.buffers.push_back(RandomBuffer("bias", t, s.out_channels, rng, -1, 1));
        bias = values(3);
      }
      expect(p.buffers[2], [&](auto a, auto b, auto c) { return Conv2dForwardReference(s, x, a, b, c); }, values(0),
             values(1), bias);
      p.args = {size_t{0}, size_t{1}, size_t{2}};
      p.args.push_back(with_bias ? std::variant<size_t, HostScalar>(size_t{3}) : Scalar(ir::ScalarType::kU64, 0));
      p.shape = StrCat("batch=", x.batch, " in=", x.in_h, "x", x.in_w, " out=", x.out_h, "x", x.out_w,
                       with_bias ? " bias" : " no bias");
      break;
    }
    case Conv2dVariant::kBackwardData: {
      p.buffers.push_back(RandomBuffer("grad_output", t, out_count, rng, -1, 1));
      p.buffers.push_back(RandomBuffer("weight", t, weight_count, rng, -1, 1));
      p.buffers.push_back(output("grad_input", in_count));
      expect(p.buffers[2], [&](auto a, auto b, auto) { return Conv2dBackwardDataReference(s, x, a, b); }, values(0),
             values(1), {});
      p.args = {size_t{0}, size_t{1}, size_t{2}};
      p.shape = StrCat("batch=", x.batch, " in=", x.in_h, "x", x.in_w, " out=", x.out_h, "x", x.out_w);
      break;
    }
    case Conv2dVariant::kBackwardFilter: {
      p.buffers.push_back(RandomBuffer("input", t, in_count, rng, -1, 1));
      p.buffers.push_back(RandomBuffer("grad_output", t, out_count, rng, -1, 1));
      p.buffers.push_back(output("grad_weight", weight_count));
      expect(p.buffers[2], [&](auto a, auto b, auto) { return Conv2dBackwardFilterReference(s, x, a, b); },
             values(0), values(1), {});
      p.args = {size_t{0}, size_t{1}, size_t{2}};
      p.shape = StrCat("batch=", x.batch, " in=", x.in_h, "x", x.in_w, " out=", x.out_h, "x", x.out_w);
      break;
    }
  }
  if (variant_ == Conv2dVariant::kPointwise) {
    p.args.push_back(ScalarU32(x.batch));
    p.args.push_back(ScalarU32(x.in_h * x.in_w));
  } else {
    for (uint32_t v : {x.batch, x.in_h, x.in_w, x.out_h, x.out_w}) p.args.push_back(ScalarU32(v));
  }
  p.grid = s.Grid(x);
  p.block = s.Block();
  return p;
}

}  // namespace ptxforge::kernels
