// Row softmax, f32, 128 threads per row: the algorithm of kernels/softmax.cc in CUDA C++, for comparison.
constexpr int kBlock = 128;

template <typename Op>
__device__ float BlockReduce(float v, Op op) {
  __shared__ float scratch[kBlock / 32];
  for (int m = 16; m >= 1; m /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, m));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[threadIdx.x % (kBlock / 32)];
  for (int m = kBlock / 64; m >= 1; m /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, m));
  __syncthreads();
  return v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
    softmax_f32_b128(const float* x, float* y, unsigned rows, unsigned cols) {
  for (unsigned r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + size_t{r} * cols;
    float* yr = y + size_t{r} * cols;
    float m = -__int_as_float(0x7f800000), s = 0;  // -inf (NVRTC has no INFINITY)
    for (unsigned c = threadIdx.x; c < cols; c += kBlock) {
      float v = xr[c], e = expf(-fabsf(v - m));
      s = v > m ? fmaf(s, e, 1.0f) : s + e;
      m = fmaxf(m, v);
    }
    float max = BlockReduce(m, [](float a, float b) { return fmaxf(a, b); });
    float sum = BlockReduce(s * expf(m - max), [](float a, float b) { return a + b; });
    float inv = 1.0f / sum;
    for (unsigned c = threadIdx.x; c < cols; c += kBlock) yr[c] = expf(xr[c] - max) * inv;
  }
}
