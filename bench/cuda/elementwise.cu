// elementwise add + gelu (erf form), f32: the algorithm of kernels/elementwise.cc in CUDA C++, for comparison.
// No host headers: NVRTC compiles this too (bench/nvrtc_bench.cc).

__device__ float Gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678f)); }

extern "C" __global__ void __launch_bounds__(256)
    elementwise_add_gelu_f32(const float* a, const float* b, float* y, unsigned n) {
  const unsigned stride = blockDim.x * gridDim.x, start = blockIdx.x * blockDim.x + threadIdx.x;
  const bool aligned = ((reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b) |
                         reinterpret_cast<unsigned long long>(y)) & 15) == 0;
  const unsigned vectors = aligned ? n / 4 : 0;
  for (unsigned j = start; j < vectors; j += stride) {
    float4 u = reinterpret_cast<const float4*>(a)[j], v = reinterpret_cast<const float4*>(b)[j];
    reinterpret_cast<float4*>(y)[j] =
        make_float4(Gelu(u.x + v.x), Gelu(u.y + v.y), Gelu(u.z + v.z), Gelu(u.w + v.w));
  }
  for (unsigned i = vectors * 4 + start; i < n; i += stride) y[i] = Gelu(a[i] + b[i]);
}
