// LSTM sequence forward on any runtime::Device: the lstm.cell kernel launched
// once per time step over one h_seq buffer.
#ifndef PTXFORGE_KERNELS_LSTM_SEQUENCE_H_
#define PTXFORGE_KERNELS_LSTM_SEQUENCE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "ir/target.h"
#include "kernels/lstm.h"
#include "runtime/device.h"

namespace ptxforge::kernels {

struct LstmSequenceShape {
  uint32_t seq_len = 0;  // T
  uint32_t batch = 0;    // B
  uint32_t input = 0;    // I
  uint32_t hidden = 0;   // H
};

// Device memory of one sequence (T = float or double), row-major.
template <typename T>
struct LstmSequenceBuffers {
  runtime::BufferView<T> x;       // [T, B, I]
  runtime::BufferView<T> h0, c0;  // [B, H]
  runtime::BufferView<T> w_x;     // [4H, I], gates i, f, g, o
  runtime::BufferView<T> w_h;     // [4H, H]
  runtime::BufferView<T> bias;    // [4H]
  runtime::BufferView<T> h_seq;   // [T, B, H]: h of every step (output)
  runtime::BufferView<T> h_n;     // [B, H]: the last h (output)
  runtime::BufferView<T> c_n;     // [B, H]: the last c (output)
};

// Runs the sequence: step t reads x[t] and h[t-1] (h0 at t = 0) through views
// of x and h_seq and writes h_seq[t] in place: no copy per step. c alternates
// between c_n and one [B, H] scratch buffer so that no step reads and writes
// the same memory and the last step writes c_n; h_n is copied from
// h_seq[T-1] once at the end. `target` is what the cell is built for (the
// device's, for CUDA; any for the emulator); `batch_tile` as in LstmCellSpec.
// Errors, each naming the argument: a zero size, a buffer on another device,
// an input or output shorter than its shape, weights whose size does not
// match (4H x I, 4H x H, 4H), outputs overlapping inputs or each other.
template <typename T>
absl::Status LstmSequenceForward(runtime::Device& device, const LstmSequenceShape& shape,
                                 const LstmSequenceBuffers<T>& buffers, ir::Target target = ir::Target::kSm80,
                                 uint32_t batch_tile = 8);

// The reference: T reference cells (in V); fills h_seq [T, B, H], h_n, c_n.
template <typename V>
void LstmSequenceReference(const LstmSequenceShape& shape, std::span<const V> x, std::span<const V> h0,
                           std::span<const V> c0, std::span<const V> w_x, std::span<const V> w_h,
                           std::span<const V> bias, std::vector<V>& h_seq, std::vector<V>& h_n, std::vector<V>& c_n) {
  const size_t state = size_t{shape.batch} * shape.hidden;
  h_seq.assign(shape.seq_len * state, V{0});
  std::vector<V> c(c0.begin(), c0.end()), c_next(state);
  for (uint32_t t = 0; t < shape.seq_len; ++t) {
    std::span<const V> h_prev = t == 0 ? h0 : std::span<const V>(h_seq).subspan((t - 1) * state, state);
    std::span<V> h_out = std::span<V>(h_seq).subspan(t * state, state);
    LstmCellReference<V>(x.subspan(t * size_t{shape.batch} * shape.input, size_t{shape.batch} * shape.input), h_prev,
                         c, w_x, w_h, bias, shape.batch, shape.hidden, shape.input, h_out, c_next);
    c.swap(c_next);
  }
  h_n.assign(h_seq.end() - static_cast<std::ptrdiff_t>(state), h_seq.end());
  c_n = c;
}

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_LSTM_SEQUENCE_H_
