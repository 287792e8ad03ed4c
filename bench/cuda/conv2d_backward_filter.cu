// conv2d.backward_filter, default configuration (f32, in_channels 3, out_channels 64, kernel 3x3, stride 1x1,
// pad 0x0, dilation 1x1, groups 1): BackwardFilterBody of kernels/conv2d_kernels.cc in CUDA C++, for comparison.
// The tiling of TilingFor: 256 threads, a 32x8 tile of output pixels (one per thread); block (oc, 3 input
// channels, 3 kernel rows) = 27 accumulators per thread walks the whole batch tile by tile with the input halo
// in_tile [3][10][34] in shared memory, then reduces its accumulators across the block (warp butterflies, then
// partial [8 warps][27] in shared memory). No atomics. Grid (OC, C/g / 3, kH / 3). Loops the builder keeps are
// loops (unroll 1); the window and the reduction are unrolled.
constexpr unsigned kC = 3, kOC = 64, kKH = 3, kKW = 3, kSH = 1, kSW = 1, kPH = 0, kPW = 0, kDH = 1, kDW = 1, kG = 1;
constexpr unsigned kCpg = kC / kG, kOcpg = kOC / kG, kTaps = kKH * kKW;
constexpr unsigned kThreads = 256, kTileW = 32, kTileH = 8, kRows = 3, kIct = 3, kWarps = kThreads / 32;
constexpr unsigned kSums = kIct * kRows * kKW;
constexpr unsigned kHaloH = (kTileH - 1) * kSH + (kRows - 1) * kDH + 1, kHaloW = (kTileW - 1) * kSW + (kKW - 1) * kDW + 1;

extern "C" __global__ void __launch_bounds__(kThreads)
    conv2d_backward_filter_f32_ic3_oc64_k3x3(const float* input, const float* grad_output, float* grad_weight,
                                             unsigned batch, unsigned in_h, unsigned in_w, unsigned out_h,
                                             unsigned out_w) {
  __shared__ __align__(16) float in_tile[kIct * kHaloH * kHaloW];
  __shared__ __align__(16) float partial[kWarps * kSums];
  unsigned tid = threadIdx.x, tx = tid % kTileW, ty = tid / kTileW;
  unsigned oc = blockIdx.x, c_first = blockIdx.y * kIct, ky0 = blockIdx.z * kRows;  // c_first within the group
  unsigned c0 = oc / kOcpg * kCpg + c_first;
  unsigned tiles_x = (out_w + kTileW - 1) / kTileW, tiles = (out_h + kTileH - 1) / kTileH * tiles_x;
  unsigned plane_in = in_h * in_w, plane_out = out_h * out_w;
  int ky_shift = int(ky0 * kDH) - int(kPH);
  const float* corner = in_tile + (ty * kSH * kHaloW + tx * kSW);
  float acc[kSums];
#pragma unroll
  for (unsigned m = 0; m < kSums; ++m) acc[m] = 0.0f;
#pragma unroll 1
  for (unsigned step = 0; step < batch * tiles; ++step) {
    unsigned n = step / tiles, tile = step - n * tiles, tile_y = tile / tiles_x;
    unsigned oy0 = tile_y * kTileH, ox0 = (tile - tile_y * tiles_x) * kTileW, oy = oy0 + ty, ox = ox0 + tx;
    float go = 0.0f;
    if (oy < out_h && ox < out_w) {
      go = __ldg(grad_output + (unsigned long long)(n * kOC + oc) * plane_out + (oy * out_w + ox));
    }
    int iy0 = int(oy0 * kSH) + ky_shift, ix0 = int(ox0 * kSW) - int(kPW);
    // in_tile[ch][r][c] = input[n, c0 + ch, iy0 + r, ix0 + c], zero outside the image.
    const float* src = input + (unsigned long long)(n * kC + c0) * plane_in;
#pragma unroll 1
    for (unsigned i = tid; i < kIct * kHaloH * kHaloW; i += kThreads) {
      unsigned ch = i / (kHaloH * kHaloW), rem = i - ch * (kHaloH * kHaloW);
      unsigned r = rem / kHaloW, c = rem - r * kHaloW;
      unsigned y = unsigned(iy0 + int(r)), x = unsigned(ix0 + int(c));  // negative coordinates wrap to large
      float v = 0.0f;
      if (y < in_h && x < in_w) v = __ldg(src + (ch * plane_in + (y * in_w + x)));
      in_tile[i] = v;
    }
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < kIct; ++j) {
#pragma unroll
      for (unsigned r = 0; r < kRows; ++r) {
#pragma unroll
        for (unsigned kx = 0; kx < kKW; ++kx) {
          float& a = acc[(j * kRows + r) * kKW + kx];
          a = fmaf(corner[(j * kHaloH + r * kDH) * kHaloW + kx * kDW], go, a);
        }
      }
    }
    __syncthreads();
  }
  // Block reduction: each warp's sums to partial[warp][m], then thread m adds the warps.
  unsigned lane = tid % 32;
  float* warp_row = partial + tid / 32 * kSums;
#pragma unroll
  for (unsigned m = 0; m < kSums; ++m) {
#pragma unroll
    for (unsigned mask = 16; mask >= 1; mask /= 2) acc[m] += __shfl_xor_sync(0xffffffffu, acc[m], mask);
  }
  if (lane == 0) {
#pragma unroll
    for (unsigned m = 0; m < kSums; ++m) warp_row[m] = acc[m];
  }
  __syncthreads();
  if (tid < kSums) {
    const float* mine = partial + tid;
    float total = mine[0];
#pragma unroll
    for (unsigned w = 1; w < kWarps; ++w) total += mine[w * kSums];
    // m = (j*rows + r)*kW + kx  ->  grad_weight[oc, c_first + j, ky0 + r, kx]
    unsigned j = tid / (kRows * kKW), rest = tid - j * (kRows * kKW);
    unsigned filter = oc * kCpg + (c_first + j);
    grad_weight[filter * kTaps + ky0 * kKW + rest] = total;
  }
}
