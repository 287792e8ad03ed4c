// MoE top-k gating: GatingBody of kernels/moe.cc in CUDA C++, for comparison. Mirrors the registry's default
// configuration: type=f32 num_experts=8 top_k=2 (one thread per token, blocks of at most 128 threads; a max
// pass, then top_k selection passes over the logits (ties to the lower index, indices kept plus one), then
// the renormalised softmax weights with ex2.approx.f32 and div.rn.f32). The kernel keeps its three loops
// over experts and picks as loops (it does not unroll them), so they carry #pragma unroll 1 here.
constexpr unsigned E = 8, K = 2, BLOCK = 128;

__device__ __forceinline__ float Ex2(float x) {  // ex2.approx.f32 (exp2f would add denormal handling)
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

extern "C" __global__ void __launch_bounds__(BLOCK) moe_topk_gating_f32_e8_k2(
    const float* logits, unsigned* expert_indices, float* expert_weights, unsigned tokens) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens) return;
  const float* row = logits + size_t(t) * E;
  unsigned* index_row = expert_indices + size_t(t) * K;
  float* weight_row = expert_weights + size_t(t) * K;
  float top = -3.40282347e38f;  // the lowest float (NVRTC has no FLT_MAX)
#pragma unroll 1
  for (unsigned e = 0; e < E; ++e) top = fmaxf(top, row[e]);
  // Pick j is the largest logit after pick j-1 in the order (value descending, index ascending).
  float prev = __int_as_float(0x7f800000), sum = 0;  // +inf (NVRTC has no INFINITY)
  unsigned prev_index1 = 0;
#pragma unroll 1
  for (unsigned j = 0; j < K; ++j) {
    float best = -3.40282347e38f;
    unsigned best_index1 = 0;
#pragma unroll 1
    for (unsigned e = 0; e < E; ++e) {
      float x = row[e];
      bool after_prev = x < prev || (x == prev && e >= prev_index1);
      bool better = after_prev && (x > best || best_index1 == 0);
      best = better ? x : best;
      best_index1 = better ? e + 1 : best_index1;
    }
    index_row[j] = best_index1 - 1;
    sum += Ex2((best - top) * 1.4426950408889634f);
    prev = best;
    prev_index1 = best_index1;
  }
  // The weights: softmax over the picks (the softmax over all E cancels in the renormalisation).
#pragma unroll 1
  for (unsigned j = 0; j < K; ++j) {
    unsigned e = min(index_row[j], E - 1);
    float p = Ex2((row[e] - top) * 1.4426950408889634f);
    weight_row[j] = __fdiv_rn(p, sum);
  }
}
