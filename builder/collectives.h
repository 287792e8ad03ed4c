// Warp and block collectives built from shfl.sync (redux.sync for 32-bit
// integers on sm_80+), shared memory and bar.sync, and the lane / warp index
// of a thread computed from %tid.
//
//   Value<F32> total = BlockReduce(b, ReduceOp::kSum, partial, 256);  // in every thread
//   Value<F32> m = WarpReduce(b, ReduceOp::kMax, v);                  // in every lane
//
// Values may be 32-bit (f32, s32, u32, b32) or 64-bit (f64, s64, u64, b64:
// shuffled as two halves). and/or/xor take integer types only. Warp
// collectives need the whole warp converged (every lane calls them); block
// collectives need every thread of the block, a 1-D block of `block_threads`
// threads (a multiple of 32), and declare a small shared array each.
// %warpid and %laneid are not used: %warpid is not tid / 32 on hardware.
#ifndef PTXFORGE_BUILDER_COLLECTIVES_H_
#define PTXFORGE_BUILDER_COLLECTIVES_H_

#include <cstdint>
#include <limits>
#include <type_traits>

#include "builder/kernel_builder.h"
#include "ir/strings.h"

namespace ptxforge {

enum class ReduceOp { kSum, kMin, kMax, kAnd, kOr, kXor };

// tid.x + ntid.x * (tid.y + ntid.y * tid.z): the thread's index in its block.
Value<U32> LinearThreadIndex(KernelBuilder& b, Loc loc = Loc::current());
// tid & 31 and tid >> 5 for a thread index (default: %tid.x, a 1-D block).
Value<U32> LaneIndex(KernelBuilder& b, Loc loc = Loc::current());
Value<U32> LaneIndex(KernelBuilder& b, Value<U32> tid, Loc loc = Loc::current());
Value<U32> WarpIndex(KernelBuilder& b, Loc loc = Loc::current());
Value<U32> WarpIndex(KernelBuilder& b, Value<U32> tid, Loc loc = Loc::current());

namespace collectives_internal {
template <typename T>
constexpr bool kIs64 = ir::TypeBits(T::kType) == 64;
// The unsigned tag of T's size, to move bits.
template <typename T>
using BitsTag = std::conditional_t<kIs64<T>, U64, U32>;
}  // namespace collectives_internal

// op(a, c).
template <ScalarTag T>
Value<T> Combine(KernelBuilder& b, ReduceOp op, Value<T> a, Value<T> c, Loc loc = Loc::current()) {
  constexpr bool kFloat = std::is_floating_point_v<typename T::CType>;
  switch (op) {
    case ReduceOp::kSum: return b.Add(a, c, {}, loc);
    case ReduceOp::kMin: return b.Min(a, c, {}, loc);
    case ReduceOp::kMax: return b.Max(a, c, {}, loc);
    default: break;
  }
  if constexpr (kFloat) {
    b.ReportError(StrCat("and/or/xor reductions take integer values, not ", ir::TypeName(T::kType)), loc);
    return a;
  } else {
    if (op == ReduceOp::kAnd) return b.And(a, c, loc);
    if (op == ReduceOp::kOr) return b.Or(a, c, loc);
    return b.Xor(a, c, loc);
  }
}

// The value x with op(x, v) == v for every v (0 for sum, +inf/max for min ...).
template <ScalarTag T>
typename T::CType Identity(ReduceOp op) {
  using C = typename T::CType;
  switch (op) {
    case ReduceOp::kMin:
      return std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
    case ReduceOp::kMax:
      return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
    case ReduceOp::kAnd: return static_cast<C>(~uint64_t{0});
    default: return C{0};
  }
}

// shfl.sync of any 32- or 64-bit value (64-bit: two shuffles of the halves).
template <ScalarTag T>
Value<T> Shuffle(KernelBuilder& b, ir::ShflMode mode, Value<T> v, uint32_t lane_arg, uint32_t clamp,
                 Loc loc = Loc::current()) {
  using namespace collectives_internal;
  static_assert(ir::TypeBits(T::kType) == 32 || ir::TypeBits(T::kType) == 64, "shuffle 32- or 64-bit values");
  if constexpr (!kIs64<T>) {
    return b.Shfl<T>(mode, v, lane_arg, clamp, 0xFFFFFFFFu, loc);
  } else {
    Value<U64> bits;
    if constexpr (std::is_same_v<T, U64>) {
      bits = v;
    } else {
      bits = b.Bitcast<U64>(v, loc);
    }
    Value<U32> lo = b.Cvt<U32>(bits, {}, loc);
    Value<U32> hi = b.Cvt<U32>(b.Shr(bits, 32u, loc), {}, loc);
    lo = b.Shfl<U32>(mode, lo, lane_arg, clamp, 0xFFFFFFFFu, loc);
    hi = b.Shfl<U32>(mode, hi, lane_arg, clamp, 0xFFFFFFFFu, loc);
    Value<U64> joined = b.Or(b.Shl(b.Cvt<U64>(hi, {}, loc), 32u, loc), b.Cvt<U64>(lo, {}, loc), loc);
    if constexpr (std::is_same_v<T, U64>) {
      return joined;
    } else {
      return b.Bitcast<T>(joined, loc);
    }
  }
}

// op over the `width` lanes of each aligned group (width: a power of two up
// to 32), by shfl.sync.bfly; every lane gets its group's result. A whole-warp
// reduction of 32-bit integers (u32, s32: any op; b32: and/or/xor) is one
// redux.sync where the target has it (sm_80+), instead of five shuffles and
// five combines.
template <ScalarTag T>
Value<T> WarpReduce(KernelBuilder& b, ReduceOp op, Value<T> v, uint32_t width = 32, Loc loc = Loc::current()) {
  if (width == 0 || width > 32 || (width & (width - 1)) != 0) {
    b.ReportError(StrCat("WarpReduce width ", width, " is not a power of two in 1..32"), loc);
    return v;
  }
  constexpr bool kInt32 = std::is_same_v<T, U32> || std::is_same_v<T, S32> || std::is_same_v<T, B32>;
  if constexpr (kInt32) {
    const bool bitwise = op == ReduceOp::kAnd || op == ReduceOp::kOr || op == ReduceOp::kXor;
    if (width == 32 && (bitwise || !std::is_same_v<T, B32>) &&
        ir::TargetSatisfies(b.target(), ir::GetOpInfo(ir::Opcode::kRedux).base)) {
      constexpr ir::AtomOp kOps[] = {ir::AtomOp::kAdd, ir::AtomOp::kMin, ir::AtomOp::kMax,
                                     ir::AtomOp::kAnd, ir::AtomOp::kOr,  ir::AtomOp::kXor};
      const ir::AtomOp aop = kOps[static_cast<int>(op)];
      if constexpr (std::is_same_v<T, B32>) {
        return b.Bitcast<B32>(b.Redux(aop, b.Bitcast<U32>(v, loc), 0xFFFFFFFFu, loc), loc);
      } else {
        return b.Redux(aop, v, 0xFFFFFFFFu, loc);
      }
    }
  }
  for (uint32_t mask = width / 2; mask >= 1; mask /= 2) {
    v = Combine(b, op, v, Shuffle(b, ir::ShflMode::kBfly, v, mask, 31u, loc), loc);
  }
  return v;
}

// Inclusive scan over the warp: lane i gets op(v_0, ..., v_i). `lane` is the
// lane index (LaneIndex(b) for a 1-D block).
template <ScalarTag T>
Value<T> WarpScan(KernelBuilder& b, ReduceOp op, Value<T> v, Value<U32> lane, Loc loc = Loc::current()) {
  for (uint32_t delta = 1; delta < 32; delta *= 2) {
    Value<T> other = Shuffle(b, ir::ShflMode::kUp, v, delta, 0u, loc);
    v = b.Select(b.Ge(lane, delta, loc), Combine(b, op, v, other, loc), v, loc);
  }
  return v;
}

// op over the whole block (1-D, block_threads threads, a multiple of 32),
// returned to every thread: warp reductions, one value per warp through
// shared memory, then every warp reduces those. Two bar.sync: one before the
// per-warp values are read, one after (so that the call may sit in a loop).
template <ScalarTag T>
Value<T> BlockReduce(KernelBuilder& b, ReduceOp op, Value<T> v, uint32_t block_threads, Loc loc = Loc::current()) {
  if (block_threads == 0 || block_threads % 32 != 0 || block_threads > 1024) {
    b.ReportError(StrCat("BlockReduce needs a block of a multiple of 32 threads up to 1024, got ", block_threads), loc);
    return v;
  }
  Value<T> warp_value = WarpReduce(b, op, v, 32, loc);
  const uint32_t warps = block_threads / 32;
  if (warps == 1) return warp_value;
  Symbol<T> scratch = b.Shared<T>(StrCat("block_reduce", b.kernel().variables.size()), warps, 0, loc);
  Value<U32> tid = b.TidX(loc);
  Value<U32> lane = LaneIndex(b, tid, loc);
  Value<U32> warp = WarpIndex(b, tid, loc);
  b.If(b.Eq(lane, 0u, loc), [&] { b.Store(ir::StateSpace::kShared, b.ElementAddr(scratch, warp, loc), warp_value, {}, loc); },
       loc);
  b.BarSync(0, loc);
  Value<T> result;
  if ((warps & (warps - 1)) == 0) {
    // Every group of `warps` lanes holds all the per-warp values.
    Value<U32> index = b.And(lane, warps - 1, loc);
    Value<T> x = b.template Load<T>(ir::StateSpace::kShared, b.ElementAddr(scratch, index, loc), {}, loc);
    result = WarpReduce(b, op, x, warps, loc);
  } else {
    Value<U32> index = b.Min(lane, warps - 1, {}, loc);
    Value<T> x = b.template Load<T>(ir::StateSpace::kShared, b.ElementAddr(scratch, index, loc), {}, loc);
    x = b.Select(b.Lt(lane, warps, loc), x, Identity<T>(op), loc);
    result = WarpReduce(b, op, x, 32, loc);
  }
  b.BarSync(0, loc);
  return result;
}

// The value of thread `source` (of a 1-D block), in every thread; two bar.sync.
template <ScalarTag T>
Value<T> BlockBroadcast(KernelBuilder& b, Value<T> v, Src<U32> source, Loc loc = Loc::current()) {
  Symbol<T> slot = b.Shared<T>(StrCat("block_broadcast", b.kernel().variables.size()), 1, 0, loc);
  Value<U32> tid = b.TidX(loc);
  b.If(b.Eq(tid, source, loc), [&] { b.Store(ir::StateSpace::kShared, slot, v, {}, loc); }, loc);
  b.BarSync(0, loc);
  Value<T> result = b.template Load<T>(ir::StateSpace::kShared, slot, {}, loc);
  b.BarSync(0, loc);
  return result;
}

}  // namespace ptxforge

#endif  // PTXFORGE_BUILDER_COLLECTIVES_H_
