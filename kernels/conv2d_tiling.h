// How the conv2d kernels split work into blocks and shared-memory tiles (internal to kernels/conv2d*.cc).
#ifndef PTXFORGE_KERNELS_CONV2D_TILING_H_
#define PTXFORGE_KERNELS_CONV2D_TILING_H_

#include <cstdint>

#include "kernels/conv2d.h"

namespace ptxforge::kernels {

inline constexpr uint64_t kConv2dMaxSharedBytes = 48 * 1024;

// Every size is fixed by the spec (channels, window, stride, dilation, type).
struct Conv2dTiling {
  uint32_t threads = 128;  // per block (.reqntid)
  // The pixels one block covers: output pixels (direct, backward filter) or
  // input pixels (backward data), tile_w wide and tile_h high, one per thread.
  uint32_t tile_w = 32;
  uint32_t tile_h = 4;
  // Channels each thread accumulates in registers: output channels (direct,
  // pointwise) or input channels (backward data, backward filter).
  uint32_t per_thread = 1;
  // Channels of the reduction staged through shared memory at once: input
  // channels (direct), output channels (backward data).
  uint32_t chunk = 1;
  // Kernel rows per block (backward filter; the window is split over grid.z).
  uint32_t rows = 1;
  // The shared input (or grad_output) tile of one channel: halo_h × halo_w.
  uint64_t halo_h = 0;
  uint64_t halo_w = 0;
  uint64_t shared_bytes = 0;
};

// The tiling for a spec whose fields are positive (sizes are computed in 64
// bits; Validate rejects shared_bytes above kConv2dMaxSharedBytes).
Conv2dTiling TilingFor(const Conv2dSpec& spec);

}  // namespace ptxforge::kernels

#endif  // PTXFORGE_KERNELS_CONV2D_TILING_H_
