// vector_add (f32, block 256) as CUDA C++: the algorithm of kernels/vector_add.cc, for NVRTC/nvcc comparisons.
extern "C" __global__ void __launch_bounds__(256) vector_add_f32(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
