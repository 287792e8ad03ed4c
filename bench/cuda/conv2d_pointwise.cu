// conv2d.pointwise, default configuration (f32, in_channels 16, out_channels 32, kernel 1x1, groups 1):
// PointwiseBody of kernels/conv2d_kernels.cc in CUDA C++, for comparison. The tiling of TilingFor: 128 threads,
// one pixel per thread (coalesced along H*W) x 16 output channels per thread; the block's weights
// w_tile [16 input channels][16] in shared memory. The channel loop reads 4 channels per iteration (their loads
// first, then the products); it and the weight copy stay loops (unroll 1), as in the builder's kernel.
// Grid (ceil(H*W / 128), groups * OC/g / 16, N).
constexpr unsigned kC = 16, kOC = 32, kG = 1, kCpg = kC / kG, kOcpg = kOC / kG;
constexpr unsigned kThreads = 128, kOct = 16, kUnroll = 4;

extern "C" __global__ void __launch_bounds__(kThreads)
    conv2d_pointwise_f32_ic16_oc32_k1x1(const float* input, const float* weight, float* output, const float* bias,
                                        unsigned batch, unsigned spatial) {
  __shared__ __align__(16) float w_tile[kCpg * kOct];
  unsigned tid = threadIdx.x;
  unsigned group = blockIdx.y / (kOcpg / kOct), first = (blockIdx.y - group * (kOcpg / kOct)) * kOct;
  unsigned n = blockIdx.z, oc0 = group * kOcpg + first;
  // w_tile[ci*oct + o] = weight[oc0 + o, ci]
  unsigned w_first = oc0 * kCpg;
#pragma unroll 1
  for (unsigned i = tid; i < kCpg * kOct; i += kThreads) {
    unsigned o = i / kCpg, ci = i - o * kCpg;
    w_tile[ci * kOct + o] = __ldg(weight + (w_first + i));
  }
  __syncthreads();
  unsigned p = blockIdx.x * kThreads + tid;
  if (p < spatial) {
    float acc[kOct];
#pragma unroll
    for (unsigned o = 0; o < kOct; ++o) acc[o] = 0.0f;
    if (bias != nullptr) {
#pragma unroll
      for (unsigned o = 0; o < kOct; ++o) acc[o] = __ldg(bias + oc0 + o);
    }
    unsigned c_first = n * kC + group * kCpg;
    const float* in = input + (unsigned long long)c_first * spatial + p;
    const float* w_row = w_tile;
#pragma unroll 1
    for (unsigned ci = 0; ci < kCpg; ci += kUnroll) {
      float x[kUnroll];
#pragma unroll
      for (unsigned u = 0; u < kUnroll; ++u) {
        x[u] = __ldg(in);
        in += spatial;
      }
#pragma unroll
      for (unsigned u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (unsigned o = 0; o < kOct; o += 4) {
          float4 w = *reinterpret_cast<const float4*>(w_row + u * kOct + o);
          acc[o] = fmaf(x[u], w.x, acc[o]);
          acc[o + 1] = fmaf(x[u], w.y, acc[o + 1]);
          acc[o + 2] = fmaf(x[u], w.z, acc[o + 2]);
          acc[o + 3] = fmaf(x[u], w.w, acc[o + 3]);
        }
      }
      w_row += kUnroll * kOct;
    }
    float* out = output + (unsigned long long)(n * kOC + oc0) * spatial + p;
#pragma unroll
    for (unsigned o = 0; o < kOct; ++o) out[(unsigned long long)o * spatial] = acc[o];
  }
}
