// LstmSequenceForward: T launches of lstm.cell over views of one h_seq buffer.
#include "kernels/lstm_sequence.h"

#include <string_view>

#include "ir/strings.h"

namespace ptxforge::kernels {
namespace {

struct Range {
  std::string_view name;
  uint64_t begin, end;
};

absl::Status Error(std::string_view message) { return absl::InvalidArgumentError(StrCat("lstm sequence: ", message)); }

}  // namespace

template <typename T>
absl::Status LstmSequenceForward(runtime::Device& device, const LstmSequenceShape& shape,
                                 const LstmSequenceBuffers<T>& buffers, ir::Target target, uint32_t batch_tile) {
  const uint32_t t_len = shape.seq_len, batch = shape.batch, input = shape.input, hidden = shape.hidden;
  for (auto [name, value] : {std::pair{"seq_len", t_len}, std::pair{"batch", batch}, std::pair{"input", input},
                             std::pair{"hidden", hidden}}) {
    if (value == 0) return Error(StrCat(name, " must be positive"));
  }
  const size_t step_x = size_t{batch} * input, state = size_t{batch} * hidden;
  struct Need {
    std::string_view name;
    const runtime::BufferView<T>* view;
    size_t count;
    std::string_view formula;
    bool exact;  // weights: the size must match the shape
  };
  const Need needs[] = {
      {"x", &buffers.x, t_len * step_x, "seq_len*batch*input", false},
      {"h0", &buffers.h0, state, "batch*hidden", false},
      {"c0", &buffers.c0, state, "batch*hidden", false},
      {"w_x", &buffers.w_x, size_t{4} * hidden * input, "4*hidden*input", true},
      {"w_h", &buffers.w_h, size_t{4} * hidden * hidden, "4*hidden*hidden", true},
      {"bias", &buffers.bias, size_t{4} * hidden, "4*hidden", true},
      {"h_seq", &buffers.h_seq, t_len * state, "seq_len*batch*hidden", false},
      {"h_n", &buffers.h_n, state, "batch*hidden", false},
      {"c_n", &buffers.c_n, state, "batch*hidden", false},
  };
  std::vector<Range> inputs, outputs;
  for (const Need& n : needs) {
    if (n.view->device() != &device) {
      return Error(StrCat(n.name, " is not a buffer of ", device.name(), n.view->device() == nullptr ? " (it is empty)" : ""));
    }
    if (n.exact ? n.view->size() != n.count : n.view->size() < n.count) {
      return Error(StrCat(n.name, " has ", n.view->size(), " elements, but ", n.formula, " = ", n.count, " ",
                          n.exact ? "are expected" : "are needed"));
    }
    Range r{n.name, n.view->address(), n.view->address() + n.count * sizeof(T)};
    (n.view == &buffers.h_seq || n.view == &buffers.h_n || n.view == &buffers.c_n ? outputs : inputs).push_back(r);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const Range& other : inputs) {
      if (outputs[i].begin < other.end && other.begin < outputs[i].end) {
        return Error(StrCat(outputs[i].name, " overlaps ", other.name));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (outputs[i].begin < outputs[j].end && outputs[j].begin < outputs[i].end) {
        return Error(StrCat(outputs[i].name, " overlaps ", outputs[j].name));
      }
    }
  }

  LstmCellSpec spec;
  spec.type = std::is_same_v<T, double> ? ir::ScalarType::kF64 : ir::ScalarType::kF32;
  spec.batch_tile = batch_tile;
  spec.batch = batch;
  spec.hidden = hidden;
  spec.input = input;
  absl::StatusOr<ir::Kernel> kernel = spec.Build(target);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<std::unique_ptr<runtime::LoadedKernel>> cell = device.Load(*kernel);
  if (!cell.ok()) return cell.status();
  runtime::Buffer<T> scratch;  // only a sequence of two or more steps needs it
  if (t_len > 1) {
    absl::StatusOr<runtime::Buffer<T>> allocated = runtime::Buffer<T>::Allocate(device, state);
    if (!allocated.ok()) return allocated.status();
    scratch = *std::move(allocated);
  }
  const runtime::BufferView<T> c_n = *buffers.c_n.View(0, state);
  const runtime::BufferView<T> c_scratch = scratch.view();
  const runtime::LaunchConfig launch = {.grid = {(hidden + 31) / 32, (batch + batch_tile - 1) / batch_tile, 1},
                                        .block = {32, batch_tile, 1}};
  runtime::BufferView<T> c_prev = *buffers.c0.View(0, state);
  for (uint32_t t = 0; t < t_len; ++t) {
    // The last step writes c_n; the ones before alternate with the scratch.
    const runtime::BufferView<T> c_out = (t_len - 1 - t) % 2 == 0 ? c_n : c_scratch;
    const runtime::BufferView<T> x_t = *buffers.x.View(t * step_x, step_x);
    const runtime::BufferView<T> h_prev = t == 0 ? *buffers.h0.View(0, state) : *buffers.h_seq.View((t - 1) * state, state);
    const runtime::BufferView<T> h_out = *buffers.h_seq.View(t * state, state);
    const runtime::KernelArg args[] = {x_t,   h_prev, c_prev, buffers.w_x, buffers.w_h, buffers.bias,
                                       h_out, c_out,  batch,  hidden,      input};
    if (absl::Status s = device.Launch(**cell, launch, args); !s.ok()) return s;
    c_prev = c_out;
  }
  if (absl::Status s = device.Synchronize(); !s.ok()) return s;
  // h_n: the last step's h, copied once.
  absl::StatusOr<std::vector<T>> last = buffers.h_seq.View((t_len - 1) * state, state)->ToHost();
  if (!last.ok()) return last.status();
  return buffers.h_n.View(0, state)->CopyFrom(*last);
}

template absl::Status LstmSequenceForward<float>(runtime::Device&, const LstmSequenceShape&,
                                                 const LstmSequenceBuffers<float>&, ir::Target, uint32_t);
template absl::Status LstmSequenceForward<double>(runtime::Device&, const LstmSequenceShape&,
                                                  const LstmSequenceBuffers<double>&, ir::Target, uint32_t);

}  // namespace ptxforge::kernels
