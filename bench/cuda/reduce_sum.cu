// reduce_sum (f32, block 256) as CUDA C++: the algorithm of kernels/reduce.cc, for NVRTC/nvcc comparisons.
extern "C" __global__ void __launch_bounds__(256) reduce_sum_f32_b256(const float* x, float* partial, unsigned n) {
  __shared__ float tile[256];
  unsigned tid = threadIdx.x;
  unsigned stride = blockDim.x * gridDim.x;
  float sum = 0.0f;
  for (unsigned j = blockIdx.x * blockDim.x + tid; j < n; j += stride) sum += x[j];
  tile[tid] = sum;
  __syncthreads();
  for (unsigned half = 256 / 2; half >= 1; half /= 2) {
    if (tid < half) tile[tid] = tile[tid] + tile[tid + half];
    if (half > 1) __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = tile[0];
}
