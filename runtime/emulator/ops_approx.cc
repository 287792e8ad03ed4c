// Approximate instructions at their documented worst error: with
// EmulatorOptions::approx_worst_error, each f32 approximation's result is
// moved away from the exact value by the largest error the PTX ISA allows
// for it, in a direction that depends only on the input bits.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "runtime/emulator/float_semantics.h"
#include "runtime/emulator/program.h"

namespace ptxforge::runtime::emu {
namespace {

using ir::Opcode;

// How the PTX ISA ("Floating Point Instructions", each instruction's
// description) bounds an approximation's error.
enum class Bound : uint8_t { kRelative, kAbsolute, kUlps };

struct ApproxError {
  Opcode op;
  Bound bound;
  double amount;  // log2 of a relative or absolute error, or a number of ulps
};

// The documented worst errors of the f32 approximations.
constexpr ApproxError kApproxErrors[] = {
    {Opcode::kEx2, Bound::kUlps, 2},           // ex2.approx.f32: 2 ulp, full range
    {Opcode::kLg2, Bound::kAbsolute, -22},     // lg2.approx.f32: absolute 2^-22
    {Opcode::kSin, Bound::kAbsolute, -20.5},   // sin.approx.f32: absolute 2^-20.5 in [-100pi, 100pi]
    {Opcode::kCos, Bound::kAbsolute, -20.5},   // cos.approx.f32: absolute 2^-20.5 in [-100pi, 100pi]
    {Opcode::kTanh, Bound::kRelative, -10.987},  // tanh.approx.f32: relative 2^-10.987
    {Opcode::kRsqrt, Bound::kRelative, -22.9},   // rsqrt.approx.f32: relative 2^-22.9
    {Opcode::kSqrt, Bound::kRelative, -23},      // sqrt.approx.f32: relative 2^-23
    {Opcode::kRcp, Bound::kUlps, 1},             // rcp.approx.f32: 1 ulp
    {Opcode::kDiv, Bound::kUlps, 2},             // div.approx.f32, div.full.f32: 2 ulp
};

const ApproxError* Find(Opcode op) {
  for (const ApproxError& e : kApproxErrors) {
    if (e.op == op) return &e;
  }
  return nullptr;
}

// +1 or -1 from the input bits (a fixed mix, so runs are reproducible).
double Direction(uint32_t a, uint32_t b) {
  uint64_t h = (uint64_t{a} << 32 | b) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return (h >> 63) != 0 ? 1.0 : -1.0;
}

double Exact(Opcode op, double a, double b) {
  switch (op) {
    case Opcode::kEx2: return std::exp2(a);
    case Opcode::kLg2: return std::log2(a);
    case Opcode::kSin: return std::sin(a);
    case Opcode::kCos: return std::cos(a);
    case Opcode::kTanh: return std::tanh(a);
    case Opcode::kRsqrt: return 1.0 / std::sqrt(a);
    case Opcode::kSqrt: return std::sqrt(a);
    case Opcode::kRcp: return 1.0 / a;
    case Opcode::kDiv: return a / b;
    default: return a;
  }
}

// The exact result moved by the worst error; special values (NaN, infinities,
// zeros, and results that round to zero) are left exact, a result never
// changes sign, and results bounded by 1 in magnitude stay so.
float Perturb(const ApproxError& e, double exact, double direction) {
  float nearest = static_cast<float>(exact);
  if (!std::isfinite(exact) || nearest == 0 || !std::isfinite(nearest)) return nearest;
  if (e.bound == Bound::kUlps) {
    float v = nearest;
    for (int i = 0; i < static_cast<int>(e.amount); ++i) {
      float next = std::nextafter(v, direction > 0 ? INFINITY : -INFINITY);
      if (next == 0 || !std::isfinite(next)) break;  // ex2 of -200 stays +0, not -denormal
      v = next;
    }
    return v;
  }
  double error = std::exp2(e.amount);
  double moved = e.bound == Bound::kRelative ? exact * (1 + direction * error) : exact + direction * error;
  // Truncate toward the exact value so the float stays within the bound.
  float v = static_cast<float>(moved);
  if (std::fabs(static_cast<double>(v) - exact) > std::fabs(moved - exact)) v = std::nextafter(v, nearest);
  if (e.op == Opcode::kTanh || e.op == Opcode::kSin || e.op == Opcode::kCos) v = std::clamp(v, -1.0f, 1.0f);
  return v;
}

template <bool kBinary>
Action Worst(Block&, Thread& t, const DInst& d) {
  const ir::Modifiers& m = d.mods;
  float a = Get<float>(t, d.src[0]), b = kBinary ? Get<float>(t, d.src[1]) : 0.0f;
  if (m.ftz) {
    a = Flush(a);
    b = Flush(b);
  }
  const ApproxError& e = *Find(static_cast<Opcode>(d.imm));
  float r = Perturb(e, Exact(e.op, a, b), Direction(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b)));
  if (m.ftz) r = Flush(r);
  Set<float>(t, d.dst[0], Canon(r));
  return Action::kNext;
}

}  // namespace

Handler SelectApproxWorst(const ir::Instruction& inst, DInst& d) {
  const ir::Modifiers& m = inst.mods;
  if (m.type != ir::ScalarType::kF32 || Find(inst.op) == nullptr) return nullptr;
  // sqrt, rcp and div are approximate only with .approx (div also with .full).
  bool exact_form = inst.op == Opcode::kSqrt || inst.op == Opcode::kRcp || inst.op == Opcode::kDiv;
  bool approx = !exact_form || m.mode == ir::Mode::kApprox || (inst.op == Opcode::kDiv && m.mode == ir::Mode::kFull);
  if (!approx) return nullptr;
  d.imm = static_cast<int64_t>(inst.op);
  return inst.op == Opcode::kDiv ? &Worst<true> : &Worst<false>;
}

}  // namespace ptxforge::runtime::emu
