// C = A . dequant(B) with NF4 weights: BuildGemm of kernels/nf4_gemm.cc in CUDA C++, for comparison. Mirrors
// the registry's default configuration: tile_m=64 tile_n=64 (256 threads as 16 x 16, 4 x 4 outputs each; per
// NF4 block of 64 along K the block stages A transposed with 128-bit ld.global.nc loads and B decoded once
// through the codebook in shared memory, both in tiles padded to 65 floats; loads of A and B clamped into
// the matrices, stores guarded). The loop over NF4 blocks is a loop in both; everything inside is unrolled.
constexpr unsigned THREADS = 256, TM = 64 / 16, TN = 64 / 16, SA = 64 + 1, SB = 64 + 1, BLOCK_BYTES = 32;

extern "C" __global__ void __launch_bounds__(THREADS) nf4_gemm_f32_t64x64(
    const float* a, const unsigned char* b_nf4, const float* b_scales, float* c, unsigned m, unsigned n,
    unsigned k) {
  __shared__ float codebook[16];
  __shared__ float a_tile[64 * SA], b_tile[64 * SB];  // a_tile[kk][mm] (A transposed), b_tile[kk][nn]
  unsigned tid = threadIdx.x, n0 = blockIdx.x * 64, m0 = blockIdx.y * 64;
  if (m0 >= m || n0 >= n) return;  // the whole block, before the first barrier
  if (tid == 0) {
    const float values[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                              -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                              0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                              0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                              0.7229568362236023f, 1.0f};
#pragma unroll
    for (unsigned i = 0; i < 16; ++i) codebook[i] = values[i];
  }
  unsigned tx = tid & 15, ty = tid >> 4, m_last = m - 1, n_last = n - 1, blocks = k >> 6, a_row_bytes = k << 2;
  // A: the float4 at column 4 tx of rows ty + 16 i (clamped into A).
  const char* a_col = (const char*)(a + (tx << 2));
  const char* a_ptr[TM];
#pragma unroll
  for (unsigned i = 0; i < TM; ++i) a_ptr[i] = a_col + size_t(min(ty + m0 + 16 * i, m_last)) * a_row_bytes;
  float* a_store = a_tile + (tx * 4 * SA + ty);
  // B: item (column, part) = (tid / 4, tid % 4): the part-th 8 bytes (16 values) of the column's block.
  unsigned b_col = tid >> 2, b_part = tid & 3;
  unsigned block = min(b_col + n0, n_last) * blocks;
  const unsigned char* data_ptr = b_nf4 + size_t(b_part) * 8 + size_t(block) * BLOCK_BYTES;
  const float* scale_ptr = b_scales + block;
  float* b_store = b_tile + (b_part * 16 * SB + b_col);
  const float* a_read = a_tile + ty;
  const float* b_read = b_tile + tx;
  float acc[TM * TN] = {};
  __syncthreads();  // the codebook
#pragma unroll 1
  for (unsigned kb = 0; kb < blocks; ++kb) {
#pragma unroll
    for (unsigned i = 0; i < TM; ++i) {
      float4 v = __ldg((const float4*)a_ptr[i]);
      a_store[0 * SA + 16 * i] = v.x;
      a_store[1 * SA + 16 * i] = v.y;
      a_store[2 * SA + 16 * i] = v.z;
      a_store[3 * SA + 16 * i] = v.w;
      a_ptr[i] += 4 * 64;
    }
    uint2 words = __ldg((const uint2*)data_ptr);
    float scale = __ldg(scale_ptr);
#pragma unroll
    for (unsigned w = 0; w < 2; ++w) {
      unsigned word = w == 0 ? words.x : words.y;
#pragma unroll
      for (unsigned e = 0; e < 8; ++e) b_store[(w * 8 + e) * SB] = codebook[(word >> (4 * e)) & 15] * scale;
    }
    data_ptr += BLOCK_BYTES;
    scale_ptr += 1;
    __syncthreads();
#pragma unroll
    for (unsigned kk = 0; kk < 64; ++kk) {
      float av[TM], bv[TN];
#pragma unroll
      for (unsigned i = 0; i < TM; ++i) av[i] = a_read[kk * SA + 16 * i];
#pragma unroll
      for (unsigned j = 0; j < TN; ++j) bv[j] = b_read[kk * SB + 16 * j];
#pragma unroll
      for (unsigned i = 0; i < TM; ++i)
#pragma unroll
        for (unsigned j = 0; j < TN; ++j) acc[i * TN + j] = fmaf(av[i], bv[j], acc[i * TN + j]);
    }
    __syncthreads();
  }
  // C[m0 + ty + 16 i][n0 + tx + 16 j]: 16 threads store 64 contiguous bytes.
  unsigned col0 = n0 + tx, c_row_bytes = n << 2;
  float* c_col = c + col0;
  bool col_ok[TN];
#pragma unroll
  for (unsigned j = 0; j < TN; ++j) col_ok[j] = col0 + 16 * j < n;
#pragma unroll
  for (unsigned i = 0; i < TM; ++i) {
    unsigned row = ty + m0 + 16 * i;
    bool row_ok = row < m;
    float* c_row = (float*)((char*)c_col + size_t(row) * c_row_bytes);
#pragma unroll
    for (unsigned j = 0; j < TN; ++j) {
      if (row_ok && col_ok[j]) c_row[16 * j] = acc[i * TN + j];
    }
  }
}
