// A chained multi-launch (a recurrent cell stepped through a sequence) that passes buffer views, never copies.
//
// The shape of an LSTM sequence forward: one cell launch per time step, the
// state ping-ponging between two halves of one buffer, each step reading its
// input from and writing its output to a slice of the sequence buffers. Run
// on any Device (the emulator in cuda_test, a GPU in cuda_gpu_test).
#ifndef PTXFORGE_TEST_CUDA_VIEW_CHAIN_H_
#define PTXFORGE_TEST_CUDA_VIEW_CHAIN_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "builder/kernel_builder.h"
#include "ir/strings.h"
#include "runtime/device.h"

namespace ptxforge::cuda_testing {

// h_out[i] = a * h_in[i] + x[i]; y[i] = h_out[i]  (i < n)
inline absl::StatusOr<ir::Kernel> BuildCellKernel(ir::Target target) {
  KernelBuilder b("recurrent_cell_f32", target);
  Value<U64> x = b.CvtaToGlobal(b.Param<U64>("x"));
  Value<U64> h_in = b.CvtaToGlobal(b.Param<U64>("h_in"));
  Value<U64> h_out = b.CvtaToGlobal(b.Param<U64>("h_out"));
  Value<U64> y = b.CvtaToGlobal(b.Param<U64>("y"));
  Value<F32> a = b.Param<F32>("a");
  Value<U32> n = b.Param<U32>("n");
  Value<U32> i = b.GlobalThreadIdX();
  b.If(b.Lt(i, n), [&] {
    Value<F32> h = b.Load<F32>(ir::StateSpace::kGlobal, b.ElementAddr<F32>(h_in, i));
    Value<F32> xi = b.Load<F32>(ir::StateSpace::kGlobal, b.ElementAddr<F32>(x, i));
    Value<F32> next = b.Fma(a, h, xi);
    b.Store(ir::StateSpace::kGlobal, b.ElementAddr<F32>(h_out, i), next);
    b.Store(ir::StateSpace::kGlobal, b.ElementAddr<F32>(y, i), next);
  });
  return b.Finish();
}

struct ChainResult {
  std::vector<float> outputs;      // [steps * n]: every step's output
  std::vector<float> final_state;  // [n]
  int launches = 0;
};

// Steps the cell `steps` times over x[steps * n] from h0[n]. Host<->device
// copies happen only before the first launch and after the last.
inline absl::StatusOr<ChainResult> RunChain(runtime::Device& device, ir::Target target, const std::vector<float>& x,
                                            const std::vector<float>& h0, float a, int steps) {
  using runtime::Buffer;
  const size_t n = h0.size();
  absl::StatusOr<ir::Kernel> kernel = BuildCellKernel(target);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> cell = device.Load(*kernel);
  if (!cell.ok()) return cell.status();
  absl::StatusOr<Buffer<float>> xs = Buffer<float>::FromHost(device, x);
  absl::StatusOr<Buffer<float>> ys = Buffer<float>::Allocate(device, x.size());
  absl::StatusOr<Buffer<float>> state = Buffer<float>::Allocate(device, 2 * n);  // two halves: ping and pong
  for (const absl::Status& s : {xs.status(), ys.status(), state.status()}) {
    if (!s.ok()) return s;
  }
  if (absl::Status s = state->View(0, n)->CopyFrom(h0); !s.ok()) return s;
  ChainResult result;
  const uint32_t block = 64;
  for (int t = 0; t < steps; ++t) {
    absl::StatusOr<runtime::BufferView<float>> x_t = xs->View(t * n, n);
    absl::StatusOr<runtime::BufferView<float>> y_t = ys->View(t * n, n);
    absl::StatusOr<runtime::BufferView<float>> h_in = state->View((t % 2) * n, n);
    absl::StatusOr<runtime::BufferView<float>> h_out = state->View(((t + 1) % 2) * n, n);
    for (const absl::Status& s : {x_t.status(), y_t.status(), h_in.status(), h_out.status()}) {
      if (!s.ok()) return s;
    }
    runtime::LaunchConfig config{.grid = {static_cast<uint32_t>((n + block - 1) / block)}, .block = {block}};
    if (absl::Status s = device.Launch(**cell, config, {*x_t, *h_in, *h_out, *y_t, a, static_cast<uint32_t>(n)});
        !s.ok()) {
      return absl::Status(s.code(), ToAbsl(StrCat("step ", t, ": ", s.message())));
    }
    ++result.launches;
  }
  if (absl::Status s = device.Synchronize(); !s.ok()) return s;
  absl::StatusOr<std::vector<float>> outputs = ys->ToHost();
  absl::StatusOr<std::vector<float>> final_state = state->View((steps % 2) * n, n)->ToHost();
  if (!outputs.ok()) return outputs.status();
  if (!final_state.ok()) return final_state.status();
  result.outputs = *std::move(outputs);
  result.final_state = *std::move(final_state);
  return result;
}

// The same recurrence in plain C++ (fused multiply-add, as fma.rn.f32).
inline ChainResult ReferenceChain(const std::vector<float>& x, std::vector<float> h, float a, int steps) {
  ChainResult r;
  const size_t n = h.size();
  for (int t = 0; t < steps; ++t) {
    for (size_t i = 0; i < n; ++i) {
      h[i] = std::fma(a, h[i], x[t * n + i]);
      r.outputs.push_back(h[i]);
    }
    ++r.launches;
  }
  r.final_state = h;
  return r;
}

}  // namespace ptxforge::cuda_testing

#endif  // PTXFORGE_TEST_CUDA_VIEW_CHAIN_H_
