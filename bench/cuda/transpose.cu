// Transpose through a padded 32x32 shared tile, f32, 32x8 threads: kernels/transpose.cc in CUDA C++, for comparison.
constexpr int kTile = 32, kRows = 8;

extern "C" __global__ void __launch_bounds__(kTile * kRows)
    transpose_f32_r8(const float* in, float* out, unsigned rows, unsigned cols) {
  __shared__ float tile[kTile][kTile + 1];
  unsigned col0 = blockIdx.x * kTile, row0 = blockIdx.y * kTile, tx = threadIdx.x, ty = threadIdx.y;
  for (int j = 0; j < kTile; j += kRows) {
    if (row0 + ty + j < rows && col0 + tx < cols) tile[ty + j][tx] = in[(row0 + ty + j) * cols + col0 + tx];
  }
  __syncthreads();
  for (int j = 0; j < kTile; j += kRows) {
    if (col0 + ty + j < cols && row0 + tx < rows) out[(col0 + ty + j) * rows + row0 + tx] = tile[tx][ty + j];
  }
}
