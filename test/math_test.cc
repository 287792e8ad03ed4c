// builder/math.h: each function's maximum error over a dense sweep of
// inputs, on the emulator with every approximate instruction at the worst
// error the PTX ISA documents (approx_worst_error), against std:: in double.
// The bounds asserted here are the ones math.h documents.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "builder/math.h"
#include "builder/memory.h"
#include "test/emulator_testing.h"

namespace ptxforge {
namespace {

using runtime::Buffer;
using testing::FinishOrDie;

using Fn = std::function<Value<F32>(KernelBuilder&, Value<F32>)>;

// y[i] = fn(x[i]) on the emulator.
std::vector<float> Apply(const Fn& fn, const std::vector<float>& x, bool worst_error = true) {
  KernelBuilder b("apply", ir::Target::kSm80);
  auto in = GlobalParam<F32>(b, "x");
  auto out = GlobalParam<F32>(b, "y");
  Value<U32> n = b.Param<U32>("n");
  GridStrideLoop(b, n, [&](Value<U32> i) { out.Store(i, fn(b, in.Load(i))); });
  ir::Kernel k = FinishOrDie(b);
  auto emu = runtime::MakeEmulator({.approx_worst_error = worst_error});
  auto xb = Buffer<float>::FromHost(*emu, x);
  auto yb = Buffer<float>::Allocate(*emu, x.size());
  REQUIRE((xb.ok() && yb.ok()));
  auto loaded = emu->Load(k);
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, {.grid = {64}, .block = {256}}, {*xb, *yb, static_cast<uint32_t>(x.size())});
  INFO(s.ToString());
  REQUIRE(s.ok());
  return *yb->ToHost();
}

// `count` points evenly spaced in [lo, hi].
std::vector<float> Linear(double lo, double hi, int count) {
  std::vector<float> v(count);
  for (int i = 0; i < count; ++i) v[i] = static_cast<float>(lo + (hi - lo) * i / (count - 1));
  return v;
}
// ±2^u for u evenly spaced in [lo, hi] (positive only unless `both_signs`).
std::vector<float> Logarithmic(double lo, double hi, int count, bool both_signs) {
  std::vector<float> v;
  for (float u : Linear(lo, hi, count)) {
    v.push_back(static_cast<float>(std::exp2(u)));
    if (both_signs) v.push_back(-static_cast<float>(std::exp2(u)));
  }
  return v;
}

struct MaxError {
  double abs = 0, rel = 0;
  float worst_abs_x = 0, worst_rel_x = 0;
};

// Measures the errors; with `rel_slack`, abs is |got - exact| - rel_slack * |exact|
// (an absolute error on top of a relative one).
MaxError Measure(const Fn& fn, const std::vector<float>& x, double (*exact)(double), double rel_slack = 0) {
  std::vector<float> y = Apply(fn, x);
  MaxError e;
  for (size_t i = 0; i < x.size(); ++i) {
    double want = exact(x[i]);
    double abs = std::fabs(y[i] - want) - rel_slack * std::fabs(want);
    double rel = want == 0 ? std::fabs(y[i]) : std::fabs(y[i] - want) / std::fabs(want);
    if (!(abs <= e.abs)) {  // NaN counts as worst
      e.abs = abs;
      e.worst_abs_x = x[i];
    }
    if (!(rel <= e.rel)) {
      e.rel = rel;
      e.worst_rel_x = x[i];
    }
  }
  UNSCOPED_INFO("max abs error " << e.abs << " at x=" << e.worst_abs_x << ", max rel error " << e.rel << " at x="
                        << e.worst_rel_x);
  return e;
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double Silu(double x) { return x / (1 + std::exp(-x)); }
double GeluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double Rsqrt(double x) { return 1 / std::sqrt(x); }
double Exp2(double x) { return std::exp2(x); }
double Log2(double x) { return std::log2(x); }

constexpr int kPoints = 60000;

TEST_CASE("Exp2, Exp", "[math]") {
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Exp2(b, x); }, Linear(-126, 127, kPoints), Exp2).rel <= 3.0e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Exp(b, x); }, Linear(-87, 88, kPoints), std::exp).rel <= 4.0e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Exp(b, x, Precision::kApprox); }, Linear(-87, 88, kPoints),
                std::exp)
            .rel <= 4.0e-6);
}

TEST_CASE("special values: infinities and NaN", "[math]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> e = Apply([](KernelBuilder& b, Value<F32> x) { return Exp(b, x); }, {-inf, inf, nan, -200.0f, 200.0f});
  CHECK(e[0] == 0.0f);
  CHECK(e[1] == inf);
  CHECK(std::isnan(e[2]));
  CHECK(e[3] == 0.0f);
  CHECK(!std::signbit(e[3]));  // ex2.approx at its worst error must not turn an underflow into -denormal
  CHECK(e[4] == inf);
  std::vector<float> t = Apply([](KernelBuilder& b, Value<F32> x) { return Tanh(b, x); }, {-inf, inf, nan});
  CHECK(t[0] == -1.0f);
  CHECK(t[1] == 1.0f);
  CHECK(std::isnan(t[2]));
  std::vector<float> s = Apply([](KernelBuilder& b, Value<F32> x) { return Sigmoid(b, x); }, {-inf, inf, nan});
  CHECK(s[0] == 0.0f);
  CHECK(s[1] == 1.0f);
  CHECK(std::isnan(s[2]));
  std::vector<float> r = Apply([](KernelBuilder& b, Value<F32> x) { return Erf(b, x); }, {-inf, inf});
  CHECK(r[0] == -1.0f);
  CHECK(r[1] == 1.0f);
}

