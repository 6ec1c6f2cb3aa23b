#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fourier-transform benchmarks: fft, ifft, rfft, irfft, fft2 and stft on the CPU next to NumPy
# (pocketfft) and PyTorch (Debian's python3-numpy and python3-torch), with the same threads, on
# the same sizes.
#   bench/fft/run.sh [TLISP] [THREADS]     (FFT_GENERATED=1: the generated transforms, not FFTW's)
# Each row: the benchmark, TensorLisp's best ms, then each reference's ms and the ratio
# reference / TensorLisp (above 1: TensorLisp is faster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../compare.sh" "$here/fft.lisp" "$here/ref.py" "${1:-$here/../../build/tlisp}" "${2:-$(nproc)}"
