#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a benchmark script of TensorLisp's next to its NumPy/PyTorch reference and prints one
# row per benchmark: TensorLisp's best ms, then each reference's ms and the ratio reference /
# TensorLisp (above 1: TensorLisp is faster). Used by bench/linalg/run.sh and bench/fft/run.sh.
#   bench/compare.sh LISP-SCRIPT REFERENCE-PY TLISP THREADS
# LISP-SCRIPT prints lines "NAME best-ms"; REFERENCE-PY prints "numpy-NAME ms" and "torch-NAME ms".
set -euo pipefail
script="$1"
reference="$2"
tlisp="$3"
threads="$4"
# shellcheck source=bench/openblas-core.sh
source "$(dirname "${BASH_SOURCE[0]}")/openblas-core.sh"
openblas_core
echo "== $threads thread(s) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
ours=$(OPENBLAS_NUM_THREADS=$threads TENSORLISP_THREADS=$threads "$tlisp" --device cpu "$script")
refs=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads \
         /usr/bin/python3 "$reference" 2>/dev/null || true)
printf '%-22s %10s | %-18s | %-18s\n' benchmark ms "numpy ms  x" "torch ms  x"
while read -r name ms; do
  line=$(printf '%-22s %10.3f' "$name" "$ms")
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
