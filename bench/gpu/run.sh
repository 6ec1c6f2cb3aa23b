#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU benchmarks: TensorLisp on a GPU backend next to PyTorch on the same GPU (when python3
# has a PyTorch built with CUDA; Debian's is CPU-only, and its column then shows "-").
#   bench/gpu/run.sh [TLISP] [DEVICE]        DEVICE: cuda (default) or hip
#   TENSORLISP_TUNE=1 bench/gpu/run.sh       kernels tuned over the runtime file's :search first
# Each row: the benchmark, TensorLisp's device time and rates, then PyTorch's rates and the
# ratio PyTorch time / TensorLisp time (above 1: TensorLisp is faster). Also prints the
# device's peak memory bandwidth when nvidia-smi can tell it, for the elementwise rows.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tlisp="${1:-$here/../../build/tlisp}"
device="${2:-cuda}"
python=$(command -v python3 || true)
echo "== $("$tlisp" --device "$device" -e '(device-info)')"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,clocks.max.memory,memory.total --format=csv,noheader || true
fi
ours=$("$tlisp" --device "$device" "$here/gpu.lisp")
refs=""
if [ -n "$python" ]; then refs=$("$python" "$here/torch_ref.py" 2>/dev/null || true); fi
printf '%-20s %10s %9s %9s | %-28s\n' benchmark ms GFLOP/s GB/s "torch GFLOP/s GB/s ratio"
while read -r name ms gf gb; do
  line=$(printf '%-20s %10.4f %9.2f %9.2f' "$name" "$ms" "$gf" "$gb")
  ref=$(echo "$refs" | awk -v n="torch-$name" '$1 == n {print $2, $3, $4}')
  if [ -n "$ref" ]; then
    read -r rms rgf rgb <<<"$ref"
    line+=$(printf ' | %9.2f %9.2f %6.2fx' "$rgf" "$rgb" "$(echo "$rms / $ms" | bc -l)")
  else
    line+=$(printf ' | %28s' "-")
  fi
  echo "$line"
done <<<"$ours"