TEST_CASE("Log2, Log", "[math]") {
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Log2(b, x); }, Logarithmic(-100, 100, kPoints, false), Log2,
                6e-8)
            .abs <= 2.4e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Log(b, x); }, Logarithmic(-100, 100, kPoints, false),
                std::log, 1.2e-7)
            .abs <= 1.7e-7);
}

TEST_CASE("Erf", "[math]") {
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Erf(b, x); }, Linear(-6, 6, kPoints), std::erf).abs <= 3.5e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Erf(b, x); }, Logarithmic(-40, -1, kPoints, true), std::erf)
            .rel <= 6.3e-7);
}

TEST_CASE("Tanh", "[math]") {
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Tanh(b, x); }, Linear(-10, 10, kPoints), std::tanh).rel <= 2.6e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Tanh(b, x); }, Logarithmic(-40, 4, kPoints, true), std::tanh)
            .rel <= 2.6e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Tanh(b, x, Precision::kApprox); }, Linear(-10, 10, kPoints),
                std::tanh)
            .rel <= 4.94e-4);
}

TEST_CASE("Sigmoid, Silu, Gelu, Rsqrt", "[math]") {
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Sigmoid(b, x); }, Linear(-87, 88, kPoints), Sigmoid).rel <= 4.1e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Sigmoid(b, x, Precision::kApprox); }, Linear(-87, 88, kPoints),
                Sigmoid)
            .rel <= 4.1e-6);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Silu(b, x); }, Linear(-87, 88, kPoints), Silu).rel <= 4.5e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Gelu(b, x); }, Linear(-10, 10, kPoints), GeluErf).abs <= 3.6e-7);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Gelu(b, x, GeluForm::kTanh); }, Linear(-10, 10, kPoints),
                GeluErf)
            .abs <= 4.8e-4);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Rsqrt(b, x); }, Logarithmic(-120, 120, kPoints, false), Rsqrt)
            .rel <= 9.0e-8);
  CHECK(Measure([](KernelBuilder& b, Value<F32> x) { return Rsqrt(b, x, Precision::kApprox); },
                Logarithmic(-120, 120, kPoints, false), Rsqrt)
            .rel <= 1.3e-7);
}

TEST_CASE("approx_worst_error moves each approximation by its documented worst error, deterministically", "[math]") {
  const std::vector<float> x = {0.5f, 3.0f, 0.75f, 1.25f};
  auto ulps = [](float got, double exact) {
    float nearest = static_cast<float>(exact);
    return (static_cast<int64_t>(std::bit_cast<uint32_t>(got)) - static_cast<int64_t>(std::bit_cast<uint32_t>(nearest)));
  };
  auto run = [&](auto f, bool worst) {
    return Apply([&](KernelBuilder& b, Value<F32> v) { return f(b, v); }, x, worst);
  };
  auto ex2 = [](KernelBuilder& b, Value<F32> v) { return b.Ex2(v); };
  auto tanh = [](KernelBuilder& b, Value<F32> v) { return b.Tanh(v); };
  auto rcp = [](KernelBuilder& b, Value<F32> v) { return b.Rcp(v, {.mode = ir::Mode::kApprox}); };
  auto lg2 = [](KernelBuilder& b, Value<F32> v) { return b.Lg2(v); };
  auto sqrt_rn = [](KernelBuilder& b, Value<F32> v) { return b.Sqrt(v); };
  std::vector<float> e = run(ex2, true), t = run(tanh, true), r = run(rcp, true), l = run(lg2, true),
                     s = run(sqrt_rn, true);
  CHECK(run(ex2, true) == e);  // the same inputs, the same results
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    CHECK(std::abs(ulps(e[i], std::exp2(x[i]))) == 2);
    CHECK(std::abs(ulps(r[i], 1.0 / x[i])) == 1);
    double rel = std::fabs(t[i] - std::tanh(double{x[i]})) / std::tanh(double{x[i]});
    CHECK(rel <= std::exp2(-10.987));
    CHECK(rel >= std::exp2(-10.987) * (1 - 1e-6) - 1e-7);
    double abs = std::fabs(l[i] - std::log2(double{x[i]}));
    CHECK(abs <= std::exp2(-22));
    CHECK(abs >= std::exp2(-22) - std::exp2(-23) * std::fabs(std::log2(double{x[i]})) - 1e-12);
    CHECK(s[i] == std::sqrt(x[i]));  // sqrt.rn is exact: untouched
  }
  std::vector<int> directions;
  for (size_t i = 0; i < x.size(); ++i) directions.push_back(ulps(e[i], std::exp2(x[i])) > 0 ? 1 : -1);
  CHECK(std::count(directions.begin(), directions.end(), 1) > 0);  // both directions occur
  CHECK(std::count(directions.begin(), directions.end(), -1) > 0);
  std::vector<float> exact = run(ex2, false);
  for (size_t i = 0; i < x.size(); ++i) CHECK(exact[i] == static_cast<float>(std::exp2(x[i])));
}

}  // namespace
}  // namespace ptxforge
