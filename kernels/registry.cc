// The registry: one static list of families.
#include "kernels/registry.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <iterator>

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

// Each family is a function-local static made on first use: finding one by
// name (ptx-dump, tests) constructs that family only, not all of them.
template <typename F, auto... kArgs>
const KernelFamily* Get() {
  static const F family(kArgs...);
  return &family;
}

struct Entry {
  std::string_view name;  // the family's name(), checked when AllFamilies() first runs
  const KernelFamily* (*get)();
};

// Sorted by name (byte order), as AllFamilies() lists them.
constexpr Entry kEntries[] = {
    {"attention", &Get<AttentionFamily>},
    {"conv2d.backward_data", &Get<Conv2dFamily, Conv2dVariant::kBackwardData>},
    {"conv2d.backward_filter", &Get<Conv2dFamily, Conv2dVariant::kBackwardFilter>},
    {"conv2d.direct", &Get<Conv2dFamily, Conv2dVariant::kDirect>},
    {"conv2d.im2col", &Get<Conv2dFamily, Conv2dVariant::kIm2col>},
    {"conv2d.pointwise", &Get<Conv2dFamily, Conv2dVariant::kPointwise>},
    {"elementwise", &Get<ElementwiseFamily>},
    {"gemm.simt", &Get<GemmSimtFamily>},
    {"gemm.tensor_core", &Get<GemmTensorCoreFamily>},
    {"layernorm", &Get<NormFamily, NormKind::kLayerNorm>},
    {"lstm.cell", &Get<LstmCellFamily>},
    {"moe.expert_gemm", &Get<MoeFamily<MoeStage::kExpertGemm>>},
    {"moe.permute", &Get<MoeFamily<MoeStage::kPermute>>},
    {"moe.topk_gating", &Get<MoeFamily<MoeStage::kTopkGating>>},
    {"moe.unpermute", &Get<MoeFamily<MoeStage::kUnpermute>>},
    {"nf4.gemm", &Get<Nf4GemmFamily>},
    {"nf4.gemm_transpose", &Get<Nf4GemmTransposeFamily>},
    {"reduce", &Get<ReduceFamily>},
    {"reduce_sum", &Get<ReduceSumFamily>},
    {"rmsnorm", &Get<NormFamily, NormKind::kRmsNorm>},
    {"softmax", &Get<SoftmaxFamily>},
    {"transpose", &Get<TransposeFamily>},
    {"vector_add", &Get<VectorAddFamily>},
};
static_assert(std::is_sorted(std::begin(kEntries), std::end(kEntries),
                             [](const Entry& a, const Entry& b) { return a.name < b.name; }),
              "kEntries must be sorted by name");

// Every family, constructed; a family whose name() is not its entry's name
// is a programming error that every test run catches (FindFamily would
// otherwise find it under the wrong name).
struct Families {
  std::vector<const KernelFamily*> list;
  Families() {
    for (const Entry& e : kEntries) {
      const KernelFamily* f = e.get();
      if (f->name() != e.name) {
        std::fprintf(stderr, "ptxforge: registry entry '%.*s' holds family '%.*s'\n", static_cast<int>(e.name.size()),
                     e.name.data(), static_cast<int>(f->name().size()), f->name().data());
        std::abort();
      }
      list.push_back(f);
    }
  }
};

const Families& GetFamilies() {
  static const Families* f = new Families();
  return *f;
}

}  // namespace

std::span<const KernelFamily* const> AllFamilies() { return GetFamilies().list; }

const KernelFamily* FindFamily(std::string_view name) {
  auto it = std::lower_bound(std::begin(kEntries), std::end(kEntries), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != std::end(kEntries) && it->name == name ? it->get() : nullptr;
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
