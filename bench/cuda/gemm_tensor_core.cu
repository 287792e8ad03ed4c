// gemm.tensor_core, default configuration (f16 inputs, f32 C, row-major B, 128x128x32 block tiles, 2x4 warps of
// 64x32, 3 stages, alpha/beta, no bias): kernels/gemm_tensor_core.cc in CUDA C++ with the same inline PTX, for
// comparison. C = alpha * A * B + beta * C (C not read when beta == 0). 256 threads; K advances in slabs of 32
// through a ring of 3 shared-memory stages (A tile [128][32], B tile [32][128]), one cp.async group per slab and
// `cp.async.wait_group 1` plus a barrier before a slab is multiplied. Each operand is copied with 16-byte
// `cp.async.cg` (zero-filled past the edges, the source clamped to row/column 0) when its leading dimension is a
// multiple of 8 and its base 16-byte aligned, element by element otherwise (a uniform branch). Piece p of tile row
// r is stored at piece p ^ ((r % 8) >> shift) (no bank conflicts for ldmatrix and cp.async). Fragments come from
// ldmatrix.x4 (A) and ldmatrix.x4.trans (B), products from mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32.
// The main loop stays a loop (unroll 1); the tile loops are unrolled, as the builder unrolls them.
constexpr unsigned kBM = 128, kBN = 128, kBK = 32, kWarpsM = 2, kWarpsN = 4, kStages = 3;
constexpr unsigned kThreads = 32 * kWarpsM * kWarpsN, kWM = kBM / kWarpsM, kWN = kBN / kWarpsN;
constexpr unsigned kWtm = kWM / 16, kWtn = kWN / 8;  // mma tiles per warp
constexpr unsigned kStageBytes = 2 * kBK * (kBM + kBN);

__host__ __device__ constexpr unsigned Log2(unsigned v) { return v <= 1 ? 0 : 1 + Log2(v / 2); }
// Rows of `cols` halves are cols / 8 pieces of 16 bytes; the swizzle is f(r) = (r % 8) >> SwizzleShift(cols).
__host__ __device__ constexpr unsigned SwizzleShift(unsigned cols) { return cols >= 64 ? 0 : Log2(64 / cols); }

__device__ __forceinline__ void CpAsync16(unsigned dst, const unsigned short* src, unsigned src_size) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src)),
               "r"(src_size)
               : "memory");
}
__device__ __forceinline__ void LdMatrixX4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void LdMatrixX4Trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void Mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One operand: a row-major [rows, ld] matrix of halves (A [M, K], row-major B [K, N]) whose kTileRows x kTileCols
// tile at (row0, col0) goes to byte kOffset of a stage. `vec`: ld % 8 == 0 and a 16-byte aligned base.
template <unsigned kTileRows, unsigned kTileCols, unsigned kOffset>
__device__ __forceinline__ void LoadTile(const unsigned short* base, unsigned rows, unsigned ld, bool vec,
                                         unsigned char* smem, unsigned smem_addr, unsigned stage, unsigned row0,
                                         unsigned col0, unsigned tid) {
  constexpr unsigned kShift = SwizzleShift(kTileCols), kRowBytes = 2 * kTileCols;
  unsigned tile = stage + kOffset;  // byte offset in smem
  if (vec) {  // thread t copies piece t % R of rows t / R + i * (threads / R): one 16-byte cp.async each
    constexpr unsigned kPieces = kTileCols / 8, kStep = kThreads / kPieces;
    unsigned pr = tid >> Log2(kPieces), pp = tid & (kPieces - 1);
    unsigned swz = pp ^ ((pr & 7) >> kShift);
    unsigned dst = smem_addr + tile + (pr * kRowBytes + (swz << 4));
    unsigned col = col0 + (pp << 3), row = row0 + pr;
    bool col_ok = col < ld;
    // A piece past the edge reads nothing (src-size 0) but names an address inside the matrix.
    unsigned long long col64 = col_ok ? col : 0u;
#pragma unroll
    for (unsigned i = 0; i < kTileRows / kStep; ++i) {
      unsigned r = row + i * kStep;
      bool row_ok = r < rows;
      const unsigned short* src = base + ((unsigned long long)(row_ok ? r : 0u) * ld + col64);
      CpAsync16(dst + i * kStep * kRowBytes, src, row_ok && col_ok ? 16u : 0u);
    }
  } else {  // element by element: thread t copies column t % cols of rows t / cols + i * (threads / cols)
    constexpr unsigned kStep = kThreads / kTileCols;
    unsigned pr = tid >> Log2(kTileCols), pcol = tid & (kTileCols - 1);
    unsigned col = col0 + pcol;
    bool col_ok = col < ld;
    unsigned long long col64 = col;
    unsigned piece = pcol >> 3, in_piece = (pcol & 7) << 1;
#pragma unroll
    for (unsigned i = 0; i < kTileRows / kStep; ++i) {
      unsigned tr = pr + i * kStep, r = row0 + tr;
      unsigned short v = 0;
      if (r < rows && col_ok) v = base[(unsigned long long)r * ld + col64];
      unsigned swz = piece ^ ((tr & 7) >> kShift);
      *reinterpret_cast<unsigned short*>(smem + (tr * kRowBytes + (tile + (swz * 16 + in_piece)))) = v;
    }
  }
}

