// Math functions on f32 values, built from the builder's instructions
// (ex2/lg2/rcp/tanh approximations, fma polynomials).
//
//   Value<F32> y = Gelu(b, x);                 // 0.5 x (1 + erf(x / sqrt 2))
//   Value<F32> e = Exp(b, b.Sub(v, row_max));
//
// Maximum errors, measured on the emulator with approx_worst_error on (every
// approximate instruction at the worst error the PTX ISA documents, so they
// hold on hardware) over 60000-point sweeps against std:: in double;
// test/math_test.cc asserts them. rel = |got - exact| / |exact|,
// abs = |got - exact|.
//   Exp2 (ex2.approx)             rel 3.0e-7   x in [-126, 127]
//   Exp                           rel 4.0e-7   x in [-87, 88]
//   Exp, kApprox                  rel 4.0e-6   x in [-87, 88] (grows with |x|)
//   Log2 (lg2.approx)             abs 2.4e-7 + rel 6e-8    x in [2^-100, 2^100]
//   Log                           abs 1.7e-7 + rel 1.2e-7  x in [2^-100, 2^100]
//   Erf                           abs 3.5e-7   x in [-6, 6]; rel 6.3e-7 for |x| <= 0.5
//   Tanh                          rel 2.6e-7   x in [-10, 10] and |x| in [2^-40, 16]
//   Tanh, kApprox (tanh.approx)   rel 4.94e-4
//   Sigmoid                       rel 4.1e-7   x in [-87, 88]  (kApprox: 4.1e-6)
//   Silu                          rel 4.5e-7   x in [-87, 88]
//   Gelu (erf form)               abs 3.6e-7   x in [-10, 10]
//   Gelu, kTanh form              abs 4.8e-4 from the erf definition (the form's own difference)
//   Rsqrt (sqrt.rn, rcp.rn)       rel 9.0e-8   x in [2^-120, 2^120]  (kApprox: 1.3e-7)
#ifndef PTXFORGE_BUILDER_MATH_H_
#define PTXFORGE_BUILDER_MATH_H_

#include "builder/kernel_builder.h"

namespace ptxforge {

// kAccurate: close to correctly rounded (a few ulp); kApprox: the hardware
// approximation's speed and error.
enum class Precision { kAccurate, kApprox };

// 2^x: ex2.approx.f32 (2 ulp).
Value<F32> Exp2(KernelBuilder& b, Value<F32> x, Loc loc = Loc::current());
// e^x. Accurate: 2^(x log2 e) with the rounding error of the product fed back.
Value<F32> Exp(KernelBuilder& b, Value<F32> x, Precision p = Precision::kAccurate, Loc loc = Loc::current());
// log2(x): lg2.approx.f32 (absolute error).
Value<F32> Log2(KernelBuilder& b, Value<F32> x, Loc loc = Loc::current());
// ln(x) = log2(x) ln 2 (absolute error).
Value<F32> Log(KernelBuilder& b, Value<F32> x, Loc loc = Loc::current());
// erf(x): a Taylor polynomial for |x| < 0.5, Abramowitz & Stegun 7.1.26 above.
Value<F32> Erf(KernelBuilder& b, Value<F32> x, Loc loc = Loc::current());
// tanh(x). Accurate: an odd polynomial for |x| < 0.55, 1 - 2 / (e^2|x| + 1)
// above. Approx: tanh.approx.f32.
Value<F32> Tanh(KernelBuilder& b, Value<F32> x, Precision p = Precision::kAccurate, Loc loc = Loc::current());
// 1 / (1 + e^-x).
Value<F32> Sigmoid(KernelBuilder& b, Value<F32> x, Precision p = Precision::kAccurate, Loc loc = Loc::current());
// 1 / sqrt(x). Accurate: rcp.rn(sqrt.rn(x)); approx: rsqrt.approx.f32.
Value<F32> Rsqrt(KernelBuilder& b, Value<F32> x, Precision p = Precision::kAccurate, Loc loc = Loc::current());

enum class GeluForm {
  kErf,   // 0.5 x (1 + erf(x / sqrt 2)), the exact definition
  kTanh,  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the common approximation
};
// GELU; `p` is the precision of the tanh in the kTanh form.
Value<F32> Gelu(KernelBuilder& b, Value<F32> x, GeluForm form = GeluForm::kErf, Precision p = Precision::kAccurate,
                Loc loc = Loc::current());
// x * sigmoid(x).
Value<F32> Silu(KernelBuilder& b, Value<F32> x, Precision p = Precision::kAccurate, Loc loc = Loc::current());

}  // namespace ptxforge

#endif  // PTXFORGE_BUILDER_MATH_H_
