// MoE permute: PermuteBody of kernels/moe.cc in CUDA C++, for comparison. Mirrors the registry's default
// configuration: top_k=2 (one block of 256 threads = 8 warps per expert; each chunk of 256 (token, pick)
// entries gets its slots from a ballot prefix sum within the warp plus the earlier warps' counts through
// shared memory, so slots follow the entry order; entries past capacity are dropped and counted).
constexpr unsigned K = 2, BLOCK = 256, WARPS = BLOCK / 32;

extern "C" __global__ void __launch_bounds__(BLOCK) moe_permute_k2(
    const unsigned* expert_indices, unsigned* token_ids, unsigned* expert_counts, unsigned* slot_of,
    unsigned tokens, unsigned capacity) {
  __shared__ unsigned warp_totals[WARPS];
  unsigned e = blockIdx.x, tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, lanes_below = (1u << lane) - 1;
  unsigned n = tokens * K;
  unsigned* bin = token_ids + size_t(e) * capacity;
  unsigned base = 0;
#pragma unroll 1
  for (unsigned chunk = 0; chunk < n; chunk += BLOCK) {
    unsigned i = chunk + tid;
    unsigned expert = expert_indices[min(i, n - 1)];
    bool match = i < n && expert == e;
    unsigned ballot = __ballot_sync(0xffffffffu, match);
    unsigned rank = __popc(ballot & lanes_below);
    if (lane == 0) warp_totals[warp] = __popc(ballot);
    __syncthreads();
    // Matches of the earlier warps of this chunk, and of the whole chunk.
    unsigned total = 0, before = 0;
#pragma unroll
    for (unsigned w = 0; w < WARPS; ++w) {
      unsigned count = warp_totals[w];
      total += count;
      if (w + 1 < WARPS) before += warp > w ? count : 0;
    }
    unsigned slot = base + before + rank;
    if (match) {
      bool keep = slot < capacity;
      slot_of[i] = keep ? slot : 0xffffffffu;
      if (keep) bin[slot] = i / K;
    }
    base += total;
    __syncthreads();
  }
  if (tid == 0) expert_counts[e] = base;
}
