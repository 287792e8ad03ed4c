// SGEMM C = alpha*A*B + beta*C, 128x128x8 block tiles, 8x8 per thread, double-buffered shared memory:
// kernels/gemm_simt.cc in CUDA C++, for comparison.
constexpr unsigned BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, T = BM / TM * (BN / TN), SA = BM + 4;
constexpr unsigned LA = BM * BK / T, LB = BN * BK / T, GM = BM * 4 / TM, GN = BN * 4 / TN;

__device__ float Load(const float* p, unsigned row, unsigned col, unsigned rows, unsigned cols) {
  return row < rows && col < cols ? p[size_t(row) * cols + col] : 0.0f;
}

extern "C" __global__ void __launch_bounds__(T) gemm_simt_f32_128x128_8x8(
    const float* a, const float* b, float* c, unsigned m, unsigned n, unsigned k, float alpha, float beta) {
  __shared__ __align__(16) float as[2][BK][SA], bs[2][BK][BN];
  unsigned t = threadIdx.x, tx4 = t % (BN / TN) * 4, ty4 = t / (BN / TN) * 4;
  unsigned m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, a_m = m0 + t / BK, a_k = t % BK;
  float ra[LA], rb[LB], acc[TM][TN] = {};
  auto fetch = [&](unsigned k0) {  // the slab at k0 into registers, zeros outside the matrices
    for (unsigned j = 0; j < LA; ++j) ra[j] = Load(a, a_m + j * T / BK, a_k + k0, m, k);
    for (unsigned j = 0; j < LB; ++j) rb[j] = Load(b, (t + j * T) / BN + k0, n0 + (t + j * T) % BN, k, n);
  };
  auto stash = [&](int buf) {  // registers into a shared buffer: As[k][m] (transposed), Bs[k][n]
    for (unsigned j = 0; j < LA; ++j) as[buf][a_k][t / BK + j * T / BK] = ra[j];
    for (unsigned j = 0; j < LB; ++j) (&bs[buf][0][0])[t + j * T] = rb[j];
  };
  fetch(0);
  stash(0);
  __syncthreads();
  int buf = 0;
  for (unsigned k0 = 0; k0 < k; k0 += BK) {
    fetch(k0 + BK);
#pragma unroll
    for (unsigned kk = 0; kk < BK; ++kk) {
      float fa[TM], fb[TN];
      for (unsigned g = 0; g < TM / 4; ++g) *(float4*)&fa[4 * g] = *(const float4*)&as[buf][kk][g * GM + ty4];
      for (unsigned g = 0; g < TN / 4; ++g) *(float4*)&fb[4 * g] = *(const float4*)&bs[buf][kk][g * GN + tx4];
      for (unsigned i = 0; i < TM; ++i)
        for (unsigned j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
    stash(buf ^ 1);
    __syncthreads();
    buf ^= 1;
  }
  for (unsigned i = 0; i < TM; ++i) {
    unsigned row = m0 + ty4 + i / 4 * GM + i % 4;
    for (unsigned j = 0; j < TN; ++j) {
      unsigned col = n0 + tx4 + j / 4 * GN + j % 4;
      float* p = c + size_t(row) * n + col;
      if (row < m && col < n) *p = beta != 0 ? fmaf(*p, beta, alpha * acc[i][j]) : alpha * acc[i][j];
    }
  }
}
