// sum / max / min / argmax over rows, or per-block partials of a tensor, f32, 256 threads:
// the algorithm of kernels/reduce.cc in CUDA C++, for comparison.
constexpr int kBlock = 256;
enum Op { kSum, kMax, kMin, kArgmax };

// The accumulator of each operation (no <type_traits>: NVRTC has no C++
// standard headers without extra include paths).
template <Op op> struct Acc { using type = unsigned; };
template <> struct Acc<kSum> { using type = float; };
template <> struct Acc<kArgmax> { using type = unsigned long long; };

// Ordered keys: compare as the floats do, a NaN largest; min inverts them.
__device__ unsigned Key(float v, bool invert) {
  unsigned u = __float_as_uint(v), k = u ^ (unsigned(int(u) >> 31) | 0x80000000u);
  return v != v ? 0xFFFFFFFFu : invert ? ~k : k;
}
__device__ float Unkey(unsigned k, bool invert) {
  if (invert) k = ~k;
  return __uint_as_float(k ^ (unsigned(int(~k) >> 31) | 0x80000000u));
}

template <typename A>
__device__ A BlockReduce(A v, bool sum) {
  __shared__ A scratch[kBlock / 32];
  for (int m = 16; m >= 1; m /= 2) v = sum ? v + __shfl_xor_sync(~0u, v, m) : max(v, __shfl_xor_sync(~0u, v, m));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[threadIdx.x % (kBlock / 32)];
  for (int m = kBlock / 64; m >= 1; m /= 2) v = sum ? v + __shfl_xor_sync(~0u, v, m) : max(v, __shfl_xor_sync(~0u, v, m));
  __syncthreads();
  return v;
}

// Elements i = start, start + step, ... < end, reduced into out[slot] (argmax: out_index[slot]).
template <Op op, typename A = typename Acc<op>::type>
__device__ void Reduce(const float* x, const unsigned* x_index, unsigned start, unsigned end, unsigned step,
                       float* out, unsigned* out_index, unsigned slot) {
  A acc = op == kSum ? A(0) : op == kArgmax ? A(0x007FFFFFull << 32) : A(0x007FFFFFu);
  for (unsigned i = start; i < end; i += step) {
    const unsigned index = x_index ? x_index[i] : i;
    if constexpr (op == kSum) acc += x[i];
    else if constexpr (op == kArgmax) acc = max(acc, A(Key(x[i] + 0.0f, false)) << 32 | ~index);
    else acc = max(acc, A(Key(x[i], op == kMin)));
  }
  acc = BlockReduce(acc, op == kSum);
  if (threadIdx.x != 0) return;
  if constexpr (op == kSum) out[slot] = acc;
  else if constexpr (op != kArgmax) out[slot] = Unkey(acc, op == kMin);
  else if (out) out[slot] = Unkey(unsigned(acc >> 32), false);
  if constexpr (op == kArgmax) out_index[slot] = ~unsigned(acc);
}

template <Op op>
__global__ void __launch_bounds__(kBlock) reduce_rows(const float* x, float* out, unsigned rows, unsigned cols) {
  for (unsigned r = blockIdx.x; r < rows; r += gridDim.x) {
    Reduce<op>(x + size_t{r} * cols, nullptr, threadIdx.x, cols, kBlock, op == kArgmax ? nullptr : out,
               reinterpret_cast<unsigned*>(out), r);
  }
}
template <Op op>
__global__ void __launch_bounds__(kBlock)
    reduce_tensor(const float* x, const unsigned* x_index, float* out, unsigned* out_index, unsigned n) {
  Reduce<op>(x, x_index, blockIdx.x * kBlock + threadIdx.x, n, gridDim.x * kBlock, out, out_index, blockIdx.x);
}

template __global__ void reduce_rows<kSum>(const float*, float*, unsigned, unsigned);
template __global__ void reduce_rows<kMax>(const float*, float*, unsigned, unsigned);
template __global__ void reduce_rows<kMin>(const float*, float*, unsigned, unsigned);
template __global__ void reduce_rows<kArgmax>(const float*, float*, unsigned, unsigned);
template __global__ void reduce_tensor<kSum>(const float*, const unsigned*, float*, unsigned*, unsigned);
template __global__ void reduce_tensor<kArgmax>(const float*, const unsigned*, float*, unsigned*, unsigned);
