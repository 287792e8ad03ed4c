// Synthetic kernel generator: straight-line or branchy integer code of a given size.
#include "bench/synthetic_kernel.h"

#include <array>

namespace ptxforge::bench {

void RecordSynthetic(KernelBuilder& b, uint32_t instructions, Shape shape) {
  using ir::StateSpace;
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  Value<U32> tid = b.TidX();
  Value<U64> slot = b.ElementAddr<U32>(out, tid);
  Var<U32> acc = b.Mutable<U32>(0u, "acc");
  std::array<Value<U32>, 8> window;
  for (Value<U32>& w : window) w = tid;
  const uint32_t body = instructions > 12 ? instructions - 12 : 0;
  uint32_t made = 0;
  for (uint32_t k = 0; made < body; ++k) {
    Value<U32> a = window[(k + 7) % 8];
    Value<U32> c = window[(k + 4) % 8];
    Value<U32> v;
    switch (k % 5) {
      case 0: v = b.Add(a, c); break;
      case 1: v = b.Xor(a, k | 1u); break;
      case 2: v = b.Mad(a, 3u, c); break;
      case 3: v = b.Shr(a, 1u); break;
      default: v = b.Sub(a, c); break;
    }
    window[k % 8] = v;
    ++made;
    if (shape == Shape::kBlocks && k % 6 == 5) {
      // setp, @!p bra, add, mov: with the label, two more blocks.
      b.If(b.Lt(v, 1000u + k), [&] { b.Assign(acc, b.Add(Value<U32>(acc), v)); });
      made += 4;
    } else if (shape == Shape::kStraight && k % 8 == 7) {
      b.Assign(acc, b.Add(Value<U32>(acc), v));
      made += 2;
    }
  }
  Value<U32> sum = acc;
  for (const Value<U32>& w : window) sum = b.Add(sum, w);
  b.Store(StateSpace::kGlobal, slot, sum);
}

absl::StatusOr<ir::Kernel> BuildSynthetic(uint32_t instructions, Shape shape, ir::Target target) {
  KernelBuilder b("synthetic", target);
  RecordSynthetic(b, instructions, shape);
  return b.Finish();
}

}  // namespace ptxforge::bench
