#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up a fresh machine, builds, and runs the whole test suite. CI (.ci/run) runs both.
#   scripts/test.sh              release build (gcc), all tests
#   scripts/test.sh --sanitize   the same under AddressSanitizer, LeakSanitizer and UBSan (gcc,
#                                build-asan; the fuzz seed corpora included), then fuzzes every
#                                target in tests/fuzz for TL_FUZZ_SECONDS (45) each with clang and
#                                libFuzzer (scripts/fuzz.sh, build-fuzz); TL_FUZZ_SECONDS=0 skips it;
#                                libFuzzer's seed is TL_FUZZ_SEED (1), so a run is repeatable
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sanitize=0
[ "${1:-}" = "--sanitize" ] && sanitize=1
if ((sanitize)); then
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
if ((sanitize && ${TL_FUZZ_SECONDS:-45} > 0)); then
  "$root/scripts/fuzz.sh" --seconds "${TL_FUZZ_SECONDS:-45}" --seed "${TL_FUZZ_SEED:-1}"
fi
