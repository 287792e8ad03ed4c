// lstm.cell: one LSTM step, one thread per (batch row b, hidden unit j).
#ifndef PTXFORGE_KERNELS_LSTM_H_
#define PTXFORGE_KERNELS_LSTM_H_

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/kernel.h"
#include "kernels/registry.h"

namespace ptxforge::kernels {

// Gate order i, f, g, o; W_x [4H, I], W_h [4H, H], bias [4H], x [B, I],
// h_prev, c_prev, h_out, c_out [B, H], all row-major:
//   gate_q[b, j] = W_x[qH + j] . x[b] + W_h[qH + j] . h_prev[b] + bias[qH + j]
//   c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g);  h = sigmoid(o) * tanh(c)
// Params: x, h_prev, c_prev, w_x, w_h, bias, h_out, c_out (u64 pointers),
// batch, hidden, input (u32). Launch: blocks of 32 x batch_tile threads
// (thread (j % 32, b % batch_tile)), grid (ceil(hidden / 32),
// ceil(batch / batch_tile)). h_out/c_out must not alias the inputs.
//
// A block stages the four gates' 32-row weight tiles 32 columns at a time in
// shared memory (coalesced row reads, a padded layout) with the matching
// batch_tile x 32 tile of x (then of h_prev), so each weight is read from
// global memory once per block. f32 uses ex2.approx for the exponentials;
// f64 a range-reduced polynomial (full double precision).
struct LstmCellSpec {
  ir::ScalarType type = ir::ScalarType::kF32;  // f32, f64
  uint32_t batch_tile = 8;                     // batch rows per block: 4, 8, 16 or 32
  // The test shape (MakeProblem, ptx-dump --run); the kernel takes batch,
  // hidden and input at launch.
  uint32_t batch = 3, hidden = 45, input = 37;

  absl::Status Validate() const;
  std::string KernelName() const;  // "lstm_cell_f32_bt8"
  absl::StatusOr<ir::Kernel> Build(ir::Target target) const;
};

// The reference cell, in V (double for checking either type). h_out and c_out
// get batch * hidden values.
template <typename V>
void LstmCellReference(std::span<const V> x, std::span<const V> h_prev, std::span<const V> c_prev,
                       std::span<const V> w_x, std::span<const V> w_h, std::span<const V> bias, uint32_t batch,
                       uint32_t hidden, uint32_t input, std::span<V> h_out, std::span<V> c_out) {
  auto sigmoid = [](V v) { return V{1} / (V{1} + std::exp(-v)); };
  for (uint32_t b = 0; b < batch; ++b) {
    for (uint32_t j = 0; j < hidden; ++j) {
      V gate[4];
      for (uint32_t q = 0; q < 4; ++q) {
        const size_t row = size_t{q} * hidden + j;
        V sum = bias[row];
        for (uint32_t k = 0; k < input; ++k) sum += w_x[row * input + k] * x[size_t{b} * input + k];
        for (uint32_t k = 0; k < hidden; ++k) sum += w_h[row * hidden + k] * h_prev[size_t{b} * hidden + k];
        gate[q] = sum;
      }
      const size_t at = size_t{b} * hidden + j;
      const V c = sigmoid(gate[1]) * c_prev[at] + sigmoid(gate[0]) * std::tanh(gate[2]);
      c_out[at] = c;
      h_out[at] = sigmoid(gate[3]) * std::tanh(c);
    }
  }
}

class LstmCellFamily : public SpecFamily<LstmCellSpec> {
 public:
  std::string_view name() const override { return "lstm.cell"; }
  std::string_view description() const override {
    return "one LSTM step (gates i, f, g, o), weight tiles staged in shared memory";
  }
  std::span<const ConfigField> fields() const override;
  absl::StatusOr<LstmCellSpec> SpecFrom(const Config& config) const override;
  absl::StatusOr<TestProblem> MakeProblem(const Config& config, uint64_t seed) const override;
};

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_LSTM_H_
