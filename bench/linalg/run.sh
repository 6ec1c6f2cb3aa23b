#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Linear-algebra benchmarks: the linalg module on the CPU next to NumPy and PyTorch (Debian's
# python3-numpy and python3-torch), all with the same threads, on the same matrices' sizes.
#   bench/linalg/run.sh [TLISP] [THREADS]
# Each row: the benchmark, TensorLisp's best ms, then each reference's ms and the ratio
# reference / TensorLisp (above 1: TensorLisp is faster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../compare.sh" "$here/linalg.lisp" "$here/ref.py" "${1:-$here/../../build/tlisp}" "${2:-$(nproc)}"
