#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tensor benchmarks: TensorLisp on the CPU JIT next to PyTorch and NumPy (Debian's
# python3-torch and python3-numpy, when installed), with 1 and with all threads, then the
# compile latency. For a fair reference install libopenblas0-pthread too: without it Debian's
# PyTorch and NumPy use the unoptimized reference BLAS.
#   bench/tensor/run.sh [TLISP]
# Each row: the benchmark, TensorLisp's time and rate, then each reference's rate and the
# ratio TensorLisp / reference (above 1: TensorLisp is faster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tlisp="${1:-$here/../../build/tlisp}"
python=/usr/bin/python3
# shellcheck source=bench/openblas-core.sh
source "$(dirname "${BASH_SOURCE[0]}")/../openblas-core.sh"
openblas_core
for threads in 1 "$(nproc)"; do
  echo "== $threads thread(s) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  ours=$(TENSORLISP_THREADS=$threads "$tlisp" --device cpu "$here/jit.lisp")
  refs=""
  if [ -x "$python" ]; then
    refs=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads \
             "$python" "$here/torch_ref.py" "$threads" 2>/dev/null || true)
  fi
  printf '%-22s %10s %9s %8s | %-24s | %-24s\n' benchmark ms GFLOP/s GB/s "torch GFLOP/s GB/s x" "numpy GFLOP/s GB/s x"
  while read -r name ms gf gb; do
    line=$(printf '%-22s %10.3f %9.2f %8.2f' "$name" "$ms" "$gf" "$gb")
    for lib in torch numpy; do
      ref=$(echo "$refs" | awk -v n="$lib-$name" '$1 == n {print $2, $3, $4}')
      if [ -n "$ref" ]; then
        read -r rms rgf rgb <<<"$ref"
        ratio=$(echo "$rms / $ms" | bc -l)
        line+=$(printf ' | %8.2f %6.2f %6.2fx' "$rgf" "$rgb" "$ratio")
      else
        line+=$(printf ' | %24s' "-")
      fi
    done
    echo "$line"
  done <<<"$ours"
done
echo "== compile latency (fresh process, new shape)"
cache=$(mktemp -d)
echo "cold cache: $(TENSORLISP_CACHE_DIR=$cache "$tlisp" --device cpu "$here/compile.lisp")"
echo "warm cache: $(TENSORLISP_CACHE_DIR=$cache "$tlisp" --device cpu "$here/compile.lisp")"
rm -rf "$cache"
