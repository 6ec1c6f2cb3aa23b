#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds TensorLisp. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# BUILD_TYPE sets the CMake build type (Release); TARGETS, when set, names the only targets built.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/build}"
shift || true
"$root/scripts/bootstrap.sh"
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)" ${TARGETS:+--target $TARGETS}
