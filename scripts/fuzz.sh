#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes every target in tests/fuzz (or those named) for longer than CI does.
#   scripts/fuzz.sh                    each target 5 minutes
#   scripts/fuzz.sh --minutes 60 reader eval
# Builds build-fuzz (clang, ASan+UBSan, libFuzzer). New inputs go to
# build-fuzz/tests/fuzz/found-NAME; a crash is written there as crash-* and stops that
# target: copy it into tests/fuzz/corpus/NAME/ (a regression seed) and fix it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
minutes=5
targets=()
while (($#)); do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    -h|--help) sed -n 3,8p "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
dir="$root/build-fuzz"
CC=clang CXX=clang++ BUILD_TYPE=RelWithDebInfo "$root/scripts/build.sh" "$dir" \
  -DTL_SANITIZE=ON -DTL_FUZZ=ON
if ((${#targets[@]} == 0)); then
  for f in "$root"/tests/fuzz/fuzz_*.cpp; do
    n="$(basename "$f" .cpp)"
    targets+=("${n#fuzz_}")
  done
fi
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
status=0
for t in "${targets[@]}"; do
  found="$dir/tests/fuzz/found-$t"
  mkdir -p "$found"
  echo "fuzz.sh: $t for $minutes minute(s)"
  "$dir/tests/fuzz/fuzz_$t" -max_total_time=$((minutes * 60)) -timeout=10 -rss_limit_mb=2560 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$found/" \
    "$found" "$root/tests/fuzz/corpus/$t" || { echo "fuzz.sh: $t FAILED (see $found/crash-*)"; status=1; }
done
exit $status
