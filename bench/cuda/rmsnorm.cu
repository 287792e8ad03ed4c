// RMS norm, f32, 128 threads per row: the algorithm of kernels/norm.cc in CUDA C++, for comparison.
constexpr int kBlock = 128;

__device__ float BlockSum(float v) {
  __shared__ float scratch[kBlock / 32];
  for (int m = 16; m >= 1; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[threadIdx.x % (kBlock / 32)];
  for (int m = kBlock / 64; m >= 1; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
  __syncthreads();
  return v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
    rmsnorm_f32_b128(const float* x, const float* weight, float* y, unsigned rows, unsigned cols, float eps) {
  float inv_cols = 1.0f / cols;
  for (unsigned r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + size_t{r} * cols;
    float* yr = y + size_t{r} * cols;
    float ss = 0;
    for (unsigned c = threadIdx.x; c < cols; c += kBlock) ss = fmaf(xr[c], xr[c], ss);
    float rstd = rsqrtf(BlockSum(ss) * inv_cols + eps);
    for (unsigned c = threadIdx.x; c < cols; c += kBlock) yr[c] = xr[c] * rstd * weight[c];
  }
}
