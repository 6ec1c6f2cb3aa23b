#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Attention benchmarks (issue 24): TensorLisp's online-softmax kernel and its stored
# three-kernel form next to PyTorch's matmul-softmax-matmul (Debian's python3-torch), batch
# 1, 12 heads of 64, f32, with 1 and with all threads.
#   bench/attention/run.sh [TLISP] [LENGTHS]      (LENGTHS: 1024,4096 by default)
# Each row: TensorLisp's time, GFLOP/s and peak MiB (the buffer plan's), then PyTorch's time
# and the ratio PyTorch / TensorLisp (above 1: TensorLisp is faster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tlisp="${1:-$here/../../build/tlisp}"
lengths="${2:-1024,4096}"
python=/usr/bin/python3
unset OPENBLAS_CORETYPE
for threads in 1 "$(nproc)"; do
  echo "== $threads thread(s) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  ours=$(TENSORLISP_THREADS=$threads "$tlisp" --device cpu "$here/attention.lisp" --lengths "$lengths")
  refs=""
  if [ -x "$python" ]; then
    refs=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads "$python" "$here/torch_ref.py" "$threads" "$lengths" 2>/dev/null || true)
  fi
  printf '%-22s %10s %9s %9s | %10s %7s\n' benchmark ms GFLOP/s peak-MiB "torch ms" "x"
  while read -r name ms gf peak; do
    base=${name%-*}
    line=$(printf '%-22s %10.3f %9.2f %9.1f' "$name" "$ms" "$gf" "$peak")
    ref=$(echo "$refs" | awk -v n="torch-$base" '$1 == n {print $2}')
    if [ -n "$ref" ]; then
      line+=$(printf ' | %10.3f %6.2fx' "$ref" "$(echo "$ref / $ms" | bc -l)")
    fi
    echo "$line"
  done <<<"$ours"
done
