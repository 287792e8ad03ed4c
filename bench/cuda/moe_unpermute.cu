// MoE unpermute: UnpermuteBody of kernels/moe.cc in CUDA C++, for comparison. Mirrors the registry's default
// configuration: type=f32 top_k=2 expert_dim=32 (one thread per output element (token, d), blocks of at most
// 256 threads; the weighted sum of the token's kept expert outputs found through slot_of). The kernel keeps
// the loop over the top_k picks as a loop, so it carries #pragma unroll 1 here.
constexpr unsigned K = 2, D = 32, BLOCK = 256;

extern "C" __global__ void __launch_bounds__(BLOCK) moe_unpermute_f32_k2_d32(
    const float* expert_out, const unsigned* expert_indices, const float* expert_weights, const unsigned* slot_of,
    float* output, unsigned tokens, unsigned capacity) {
  unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= tokens * D) return;
  unsigned t = gid / D, d = gid % D, first = t * K;
  float acc = 0;
#pragma unroll 1
  for (unsigned k = 0; k < K; ++k) {
    unsigned j = first + k, slot = slot_of[j];
    if (slot != 0xffffffffu) {
      unsigned e = expert_indices[j];
      float weight = expert_weights[j];
      const float* row = expert_out + size_t(e * capacity + slot) * D;
      acc = fmaf(weight, row[d], acc);
    }
  }
  output[gid] = acc;
}
