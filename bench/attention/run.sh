#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Attention benchmarks (issue 24): TensorLisp's online-softmax kernel and its stored
# three-kernel form next to PyTorch's matmul-softmax-matmul (Debian's python3-torch), batch
# 1, 12 heads of 64, f32, with 1 and with all threads.
#   bench/attention/run.sh [TLISP] [LENGTHS]      (LENGTHS: 1024,4096 by default)
# Each row: TensorLisp's time, GFLOP/s and peak MiB (the buffer plan's), then PyTorch's time
# and the ratio PyTorch / TensorLisp (above 1: TensorLisp is faster).
#   bench/attention/run.sh --backward [TLISP] [LENGTHS] [TIME_MAX]
# The training step (backward.lisp: forward and backward, the L x L matrices recomputed or
# stored), LENGTHS 1024,4096,16384 by default, timed up to TIME_MAX (1024); each row: the
# step's time ("-" untimed) and the buffer plan's peak MiB, then PyTorch's time and the ratio.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
backward=0
if [ "${1:-}" = "--backward" ]; then
  backward=1
  shift
fi
tlisp="${1:-$here/../../build/tlisp}"
python=/usr/bin/python3
# shellcheck source=bench/openblas-core.sh
source "$(dirname "${BASH_SOURCE[0]}")/../openblas-core.sh"
openblas_core
if ((backward)); then
  lengths="${2:-1024,4096,16384}"
  time_max="${3:-1024}"
else
  lengths="${2:-1024,4096}"
fi
for threads in 1 "$(nproc)"; do
  echo "== $threads thread(s) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  refs=""
  if ((backward)); then
    ours=$(TENSORLISP_THREADS=$threads "$tlisp" --device cpu "$here/backward.lisp" --lengths "$lengths" --time-max "$time_max")
    if [ -x "$python" ]; then
      refs=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads "$python" "$here/torch_ref.py" "$threads" "$lengths" backward "$time_max" 2>/dev/null || true)
    fi
    printf '%-26s %10s %10s | %10s %7s\n' benchmark "step ms" peak-MiB "torch ms" "x"
  else
    ours=$(TENSORLISP_THREADS=$threads "$tlisp" --device cpu "$here/attention.lisp" --lengths "$lengths")
    if [ -x "$python" ]; then
      refs=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads "$python" "$here/torch_ref.py" "$threads" "$lengths" 2>/dev/null || true)
    fi
    printf '%-22s %10s %9s %9s | %10s %7s\n' benchmark ms GFLOP/s peak-MiB "torch ms" "x"
  fi
  while read -r name ms a b; do
    base=${name%-*}
    ref=$(echo "$refs" | awk -v n="torch-$base" '$1 == n {print $2}')
    if ((backward)); then
      line=$(printf '%-26s %10s %10.1f' "$name" "$ms" "$a")
    else
      line=$(printf '%-22s %10.3f %9.2f %9.1f' "$name" "$ms" "$a" "$b")
    fi
    if [ -n "$ref" ] && [ "$ms" != "-" ]; then
      line+=$(printf ' | %10.3f %6.2fx' "$ref" "$(echo "$ref / $ms" | bc -l)")
    fi
    echo "$line"
  done <<<"$ours"
done
