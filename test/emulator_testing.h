// Helpers for emulator tests: run small builder kernels on the emulator.
#ifndef PTXFORGE_TEST_EMULATOR_TESTING_H_
#define PTXFORGE_TEST_EMULATOR_TESTING_H_

#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "builder/kernel_builder.h"
#include "runtime/emulator.h"

namespace ptxforge::testing {

inline std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// Finishes `b` and fails the test with the builder's message if it fails.
inline ir::Kernel FinishOrDie(KernelBuilder& b) {
  absl::StatusOr<ir::Kernel> k = b.Finish();
  INFO(k.status().ToString());
  REQUIRE(k.ok());
  return *std::move(k);
}

// Loads `k` onto `d` and fails the test with the device's message if it fails.
inline std::unique_ptr<runtime::LoadedKernel> LoadOrDie(runtime::Device& d, const ir::Kernel& k) {
  auto loaded = d.Load(k);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  return *std::move(loaded);
}

// Runs `body` (which returns a Value) in a single thread of a kernel on sm_90 (so bf16 arithmetic
// is allowed) and returns the bits of the value it computes.
template <typename F>
uint64_t RunScalar(F&& body) {
  KernelBuilder b("scalar", ir::Target::kSm90);
  Value<U64> out = b.CvtaToGlobal(b.Param<U64>("out"));
  auto v = body(b);
  if constexpr (std::is_same_v<decltype(v), Value<Pred>>) {
    b.Store(ir::StateSpace::kGlobal, out, b.Cvt<U32>(v));
  } else {
    b.Store(ir::StateSpace::kGlobal, out, v);
  }
  ir::Kernel kernel = FinishOrDie(b);
  auto emu = runtime::MakeEmulator({.worker_threads = 1});
  auto buf = runtime::Buffer<uint64_t>::Allocate(*emu, 1);
  REQUIRE(buf.ok());
  REQUIRE(buf->CopyFrom(std::vector<uint64_t>{0}).ok());
  auto loaded = emu->Load(kernel);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  absl::Status s = emu->Launch(**loaded, {}, {*buf});
  INFO(s.ToString());
  REQUIRE(s.ok());
  return (*buf->ToHost())[0];
}

template <ScalarTag T, typename Op>
uint64_t Binary(typename T::CType a, typename T::CType b, Op op) {
  return RunScalar([&](KernelBuilder& k) { return op(k, k.Const<T>(a), k.Const<T>(b)); });
}
template <ScalarTag T, typename Op>
uint64_t Unary(typename T::CType a, Op op) {
  return RunScalar([&](KernelBuilder& k) { return op(k, k.Const<T>(a)); });
}

inline float AsF32(uint64_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits)); }
inline double AsF64(uint64_t bits) { return std::bit_cast<double>(bits); }
inline uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
inline uint64_t Bits(double f) { return std::bit_cast<uint64_t>(f); }

}  // namespace ptxforge::testing

#endif  // PTXFORGE_TEST_EMULATOR_TESTING_H_
