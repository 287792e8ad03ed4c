// lstm.cell on the emulator against the reference cell (awkward shapes, f32
// and f64, every batch tile), its invalid configurations, and the host-side
// sequence forward against the reference sequence (T = 1, 7, 33) and its errors.
#include <catch2/catch.hpp>

#include <random>
#include <sstream>

#include "kernels/lstm.h"
#include "kernels/lstm_sequence.h"
#include "kernels/problem_runner.h"
#include "passes/pass.h"
#include "runtime/emulator.h"
#include "test/test_util.h"
#include "tools/ptx_dump.h"

namespace ptxforge {
namespace {

using kernels::LstmSequenceBuffers;
using kernels::LstmSequenceShape;
using runtime::Buffer;
using testing::Msg;
using Overrides = std::vector<std::pair<std::string, std::string>>;

TEST_CASE("lstm.cell matches the reference cell on the emulator") {
  const kernels::KernelFamily* family = kernels::FindFamily("lstm.cell");
  REQUIRE(family != nullptr);
  const std::vector<Overrides> configs = {
      {},
      {{"type", "f64"}},
      {{"batch", "1"}, {"hidden", "1"}, {"input", "1"}},
      {{"batch_tile", "4"}, {"batch", "9"}, {"hidden", "70"}, {"input", "65"}},
      {{"batch_tile", "16"}, {"batch", "17"}, {"hidden", "33"}, {"input", "5"}},
      {{"batch_tile", "32"}, {"batch", "2"}, {"hidden", "31"}, {"input", "64"}},
      {{"type", "f64"}, {"batch_tile", "4"}, {"batch", "5"}, {"hidden", "35"}, {"input", "33"}},
  };
  auto emu = runtime::MakeEmulator();
  for (const Overrides& overrides : configs) {
    std::string shown;
    for (const auto& [key, value] : overrides) shown += key + "=" + value + " ";
    INFO("lstm.cell " << shown);
    absl::StatusOr<kernels::Config> config = family->MakeConfig(overrides);
    REQUIRE(Msg(config) == "OK");
    absl::StatusOr<ir::Kernel> kernel = family->Build(*config, ir::Target::kSm80);
    REQUIRE(Msg(kernel) == "OK");
    REQUIRE(Msg(passes::Pipeline::Standard().Run(*kernel)) == "OK");
    absl::StatusOr<kernels::TestProblem> problem = family->MakeProblem(*config, 3);
    REQUIRE(Msg(problem) == "OK");
    absl::StatusOr<kernels::ProblemResult> result = kernels::RunProblem(*emu, *kernel, *problem);
    REQUIRE(Msg(result) == "OK");
    INFO(result->Report());
    CHECK(result->ok());
  }
}

TEST_CASE("lstm.cell configurations are validated (API and ptx-dump --set)") {
  const kernels::KernelFamily* family = kernels::FindFamily("lstm.cell");
  REQUIRE(family != nullptr);
  const std::vector<std::pair<Overrides, std::string>> cases = {
      {{{"type", "f16"}}, "lstm.cell: type=f16 is not supported; choose one of f32, f64"},
      {{{"batch_tile", "3"}}, "lstm.cell: batch_tile=3 must be 4, 8, 16 or 32"},
      {{{"batch_tile", "64"}}, "lstm.cell: batch_tile=64 must be 4, 8, 16 or 32"},
      {{{"batch", "0"}}, "lstm.cell: batch must be positive"},
      {{{"hidden", "0"}}, "lstm.cell: hidden must be positive"},
      {{{"input", "0"}}, "lstm.cell: input must be positive"},
  };
  for (const auto& [set, message] : cases) {
    INFO(set[0].first << "=" << set[0].second);
    absl::StatusOr<kernels::Config> config = family->MakeConfig(set);
    REQUIRE(Msg(config) == "OK");
    CHECK(Msg(family->Build(*config, ir::Target::kSm80)) == message);
    CHECK(Msg(family->MakeProblem(*config, 1)) == message);
    std::ostringstream out, err;
    const std::vector<std::string> args = {"lstm.cell", StrCat("--set=", set[0].first, "=", set[0].second)};
    const int code = tools::RunPtxDump(args, out, err);
    CHECK(code == 2);  // a value the family refuses is a usage error
    CHECK(err.str() == StrCat("ptx-dump: ", message, "\n"));
  }
  kernels::LstmCellSpec spec;
  CHECK(Msg(spec.Validate()) == "OK");
  spec.type = ir::ScalarType::kF16;
  CHECK(Msg(spec.Build(ir::Target::kSm80)) == "lstm.cell: type f16 is not supported (f32, f64)");
}

// Host data of one sequence and device buffers holding it.
template <typename T>
struct Sequence {
  LstmSequenceShape shape;
  std::vector<T> x, h0, c0, w_x, w_h, bias;
  Buffer<T> dx, dh0, dc0, dw_x, dw_h, dbias, dh_seq, dh_n, dc_n;

