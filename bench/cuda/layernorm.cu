// Layer norm, f32, 128 threads per row: the algorithm of kernels/norm.cc in CUDA C++, for comparison.
constexpr int kBlock = 128;

struct Moments {
  float n, mean, m2;
};

__device__ Moments Merge(Moments a, Moments c) {
  float n = a.n + c.n, f = c.n / fmaxf(n, 1.0f), delta = c.mean - a.mean;
  return {n, fmaf(delta, f, a.mean), fmaf(delta * delta, a.n * f, a.m2 + c.m2)};
}

__device__ Moments WarpMerge(Moments m, int width) {
  for (int mask = width / 2; mask >= 1; mask /= 2) {
    m = Merge(m, {__shfl_xor_sync(0xffffffffu, m.n, mask), __shfl_xor_sync(0xffffffffu, m.mean, mask),
                  __shfl_xor_sync(0xffffffffu, m.m2, mask)});
  }
  return m;
}

__device__ Moments BlockMerge(Moments m) {
  constexpr int kWarps = kBlock / 32;
  __shared__ float s[3][kWarps];
  m = WarpMerge(m, 32);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) s[0][warp] = m.n, s[1][warp] = m.mean, s[2][warp] = m.m2;
  __syncthreads();
  int i = lane % kWarps;  // kWarps is a power of two here
  m = WarpMerge({s[0][i], s[1][i], s[2][i]}, kWarps);
  __syncthreads();
  return m;
}

extern "C" __global__ void __launch_bounds__(kBlock)
    layernorm_f32_b128(const float* x, const float* weight, const float* bias, float* y, unsigned rows,
                       unsigned cols, float eps) {
  float inv_cols = 1.0f / cols;
  for (unsigned r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + size_t{r} * cols;
    float* yr = y + size_t{r} * cols;
    float n = 0, mean = 0, m2 = 0;
    for (unsigned c = threadIdx.x; c < cols; c += kBlock) {
      float v = xr[c], delta = v - mean;
      n += 1.0f;
      mean += delta / n;
      m2 = fmaf(delta, v - mean, m2);
    }
    Moments total = BlockMerge({n, mean, m2});
    float rstd = rsqrtf(total.m2 * inv_cols + eps);
    for (unsigned c = threadIdx.x; c < cols; c += kBlock) {
      yr[c] = fmaf((xr[c] - total.mean) * rstd, weight[c], bias[c]);
    }
  }
}
