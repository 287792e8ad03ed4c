// One LSTM step (gates i, f, g, o): kernels/lstm.cc in CUDA C++, for comparison. Mirrors the registry's
// default configuration: type=f32 batch_tile=8 (blocks of 32 x 8 threads; each block stages the four gates'
// 32-row weight tiles, 32 columns at a time, in padded shared memory with the 8 x 32 tile of x, then of
// h_prev; read-only loads are ld.global.nc; sigmoid = rcp.rn(1 + ex2.approx(-x log2 e)), tanh = 2 sigmoid(2x) - 1).
// Loops the kernel keeps as loops carry #pragma unroll 1; the loops it unrolls carry #pragma unroll.
constexpr unsigned TJ = 32, TK = 32, BT = 8, STRIDE = TK + 1, RPT = TJ / BT;

__device__ __forceinline__ float Ex2(float x) {  // ex2.approx.f32 (exp2f would add denormal handling)
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float Sigmoid(float x) { return __frcp_rn(Ex2(x * -1.4426950408889634f) + 1.0f); }
__device__ __forceinline__ float Tanh(float x) { return fmaf(Sigmoid(x + x), 2.0f, -1.0f); }
__device__ __forceinline__ float Ldg(const char* p) { return __ldg((const float*)p); }

extern "C" __global__ void __launch_bounds__(TJ * BT) lstm_cell_f32_bt8(
    const float* x, const float* h_prev, const float* c_prev, const float* w_x, const float* w_h, const float* bias,
    float* h_out, float* c_out, unsigned batch, unsigned hidden, unsigned input) {
  __shared__ float w_tile[4][TJ][STRIDE], v_tile[BT][TK];
  unsigned tx = threadIdx.x, ty = threadIdx.y, j0 = blockIdx.x * TJ, b0 = blockIdx.y * BT;
  unsigned j = j0 + tx, row_b = b0 + ty, w_row = j0 + ty;
  bool row_ok[RPT];
#pragma unroll
  for (unsigned i = 0; i < RPT; ++i) row_ok[i] = w_row + BT * i < hidden;
  bool batch_ok = row_b < batch;
  float acc[4] = {};
  // acc[q] += W[qH + j] . v[row_b] over k < columns, 32 columns per step.
  auto accumulate = [&](const float* w, const float* v, unsigned columns) {
    unsigned row_bytes = columns * 4;
    const char* w_ptr = (const char*)(w + tx) + size_t(w_row) * row_bytes;
    const char* v_ptr = (const char*)(v + tx) + size_t(row_b) * row_bytes;
    size_t gate_stride = size_t(hidden) * row_bytes, row_stride = size_t(row_bytes) * BT;
#pragma unroll 1
    for (unsigned k0 = 0; k0 < columns; k0 += TK) {
      bool k_ok = k0 + tx < columns;
      const char* row_addr = w_ptr;
#pragma unroll
      for (unsigned i = 0; i < RPT; ++i) {
        if (i > 0) row_addr += row_stride;
        if (row_ok[i] && k_ok) {
          const char* addr = row_addr;
#pragma unroll
          for (unsigned q = 0; q < 4; ++q) {
            if (q > 0) addr += gate_stride;
            w_tile[q][ty + BT * i][tx] = Ldg(addr);
          }
        } else {
#pragma unroll
          for (unsigned q = 0; q < 4; ++q) w_tile[q][ty + BT * i][tx] = 0;
        }
      }
      if (batch_ok && k_ok) {
        v_tile[ty][tx] = Ldg(v_ptr);
      } else {
        v_tile[ty][tx] = 0;
      }
      __syncthreads();
#pragma unroll
      for (unsigned kk = 0; kk < TK; ++kk) {
        float vk = v_tile[ty][kk];
#pragma unroll
        for (unsigned q = 0; q < 4; ++q) acc[q] = fmaf(w_tile[q][tx][kk], vk, acc[q]);
      }
      __syncthreads();
      w_ptr += TK * 4;
      v_ptr += TK * 4;
    }
  };
  accumulate(w_x, x, input);
  accumulate(w_h, h_prev, hidden);
  if (j < hidden && batch_ok) {
    const char* bias_addr = (const char*)(bias + j);
    size_t gate_bytes = size_t(hidden) * 4;
    float pre[4];
#pragma unroll
    for (unsigned q = 0; q < 4; ++q) {
      if (q > 0) bias_addr += gate_bytes;
      pre[q] = acc[q] + Ldg(bias_addr);
    }
    float in_gate = Sigmoid(pre[0]), forget_gate = Sigmoid(pre[1]), cell_gate = Tanh(pre[2]);
    float out_gate = Sigmoid(pre[3]);
    unsigned at = row_b * hidden + j;
    float c_old = __ldg(c_prev + at);
    float fresh = in_gate * cell_gate;
    float c = fmaf(forget_gate, c_old, fresh);
    float h = out_gate * Tanh(c);
    h_out[at] = h;
    c_out[at] = c;
  }
}
