#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: set up a fresh machine, build, and train the Fashion-MNIST MLP
# (examples/fashion-mnist-mlp.lisp: 3 epochs, test accuracy after each, a checkpoint).
# Extra arguments go to the script (--epochs N, --seed N, --checkpoint FILE, --eval).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" "$root/build"
exec "$root/build/tlisp" "$root/examples/fashion-mnist-mlp.lisp" "$@"
