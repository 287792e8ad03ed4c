// MoE expert GEMM: ExpertGemmBody of kernels/moe.cc in CUDA C++, for comparison. Mirrors the registry's
// default configuration: type=f32 hidden_dim=64 expert_dim=32 (blocks of 16 x 16 threads, grid (D / 16,
// capacity / 16, experts); gathered token rows and the expert's weight rows staged 16 wide along h in padded
// shared tiles with clamped loads and selected zeros; one output per thread). The kernel keeps the loop over
// h as a loop (4 trips), so it carries #pragma unroll 1 here; the 16-step inner product is unrolled in both.
constexpr unsigned H = 64, D = 32, TILE = 16, PITCH = TILE + 1;

extern "C" __global__ void __launch_bounds__(TILE * TILE) moe_expert_gemm_f32_h64_d32(
    const float* input, const float* w, const unsigned* token_ids, const unsigned* expert_counts,
    float* expert_out, unsigned capacity) {
  __shared__ float a_tile[TILE * PITCH], w_tile[TILE * PITCH];  // [row][h] and [d][h], padded
  unsigned tid = threadIdx.x, tx = tid & (TILE - 1), ty = tid >> 4, e = blockIdx.z;
  unsigned s0 = blockIdx.y << 4, d0 = blockIdx.x << 4;
  unsigned rows = min(expert_counts[e], capacity);
  if (s0 >= rows) return;  // the whole block: no rows here
  unsigned bin_row = e * capacity + s0;
  // Loader roles: input[token of row s0+ty][h0+tx] and W[e][d0+ty][h0+tx] (clamped addresses; zero outside).
  unsigned s = s0 + ty;
  bool row_ok = s < rows;
  unsigned token = token_ids[bin_row + min(ty, rows - s0 - 1)];
  const float* a_row = input + size_t(token) * H;
  unsigned wd = d0 + ty;
  bool wd_ok = wd < D;
  const float* w_row = w + size_t(e * D + min(wd, D - 1)) * H;
  unsigned stage = ty * PITCH + tx;
  const float* a_read = a_tile + ty * PITCH;
  const float* w_read = w_tile + tx * PITCH;
  float acc = 0;
#pragma unroll 1
  for (unsigned h0 = 0; h0 < H; h0 += TILE) {
    unsigned h = h0 + tx, hc = min(h, H - 1);
    bool h_ok = h < H;
    float av = a_row[hc], wv = w_row[hc];
    a_tile[stage] = h_ok && row_ok ? av : 0.0f;
    w_tile[stage] = h_ok && wd_ok ? wv : 0.0f;
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < TILE; ++k) acc = fmaf(a_read[k], w_read[k], acc);
    __syncthreads();
  }
  unsigned d = d0 + tx;
  if (row_ok && d < D) expert_out[size_t(bin_row + ty) * D + d] = acc;
}
