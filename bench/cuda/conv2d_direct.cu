// conv2d.direct, default configuration (f32, in_channels 3, out_channels 64, kernel 3x3, stride 1x1, pad 0x0,
// dilation 1x1, groups 1): DirectBody of kernels/conv2d_kernels.cc in CUDA C++, for comparison. The tiling of
// TilingFor: 128 threads, a 32x4 output tile (one pixel per thread) x 8 output channels per thread, all 3 input
// channels staged at once: in_tile [3][6][34] (the input halo) and w_tile [3*9][8] in shared memory. Grid
// (tiles, groups * OC/g / 8, N). Loops the builder keeps are loops (unroll 1); the window is unrolled.
constexpr unsigned kC = 3, kOC = 64, kKH = 3, kKW = 3, kSH = 1, kSW = 1, kPH = 0, kPW = 0, kDH = 1, kDW = 1, kG = 1;
constexpr unsigned kCpg = kC / kG, kOcpg = kOC / kG, kTaps = kKH * kKW;
constexpr unsigned kThreads = 128, kTileW = 32, kTileH = 4, kOct = 8, kIcb = 3;
constexpr unsigned kHaloH = (kTileH - 1) * kSH + (kKH - 1) * kDH + 1, kHaloW = (kTileW - 1) * kSW + (kKW - 1) * kDW + 1;

extern "C" __global__ void __launch_bounds__(kThreads)
    conv2d_direct_f32_ic3_oc64_k3x3(const float* input, const float* weight, float* output, const float* bias,
                                    unsigned batch, unsigned in_h, unsigned in_w, unsigned out_h, unsigned out_w) {
  __shared__ __align__(16) float in_tile[kIcb * kHaloH * kHaloW];
  __shared__ __align__(16) float w_tile[kIcb * kTaps * kOct];
  unsigned tid = threadIdx.x, tx = tid % kTileW, ty = tid / kTileW;
  unsigned tiles_x = (out_w + kTileW - 1) / kTileW, tile_y = blockIdx.x / tiles_x, tile_x = blockIdx.x - tile_y * tiles_x;
  unsigned y0 = tile_y * kTileH, x0 = tile_x * kTileW, py = y0 + ty, px = x0 + tx;
  // The block's output channels: kOct from oc0 (group-major over grid.y).
  unsigned group = blockIdx.y / (kOcpg / kOct), first = (blockIdx.y - group * (kOcpg / kOct)) * kOct;
  unsigned n = blockIdx.z, oc0 = group * kOcpg + first;
  float acc[kOct];
#pragma unroll
  for (unsigned o = 0; o < kOct; ++o) acc[o] = 0.0f;
  if (bias != nullptr) {
#pragma unroll
    for (unsigned o = 0; o < kOct; ++o) acc[o] = __ldg(bias + oc0 + o);
  }
  unsigned plane_in = in_h * in_w;
  const float* in_group = input + (unsigned long long)(n * kC + group * kCpg) * plane_in;
  int iy0 = int(y0 * kSH) - int(kPH), ix0 = int(x0 * kSW) - int(kPW);
  // The thread's window corner in the halo tile; the window's taps are constant offsets from it.
  const float* corner = in_tile + (ty * kSH * kHaloW + tx * kSW);
  unsigned w_first = oc0 * (kCpg * kTaps);  // weight[oc0, 0, 0, 0]
#pragma unroll 1
  for (unsigned ic0 = 0; ic0 < kCpg; ic0 += kIcb) {
    // in_tile[ch][r][c] = input[ic0 + ch][y0' + r][x0' + c], zero outside the image.
    const float* src = in_group + (unsigned long long)ic0 * plane_in;
#pragma unroll 1
    for (unsigned i = tid; i < kIcb * kHaloH * kHaloW; i += kThreads) {
      unsigned ch = i / (kHaloH * kHaloW), rem = i - ch * (kHaloH * kHaloW);
      unsigned r = rem / kHaloW, c = rem - r * kHaloW;
      unsigned y = unsigned(iy0 + int(r)), x = unsigned(ix0 + int(c));  // negative coordinates wrap to large
      float v = 0.0f;
      if (y < in_h && x < in_w) v = __ldg(src + (ch * plane_in + (y * in_w + x)));
      in_tile[i] = v;
    }
    // w_tile[(icc*taps + tap)*oct + o] = weight[oc0 + o, ic0 + icc, tap]
    unsigned w_chunk = ic0 * kTaps + w_first;
#pragma unroll 1
    for (unsigned i = tid; i < kOct * kIcb * kTaps; i += kThreads) {
      unsigned o = i / (kIcb * kTaps), r = i - o * (kIcb * kTaps);
      w_tile[r * kOct + o] = __ldg(weight + (o * (kCpg * kTaps) + w_chunk + r));
    }
    __syncthreads();
#pragma unroll
    for (unsigned icc = 0; icc < kIcb; ++icc) {
#pragma unroll
      for (unsigned ky = 0; ky < kKH; ++ky) {
#pragma unroll
        for (unsigned kx = 0; kx < kKW; ++kx) {
          float x = corner[(icc * kHaloH + ky * kDH) * kHaloW + kx * kDW];
          const float4* w = reinterpret_cast<const float4*>(w_tile + (icc * kTaps + ky * kKW + kx) * kOct);
#pragma unroll
          for (unsigned o = 0; o < kOct / 4; ++o) {
            float4 w4 = w[o];
            acc[4 * o] = fmaf(x, w4.x, acc[4 * o]);
            acc[4 * o + 1] = fmaf(x, w4.y, acc[4 * o + 1]);
            acc[4 * o + 2] = fmaf(x, w4.z, acc[4 * o + 2]);
            acc[4 * o + 3] = fmaf(x, w4.w, acc[4 * o + 3]);
          }
        }
      }
    }
    __syncthreads();
  }
  if (py < out_h && px < out_w) {
    unsigned plane_out = out_h * out_w;
    float* out = output + (unsigned long long)(n * kOC + oc0) * plane_out + (py * out_w + px);
#pragma unroll
    for (unsigned o = 0; o < kOct; ++o) out[(unsigned long long)o * plane_out] = acc[o];
  }
}