  Sequence(runtime::Device& device, LstmSequenceShape s, uint64_t seed) : shape(s) {
    std::mt19937_64 rng(seed);
    auto fill = [&](std::vector<T>& v, size_t n, double lo, double hi) {
      std::uniform_real_distribution<double> dist(lo, hi);
      v.resize(n);
      for (T& e : v) e = static_cast<T>(dist(rng));
    };
    const size_t state = size_t{s.batch} * s.hidden;
    fill(x, size_t{s.seq_len} * s.batch * s.input, -1, 1);
    fill(h0, state, -1, 1);
    fill(c0, state, -2, 2);
    fill(w_x, size_t{4} * s.hidden * s.input, -0.3, 0.3);
    fill(w_h, size_t{4} * s.hidden * s.hidden, -0.3, 0.3);
    fill(bias, size_t{4} * s.hidden, -0.5, 0.5);
    dx = *Buffer<T>::FromHost(device, x);
    dh0 = *Buffer<T>::FromHost(device, h0);
    dc0 = *Buffer<T>::FromHost(device, c0);
    dw_x = *Buffer<T>::FromHost(device, w_x);
    dw_h = *Buffer<T>::FromHost(device, w_h);
    dbias = *Buffer<T>::FromHost(device, bias);
    dh_seq = *Buffer<T>::Allocate(device, s.seq_len * state);
    dh_n = *Buffer<T>::Allocate(device, state);
    dc_n = *Buffer<T>::Allocate(device, state);
  }
  LstmSequenceBuffers<T> buffers() const { return {dx, dh0, dc0, dw_x, dw_h, dbias, dh_seq, dh_n, dc_n}; }
};

template <typename T>
std::vector<double> ToDoubles(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Largest |actual - expected| / max(|expected|, 1).
template <typename T>
double MaxError(const std::vector<T>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    worst = std::max(worst, std::fabs(actual[i] - expected[i]) / std::max(std::fabs(expected[i]), 1.0));
  }
  return worst;
}

template <typename T>
void CheckSequence(LstmSequenceShape shape, uint32_t batch_tile, double tolerance) {
  INFO("T=" << shape.seq_len << " B=" << shape.batch << " I=" << shape.input << " H=" << shape.hidden
            << " batch_tile=" << batch_tile << (sizeof(T) == 8 ? " f64" : " f32"));
  auto emu = runtime::MakeEmulator();
  Sequence<T> s(*emu, shape, shape.seq_len);
  REQUIRE(Msg(kernels::LstmSequenceForward<T>(*emu, shape, s.buffers(), ir::Target::kSm80, batch_tile)) == "OK");
  std::vector<double> h_seq, h_n, c_n;
  kernels::LstmSequenceReference<double>(shape, ToDoubles(s.x), ToDoubles(s.h0), ToDoubles(s.c0), ToDoubles(s.w_x),
                                         ToDoubles(s.w_h), ToDoubles(s.bias), h_seq, h_n, c_n);
  CHECK(MaxError(*s.dh_seq.ToHost(), h_seq) <= tolerance);
  CHECK(MaxError(*s.dh_n.ToHost(), h_n) <= tolerance);
  CHECK(MaxError(*s.dc_n.ToHost(), c_n) <= tolerance);
  // h_n is exactly the last step of h_seq.
  std::vector<T> all = *s.dh_seq.ToHost();
  CHECK(std::vector<T>(all.end() - static_cast<std::ptrdiff_t>(h_n.size()), all.end()) == *s.dh_n.ToHost());
}

TEST_CASE("LSTM sequence forward matches the reference sequence on the emulator") {
  CheckSequence<float>({.seq_len = 1, .batch = 3, .input = 13, .hidden = 35}, 8, 1e-4);
  CheckSequence<float>({.seq_len = 7, .batch = 5, .input = 40, .hidden = 45}, 4, 1e-4);
  CheckSequence<float>({.seq_len = 33, .batch = 2, .input = 7, .hidden = 35}, 8, 1e-4);
  CheckSequence<double>({.seq_len = 1, .batch = 2, .input = 9, .hidden = 33}, 8, 1e-12);
  CheckSequence<double>({.seq_len = 7, .batch = 9, .input = 5, .hidden = 17}, 8, 1e-12);
  CheckSequence<double>({.seq_len = 33, .batch = 2, .input = 3, .hidden = 31}, 16, 1e-12);
}

TEST_CASE("LSTM sequence forward rejects bad arguments, naming them") {
  auto emu = runtime::MakeEmulator();
  const LstmSequenceShape shape = {.seq_len = 4, .batch = 2, .input = 3, .hidden = 5};
  Sequence<float> s(*emu, shape, 1);
  auto run = [&](const LstmSequenceShape& sh, const LstmSequenceBuffers<float>& b) {
    return Msg(kernels::LstmSequenceForward<float>(*emu, sh, b));
  };
  CHECK(run(shape, s.buffers()) == "OK");
  for (auto [field, message] : {std::pair{&LstmSequenceShape::seq_len, "seq_len"}, std::pair{&LstmSequenceShape::batch, "batch"},
                                std::pair{&LstmSequenceShape::input, "input"}, std::pair{&LstmSequenceShape::hidden, "hidden"}}) {
    LstmSequenceShape zero = shape;
    zero.*field = 0;
    CHECK(run(zero, s.buffers()) == StrCat("lstm sequence: ", message, " must be positive"));
  }
  LstmSequenceBuffers<float> b = s.buffers();
  b.x = *s.dx.View(0, 23);
  CHECK(run(shape, b) == "lstm sequence: x has 23 elements, but seq_len*batch*input = 24 are needed");
  b = s.buffers();
  b.h_seq = *s.dh_seq.View(0, 39);
  CHECK(run(shape, b) == "lstm sequence: h_seq has 39 elements, but seq_len*batch*hidden = 40 are needed");
  b = s.buffers();
  b.c0 = *s.dc0.View(0, 9);
  CHECK(run(shape, b) == "lstm sequence: c0 has 9 elements, but batch*hidden = 10 are needed");
  // Weights of another shape.
  b = s.buffers();
  b.w_x = s.dw_h;
  CHECK(run(shape, b) == "lstm sequence: w_x has 100 elements, but 4*hidden*input = 60 are expected");
  b = s.buffers();
  b.w_h = s.dw_x;
  CHECK(run(shape, b) == "lstm sequence: w_h has 60 elements, but 4*hidden*hidden = 100 are expected");
  b = s.buffers();
  b.bias = *s.dbias.View(1, 19);
  CHECK(run(shape, b) == "lstm sequence: bias has 19 elements, but 4*hidden = 20 are expected");
  // Outputs that overlap an input or each other.
  b = s.buffers();
  b.h_n = s.dh0;
  CHECK(run(shape, b) == "lstm sequence: h_n overlaps h0");
  b = s.buffers();
  b.c_n = *s.dh_seq.View(30, 10);
  CHECK(run(shape, b) == "lstm sequence: c_n overlaps h_seq");
  // Buffers of another device, or none.
  auto other = runtime::MakeEmulator();
  Sequence<float> elsewhere(*other, shape, 1);
  b = s.buffers();
  b.w_h = elsewhere.dw_h;
  CHECK(run(shape, b) == StrCat("lstm sequence: w_h is not a buffer of ", emu->name()));
  b = s.buffers();
  b.h0 = {};
  CHECK(run(shape, b) == StrCat("lstm sequence: h0 is not a buffer of ", emu->name(), " (it is empty)"));
  // A bad batch tile is the cell's error.
  CHECK(Msg(kernels::LstmSequenceForward<float>(*emu, shape, s.buffers(), ir::Target::kSm80, 5)) ==
        "lstm.cell: batch_tile=5 must be 4, 8, 16 or 32");
}

}  // namespace
}  // namespace ptxforge
