// conv2d.im2col, default configuration (f32, in_channels 3, kernel 3x3, stride 1x1, pad 0x0, dilation 1x1,
// 128 threads): Im2colBody of kernels/conv2d_kernels.cc in CUDA C++, for comparison. One thread per (image,
// channel, output pixel) writes the kH*kW column rows of its pixel: col[n, (c*kH + ky)*kW + kx, p], zero where
// the window lies in the padding. Grid (ceil(outH*outW / 128), C, N). Loops the builder unrolls are unrolled.
constexpr unsigned kC = 3, kKH = 3, kKW = 3, kSH = 1, kSW = 1, kPH = 0, kPW = 0, kDH = 1, kDW = 1, kThreads = 128;

extern "C" __global__ void __launch_bounds__(kThreads)
    conv2d_im2col_f32_ic3_oc64_k3x3(const float* input, float* col, unsigned batch, unsigned in_h, unsigned in_w,
                                     unsigned out_h, unsigned out_w) {
  unsigned pixels = out_h * out_w, p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < pixels) {
    unsigned ch = blockIdx.y, n = blockIdx.z;
    unsigned oy = p / out_w, ox = p - oy * out_w;
    int iy0 = int(oy * kSH) - int(kPH), ix0 = int(ox * kSW) - int(kPW);
    unsigned plane_index = n * kC + ch;
    // The thread's window corner (may lie in the padding; read only where inside).
    const float* row = input + (unsigned long long)plane_index * (in_h * in_w) + (long long)(iy0 * int(in_w) + ix0);
    float* out = col + ((unsigned long long)(plane_index * (kKH * kKW)) * pixels + p);
    bool col_inside[kKW];
#pragma unroll
    for (unsigned kx = 0; kx < kKW; ++kx) col_inside[kx] = unsigned(ix0 + int(kx * kDW)) < in_w;
#pragma unroll
    for (unsigned ky = 0; ky < kKH; ++ky) {
      if (ky > 0) row += (unsigned long long)in_w * kDH;
      bool row_inside = unsigned(iy0 + int(ky * kDH)) < in_h;
#pragma unroll
      for (unsigned kx = 0; kx < kKW; ++kx) {
        float v = 0.0f;
        if (row_inside && col_inside[kx]) v = __ldg(row + kx * kDW);
        *out = v;
        if (ky + 1 < kKH || kx + 1 < kKW) out += pixels;
      }
    }
  }
}
