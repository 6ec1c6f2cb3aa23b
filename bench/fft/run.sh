#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fourier-transform benchmarks: fft, rfft, stft ... on the CPU next to NumPy (pocketfft) and PyTorch (Debian's
# python3-numpy and python3-torch), with the same threads, on the same sizes.
#   bench/fft/run.sh [TLISP] [THREADS]     (FFT_GENERATED=1: the generated transforms, not FFTW's)
# Each row: the benchmark, TensorLisp's best ms, then each reference's ms and the ratio
# reference / TensorLisp (above 1: TensorLisp is faster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tlisp="${1:-$here/../../build/tlisp}"
threads="${2:-$(nproc)}"
unset OPENBLAS_CORETYPE
echo "== $threads thread(s) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
ours=$(OPENBLAS_NUM_THREADS=$threads TENSORLISP_THREADS=$threads "$tlisp" --device cpu "$here/fft.lisp")
refs=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads \
         /usr/bin/python3 "$here/ref.py" 2>/dev/null || true)
printf '%-20s %10s | %-18s | %-18s\n' benchmark ms "numpy ms  x" "torch ms  x"
while read -r name ms; do
  line=$(printf '%-20s %10.3f' "$name" "$ms")
  for lib in numpy torch; do
    ref=$(echo "$refs" | awk -v n="$lib-$name" '$1 == n {print $2}')
    if [ -n "$ref" ]; then
      line+=$(printf ' | %10.3f %6.2fx' "$ref" "$(echo "$ref / $ms" | bc -l)")
    else
      line+=$(printf ' | %18s' "-")
    fi
  done
  echo "$line"
done <<<"$ours"
