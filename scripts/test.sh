#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up a fresh machine, builds, and runs the whole test suite.
#   scripts/test.sh              release build, all tests
#   scripts/test.sh --sanitize   the same under AddressSanitizer, LeakSanitizer and UBSan
#                                (the fuzz seed corpora included; scripts/fuzz.sh fuzzes)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = "--sanitize" ]; then
  dir="$root/build-asan"
  BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" "$dir" -DTL_SANITIZE=ON
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
else
  dir="$root/build"
  "$root/scripts/build.sh" "$dir"
fi
"$root/tests/sloc.sh"
cd "$dir"
ctest --output-on-failure -j "$(nproc)" --label-exclude perf
