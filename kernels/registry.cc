// The registry: one static list of families.
#include "kernels/registry.h"

#include <algorithm>
#include <array>

#include "kernels/attention.h"
#include "kernels/conv2d.h"
#include "kernels/elementwise.h"
#include "kernels/gemm_simt.h"
#include "kernels/gemm_tensor_core.h"
#include "kernels/lstm.h"
#include "kernels/moe.h"
#include "kernels/nf4_gemm.h"
#include "kernels/norm.h"
#include "kernels/reduce.h"
#include "kernels/softmax.h"
#include "kernels/transpose.h"
#include "kernels/vector_add.h"

namespace ptxforge::kernels {
namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

struct Families {
  std::vector<const KernelFamily*> list;
  Families() {
    static const VectorAddFamily vector_add;
    static const AttentionFamily attention;
    static const MoeFamily<MoeStage::kTopkGating> moe_topk_gating;
    static const MoeFamily<MoeStage::kPermute> moe_permute;
    static const MoeFamily<MoeStage::kExpertGemm> moe_expert_gemm;
    static const MoeFamily<MoeStage::kUnpermute> moe_unpermute;
    static const ReduceSumFamily reduce_sum;
    static const Nf4GemmFamily nf4_gemm;
    static const Nf4GemmTransposeFamily nf4_gemm_transpose;
    static const LstmCellFamily lstm_cell;
    static const Conv2dFamily conv2d_im2col(Conv2dVariant::kIm2col);
    static const Conv2dFamily conv2d_direct(Conv2dVariant::kDirect);
    static const Conv2dFamily conv2d_pointwise(Conv2dVariant::kPointwise);
    static const Conv2dFamily conv2d_backward_data(Conv2dVariant::kBackwardData);
    static const Conv2dFamily conv2d_backward_filter(Conv2dVariant::kBackwardFilter);
    list = {&vector_add, &reduce_sum, &nf4_gemm, &nf4_gemm_transpose, &attention,
            &moe_topk_gating, &moe_permute, &moe_expert_gemm, &moe_unpermute, &lstm_cell,
            &conv2d_im2col, &conv2d_direct, &conv2d_pointwise, &conv2d_backward_data, &conv2d_backward_filter};
    static const ElementwiseFamily elementwise;
    static const SoftmaxFamily softmax;
    static const TransposeFamily transpose;
    static const NormFamily layernorm(NormKind::kLayerNorm);
    static const NormFamily rmsnorm(NormKind::kRmsNorm);
    list.insert(list.end(), {&elementwise, &softmax, &transpose, &layernorm, &rmsnorm});
    static const GemmSimtFamily gemm_simt;
    list.push_back(&gemm_simt);
    static const GemmTensorCoreFamily gemm_tensor_core;
    list.push_back(&gemm_tensor_core);
    static const ReduceFamily reduce;
    list.push_back(&reduce);
    std::sort(list.begin(), list.end(), [](const KernelFamily* a, const KernelFamily* b) { return a->name() < b->name(); });
  }
};

const Families& GetFamilies() {
  static const Families* f = new Families();
  return *f;
}

}  // namespace

std::span<const KernelFamily* const> AllFamilies() { return GetFamilies().list; }

const KernelFamily* FindFamily(std::string_view name) {
  for (const KernelFamily* f : AllFamilies()) {
    if (f->name() == name) return f;
  }
  return nullptr;
}

std::vector<std::string_view> CloseFamilyNames(std::string_view name) {
  std::vector<std::pair<size_t, std::string_view>> scored;
  for (const KernelFamily* f : AllFamilies()) {
    size_t d = EditDistance(name, f->name());
    bool prefix = f->name().find(name) != std::string_view::npos && !name.empty();
    if (d <= std::max<size_t>(3, name.size() / 3) || prefix) scored.emplace_back(prefix ? 0 : d, f->name());
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string_view> out;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace ptxforge::kernels
