// Chained launches through buffer views on the emulator: a recurrent sequence stepped with no copies between steps.
#include <catch2/catch.hpp>

#include <vector>

#include "runtime/emulator.h"
#include "test/cuda_test_util.h"
#include "test/cuda_view_chain.h"

namespace ptxforge::cuda_testing {
namespace {

TEST_CASE("a sequence of cell launches chains through views of one state buffer", "[cuda][views]") {
  const int steps = 7;
  const size_t n = 100;  // two blocks of 64, the second partly idle
  std::vector<float> x(steps * n), h0(n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.25f - 1.5f;
  for (size_t i = 0; i < n; ++i) h0[i] = static_cast<float>(i) / 64.0f;
  std::unique_ptr<runtime::Emulator> emulator = runtime::MakeEmulator();
  absl::StatusOr<ChainResult> got = RunChain(*emulator, ir::Target::kSm80, x, h0, 0.75f, steps);
  INFO(Msg(got));
  REQUIRE(got.ok());
  ChainResult want = ReferenceChain(x, h0, 0.75f, steps);
  CHECK(got->launches == steps);
  CHECK(got->outputs == want.outputs);  // bit-exact: fma.rn.f32 is std::fma
  CHECK(got->final_state == want.final_state);
  // The last step's output slice is the final state.
  CHECK(std::vector<float>(got->outputs.end() - n, got->outputs.end()) == got->final_state);
}

TEST_CASE("a view outside its buffer is refused before any launch", "[cuda][views]") {
  std::unique_ptr<runtime::Emulator> emulator = runtime::MakeEmulator();
  absl::StatusOr<runtime::Buffer<float>> state = runtime::Buffer<float>::Allocate(*emulator, 200);
  REQUIRE(state.ok());
  CHECK(Msg(state->View(150, 100)) == "view [150, 250) is outside a buffer view of 200 elements");
  absl::StatusOr<runtime::BufferView<float>> half = state->View(100, 100);
  REQUIRE(half.ok());
  CHECK(half->address() == state->address() + 400);
  CHECK(Msg(half->View(50, 51)) == "view [50, 101) is outside a buffer view of 100 elements");
  CHECK(Msg(half->CopyFrom(std::vector<float>(99))) == "copy of 99 elements into a buffer of 100");
}

}  // namespace
}  // namespace ptxforge::cuda_testing
