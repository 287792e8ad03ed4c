// conv2d.backward_data, default configuration (f32, in_channels 3, out_channels 64, kernel 3x3, stride 1x1,
// pad 0x0, dilation 1x1, groups 1): BackwardDataBody of kernels/conv2d_kernels.cc in CUDA C++, for comparison.
// The tiling of TilingFor: 128 threads, a 32x4 tile of input pixels (one per thread) x 3 input channels per
// thread; grad_output halo tiles go_tile [4][7][35] and w_tile [4*9][3] of 4 output channels per stage in shared
// memory. Input row y takes tap ky when (y + p - ky*d) is a multiple of s; its grad_output row is then
// (y + p) / s - floor(ky*d / s), a constant offset per tap from the thread's corner. Grid (tiles,
// groups * C/g / 3, N). Loops the builder keeps are loops (unroll 1); the window is unrolled.
constexpr unsigned kC = 3, kOC = 64, kKH = 3, kKW = 3, kSH = 1, kSW = 1, kPH = 0, kPW = 0, kDH = 1, kDW = 1, kG = 1;
constexpr unsigned kCpg = kC / kG, kOcpg = kOC / kG, kTaps = kKH * kKW;
constexpr unsigned kThreads = 128, kTileW = 32, kTileH = 4, kIct = 3, kOcb = 4;
constexpr unsigned kHaloH = ((kTileH - 1) + (kKH - 1) * kDH) / kSH + 2, kHaloW = ((kTileW - 1) + (kKW - 1) * kDW) / kSW + 2;

// One axis: the tile's first grad_output row (floor division made non-negative by a bias of `lift` strides),
// the thread's row in the tile less the largest tap offset, and (pixel + pad) mod stride.
template <unsigned K, unsigned S, unsigned P, unsigned D>
struct Axis {
  static constexpr unsigned kReach = (K - 1) * D, kLift = (kReach + S - 1) / S;
  int first;
  unsigned row, phase;
  __device__ Axis(unsigned origin, unsigned pixel) {
    first = int((origin + P + kLift * S - kReach) / S) - int(kLift);
    unsigned shifted = pixel + P, q = shifted / S;
    phase = shifted - q * S;
    row = unsigned(int(q) - first) - kReach / S;
  }
  __device__ static constexpr unsigned Offset(unsigned i) { return kReach / S - i * D / S; }
};

extern "C" __global__ void __launch_bounds__(kThreads)
    conv2d_backward_data_f32_ic3_oc64_k3x3(const float* grad_output, const float* weight, float* grad_input,
                                           unsigned batch, unsigned in_h, unsigned in_w, unsigned out_h,
                                           unsigned out_w) {
  __shared__ __align__(16) float go_tile[kOcb * kHaloH * kHaloW];
  __shared__ __align__(16) float w_tile[kOcb * kTaps * kIct];
  unsigned tid = threadIdx.x, tx = tid % kTileW, ty = tid / kTileW;
  unsigned tiles_x = (in_w + kTileW - 1) / kTileW, tile_y = blockIdx.x / tiles_x, tile_x = blockIdx.x - tile_y * tiles_x;
  unsigned y0 = tile_y * kTileH, x0 = tile_x * kTileW, py = y0 + ty, px = x0 + tx;
  // The block's input channels: kIct from `first` of `group` (group-major over grid.y).
  constexpr unsigned kBlocksPerGroup = (kCpg + kIct - 1) / kIct;
  unsigned group = blockIdx.y / kBlocksPerGroup, first = (blockIdx.y - group * kBlocksPerGroup) * kIct;
  unsigned n = blockIdx.z;
  Axis<kKH, kSH, kPH, kDH> ay(y0, py);
  Axis<kKW, kSW, kPW, kDW> ax(x0, px);
  const float* corner = go_tile + (ay.row * kHaloW + ax.row);
  float acc[kIct];
#pragma unroll
  for (unsigned j = 0; j < kIct; ++j) acc[j] = 0.0f;
  unsigned plane_out = out_h * out_w, oc_group = group * kOcpg;
  const float* go_group = grad_output + (unsigned long long)(n * kOC + oc_group) * plane_out;
  unsigned w_first = oc_group * (kCpg * kTaps) + first * kTaps;  // weight[oc_group, first, 0, 0]
#pragma unroll 1
  for (unsigned oc0 = 0; oc0 < kOcpg; oc0 += kOcb) {
    // go_tile[ch][r][c] = grad_output[oc0 + ch][first_y + r][first_x + c], zero outside the image.
    const float* src = go_group + (unsigned long long)oc0 * plane_out;
#pragma unroll 1
    for (unsigned i = tid; i < kOcb * kHaloH * kHaloW; i += kThreads) {
      unsigned ch = i / (kHaloH * kHaloW), rem = i - ch * (kHaloH * kHaloW);
      unsigned r = rem / kHaloW, c = rem - r * kHaloW;
      unsigned y = unsigned(ay.first + int(r)), x = unsigned(ax.first + int(c));  // negative wraps to large
      float v = 0.0f;
      if (y < out_h && x < out_w) v = __ldg(src + (ch * plane_out + (y * out_w + x)));
      go_tile[i] = v;
    }
    // w_tile[(ocl*taps + tap)*ict + j] = weight[oc_group + oc0 + ocl, first + j, tap]
    unsigned w_chunk = oc0 * (kCpg * kTaps) + w_first;
#pragma unroll 1
    for (unsigned i = tid; i < kOcb * kIct * kTaps; i += kThreads) {
      unsigned ocl = i / (kIct * kTaps), r = i - ocl * (kIct * kTaps), j = r / kTaps, tap = r - j * kTaps;
      w_tile[(ocl * kTaps + tap) * kIct + j] = __ldg(weight + (ocl * (kCpg * kTaps) + w_chunk + r));
    }
    __syncthreads();
#pragma unroll
    for (unsigned ocl = 0; ocl < kOcb; ++ocl) {
#pragma unroll
      for (unsigned ky = 0; ky < kKH; ++ky) {
        if (kSH > 1 && ay.phase != ky * kDH % kSH) continue;
#pragma unroll
        for (unsigned kx = 0; kx < kKW; ++kx) {
          if (kSW > 1 && ax.phase != kx * kDW % kSW) continue;
          float x = corner[(ocl * kHaloH + ay.Offset(ky)) * kHaloW + ax.Offset(kx)];
          const float* w = w_tile + (ocl * kTaps + ky * kKW + kx) * kIct;
#pragma unroll
          for (unsigned j = 0; j < kIct; ++j) acc[j] = fmaf(x, w[j], acc[j]);
        }
      }
    }
    __syncthreads();
  }
  if (py < in_h && px < in_w) {
    unsigned plane_in = in_h * in_w, c0 = group * kCpg + first;
    float* out = grad_input + (unsigned long long)(n * kC + c0) * plane_in + (py * in_w + px);
#pragma unroll
    for (unsigned j = 0; j < kIct; ++j) out[(unsigned long long)j * plane_in] = acc[j];
  }
}
