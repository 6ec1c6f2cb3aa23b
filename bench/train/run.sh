#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Epoch time and test accuracy of the Fashion-MNIST examples against the same models in
# PyTorch (Debian's python3-torch), on 1 and 2 threads, one epoch each, side by side.
#   bench/train/run.sh [BUILD_DIR]
# Ratio = PyTorch's seconds / ours (above 1: TensorLisp is faster). PyTorch runs on
# OpenBLAS's best kernels for the CPU (bench/openblas-core.sh); without python3-torch only our
# figures print.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
tlisp="$build/tlisp"
# shellcheck source=bench/openblas-core.sh
source "$(dirname "${BASH_SOURCE[0]}")/../openblas-core.sh"
openblas_core
python=/usr/bin/python3
have_torch=0
if "$python" -c "import torch" 2>/dev/null; then have_torch=1; fi

epoch_of() {  # the "epoch 1: X s, test accuracy Y%" line -> "X Y"
  tr '\r' '\n' | sed -n 's/.*epoch 1: \([0-9.]*\) s, test accuracy \([0-9.]*\)%.*/\1 \2/p' | head -1
}

printf '%-5s %-8s %12s %10s %12s %10s %7s\n' model threads "tlisp s" "acc %" "torch s" "acc %" ratio
for model in mlp cnn; do
  for threads in 1 2; do
    ours=$(TENSORLISP_THREADS=$threads "$tlisp" "$root/examples/fashion-mnist-$model.lisp" --epochs 1 \
             --checkpoint "$(mktemp -u)" 2>&1 | epoch_of)
    theirs="- -"
    ratio="-"
    if [ "$have_torch" = 1 ]; then
      theirs=$("$python" "$root/bench/train/${model}_torch.py" "$threads" 1 2>/dev/null |
                 sed -n 's/.*epoch 1: \([0-9.]*\) s, test accuracy \([0-9.]*\)%.*/\1 \2/p')
      ratio=$(awk -v a="${ours%% *}" -v b="${theirs%% *}" 'BEGIN { printf "%.2fx", b / a }')
    fi
    printf '%-5s %-8s %12s %10s %12s %10s %7s\n' "$model" "$threads" ${ours} ${theirs} "$ratio"
  done
done
