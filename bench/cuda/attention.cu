// FlashAttention-style forward: kernels/attention.cc in CUDA C++, for comparison. Mirrors the registry's
// default configuration: type=f32 head_dim=64 block=64 causal=false heads=4 kv_heads=2 (4 threads per query
// row, 16 dims each, 256 threads; K and V tiles of 64 keys in dynamic shared memory; online softmax in base 2
// with ex2.approx.f32, as the kernel emits it).
constexpr unsigned HD = 64, BLK = 64, GROUP = HD / 16, DIMS = HD / GROUP, T = BLK * GROUP, HEADS = 4, KV_HEADS = 2;

__device__ __forceinline__ float Ex2(float x) {  // ex2.approx.f32 (exp2f would add denormal handling)
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

extern "C" __global__ void __launch_bounds__(T) attention_f32_d64_b64_h4_kv2(
    const float* q, const float* k, const float* v, float* o, unsigned seq_len, float scale) {
  extern __shared__ __align__(16) float kv_tiles[];  // K tile [BLK][HD], then V tile [BLK][HD]
  unsigned tid = threadIdx.x, row = tid / GROUP, part = tid % GROUP, q0 = blockIdx.x * BLK, bh = blockIdx.y;
  unsigned kv_bh = bh / HEADS * KV_HEADS + bh % HEADS / (HEADS / KV_HEADS);  // grouped-query attention
  unsigned qi = q0 + row, head_elems = seq_len * HD;
  const float* q_head = q + size_t(bh) * head_elems;
  float* o_head = o + size_t(bh) * head_elems;
  const float* k_head = k + size_t(kv_bh) * head_elems;
  const float* v_head = v + size_t(kv_bh) * head_elems;
  // This thread's query dims times scale * log2(e); rows past the end read the last row and store nothing.
  float q_scale = scale * 1.4426950408889634f;
  unsigned dim0 = part * DIMS;
  const float* qp = q_head + (min(qi, seq_len - 1) * HD + dim0);
  float qv[DIMS], acc[DIMS];
#pragma unroll
  for (unsigned i = 0; i < DIMS; ++i) qv[i] = qp[i] * q_scale, acc[i] = 0;
  float m = -3.40282347e38f, l = 0;  // the lowest float (NVRTC has no FLT_MAX)
  unsigned num_tiles = (seq_len + BLK - 1) / BLK, last_elem = head_elems - 1;
  float* fill = kv_tiles + tid;
  const float* my_dims = kv_tiles + dim0;
  for (unsigned tile = 0; tile < num_tiles; ++tile) {
    unsigned k0 = tile * BLK, first = k0 * HD + tid;
    // K and V rows k0 .. k0 + BLK - 1 into shared memory (clamped to the last row).
#pragma unroll
    for (unsigned j = 0; j < DIMS; ++j) {
      unsigned elem = min(first + j * T, last_elem);
      float kx = k_head[elem], vx = v_head[elem];
      fill[j * T] = kx;
      fill[BLK * HD + j * T] = vx;
    }
    __syncthreads();
    unsigned key_end = min(seq_len - k0, BLK);
    for (unsigned kk = 0; kk < key_end; ++kk) {
      const float* kr = my_dims + kk * HD;
      float kx[DIMS], vx[DIMS];
#pragma unroll
      for (unsigned i = 0; i < DIMS; i += 4) *(float4*)&kx[i] = *(const float4*)&kr[i];
      float s = qv[0] * kx[0];
#pragma unroll
      for (unsigned i = 1; i < DIMS; ++i) s = fmaf(qv[i], kx[i], s);
#pragma unroll
      for (unsigned lane_mask = GROUP / 2; lane_mask >= 1; lane_mask /= 2) s += __shfl_xor_sync(0xffffffffu, s, lane_mask);
      float m_new = fmaxf(m, s), alpha = Ex2(m - m_new), p = Ex2(s - m_new);
      l = fmaf(l, alpha, p);
#pragma unroll
      for (unsigned i = 0; i < DIMS; i += 4) *(float4*)&vx[i] = *(const float4*)&kr[BLK * HD + i];
#pragma unroll
      for (unsigned i = 0; i < DIMS; ++i) acc[i] = fmaf(p, vx[i], acc[i] * alpha);
      m = m_new;
    }
    __syncthreads();
  }
  if (qi < seq_len) {
    float inv = __frcp_rn(l);
    float* op = o_head + (qi * HD + dim0);
#pragma unroll
    for (unsigned i = 0; i < DIMS; ++i) op[i] = acc[i] * inv;
  }
}
