#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up a fresh machine, builds, and runs the whole test suite. CI (.ci/run) runs both.
#   scripts/test.sh              release build (gcc), all tests
#   scripts/test.sh --sanitize   the same under AddressSanitizer, LeakSanitizer and UBSan (clang,
#                                build-asan; the fuzz seed corpora included), then fuzzes every
#                                target in tests/fuzz for TL_FUZZ_SECONDS (45) each with libFuzzer,
#                                from the same build (scripts/fuzz.sh); TL_FUZZ_SECONDS=0 skips it;
#                                libFuzzer's seed is TL_FUZZ_SEED (1), so a run is repeatable.
#                                One clang build serves both: it compiles in a third of the time
#                                gcc's sanitizer build took, and the library is not built twice.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sanitize=0
[ "${1:-}" = "--sanitize" ] && sanitize=1
if ((sanitize)); then
  dir="$root/build-asan"
  # A build-asan configured with another compiler (gcc, before) starts again.
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
  CC=clang CXX=clang++ BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" "$dir" -DTL_SANITIZE=ON -DTL_FUZZ=ON
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
else
  dir="$root/build"
  "$root/scripts/build.sh" "$dir"
fi
"$root/tests/sloc.sh"
cd "$dir"
ctest --output-on-failure -j "$(nproc)" --label-exclude perf
if ((sanitize && ${TL_FUZZ_SECONDS:-45} > 0)); then
  "$root/scripts/fuzz.sh" --seconds "${TL_FUZZ_SECONDS:-45}" --seed "${TL_FUZZ_SEED:-1}" --build "$dir"
fi
