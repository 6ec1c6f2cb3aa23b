#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes every target in tests/fuzz (or those named), as many at a time as there are cores.
#   scripts/fuzz.sh                    each target 5 minutes
#   scripts/fuzz.sh --minutes 60 reader eval
#   scripts/fuzz.sh --seconds 45 --seed 1 --build build-asan   what CI does (scripts/test.sh --sanitize)
# Builds only the fuzz targets, in BUILD: build-fuzz or the --build directory (clang, ASan+UBSan+LSan,
# libFuzzer; scripts/test.sh --sanitize fuzzes with the build its suite ran on), and starts
# each from its seeds in tests/fuzz/corpus/NAME/. New inputs go to BUILD/tests/fuzz/found-NAME.
# A crash, leak, timeout, out-of-memory or UBSan report fails the run; its input is written
# there as crash-*, leak-*, timeout-* or oom-*: copy it into tests/fuzz/corpus/NAME/ under a
# name that says what it does (it then stays a regression seed) and fix the bug.
# With --seed N a run is repeatable: libFuzzer's random seed is fixed and each target starts
# from its seeds alone (new inputs go to BUILD/tests/fuzz/seeded-NAME, emptied first), so
# the same commit fuzzes the same inputs here and in CI, as far as the time allows.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds=300
seed=""
dir="$root/build-fuzz"
targets=()
while (($#)); do
  case "$1" in
    --minutes) seconds=$(($2 * 60)); shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --build) dir="$(cd "$2" && pwd)"; shift 2 ;;
    -h|--help) sed -n 3,15p "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if ((${#targets[@]} == 0)); then
  for f in "$root"/tests/fuzz/fuzz_*.cpp; do
    n="$(basename "$f" .cpp)"
    targets+=("${n#fuzz_}")
  done
fi
CC=clang CXX=clang++ BUILD_TYPE=RelWithDebInfo TARGETS="${targets[*]/#/fuzz_}" \
  "$root/scripts/build.sh" "$dir" -DTL_SANITIZE=ON -DTL_FUZZ=ON
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
out="$dir/tests/fuzz"

# Fuzzes target $1 for $seconds, its output in $out/$1.log; leaves its exit status in $out/$1.rc.
fuzz_one() {
  local found="$out/found-$1"
  local corpus="$found"
  local seeding=()
  if [ -n "$seed" ]; then
    corpus="$out/seeded-$1"
    rm -rf "$corpus"
    mkdir -p "$corpus"
    seeding=(-seed="$seed")
  fi
  mkdir -p "$found"
  rm -f "$out/$1.rc"
  local rc=0
  "$out/fuzz_$1" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -max_len=4096 \
    "${seeding[@]}" -print_final_stats=1 -artifact_prefix="$found/" "$corpus" \
    "$root/tests/fuzz/corpus/$1" \
    >"$out/$1.log" 2>&1 || rc=$?
  echo "$rc" >"$out/$1.rc"
  local runs
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$1.log")"
  if ((rc == 0)); then
    echo "fuzz.sh: $1 passed (${runs:-?} inputs in $seconds s)"
  else
    echo "fuzz.sh: $1 FAILED"
  fi
}

echo "fuzz.sh: ${targets[*]}, $seconds s each, $(nproc) at a time"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || true; done
  fuzz_one "$t" &
done
wait
status=0
for t in "${targets[@]}"; do
  [ "$(cat "$out/$t.rc" 2>/dev/null)" = 0 ] && continue
  status=1
  echo "===== fuzz.sh: $t failed; the end of $out/$t.log:"
  tail -n 60 "$out/$t.log"
  input="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$out/$t.log" | tail -n 1)"
  echo "===== fuzz.sh: $t: reproducer ${input:-not written (see the log)}"
  if [ -n "$input" ]; then echo "  rerun it with: $out/fuzz_$t $input"; fi
done
exit $status
