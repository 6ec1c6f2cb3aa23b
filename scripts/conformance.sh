#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the backend conformance reports kept in docs/conformance/: the op suite (tlisp
# test-backend, stdlib/conformance.lisp) on the CPU backend and on the simulated CUDA and HIP
# devices, each against the reference executor. ctest runs the same (backends.conformance-*).
#   scripts/conformance.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tlisp="${1:-$root/build}/tlisp"
cd "$root"
mkdir -p docs/conformance
status=0
"$tlisp" test-backend backends/cpu/cpu.lisp --quiet -o docs/conformance/cpu.md || status=1
"$tlisp" test-backend backends/cpu/cpu.lisp --options sim=nvptx --quiet -o docs/conformance/sim-cuda.md || status=1
"$tlisp" test-backend backends/cpu/cpu.lisp --options sim=amdgcn --quiet -o docs/conformance/sim-hip.md || status=1
exit $status
