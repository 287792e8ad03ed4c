// Synthetic kernel generator: straight-line, branchy or loop-heavy integer code of a given size.
#include "bench/synthetic_kernel.h"

#include <array>

namespace ptxforge::bench {

std::string_view ShapeName(Shape shape) {
  switch (shape) {
    case Shape::kStraight: return "straight";
    case Shape::kBlocks: return "blocks";
    case Shape::kLoops: return "loops";
    case Shape::kNested: return "nested";
  }
  return "?";
}

namespace {

// Instructions of one loop of RecordLoop, and of one nest of RecordNest
// (labels not counted).
constexpr uint32_t kLoopSize = 17;
constexpr uint32_t kNestSize = 1 + 10 + 9 + kLoopSize;

struct LoopInputs {
  Value<U64> in;   // the array the loops read
  Value<U64> n64;  // their trip count, 64-bit and 32-bit
  Value<U32> n32;
  Var<U32> acc;
};

// seed = v ^ k; for (i = 0; i < n; ++i) acc += f(in[i], seed * C): 17
// instructions (seed, the counter's start, the test and its branch, 10 in
// the body, the step, its mov and the branch back) and 2 labels.
void RecordLoop(KernelBuilder& b, const LoopInputs& x, Value<U32> v, uint32_t k) {
  using ir::StateSpace;
  Value<U32> seed = b.Xor(v, k | 1u);
  b.ForRange<U64>(0ull, x.n64, 1ull, [&](Value<U64> i) {
    Value<U32> inv = b.Mul(seed, 0x9E3779B1u);                                // invariant
    Value<U32> e = b.Load<U32>(StateSpace::kGlobal, b.Add(x.in, b.Mul(i, 4ull)));  // in + i*4
    Value<U32> t = b.Add(e, inv);
    t = b.Mad(t, 3u, e);
    t = b.Shr(t, 1u);
    t = b.Xor(t, k | 1u);
    b.Assign(x.acc, b.Add(Value<U32>(x.acc), t));
  });
}

// for (i < n) { acc += row + i*12; for (j < n) { acc += j ^ k; <RecordLoop> } }:
// row, 10 instructions of the outer loop, 9 of the middle one, and
// RecordLoop's 17.
void RecordNest(KernelBuilder& b, const LoopInputs& x, Value<U32> v, uint32_t k) {
  Value<U32> row = b.Add(v, k);
  b.ForRange<U32>(0u, x.n32, 1u, [&](Value<U32> i) {
    Value<U32> off = b.Add(row, b.Mul(i, 12u));  // row + i*12
    b.Assign(x.acc, b.Add(Value<U32>(x.acc), off));
    b.ForRange<U32>(0u, x.n32, 1u, [&](Value<U32> j) {
      Value<U32> t = b.Xor(j, k | 1u);
      b.Assign(x.acc, b.Add(Value<U32>(x.acc), t));
      RecordLoop(b, x, Value<U32>(x.acc), k);
    });
  });
}

}  // namespace

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
  if (shape == Shape::kLoops || shape == Shape::kNested) {
    const LoopInputs x{b.CvtaToGlobal(b.Param<U64>("in")), b.Param<U64>("n64"), b.Param<U32>("n"), acc};
    made = 13;  // the 25 instructions around the loops, less the 12 that `body` leaves out
    for (uint32_t k = 0; made < body; ++k) {
      // Between loops, a value of the window takes in the accumulator, so
      // that the loops' seeds differ and a dozen registers stay live.
      Value<U32> v = b.Add(window[(k + 7) % 8], Value<U32>(acc));
      window[k % 8] = v;
      if (shape == Shape::kLoops) {
        RecordLoop(b, x, v, k);
        made += 1 + kLoopSize;
      } else {
        RecordNest(b, x, v, k);
        made += 1 + kNestSize;
      }
    }
  }
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
