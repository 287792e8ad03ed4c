// C = A . dequant(B)^T with NF4 weights (the backward product): BuildGemmTranspose of kernels/nf4_gemm.cc in
// CUDA C++, for comparison. Mirrors the registry's default configuration: tile_m=64 tile_n=32 (256 threads as
// 16 x 16, 4 x 4 outputs each; a block owns 64 rows and one NF4 block of 64 output columns and steps the
// reduction over N 32 columns at a time: A transposed into shared memory (columns past N as zeros) and 32
// columns of B's block decoded through the codebook in shared memory (scale 0 past N), both padded to 65
// floats; read-only loads are ld.global.nc). The loop over N is a loop in both; everything inside is unrolled.
constexpr unsigned THREADS = 256, TM = 64 / 16, TK = 64 / 16, CHUNK = 32, SA = 64 + 1, SB = 64 + 1;
constexpr unsigned A_PER_THREAD = 64 * CHUNK / THREADS, ROWS_PER_PASS = THREADS / CHUNK, BLOCK_BYTES = 32;

extern "C" __global__ void __launch_bounds__(THREADS) nf4_gemm_transpose_f32_t64x32(
    const float* a, const unsigned char* b_nf4, const float* b_scales, float* c, unsigned m, unsigned n,
    unsigned k) {
  __shared__ float codebook[16];
  __shared__ float a_tile[CHUNK * SA], b_tile[CHUNK * SB];  // a_tile[nn][mm] (A transposed), b_tile[nn][kk]
  unsigned tid = threadIdx.x, kb = blockIdx.x, k0 = kb << 6, m0 = blockIdx.y * 64;
  if (m0 >= m || k0 >= k) return;  // the whole block, before the first barrier
  if (tid == 0) {
    const float values[16] = {-1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
                              -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
                              0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f,
                              0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
                              0.7229568362236023f, 1.0f};
#pragma unroll
    for (unsigned i = 0; i < 16; ++i) codebook[i] = values[i];
  }
  unsigned tx = tid & 15, ty = tid >> 4, m_last = m - 1, n_last = n - 1, blocks = k >> 6;
  // A: items tid + 256 i are (row / CHUNK, column % CHUNK): a warp reads consecutive columns of a row.
  unsigned a_nn = tid & (CHUNK - 1), a_mm = tid >> 5, a_row_bytes = n << 2;
  const char* a_col = (const char*)(a + a_nn);
  const char* a_ptr[A_PER_THREAD];
#pragma unroll
  for (unsigned i = 0; i < A_PER_THREAD; ++i) {
    a_ptr[i] = a_col + size_t(min(a_mm + m0 + ROWS_PER_PASS * i, m_last)) * a_row_bytes;
  }
  float* a_store = a_tile + (a_nn * SA + a_mm);
  // B: item (column, word) = (tid / 8, tid % 8): 8 threads read one column's 32 bytes of block kb.
  unsigned b_col = tid >> 3, b_word = tid & 7;
  const char* data_kb = (const char*)((const unsigned*)b_nf4 + b_word) + size_t(kb) * BLOCK_BYTES;
  const char* scale_kb = (const char*)(b_scales + kb);
  unsigned column_bytes = blocks * BLOCK_BYTES, column_scale_bytes = blocks << 2;
  float* b_store = b_tile + (b_word * 8 + b_col * SB);
  const float* a_read = a_tile + ty;
  const float* b_read = b_tile + tx;
  float acc[TM * TK] = {};
  __syncthreads();  // the codebook
#pragma unroll 1
  for (unsigned n_base = 0; n_base < n; n_base += CHUNK) {
    // A's columns past N read as zero.
    if (n_base + a_nn < n) {
#pragma unroll
      for (unsigned i = 0; i < A_PER_THREAD; ++i) a_store[ROWS_PER_PASS * i] = __ldg((const float*)a_ptr[i]);
    } else {
#pragma unroll
      for (unsigned i = 0; i < A_PER_THREAD; ++i) a_store[ROWS_PER_PASS * i] = 0.0f;
    }
#pragma unroll
    for (unsigned i = 0; i < A_PER_THREAD; ++i) a_ptr[i] += 4 * CHUNK;
    // B's columns past N decode with scale 0 (their clamped bytes are valid).
    unsigned global_col = n_base + b_col;
    bool in = global_col < n;
    unsigned clamped = min(global_col, n_last);
    unsigned word = __ldg((const unsigned*)(data_kb + size_t(clamped) * column_bytes));
    float stored_scale = __ldg((const float*)(scale_kb + size_t(clamped) * column_scale_bytes));
    float scale = in ? stored_scale : 0.0f;
#pragma unroll
    for (unsigned e = 0; e < 8; ++e) b_store[e] = codebook[(word >> (4 * e)) & 15] * scale;
    __syncthreads();
#pragma unroll
    for (unsigned nn = 0; nn < CHUNK; ++nn) {
      float av[TM], bv[TK];
#pragma unroll
      for (unsigned i = 0; i < TM; ++i) av[i] = a_read[nn * SA + 16 * i];
#pragma unroll
      for (unsigned j = 0; j < TK; ++j) bv[j] = b_read[nn * SB + 16 * j];
#pragma unroll
      for (unsigned i = 0; i < TM; ++i)
#pragma unroll
        for (unsigned j = 0; j < TK; ++j) acc[i * TK + j] = fmaf(av[i], bv[j], acc[i * TK + j]);
    }
    __syncthreads();
  }
  // C[m0 + ty + 16 i][k0 + tx + 16 j]; K is a multiple of 64, so every column exists.
  unsigned c_row_bytes = k << 2;
  float* c_col = c + (k0 + tx);
#pragma unroll
  for (unsigned i = 0; i < TM; ++i) {
    unsigned row = ty + m0 + 16 * i;
    float* c_row = (float*)((char*)c_col + size_t(row) * c_row_bytes);
    if (row < m) {
#pragma unroll
      for (unsigned j = 0; j < TK; ++j) c_row[16 * j] = acc[i * TK + j];
    }
  }
}