extern "C" __global__ void __launch_bounds__(kThreads)
    gemm_tc_f16_f32_row_128x128x32_2x4_s3(const unsigned short* a, const unsigned short* b, float* c, unsigned m,
                                          unsigned n, unsigned k, float alpha, float beta) {
  __shared__ __align__(128) unsigned char smem[kStages * kStageBytes];
  const unsigned smem_addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  unsigned wm = warp >> Log2(kWarpsN), wn = warp & (kWarpsN - 1);
  unsigned m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  unsigned ktiles = (k + kBK - 1) >> Log2(kBK);
  bool vec_a = (k & 7) == 0 && (reinterpret_cast<unsigned long long>(a) & 15) == 0;
  bool vec_b = (n & 7) == 0 && (reinterpret_cast<unsigned long long>(b) & 15) == 0;
  // Slab kt (k from kt * 32) into the stage at byte `stage`.
  auto load_stage = [&](unsigned kt, unsigned stage) {
    unsigned k0 = kt << Log2(kBK);
    LoadTile<kBM, kBK, 0>(a, m, k, vec_a, smem, smem_addr, stage, m0, k0, tid);
    LoadTile<kBK, kBN, 2 * kBM * kBK>(b, k, n, vec_b, smem, smem_addr, stage, k0, n0, tid);
  };

  // Each lane's ldmatrix row addresses (byte offsets in a stage): lane l gives row l % 8 of matrix l / 8.
  unsigned lr = lane & 7, q0 = (lane >> 3) & 1, q1 = lane >> 4;
  unsigned a_offs[kBK / 16], b_offs[kWtn / 2];
  {
    unsigned row = wm * kWM + (q0 * 8 + lr), x = q1 ^ (lr >> SwizzleShift(kBK)), row_off = row * (2 * kBK);
#pragma unroll
    for (unsigned kk = 0; kk < kBK / 16; ++kk) a_offs[kk] = (x ^ (2 * kk)) * 16 + row_off;
  }
  {
    unsigned row_off = (q0 * 8 + lr) * (2 * kBN) + 2 * kBM * kBK;
    unsigned piece0 = wn * (kWN / 8) + q1, f = lr >> SwizzleShift(kBN);
#pragma unroll
    for (unsigned j = 0; j < kWtn / 2; ++j) b_offs[j] = ((piece0 + 2 * j) ^ f) * 16 + row_off;
  }

  float acc[kWtm * kWtn][4];  // tile (mi, ni): acc[mi * kWtn + ni]
#pragma unroll
  for (unsigned t = 0; t < kWtm * kWtn; ++t) {
#pragma unroll
    for (unsigned e = 0; e < 4; ++e) acc[t][e] = 0.0f;
  }
  auto compute = [&](unsigned stage) {
    unsigned base = smem_addr + stage;
#pragma unroll
    for (unsigned kk = 0; kk < kBK / 16; ++kk) {
      unsigned fa[kWtm][4], fb[kWtn / 2][4];
      unsigned pa = base + a_offs[kk];
#pragma unroll
      for (unsigned mi = 0; mi < kWtm; ++mi) LdMatrixX4(fa[mi], pa + mi * 16 * 2 * kBK);
#pragma unroll
      for (unsigned j = 0; j < kWtn / 2; ++j) LdMatrixX4Trans(fb[j], base + b_offs[j] + kk * 16 * 2 * kBN);
#pragma unroll
      for (unsigned mi = 0; mi < kWtm; ++mi) {
#pragma unroll
        for (unsigned ni = 0; ni < kWtn; ++ni) {
          Mma(acc[mi * kWtn + ni], fa[mi], fb[ni / 2][2 * (ni % 2)], fb[ni / 2][2 * (ni % 2) + 1]);
        }
      }
    }
  };

  // The pipeline: slabs 0 .. stages-2 in flight, then per slab kt: wait for it, barrier, issue slab
  // kt + stages - 1, multiply slab kt. One group per slab (empty past the last).
#pragma unroll
  for (unsigned st = 0; st + 1 < kStages; ++st) {
    if (st == 0 || ktiles > st) load_stage(st, st * kStageBytes);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }
  unsigned rd = 0, wr = (kStages - 1) * kStageBytes;
#pragma unroll 1
  for (unsigned kt = 0; kt < ktiles; ++kt) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2) : "memory");
    __syncthreads();
    unsigned kt_next = kt + kStages - 1;
    if (kt_next < ktiles) load_stage(kt_next, wr);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    compute(rd);
    rd = rd + kStageBytes < kStages * kStageBytes ? rd + kStageBytes : 0u;
    wr = wr + kStageBytes < kStages * kStageBytes ? wr + kStageBytes : 0u;
  }
  // k = 0: slab 0's zero-fill copies are still in flight.
  asm volatile("cp.async.wait_all;\n" ::: "memory");

  // The epilogue: element e of tile (mi, ni) is C's (row0 + 16 mi + 8 (e >> 1), col0 + 8 ni + (e & 1)).
  unsigned row0 = wm * kWM + (m0 + (lane >> 2)), col0 = wn * kWN + (n0 + ((lane & 3) << 1));
  bool read_c = beta != 0.0f;  // unordered: a NaN beta reads C
#pragma unroll
  for (unsigned mi = 0; mi < kWtm; ++mi) {
#pragma unroll
    for (unsigned h = 0; h < 2; ++h) {
      unsigned row = row0 + 16 * mi + 8 * h;
      if (row < m) {
        float* crow = c + (unsigned long long)row * n;
#pragma unroll
        for (unsigned ni = 0; ni < kWtn; ++ni) {
#pragma unroll
          for (unsigned e = 0; e < 2; ++e) {
            unsigned col = col0 + 8 * ni + e;
            if (col < n) {
              float* p = crow + col;
              float v = acc[mi * kWtn + ni][2 * h + e] * alpha;
              if (read_c) v = fmaf(*p, beta, v);
              *p = v;
            }
          }
        }
      }
    }
  }
}
