#!/usr/bin/env bash
# ptxas -v registers of ptxforge's PTX against nvcc's for the same algorithms
# (bench/cuda/NAME.cu, each the CUDA C++ of the registry kernel NAME's default
# configuration), on sm_80 and sm_90, or on the targets named in ARCHS
# (ARCHS="sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a sm_100 sm_100a sm_120 sm_120a"
# for every target ptxforge supports).
#   usage: [ARCHS="sm_XX ..."] bench/compare_registers.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
nvcc="$cuda/bin/nvcc"
ptxas="$cuda/bin/ptxas"
if [[ ! -x "$nvcc" || ! -x "$ptxas" ]]; then
  echo "compare_registers: needs nvcc and ptxas under $cuda/bin (set CUDA_HOME)" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# "Used 12 registers, used 0 barriers, 32 bytes smem" -> 12 (spill bytes checked too).
registers() {
  local log
  log="$("$ptxas" -arch="$1" -v "$2" -o "$tmp/out.cubin" 2>&1)"
  if grep -q "[1-9][0-9]* bytes spill" <<<"$log"; then echo "spills"; return; fi
  sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' <<<"$log" | head -1
}
printf "%-22s %-6s %8s %6s %s\n" kernel arch ptxforge nvcc ptxforge/nvcc
# NAME.cu is the twin of the registry family NAME, or of NAME with its first
# '_' as '.' (gemm_simt.cu: gemm.simt). A file with several kernels (templates
# instantiated for several operations) has no single twin and is listed only.
for cu in "$root"/bench/cuda/*.cu; do
  name="$(basename "$cu" .cu)"
  family="$name"
  if ! "$build/tools/ptx-dump" "$family" --emit=ir >/dev/null 2>&1; then family="${name/_/.}"; fi
  for arch in ${ARCHS:-sm_80 sm_90}; do
    "$nvcc" -arch="$arch" -ptx "$cu" -o "$tmp/nvcc.ptx"
    if (( $(grep -c '^[.a-z ]*\.entry' "$tmp/nvcc.ptx") != 1 )); then
      printf "%-22s %-6s %8s %6s %s\n" "$name" "$arch" - - "several kernels in $name.cu: not compared"
      continue
    fi
    # A family that needs a newer target (gemm.tensor_core on sm_75) says so
    # in one line; the row names the reason and the run goes on.
    if ! why="$("$build/tools/ptx-dump" "$family" --target="$arch" -o "$tmp/ours.ptx" 2>&1)"; then
      printf "%-22s %-6s %8s %6s %s\n" "$family" "$arch" - - "not compared: ${why#ptx-dump: }"
      continue
    fi
    ours="$(registers "$arch" "$tmp/ours.ptx")"
    theirs="$(registers "$arch" "$tmp/nvcc.ptx")"
    if [[ "$ours" == spills || "$theirs" == spills ]]; then
      ratio="-: $([[ "$ours" == spills ]] && echo ptxforge || echo nvcc)'s PTX spills"
    else
      ratio="$(awk -v a="$ours" -v b="$theirs" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
    fi
    printf "%-22s %-6s %8s %6s %s\n" "$family" "$arch" "$ours" "$theirs" "$ratio"
  done
done
